// SPDX-License-Identifier: MIT
/* Shared-memory slot transports: the payload is copied into a slot of a
 * MAP_SHARED mapping (made in the parent, inherited by children) and only a
 * wakeup crosses the kernel: JACK's "shm + wakeup" pattern. One generic
 * transport, registered once per doorbell (shm-futex, shm-eventfd, ...).
 *
 * Per client and direction: `slots` slots (1 = JACK's single buffer), a
 * head (published by the sender) and a tail (consumed by the receiver), and
 * two doorbells. "data" is rung once per message and waited once per
 * message, so every message costs exactly one ring and one wait: that is
 * the wakeup being measured. "space" is flow control: the sender announces
 * that it sleeps on a full queue and the receiver rings only then, so a
 * ping-pong never pays for it. Waits are sliced (SLOT_WAIT_SLICE_NS) so a
 * stop request or a closed peer is noticed even by doorbells that signals
 * cannot interrupt. */
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ipclab/doorbell.h"
#include "ipclab/reference.h"
#include "ipclab/transport.h"
#include "ipclab/util.h"

#define SLOT_WAIT_SLICE_NS (100 * NSEC_PER_MSEC)
#define SLOT_HDR 64		/* slot length word, padded: payload starts a line */

struct slot_opts {
	uint64_t slot_size;
	uint64_t slots;
};

static const struct opt_desc slot_options[] = {
	{ .name = "slot-size", .type = OPT_SIZE, .offset = offsetof(struct slot_opts, slot_size),
	  .def = "1M", .min = 16, .max = 1ull << 30,
	  .help = "largest message: bytes of payload per slot" },
	{ .name = "slots", .type = OPT_UINT, .offset = offsetof(struct slot_opts, slots),
	  .def = "1", .min = 1, .max = 1024,
	  .help = "messages in flight per direction (1 = one buffer + wakeup, as JACK)" },
	{ .name = NULL },
};

static const struct slot_opts slot_defaults = { .slot_size = 1u << 20, .slots = 1 };

/* Head of one direction; its doorbells and slots follow it in the map. */
struct slot_dir {
	alignas(64) _Atomic uint32_t head;	/* messages published by the sender */
	alignas(64) _Atomic uint32_t tail;	/* messages consumed by the receiver */
	_Atomic uint32_t space_wanted;		/* the sender sleeps on "space" */
	alignas(64) _Atomic uint32_t closed;	/* either end closed */
};

struct slot_msg {
	uint64_t len;
	unsigned char pad[SLOT_HDR - sizeof(uint64_t)];
	unsigned char data[];
};

enum { DB_DATA, DB_SPACE };

struct slot_chan {
	const struct doorbell *db;
	unsigned char *map;
	size_t map_len, dir_len, db_span, stride;
	uint64_t slot_size;
	uint32_t nslots;
	unsigned ndirs;		/* two per client: 2i up (to the server), 2i+1 down */
	unsigned ncreated;	/* doorbells created, in map order, for destroy */
};

struct tp_endpoint {
	const struct slot_chan *sc;
	unsigned char *tx, *rx;	/* the direction this end sends on / receives on */
	uint32_t tx_head, rx_tail;	/* own index, kept here; shm has the copy */
	bool peeked;
	const _Atomic int *stop;	/* the cell's stop word (tp_config) */
};

static inline struct slot_dir *dir_hdr(unsigned char *dir)
{
	return (struct slot_dir *)dir;
}

static inline void *dir_db(const struct slot_chan *sc, unsigned char *dir, int which)
{
	return dir + sizeof(struct slot_dir) + (size_t)which * sc->db_span;
}

static inline struct slot_msg *dir_slot(const struct slot_chan *sc, unsigned char *dir,
					uint32_t idx)
{
	return (struct slot_msg *)(dir + sizeof(struct slot_dir) + 2 * sc->db_span +
				   (size_t)(idx % sc->nslots) * sc->stride);
}

static const struct slot_opts *slot_opts_of(const void *opts)
{
	return opts ? opts : &slot_defaults;
}

static size_t slot_max_msg(const void *opts)
{
	return (size_t)slot_opts_of(opts)->slot_size;
}

static size_t round_up(size_t v, size_t to)
{
	return (v + to - 1) / to * to;
}

static int slot_map(struct tp_channel *ch, struct slot_chan *sc, char *err, size_t errlen)
{
	char sz[32];

	sc->map = mmap(NULL, sc->map_len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (sc->map == MAP_FAILED) {
		sc->map = NULL;
		return errf(err, errlen, errno, "%s: mmap of %s shared memory: %s "
			    "(lower -O slot-size or -O slots)", ch->tp->name,
			    fmt_bytes(sz, sizeof(sz), (double)sc->map_len), strerror(errno));
	}
	return 0;
}

static int slot_create(struct tp_channel *ch, const struct doorbell *db, char *err,
		       size_t errlen)
{
	const struct slot_opts *o = slot_opts_of(ch->cfg->opts);
	struct slot_chan *sc = calloc(1, sizeof(*sc));
	int r;

	if (!sc)
		return errf(err, errlen, ENOMEM, "%s: out of memory", ch->tp->name);
	ch->priv = sc;
	sc->db = db;
	sc->slot_size = o->slot_size;
	sc->nslots = (uint32_t)o->slots;
	sc->ndirs = 2 * ch->cfg->clients;
	sc->db_span = doorbell_span(db);
	sc->stride = round_up(SLOT_HDR + (size_t)o->slot_size, 64);
	sc->dir_len = round_up(sizeof(struct slot_dir) + 2 * sc->db_span +
			       sc->nslots * sc->stride, 4096);
	sc->map_len = sc->dir_len * sc->ndirs;
	r = slot_map(ch, sc, err, errlen);
	if (r)
		return r;
	for (unsigned d = 0; d < sc->ndirs; d++)
		for (int which = DB_DATA; which <= DB_SPACE; which++) {
			r = db->create(dir_db(sc, sc->map + d * sc->dir_len, which), err, errlen);
			if (r)
				return r;
			sc->ncreated++;
		}
	tp_setting(ch, "doorbell", "%s", db->name);
	tp_setting(ch, "slot_size", "%llu", (unsigned long long)sc->slot_size);
	tp_setting(ch, "slots", "%u", sc->nslots);
	tp_setting(ch, "shm_bytes", "%zu", sc->map_len);
	return 0;
}

static void slot_destroy(struct tp_channel *ch)
{
	struct slot_chan *sc = ch->priv;

	if (!sc)
		return;
	for (unsigned k = 0; k < sc->ncreated; k++)
		sc->db->destroy(dir_db(sc, sc->map + (k / 2) * sc->dir_len, (int)(k % 2)));
	if (sc->map)
		munmap(sc->map, sc->map_len);
	free(sc);
	ch->priv = NULL;
}

/* The four doorbell sides an endpoint holds, for open and close alike. */
static const struct {
	bool tx;
	int which;
	enum db_side side;
} ep_sides[] = {
	{ true, DB_DATA, DB_RINGER },
	{ true, DB_SPACE, DB_WAITER },
	{ false, DB_DATA, DB_WAITER },
	{ false, DB_SPACE, DB_RINGER },
};

static void slot_close_sides(struct tp_endpoint *ep, size_t n)
{
	const struct doorbell *db = ep->sc->db;

	if (!db->close)
		return;
	for (size_t i = 0; i < n; i++)
		db->close(dir_db(ep->sc, ep_sides[i].tx ? ep->tx : ep->rx, ep_sides[i].which),
			  ep_sides[i].side);
}

static int slot_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		     struct tp_endpoint **out, char *err, size_t errlen)
{
	struct slot_chan *sc = ch->priv;
	const struct doorbell *db = sc->db;
	struct tp_endpoint *ep;
	unsigned char *up, *down;

	if (id >= ch->cfg->clients)
		return errf(err, errlen, EINVAL, "%s: client id %u out of range (%u clients)",
			    ch->tp->name, id, ch->cfg->clients);
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return errf(err, errlen, ENOMEM, "%s: out of memory", ch->tp->name);
	up = sc->map + (size_t)2 * id * sc->dir_len;
	down = up + sc->dir_len;
	ep->sc = sc;
	ep->stop = ch->cfg->stop;
	ep->tx = role == TP_CLIENT ? up : down;
	ep->rx = role == TP_CLIENT ? down : up;
	for (size_t i = 0; db->open && i < ARRAY_SIZE(ep_sides); i++) {
		void *shm = dir_db(sc, ep_sides[i].tx ? ep->tx : ep->rx, ep_sides[i].which);
		int r = db->open(shm, ep_sides[i].side, err, errlen);

		if (r) {
			slot_close_sides(ep, i);
			free(ep);
			return r;
		}
	}
	ep->tx_head = atomic_load(&dir_hdr(ep->tx)->head);
	ep->rx_tail = atomic_load(&dir_hdr(ep->rx)->tail);
	*out = ep;
	return 0;
}

/* Until the send direction has a free slot: 0, -EPIPE or -EINTR. */
static int slot_wait_space(struct tp_endpoint *ep)
{
	const struct slot_chan *sc = ep->sc;
	struct slot_dir *d = dir_hdr(ep->tx);
	int r;

	for (;;) {
		if (ep->tx_head - atomic_load_explicit(&d->tail, memory_order_acquire) < sc->nslots)
			return 0;
		if (atomic_load(&d->closed))
			return -EPIPE;
		/* Announce, then look again: the receiver stores tail before it
		 * looks at space_wanted (both seq_cst), so one of us sees the
		 * other. A ring that races the second look is a spare wakeup. */
		atomic_store(&d->space_wanted, 1);
		if (ep->tx_head - atomic_load(&d->tail) < sc->nslots) {
			atomic_store(&d->space_wanted, 0);
			return 0;
		}
		r = sc->db->wait(dir_db(sc, ep->tx, DB_SPACE), SLOT_WAIT_SLICE_NS, ep->stop);
		if (r == -ETIMEDOUT && stop_requested(ep->stop))
			return -EINTR;
		if (r && r != -ETIMEDOUT)
			return r;
	}
}

static ssize_t slot_send(struct tp_endpoint *ep, const void *buf, size_t len)
{
	const struct slot_chan *sc = ep->sc;
	struct slot_msg *m;
	int r;

	if (len > sc->slot_size)
		return -EMSGSIZE;
	r = slot_wait_space(ep);
	if (r)
		return r;
	m = dir_slot(sc, ep->tx, ep->tx_head);
	m->len = len;
	memcpy(m->data, buf, len);
	ep->tx_head++;
	atomic_store_explicit(&dir_hdr(ep->tx)->head, ep->tx_head, memory_order_release);
	r = sc->db->ring(dir_db(sc, ep->tx, DB_DATA));
	return r ? r : (ssize_t)len;
}

/* Take one "data" ring: 1 when a message is there, 0 when the peer closed
 * and every message was taken, or -errno. */
static int slot_wait_data(struct tp_endpoint *ep)
{
	const struct slot_chan *sc = ep->sc;
	struct slot_dir *d = dir_hdr(ep->rx);
	int r;

	for (;;) {
		if (atomic_load(&d->closed) &&
		    atomic_load_explicit(&d->head, memory_order_acquire) == ep->rx_tail)
			return 0;
		r = sc->db->wait(dir_db(sc, ep->rx, DB_DATA), SLOT_WAIT_SLICE_NS, ep->stop);
		if (!r && atomic_load_explicit(&d->head, memory_order_acquire) != ep->rx_tail)
			return 1;
		if (!r)
			continue;	/* the ring of a close */
		if (r == -ETIMEDOUT && stop_requested(ep->stop))
			return -EINTR;
		if (r != -ETIMEDOUT)
			return r;
	}
}

static ssize_t slot_peek(struct tp_endpoint *ep, const void **msg, size_t len)
{
	const struct slot_msg *m;
	int r = slot_wait_data(ep);

	if (r <= 0)
		return r;
	m = dir_slot(ep->sc, ep->rx, ep->rx_tail);
	ep->peeked = true;
	if (m->len > ep->sc->slot_size)
		return -EPROTO;	/* the peer wrote garbage: never trust it */
	*msg = m->data;
	return (ssize_t)m->len;
}

static void slot_release(struct tp_endpoint *ep)
{
	struct slot_dir *d = dir_hdr(ep->rx);

	ep->peeked = false;
	ep->rx_tail++;
	atomic_store(&d->tail, ep->rx_tail);
	if (atomic_load(&d->space_wanted) && atomic_exchange(&d->space_wanted, 0))
		(void)ep->sc->db->ring(dir_db(ep->sc, ep->rx, DB_SPACE));
}

static ssize_t slot_recv(struct tp_endpoint *ep, void *buf, size_t len)
{
	const void *msg;
	ssize_t n = slot_peek(ep, &msg, len);

	if (n <= 0 && !ep->peeked)
		return n;
	if (n >= 0 && (size_t)n > len)
		n = -EMSGSIZE;
	else if (n > 0)
		memcpy(buf, msg, (size_t)n);
	slot_release(ep);
	return n;
}

/* Mark both directions closed and wake a peer that sleeps on either. */
static void slot_close(struct tp_endpoint *ep)
{
	const struct slot_chan *sc = ep->sc;

	if (ep->peeked)
		slot_release(ep);
	atomic_store(&dir_hdr(ep->tx)->closed, 1);
	atomic_store(&dir_hdr(ep->rx)->closed, 1);
	(void)sc->db->ring(dir_db(sc, ep->tx, DB_DATA));
	(void)sc->db->ring(dir_db(sc, ep->rx, DB_SPACE));
	slot_close_sides(ep, ARRAY_SIZE(ep_sides));
	free(ep);
}

#define SLOT_CAPS (TP_DGRAM | TP_MULTI_CLIENT | TP_ZEROCOPY)

/* One transport per doorbell: the same hooks, a create that names it;
 * shm-futex has a reference (src/reference/shm.c). */
#define SHM_SLOT_TRANSPORT(id, tpname, text, extra_caps, ref)			\
	static int create_##id(struct tp_channel *ch, char *err, size_t errlen)	\
	{										\
		return slot_create(ch, &db_##id, err, errlen);				\
	}										\
	const struct transport tp_shm_##id = {						\
		.name = tpname, .summary = text, .caps = SLOT_CAPS | (extra_caps),	\
		.group = TP_GROUP_SHM,							\
		.options = slot_options, .opts_size = sizeof(struct slot_opts),	\
		.max_msg = slot_max_msg, .max_msg_limit = "-O slot-size", .create = create_##id, .open = slot_open,	\
		.send = slot_send, .recv = slot_recv, .peek = slot_peek,		\
		.release = slot_release, .close = slot_close, .destroy = slot_destroy,	\
		.reference = ref,							\
	}

SHM_SLOT_TRANSPORT(futex, "shm-futex", "shared-memory slot + futex wakeup", 0, &ref_shm_futex);
SHM_SLOT_TRANSPORT(eventfd, "shm-eventfd", "shared-memory slot + eventfd wakeup", 0, NULL);
SHM_SLOT_TRANSPORT(pipe, "shm-pipe", "shared-memory slot + one-byte pipe wakeup (JACK)", 0, NULL);
SHM_SLOT_TRANSPORT(sem, "shm-sem", "shared-memory slot + POSIX semaphore wakeup", 0, NULL);
SHM_SLOT_TRANSPORT(cond, "shm-cond", "shared-memory slot + process-shared condvar wakeup", 0, NULL);
SHM_SLOT_TRANSPORT(sysv_sem, "shm-sysv-sem", "shared-memory slot + SysV semaphore wakeup", 0, NULL);
SHM_SLOT_TRANSPORT(signal, "shm-signal", "shared-memory slot + realtime signal wakeup", 0, NULL);
SHM_SLOT_TRANSPORT(spin, "shm-spin", "shared-memory slot + busy-poll (no syscall)", TP_SPINS, NULL);
