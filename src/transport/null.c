// SPDX-License-Identifier: MIT
/* null: the lab's own self-test transport, no kernel object on the data
 * path. Each direction of each client is a small bounded queue of whole
 * messages in one MAP_SHARED anonymous mapping (so forked endpoints share
 * it), with waits on a process-shared futex. It has the same semantics as
 * the real transports: whole messages, EOF after the peer's close, -EINTR
 * when a signal interrupts a wait. -O fault makes each sender get one
 * message wrong on purpose (lose it, send it twice, one byte short, or a
 * payload byte flipped), so that tests can see the patterns' checks fire.
 *
 * null-zc: the same queues, sent and received in place (reserve/commit,
 * peek/release) and in runs of slots (reserve_n/commit_n, peek_n/
 * release_n), as a batching ring is: the self-test of the patterns' paths
 * through those operations, -O fault included (a run's message is spoilt
 * when the run is committed). */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ipclab/transport.h"
#include "ipclab/util.h"

struct null_opts {
	uint64_t slots;
	int fault;		/* NF_* */
	uint64_t fault_at;
};

enum { NF_NONE, NF_DROP, NF_DUP, NF_SHORT, NF_CORRUPT };	/* -O fault's choices, in order */

static const struct opt_desc null_options[] = {
	{ .name = "slots", .type = OPT_UINT, .offset = offsetof(struct null_opts, slots),
	  .def = "8", .min = 1, .max = 4096, .help = "messages each direction holds" },
	{ .name = "fault", .type = OPT_CHOICE, .offset = offsetof(struct null_opts, fault),
	  .def = "none", .choices = "none|drop|dup|short|corrupt",
	  .help = "self-test of the checks: each sender's fault-at-th message is lost, sent twice, "
		  "a byte short or has its last byte flipped" },
	{ .name = "fault-at", .type = OPT_UINT, .offset = offsetof(struct null_opts, fault_at),
	  .def = "1000", .min = 0, .max = UINT32_MAX,
	  .help = "which message of each sender -O fault spoils (counted from 0)" },
	{ .name = NULL },
};

enum { NB_TX_CLOSED = 1u << 0, NB_RX_CLOSED = 1u << 1 };

/* One direction: a queue of `slots` messages, in the shared mapping. */
struct null_box {
	uint32_t head;		/* messages put, written by the producer */
	uint32_t tail;		/* messages taken, written by the consumer */
	uint32_t events;	/* futex word, bumped on every change */
	uint32_t waiters;	/* sides about to sleep on events */
	uint32_t closed;	/* NB_* */
} __attribute__((aligned(64)));

struct null_slot {
	uint32_t len;
	uint32_t pad;
	unsigned char data[];
};

struct null_chan {
	void *map;
	size_t map_len;
	size_t box_stride, slot_stride, slot_size;
	uint32_t slots;
};

struct tp_endpoint {
	struct null_chan nc;	/* a copy, so the hot path need not chase ch->priv */
	struct null_box *rx, *tx;
	int fault;		/* -O fault, NF_NONE once done */
	uint64_t fault_at, sent;
	unsigned reserved;	/* null-zc: places handed out, not committed */
	unsigned peeked;	/* null-zc: records handed out, not released */
};

static struct null_box *null_box(const struct null_chan *nc, unsigned idx)
{
	return (struct null_box *)((char *)nc->map + idx * nc->box_stride);
}

static struct null_slot *null_slot(const struct null_chan *nc, struct null_box *b, uint32_t seq)
{
	return (struct null_slot *)((char *)(b + 1) + (seq % nc->slots) * nc->slot_stride);
}

static int null_create(struct tp_channel *ch, char *err, size_t errlen)
{
	const struct null_opts *o = ch->cfg->opts;
	unsigned clients = ch->cfg->clients ? ch->cfg->clients : 1;
	struct null_chan *nc = calloc(1, sizeof(*nc));

	if (!nc)
		return errf(err, errlen, ENOMEM, "null: out of memory");
	ch->priv = nc;
	nc->slots = o ? (uint32_t)o->slots : 8;
	nc->slot_size = ch->cfg->msg_size > 64 ? ch->cfg->msg_size : 64;
	nc->slot_stride = (sizeof(struct null_slot) + nc->slot_size + 63) & ~(size_t)63;
	nc->box_stride = sizeof(struct null_box) + nc->slots * nc->slot_stride;
	nc->map_len = 2 * clients * nc->box_stride;
	/* MAP_SHARED so forked endpoints see one queue; zeroed by the kernel */
	nc->map = mmap(NULL, nc->map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);
	if (nc->map == MAP_FAILED) {
		nc->map = NULL;
		return errf(err, errlen, errno, "null: mmap %zu bytes: %s", nc->map_len,
			    strerror(errno));
	}
	tp_setting(ch, "slots", "%u", nc->slots);
	tp_setting(ch, "slot_bytes", "%zu", nc->slot_size);
	return 0;
}

static int null_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		     struct tp_endpoint **out, char *err, size_t errlen)
{
	const struct null_chan *nc = ch->priv;
	struct tp_endpoint *ep;

	if (id >= (ch->cfg->clients ? ch->cfg->clients : 1))
		return errf(err, errlen, EINVAL, "null: client id %u out of range", id);
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return errf(err, errlen, ENOMEM, "null: out of memory");
	ep->nc = *nc;
	/* box 2*id carries client -> server, 2*id + 1 server -> client */
	ep->rx = null_box(nc, 2 * id + (role == TP_CLIENT));
	ep->tx = null_box(nc, 2 * id + (role == TP_SERVER));
	if (ch->cfg->opts) {
		const struct null_opts *o = ch->cfg->opts;

		ep->fault = o->fault;
		ep->fault_at = o->fault_at;
	}
	*out = ep;
	return 0;
}

static uint32_t ld(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

/* Bump the event count, then wake sleepers if any announced themselves.
 * Together with null_sleep's order (announce, read count, re-check) no
 * wakeup is lost; every access is seq_cst for that reason. */
static void null_wake(struct null_box *b)
{
	__atomic_add_fetch(&b->events, 1, __ATOMIC_SEQ_CST);
	if (ld(&b->waiters))
		syscall(SYS_futex, &b->events, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Sleep until the box changes. ready() is re-checked after announcing. */
static int null_sleep(struct null_box *b, bool (*ready)(struct null_box *, uint32_t), uint32_t arg)
{
	int ret = 0;
	uint32_t v;

	__atomic_add_fetch(&b->waiters, 1, __ATOMIC_SEQ_CST);
	v = ld(&b->events);
	/* not FUTEX_PRIVATE_FLAG: the word is in a mapping shared across fork */
	if (!ready(b, arg) && syscall(SYS_futex, &b->events, FUTEX_WAIT, v, NULL, NULL, 0) < 0 &&
	    errno == EINTR)
		ret = -EINTR;
	__atomic_sub_fetch(&b->waiters, 1, __ATOMIC_SEQ_CST);
	return ret;
}

static bool null_can_put(struct null_box *b, uint32_t slots)
{
	return (ld(&b->closed) & NB_RX_CLOSED) || b->head - ld(&b->tail) < slots;
}

static bool null_can_take(struct null_box *b, uint32_t unused)
{
	return (ld(&b->closed) & NB_TX_CLOSED) || ld(&b->head) != b->tail;
}

static ssize_t null_put(struct tp_endpoint *ep, const void *buf, size_t len, bool flip);

/* -O fault: this message spoilt as asked; the sender is told that the
 * whole message went. */
static ssize_t null_fault(struct tp_endpoint *ep, int fault, const void *buf, size_t len)
{
	ssize_t r;

	switch (fault) {
	case NF_DROP:
		return (ssize_t)len;
	case NF_DUP:
		r = null_put(ep, buf, len, false);
		return r < 0 ? r : null_put(ep, buf, len, false);
	case NF_SHORT:
		r = null_put(ep, buf, len - 1, false);
		return r < 0 ? r : (ssize_t)len;
	case NF_CORRUPT:
		return null_put(ep, buf, len, true);
	default:
		return null_put(ep, buf, len, false);
	}
}

static ssize_t null_send(struct tp_endpoint *ep, const void *buf, size_t len)
{
	int fault = ep->fault;

	if (__builtin_expect(fault != NF_NONE, 0) && ep->sent++ == ep->fault_at && len) {
		ep->fault = NF_NONE;
		return null_fault(ep, fault, buf, len);
	}
	return null_put(ep, buf, len, false);
}

/* @flip: the copy's last byte inverted (-O fault=corrupt). */
static ssize_t null_put(struct tp_endpoint *ep, const void *buf, size_t len, bool flip)
{
	struct null_box *b = ep->tx;
	struct null_slot *s;
	int ret;

	if (len > ep->nc.slot_size)
		return -EMSGSIZE;
	while (!null_can_put(b, ep->nc.slots))
		if ((ret = null_sleep(b, null_can_put, ep->nc.slots)) < 0)
			return ret;
	if (ld(&b->closed) & NB_RX_CLOSED)
		return -EPIPE;
	s = null_slot(&ep->nc, b, b->head);
	s->len = (uint32_t)len;
	memcpy(s->data, buf, len);
	if (flip)
		s->data[len - 1] = (unsigned char)~s->data[len - 1];
	__atomic_store_n(&b->head, b->head + 1, __ATOMIC_SEQ_CST);
	null_wake(b);
	return (ssize_t)len;
}

static ssize_t null_recv(struct tp_endpoint *ep, void *buf, size_t len)
{
	struct null_box *b = ep->rx;
	struct null_slot *s;
	ssize_t n;
	int ret;

	while (!null_can_take(b, 0))
		if ((ret = null_sleep(b, null_can_take, 0)) < 0)
			return ret;
	/* the producer's last put is ordered before its close */
	if (ld(&b->head) == b->tail)
		return 0;
	s = null_slot(&ep->nc, b, b->tail);
	n = s->len;
	if ((size_t)n > len)
		n = -EMSGSIZE;
	else
		memcpy(buf, s->data, (size_t)n);
	__atomic_store_n(&b->tail, b->tail + 1, __ATOMIC_SEQ_CST);
	null_wake(b);
	return n;
}

/* ---- null-zc: in place, in runs ------------------------------------------ */

/* Up to @max free slots from head on, waiting for one; with -O fault=dup
 * due in this run, one slot is kept free for the copy. */
static ssize_t zc_reserve_n(struct tp_endpoint *ep, void **bufs, size_t len, unsigned max)
{
	struct null_box *b = ep->tx;
	uint32_t spare = ep->fault == NF_DUP ? 1 : 0, free_slots;
	int ret;

	if (len > ep->nc.slot_size || !max)
		return len ? -EMSGSIZE : -EINVAL;
	while (!(ld(&b->closed) & NB_RX_CLOSED) && b->head - ld(&b->tail) + spare >= ep->nc.slots)
		if ((ret = null_sleep(b, null_can_put, ep->nc.slots - spare)) < 0)
			return ret;
	if (ld(&b->closed) & NB_RX_CLOSED)
		return -EPIPE;
	free_slots = ep->nc.slots - (b->head - ld(&b->tail)) - spare;
	if (max > free_slots)
		max = free_slots;
	if (max > TP_BATCH_MAX)
		max = TP_BATCH_MAX;
	for (unsigned i = 0; i < max; i++)
		bufs[i] = null_slot(&ep->nc, b, b->head + i)->data;
	ep->reserved = max;
	return (ssize_t)max;
}

/* Publish the run's @n messages, spoiling the one -O fault names: the
 * slots after a dropped one move down, those after a doubled one up. */
static int zc_commit_n(struct tp_endpoint *ep, unsigned n, size_t len)
{
	struct null_box *b = ep->tx;
	uint32_t h = b->head, pub = n;
	struct null_slot *s;

	if (!n || n > ep->reserved)
		return -EINVAL;
	ep->reserved = 0;
	for (unsigned i = 0; i < n; i++)
		null_slot(&ep->nc, b, h + i)->len = (uint32_t)len;
	if (__builtin_expect(ep->fault != NF_NONE, 0) && ep->fault_at >= ep->sent &&
	    ep->fault_at < ep->sent + n && len) {
		uint32_t at = (uint32_t)(ep->fault_at - ep->sent);
		int fault = ep->fault;

		ep->fault = NF_NONE;
		s = null_slot(&ep->nc, b, h + at);
		if (fault == NF_DROP) {
			for (uint32_t i = at; i + 1 < n; i++)
				memcpy(null_slot(&ep->nc, b, h + i)->data,
				       null_slot(&ep->nc, b, h + i + 1)->data, len);
			pub = n - 1;
		} else if (fault == NF_DUP) {	/* n < slots: reserve_n kept one */
			for (uint32_t i = n; i > at + 1; i--) {
				null_slot(&ep->nc, b, h + i)->len = (uint32_t)len;
				memcpy(null_slot(&ep->nc, b, h + i)->data,
				       null_slot(&ep->nc, b, h + i - 1)->data, len);
			}
			null_slot(&ep->nc, b, h + at + 1)->len = (uint32_t)len;
			memcpy(null_slot(&ep->nc, b, h + at + 1)->data, s->data, len);
			pub = n + 1;
		} else if (fault == NF_SHORT) {
			s->len = (uint32_t)len - 1;
		} else if (fault == NF_CORRUPT) {
			s->data[len - 1] = (unsigned char)~s->data[len - 1];
		}
	}
	ep->sent += n;
	__atomic_store_n(&b->head, h + pub, __ATOMIC_SEQ_CST);
	null_wake(b);
	return 0;
}

/* -O fault=dup in place needs a slot beside the run for the copy. */
static int zc_check_opts(const void *opts, char *err, size_t errlen)
{
	const struct null_opts *o = opts;

	if (o && o->fault == NF_DUP && o->slots < 2)
		return errf(err, errlen, EINVAL, "null-zc: -O fault=dup needs -O slots=2 or more "
			    "(the copy takes a slot beside the run)");
	return 0;
}

static ssize_t zc_reserve(struct tp_endpoint *ep, void **buf, size_t len)
{
	ssize_t r = zc_reserve_n(ep, buf, len, 1);

	return r < 0 ? r : (ssize_t)len;
}

static ssize_t zc_commit(struct tp_endpoint *ep, size_t len)
{
	int r = zc_commit_n(ep, 1, len);

	return r < 0 ? r : (ssize_t)len;
}

static ssize_t zc_send(struct tp_endpoint *ep, const void *buf, size_t len)
{
	return tp_send_via_reserve(ep, buf, len, zc_reserve, zc_commit);
}

/* Up to @max messages from tail on, waiting for one; 0 after the close. */
static ssize_t zc_peek_n(struct tp_endpoint *ep, const void **msgs, size_t *lens, unsigned max)
{
	struct null_box *b = ep->rx;
	uint32_t have;
	int ret;

	while (!null_can_take(b, 0))
		if ((ret = null_sleep(b, null_can_take, 0)) < 0)
			return ret;
	have = ld(&b->head) - b->tail;
	if (!have)
		return 0;
	if (have > ep->nc.slots)
		return -EPROTO;
	if (max > have)
		max = have;
	if (max > TP_BATCH_MAX)
		max = TP_BATCH_MAX;
	for (unsigned i = 0; i < max; i++) {
		const struct null_slot *s = null_slot(&ep->nc, b, b->tail + i);

		msgs[i] = s->data;
		lens[i] = s->len;
	}
	ep->peeked = max;
	return (ssize_t)max;
}

static void zc_release_n(struct tp_endpoint *ep, unsigned n)
{
	struct null_box *b = ep->rx;

	if (n > ep->peeked)
		n = ep->peeked;
	ep->peeked = 0;
	__atomic_store_n(&b->tail, b->tail + n, __ATOMIC_SEQ_CST);
	null_wake(b);
}

static ssize_t zc_peek(struct tp_endpoint *ep, const void **msg, size_t len)
{
	size_t n;
	ssize_t r = zc_peek_n(ep, msg, &n, 1);

	(void)len;
	return r <= 0 ? r : (ssize_t)n;
}

static void zc_release(struct tp_endpoint *ep)
{
	zc_release_n(ep, 1);
}

static ssize_t zc_recv(struct tp_endpoint *ep, void *buf, size_t len)
{
	return tp_recv_via_peek(ep, buf, len, zc_peek, zc_release);
}

static void null_close(struct tp_endpoint *ep)
{
	if (!ep)
		return;
	__atomic_or_fetch(&ep->tx->closed, NB_TX_CLOSED, __ATOMIC_SEQ_CST);
	null_wake(ep->tx);
	__atomic_or_fetch(&ep->rx->closed, NB_RX_CLOSED, __ATOMIC_SEQ_CST);
	null_wake(ep->rx);
	free(ep);
}

static void null_destroy(struct tp_channel *ch)
{
	struct null_chan *nc = ch->priv;

	if (!nc)
		return;
	if (nc->map)
		munmap(nc->map, nc->map_len);
	free(nc);
	ch->priv = NULL;
}

const struct transport tp_null = {
	.name = "null",
	.summary = "lab self-test: bounded in-memory queue per direction, futex waits (no kernel object)",
	.caps = TP_IN_PROCESS | TP_DGRAM | TP_MULTI_CLIENT,
	.group = TP_GROUP_KERNEL,
	.options = null_options,
	.opts_size = sizeof(struct null_opts),
	.create = null_create,
	.open = null_open,
	.send = null_send,
	.recv = null_recv,
	.close = null_close,
	.destroy = null_destroy,
};

const struct transport tp_null_zc = {
	.name = "null-zc",
	.summary = "lab self-test: null's queues sent and received in place, in runs of slots "
		   "(the batch operations)",
	.caps = TP_IN_PROCESS | TP_DGRAM | TP_MULTI_CLIENT | TP_ZEROCOPY | TP_ZEROCOPY_SEND,
	.group = TP_GROUP_KERNEL,
	.options = null_options,
	.opts_size = sizeof(struct null_opts),
	.check_opts = zc_check_opts,
	.create = null_create,
	.open = null_open,
	.send = zc_send,
	.recv = zc_recv,
	.peek = zc_peek,
	.release = zc_release,
	.reserve = zc_reserve,
	.commit = zc_commit,
	.reserve_n = zc_reserve_n,
	.commit_n = zc_commit_n,
	.peek_n = zc_peek_n,
	.release_n = zc_release_n,
	.close = null_close,
	.destroy = null_destroy,
};
