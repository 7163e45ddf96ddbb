// SPDX-License-Identifier: MIT
/*
 * dispatch.c - the server's one-thread dispatcher (server.c listens and
 * makes the handshakes): many connections served from one epoll loop,
 * rotation with a per-connection quantum, a bounded spin over every ring,
 * then sleep in epoll with every request ring armed. The connections'
 * life in that loop -- the epoll set, the hello, a hang-up, the drop, the
 * freeing, the idle work -- is conns.c's. A client whose replies wait in
 * its queue (reply.c) is not served until they are in its ring.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"
#include "ipc.h"

#define SRV_CHECK_NS		1000000u	/* look at the sockets at least every 1 ms */
#define SRV_REAP_NS		5000000u	/* a dropped connection, freed within 5 ms */

/* ---- the dispatcher ---- */

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
		ipc_srv_drop(s, c, gone == 1 || gone == 2 ? 0 : gone);
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
		ret = ipc_srv_events(s, timeout_ms);
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
 * idle work (ipc_srv_idle) is not held up behind the spin. */
static int srv_spin(struct ipcring_server *s)
{
	unsigned int dead = ipc_srv_ndead(s);
	uint64_t start, now, end;
	int n;

	if (!s->spin_ns || !s->nopen)
		return 0;
	start = ring_now_ns();
	end = start + s->spin_ns;
	do {
		for (int k = 0; k < 64; k++) {
			n = srv_round(s);
			if (n || ipc_srv_ndead(s) != dead) {
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
	ret = ipc_srv_epoll(s);
	if (ret)
		return ret;
	if (ring_now_ns() - s->last_check_ns >= SRV_CHECK_NS) {
		ret = ipc_srv_events(s, 0);
		if (ret < 0)
			return ret;
		/* never idle: the dropped connections are freed all the same */
		if (ipc_srv_ndead(s))
			ipc_srv_reap(s, SRV_REAP_NS);
	}
	n = srv_round(s);
	if (!n) {
		ipc_srv_idle(s);
		if (timeout_ms && !(n = srv_spin(s)))
			ipc_srv_idle(s);	/* a client that closed meanwhile */
	}
	if (n)
		return n;
	/* nothing to do: arm every request ring, then sleep in epoll (or, with
	 * timeout 0, only look once, leaving the fd armed for the caller) */
	if (srv_arm(s))
		return srv_round(s);
	if ((!s->spare.rx || ipc_srv_ndead(s)) && timeout_ms) {
		/* a short sleep first; if it stays idle, free what the dropped
		 * connections held and make a channel ahead */
		int t = timeout_ms < 0 || timeout_ms > SRV_SPARE_IDLE_MS ?
			SRV_SPARE_IDLE_MS : timeout_ms;

		ret = ipc_srv_events(s, t);
		if (ret < 0)
			return ret;
		if (ret > 0 || t == timeout_ms)
			return srv_round(s);
		if (timeout_ms > 0)
			timeout_ms -= t;
		ipc_srv_reap(s, 0);
		ipc_srv_spare_make(s);
		if (srv_arm(s))
			return srv_round(s);
	}
	if (ipc_srv_ndead(s))	/* timeout 0: not left for a later call */
		ipc_srv_reap(s, 0);
	return srv_sleep(s, timeout_ms);
}

int ipcring_server_fd(const struct ipcring_server *cs)
{
	struct ipcring_server *s = (struct ipcring_server *)cs;
	int ret;

	if (!s)
		return -EINVAL;
	ret = ipc_srv_epoll(s);
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
	return ipc_srv_epoll(s);
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
