// SPDX-License-Identifier: MIT
/* cacheline: the physical floor of inter-core messaging. Each direction of
 * each client is one 64-byte cache line in a MAP_SHARED mapping: an 8-byte
 * control word (FULL bit + length) and 56 bytes of payload. The sender
 * spins until the line is empty, writes it and sets FULL; the receiver
 * spins until FULL, copies out and clears it. A message moves with two
 * transfers of one line and no system call. Larger messages still work
 * (the payload goes to a slot beside the line) but 16-56 B is the point.
 *
 * Spins use a pause instruction and every CL_CHECK_EVERY polls look at the
 * direction's closed word and the cell's stop word (-EINTR): signals do
 * not interrupt a spin.
 * After CL_YIELD_AFTER polls in vain the peer is probably not running, and
 * each look also calls sched_yield(): with more spinners than CPUs a pure
 * spin would burn whole time slices (a few hundred messages/s). */
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ipclab/reference.h"
#include "ipclab/transport.h"
#include "ipclab/util.h"

#define CL_INLINE 56			/* payload bytes that fit in the line */
#define CL_FULL (1ull << 63)
#define CL_LEN_MASK 0xffffffffull
#define CL_CHECK_EVERY 256		/* polls between looks at closed/stop */
#define CL_YIELD_AFTER 2048		/* polls in vain before each look yields */

struct cl_opts {
	uint64_t slot_size;
};

static const struct opt_desc cl_options[] = {
	{ .name = "slot-size", .type = OPT_SIZE, .offset = offsetof(struct cl_opts, slot_size),
	  .def = "1M", .min = CL_INLINE, .max = 1ull << 30,
	  .help = "largest message; above 56 B the payload leaves the line for a slot" },
	{ .name = NULL },
};

static const struct cl_opts cl_defaults = { .slot_size = 1u << 20 };

/* One direction. The line is all a small message touches; closed sits on
 * its own line, read only every CL_CHECK_EVERY polls. */
struct cl_dir {
	alignas(64) _Atomic uint64_t ctl;	/* CL_FULL | length */
	unsigned char data[CL_INLINE];
	alignas(64) _Atomic uint32_t closed;
	alignas(64) unsigned char slot[];	/* messages over CL_INLINE bytes */
};

_Static_assert(offsetof(struct cl_dir, closed) == 64, "control word + payload = one line");

struct cl_chan {
	unsigned char *map;
	size_t map_len, dir_len;
	uint64_t slot_size;
};

struct tp_endpoint {
	struct cl_dir *tx, *rx;
	uint64_t slot_size;
	const _Atomic int *stop;	/* the cell's stop word (tp_config) */
};

static const struct cl_opts *cl_opts_of(const void *opts)
{
	return opts ? opts : &cl_defaults;
}

static size_t cl_max_msg(const void *opts)
{
	return (size_t)cl_opts_of(opts)->slot_size;
}

static int cl_create(struct tp_channel *ch, char *err, size_t errlen)
{
	const struct cl_opts *o = cl_opts_of(ch->cfg->opts);
	struct cl_chan *cc = calloc(1, sizeof(*cc));
	char sz[32];

	if (!cc)
		return errf(err, errlen, ENOMEM, "cacheline: out of memory");
	ch->priv = cc;
	cc->slot_size = o->slot_size;
	cc->dir_len = (sizeof(struct cl_dir) + (size_t)o->slot_size + 4095) & ~(size_t)4095;
	cc->map_len = cc->dir_len * 2 * ch->cfg->clients;
	cc->map = mmap(NULL, cc->map_len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (cc->map == MAP_FAILED) {
		cc->map = NULL;
		return errf(err, errlen, errno, "cacheline: mmap of %s shared memory: %s "
			    "(lower -O slot-size)", fmt_bytes(sz, sizeof(sz), (double)cc->map_len),
			    strerror(errno));
	}
	tp_setting(ch, "line_payload", "%d", CL_INLINE);
	tp_setting(ch, "slot_size", "%llu", (unsigned long long)cc->slot_size);
	return 0;
}

static void cl_destroy(struct tp_channel *ch)
{
	struct cl_chan *cc = ch->priv;

	if (!cc)
		return;
	if (cc->map)
		munmap(cc->map, cc->map_len);
	free(cc);
	ch->priv = NULL;
}

static int cl_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		   struct tp_endpoint **out, char *err, size_t errlen)
{
	struct cl_chan *cc = ch->priv;
	struct tp_endpoint *ep;
	struct cl_dir *up, *down;

	if (id >= ch->cfg->clients)
		return errf(err, errlen, EINVAL, "cacheline: client id %u out of range (%u clients)",
			    id, ch->cfg->clients);
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return errf(err, errlen, ENOMEM, "cacheline: out of memory");
	up = (struct cl_dir *)(cc->map + (size_t)2 * id * cc->dir_len);
	down = (struct cl_dir *)((unsigned char *)up + cc->dir_len);
	ep->tx = role == TP_CLIENT ? up : down;
	ep->rx = role == TP_CLIENT ? down : up;
	ep->slot_size = cc->slot_size;
	ep->stop = ch->cfg->stop;
	*out = ep;
	return 0;
}

/* Spin until the line's FULL bit is `full`: 1 once it is, 0 when the
 * direction was closed first, -EINTR on a stop request. */
static int cl_spin(struct cl_dir *d, bool full, const _Atomic int *stop)
{
	uint32_t n = 0;

	for (;;) {
		bool is_full = atomic_load_explicit(&d->ctl, memory_order_acquire) & CL_FULL;

		if (is_full == full)
			return 1;
		cpu_relax();
		if (++n % CL_CHECK_EVERY)
			continue;
		if (stop_requested(stop))
			return -EINTR;
		/* the closer's last message was stored before closed: look once more */
		if (atomic_load_explicit(&d->closed, memory_order_acquire))
			return !!(atomic_load_explicit(&d->ctl, memory_order_acquire) & CL_FULL) == full;
		if (n >= CL_YIELD_AFTER) {
			sched_yield();
			n = CL_YIELD_AFTER;	/* a multiple of the check period */
		}
	}
}

static ssize_t cl_send(struct tp_endpoint *ep, const void *buf, size_t len)
{
	struct cl_dir *d = ep->tx;
	int r;

	if (len > ep->slot_size)
		return -EMSGSIZE;
	if (atomic_load_explicit(&d->closed, memory_order_relaxed))
		return -EPIPE;
	r = cl_spin(d, false, ep->stop);
	if (r <= 0)
		return r ? r : -EPIPE;
	memcpy(len <= CL_INLINE ? d->data : d->slot, buf, len);
	atomic_store_explicit(&d->ctl, CL_FULL | len, memory_order_release);
	return (ssize_t)len;
}

static ssize_t cl_recv(struct tp_endpoint *ep, void *buf, size_t len)
{
	struct cl_dir *d = ep->rx;
	uint64_t n;
	ssize_t ret;
	int r = cl_spin(d, true, ep->stop);

	if (r <= 0)
		return r;
	/* Start the slot's first line on its way before the length is read:
	 * a copy whose address depends on the length the line holds waits
	 * for that load, and the slot's transfer from the sender's cache then
	 * follows the line's instead of overlapping it (about 50 ns of a
	 * 120 ns round trip of 64 B messages on an EPYC guest). */
	if (len > CL_INLINE)
		__builtin_prefetch(d->slot);
	n = atomic_load_explicit(&d->ctl, memory_order_relaxed) & CL_LEN_MASK;
	if (n > ep->slot_size)
		ret = -EPROTO;		/* never trust the length the peer wrote */
	else if (n > len)
		ret = -EMSGSIZE;
	else
		ret = (ssize_t)n;
	if (ret > 0)
		memcpy(buf, n <= CL_INLINE ? d->data : d->slot, n);
	atomic_store_explicit(&d->ctl, 0, memory_order_release);
	return ret;
}

static void cl_close(struct tp_endpoint *ep)
{
	atomic_store_explicit(&ep->tx->closed, 1, memory_order_release);
	atomic_store_explicit(&ep->rx->closed, 1, memory_order_release);
	free(ep);
}

const struct transport tp_cacheline = {
	.name = "cacheline",
	.summary = "one cache line per direction, both ends spin: the floor (16-56 B messages)",
	.caps = TP_DGRAM | TP_MULTI_CLIENT | TP_SPINS,
	.group = TP_GROUP_SHM,
	.options = cl_options,
	.opts_size = sizeof(struct cl_opts),
	.max_msg = cl_max_msg,
	.create = cl_create,
	.open = cl_open,
	.send = cl_send,
	.recv = cl_recv,
	.close = cl_close,
	.destroy = cl_destroy,
	.reference = &ref_cacheline,
};
