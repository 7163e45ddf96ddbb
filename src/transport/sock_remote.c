// SPDX-License-Identifier: MIT
/* Helpers of the measured connection between hosts (tp_remote.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipclab/netaddr.h"
#include "tp_common.h"
#include "tp_remote.h"

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int tp_remote_parse(const char *tp, const char *listen, const char *connect, const char *secret,
		    struct tp_remote *r, char *err, size_t errlen)
{
	char what[64];
	int ret;

	memset(r, 0, sizeof(*r));
	if (!listen[0] && !connect[0])
		return 0;
	if (listen[0] && connect[0])
		return errf(err, errlen, EINVAL, "%s: -O listen and -O connect exclude each other", tp);
	if (strlen(secret) != 2 * TP_SECRET_BYTES)
		return errf(err, errlen, EINVAL, "%s: -O secret must be %d hex digits", tp,
			    2 * TP_SECRET_BYTES);
	for (int i = 0; i < TP_SECRET_BYTES; i++) {
		int hi = hexval(secret[2 * i]), lo = hexval(secret[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return errf(err, errlen, EINVAL, "%s: -O secret must be hex digits", tp);
		r->secret[i] = (uint8_t)(hi << 4 | lo);
	}
	r->mode = listen[0] ? TPR_SERVER : TPR_CLIENT;
	snprintf(what, sizeof(what), "%s: -O %s", tp, listen[0] ? "listen" : "connect");
	ret = net_parse(what, listen[0] ? listen : connect, listen[0] ? NET_NO_PORT : NET_PORT, 0,
			&r->addr, NULL, err, errlen);
	return ret;
}

int tp_remote_check(const char *tp, const char *listen, const char *connect, const char *secret,
		    char *err, size_t errlen)
{
	struct tp_remote r;
	int ret;

	if (secret[0] && !listen[0] && !connect[0])
		return errf(err, errlen, EINVAL, "%s: -O secret is for a cell between hosts, beside "
			    "-O listen or -O connect (ipclab serve and run --peer set all three)", tp);
	ret = tp_remote_parse(tp, listen, connect, secret, &r, err, errlen);
	if (ret && strlen(err) + 48 < errlen)
		strcat(err, " (ipclab serve and run --peer set these)");
	return ret;
}

void tp_rhello_fill(struct tp_rhello *h, const struct tp_remote *r, unsigned id)
{
	h->magic = TP_RHELLO_MAGIC;
	h->id = id;
	memcpy(h->secret, r->secret, sizeof(h->secret));
}

int tp_rhello_check(const struct tp_rhello *h, const struct tp_remote *r, unsigned n)
{
	unsigned diff = 0;

	for (int i = 0; i < TP_SECRET_BYTES; i++)
		diff |= (unsigned)(h->secret[i] ^ r->secret[i]);
	if (diff || h->magic != TP_RHELLO_MAGIC || h->id >= n)
		return -1;
	return (int)h->id;
}

int tp_remote_poll(int fd, short events, int ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int ret = poll(&p, 1, ms);

	if (ret < 0)
		return -errno;
	return ret;
}

int tp_remote_connect(int fd, const struct sockaddr_storage *sa)
{
	int fl = fcntl(fd, F_GETFL), ret, soerr = 0;

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)sa, net_len(sa)) < 0) {
		if (errno != EINPROGRESS)
			return -errno;
		ret = tp_remote_poll(fd, POLLOUT, TP_REMOTE_WAIT_MS);
		if (ret <= 0)
			return ret ? ret : -ETIMEDOUT;
		ret = tp_sock_get(fd, SO_ERROR, &soerr);
		if (ret || soerr)
			return ret ? ret : -soerr;
	}
	return fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 ? -errno : 0;
}

void tp_remote_unreserve(int *fds, unsigned n)
{
	for (unsigned i = 0; fds && i < n; i++)
		if (fds[i] >= 0) {
			close(fds[i]);
			fds[i] = -1;
		}
}

/* One port held: bound, never listening, SO_REUSEADDR as the libraries'
 * listeners set it: the kernel hands the port to nobody else, the
 * server's own bind may share it. The port, or -errno. */
static int reserve_one(const struct tp_remote *r, int *fd, uint16_t port)
{
	struct sockaddr_storage sa = r->addr;
	socklen_t l = sizeof(sa);
	int one = 1;

	*fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*fd < 0)
		return -errno;
	net_set_port(&sa, port);
	if (setsockopt(*fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(*fd, (struct sockaddr *)&sa, net_len(&sa)) < 0 ||
	    getsockname(*fd, (struct sockaddr *)&sa, &l) < 0)
		return -errno;
	return net_port(&sa);
}

int tp_remote_reserve(const char *tp, const struct tp_remote *r, unsigned n, int *fds, char *err,
		      size_t errlen)
{
	char host[NET_ADDR_TEXT];
	int first = -1, ret = 0;

	for (unsigned i = 0; i < n; i++)
		fds[i] = -1;
	net_format(&r->addr, false, host, sizeof(host));
	for (unsigned t = 0; t < TP_RESERVE_TRIES; t++) {
		tp_remote_unreserve(fds, n);
		first = reserve_one(r, &fds[0], 0);
		if (first < 0)
			return errf(err, errlen, -first, "%s: bind %s: %s", tp, host, strerror(-first));
		ret = 0;
		for (unsigned id = 1; id < n && ret >= 0; id++)
			ret = first + id > 65535 ? -EADDRINUSE :
			      reserve_one(r, &fds[id], (uint16_t)(first + id));
		if (ret >= 0)
			return first;
		if (ret != -EADDRINUSE)
			return errf(err, errlen, -ret, "%s: bind %s: %s", tp, host, strerror(-ret));
	}
	return errf(err, errlen, EADDRINUSE, "%s: no %u consecutive free ports on %s in %d tries", tp,
		    n, host, TP_RESERVE_TRIES);
}

int tp_remote_reserve_block(struct tp_channel *ch, const struct tp_remote *r, unsigned n,
			    int **resv, _Atomic uint32_t *ports, char *err, size_t errlen)
{
	int first;

	*resv = malloc(n * sizeof(**resv));
	if (!*resv)
		return errf(err, errlen, ENOMEM, "%s: out of memory", ch->tp->name);
	first = tp_remote_reserve(ch->tp->name, r, n, *resv, err, errlen);
	if (first < 0)
		return first;
	for (unsigned id = 0; id < n; id++)
		atomic_store_explicit(&ports[id], (uint32_t)first + id, memory_order_relaxed);
	tp_setting(ch, "listen_port", "%d", first);
	tp_setting(ch, "listen_ports", "%d-%d (client id i: %d+i)", first, first + (int)n - 1,
		   first);
	return 0;
}

/* ---- the server's hellos: many at once, each with its deadline ------------- */

struct rh_wait {
	int fd;			/* -1: a free slot */
	uint64_t t0, due;	/* accepted; its whole hello by */
	size_t got;
	struct tp_rhello h;
};

struct rh_state {
	const struct tp_remote *r;
	unsigned n, got, *foreign;
	int *fds;
	uint64_t deadline;
	struct rh_wait w[TP_RHELLO_PENDING];
};

static void rh_foreign(struct rh_state *st, struct rh_wait *w)
{
	close(w->fd);
	w->fd = -1;
	(*st->foreign)++;
}

/* A connection to wait for: a free slot, else the oldest one's. */
static void rh_add(struct rh_state *st, int fd, uint64_t now)
{
	struct rh_wait *w = &st->w[0];

	for (unsigned i = 0; i < TP_RHELLO_PENDING; i++) {
		if (st->w[i].fd < 0) {
			w = &st->w[i];
			break;
		}
		if (st->w[i].t0 < w->t0)
			w = &st->w[i];
	}
	if (w->fd >= 0)
		rh_foreign(st, w);
	*w = (struct rh_wait){ .fd = fd, .t0 = now, .due = now + TP_RHELLO_WAIT_MS * NSEC_PER_MSEC };
	if (w->due > st->deadline)
		w->due = st->deadline;
}

/* Read what w sent; a whole hello of this cell gives its id the
 * connection (blocking again), anything else is foreign. */
static void rh_read(struct rh_state *st, struct rh_wait *w)
{
	ssize_t n = read(w->fd, (char *)&w->h + w->got, sizeof(w->h) - w->got);
	int id, fl;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		rh_foreign(st, w);
		return;
	}
	w->got += (size_t)n;
	if (w->got < sizeof(w->h))
		return;
	id = tp_rhello_check(&w->h, st->r, st->n);
	fl = fcntl(w->fd, F_GETFL);
	if (id < 0 || st->fds[id] >= 0 || fl < 0 || fcntl(w->fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		rh_foreign(st, w);
		return;
	}
	st->fds[id] = w->fd;
	st->got++;
	w->fd = -1;
}

/* One poll over the listener and the hellos in progress, then what it
 * found: 0, or -errno (-EINTR: a stop signal). */
static int rh_step(struct rh_state *st, int lfd)
{
	struct pollfd p[TP_RHELLO_PENDING + 1] = { { .fd = lfd, .events = POLLIN } };
	struct rh_wait *who[TP_RHELLO_PENDING + 1] = { NULL };
	uint64_t now = now_ns(), next = st->deadline;
	unsigned np = 1;
	int r, fd;

	for (unsigned i = 0; i < TP_RHELLO_PENDING; i++)
		if (st->w[i].fd >= 0) {
			who[np] = &st->w[i];
			p[np++] = (struct pollfd){ .fd = st->w[i].fd, .events = POLLIN | POLLRDHUP };
			next = st->w[i].due < next ? st->w[i].due : next;
		}
	r = poll(p, np, next > now ? (int)((next - now) / NSEC_PER_MSEC) + 1 : 0);
	if (r < 0)
		return -errno;
	for (unsigned i = 1; r > 0 && i < np; i++)
		if (p[i].revents)
			rh_read(st, who[i]);
	now = now_ns();
	while ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0)
		rh_add(st, fd, now);
	if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ECONNABORTED && errno != EINTR)
		return -errno;
	for (unsigned i = 0; i < TP_RHELLO_PENDING; i++)
		if (st->w[i].fd >= 0 && now >= st->w[i].due)
			rh_foreign(st, &st->w[i]);
	return 0;
}

int tp_remote_hellos(const char *tp, int lfd, const struct tp_remote *r, unsigned n, int *fds,
		     unsigned *foreign, char *err, size_t errlen)
{
	struct rh_state st = { .r = r, .n = n, .fds = fds, .foreign = foreign,
			       .deadline = now_ns() + TP_REMOTE_WAIT_MS * NSEC_PER_MSEC };
	int ret = 0;

	for (unsigned i = 0; i < TP_RHELLO_PENDING; i++)
		st.w[i].fd = -1;
	for (unsigned id = 0; id < n; id++)
		fds[id] = -1;
	while (!ret && st.got < n) {
		if (now_ns() >= st.deadline)
			ret = errf(err, errlen, ETIMEDOUT, "%s: server: %u of %u clients connected within %d s",
				   tp, st.got, n, TP_REMOTE_WAIT_MS / 1000);
		else if ((ret = rh_step(&st, lfd)) == -EINTR)
			ret = errf(err, errlen, EINTR, "%s: server: stopped while waiting for clients", tp);
		else if (ret)
			ret = errf(err, errlen, -ret, "%s: server: accept: %s", tp, strerror(-ret));
		else if (*foreign > TP_REMOTE_MAX_FOREIGN)
			ret = errf(err, errlen, ECONNREFUSED, "%s: over %u foreign connections to the cell's port",
				   tp, TP_REMOTE_MAX_FOREIGN);
	}
	for (unsigned i = 0; i < TP_RHELLO_PENDING; i++)
		if (st.w[i].fd >= 0)
			rh_foreign(&st, &st.w[i]);
	return ret;
}
