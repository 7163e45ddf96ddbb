// SPDX-License-Identifier: MIT
/* Spin doorbell: a shared ring counter that the waiter polls with a pause
 * instruction between reads. No system call on either side: the floor a
 * sleeping doorbell is compared with, at the price of a busy CPU. It must
 * not run with both sides on one CPU under SCHED_FIFO (the runner refuses
 * transports marked TP_SPINS there). */
#include <sched.h>
#include <stdatomic.h>

#include "ipclab/doorbell.h"
#include "ipclab/polling.h"

struct spin_db {
	_Atomic uint32_t rings;	/* rings so far (wraps) */
	uint32_t seen;		/* rings consumed; waiter only */
};

/* Polls between looks at the clock and the stop flag (a few microseconds:
 * a timeout or a stop is noticed at once). After SPIN_YIELD_AFTER polls in
 * vain the peer is probably not running: each look then also yields, so a
 * spinner that shares a CPU with its peer hands it over instead of burning
 * its time slice (more spinners than CPUs otherwise crawl at a few hundred
 * messages/s). Counted in polls, not time: the fast path reads no clock.
 * A wait that polled at all reads it at its start and end: that time is
 * waiting, not work (polling.h; --trace shows it as `polling`). */
#define SPIN_CHECK_EVERY 256
#define SPIN_YIELD_AFTER 2048

static int spin_create(void *shm, char *err, size_t errlen)
{
	return 0;
}

static int spin_wait(void *shm, uint64_t timeout_ns, const _Atomic int *stop)
{
	struct spin_db *s = shm;
	uint64_t deadline = 0, t0 = 0;
	uint32_t n = 0;
	int ret = 0;

	while (atomic_load_explicit(&s->rings, memory_order_acquire) == s->seen) {
		if (!t0)
			t0 = now_ns();
		cpu_relax();
		if (++n % SPIN_CHECK_EVERY)
			continue;
		if (stop_requested(stop)) {
			ret = -EINTR;
			break;
		}
		if (!deadline)
			deadline = db_deadline(timeout_ns);
		else if (now_ns() >= deadline) {
			ret = -ETIMEDOUT;
			break;
		}
		if (n >= SPIN_YIELD_AFTER) {
			sched_yield();
			n = SPIN_YIELD_AFTER;	/* a multiple of the check period */
		}
	}
	if (t0)
		polling_add(now_ns() - t0);
	if (!ret)
		s->seen++;
	return ret;
}

static int spin_ring(void *shm)
{
	struct spin_db *s = shm;

	atomic_fetch_add_explicit(&s->rings, 1, memory_order_release);
	return 0;
}

static void spin_destroy(void *shm)
{
}

const struct doorbell db_spin = {
	.name = "spin",
	.summary = "busy poll of a shared counter with a pause instruction (no syscall)",
	.flags = DB_SPIN | DB_UNINTERRUPTIBLE,
	.shm_size = sizeof(struct spin_db),
	.create = spin_create,
	.wait = spin_wait,
	.ring = spin_ring,
	.destroy = spin_destroy,
};
