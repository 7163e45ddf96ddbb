// SPDX-License-Identifier: MIT
/* barrier: messages between threads through shared variables, synchronised
 * by a pthread_barrier of two (seed 004's third row: an int doubled and
 * handed back across a barrier). Each direction of each client has its own
 * barrier and two buffers used in turn: the sender fills buffer k % 2 and
 * meets the receiver at the barrier; the receiver copies buffer k % 2 out
 * while the sender may already fill the other one, and the sender cannot
 * come back to this one before the receiver has met it again. So every
 * message is exactly one barrier round, as in the seed.
 *
 * A pthread_barrier cannot time out or be interrupted, so close() must
 * free a peer that waits there: arrivals are counted in a state word next
 * to the barrier, and a closer that finds an odd count (one side waiting)
 * arrives itself, marking the round as a close. So a stop request reaches
 * a thread parked there only through its peer's close (the runner closes
 * every endpoint when it stops a run), never through the signal itself.
 * Threads only: the barrier is process-private. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/transport.h"
#include "ipclab/util.h"

#define BAR_CLOSED (1u << 31)		/* no more arrivals */
#define BAR_CLOSE_ROUND (1u << 30)	/* the last arrival was a closer's */
#define BAR_COUNT_MASK (BAR_CLOSE_ROUND - 1)

struct bar_opts {
	uint64_t slot_size;
};

static const struct opt_desc bar_options[] = {
	{ .name = "slot-size", .type = OPT_SIZE, .offset = offsetof(struct bar_opts, slot_size),
	  .def = "1M", .min = 16, .max = 1ull << 30, .help = "largest message (each of the two buffers per direction)" },
	{ .name = NULL },
};

static const struct bar_opts bar_defaults = { .slot_size = 1u << 20 };

struct bar_dir {
	pthread_barrier_t bar;		/* two parties: sender and receiver */
	_Atomic uint32_t state;		/* arrivals (wraps in BAR_COUNT_MASK) | BAR_* */
	size_t len[2];
	unsigned char *buf[2];
};

struct bar_chan {
	struct bar_dir *dirs;		/* 2 per client: 2i up (to the server), 2i+1 down */
	unsigned ndirs, ninit;		/* barriers initialised, for destroy */
	uint64_t slot_size;
};

struct tp_endpoint {
	struct bar_dir *tx, *rx;
	uint64_t sent, received;	/* picks the buffer of the next message */
	uint64_t slot_size;
	const _Atomic int *stop;	/* the cell's stop word (tp_config) */
};

static const struct bar_opts *bar_opts_of(const void *opts)
{
	return opts ? opts : &bar_defaults;
}

static size_t bar_max_msg(const void *opts)
{
	return (size_t)bar_opts_of(opts)->slot_size;
}

static int bar_create(struct tp_channel *ch, char *err, size_t errlen)
{
	struct bar_chan *bc = calloc(1, sizeof(*bc));
	int r;

	if (!bc)
		return errf(err, errlen, ENOMEM, "barrier: out of memory");
	ch->priv = bc;
	bc->slot_size = bar_opts_of(ch->cfg->opts)->slot_size;
	bc->ndirs = 2 * ch->cfg->clients;
	bc->dirs = calloc(bc->ndirs, sizeof(*bc->dirs));
	if (!bc->dirs)
		return errf(err, errlen, ENOMEM, "barrier: out of memory");
	for (unsigned i = 0; i < bc->ndirs; i++) {
		struct bar_dir *d = &bc->dirs[i];

		for (int k = 0; k < 2; k++) {
			d->buf[k] = aligned_alloc(64, (bc->slot_size + 63) & ~(uint64_t)63);
			if (!d->buf[k])
				return errf(err, errlen, ENOMEM, "barrier: no memory for %llu-byte buffers "
					    "(lower -O slot-size)", (unsigned long long)bc->slot_size);
		}
		r = pthread_barrier_init(&d->bar, NULL, 2);
		if (r)
			return errf(err, errlen, r, "barrier: pthread_barrier_init: %s", strerror(r));
		bc->ninit++;
	}
	tp_setting(ch, "slot_size", "%llu", (unsigned long long)bc->slot_size);
	return 0;
}

static void bar_destroy(struct tp_channel *ch)
{
	struct bar_chan *bc = ch->priv;

	if (!bc)
		return;
	for (unsigned i = 0; bc->dirs && i < bc->ndirs; i++) {
		if (i < bc->ninit)
			pthread_barrier_destroy(&bc->dirs[i].bar);
		free(bc->dirs[i].buf[0]);
		free(bc->dirs[i].buf[1]);
	}
	free(bc->dirs);
	free(bc);
	ch->priv = NULL;
}

static int bar_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		    struct tp_endpoint **out, char *err, size_t errlen)
{
	struct bar_chan *bc = ch->priv;
	struct tp_endpoint *ep;

	if (id >= ch->cfg->clients)
		return errf(err, errlen, EINVAL, "barrier: client id %u out of range (%u clients)",
			    id, ch->cfg->clients);
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return errf(err, errlen, ENOMEM, "barrier: out of memory");
	ep->tx = &bc->dirs[2 * id + (role == TP_CLIENT ? 0 : 1)];
	ep->rx = &bc->dirs[2 * id + (role == TP_CLIENT ? 1 : 0)];
	ep->slot_size = bc->slot_size;
	ep->stop = ch->cfg->stop;
	*out = ep;
	return 0;
}

/* Meet the peer at the direction's barrier: 0, or -EPIPE when the
 * direction is closed or the one who came was a closer, not the peer. */
static int bar_meet(struct bar_dir *d)
{
	uint32_t s = atomic_load(&d->state), mine;

	do {
		if (s & BAR_CLOSED)
			return -EPIPE;
		mine = (s + 1) & BAR_COUNT_MASK;
	} while (!atomic_compare_exchange_weak(&d->state, &s, mine));
	pthread_barrier_wait(&d->bar);
	s = atomic_load(&d->state);
	if ((s & BAR_CLOSE_ROUND) && (s & BAR_COUNT_MASK) == ((mine + 1) & BAR_COUNT_MASK))
		return -EPIPE;
	return 0;
}

static ssize_t bar_send(struct tp_endpoint *ep, const void *buf, size_t len)
{
	struct bar_dir *d = ep->tx;
	unsigned k = ep->sent & 1;
	int r;

	if (len > ep->slot_size)
		return -EMSGSIZE;
	d->len[k] = len;
	memcpy(d->buf[k], buf, len);
	r = bar_meet(d);
	if (r)
		return r;
	ep->sent++;
	return (ssize_t)len;
}

static ssize_t bar_recv(struct tp_endpoint *ep, void *buf, size_t len)
{
	struct bar_dir *d = ep->rx;
	unsigned k = ep->received & 1;
	size_t n;

	/* Released by a close, not a message: the end, or (the runner closes
	 * every endpoint when it stops a run) the stop a signal could not
	 * deliver to a thread parked in pthread_barrier_wait. */
	if (bar_meet(d))
		return stop_requested(ep->stop) ? -EINTR : 0;
	ep->received++;
	n = d->len[k];
	if (n > len)
		return -EMSGSIZE;
	memcpy(buf, d->buf[k], n);
	return (ssize_t)n;
}

/* Close one direction; if one side waits at the barrier, arrive in its
 * peer's place so that it returns (and learns why). */
static void bar_close_dir(struct bar_dir *d)
{
	uint32_t s = atomic_load(&d->state), next;
	bool pair;

	do {
		if (s & BAR_CLOSED)
			return;
		pair = s & 1;
		next = pair ? ((s + 1) & BAR_COUNT_MASK) | BAR_CLOSE_ROUND : s;
		next |= BAR_CLOSED;
	} while (!atomic_compare_exchange_weak(&d->state, &s, next));
	if (pair)
		pthread_barrier_wait(&d->bar);
}

static void bar_close(struct tp_endpoint *ep)
{
	bar_close_dir(ep->tx);
	bar_close_dir(ep->rx);
	free(ep);
}

const struct transport tp_barrier = {
	.name = "barrier",
	.summary = "threads swap messages through shared buffers, one pthread_barrier round each (seed 004)",
	.caps = TP_DGRAM | TP_MULTI_CLIENT | TP_THREAD_ONLY | TP_NO_EINTR,
	.group = TP_GROUP_SHM,
	.options = bar_options,
	.opts_size = sizeof(struct bar_opts),
	.max_msg = bar_max_msg,
	.create = bar_create,
	.open = bar_open,
	.send = bar_send,
	.recv = bar_recv,
	.close = bar_close,
	.destroy = bar_destroy,
};
