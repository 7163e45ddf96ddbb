// SPDX-License-Identifier: MIT
/*
 * remote_proto.c - libFuzzer harness: the control connection of ipclab
 * serve / run --peer (src/remote/proto.c), what the other host sends. The
 * input is the byte stream itself, written into a socket whose other end
 * is then closed: frames are read with rp_recv until it refuses one or the
 * stream ends, and each frame's records go through the parsers the two
 * ends use: a side record ("side", or the frame itself) with
 * rp_side_parse, an environment ("env", or the frame) with
 * rp_env_sanitize, the bounded getters. Besides never crashing: a refusal
 * says why; a side record that parses has its window in order and a
 * histogram whose counts add up (without wrapping), with min and max in
 * its lowest and highest buckets, only for a side that has one, and
 * survives rp_side_json -> rp_side_parse unchanged; a sanitised env
 * holds only bounded scalars.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "remote/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FRAMES_MAX 64

/* A side with a histogram of its own, as the runner maps one. */
static struct side_stats *side_new(void)
{
	struct side_stats *st = calloc(1, sizeof(*st));

	if (!st || !(st->hist = calloc(1, sizeof(*st->hist))))
		abort();
	return st;
}

static void side_free(struct side_stats *st)
{
	free(st->hist);
	free(st);
}

static void check_side(const json_t *j)
{
	struct side_stats *st = side_new(), *back = side_new(), bare = { 0 };
	char err[ERRLEN] = "";
	unsigned __int128 sum = 0;
	unsigned lo = HIST_BUCKETS, hi = 0;
	json_t *again;

	/* a side without a histogram takes no record that has one */
	if (!rp_side_parse(j, &bare, err, sizeof(err)) && bare.has_hist)
		abort();
	if (rp_side_parse(j, st, err, sizeof(err))) {
		if (!err[0] || !memchr(err, '\0', sizeof(err)))
			abort();	/* a refusal says why */
		goto out;
	}
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		sum += st->hist->buckets[i];
		if (st->hist->buckets[i] && i < lo)
			lo = i;
		if (st->hist->buckets[i])
			hi = i;
	}
	if (st->has_hist && sum != st->hist->count)
		abort();
	if (st->has_hist && sum &&
	    (st->hist->min > st->hist->max || hist_index(st->hist->min) != lo ||
	     hist_index(st->hist->max) != hi))
		abort();
	if (st->cpu < -1 || st->cpu > 65535 || st->status > 0 || st->status <= -4096 ||
	    (st->win_end_ns && st->win_start_ns > st->win_end_ns))
		abort();
	/* what parsed goes back out and in unchanged */
	again = rp_side_json(st);
	if (!again || rp_side_parse(again, back, err, sizeof(err)))
		abort();
	if (back->msgs != st->msgs || back->bytes != st->bytes || back->cpu != st->cpu ||
	    back->hist->count != st->hist->count || back->has_hist != st->has_hist ||
	    memcmp(back->hist->buckets, st->hist->buckets, sizeof(st->hist->buckets)))
		abort();
	json_decref(again);
out:
	side_free(st);
	side_free(back);
}

static void check_env(const json_t *j)
{
	json_t *e = rp_env_sanitize(j), *v;
	const char *k;

	if (!e)
		return;
	if (json_object_size(e) > 256)
		abort();
	json_object_foreach(e, k, v)
		if (strlen(k) > 64 || json_is_object(v) || json_is_array(v) ||
		    (json_is_string(v) && json_string_length(v) > 256))
			abort();
	json_decref(e);
}

static void check_frame(const json_t *m)
{
	char buf[64], err[ERRLEN];
	uint64_t v;

	(void)rp_type(m);
	if (!rp_u64(m, "port", 65535, &v, err, sizeof(err)) && v > 65535)
		abort();
	if (!rp_str(m, "secret", buf, sizeof(buf), err, sizeof(err)) && strlen(buf) >= sizeof(buf))
		abort();
	check_side(json_object_get(m, "side"));
	check_side(m);
	check_env(json_object_get(m, "env"));
	check_env(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int sv[2];
	char err[ERRLEN];

	if (size > 1 << 16 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return 0;
	/* the whole stream fits the socket's buffer: written, then EOF */
	if (full_write(sv[1], data, size) != (ssize_t)size)
		abort();
	close(sv[1]);
	for (int i = 0; i < FRAMES_MAX; i++) {
		json_t *m = NULL;
		int ret;

		err[0] = '\0';
		ret = rp_recv(sv[0], now_ns() + NSEC_PER_SEC, &m, err, sizeof(err));
		if (ret) {
			if (m || (ret == -EPROTO && !err[0]))
				abort();
			break;
		}
		if (!json_is_object(m) || !json_is_string(json_object_get(m, "type")))
			abort();
		check_frame(m);
		json_decref(m);
	}
	close(sv[0]);
	return 0;
}
