/* SPDX-License-Identifier: MIT */
/* Doorbells: the wakeup half of "payload in shared memory + a wakeup" (the
 * JACK pattern). A doorbell lives in a piece of shared memory given by its
 * user; one side waits, the other rings. Every doorbell counts: a ring that
 * comes before the wait is never lost, and n rings satisfy n waits. The
 * shared-memory transports (src/transport/shm_slot.c) use one per direction
 * for "data" and one for "space". */
#ifndef IPCLAB_DOORBELL_H
#define IPCLAB_DOORBELL_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "ipclab/util.h"

enum db_side {
	DB_WAITER,		/* the one side that calls wait() */
	DB_RINGER,		/* the one side that calls ring() */
};

enum db_flags {
	DB_SPIN = 1u << 0,	/* wait() busy-polls a CPU, never sleeps */
	DB_FD = 1u << 1,	/* backed by file descriptors (inherited by fork) */
	DB_SYSV = 1u << 2,	/* backed by a SysV IPC object (registered with cleanup) */
	DB_SAME_WAITER = 1u << 3, /* wait() must run on the thread that opened DB_WAITER */
	DB_UNINTERRUPTIBLE = 1u << 4, /* a signal handler does not end wait(): only
				       * the stop word or the timeout does */
};

/* Hooks get `shm`: the doorbell's own shm_size bytes, 64-byte aligned and
 * zeroed, in memory shared by both sides (MAP_SHARED before fork, or one
 * address space). create/destroy run once, in the parent; open/close once
 * per side, in the process or thread that will use that side. */
struct doorbell {
	const char *name;	/* "futex": the transport is "shm-" name */
	const char *summary;	/* one line for `ipclab list` */
	unsigned flags;
	size_t shm_size;
	/* 0 or -errno with err filled; on failure nothing is left behind. */
	int (*create)(void *shm, char *err, size_t errlen);
	/* Optional: per-side setup (the signal doorbell records the waiting
	 * thread and blocks its signal there). */
	int (*open)(void *shm, enum db_side side, char *err, size_t errlen);
	/* Wait at most timeout_ns for a ring and consume it: 0 rung,
	 * -ETIMEDOUT, -EINTR (a signal handler ran or a stop was requested),
	 * or another -errno (the object is gone). stop is the caller's stop
	 * word (its tp_config's): a wait that can block looks at it before
	 * blocking, a spin polls it; NULL never asks. */
	int (*wait)(void *shm, uint64_t timeout_ns, const _Atomic int *stop);
	/* Ring once: 0 or -errno. Never blocks. */
	int (*ring)(void *shm);
	void (*close)(void *shm, enum db_side side);	/* optional */
	/* Only after a successful create. */
	void (*destroy)(void *shm);
};

extern const struct doorbell db_futex, db_eventfd, db_pipe, db_sem, db_cond,
	db_sysv_sem, db_signal, db_spin;

/* The list (src/doorbell/registry.c). */
extern const struct doorbell *const doorbells[];
extern const size_t n_doorbells;
const struct doorbell *doorbell_find(const char *name);

/* Shared-memory footprint of a doorbell rounded up to whole cache lines, so
 * two doorbells side by side never share a line. */
static inline size_t doorbell_span(const struct doorbell *db)
{
	return (db->shm_size + 63) & ~(size_t)63;
}

/* --- helpers for doorbell implementations --- */

/* Absolute CLOCK_MONOTONIC deadline for a relative timeout. Only read on
 * the path that is about to block, never on a ring or an already-rung wait. */
static inline uint64_t db_deadline(uint64_t timeout_ns)
{
	uint64_t now = now_ns();

	return timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
}

/* Time left until deadline as a relative timespec; -ETIMEDOUT once past. */
static inline int db_time_left(uint64_t deadline, struct timespec *ts)
{
	uint64_t now = now_ns();

	if (now >= deadline)
		return -ETIMEDOUT;
	*ts = ns_to_timespec(deadline - now);
	return 0;
}

/* fd-backed doorbells: sleep until fd is readable or the deadline passes.
 * 0 means "look again"; -ETIMEDOUT, -EINTR or -errno otherwise. */
int db_poll_in(int fd, uint64_t deadline, const _Atomic int *stop);

#endif
