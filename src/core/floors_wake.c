// SPDX-License-Identifier: MIT
/* The wake-to-run and system call floors (include/ipclab/floors.h).
 *
 * Wake-to-run: a thread on the run's second CPU waits on a futex; a thread
 * on the first, once the sleeper has said it is going to wait and a pause
 * has let its CPU go idle, reads the clock and wakes it; the sleeper reads
 * the clock as soon as it runs. A wait that never slept (the word changed
 * first) is not counted. Onto a busy CPU, a third thread of ipclab's own,
 * at the same policy (SCHED_OTHER), spins on the sleeper's CPU all along:
 * the woken thread must take the CPU from it.
 *
 * System call: getppid(), which the kernel answers without a lock, timed
 * over batches. */
#include <errno.h>
#include <linux/futex.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ipclab/util.h"
#include "floors_int.h"

#define WAKE_N 200			/* wakes a floor is the median of (at most) */
#define WAKE_BUSY_N 100			/* onto a busy CPU: each may wait out a slice */
#define WAKE_PAUSE_NS (200 * NSEC_PER_USEC)	/* the sleeper's CPU goes idle meanwhile */
#define WAKE_SLICE_NS (100 * NSEC_PER_MSEC)	/* a futex wait's timeout */
#define WAKE_DEADLINE_NS (10 * NSEC_PER_SEC)
#define SYSCALL_BATCH 200
#define SYSCALL_N 300

struct wake {
	_Atomic uint32_t word;		/* the futex: wakes sent */
	_Atomic uint32_t waiting;	/* waits the sleeper has begun */
	_Atomic uint64_t t_wake;	/* when the last wake was sent */
	_Atomic int stop, spinning;
	int cpus[2];
	uint32_t n;			/* wakes to send */
	uint64_t *lat;			/* n */
	unsigned got;
	int ret[2];			/* [0] waker, [1] sleeper */
};

static long futex(_Atomic uint32_t *w, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, w, op, val, ts, NULL, 0);
}

static void *sleeper(void *arg)
{
	struct wake *w = arg;
	struct timespec slice = ns_to_timespec(WAKE_SLICE_NS);
	int ret = floors_pin_self(w->cpus[1]);

	for (uint32_t i = 0; !ret && i < w->n && !atomic_load(&w->stop); i++) {
		bool slept = false;

		atomic_store(&w->waiting, i + 1);
		while (atomic_load(&w->word) == i && !atomic_load(&w->stop))
			slept = futex(&w->word, FUTEX_WAIT_PRIVATE, i, &slice) == 0;
		if (slept && atomic_load(&w->word) == i + 1)
			w->lat[w->got++] = now_ns() - atomic_load(&w->t_wake);
	}
	w->ret[1] = ret;
	return NULL;
}

static void *waker(void *arg)
{
	struct wake *w = arg;
	struct timespec pause = ns_to_timespec(WAKE_PAUSE_NS);
	uint64_t deadline = now_ns() + WAKE_DEADLINE_NS;
	int ret = floors_pin_self(w->cpus[0]);

	for (uint32_t i = 0; !ret && i < w->n; i++) {
		while (atomic_load(&w->waiting) != i + 1 && !ret)
			ret = atomic_load(&w->stop) || now_ns() > deadline ? -ETIMEDOUT : sched_yield();
		if (ret)
			break;
		nanosleep(&pause, NULL);
		atomic_store(&w->t_wake, now_ns());
		atomic_store(&w->word, i + 1);
		futex(&w->word, FUTEX_WAKE_PRIVATE, 1, NULL);
	}
	w->ret[0] = ret;
	if (ret)
		atomic_store(&w->stop, 1);
	return NULL;
}

/* The busy thread: on the sleeper's CPU until the end. */
static void *spinner(void *arg)
{
	struct wake *w = arg;

	if (!floors_pin_self(w->cpus[1]))
		atomic_store(&w->spinning, 1);
	while (!atomic_load_explicit(&w->stop, memory_order_relaxed))
		cpu_relax();
	return NULL;
}

/* The spinner running on its CPU (false: it could not be pinned there). */
static bool spinner_started(struct wake *w, pthread_t *t)
{
	uint64_t deadline = now_ns() + NSEC_PER_SEC;

	if (pthread_create(t, NULL, spinner, w))
		return false;
	while (!atomic_load(&w->spinning) && now_ns() < deadline)
		sched_yield();
	if (atomic_load(&w->spinning))
		return true;
	atomic_store(&w->stop, 1);
	pthread_join(*t, NULL);
	return false;
}

void floors_wake(const int cpus[2], bool busy, struct floor_stat *s)
{
	struct wake w = { .cpus = { cpus[0], cpus[1] }, .n = busy ? WAKE_BUSY_N : WAKE_N };
	pthread_t t[2], spin;
	int ret = 0;

	floors_stat(NULL, 0, s);
	if (cpus[0] < 0 || cpus[1] < 0 || !(w.lat = calloc(WAKE_N, sizeof(*w.lat))))
		goto out;
	if (busy && !spinner_started(&w, &spin))
		goto out;
	if (pthread_create(&t[1], NULL, sleeper, &w)) {
		ret = -EAGAIN;
	} else if (pthread_create(&t[0], NULL, waker, &w)) {
		atomic_store(&w.stop, 1);
		pthread_join(t[1], NULL);
		ret = -EAGAIN;
	} else {
		ret = floors_join2(t, &w.stop, WAKE_DEADLINE_NS + NSEC_PER_SEC);
	}
	atomic_store(&w.stop, 1);
	if (busy)
		pthread_join(spin, NULL);
	if (!ret && !w.ret[0] && !w.ret[1])
		floors_stat(w.lat, w.got, s);
out:
	free(w.lat);
}

static void *syscall_loop(void *arg)
{
	uint64_t *v = arg;

	if (floors_pin_self((int)v[0]))
		return v;
	for (unsigned i = 0; i < SYSCALL_N; i++) {
		uint64_t t0 = now_ns();

		for (unsigned k = 0; k < SYSCALL_BATCH; k++)
			syscall(SYS_getppid);
		v[i] = now_ns() - t0;
	}
	return NULL;
}

void floors_syscall(int cpu, struct floor_stat *s)
{
	uint64_t *v = calloc(SYSCALL_N, sizeof(*v));
	void *failed = v;
	pthread_t t;

	floors_stat(NULL, 0, s);
	if (!v || cpu < 0) {
		free(v);
		return;
	}
	v[0] = (uint64_t)cpu;
	if (!pthread_create(&t, NULL, syscall_loop, v))
		pthread_join(t, &failed);
	if (!failed) {	/* per call: the batches' figures over their length */
		floors_stat(v, SYSCALL_N, s);
		s->median_ns /= SYSCALL_BATCH;
		s->p10_ns /= SYSCALL_BATCH;
		s->p90_ns /= SYSCALL_BATCH;
	}
	free(v);
}
