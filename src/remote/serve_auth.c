// SPDX-License-Identifier: MIT
/* ipclab serve before authentication (serve_auth.h). Anyone who reaches
 * the control port is a stranger until the token of its hello was right:
 * what it sends is read as it arrives on a non-blocking connection, a
 * hello of at most SA_HELLO_MAX bytes within SA_HELLO_NS of the accept
 * (--idle-timeout when shorter), SA_SLOTS strangers at a time (when all
 * are taken, the oldest makes room: a flood of silent connections cannot
 * keep a client out, and the listener's queue never fills).
 *
 * Guessing is slowed down: after the k-th wrong token in a row from an
 * address (IPv4, or an IPv6 /64), the next hello from there is checked
 * no sooner than SA_DELAY0_NS * 2^(k-1) later (at most SA_DELAY_MAX_NS);
 * after any wrong token, no token at all is checked for SA_GLOBAL_GAP_NS
 * (at most 10 guesses a second from all addresses together). A hello
 * waits for its turn, up to SA_TURN_NS; a later turn is refused at once
 * as throttled, its token unread. The wait is before the check, not before
 * the answer: a guesser learns nothing sooner by hanging up. A right token
 * clears its address. The log says when and for how long. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipclab/runner.h"
#include "proto.h"
#include "serve_auth.h"

struct sa_conn {
	int fd;			/* -1: a free slot */
	bool read;		/* the hello is read; its token waits for its turn */
	uint64_t t0, deadline;	/* accepted; the hello due by (read: its turn by) */
	struct sockaddr_storage from;
	char peer[NET_ADDR_TEXT];
	uint32_t got, len;
	char buf[4 + SA_HELLO_MAX];
	char token[REMOTE_TOKEN_MAX + 2];
};

struct sa_addr {
	bool used;
	uint8_t key[9];		/* family, then 4 (IPv4) or 8 (IPv6 /64) bytes */
	unsigned fails;		/* wrong tokens in a row */
	uint64_t next_ns;	/* its next hello checked no sooner */
};

struct serve_auth {
	const struct serve_opts *o;
	int lfd;
	struct sa_conn c[SA_SLOTS];
	struct sa_addr addr[SA_ADDRS];
	uint64_t global_next_ns;	/* no token checked before, after a wrong one */
	uint64_t global_said_ns, evict_said_ns;
	unsigned evicted;
};

void serve_log(const struct serve_opts *o, const char *fmt, ...)
{
	va_list ap;

	if (!o->log)
		return;
	va_start(ap, fmt);
	fprintf(o->log, "ipclab serve: ");
	vfprintf(o->log, fmt, ap);
	fputc('\n', o->log);
	fflush(o->log);
	va_end(ap);
}

int serve_refuse(int fd, const char *reason)
{
	json_t *o = json_pack("{s:s,s:s}", "type", "refused", "reason", reason);
	int ret = o ? rp_send(fd, o) : -ENOMEM;

	json_decref(o);
	return ret;
}

struct serve_auth *sa_new(const struct serve_opts *o, int lfd)
{
	struct serve_auth *a = calloc(1, sizeof(*a));
	int fl = fcntl(lfd, F_GETFL);

	if (!a || fl < 0 || fcntl(lfd, F_SETFL, fl | O_NONBLOCK) < 0) {
		free(a);
		return NULL;
	}
	a->o = o;
	a->lfd = lfd;
	for (unsigned i = 0; i < SA_SLOTS; i++)
		a->c[i].fd = -1;
	return a;
}

static void conn_drop(struct sa_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	explicit_bzero(c->token, sizeof(c->token));
	c->fd = -1;
}

void sa_free(struct serve_auth *a)
{
	if (!a)
		return;
	for (unsigned i = 0; i < SA_SLOTS; i++)
		conn_drop(&a->c[i]);
	free(a);
}

/* ---- addresses and their wrong tokens ------------------------------------- */

static void addr_key(const struct sockaddr_storage *ss, uint8_t key[9])
{
	memset(key, 0, 9);
	if (ss->ss_family == AF_INET) {
		key[0] = 4;
		memcpy(key + 1, &((const struct sockaddr_in *)ss)->sin_addr, 4);
	} else if (ss->ss_family == AF_INET6) {
		key[0] = 6;
		memcpy(key + 1, &((const struct sockaddr_in6 *)ss)->sin6_addr, 8);
	}
}

/* The address's entry (NULL: none, unless make: then a new one, in the
 * place of the one whose turn came longest ago). */
static struct sa_addr *addr_of(struct serve_auth *a, const struct sockaddr_storage *ss, bool make,
			       uint64_t now)
{
	struct sa_addr *old = &a->addr[0];
	uint8_t key[9];

	addr_key(ss, key);
	for (unsigned i = 0; i < SA_ADDRS; i++) {
		struct sa_addr *e = &a->addr[i];

		if (e->used && now > e->next_ns + SA_FORGET_NS)
			e->used = false;
		if (e->used && !memcmp(e->key, key, sizeof(key)))
			return e;
		if (!e->used || (old->used && e->next_ns < old->next_ns))
			old = e;
	}
	if (!make)
		return NULL;
	memset(old, 0, sizeof(*old));
	old->used = true;
	memcpy(old->key, key, sizeof(key));
	return old;
}

/* When the token of c may be checked. */
static uint64_t turn_of(struct serve_auth *a, const struct sa_conn *c, uint64_t now)
{
	const struct sa_addr *e = addr_of(a, &c->from, false, now);
	uint64_t t = a->global_next_ns;

	return e && e->next_ns > t ? e->next_ns : t;
}

/* ---- accepting and reading ------------------------------------------------ */

/* A free slot, or the oldest connection's (closed, unanswered). */
static struct sa_conn *slot(struct serve_auth *a, uint64_t now)
{
	struct sa_conn *old = &a->c[0];

	for (unsigned i = 0; i < SA_SLOTS; i++) {
		if (a->c[i].fd < 0)
			return &a->c[i];
		if (a->c[i].t0 < old->t0)
			old = &a->c[i];
	}
	a->evicted++;
	if (now - a->evict_said_ns > 10 * NSEC_PER_SEC || !a->evict_said_ns) {
		serve_log(a->o, "%d handshakes at once: the oldest dropped to make room (%s, %.1f s old; %u dropped since the last such line)",
			  SA_SLOTS, old->peer, (double)(now - old->t0) / 1e9, a->evicted);
		a->evict_said_ns = now;
		a->evicted = 0;
	}
	conn_drop(old);
	return old;
}

static void accept_all(struct serve_auth *a)
{
	uint64_t now = now_ns();
	uint64_t wait = a->o->idle_timeout_ns < SA_HELLO_NS ? a->o->idle_timeout_ns : SA_HELLO_NS;

	for (unsigned n = 0; n < SA_SLOTS; n++) {
		struct sockaddr_storage from;
		socklen_t l = sizeof(from);
		int fd = accept4(a->lfd, (struct sockaddr *)&from, &l, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct sa_conn *c;

		if (fd < 0)
			return;
		c = slot(a, now);
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->t0 = now;
		c->deadline = now + wait;
		net_unmap(&from);
		c->from = from;
		net_format(&from, true, c->peer, sizeof(c->peer));
	}
}

/* The hello read: what it says checked, but not its token yet. 0, or -1
 * when it was refused (closed). */
static int hello_take(struct serve_auth *a, struct sa_conn *c)
{
	char err[ERRLEN], proto[32] = "";
	uint64_t version = 0;
	json_t *m = NULL;

	if (rp_parse(c->buf + 4, c->len, &m, err, sizeof(err)) || strcmp(rp_type(m), "hello") ||
	    rp_str(m, "proto", proto, sizeof(proto), err, sizeof(err)) || strcmp(proto, REMOTE_PROTO) ||
	    rp_u64(m, "version", 1000, &version, err, sizeof(err))) {
		json_decref(m);
		serve_log(a->o, "%s: not an ipclab client, closed", c->peer);
		serve_refuse(c->fd, "not an ipclab client (expected the ipclab-remote hello)");
		return -1;
	}
	if (version != REMOTE_VERSION) {
		json_decref(m);
		snprintf(err, sizeof(err), "protocol version %llu not supported (this server speaks %d; use the same ipclab on both hosts)",
			 (unsigned long long)version, REMOTE_VERSION);
		serve_log(a->o, "%s: refused: %s", c->peer, err);
		serve_refuse(c->fd, err);
		return -1;
	}
	c->token[0] = '\0';
	(void)rp_str(m, "token", c->token, sizeof(c->token), err, sizeof(err));
	json_decref(m);
	explicit_bzero(c->buf, sizeof(c->buf));
	c->read = true;
	c->deadline = now_ns() + SA_TURN_NS;
	return 0;
}

/* Read what c has sent; a whole hello is taken. */
static void conn_read(struct serve_auth *a, struct sa_conn *c)
{
	for (;;) {
		uint32_t want = c->got < 4 ? 4 : 4 + c->len;
		ssize_t n = read(c->fd, c->buf + c->got, want - c->got);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			serve_log(a->o, "%s: left before its hello", c->peer);
			conn_drop(c);
			return;
		}
		c->got += (uint32_t)n;
		if (c->got == 4) {
			uint32_t be;

			memcpy(&be, c->buf, 4);
			c->len = ntohl(be);
			if (c->len == 0 || c->len > SA_HELLO_MAX) {
				serve_log(a->o, "%s: a first frame of %u bytes is no hello, closed", c->peer,
					  c->len);
				conn_drop(c);
				return;
			}
		} else if (c->got == 4 + c->len) {
			if (hello_take(a, c))
				conn_drop(c);
			return;
		}
	}
}

/* ---- checking the token --------------------------------------------------- */

static void wrong_token(struct serve_auth *a, struct sa_conn *c, uint64_t now)
{
	struct sa_addr *e = addr_of(a, &c->from, true, now);
	unsigned shift;
	uint64_t delay;

	e->fails++;
	shift = e->fails - 1 < 20 ? e->fails - 1 : 20;
	delay = SA_DELAY0_NS << shift;
	if (delay > SA_DELAY_MAX_NS)
		delay = SA_DELAY_MAX_NS;
	e->next_ns = now + delay;
	a->global_next_ns = now + SA_GLOBAL_GAP_NS;
	serve_log(a->o, "%s: refused: wrong token (%u in a row from this address); its next hello is checked no sooner than %llu ms from now",
		  c->peer, e->fails, (unsigned long long)(delay / NSEC_PER_MSEC));
	serve_refuse(c->fd, "wrong or missing token (give the server's token with --token-file, IPCLAB_TOKEN or --token)");
	conn_drop(c);
}

/* Its turn will not come in time: refused, the token unread. */
static void throttled(struct serve_auth *a, struct sa_conn *c, uint64_t now, uint64_t turn)
{
	const struct sa_addr *e = addr_of(a, &c->from, false, now);
	char why[ERRLEN];

	if (e && e->next_ns >= turn)
		snprintf(why, sizeof(why), "throttled: %u wrong tokens in a row from this address; its next hello is checked in %.1f s",
			 e->fails, (double)(turn - now) / 1e9);
	else
		snprintf(why, sizeof(why), "throttled: wrong tokens from many addresses are checked at most %d a second; try again in a moment",
			 (int)(NSEC_PER_SEC / SA_GLOBAL_GAP_NS));
	serve_log(a->o, "%s: refused unchecked: %s", c->peer, why);
	serve_refuse(c->fd, why);
	conn_drop(c);
}

/* The oldest read hello whose turn has come (NULL: none); those whose
 * turn comes too late are refused on the way. */
static struct sa_conn *next_due(struct serve_auth *a, uint64_t now)
{
	struct sa_conn *best = NULL;

	for (unsigned i = 0; i < SA_SLOTS; i++) {
		struct sa_conn *c = &a->c[i];
		uint64_t turn;

		if (c->fd < 0 || !c->read)
			continue;
		turn = turn_of(a, c, now);
		if (turn > c->deadline) {
			throttled(a, c, now, turn);
			continue;
		}
		if (turn > now) {
			if (a->global_next_ns >= turn && now - a->global_said_ns > 10 * NSEC_PER_SEC) {
				serve_log(a->o, "wrong tokens: at most %d checked a second from all addresses together; hellos wait their turn",
					  (int)(NSEC_PER_SEC / SA_GLOBAL_GAP_NS));
				a->global_said_ns = now;
			}
			continue;
		}
		if (!best || c->t0 < best->t0)
			best = c;
	}
	return best;
}

/* Check the tokens whose turn has come: 1 with *out when one is right
 * and the slot is free (busy NULL). */
static int check_due(struct serve_auth *a, const char *busy, struct sa_client *out)
{
	uint64_t now = now_ns();
	struct sa_conn *c;

	while ((c = next_due(a, now))) {
		struct sa_addr *e;
		int fl;

		if (!rp_token_equal(c->token, a->o->token)) {
			wrong_token(a, c, now);
			continue;
		}
		if ((e = addr_of(a, &c->from, false, now)))
			e->used = false;
		if (busy) {
			serve_log(a->o, "%s: refused: busy", c->peer);
			serve_refuse(c->fd, busy);
			conn_drop(c);
			continue;
		}
		fl = fcntl(c->fd, F_GETFL);
		if (fl < 0 || fcntl(c->fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
			conn_drop(c);
			continue;
		}
		out->fd = c->fd;
		out->from = c->from;
		memcpy(out->peer, c->peer, sizeof(out->peer));
		c->fd = -1;
		conn_drop(c);
		return 1;
	}
	return 0;
}

/* ---- the loop's step ------------------------------------------------------ */

/* Until the next deadline or turn, at most ms. */
static int wait_ms(struct serve_auth *a, int ms)
{
	uint64_t now = now_ns(), next = now + (uint64_t)ms * NSEC_PER_MSEC;

	for (unsigned i = 0; i < SA_SLOTS; i++) {
		const struct sa_conn *c = &a->c[i];
		uint64_t t;

		if (c->fd < 0)
			continue;
		t = c->deadline;
		if (c->read) {
			uint64_t turn = turn_of(a, c, now);

			t = turn < t ? turn : t;
		}
		next = t < next ? t : next;
	}
	return next <= now ? 0 : (int)((next - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC);
}

static void expire(struct serve_auth *a)
{
	uint64_t now = now_ns();

	for (unsigned i = 0; i < SA_SLOTS; i++) {
		struct sa_conn *c = &a->c[i];

		if (c->fd < 0 || c->read || now < c->deadline)
			continue;
		serve_log(a->o, "%s: no hello within %.1f s, closed", c->peer,
			  (double)(c->deadline - c->t0) / 1e9);
		conn_drop(c);
	}
}

int sa_poll(struct serve_auth *a, int fd, short events, int ms, short *revents, const char *busy,
	    struct sa_client *out)
{
	struct pollfd p[SA_SLOTS + 2];
	struct sa_conn *who[SA_SLOTS + 2] = { NULL };
	unsigned n = 0;
	int r;

	if (revents)
		*revents = 0;
	if (fd >= 0)
		p[n++] = (struct pollfd){ .fd = fd, .events = events };
	p[n++] = (struct pollfd){ .fd = a->lfd, .events = POLLIN };
	for (unsigned i = 0; i < SA_SLOTS; i++)
		if (a->c[i].fd >= 0 && !a->c[i].read) {
			who[n] = &a->c[i];
			p[n++] = (struct pollfd){ .fd = a->c[i].fd, .events = POLLIN | POLLRDHUP };
		}
	r = poll(p, n, wait_ms(a, ms));
	if (runner_interrupted)
		return -EINTR;
	if (r > 0) {
		if (fd >= 0 && revents)
			*revents = p[0].revents;
		for (unsigned i = 0; i < n; i++)
			if (who[i] && p[i].revents && who[i]->fd == p[i].fd)
				conn_read(a, who[i]);
		if (p[fd >= 0].revents & POLLIN)
			accept_all(a);
	}
	expire(a);
	return check_due(a, busy, out);
}
