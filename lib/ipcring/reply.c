// SPDX-License-Identifier: MIT
/*
 * reply.c - the dispatcher's replies never wait. ipcring_conn_send() on a
 * connection the dispatcher owns writes the reply at once when it fits
 * (the common case, as before); when the client's reply ring is full it
 * copies the reply into the connection's queue, bounded by q_max bytes
 * (-EAGAIN beyond, for the hook to decide), and returns. The dispatcher
 * then serves no more of that client's requests until the queue is empty
 * (dispatch.c), moves the queue into the ring as the client reads, looking
 * on every round and on a 1 ms timer in its epoll set while any queue waits
 * (a producer has no descriptor that says "room", and the ring's wake
 * protocol stays as it is), and drops the connection (-ETIMEDOUT) when its
 * queue has not moved for stall_ns. So one client that stops reading
 * delays nobody else's replies.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>

#include "internal.h"
#include "ipc.h"

#define OUTQ_MIN	1024u
#define OUTQ_LIMIT	(1u << 30)	/* the most ipcring_server_set_reply_limits takes */

/* The timer ticks while any connection has replies waiting. */
static void srv_tick(struct ipcring_server *s, bool on)
{
	struct itimerspec it = { 0 };

	if (s->tfd < 0)
		return;
	if (on) {
		it.it_value.tv_nsec = SRV_TICK_NS;
		it.it_interval.tv_nsec = SRV_TICK_NS;
	}
	(void)timerfd_settime(s->tfd, 0, &it, NULL);
}

static void outq_started(struct ipcring_server *s, struct ipcring_conn *c)
{
	c->q.moved_ns = ring_now_ns();
	c->q.counted = true;
	if (s->nbacklog++ == 0)
		srv_tick(s, true);
}

void ipc_srv_outq_clear(struct ipcring_server *s, struct ipcring_conn *c)
{
	if (c->q.counted) {
		s->rearm = true;
		if (--s->nbacklog == 0)
			srv_tick(s, false);
	}
	free(c->q.buf);
	memset(&c->q, 0, sizeof(c->q));
}

/* Room in the queue's buffer for @need more bytes (within q_max). */
static int outq_room(struct ipcring_server *s, struct ipc_outq *q, size_t need)
{
	size_t cap;
	uint8_t *p;

	if (q->len + need > s->q_max)
		return -EAGAIN;
	if (q->off + q->len + need <= q->cap)
		return 0;
	if (q->off) {
		memmove(q->buf, q->buf + q->off, q->len);
		q->off = 0;
	}
	if (q->len + need <= q->cap)
		return 0;
	cap = q->cap ? q->cap : OUTQ_MIN;
	while (cap < q->len + need)
		cap *= 2;
	if (cap > s->q_max)
		cap = s->q_max;
	p = realloc(q->buf, cap);
	if (!p)
		return -ENOMEM;
	q->buf = p;
	q->cap = cap;
	return 0;
}

static int outq_put(struct ipcring_server *s, struct ipcring_conn *c, const void *buf,
		    size_t len)
{
	struct ipc_outq *q = &c->q;
	uint32_t l = (uint32_t)len;
	int ret = outq_room(s, q, sizeof(l) + len);

	if (ret)
		return ret;
	memcpy(q->buf + q->off + q->len, &l, sizeof(l));
	if (len)
		memcpy(q->buf + q->off + q->len + sizeof(l), buf, len);
	if (!q->counted)
		outq_started(s, c);
	q->len += sizeof(l) + len;
	return 0;
}

/*
 * A reply from the message hook while the client's next request already
 * waits: committed with IPCRING_MORE, so that the replies to a run of
 * requests are published as one run (one flush, at most one wake) when the
 * run ends: at the reply to the last request waiting, or at the end of the
 * connection's turn (a quantum), whichever comes first. None is held for a
 * request that has not come.
 */
static unsigned int srv_reply_flags(const struct ipcring_conn *c, unsigned int flags)
{
	const struct ipcring_server *s = c->srv;

	if (s->in_msg && s->cur == c && ring_cons_more(c->rx))
		return flags | IPCRING_MORE;
	return flags;
}

/*
 * ipcring_conn_send() on a dispatcher's connection: at once if nothing
 * waits before it and it fits (in a run, see srv_reply_flags); else queued
 * behind the others. A connection being dropped (its disconnected hook)
 * queues nothing.
 */
int ipc_srv_send(struct ipcring_conn *c, const void *buf, size_t len, unsigned int flags)
{
	int ret;

	if (!c->q.len) {
		ret = ipcring_write(c->tx, buf, len, srv_reply_flags(c, flags), 0);
		if (ret != -EAGAIN || c->state != CONN_OPEN)
			return ret;
	} else if (len > c->tx->max_record) {
		return -EMSGSIZE;
	}
	if (len && !buf)
		return -EINVAL;
	return outq_put(c->srv, c, buf, len);
}

static bool outq_stalled(const struct ipcring_server *s, const struct ipcring_conn *c)
{
	return s->stall_ns && ring_now_ns() - c->q.moved_ns >= s->stall_ns;
}

/*
 * Move what waits into the ring: 0 once the queue is empty, -EAGAIN while
 * some still waits, -ETIMEDOUT when it has not moved for stall_ns, or the
 * ring's error. A client that closed or died gets nothing more: its queue
 * goes, and the dispatcher sees the end as usual.
 */
int ipc_srv_outq_flush(struct ipcring_server *s, struct ipcring_conn *c)
{
	struct ipc_outq *q = &c->q;
	bool moved = false;
	int ret = 0;

	while (q->len) {
		uint32_t l;

		memcpy(&l, q->buf + q->off, sizeof(l));
		ret = ipcring_write(c->tx, q->buf + q->off + sizeof(l), l, IPCRING_MORE, 0);
		if (ret)
			break;
		q->off += sizeof(l) + l;
		q->len -= sizeof(l) + l;
		moved = true;
	}
	if (moved) {
		(void)ipcring_flush(c->tx);
		q->moved_ns = ring_now_ns();
	}
	if (ret == -EAGAIN)
		return outq_stalled(s, c) ? -ETIMEDOUT : ret;
	ipc_srv_outq_clear(s, c);
	return ret == -EPIPE ? 0 : ret;
}

int ipcring_server_set_reply_limits(struct ipcring_server *s, size_t max_queued,
				    int stall_ms)
{
	if (!s || max_queued > OUTQ_LIMIT)
		return -EINVAL;
	s->q_max = max_queued ? max_queued : s->ring.capacity;
	s->stall_ns = stall_ms < 0 ? 0 :
		      (uint64_t)(stall_ms ? (unsigned int)stall_ms : SRV_STALL_MS) * RING_MS_NS;
	return 0;
}
