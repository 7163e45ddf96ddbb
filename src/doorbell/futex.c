// SPDX-License-Identifier: MIT
/* futex doorbell: a shared 32-bit ring counter. ring() bumps it and always
 * makes the FUTEX_WAKE call (the cost being measured); wait() sleeps on the
 * counter's value while it equals what the waiter has already consumed. The
 * word is on a shared mapping, so never FUTEX_PRIVATE_FLAG. */
#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ipclab/doorbell.h"

struct futex_db {
	_Atomic uint32_t rings;	/* the futex word: rings so far (wraps) */
	uint32_t seen;		/* rings consumed; touched by the waiter only */
};

static long sys_futex(_Atomic uint32_t *uaddr, int op, uint32_t val,
		      const struct timespec *ts)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

static int futex_create(void *shm, char *err, size_t errlen)
{
	return 0;		/* zeroed memory is a valid, unrung doorbell */
}

static int futex_wait(void *shm, uint64_t timeout_ns, const _Atomic int *stop)
{
	struct futex_db *f = shm;
	uint64_t deadline = 0;
	struct timespec ts;

	for (;;) {
		uint32_t cur = atomic_load_explicit(&f->rings, memory_order_acquire);

		if (cur != f->seen) {
			f->seen++;
			return 0;
		}
		if (stop_requested(stop))
			return -EINTR;
		if (!deadline)
			deadline = db_deadline(timeout_ns);
		if (db_time_left(deadline, &ts))
			return -ETIMEDOUT;
		/* EAGAIN: rung between the load and the call; ETIMEDOUT is
		 * rechecked against the deadline at the top. */
		if (sys_futex(&f->rings, FUTEX_WAIT, cur, &ts) < 0 &&
		    errno != EAGAIN && errno != ETIMEDOUT)
			return -errno;
	}
}

static int futex_ring(void *shm)
{
	struct futex_db *f = shm;

	atomic_fetch_add_explicit(&f->rings, 1, memory_order_release);
	if (sys_futex(&f->rings, FUTEX_WAKE, 1, NULL) < 0)
		return -errno;
	return 0;
}

static void futex_destroy(void *shm)
{
}

const struct doorbell db_futex = {
	.name = "futex",
	.summary = "shared futex word: counter + FUTEX_WAIT/FUTEX_WAKE",
	.shm_size = sizeof(struct futex_db),
	.create = futex_create,
	.wait = futex_wait,
	.ring = futex_ring,
	.destroy = futex_destroy,
};
