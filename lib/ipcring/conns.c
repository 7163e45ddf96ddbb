// SPDX-License-Identifier: MIT
/*
 * conns.c - the dispatcher's connections, from accept to free (dispatch.c
 * serves them): the epoll set with the listening socket and the timer in
 * it; new sockets wait in epoll for their hello (or a deadline); a
 * hang-up serves what a graceful close left, then drops the connection;
 * a dropped connection is freed when the dispatcher next has nothing to
 * do. When no client waits for it (or after SRV_SPARE_IDLE_MS of quiet)
 * the dispatcher makes a channel ahead (server.c) and frees what dropped
 * connections held (ipc_srv_idle). Who may hold a handshake is admit.c's.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "internal.h"
#include "ipc.h"

#define SRV_LISTEN_SLOT		0x7fffffffu
#define SRV_TIMER_SLOT		0x7ffffffeu
#define SRV_EVENTS		64
#define SRV_ACCEPT_BURST	16

static uint64_t ev_key(const struct ipcring_conn *c, unsigned int which)
{
	return ((uint64_t)c->gen << 32) | ((uint64_t)c->slot << 1) | which;
}

/* The epoll fd, with the listening socket and the timer in it. */
int ipc_srv_epoll(struct ipcring_server *s)
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
 * (ipc_srv_reap): that is 25-50 us for two 64 KiB rings, and a client that
 * closes and connects again would otherwise wait for it before its
 * handshake. Until then it keeps its slot, as CONN_DEAD.
 */
void ipc_srv_drop(struct ipcring_server *s, struct ipcring_conn *c, int why)
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


/* Free the dropped connections that died at least @age_ns ago. */
void ipc_srv_reap(struct ipcring_server *s, uint64_t age_ns)
{
	unsigned int dead = ipc_srv_ndead(s);
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
void ipc_srv_idle(struct ipcring_server *s)
{
	if ((s->spare.rx && !ipc_srv_ndead(s)) || srv_fresh_conn(s, ring_now_ns()) ||
	    srv_reply_unread(s))
		return;
	ipc_srv_spare_make(s);
	/* the freeing waits for the next idle moment if a client (or a
	 * request) came meanwhile */
	if (ipc_srv_ndead(s) && ipc_wait_fd(s->epfd, POLLIN, 0) == -EAGAIN)
		ipc_srv_reap(s, 0);
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
	if (i == s->nslots && ipc_srv_ndead(s)) {
		ipc_srv_reap(s, 0);		/* dropped ones held every slot */
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
		int ret = ipc_srv_accept_one(s, &c, !ipc_srv_ndead(s));

		if ((ret == -EMFILE || ret == -ENFILE) && ipc_srv_ndead(s)) {
			/* dropped connections still hold descriptors: free
			 * them, then refuse the client only if still short */
			ipc_srv_reap(s, 0);
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
		ipc_srv_drop(s, c, ret);
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
		ipc_srv_drop(s, c, -ETIMEDOUT);
	}
}

/* Handle what epoll reports (waiting up to @timeout_ms); the events but ticks. */
int ipc_srv_events(struct ipcring_server *s, int timeout_ms)
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
	ipc_srv_drop(s, c, -EPIPE);
}
