// SPDX-License-Identifier: MIT
/* The shared-memory references: shm-futex (a slot per message and a futex
 * word rung per message, the sender told about space only when it said it
 * sleeps) and cacheline (one 64-byte line per direction, both ends spin).
 * A MAP_SHARED mapping made before the sides start, laid out as the cells
 * lay theirs out (a line per index, the slots as far apart), and nothing
 * else: no length word, no closed word, no stop flag. Waits end now and
 * then (a futex timeout, a spin's count) only to let a thread be
 * cancelled when its peer failed. */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ipclab/experiment.h"
#include "ipclab/msg.h"
#include "ipclab/reference.h"
#include "ref_int.h"

#define REF_SLICE_NS 100000000 /* a futex wait's timeout (100 ms), as the cell's */
#define REF_CANCEL_EVERY 256   /* spins between looks at cancellation */
#define REF_YIELD_AFTER 2048   /* spins in vain before each look also yields, as the cell */

static size_t round_up(size_t v, size_t to)
{
	return (v + to - 1) / to * to;
}

struct ref_map {
	unsigned char *map;
	size_t len, dir_len, stride;
	uint32_t nslots;
	bool zerocopy;
	uint32_t head[2], tail[2]; /* [role]: its own send and receive index */
};

static int map_make(struct ref_chan *ch, struct ref_map **out, size_t dir_len, char *err, size_t errlen)
{
	struct ref_map *m = calloc(1, sizeof(*m));

	ch->kind = REF_OPS;
	ch->priv = m;
	if (!m) {
		snprintf(err, errlen, "reference: out of memory");
		return -ENOMEM;
	}
	m->dir_len = dir_len;
	m->len = 2 * dir_len;
	m->map = mmap(NULL, m->len, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m->map == MAP_FAILED) {
		int e = errno;

		m->map = NULL;
		snprintf(err, errlen, "reference: mmap: %s", strerror(e));
		return -e;
	}
	*out = m;
	return 0;
}

static void map_destroy(struct ref_chan *ch)
{
	struct ref_map *m = ch->priv;

	if (m && m->map)
		munmap(m->map, m->len);
	free(m);
	ch->priv = NULL;
}

/* Direction 0 carries client -> server, 1 back. */
static unsigned char *dir_of(const struct ref_map *m, int role, bool tx)
{
	int d = (role == REF_CLIENT) == tx ? 0 : 1;

	return m->map + (size_t)d * m->dir_len;
}

/* ---- shm-futex ---- */

struct slot_dir {
	alignas(64) _Atomic uint32_t head; /* published by the sender */
	alignas(64) _Atomic uint32_t tail; /* consumed by the receiver */
	_Atomic uint32_t space_wanted;	   /* the sender sleeps on space */
	alignas(64) _Atomic uint32_t data; /* futex word: rings so far */
	uint32_t data_seen;		   /* rings taken, by the receiver */
	alignas(64) _Atomic uint32_t space;
	uint32_t space_seen;
};

static long futex(_Atomic uint32_t *w, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, w, op, val, ts, NULL, 0);
}

static void ring_word(_Atomic uint32_t *w)
{
	atomic_fetch_add_explicit(w, 1, memory_order_release);
	futex(w, FUTEX_WAKE, 1, NULL);
}

/* Take one ring of word w (seen: the rings taken so far). */
static int wait_word(_Atomic uint32_t *w, uint32_t *seen, const char **what)
{
	static const struct timespec slice = { 0, REF_SLICE_NS };

	for (;;) {
		uint32_t cur = atomic_load_explicit(w, memory_order_acquire);

		if (cur != *seen) {
			++*seen;
			return 0;
		}
		if (futex(w, FUTEX_WAIT, cur, &slice) < 0 && errno != EAGAIN) {
			if (errno != ETIMEDOUT && errno != EINTR) {
				*what = "futex wait";
				return -errno;
			}
			pthread_testcancel();
		}
	}
}

/* Slot idx's payload: 64 bytes into the slot, where the cell's starts. */
static unsigned char *slot_at(const struct ref_map *m, unsigned char *dir, uint32_t idx)
{
	return dir + sizeof(struct slot_dir) + (size_t)(idx % m->nslots) * m->stride + 64;
}

static int slot_send(struct ref_chan *ch, int role, const void *buf, size_t n, const char **what)
{
	struct ref_map *m = ch->priv;
	unsigned char *dir = dir_of(m, role, true);
	struct slot_dir *d = (struct slot_dir *)dir;

	while (m->head[role] - atomic_load_explicit(&d->tail, memory_order_acquire) >= m->nslots) {
		atomic_store(&d->space_wanted, 1);
		if (m->head[role] - atomic_load(&d->tail) < m->nslots) {
			atomic_store(&d->space_wanted, 0);
			break;
		}
		int r = wait_word(&d->space, &d->space_seen, what);

		if (r)
			return r;
	}
	memcpy(slot_at(m, dir, m->head[role]), buf, n);
	atomic_store_explicit(&d->head, ++m->head[role], memory_order_release);
	ring_word(&d->data);
	return 0;
}

static int slot_recv(struct ref_chan *ch, int role, void *buf, size_t n, const char **what)
{
	struct ref_map *m = ch->priv;
	unsigned char *dir = dir_of(m, role, false);
	struct slot_dir *d = (struct slot_dir *)dir;
	int r = wait_word(&d->data, &d->data_seen, what);

	if (r)
		return r;
	if (!m->zerocopy) /* in place, as the cell where it receives in place */
		memcpy(buf, slot_at(m, dir, m->tail[role]), n);
	else
		msg_read_in_place(slot_at(m, dir, m->tail[role]), n);
	atomic_store(&d->tail, ++m->tail[role]);
	if (atomic_load(&d->space_wanted) && atomic_exchange(&d->space_wanted, 0))
		ring_word(&d->space);
	return 0;
}

static const struct ref_ops slot_ops = {
	.send = slot_send,
	.recv = slot_recv,
	.destroy = map_destroy,
};

static int shm_futex_open(struct ref_chan *ch, const struct cell *c, char *err, size_t errlen)
{
	uint64_t slot_size = ref_tp_opt(c, "slot-size");
	uint32_t nslots = (uint32_t)ref_tp_opt(c, "slots");
	size_t stride = round_up(64 + (size_t)slot_size, 64);
	struct ref_map *m;
	int r = map_make(ch, &m, round_up(sizeof(struct slot_dir) + nslots * stride, 4096), err,
			 errlen);

	ch->ops = &slot_ops;
	if (r)
		return r;
	m->stride = stride;
	m->nslots = nslots ? nslots : 1;
	m->zerocopy = ref_zerocopy(c);
	return 0;
}

static const char *const m_slot[] = { "slot-size", "slots", NULL };

const struct tp_reference ref_shm_futex = { .open = shm_futex_open, .mirrored = m_slot };

/* ---- cacheline ---- */

#define LINE_INLINE 56
#define LINE_FULL (1ull << 63)

struct line_dir {
	alignas(64) _Atomic uint64_t ctl; /* LINE_FULL | length */
	unsigned char data[LINE_INLINE];
	alignas(64) unsigned char gap[64]; /* where the cell keeps its closed word */
	alignas(64) unsigned char slot[];  /* messages over LINE_INLINE bytes */
};

static void line_spin(struct line_dir *d, bool full)
{
	uint32_t n = 0;

	while (!!(atomic_load_explicit(&d->ctl, memory_order_acquire) & LINE_FULL) != full) {
		ref_relax();
		if (++n % REF_CANCEL_EVERY)
			continue;
		pthread_testcancel();
		if (n >= REF_YIELD_AFTER) {
			sched_yield();
			n = REF_YIELD_AFTER;
		}
	}
}

static int line_send(struct ref_chan *ch, int role, const void *buf, size_t n, const char **what)
{
	struct line_dir *d = (struct line_dir *)dir_of(ch->priv, role, true);

	(void)what;
	line_spin(d, false);
	memcpy(n <= LINE_INLINE ? d->data : d->slot, buf, n);
	atomic_store_explicit(&d->ctl, LINE_FULL | n, memory_order_release);
	return 0;
}

static int line_recv(struct ref_chan *ch, int role, void *buf, size_t n, const char **what)
{
	struct line_dir *d = (struct line_dir *)dir_of(ch->priv, role, false);

	(void)what;
	line_spin(d, true);
	memcpy(buf, n <= LINE_INLINE ? d->data : d->slot, n);
	atomic_store_explicit(&d->ctl, 0, memory_order_release);
	return 0;
}

static const struct ref_ops line_ops = {
	.send = line_send,
	.recv = line_recv,
	.destroy = map_destroy,
};

static int cacheline_open(struct ref_chan *ch, const struct cell *c, char *err, size_t errlen)
{
	struct ref_map *m;
	size_t dir_len = round_up(sizeof(struct line_dir) + (size_t)ref_tp_opt(c, "slot-size"), 4096);

	ch->ops = &line_ops;
	return map_make(ch, &m, dir_len, err, errlen);
}

static const char *const m_line[] = { "slot-size", NULL };

const struct tp_reference ref_cacheline = { .open = cacheline_open, .mirrored = m_line };
