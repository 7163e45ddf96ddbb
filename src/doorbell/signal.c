// SPDX-License-Identifier: MIT
/* Signal doorbell: the wakeup is a realtime signal queued to the waiting
 * thread (rt_tgsigqueueinfo, i.e. sigqueue aimed at one thread, so it works
 * for threads and processes alike) and taken with sigtimedwait.
 *
 * The signal is blocked in the waiting thread by open(DB_WAITER), which
 * also records that thread; wait() must then run on that thread. The count
 * of rings lives in shared memory and the waiter announces when it is about
 * to sleep; ring() sends a signal only to an announced sleeper. Queuing one
 * signal per ring instead would fill RLIMIT_SIGPENDING whenever the waiter
 * is busy, and a thread waiting on several doorbells shares one queue: a
 * signal is only "look at your counters again". The signal stays blocked
 * in that thread after close(), so a late stray one can never kill it. */
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ipclab/doorbell.h"

struct signal_db {
	_Atomic uint32_t rings;		/* rings so far (wraps) */
	uint32_t seen;			/* rings consumed; waiter only */
	_Atomic uint32_t sleeping;	/* waiter announced it sleeps */
	_Atomic int tgid, tid;		/* the waiting thread, set by open */
};

/* SIGRTMIN itself and the next few are left to others (glibc takes some
 * below SIGRTMIN; debuggers and profilers like the low ones). */
static int db_signo(void)
{
	return SIGRTMIN + 4;
}

static int signal_create(void *shm, char *err, size_t errlen)
{
	if (db_signo() > SIGRTMAX)
		return errf(err, errlen, ENOSYS, "signal doorbell: no free realtime signal");
	return 0;
}

static int signal_open(void *shm, enum db_side side, char *err, size_t errlen)
{
	struct signal_db *s = shm;
	sigset_t set;
	int r;

	if (side != DB_WAITER)
		return 0;
	sigemptyset(&set);
	sigaddset(&set, db_signo());
	r = pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (r)
		return errf(err, errlen, r, "signal doorbell: pthread_sigmask: %s", strerror(r));
	atomic_store(&s->tgid, (int)getpid());
	atomic_store(&s->tid, (int)gettid());
	return 0;
}

/* Sleep once until a signal or the deadline; 0 means "look again". */
static int signal_sleep(uint64_t deadline)
{
	struct timespec ts;
	sigset_t set;

	if (db_time_left(deadline, &ts))
		return -ETIMEDOUT;
	sigemptyset(&set);
	sigaddset(&set, db_signo());
	if (sigtimedwait(&set, NULL, &ts) >= 0 || errno == EAGAIN)
		return 0;
	return -errno;
}

static int signal_wait(void *shm, uint64_t timeout_ns, const _Atomic int *stop)
{
	struct signal_db *s = shm;
	uint64_t deadline = 0;
	int r = 0;

	for (;;) {
		if (atomic_load(&s->rings) != s->seen)
			break;
		if (stop_requested(stop)) {
			r = -EINTR;
			break;
		}
		if (!deadline)
			deadline = db_deadline(timeout_ns);
		/* Announce, then look again: either this load sees the ring
		 * or the ringer sees the announcement (both seq_cst). */
		atomic_store(&s->sleeping, 1);
		if (atomic_load(&s->rings) != s->seen)
			break;
		r = signal_sleep(deadline);
		if (r)
			break;
	}
	atomic_store(&s->sleeping, 0);
	if (!r)
		s->seen++;
	return r;
}

static int signal_ring(void *shm)
{
	struct signal_db *s = shm;
	siginfo_t info;

	atomic_fetch_add(&s->rings, 1);
	if (!atomic_load(&s->sleeping) || !atomic_exchange(&s->sleeping, 0))
		return 0;
	memset(&info, 0, sizeof(info));
	info.si_signo = db_signo();
	info.si_code = SI_QUEUE;
	if (syscall(SYS_rt_tgsigqueueinfo, atomic_load(&s->tgid), atomic_load(&s->tid),
		    info.si_signo, &info) < 0)
		return errno == ESRCH ? -EPIPE : -errno;
	return 0;
}

/* Take stray signals queued for this thread, so they do not pile up. */
static void signal_close(void *shm, enum db_side side)
{
	struct timespec zero = { 0, 0 };
	sigset_t set;

	if (side != DB_WAITER)
		return;
	sigemptyset(&set);
	sigaddset(&set, db_signo());
	while (sigtimedwait(&set, NULL, &zero) >= 0)
		;
}

static void signal_destroy(void *shm)
{
}

const struct doorbell db_signal = {
	.name = "signal",
	.summary = "realtime signal queued to the waiting thread + sigtimedwait",
	.flags = DB_SAME_WAITER,
	.shm_size = sizeof(struct signal_db),
	.create = signal_create,
	.open = signal_open,
	.wait = signal_wait,
	.ring = signal_ring,
	.close = signal_close,
	.destroy = signal_destroy,
};
