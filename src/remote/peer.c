// SPDX-License-Identifier: MIT
/* run --peer HOST[:PORT]: the clients of each cell run here, its server
 * side on the host that runs `ipclab serve` (remote.h, serve.c). One
 * control connection for the whole run: handshake, then the clock offset
 * from the round trips of "time" probes (the best one's half round trip
 * bounds its error), then per cell a request, the server's "ready" (the
 * measured connection's port and secret), the clients run here, and the
 * server's "done" with its side's record. Round trips are timed on this
 * host's clock only; a window the server timed is moved onto this clock
 * by the measured offset. One-way latency would need the two clocks
 * compared per message: it is reported unknown (null), never computed
 * from two clocks. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipclab/netaddr.h"
#include "ipclab/result.h"
#include "ipclab/runner.h"
#include "proto.h"

#define PEER_PROBES 16
#define PEER_CONNECT_S 10
#define PEER_READY_NS (30 * NSEC_PER_SEC)
#define PEER_DONE_SLACK_NS (30 * NSEC_PER_SEC)

struct peer {
	int fd;
	char host[64];			/* as given, for messages */
	struct sockaddr_storage addr;	/* the server's, also the measured connection's */
	char *env_json;
	uint64_t max_size, max_count, max_duration_ns, max_clients;
	struct remote_allow allow;	/* the server's --allow-sched, --allow-cpus */
	int64_t offset_ns;
	uint64_t err_ns;
	struct cell_remote outer, inner;
	/* the cell in flight */
	json_t *done;
	const struct cell *cur;
	char why[ERRLEN];
};

/* connect() within PEER_CONNECT_S: 0 or -errno (-ETIMEDOUT). */
static int connect_by(int fd, const struct sockaddr_storage *sa)
{
	uint64_t deadline = now_ns() + PEER_CONNECT_S * NSEC_PER_SEC;
	int fl = fcntl(fd, F_GETFL), soerr = 0;
	socklen_t l = sizeof(soerr);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)sa, net_len(sa)) < 0) {
		struct pollfd pf = { .fd = fd, .events = POLLOUT };
		int r = 0;

		if (errno != EINPROGRESS)
			return -errno;
		while (r == 0 && now_ns() < deadline) {
			r = poll(&pf, 1, (int)((deadline - now_ns()) / NSEC_PER_MSEC) + 1);
			if (r < 0 && errno != EINTR)
				return -errno;
			if (runner_interrupted)
				return -EINTR;
			r = r < 0 ? 0 : r;
		}
		if (r == 0)
			return -ETIMEDOUT;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &l) < 0 || soerr)
			return soerr ? -soerr : -errno;
	}
	return fcntl(fd, F_SETFL, fl) < 0 ? -errno : 0;
}

/* HOST[:PORT], IPV6 or [IPV6]:PORT; a host name resolves to IPv4 or IPv6. */
static int peer_connect(struct peer *p, const char *hostport, char *err, size_t errlen)
{
	char host[NET_ADDR_TEXT], port[16], where[NET_ADDR_TEXT];
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai = NULL;
	struct timeval tv = { .tv_sec = PEER_CONNECT_S };
	uint64_t pn;
	int one = 1, ret;

	if (strlen(hostport) >= sizeof(p->host) ||
	    net_split(hostport, host, sizeof(host), port, sizeof(port)) || !host[0])
		return errf(err, errlen, EINVAL,
			    "--peer %s: expected HOST[:PORT], IPV6 or [IPV6]:PORT (e.g. 192.0.2.1:7227, [fd00::1]:7227)",
			    hostport);
	if (!port[0])
		snprintf(port, sizeof(port), "%d", REMOTE_DEFAULT_PORT);
	if (parse_u64(port, &pn) || pn == 0 || pn > 65535)
		return errf(err, errlen, EINVAL, "--peer %s: port '%s' out of range 1-65535", hostport,
			    port);
	if ((ret = getaddrinfo(host, port, &hints, &ai)) || !ai ||
	    (ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
	    ai->ai_addrlen > sizeof(p->addr)) {
		if (ai)
			freeaddrinfo(ai);
		return errf(err, errlen, EINVAL, "--peer %s: cannot resolve %s: %s", hostport, host,
			    ret ? gai_strerror(ret) : "not an IPv4 or IPv6 address");
	}
	memcpy(&p->addr, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	snprintf(p->host, sizeof(p->host), "%s", hostport);
	p->fd = socket(p->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (p->fd < 0)
		return errf(err, errlen, errno, "socket: %s", strerror(errno));
	net_format(&p->addr, true, where, sizeof(where));
	ret = connect_by(p->fd, &p->addr);
	if (ret == -ETIMEDOUT)
		return errf(err, errlen, ETIMEDOUT,
			    "--peer %s: timed out connecting to %s after %d s (is `ipclab serve` running there, and reachable?)",
			    hostport, where, PEER_CONNECT_S);
	if (ret)
		return errf(err, errlen, -ret,
			    "--peer %s: cannot connect to %s: %s (is `ipclab serve` running there?)",
			    hostport, where, strerror(-ret));
	setsockopt(p->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* a frame that cannot be written in 10 s: the server is stuck */
	setsockopt(p->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return 0;
}

/* The server's --allow-sched and --allow-cpus from its limits (a server
 * that names none: anything, as it will take anything). */
static int welcome_allow(struct peer *p, const json_t *lim)
{
	const char *sched = json_string_value(json_object_get(lim, "allow_sched"));
	const char *cpus = json_string_value(json_object_get(lim, "allow_cpus"));
	char why[ERRLEN];

	if (allow_sched_parse(sched ? sched : "other,batch,idle,fifo:99,rr:99", &p->allow, why,
			      sizeof(why)))
		return -EPROTO;
	p->allow.cpus_any = !cpus;
	return cpus && allow_cpus_parse(cpus, &p->allow, why, sizeof(why)) ? -EPROTO : 0;
}

static int peer_handshake(struct peer *p, const char *token, char *err, size_t errlen)
{
	char why[ERRLEN];
	json_t *m = json_pack("{s:s,s:s,s:i,s:s}", "type", "hello", "proto", REMOTE_PROTO,
			      "version", REMOTE_VERSION, "token", token ? token : "");
	json_t *lim, *env;
	int ret = m ? rp_send(p->fd, m) : -ENOMEM;

	json_decref(m);
	m = NULL;
	if (!ret)
		ret = rp_recv(p->fd, now_ns() + RP_HANDSHAKE_NS, &m, why, sizeof(why));
	if (ret)
		return errf(err, errlen, -ret, "--peer %s: no answer to the handshake: %s", p->host,
			    ret == -EPROTO ? why : ret == -ECONNRESET ? "connection closed" : strerror(-ret));
	if (!strcmp(rp_type(m), "refused")) {
		snprintf(why, sizeof(why), "%s", json_string_value(json_object_get(m, "reason")) ?: "");
		json_decref(m);
		/* a wrong token is bad input (exit 2); busy or throttled is
		 * the server's state (exit 1: try again) */
		return errf(err, errlen, !strncmp(why, "wrong or missing token", 22) ? EACCES : EBUSY,
			    "--peer %s refused the connection: %s", p->host, why);
	}
	lim = json_object_get(m, "limits");
	if (strcmp(rp_type(m), "welcome") ||
	    rp_u64(lim, "max_size_bytes", UINT64_MAX >> 1, &p->max_size, why, sizeof(why)) ||
	    rp_u64(lim, "max_count", UINT64_MAX >> 1, &p->max_count, why, sizeof(why)) ||
	    rp_u64(lim, "max_duration_ns", UINT64_MAX >> 1, &p->max_duration_ns, why, sizeof(why)) ||
	    rp_u64(lim, "max_clients", MAX_CLIENTS, &p->max_clients, why, sizeof(why)) ||
	    welcome_allow(p, lim) || !(env = rp_env_sanitize(json_object_get(m, "env")))) {
		json_decref(m);
		return errf(err, errlen, EPROTO, "--peer %s: not an ipclab server's welcome", p->host);
	}
	p->env_json = json_dumps(env, JSON_COMPACT);
	json_decref(env);
	json_decref(m);
	return p->env_json ? 0 : -ENOMEM;
}

/* The clock offset: of PEER_PROBES round trips, the shortest; the server
 * read its clock somewhere inside it, so the offset is known to half of
 * it. */
static int peer_clock(struct peer *p, char *err, size_t errlen)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < PEER_PROBES; i++) {
		json_t *q = json_pack("{s:s}", "type", "time"), *a = NULL;
		uint64_t t0 = now_ns(), t1, ts;
		int ret = q ? rp_send(p->fd, q) : -ENOMEM;
		char why[ERRLEN];

		json_decref(q);
		if (!ret)
			ret = rp_recv(p->fd, t0 + RP_HANDSHAKE_NS, &a, why, sizeof(why));
		t1 = now_ns();
		if (!ret && (strcmp(rp_type(a), "time") ||
			     rp_u64(a, "t_ns", UINT64_MAX >> 1, &ts, why, sizeof(why))))
			ret = -EPROTO;
		json_decref(a);
		if (ret)
			return errf(err, errlen, -ret, "--peer %s: clock probe failed: %s", p->host,
				    ret == -EPROTO ? why : strerror(-ret));
		if (t1 - t0 < best) {
			best = t1 - t0;
			p->offset_ns = (int64_t)ts - (int64_t)(t0 + (t1 - t0) / 2);
			p->err_ns = (t1 - t0 + 1) / 2;
		}
	}
	return 0;
}

static int peer_run(const struct cell *c, struct result *res,
		    int (*run_local)(const struct cell *, struct result *));
static int peer_sides_done(const struct cell *c, struct side_stats *sides, unsigned n, char *err,
			   size_t errlen);

int peer_open(const char *hostport, const char *token, struct peer **out, char *err,
	      size_t errlen)
{
	struct peer *p = calloc(1, sizeof(*p));
	int ret;

	*out = NULL;
	if (!p)
		return -ENOMEM;
	p->fd = -1;
	if (token && strlen(token) > REMOTE_TOKEN_MAX) {
		free(p);
		return errf(err, errlen, EINVAL, "--token: longer than %d bytes", REMOTE_TOKEN_MAX);
	}
	ret = peer_connect(p, hostport, err, errlen);
	if (!ret)
		ret = peer_handshake(p, token, err, errlen);
	if (!ret)
		ret = peer_clock(p, err, errlen);
	if (ret) {
		peer_close(p);
		return ret;
	}
	p->outer = (struct cell_remote){ .local = CELL_SIDES_CLIENTS, .run = peer_run, .arg = p };
	p->inner = (struct cell_remote){ .local = CELL_SIDES_CLIENTS, .sides_done = peer_sides_done,
					 .arg = p };
	*out = p;
	return 0;
}

void peer_close(struct peer *p)
{
	if (!p)
		return;
	if (p->fd >= 0) {
		json_t *b = json_pack("{s:s}", "type", "bye");

		if (b)
			(void)rp_send(p->fd, b);
		json_decref(b);
		close(p->fd);
	}
	json_decref(p->done);
	free(p->env_json);
	free(p);
}

const char *peer_env_json(const struct peer *p)
{
	return p ? p->env_json : NULL;
}

const char *peer_host(const struct peer *p)
{
	return p ? p->host : "";
}

void peer_refusal(const struct transport *tp, char *why, size_t len)
{
	size_t off;

	why[0] = '\0';
	if (tp->caps & TP_REMOTE)
		return;
	off = (size_t)snprintf(why, len, "--peer: transport %s cannot cross hosts (it lives in one kernel or one process); between hosts:",
			       tp->name);
	for (size_t i = 0; i < n_transports && off < len; i++)
		if (transports[i]->caps & TP_REMOTE)
			off += (size_t)snprintf(why + off, len - off, "%s %s",
						off && why[off - 1] != ':' ? "," : "",
						transports[i]->name);
}

int peer_attach(struct peer *p, struct cell *c, char *err, size_t errlen)
{
	if (!(c->tp->caps & TP_REMOTE)) {
		peer_refusal(c->tp, err, errlen);
		return -EINVAL;
	}
	if (c->trace || c->profile)
		return errf(err, errlen, EINVAL, "--peer: --trace and --profile see one host only; run them without --peer");
	if (c->pat->channels || c->pat->periodic)
		return errf(err, errlen, EINVAL, "--peer: -p %s needs a channel per hop of its graph, which runs on one host only; run it without --peer",
			    c->pat->name);
	if (c->think_ns)
		return errf(err, errlen, EINVAL, "--peer: --think-ns is calibrated per host; use --think ITERS");
	if (c->size > p->max_size)
		return errf(err, errlen, EINVAL, "--peer: size %llu is over the server's limit %llu (its --max-size)",
			    (unsigned long long)c->size, (unsigned long long)p->max_size);
	if (c->count + c->warmup > p->max_count)
		return errf(err, errlen, EINVAL, "--peer: %llu messages are over the server's limit %llu (its --max-count)",
			    (unsigned long long)(c->count + c->warmup), (unsigned long long)p->max_count);
	if (c->duration_ns > p->max_duration_ns)
		return errf(err, errlen, EINVAL, "--peer: duration %.1f s is over the server's limit %.1f s (its --max-duration)",
			    (double)c->duration_ns / 1e9, (double)p->max_duration_ns / 1e9);
	if (c->clients > p->max_clients || c->clients > REMOTE_MAX_CLIENTS)
		return errf(err, errlen, EINVAL, "--peer: %u clients are over the server's limit %llu (its --max-clients)",
			    c->clients, (unsigned long long)p->max_clients);
	if (allow_check(&p->allow, &c->sched, c->pin.mode == PIN_CPUS ? c->pin.server_cpu : -1, false,
			err, errlen))
		return -EINVAL;
	c->remote = &p->outer;
	return 0;
}

/* "key=value,..." of an option block, without the keys the remote code sets. */
static void opts_text(const struct opt_desc *d, const void *opts, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (; d && opts && d->name && off < len; d++) {
		char v[OPT_STR_MAX + 32];

		if (!strcmp(d->name, "listen") || !strcmp(d->name, "connect") ||
		    !strcmp(d->name, "secret"))
			continue;
		opt_format(d, opts, v, sizeof(v));
		if (!v[0] && d->type == OPT_STRING)
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s%s=%s", off ? "," : "", d->name, v);
	}
}

static json_t *cell_request(const struct cell *c)
{
	char tpo[512], pato[512];
	/* --pin S:C names S on the server; same and split are carried as
	 * words, the server side's CPU chosen there (its first allowed one) */
	int scpu = c->pin.mode == PIN_CPUS ? c->pin.server_cpu : -1;
	json_t *o;

	opts_text(c->tp->options, c->tp_opts, tpo, sizeof(tpo));
	opts_text(c->pat->options, c->pat_opts, pato, sizeof(pato));
	o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:i,s:b,s:b,s:I,s:I,s:I,s:i}",
			 "type", "cell", "transport", c->tp->name, "pattern", c->pat->name,
			 "tp_opts", tpo, "pat_opts", pato, "sched", c->sched.text[0] ? c->sched.text : "other",
			 "size_bytes", (json_int_t)c->size, "count", (json_int_t)c->count,
			 "warmup", (json_int_t)c->warmup, "duration_ns", (json_int_t)c->duration_ns,
			 "clients", (int)c->clients, "threads", c->threads, "verify", c->verify,
			 "timeout_ns", (json_int_t)c->timeout_ns, "max_time_ns", (json_int_t)c->max_time_ns,
			 "think", (json_int_t)c->think, "server_cpu", scpu < 0 ? 65536 : scpu);
	if (o && (c->pin.mode == PIN_SAME || c->pin.mode == PIN_SPLIT))
		json_object_set_new(o, "server_pin", json_string(c->pin.mode == PIN_SAME ? "same" : "split"));
	return o;
}

static uint64_t done_deadline(const struct cell *c)
{
	return now_ns() + PEER_DONE_SLACK_NS + c->duration_ns + c->max_time_ns;
}

/* The server's "done" for the cell in flight (kept in p->done). */
static int wait_done(struct peer *p, const struct cell *c, uint64_t deadline)
{
	json_t *m = NULL;
	int ret;

	if (p->done)
		return 0;
	ret = rp_recv(p->fd, deadline, &m, p->why, sizeof(p->why));
	if (ret) {
		if (ret != -EPROTO)
			snprintf(p->why, sizeof(p->why), "server on %.64s: no result: %.64s", p->host,
				 ret == -ECONNRESET ? "control connection closed" : strerror(-ret));
		return ret;
	}
	if (strcmp(rp_type(m), "done")) {
		json_decref(m);
		snprintf(p->why, sizeof(p->why), "server on %s: unexpected message", p->host);
		return -EPROTO;
	}
	(void)c;
	p->done = m;
	return 0;
}

static const char *done_status(const struct peer *p)
{
	return json_string_value(json_object_get(p->done, "status")) ?: "failed";
}

static int peer_sides_done(const struct cell *c, struct side_stats *sides, unsigned n, char *err,
			   size_t errlen)
{
	struct peer *p = c->remote->arg;
	struct side_stats st = { .hist = n ? sides[0].hist : NULL };
	int ret = wait_done(p, c, done_deadline(c));

	if (ret)
		return errf(err, errlen, -ret, "%s", p->why);
	if (strcmp(done_status(p), "ok"))
		return errf(err, errlen, EIO, "server on %s: %s", p->host,
			    json_string_value(json_object_get(p->done, "reason")) ?: "failed");
	ret = rp_side_parse(json_object_get(p->done, "side"), &st, p->why, sizeof(p->why));
	if (ret)
		return errf(err, errlen, EPROTO, "server on %s: %s", p->host, p->why);
	if (n < 1 || st.role != TP_SERVER)
		return errf(err, errlen, EPROTO, "server on %s: record of the wrong side", p->host);
	/* its window onto this clock (offset error: p->err_ns) */
	if (st.win_start_ns)
		st.win_start_ns = (uint64_t)((int64_t)st.win_start_ns - p->offset_ns);
	if (st.win_end_ns)
		st.win_end_ns = (uint64_t)((int64_t)st.win_end_ns - p->offset_ns);
	st.role = TP_SERVER;
	st.id = 0;
	/* a histogram of the server's is of one-way times across two clocks */
	st.has_hist = false;
	st.pat = sides[0].pat;		/* this side's records stay where they are */
	st.paced = sides[0].paced;
	sides[0] = st;
	return 0;
}

static void settings_from(struct tp_settings *s, const json_t *o)
{
	const char *k;
	json_t *v;

	s->n = 0;
	json_object_foreach((json_t *)o, k, v) {
		if (s->n >= TP_MAX_SETTINGS || !json_is_string(v))
			continue;
		snprintf(s->kv[s->n].key, sizeof(s->kv[0].key), "%s", k);
		snprintf(s->kv[s->n].val, sizeof(s->kv[0].val), "%s", json_string_value(v));
		s->n++;
	}
}

static void fill_remote(struct peer *p, const struct cell *c, struct result *res, int cpu,
			int pin_there)
{
	struct remote_result *r = &res->remote;

	r->on = true;
	snprintf(r->host, sizeof(r->host), "%s", p->host);
	r->server_pin = c->pin.mode == PIN_NONE ? -1 : pin_there;
	r->server_cpu = cpu;
	r->clock_offset_ns = p->offset_ns;
	r->clock_err_ns = p->err_ns;
	r->clock_known = true;
	if (p->done)
		settings_from(&r->settings, json_object_get(p->done, "settings"));
	/* a stream to the server: what arrived there over its own window
	 * (the sender's count would include what its socket buffer held) */
	if (res->status == RES_OK && res->lat_kind == LAT_ONE_WAY && res->nsides &&
	    res->sides[0].bytes && res->sides[0].elapsed_ns) {
		double secs = (double)res->sides[0].elapsed_ns / 1e9;

		res->msgs = res->sides[0].msgs;
		res->bytes = res->sides[0].bytes;
		res->elapsed_ns = res->sides[0].elapsed_ns;
		res->msgs_per_s = (double)res->msgs / secs;
		res->bytes_per_s = (double)res->bytes / secs;
	}
	if (res->lat_kind == LAT_ONE_WAY) {
		/* timestamps of one host read on the other's clock */
		r->one_way_unknown = true;
		res->lat_samples = 0;
		hist_init(&res->hist);
	}
}

static void fail(struct result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct result *res, const char *fmt, ...)
{
	va_list ap;

	res->status = RES_FAILED;
	va_start(ap, fmt);
	vsnprintf(res->reason, sizeof(res->reason), fmt, ap);
	va_end(ap);
}

/* --peer: one cell with its server side on the other host: the request,
 * the answer, the local sides, the server's record (one exchange after
 * another over the control connection, each step checked). */
static int peer_run(const struct cell *c, struct result *res,
		    int (*run_local)(const struct cell *, struct result *))
{
	struct peer *p = c->remote->arg;
	json_t *req = cell_request(c), *m = NULL;
	char why[ERRLEN], kv[160], secret[40];
	struct sockaddr_storage there;
	struct cell cc = *c;
	uint64_t port = 0;
	void *opts = NULL;
	int ret, cpu = -1, pin_there = -1;

	json_decref(p->done);
	p->done = NULL;
	ret = req ? rp_send(p->fd, req) : -ENOMEM;
	json_decref(req);
	if (!ret)
		ret = rp_recv(p->fd, now_ns() + PEER_READY_NS, &m, why, sizeof(why));
	if (ret) {
		fail(res, "server on %s: %s", p->host,
		     ret == -EPROTO ? why : ret == -ECONNRESET ? "control connection closed" : strerror(-ret));
		return 0;
	}
	if (!strcmp(rp_type(m), "refused")) {
		fail(res, "server on %s refused the cell: %s", p->host,
		     json_string_value(json_object_get(m, "reason")) ?: "");
		json_decref(m);
		return 0;
	}
	json_t *jc = json_object_get(m, "server_cpu");

	if (json_is_integer(jc) && json_integer_value(jc) >= -1 && json_integer_value(jc) < 65536)
		cpu = pin_there = (int)json_integer_value(jc);
	if (strcmp(rp_type(m), "ready") || rp_u64(m, "port", 65535, &port, why, sizeof(why)) || !port ||
	    rp_str(m, "secret", secret, sizeof(secret), why, sizeof(why)) ||
	    strspn(secret, "0123456789abcdef") != 32 || strlen(secret) != 32) {
		json_decref(m);
		fail(res, "server on %s: malformed ready message", p->host);
		return 0;
	}
	json_decref(m);
	opts = calloc(1, c->tp->opts_size ? c->tp->opts_size : 1);
	if (!opts) {
		fail(res, "out of memory");
		return 0;
	}
	if (c->tp_opts)
		memcpy(opts, c->tp_opts, c->tp->opts_size);
	there = p->addr;
	net_set_port(&there, (uint16_t)port);
	net_format(&there, true, kv, sizeof(kv));
	if (opt_set(opt_find(c->tp->options, "connect"), opts, kv, why, sizeof(why)) ||
	    opt_set(opt_find(c->tp->options, "secret"), opts, secret, why, sizeof(why))) {
		free(opts);
		fail(res, "%s", why);
		return 0;
	}
	cc.tp_opts = opts;
	cc.remote = &p->inner;
	p->cur = c;
	ret = run_local(&cc, res);
	res->cell = *c;
	if (!p->done)
		(void)wait_done(p, c, now_ns() + PEER_DONE_SLACK_NS);
	if (res->status == RES_FAILED && p->done && strcmp(done_status(p), "ok") &&
	    !strstr(res->reason, "server on")) {
		char mine[ERRLEN];

		snprintf(mine, sizeof(mine), "%s", res->reason);
		snprintf(res->reason, sizeof(res->reason), "server on %.40s: %.90s; here: %.90s", p->host,
			 json_string_value(json_object_get(p->done, "reason")) ?: "failed", mine);
	} else if (res->status == RES_FAILED && !p->done && !strstr(res->reason, "server on")) {
		char mine[ERRLEN];

		snprintf(mine, sizeof(mine), "%s", res->reason);
		snprintf(res->reason, sizeof(res->reason), "%.120s; %.120s", mine, p->why);
	}
	if (p->done) {
		json_t *side = json_object_get(p->done, "side"), *sc = json_object_get(side, "cpu");

		if (json_is_integer(sc) && json_integer_value(sc) >= -1 && json_integer_value(sc) < 65536)
			cpu = (int)json_integer_value(sc);
	}
	fill_remote(p, c, res, cpu, pin_there);
	free(opts);
	return ret;
}
