// SPDX-License-Identifier: MIT
/*
 * dispatch.c - the server's one-thread dispatcher (server.c listens and
 * makes the handshakes): many connections served from one epoll loop,
 * rotation with a per-connection quantum, a bounded spin over every ring,
 * then sleep in epoll with every request ring armed. New sockets wait in
 * epoll for their hello (or a deadline); a hang-up serves what a graceful
 * close left, then drops the connection. When no client waits for it (or
 * after SRV_SPARE_IDLE_MS of quiet) the dispatcher makes a channel ahead
 * (server.c) and frees what dropped connections held (srv_idle). Who may
 * hold a handshake is admit.c's; a client whose replies wait in its queue
 * (reply.c) is not served until they are in its ring.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "internal.h"
#include "ipc.h"

#define SRV_LISTEN_SLOT		0x7fffffffu
#define SRV_TIMER_SLOT		0x7ffffffeu
#define SRV_EVENTS		64
#define SRV_ACCEPT_BURST	16
#define SRV_CHECK_NS		1000000u	/* look at the sockets at least every 1 ms */
#define SRV_REAP_NS		5000000u	/* a dropped connection, freed within 5 ms */

/* ---- the dispatcher ---- */

static uint64_t ev_key(const struct ipcring_conn *c, unsigned int which)
{
	return ((uint64_t)c->gen << 32) | ((uint64_t)c->slot << 1) | which;
}

/* The epoll fd, with the listening socket and the timer in it. */
static int srv_epoll(struct ipcring_server *s)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = (uint64_t)SRV_LISTEN_SLOT << 1 };
	struct epoll_event tev = { .events = EPOLLIN, .data.u64 = (uint64_t)SRV_TIMER_SLOT << 1 };
	int e;

	if (s->epfd >= 0)
		return 0;
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0)
		return -errno;
	s->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (s->tfd >= 0 && epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->lfd, &ev) == 0 &&
	    epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->tfd, &tev) == 0)
		return 0;
	e = errno;
	close(s->epfd);
	if (s->tfd >= 0)
		close(s->tfd);
	s->epfd = s->tfd = -1;
	return -e;
}

static void srv_unlink_conn(struct ipcring_server *s, struct ipcring_conn *c)
{
	if (c->state == CONN_PENDING) {
		s->npending--;
	} else if (c->state == CONN_OPEN) {
		s->open[c->oidx] = s->open[--s->nopen];
		s->open[c->oidx]->oidx = c->oidx;
	}
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->sock, NULL);
	if (c->rx)
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, ipcring_fd(c->rx), NULL);
	ipc_srv_outq_clear(s, c);
}

static void srv_free_slot(struct ipcring_server *s, struct ipcring_conn *c)
{
	s->conns[c->slot] = NULL;
	s->nconns--;
	ipc_conn_free(c);
}

/*
 * Drop a connection: out of epoll and of the rotation, and the disconnected
 * hook, at once. An open one's rings are unmapped (their pages freed) and
 * its descriptors closed only when the dispatcher next has nothing to do
 * (srv_reap): that is 25-50 us for two 64 KiB rings, and a client that
 * closes and connects again would otherwise wait for it before its
 * handshake. Until then it keeps its slot, as CONN_DEAD.
 */
static void srv_drop(struct ipcring_server *s, struct ipcring_conn *c, int why)
{
	bool open = c->state == CONN_OPEN;

	srv_unlink_conn(s, c);
	if (!open) {
		srv_free_slot(s, c);
		return;
	}
	c->state = CONN_DEAD;		/* its hook's replies are not queued */
	c->since_ns = ring_now_ns();
	if (s->ops.disconnected) {
		s->cur = c;
		s->ops.disconnected(s->ops_ctx, c, why);
		s->cur = NULL;
	}
}

static unsigned int srv_ndead(const struct ipcring_server *s)
{
	return s->nconns - s->npending - s->nopen;
}

/* Free the dropped connections that died at least @age_ns ago. */
static void srv_reap(struct ipcring_server *s, uint64_t age_ns)
{
	unsigned int dead = srv_ndead(s);
	uint64_t now = ring_now_ns();

	for (unsigned int i = 0; dead && i < s->nslots; i++) {
		struct ipcring_conn *c = s->conns[i];

		if (!c || c->state != CONN_DEAD)
			continue;
		dead--;
		if (now - c->since_ns >= age_ns)
			srv_free_slot(s, c);
	}
}

/*
 * Is a client likely to send its first request any moment? One that was
 * let in less than SRV_SPARE_IDLE_MS ago and not yet served: it is
 * attaching its ends, and work done now would delay its first reply.
 */
static bool srv_fresh_conn(const struct ipcring_server *s, uint64_t now)
{
	for (unsigned int i = 0; i < s->nopen; i++) {
		const struct ipcring_conn *c = s->open[i];

		if (!c->batches && now - c->since_ns < SRV_SPARE_IDLE_MS * 1000000ull)
			return true;
	}
	return false;
}

/*
 * Has a client a reply that it has not read (released) yet? It may be
 * about to read it, and work done now would delay it where the two share a
 * CPU (a wake-up moves the woken side to the waker's).
 */
static bool srv_reply_unread(const struct ipcring_server *s)
{
	for (unsigned int i = 0; i < s->nopen; i++) {
		const struct ring_shm *h = s->open[i]->tx->shm;

		if (atomic_load_explicit(&h->tail, memory_order_relaxed) !=
		    atomic_load_explicit(&h->head, memory_order_relaxed))
			return true;
	}
	return false;
}

/*
 * Nothing to serve: make the next channel ahead, then free what the dropped
 * connections held, if no client waits for the loop: none let in that is
 * about to send its first request, none with a reply it has not read.
 * That is most often when a client has just closed; one that closes and
 * connects again then finds its channel made. Otherwise this waits for
 * SRV_SPARE_IDLE_MS of quiet (ipcring_server_dispatch).
 */
static void srv_idle(struct ipcring_server *s)
{
	if ((s->spare.rx && !srv_ndead(s)) || srv_fresh_conn(s, ring_now_ns()) ||
	    srv_reply_unread(s))
		return;
	ipc_srv_spare_make(s);
	/* the freeing waits for the next idle moment if a client (or a
	 * request) came meanwhile */
	if (srv_ndead(s) && ipc_wait_fd(s->epfd, POLLIN, 0) == -EAGAIN)
		srv_reap(s, 0);
}

static void srv_open_pending(struct ipcring_server *s, struct ipcring_conn *c);

/* A new socket: a slot, and the socket in epoll until its hello comes. */
static void srv_add_pending(struct ipcring_server *s, struct ipcring_conn *c)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };
	unsigned int i;

	/* open connections are capped at the handshake (-EUSERS, with its
	 * reason, after the hello); slots beyond are for handshakes only */
	for (i = 0; i < s->nslots && s->conns[i]; i++)
		;
	if (i == s->nslots && srv_ndead(s)) {
		srv_reap(s, 0);		/* dropped ones held every slot */
		for (i = 0; i < s->nslots && s->conns[i]; i++)
			;
	}
	if (i == s->nslots) {
		ipc_srv_refuse_now(s, c, -EUSERS, "the server has too many handshakes in progress");
		return;
	}
	c->srv = s;
	c->slot = i;
	c->gen = ++s->gen;
	ev.data.u64 = ev_key(c, 0);
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, c->sock, &ev) < 0) {
		ipc_conn_free(c);
		return;
	}
	s->conns[i] = c;
	s->nconns++;
	s->npending++;
	/* the hello often came with the connection: no epoll round trip */
	if (ipc_wait_fd(c->sock, POLLIN, 0) == 0)
		srv_open_pending(s, c);
}

static void srv_accept_burst(struct ipcring_server *s)
{
	struct ipcring_conn *c;

	for (int k = 0; k < SRV_ACCEPT_BURST; k++) {
		int ret = ipc_srv_accept_one(s, &c, !srv_ndead(s));

		if ((ret == -EMFILE || ret == -ENFILE) && srv_ndead(s)) {
			/* dropped connections still hold descriptors: free
			 * them, then refuse the client only if still short */
			srv_reap(s, 0);
			ret = ipc_srv_accept_one(s, &c, true);
		}
		if (ret)
			return;
		if (ipc_srv_admit(s, c))
			srv_add_pending(s, c);
	}
}

static void srv_open_pending(struct ipcring_server *s, struct ipcring_conn *c)
{
	struct epoll_event ev = { .events = EPOLLIN };
	char reason[IPCRING_REASON_MAX] = "";
	int ret;

	ret = ipc_srv_handshake(s, c, s->nopen >= s->max_conns, reason, sizeof(reason));
	if (!ret) {
		ev.data.u64 = ev_key(c, 1);
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, ipcring_fd(c->rx), &ev) < 0)
			ret = -errno;
	}
	if (ret) {
		if (ret == -EACCES || ret == -EPROTO || ret == -EUSERS)
			ipc_srv_refused(s, &c->peer, ret, reason);
		srv_drop(s, c, ret);
		return;
	}
	c->state = CONN_OPEN;
	s->npending--;
	c->oidx = s->nopen;
	s->open[s->nopen++] = c;
	/* armed at once: its first request wakes the loop (or is served next) */
	(void)ipcring_prepare_wait(c->rx);
	if (s->ops.connected) {
		s->cur = c;
		s->ops.connected(s->ops_ctx, c);
		s->cur = NULL;
	}
}

/* The peer hung up: dropped at once if it died, else served to its end. */
static void srv_hangup(struct ipcring_server *s, struct ipcring_conn *c);

static struct ipcring_conn *srv_conn_of(struct ipcring_server *s, uint64_t key)
{
	uint32_t slot = (uint32_t)(key >> 1) & 0x7fffffffu;
	struct ipcring_conn *c;

	if (slot >= s->nslots)
		return NULL;
	c = s->conns[slot];
	return c && c->gen == (uint32_t)(key >> 32) && c->state != CONN_DEAD ? c : NULL;
}

static void srv_expire_pending(struct ipcring_server *s, uint64_t now)
{
	char reason[IPCRING_REASON_MAX];

	for (unsigned int i = 0; s->npending && i < s->nslots; i++) {
		struct ipcring_conn *c = s->conns[i];

		if (!c || c->state != CONN_PENDING ||
		    now < c->since_ns + s->handshake_ms * 1000000ull)
			continue;
		ipc_reason(reason, sizeof(reason), "no hello within %u ms", s->handshake_ms);
		ipc_srv_refuse(c->sock, -ETIMEDOUT, reason);
		srv_drop(s, c, -ETIMEDOUT);
	}
}

/* Handle what epoll reports (waiting up to @timeout_ms); the events but ticks. */
static int srv_events(struct ipcring_server *s, int timeout_ms)
{
	struct epoll_event ev[SRV_EVENTS];
	int n = epoll_wait(s->epfd, ev, SRV_EVENTS, timeout_ms), ticks = 0;

	s->ticked = false;
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	s->last_check_ns = ring_now_ns();
	for (int k = 0; k < n; k++) {
		struct ipcring_conn *c;

		if ((ev[k].data.u64 >> 1) == SRV_LISTEN_SLOT) {
			srv_accept_burst(s);
			continue;
		}
		if ((ev[k].data.u64 >> 1) == SRV_TIMER_SLOT) {
			ring_efd_drain(s->tfd);	/* the round retries the replies */
			ticks++;
			continue;
		}
		c = srv_conn_of(s, ev[k].data.u64);
		if (!c)
			continue;	/* dropped earlier in this batch */
		if (c->state == CONN_PENDING)
			srv_open_pending(s, c);
		else if (!(ev[k].data.u64 & 1) &&
			 (ev[k].events & (EPOLLHUP | EPOLLRDHUP | EPOLLERR | EPOLLIN)))
			srv_hangup(s, c);
		else if (c->q.len)	/* not armed again while its replies wait */
			ring_efd_drain(ipcring_fd(c->rx));
		/* an rx eventfd: its requests are served by the round */
	}
	if (s->npending)
		srv_expire_pending(s, ring_now_ns());
	s->ticked = ticks && ticks == n;
	return n - ticks;
}

struct srv_batch {
	struct ipcring_server *s;
	struct ipcring_conn *c;
	int ret;
};

static int srv_on_msg(void *ctx, const void *msg, size_t len)
{
	struct srv_batch *b = ctx;

	if (!b->s->ops.message)
		return 0;
	b->s->in_msg = true;	/* its replies: one run with the turn's others */
	b->ret = b->s->ops.message(b->s->ops_ctx, b->c, msg, len);
	b->s->in_msg = false;
	/* a reply queued: no more requests until it is in the ring */
	return b->ret || b->s->drop_cur || b->c->q.len;
}

/* Serve up to @max records of @c; their count, or -errno / 0 = EOS via *gone. */
static int srv_serve_conn(struct ipcring_server *s, struct ipcring_conn *c,
			  unsigned int max, int *gone)
{
	struct srv_batch b = { .s = s, .c = c };
	int n;

	if (c->q.len && (n = ipc_srv_outq_flush(s, c))) {	/* replies wait: first */
		if (n != -EAGAIN)
			*gone = n;	/* -ETIMEDOUT: it stopped reading them */
		return 0;
	}
	s->cur = c;
	s->drop_cur = false;
	n = ipcring_read_batch(c->rx, srv_on_msg, &b, max, 0);
	s->cur = NULL;
	if (n == -EAGAIN)
		return 0;
	if (n > 0)
		c->batches++;
	if (n == 0)
		*gone = 1;		/* end of stream: the client closed */
	else if (n < 0)
		*gone = n;
	else if (b.ret)
		*gone = b.ret;
	else if (s->drop_cur)
		*gone = 2;
	(void)ipcring_flush(c->tx);	/* the run's replies, one publication */
	return n > 0 ? n : 0;
}

/* Serve @c a quantum, and drop it if it is gone; the records served. */
static unsigned int srv_serve_one(struct ipcring_server *s, struct ipcring_conn *c)
{
	int gone = 0, n = srv_serve_conn(s, c, s->quantum, &gone);

	if (gone)
		srv_drop(s, c, gone == 1 || gone == 2 ? 0 : gone);
	return (unsigned int)n;
}

/* One round: every open connection in rotation, quantum records each. */
static int srv_round(struct ipcring_server *s)
{
	unsigned int k, n = s->nopen, start, served = 0;

	if (!n)
		return 0;
	start = s->rr++ % n;
	for (k = 0; k < n && s->nopen; k++)
		served += srv_serve_one(s, s->open[(start + k) % s->nopen]);
	return (int)(served > INT32_MAX ? INT32_MAX : served);
}

/* A tick: only the connections whose replies wait (the others are armed). */
static int srv_round_waiting(struct ipcring_server *s)
{
	unsigned int served = 0, left = s->nopen;

	for (unsigned int i = 0; s->nbacklog && i < s->nopen && left; left--) {
		struct ipcring_conn *c = s->open[i];
		unsigned int before = s->nopen;

		if (c->q.len)
			served += srv_serve_one(s, c);
		if (s->nopen == before)
			i++;		/* else the last one moved into i */
	}
	return (int)(served > INT32_MAX ? INT32_MAX : served);
}

/*
 * A graceful close: what it sent before still counts, and is served in
 * rotation a quantum a round like any other's requests (not all at once
 * here, which held every other client behind a closing one's backlog, up
 * to a ring of it); the round drops the connection at its end of stream.
 * Its socket stays in epoll: the hang-up, level-triggered, keeps the
 * server's fd readable until then.
 */
static void srv_hangup(struct ipcring_server *s, struct ipcring_conn *c)
{
	if (atomic_load(c->rx->peer_state) == ST_CLOSED)
		return;
	(void)ipcring_mark_peer_dead(c->rx);
	(void)ipcring_mark_peer_dead(c->tx);
	srv_drop(s, c, -EPIPE);
}

/* Arm every request ring; 1 if one already has something (do not sleep).
 * A connection whose replies wait is left out: the timer brings it back. */
static int srv_arm(struct ipcring_server *s)
{
	s->rearm = false;
	for (unsigned int i = 0; i < s->nopen; i++)
		if (!s->open[i]->q.len && ipcring_prepare_wait(s->open[i]->rx))
			return 1;
	return 0;
}

/* Sleep in epoll for up to @timeout_ms, then serve. A tick of the timer
 * alone (replies waiting) moves them, and sleeps again if nothing came. */
static int srv_sleep(struct ipcring_server *s, int timeout_ms)
{
	uint64_t end = ring_deadline(timeout_ms), now;
	int ret, n;

	for (;;) {
		ret = srv_events(s, timeout_ms);
		if (ret < 0)
			return ret;
		if (!s->ticked || !timeout_ms)
			return srv_round(s);
		n = srv_round_waiting(s);
		if (n)
			return n;
		if (s->rearm && srv_arm(s))	/* a queue emptied: arm its ring */
			return srv_round(s);
		if (timeout_ms > 0) {
			now = ring_now_ns();
			if (now >= end)
				return 0;
			timeout_ms = (int)((end - now + RING_MS_NS - 1) / RING_MS_NS);
		}
	}
}

/* Spin over every ring; ends early when a connection closes, so that the
 * idle work (srv_idle) is not held up behind the spin. */
static int srv_spin(struct ipcring_server *s)
{
	unsigned int dead = srv_ndead(s);
	uint64_t start, now, end;
	int n;

	if (!s->spin_ns || !s->nopen)
		return 0;
	start = ring_now_ns();
	end = start + s->spin_ns;
	do {
		for (int k = 0; k < 64; k++) {
			n = srv_round(s);
			if (n || srv_ndead(s) != dead) {
				ring_poll_add(ring_now_ns() - start);
				return n;
			}
			ring_cpu_relax();
		}
	} while ((now = ring_now_ns()) < end);
	ring_poll_add(now - start);
	return 0;
}

int ipcring_server_dispatch(struct ipcring_server *s, int timeout_ms)
{
	int ret, n;

	if (!s)
		return -EINVAL;
	ret = srv_epoll(s);
	if (ret)
		return ret;
	if (ring_now_ns() - s->last_check_ns >= SRV_CHECK_NS) {
		ret = srv_events(s, 0);
		if (ret < 0)
			return ret;
		/* never idle: the dropped connections are freed all the same */
		if (srv_ndead(s))
			srv_reap(s, SRV_REAP_NS);
	}
	n = srv_round(s);
	if (!n) {
		srv_idle(s);
		if (timeout_ms && !(n = srv_spin(s)))
			srv_idle(s);	/* a client that closed meanwhile */
	}
	if (n)
		return n;
	/* nothing to do: arm every request ring, then sleep in epoll (or, with
	 * timeout 0, only look once, leaving the fd armed for the caller) */
	if (srv_arm(s))
		return srv_round(s);
	if ((!s->spare.rx || srv_ndead(s)) && timeout_ms) {
		/* a short sleep first; if it stays idle, free what the dropped
		 * connections held and make a channel ahead */
		int t = timeout_ms < 0 || timeout_ms > SRV_SPARE_IDLE_MS ?
			SRV_SPARE_IDLE_MS : timeout_ms;

		ret = srv_events(s, t);
		if (ret < 0)
			return ret;
		if (ret > 0 || t == timeout_ms)
			return srv_round(s);
		if (timeout_ms > 0)
			timeout_ms -= t;
		srv_reap(s, 0);
		ipc_srv_spare_make(s);
		if (srv_arm(s))
			return srv_round(s);
	}
	if (srv_ndead(s))	/* timeout 0: not left for a later call */
		srv_reap(s, 0);
	return srv_sleep(s, timeout_ms);
}

int ipcring_server_fd(const struct ipcring_server *cs)
{
	struct ipcring_server *s = (struct ipcring_server *)cs;
	int ret;

	if (!s)
		return -EINVAL;
	ret = srv_epoll(s);
	return ret ? ret : s->epfd;
}

int ipcring_server_set_ops(struct ipcring_server *s, const struct ipcring_server_ops *ops,
			   void *ctx)
{
	if (!s)
		return -EINVAL;
	if (ops)
		s->ops = *ops;
	else
		memset(&s->ops, 0, sizeof(s->ops));
	s->ops_ctx = ctx;
	return srv_epoll(s);
}

int ipcring_server_nconns(const struct ipcring_server *s)
{
	return s ? (int)s->nopen : -EINVAL;
}

int ipcring_conn_drop(struct ipcring_conn *c)
{
	if (!c || !c->srv || c->srv->cur != c)
		return -EINVAL;
	c->srv->drop_cur = true;
	return 0;
}
