/* SPDX-License-Identifier: MIT */
/*
 * internal.h - libipcring private definitions: the shared header layout,
 * the record format, the process-local handle and small inline helpers.
 * Not installed; include/ipcring.h is the only public header.
 */
#ifndef IPCRING_INTERNAL_H
#define IPCRING_INTERNAL_H

#include <assert.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "ipcring.h"

#define RING_MAGIC	0x31474e4952435049ULL	/* "IPCRING1" little-endian */
#define RING_VERSION	1u
#define RING_BLOCK	128u			/* two lines: adjacent-line prefetch */
#define RING_HDR_MIN	4096u

#define REC_HDR		8u
#define REC_COMMITTED	0x80000000u
#define REC_PAD		0x40000000u
#define REC_LEN_MASK	0x3fffffffu

#define EC_W		0x80000000u		/* eventcount waiter bit */

enum ring_state {
	ST_INIT = 0,
	ST_ALIVE = 1,
	ST_CLOSED = 2,
	ST_DEAD = 3,
};

#define RING_KNOWN_FLAGS	IPCRING_F_SINGLE_MAP

static_assert(ATOMIC_INT_LOCK_FREE == 2, "32-bit atomics must be lock-free");
static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "64-bit atomics must be lock-free");

/* Block 0: written once by ipcring_create(), copied and validated on attach. */
struct ring_cfg {
	uint64_t magic;
	uint32_t version;
	uint32_t hdr_size;
	uint32_t capacity;
	uint32_t mask;
	uint32_t max_record;
	uint32_t align;
	uint32_t flags;
	uint32_t wait_mode;
	uint32_t spin_ns;
	uint32_t release_threshold;
	uint32_t creator_pid;
	uint32_t start_index;
};

/* Block 1: read-mostly control words (written on attach, close, death). */
struct ring_ctl {
	_Atomic uint32_t prod_state;
	_Atomic uint32_t cons_state;
	_Atomic uint32_t prod_pid;
	_Atomic uint32_t cons_pid;
};

struct ring_side_stats {
	_Atomic uint64_t msgs;
	_Atomic uint64_t bytes;
	_Atomic uint64_t flushes;
	_Atomic uint64_t spins;
	_Atomic uint64_t sleeps;
	_Atomic uint64_t wakes;
};

/* The shared header: each hot word alone in its own 128-byte block. */
struct ring_shm {
	union { struct ring_cfg cfg; char b0[RING_BLOCK]; };
	union { struct ring_ctl ctl; char b1[RING_BLOCK]; };
	union { _Atomic uint32_t tail; char b2[RING_BLOCK]; };	/* producer */
	union { _Atomic uint32_t head; char b3[RING_BLOCK]; };	/* consumer */
	union { _Atomic uint32_t data_ec; char b4[RING_BLOCK]; };
	union { _Atomic uint32_t space_ec; char b5[RING_BLOCK]; };
	union { struct ring_side_stats pstats; char b6[RING_BLOCK]; };
	union { struct ring_side_stats cstats; char b7[RING_BLOCK]; };
};

static_assert(sizeof(struct ring_shm) == 8 * RING_BLOCK, "header layout");
static_assert(offsetof(struct ring_shm, tail) == 2 * RING_BLOCK, "tail block");
static_assert(offsetof(struct ring_shm, head) == 3 * RING_BLOCK, "head block");
static_assert(offsetof(struct ring_shm, data_ec) == 4 * RING_BLOCK, "data_ec");
static_assert(offsetof(struct ring_shm, space_ec) == 5 * RING_BLOCK, "space_ec");
static_assert(sizeof(struct ring_shm) <= RING_HDR_MIN, "header fits a page");

/* Record header; w0 is the commit word (0 = nothing here yet). */
struct ring_rec {
	_Atomic uint32_t w0;	/* COMMITTED | PAD | len */
	uint32_t w1;		/* stamp: (uint32_t)pos */
};

struct ring_map;
struct stat;

/* Process-local handle. Hot fields first. */
struct ipcring {
	uint8_t *data;			/* data area; mapped twice unless single */
	struct ring_shm *shm;
	uint32_t mask;
	uint32_t cap;
	uint32_t align;
	uint32_t max_record;
	uint32_t pos;			/* next write (P) / read (C) position */
	/* producer */
	uint32_t head_cache;
	uint32_t need;			/* bytes the full path waits for */
	uint32_t res_len;
	bool reserved;
	bool unflushed;
	/* consumer */
	bool single_map;
	bool poll_rec;			/* readiness reads the commit word first */
	uint32_t unreleased;
	uint32_t release_threshold;
	uint32_t peek_rs;		/* record size of the peeked record, 0 = none */
	uint32_t peek_len;
	uint32_t idle_polls;
	/* batches (reserve_batch / peek_batch) */
	uint32_t bres_n;		/* records reserved by reserve_batch, 0 = none */
	uint32_t bres_len[IPCRING_BATCH_MAX];
	uint32_t bpeek_n;		/* records handed out by peek_batch */
	uint32_t bpeek_end[IPCRING_BATCH_MAX];	/* bytes from pos to each one's end */
	uint32_t bpeek_len[IPCRING_BATCH_MAX];
	/* both */
	int role;
	uint32_t wait_mode;
	uint64_t spin_ns;		/* 0 = no spinning */
	uint64_t poll_ns;
	uint64_t last_check_ns;
	uint64_t attach_ns;		/* when this side attached */
	struct ring_side_stats *my_stats;
	_Atomic uint32_t *my_state;
	_Atomic uint32_t *peer_state;
	_Atomic uint32_t *peer_pid;
	_Atomic uint32_t *wait_ec;	/* where this side sleeps */
	_Atomic uint32_t *notify_ec;	/* where the peer sleeps */
	int wait_efd;			/* eventfd this side sleeps on, or -1 */
	int notify_efd;			/* eventfd the peer sleeps on, or -1 */
	int efd;			/* owned eventfd (EVENTFD mode), or -1 */
	int peer_fd;			/* owned dup of ipcring_set_peer(), or -1 */
	int peer_kind;
	int auto_pidfd;			/* -1 not yet, -2 unavailable */
	struct ring_map *map;
	size_t data_len;		/* bytes mapped at data (cap, or 2 * cap) */
	struct ring_cfg cfg;		/* the validated private copy */
};

/* ready() callbacks: 1 = go on, 0 = keep waiting, < 0 = -errno */
typedef int (*ring_ready_fn)(struct ipcring *r, bool sc);

/* map.c */
int ring_map_get(int fd, const struct stat *st, const struct ring_cfg *cfg,
		 struct ring_map **out, struct ring_shm **shm, uint8_t **data,
		 size_t *data_len);
void ring_map_put(struct ring_map *m);

/* segment.c */
int ring_validate(const struct ring_shm *h, uint64_t fd_size, long page);
/* ipcring_attach(); @own_efd: @eventfd is the one ipcring_create() just made
 * in this process (the server's own ends), known to be a proper eventfd */
int ring_attach(struct ipcring **ring, int memfd, enum ipcring_role role, int eventfd,
		bool own_efd);

/*
 * The library's millisecond, in ns: what a timeout_ms or poll_ms counts.
 * The fuzzing build shortens it (mk/fuzz.mk), so that an input whose calls
 * time out runs the same spins, sleeps and liveness checks in a fraction of
 * the time instead of waiting real milliseconds.
 */
#ifndef RING_MS_NS
#define RING_MS_NS	1000000ull
#endif

/* wait.c */
int ring_wait(struct ipcring *r, ring_ready_fn ready, uint64_t deadline);
void ring_notify(struct ipcring *r);
void ring_wake_all(struct ipcring *r);
int ring_peer_check(struct ipcring *r);
void ring_efd_drain(int efd);
/* Time the calling thread spent polling, for ipcring_thread_poll_ns. */
void ring_poll_add(uint64_t ns);
uint64_t ring_deadline(int timeout_ms);

/* consumer.c */
int ring_cons_ready(struct ipcring *r, bool sc);
void ring_cons_publish(struct ipcring *r);
/* With a record handed out (peek, or a read_batch handler): is the one
 * after it committed already? A hint, for a run's replies (dispatch.c). */
bool ring_cons_more(const struct ipcring *r);

static inline uint64_t ring_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void ring_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/* Single-writer counters: a relaxed load and store, no locked RMW. */
static inline void stat_add(_Atomic uint64_t *c, uint64_t n)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

static inline uint32_t ring_rec_size(const struct ipcring *r, uint32_t len)
{
	return (REC_HDR + len + r->align - 1) & ~(r->align - 1);
}

static inline struct ring_rec *ring_rec_at(const struct ipcring *r, uint32_t pos)
{
	return (struct ring_rec *)(r->data + (pos & r->mask));
}

#endif /* IPCRING_INTERNAL_H */
