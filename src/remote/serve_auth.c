// SPDX-License-Identifier: MIT
/* ipclab serve before authentication (serve_auth.h). Anyone who reaches
 * the control port is a stranger until the token of its hello was right:
 * what it sends is read as it arrives on a non-blocking connection, a
 * hello of at most SA_HELLO_MAX bytes within SA_HELLO_NS of the accept
 * (--idle-timeout when shorter), SA_SLOTS strangers at a time. When all
 * are taken, a connection that has sent no hello yet makes room, the
 * oldest of the address (IPv4, or an IPv6 /64) that holds the most: a
 * flood of silent connections cannot keep a client out, an address cannot
 * take another's share, a hello already read is never dropped for one not
 * yet read, and the listener's queue never fills. Whoever is dropped is
 * told why in a "refused" frame.
 *
 * Guessing is slowed down, by where it comes from: when a hello's token
 * is checked, and which goes first, is serve_throttle.c's, with the tables
 * of addresses and networks that sent wrong tokens (serve_auth_int.h
 * holds what the two files share). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "ipclab/runner.h"
#include "proto.h"
#include "serve_auth.h"
#include "serve_auth_int.h"

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
	if (getrandom(&a->seed, sizeof(a->seed), GRND_NONBLOCK) != sizeof(a->seed))
		a->seed = now_ns() ^ (uint64_t)getpid() << 32;
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

/* Closed after an answer: what it sent meanwhile read first (up to 16
 * KiB), as a close with unread data resets the connection, and the
 * client could lose the answer sent just before. (Not conn_drop's way:
 * sa_free in a cell's process must leave the sockets to serve.) */
static void conn_close_told(struct sa_conn *c)
{
	if (c->fd >= 0) {
		char sink[4096];

		shutdown(c->fd, SHUT_WR);
		for (int i = 0; i < 4 && read(c->fd, sink, sizeof(sink)) == (ssize_t)sizeof(sink); i++)
			;
	}
	conn_drop(c);
}

/* Told why (a "refused" frame, one line for the client to print), closed. */
void sa_conn_refuse(struct sa_conn *c, const char *why)
{
	serve_refuse(c->fd, why);
	conn_close_told(c);
}

void sa_free(struct serve_auth *a)
{
	if (!a)
		return;
	for (unsigned i = 0; i < SA_SLOTS; i++)
		conn_drop(&a->c[i]);
	free(a);
}

/* ---- accepting and reading ------------------------------------------------ */

static bool same_addr(const struct sa_conn *x, const struct sa_conn *y)
{
	uint8_t kx[9], ky[9];

	sa_addr_key(&x->from, false, kx);
	sa_addr_key(&y->from, false, ky);
	return !memcmp(kx, ky, sizeof(kx));
}

/* Handshakes of c's address. */
static unsigned held_by(const struct serve_auth *a, const struct sa_conn *c)
{
	unsigned n = 0;

	for (unsigned i = 0; i < SA_SLOTS; i++)
		n += a->c[i].fd >= 0 && same_addr(&a->c[i], c);
	return n;
}

/* A free slot, or one whose connection has sent no hello yet: the oldest
 * of the address that holds the most (told why, closed). NULL: every
 * slot holds a hello already read. */
static struct sa_conn *slot(struct serve_auth *a, uint64_t now)
{
	struct sa_conn *old = NULL;
	unsigned most = 0;
	char why[ERRLEN];

	for (unsigned i = 0; i < SA_SLOTS; i++) {
		struct sa_conn *c = &a->c[i];
		unsigned n;

		if (c->fd < 0)
			return c;
		if (c->read)
			continue;
		n = held_by(a, c);
		if (!old || n > most || (n == most && c->t0 < old->t0)) {
			old = c;
			most = n;
		}
	}
	if (!old)
		return NULL;
	a->evicted++;
	if (now - a->evict_said_ns > 10 * NSEC_PER_SEC || !a->evict_said_ns) {
		serve_log(a->o, "%d handshakes at once: one without a hello dropped to make room (%s, %.1f s old, %u of its address; %u dropped since the last such line)",
			  SA_SLOTS, old->peer, (double)(now - old->t0) / 1e9, most, a->evicted);
		a->evict_said_ns = now;
		a->evicted = 0;
	}
	snprintf(why, sizeof(why), "serve is busy: %u connections from other addresses are in their handshake, and this one sent no hello in %.1f s; try again",
		 SA_SLOTS - most, (double)(now - old->t0) / 1e9);
	sa_conn_refuse(old, why);
	return old;
}

static void conn_read(struct serve_auth *a, struct sa_conn *c);

static void accept_all(struct serve_auth *a)
{
	uint64_t now = now_ns();
	uint64_t wait = a->o->idle_timeout_ns < SA_HELLO_NS ? a->o->idle_timeout_ns : SA_HELLO_NS;

	/* a slot each: at most SA_WAIT_MAX hold hellos that wait, and the
	 * others' hellos were checked at the end of the last step */
	for (unsigned n = 0; n < SA_SLOTS - SA_WAIT_MAX; n++) {
		struct sockaddr_storage from;
		socklen_t l = sizeof(from);
		int fd = accept4(a->lfd, (struct sockaddr *)&from, &l, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct sa_conn *c;

		if (fd < 0)
			return;
		if (!(c = slot(a, now))) {
			/* every slot holds a hello read (hardly ever: at most
			 * SA_WAIT_MAX wait): answered, the rest of the queue
			 * taken after this step's checks */
			struct sa_conn tmp = { .fd = fd };

			sa_conn_refuse(&tmp, "serve is busy: its handshakes are full of hellos from other addresses; try again");
			return;
		}
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->t0 = now;
		c->deadline = now + wait;
		net_unmap(&from);
		c->from = from;
		net_format(&from, true, c->peer, sizeof(c->peer));
		conn_read(a, c);	/* its hello may be here already */
	}
}

/* Hellos that wait their turn. */
static unsigned waiting(struct serve_auth *a, uint64_t now)
{
	unsigned n = 0;

	for (unsigned i = 0; i < SA_SLOTS; i++)
		n += a->c[i].fd >= 0 && a->c[i].read && sa_turn_of(a, &a->c[i], now) > now;
	return n;
}

/* The hello read: what it says checked, but not its token yet. 0, or -1
 * when it was refused (closed). */
static int hello_take(struct serve_auth *a, struct sa_conn *c)
{
	char err[ERRLEN], proto[32] = "";
	uint64_t version = 0, now;
	json_t *m = NULL;
	unsigned w;

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
	now = now_ns();
	c->read = true;
	c->deadline = now + SA_TURN_NS;
	if (sa_turn_of(a, c, now) > now && (w = waiting(a, now)) > SA_WAIT_MAX) {
		snprintf(err, sizeof(err), "throttled: %u hellos from addresses that sent wrong tokens wait their turn; try again in a moment",
			 w - 1);
		serve_log(a->o, "%s: refused unchecked: %s", c->peer, err);
		serve_refuse(c->fd, err);
		return -1;
	}
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
				sa_conn_refuse(c, "not an ipclab client (its first frame is no hello)");
				return;
			}
		} else if (c->got == 4 + c->len) {
			if (hello_take(a, c))
				conn_close_told(c);
			return;
		}
	}
}

/* ---- checking the token --------------------------------------------------- */

/* Check the tokens whose turn has come: 1 with *out when one is right
 * and the slot is free (busy NULL). */
static int check_due(struct serve_auth *a, const char *busy, struct sa_client *out)
{
	uint64_t now = now_ns();
	struct sa_conn *c;

	while ((c = sa_next_due(a, now))) {
		struct sa_addr *e;
		int fl;

		if (!rp_token_equal(c->token, a->o->token)) {
			sa_wrong_token(a, c, sa_is_clean(a, c, now), now);
			continue;
		}
		if ((e = sa_addr_find(a, &c->from, false, false, now)))
			e->used = false;
		if (busy) {
			serve_log(a->o, "%s: refused: busy", c->peer);
			sa_conn_refuse(c, busy);
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
			uint64_t turn = sa_turn_of(a, c, now);

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
		sa_conn_refuse(c, "no hello in time (an ipclab client sends its hello at once)");
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
