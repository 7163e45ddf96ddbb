// SPDX-License-Identifier: MIT
/* io-uring-msg: threads that talk through their io_uring rings alone, as
 * an application passes work between the rings of its threads. Each
 * endpoint has its own ring; a message is written in place into one of the
 * sender's slots (a buffer per direction of each client, -O slots of them)
 * and IORING_OP_MSG_RING (IORING_MSG_DATA) posts a completion into the
 * receiver's ring whose user_data names the slot and whose res is the
 * length. The receiver reads the message where it lies and hands the slot
 * back the same way: a MSG_RING into the sender's ring. No descriptor but
 * the rings, no copy through the kernel: the kernel only posts completions.
 *
 * A hand-back is queued in the receiver's submission queue and goes with
 * its next io_uring_enter (its next send, or its next wait), so a message
 * costs one system call per side when the receiver has nothing else to
 * wait for. Waits are IOU_MSG_SLICE_MS slices of io_uring_enter; between
 * them the stop word is looked at. close posts an end-of-stream completion
 * to the peer, behind the messages sent before it. Rings live until the
 * channel is destroyed (after every endpoint thread has ended), so a late
 * hand-back never reaches a closed or reused descriptor.
 *
 * Threads only: a ring's descriptor means nothing in another process.
 * Messages in the slots are the threads' own memory; the completions that
 * order them come from the kernel, which ThreadSanitizer cannot see, so
 * its builds are told (iom_hb_*). */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "absent.h"
#include "iou.h"
#include "ipclab/transport.h"
#include "ipclab/util.h"

#ifdef HAVE_URING
#include <liburing.h>
#endif

struct iom_opts {
	uint64_t slots;
};

static const struct opt_desc iom_options[] = {
	{ .name = "slots", .type = OPT_UINT, .offset = offsetof(struct iom_opts, slots),
	  .def = "16", .min = 1, .max = 1024,
	  .help = "message slots per direction of each client: how many messages may be in flight" },
	{ .name = NULL },
};

#ifdef HAVE_URING

#define IOM_SLICE_MS 100
#define IOM_PEER_WAIT_MS 10000		/* the peer's ring must exist by then */
#define IOM_MAX_BYTES (1ull << 30)	/* all slots of a channel */

/* What a completion means: the kind in the upper half of user_data, a
 * slot in the lower. */
enum iom_kind {
	IOM_DATA = 1,		/* a message from the peer in its slot; res = length */
	IOM_FREE = 2,		/* the peer hands one of our slots back */
	IOM_EOF = 3,		/* the peer closed, after its last message */
	IOM_SENT = 4,		/* our own MSG_RING's completion (an error, with CQE_SKIP) */
};

static inline uint64_t iom_ud(enum iom_kind k, uint32_t slot)
{
	return (uint64_t)k << 32 | slot;
}

/* One end of one client id: its ring, made by open in the endpoint's
 * thread, torn down by destroy. */
struct iom_end {
	struct io_uring ring;
	_Atomic int fd;		/* the ring's descriptor once it exists, else -1 */
	atomic_bool opened;
	bool made;
};

struct iom_pair {
	struct iom_end end[2];		/* [TP_SERVER], [TP_CLIENT] */
	unsigned char *slots[2];	/* the slots of messages sent by that role */
};

struct iom_chan {
	unsigned n;
	uint32_t nslots;
	size_t slot_size;
	unsigned sq_entries, cq_entries;
	unsigned sqe_flags;		/* IOSQE_CQE_SKIP_SUCCESS where the kernel has it */
	struct iom_pair *pair;
	unsigned char *mem;
	size_t mem_len;
};

struct iom_msg {
	uint32_t slot, len;
};

struct tp_endpoint {
	struct io_uring *ring;
	struct iom_end *peer;
	unsigned char *tx, *rx;		/* our slots / the peer's */
	uint32_t nslots;
	size_t slot_size;
	unsigned sqe_flags;
	int peer_fd;			/* the peer ring's descriptor once known, else -1 */
	uint32_t *free, nfree;		/* our slots we may write */
	struct iom_msg *inbox;		/* the peer's messages not yet taken */
	uint32_t in_head, in_n;
	int64_t held;			/* the peer's slot peek handed out, or -1 */
	int64_t reserved;		/* our slot reserve handed out, or -1 */
	bool peer_eof;
	const _Atomic int *stop;	/* the cell's stop word (tp_config) */
};

#ifdef IPCLAB_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#endif

/* A slot changes hands through a kernel completion: tell TSan. */
static inline void iom_hb_release(void *slot)
{
#ifdef IPCLAB_TSAN
	__tsan_release(slot);
#else
	(void)slot;
#endif
}

static inline void iom_hb_acquire(void *slot)
{
#ifdef IPCLAB_TSAN
	__tsan_acquire(slot);
#else
	(void)slot;
#endif
}

static const struct iom_opts *iom_opts_of(const void *opts)
{
	static const struct iom_opts defaults = { .slots = 16 };

	return opts ? opts : &defaults;
}

static int iom_ring(struct io_uring *ring, unsigned sq, unsigned cq, struct io_uring_params *p)
{
	memset(p, 0, sizeof(*p));
	p->flags = IORING_SETUP_CQSIZE;
	p->cq_entries = cq;
	return io_uring_queue_init_params(sq, ring, p);
}

/* Usable here: a ring can be made, and the kernel knows IORING_OP_MSG_RING. */
static int iom_probe(const struct tp_config *cfg, char *why, size_t len)
{
	struct io_uring ring;
	struct io_uring_params p;
	struct io_uring_probe *pr;
	bool has;
	int r = iom_ring(&ring, 4, 8, &p);

	if (r < 0)
		return iou_ring_error(-r, "io_uring_setup", why, len);
	pr = io_uring_get_probe_ring(&ring);
	has = pr && io_uring_opcode_supported(pr, IORING_OP_MSG_RING);
	if (pr)
		io_uring_free_probe(pr);
	io_uring_queue_exit(&ring);
	if (!pr)
		return errf(why, len, ENOTSUP,
			    "io_uring_get_probe failed: this kernel cannot say which io_uring operations it has (Linux 5.6 or later)");
	if (!has)
		return errf(why, len, ENOTSUP,
			    "this kernel lacks IORING_OP_MSG_RING (Linux 5.18 or later)");
	return 0;
}

static unsigned pow2_at_least(unsigned v)
{
	unsigned p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

static void iom_settings(struct tp_channel *ch, const struct iom_chan *c,
			 const struct io_uring_params *p)
{
#ifdef IOU_PKG_VERSION
	tp_setting(ch, "liburing", "%s", IOU_PKG_VERSION);
#endif
	tp_setting(ch, "slots", "%u", c->nslots);
	tp_setting(ch, "slot_bytes", "%zu", c->slot_size);
	tp_setting(ch, "sq_entries", "%u", p->sq_entries);
	tp_setting(ch, "cq_entries", "%u", p->cq_entries);
	tp_setting(ch, "features", "%#x", p->features);
	tp_setting(ch, "cqe_skip_success", "%d", !!c->sqe_flags);
	tp_setting(ch, "message", "in place in a sender's slot; MSG_RING (IORING_MSG_DATA) carries slot and length");
	tp_setting(ch, "hand_back", "MSG_RING into the sender's ring, with the receiver's next io_uring_enter");
}

static int iom_create(struct tp_channel *ch, char *err, size_t errlen)
{
	const struct iom_opts *o = iom_opts_of(ch->cfg->opts);
	unsigned n = ch->cfg->clients ? ch->cfg->clients : 1;
	struct iom_chan *c = calloc(1, sizeof(*c));
	struct io_uring_params p;
	struct io_uring ring;
	size_t per_dir;
	int r;

	if (!c)
		return errf(err, errlen, ENOMEM, "io-uring-msg: out of memory");
	ch->priv = c;
	c->n = n;
	c->nslots = (uint32_t)o->slots;
	c->slot_size = (ch->cfg->msg_size + 63) & ~(size_t)63;
	if (!c->slot_size)
		c->slot_size = 64;
	per_dir = (size_t)c->nslots * c->slot_size;
	if ((uint64_t)per_dir * 2 * n > IOM_MAX_BYTES)
		return errf(err, errlen, ENOMEM,
			    "io-uring-msg: %u clients x 2 directions x %u slots of %zu bytes is over %llu MiB; use fewer: -O slots=N",
			    n, c->nslots, c->slot_size, IOM_MAX_BYTES >> 20);
	/* a ring holds our hand-backs and a send or a close; its completions
	 * are at most every peer message, every slot coming back and an EOF */
	c->sq_entries = pow2_at_least(c->nslots + 4);
	c->cq_entries = pow2_at_least(2 * c->nslots + 8);
	c->pair = calloc(n, sizeof(*c->pair));
	if (!c->pair)
		return errf(err, errlen, ENOMEM, "io-uring-msg: out of memory");
	c->mem_len = per_dir * 2 * n;
	c->mem = mmap(NULL, c->mem_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->mem == MAP_FAILED) {
		c->mem = NULL;
		return errf(err, errlen, ENOMEM, "io-uring-msg: cannot map %zu bytes of slots: %s",
			    c->mem_len, strerror(errno));
	}
	for (unsigned id = 0; id < n; id++)
		for (int role = 0; role < 2; role++) {
			atomic_init(&c->pair[id].end[role].fd, -1);
			c->pair[id].slots[role] = c->mem + ((size_t)id * 2 + role) * per_dir;
		}
	/* what the endpoints' rings get, read back from one made alike */
	r = iom_ring(&ring, c->sq_entries, c->cq_entries, &p);
	if (r < 0) {
		char why[200];

		iou_ring_error(-r, "io_uring_setup", why, sizeof(why));
		return errf(err, errlen, -r, "io-uring-msg: %s", why);
	}
	io_uring_queue_exit(&ring);
	c->sqe_flags = p.features & IORING_FEAT_CQE_SKIP ? IOSQE_CQE_SKIP_SUCCESS : 0;
	iom_settings(ch, c, &p);
	return 0;
}

static void iom_destroy(struct tp_channel *ch)
{
	struct iom_chan *c = ch->priv;

	if (!c)
		return;
	for (unsigned id = 0; c->pair && id < c->n; id++)
		for (int role = 0; role < 2; role++)
			if (c->pair[id].end[role].made)
				io_uring_queue_exit(&c->pair[id].end[role].ring);
	if (c->mem)
		munmap(c->mem, c->mem_len);
	free(c->pair);
	free(c);
	ch->priv = NULL;
}

static void iom_free_ep(struct tp_endpoint *ep)
{
	free(ep->free);
	free(ep->inbox);
	free(ep);
}

static int iom_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		    struct tp_endpoint **out, char *err, size_t errlen)
{
	struct iom_chan *c = ch->priv;
	struct io_uring_params p;
	struct tp_endpoint *ep;
	struct iom_end *e;
	int r;

	if (id >= c->n)
		return errf(err, errlen, EINVAL, "io-uring-msg: client id %u out of range (%u clients)",
			    id, c->n);
	e = &c->pair[id].end[role];
	if (atomic_exchange(&e->opened, true))
		return errf(err, errlen, EBUSY, "io-uring-msg: %s endpoint %u opened twice",
			    role == TP_SERVER ? "server" : "client", id);
	ep = calloc(1, sizeof(*ep));
	if (ep) {
		ep->free = calloc(c->nslots, sizeof(*ep->free));
		ep->inbox = calloc(c->nslots, sizeof(*ep->inbox));
	}
	if (!ep || !ep->free || !ep->inbox) {
		if (ep)
			iom_free_ep(ep);
		return errf(err, errlen, ENOMEM, "io-uring-msg: out of memory");
	}
	r = iom_ring(&e->ring, c->sq_entries, c->cq_entries, &p);
	if (r < 0) {
		char why[200];

		iom_free_ep(ep);
		iou_ring_error(-r, "io_uring_setup", why, sizeof(why));
		return errf(err, errlen, -r, "io-uring-msg: %s", why);
	}
	e->made = true;
	ep->ring = &e->ring;
	ep->peer = &c->pair[id].end[!role];
	ep->tx = c->pair[id].slots[role];
	ep->rx = c->pair[id].slots[!role];
	ep->nslots = c->nslots;
	ep->slot_size = c->slot_size;
	ep->sqe_flags = c->sqe_flags;
	ep->peer_fd = -1;
	ep->held = ep->reserved = -1;
	ep->stop = ch->cfg->stop;
	for (uint32_t i = 0; i < c->nslots; i++)
		ep->free[i] = c->nslots - 1 - i;
	ep->nfree = c->nslots;
	atomic_store_explicit(&e->fd, e->ring.ring_fd, memory_order_release);
	*out = ep;
	return 0;
}

/* One completion of our ring: a peer's message into the inbox, a slot back
 * to the free list, the peer's EOF noted; a failed MSG_RING of ours is its
 * error. Whatever the peer sent is checked before it is believed. */
static int iom_take(struct tp_endpoint *ep, const struct io_uring_cqe *cqe)
{
	uint32_t kind = (uint32_t)(cqe->user_data >> 32), slot = (uint32_t)cqe->user_data;

	switch (kind) {
	case IOM_DATA:
		if (slot >= ep->nslots || cqe->res < 0 || (size_t)cqe->res > ep->slot_size ||
		    ep->in_n >= ep->nslots)
			return -EPROTO;
		ep->inbox[(ep->in_head + ep->in_n++) % ep->nslots] =
			(struct iom_msg){ slot, (uint32_t)cqe->res };
		return 0;
	case IOM_FREE:
		if (slot >= ep->nslots || ep->nfree >= ep->nslots)
			return -EPROTO;
		iom_hb_acquire(ep->tx + (size_t)slot * ep->slot_size);
		ep->free[ep->nfree++] = slot;
		return 0;
	case IOM_EOF:
		ep->peer_eof = true;
		return 0;
	case IOM_SENT:
		return cqe->res < 0 ? cqe->res : 0;
	}
	return -EPROTO;
}

/* Take every completion there is, without a system call. */
static int iom_reap(struct tp_endpoint *ep)
{
	struct io_uring_cqe *cqe;
	int r = 0;

	while (!r && io_uring_peek_cqe(ep->ring, &cqe) == 0) {
		r = iom_take(ep, cqe);
		io_uring_cqe_seen(ep->ring, cqe);
	}
	return r;
}

/* Submit what is queued and wait one slice for a completion: 0 to look
 * again, -EINTR on a stop, or -errno. */
static int iom_wait(struct tp_endpoint *ep)
{
	struct __kernel_timespec ts = { 0, IOM_SLICE_MS * 1000000LL };
	struct io_uring_cqe *cqe;
	int r;

	if (stop_requested(ep->stop))
		return -EINTR;
	r = io_uring_submit_and_wait_timeout(ep->ring, &cqe, 1, &ts, NULL);
	if (r >= 0 || r == -ETIME || r == -EINTR || r == -EAGAIN || r == -EBUSY)
		return stop_requested(ep->stop) ? -EINTR : 0;
	return r;
}

/* The peer ring's descriptor; its thread may still be opening. */
static int iom_peer_fd(struct tp_endpoint *ep)
{
	for (unsigned ms = 0; ep->peer_fd < 0; ms++) {
		ep->peer_fd = atomic_load_explicit(&ep->peer->fd, memory_order_acquire);
		if (ep->peer_fd >= 0)
			break;
		if (stop_requested(ep->stop))
			return -EINTR;
		if (ms >= IOM_PEER_WAIT_MS)
			return -ETIMEDOUT;
		usleep(1000);
	}
	return ep->peer_fd;
}

/* A submission queue entry, submitting what is queued first when full. */
static struct io_uring_sqe *iom_sqe(struct tp_endpoint *ep)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ep->ring);

	if (!sqe && io_uring_submit(ep->ring) >= 0)
		sqe = io_uring_get_sqe(ep->ring);
	return sqe;
}

/* Queue a MSG_RING of kind/slot/len into the peer's ring. */
static int iom_post(struct tp_endpoint *ep, enum iom_kind kind, uint32_t slot, size_t len)
{
	int fd = iom_peer_fd(ep);
	struct io_uring_sqe *sqe;

	if (fd < 0)
		return fd;
	sqe = iom_sqe(ep);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_msg_ring(sqe, fd, (unsigned)len, iom_ud(kind, slot), 0);
	sqe->user_data = iom_ud(IOM_SENT, slot);
	sqe->flags |= ep->sqe_flags;
	return 0;
}

static ssize_t iom_reserve(struct tp_endpoint *ep, void **buf, size_t len)
{
	int r;

	if (len > ep->slot_size)
		return -EMSGSIZE;
	for (;;) {
		r = iom_reap(ep);
		if (r)
			return r;
		if (ep->peer_eof)
			return -EPIPE;
		if (ep->nfree)
			break;
		r = iom_wait(ep);
		if (r)
			return r;
	}
	ep->reserved = ep->free[--ep->nfree];
	*buf = ep->tx + (size_t)ep->reserved * ep->slot_size;
	return (ssize_t)len;
}

static ssize_t iom_commit(struct tp_endpoint *ep, size_t len)
{
	uint32_t slot = (uint32_t)ep->reserved;
	int r;

	if (ep->reserved < 0 || len > ep->slot_size)
		return -EINVAL;
	ep->reserved = -1;
	iom_hb_release(ep->tx + (size_t)slot * ep->slot_size);
	r = iom_post(ep, IOM_DATA, slot, len);
	if (!r) {
		r = io_uring_submit(ep->ring);
		if (r >= 0)
			return (ssize_t)len;
	}
	ep->free[ep->nfree++] = slot;	/* not sent: still ours */
	return r;
}

static ssize_t iom_send(struct tp_endpoint *ep, const void *buf, size_t len)
{
	return tp_send_via_reserve(ep, buf, len, iom_reserve, iom_commit);
}

static ssize_t iom_peek(struct tp_endpoint *ep, const void **msg, size_t len)
{
	struct iom_msg m;
	int r;

	if (ep->held >= 0)
		return -EINVAL;
	for (;;) {
		r = iom_reap(ep);
		if (r)
			return r;
		if (ep->in_n)
			break;
		if (ep->peer_eof)
			return 0;
		r = iom_wait(ep);
		if (r)
			return r;
	}
	m = ep->inbox[ep->in_head];
	ep->in_head = (ep->in_head + 1) % ep->nslots;
	ep->in_n--;
	ep->held = m.slot;
	*msg = ep->rx + (size_t)m.slot * ep->slot_size;
	iom_hb_acquire((void *)*msg);
	return (ssize_t)m.len;
}

/* The slot goes back with our next io_uring_enter (a send or a wait). */
static void iom_release(struct tp_endpoint *ep)
{
	uint32_t slot = (uint32_t)ep->held;

	if (ep->held < 0)
		return;
	ep->held = -1;
	iom_hb_release(ep->rx + (size_t)slot * ep->slot_size);
	(void)iom_post(ep, IOM_FREE, slot, 0);
}

static ssize_t iom_recv(struct tp_endpoint *ep, void *buf, size_t len)
{
	return tp_recv_via_peek(ep, buf, len, iom_peek, iom_release);
}

/* Hand back what we hold, tell the peer the stream ended (behind our last
 * message) and submit it all. The ring stays until destroy. */
static void iom_close(struct tp_endpoint *ep)
{
	if (!ep)
		return;
	iom_release(ep);
	if (iom_post(ep, IOM_EOF, 0, 0) == 0 || io_uring_sq_ready(ep->ring))
		io_uring_submit(ep->ring);
	iom_free_ep(ep);
}

#define IOM_OPS                                                                       \
	.probe = iom_probe, .create = iom_create, .open = iom_open, .send = iom_send,   \
	.recv = iom_recv, .peek = iom_peek, .release = iom_release,                    \
	.reserve = iom_reserve, .commit = iom_commit, .close = iom_close,              \
	.destroy = iom_destroy
#define IOM_CAPS (TP_DGRAM | TP_MULTI_CLIENT | TP_THREAD_ONLY | TP_ZEROCOPY | TP_ZEROCOPY_SEND)

#else /* !HAVE_URING */

static int iom_probe(const struct tp_config *cfg, char *why, size_t len)
{
	return errf(why, len, ENOTSUP, "built without liburing; %s", IOU_INSTALL);
}

#define IOM_OPS .probe = iom_probe, TP_ABSENT_OPS
#define IOM_CAPS (TP_DGRAM | TP_MULTI_CLIENT | TP_THREAD_ONLY)

#endif /* HAVE_URING */

const struct transport tp_io_uring_msg = {
	.name = "io-uring-msg",
	.summary = "threads' own io_uring rings: a message in place in a slot, IORING_OP_MSG_RING posts slot and length to the peer's ring and the slot comes back the same way",
	.caps = IOM_CAPS,
	.group = TP_GROUP_LIBRARY,
	.options = iom_options,
	.opts_size = sizeof(struct iom_opts),
	IOM_OPS,
};
