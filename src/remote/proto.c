// SPDX-License-Identifier: MIT
/* The control connection's frames and records (proto.h). What the other
 * end sends is hostile input: lengths are bounded before anything is
 * allocated, JSON is parsed with duplicates refused, every field read
 * through a getter that checks its type and range. */
#include <arpa/inet.h>
#include <errno.h>
#include <float.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto.h"

int rp_send(int fd, json_t *obj)
{
	char *text = json_dumps(obj, JSON_COMPACT);
	uint32_t len;
	ssize_t n;

	if (!text)
		return -ENOMEM;
	len = (uint32_t)strlen(text);
	if (len > RP_MAX_FRAME) {
		free(text);
		return -EMSGSIZE;
	}
	uint32_t be = htonl(len);
	char *buf = malloc(4 + (size_t)len);

	if (!buf) {
		free(text);
		return -ENOMEM;
	}
	memcpy(buf, &be, 4);
	memcpy(buf + 4, text, len);
	free(text);
	n = full_write(fd, buf, 4 + (size_t)len);
	free(buf);
	return n == (ssize_t)(4 + (size_t)len) ? 0 : n < 0 ? (int)n : -EPIPE;
}

/* Exactly len bytes by the deadline. */
static int read_by(int fd, void *buf, size_t len, uint64_t deadline)
{
	size_t got = 0;

	while (got < len) {
		uint64_t t = now_ns();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int ms, r;
		ssize_t n;

		if (t >= deadline)
			return -ETIMEDOUT;
		ms = (int)((deadline - t) / NSEC_PER_MSEC) + 1;
		r = poll(&p, 1, ms > 1000 ? 1000 : ms);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r < 0)
			return -EINTR;
		if (r == 0)
			continue;
		n = read(fd, (char *)buf + got, len - got);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		got += (size_t)n;
	}
	return 0;
}

int rp_recv(int fd, uint64_t deadline_ns, json_t **out, char *err, size_t errlen)
{
	uint32_t be, len;
	char *buf;
	int ret = read_by(fd, &be, 4, deadline_ns);

	*out = NULL;
	if (ret)
		return ret;
	len = ntohl(be);
	if (len == 0 || len > RP_MAX_FRAME)
		return errf(err, errlen, EPROTO, "control frame of %u bytes (at most %u)", len,
			    RP_MAX_FRAME);
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	ret = read_by(fd, buf, len, deadline_ns);
	if (!ret)
		ret = rp_parse(buf, len, out, err, errlen);
	free(buf);
	return ret;
}

int rp_parse(const char *buf, size_t len, json_t **out, char *err, size_t errlen)
{
	json_error_t je;
	json_t *o = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);

	*out = NULL;
	if (!o || !json_is_object(o) || !json_is_string(json_object_get(o, "type"))) {
		json_decref(o);
		return errf(err, errlen, EPROTO, "control frame is not an ipclab message%s%s",
			    o ? "" : ": ", o ? "" : je.text);
	}
	*out = o;
	return 0;
}

const char *rp_type(const json_t *o)
{
	const char *t = json_string_value(json_object_get(o, "type"));

	return t ? t : "";
}

int rp_u64(const json_t *o, const char *key, uint64_t max, uint64_t *v, char *err, size_t errlen)
{
	json_t *j = json_object_get(o, key);

	if (!json_is_integer(j) || json_integer_value(j) < 0 ||
	    (uint64_t)json_integer_value(j) > max)
		return errf(err, errlen, EPROTO, "control message: '%s' missing or out of range 0-%llu",
			    key, (unsigned long long)max);
	*v = (uint64_t)json_integer_value(j);
	return 0;
}

int rp_str(const json_t *o, const char *key, char *buf, size_t len, char *err, size_t errlen)
{
	json_t *j = json_object_get(o, key);
	const char *s = json_string_value(j);

	if (!s || json_string_length(j) >= len || strlen(s) != json_string_length(j))
		return errf(err, errlen, EPROTO, "control message: '%s' missing or longer than %zu",
			    key, len - 1);
	memcpy(buf, s, json_string_length(j) + 1);
	return 0;
}

bool rp_token_equal(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned diff = (unsigned)(la ^ lb);

	for (size_t i = 0; i < REMOTE_TOKEN_MAX; i++) {
		unsigned char x = i < la ? (unsigned char)a[i] : 0;
		unsigned char y = i < lb ? (unsigned char)b[i] : 0;

		diff |= (unsigned)(x ^ y);
	}
	return diff == 0 && la <= REMOTE_TOKEN_MAX;
}

/* A side's histogram: the buckets that counted anything, as [index,
 * count] pairs (all of them fit in a frame: HIST_BUCKETS pairs of at most
 * ~25 bytes), an empty list when it has none. */
static json_t *hist_buckets_json(const struct side_stats *st)
{
	json_t *b = json_array();

	for (unsigned i = 0; b && st->has_hist && st->hist && i < HIST_BUCKETS; i++)
		if (st->hist->buckets[i])
			json_array_append_new(b, json_pack("[I,I]", (json_int_t)i,
							   (json_int_t)st->hist->buckets[i]));
	return b;
}

json_t *rp_side_json(const struct side_stats *st)
{
	static const struct hist none = { .count = 0 };
	const struct hist *h = st->hist ? st->hist : &none;
	json_t *b = hist_buckets_json(st);

	return json_pack("{s:i,s:i,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:i,s:s,s:I,s:I,s:I,s:I,s:b,s:b,s:b,s:b,"
			 "s:I,s:I,s:I,s:f,s:o}",
			 "role", (int)st->role, "cpu", st->cpu, "msgs", (json_int_t)st->msgs,
			 "bytes", (json_int_t)st->bytes, "win_start_ns", (json_int_t)st->win_start_ns,
			 "win_end_ns", (json_int_t)st->win_end_ns, "user_ns", (json_int_t)st->ru.user_ns,
			 "sys_ns", (json_int_t)st->ru.sys_ns, "vol_cs", (json_int_t)st->ru.vol_cs,
			 "invol_cs", (json_int_t)st->ru.invol_cs, "status", st->status, "err", st->err,
			 "lost", (json_int_t)st->lost, "dups", (json_int_t)st->dups,
			 "reorders", (json_int_t)st->reorders, "sample_every", (json_int_t)st->sample_every,
			 "zerocopy", st->zerocopy, "serve_ready", st->serve_ready,
			 "serve_spin", st->serve_spin, "has_hist", st->has_hist,
			 "hist_count", (json_int_t)h->count,
			 "hist_min", (json_int_t)(h->count ? h->min : 0),
			 "hist_max", (json_int_t)(h->count ? h->max : 0), "hist_sum", h->sum,
			 "buckets", b ? b : json_array());
}

#define BIG ((uint64_t)INT64_MAX)

/* The histogram of a side's record into h (initialised), hostile input:
 * count, min and max (already read, each at most BIG) and the buckets
 * must agree: every index in range, once; the counts add up to count
 * without wrapping; min in the lowest bucket that counted, max in the
 * highest; the sum a number between count * min and count * max (up to
 * rounding). 0 or -EPROTO with why. */
static int hist_parse(const json_t *j, uint64_t count, uint64_t min, uint64_t max, struct hist *h,
		      char *err, size_t errlen)
{
	const json_t *b = json_object_get(j, "buckets"), *js = json_object_get(j, "hist_sum");
	unsigned lo = HIST_BUCKETS, hi = 0;
	uint64_t cnt = 0;
	double sum, tol;
	size_t i;
	json_t *e;

	if (!json_is_array(b) || json_array_size(b) > HIST_BUCKETS)
		return errf(err, errlen, EPROTO, "control message: histogram buckets malformed");
	json_array_foreach(b, i, e) {
		json_t *ji = json_array_get(e, 0), *jn = json_array_get(e, 1);

		if (!json_is_array(e) || json_array_size(e) != 2 || !json_is_integer(ji) ||
		    !json_is_integer(jn) || json_integer_value(ji) < 0 ||
		    json_integer_value(ji) >= HIST_BUCKETS || json_integer_value(jn) < 0 ||
		    h->buckets[json_integer_value(ji)])
			return errf(err, errlen, EPROTO, "control message: histogram bucket malformed");
		/* counts at most count (<= INT64_MAX) in all: no sum wraps */
		if ((uint64_t)json_integer_value(jn) > count - cnt)
			return errf(err, errlen, EPROTO, "control message: histogram counts disagree");
		unsigned k = (unsigned)json_integer_value(ji);
		uint64_t n = (uint64_t)json_integer_value(jn);

		h->buckets[k] = n;
		cnt += n;
		if (n && k < lo)
			lo = k;
		if (n && k > hi)
			hi = k;
	}
	if (cnt != count || min > max)
		return errf(err, errlen, EPROTO, "control message: histogram counts disagree");
	if (!cnt)
		return 0;
	sum = json_number_value(js);
	if (hist_index(min) != lo || hist_index(max) != hi)
		return errf(err, errlen, EPROTO,
			    "control message: histogram min or max outside its buckets");
	tol = 1e-6 + (double)cnt * DBL_EPSILON;	/* the sender's rounding, added up */
	if (!json_is_number(js) || !(sum >= (double)min * (double)cnt * (1 - tol)) ||
	    !(sum <= (double)max * (double)cnt * (1 + tol)))
		return errf(err, errlen, EPROTO, "control message: histogram sum out of range");
	h->count = count;
	h->min = min;
	h->max = max;
	h->sum = sum;
	return 0;
}

/* A side's record from the peer, hostile input: every field looked up,
 * typed and bounded one after another (long, but flat). Its histogram
 * goes into st->hist, the side's own (NULL: it has none, and a record
 * with one is refused). */
int rp_side_parse(const json_t *j, struct side_stats *st, char *err, size_t errlen)
{
	uint64_t v[20];
	static const char *const keys[] = { "msgs", "bytes", "win_start_ns", "win_end_ns",
					    "user_ns", "sys_ns", "vol_cs", "invol_cs", "lost",
					    "dups", "reorders", "hist_count", "hist_min", "hist_max" };
	uint64_t se, cpu;
	size_t i;
	int ret;

	if (!json_is_object(j))
		return errf(err, errlen, EPROTO, "control message: side record missing");
	for (i = 0; i < ARRAY_SIZE(keys); i++)
		if ((ret = rp_u64(j, keys[i], BIG, &v[i], err, errlen)))
			return ret;
	if ((ret = rp_u64(j, "sample_every", 1u << 30, &se, err, errlen)) ||
	    (ret = rp_str(j, "err", st->err, sizeof(st->err), err, errlen)))
		return ret;
	cpu = 0;
	json_t *jc = json_object_get(j, "cpu");

	if (!json_is_integer(jc) || json_integer_value(jc) < -1 || json_integer_value(jc) > 65535)
		return errf(err, errlen, EPROTO, "control message: 'cpu' out of range");
	cpu = (uint64_t)json_integer_value(jc);
	if (v[3] && v[2] > v[3])	/* an end of 0: the window never closed */
		return errf(err, errlen, EPROTO, "control message: side window ends before it starts");
	st->cpu = (int)(int64_t)cpu;
	st->msgs = v[0];
	st->bytes = v[1];
	st->win_start_ns = v[2];
	st->win_end_ns = v[3];
	st->ru.user_ns = v[4];
	st->ru.sys_ns = v[5];
	st->ru.vol_cs = v[6];
	st->ru.invol_cs = v[7];
	st->lost = v[8];
	st->dups = v[9];
	st->reorders = v[10];
	st->sample_every = (uint32_t)se;
	st->zerocopy = json_is_true(json_object_get(j, "zerocopy"));
	st->serve_ready = json_is_true(json_object_get(j, "serve_ready"));
	st->serve_spin = json_is_true(json_object_get(j, "serve_spin"));
	st->has_hist = json_is_true(json_object_get(j, "has_hist"));
	json_t *js = json_object_get(j, "status");

	st->status = json_is_integer(js) && json_integer_value(js) <= 0 &&
		     json_integer_value(js) > -4096 ? (int)json_integer_value(js) : -EPROTO;
	if (st->hist)
		hist_init(st->hist);
	if (!st->has_hist)
		return 0;
	if (!st->hist)
		return errf(err, errlen, EPROTO,
			    "control message: a latency histogram for a side that records none");
	return hist_parse(j, v[11], v[12], v[13], st->hist, err, errlen);
}

json_t *rp_env_sanitize(const json_t *env)
{
	const char *k;
	json_t *v, *out;

	if (!json_is_object(env) || json_object_size(env) > 256)
		return NULL;
	out = json_object();
	json_object_foreach((json_t *)env, k, v) {
		if (strlen(k) > 64)
			continue;
		if ((json_is_string(v) && json_string_length(v) <= 256) || json_is_number(v) ||
		    json_is_boolean(v) || json_is_null(v))
			json_object_set(out, k, v);
	}
	return out;
}
