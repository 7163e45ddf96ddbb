// SPDX-License-Identifier: MIT
/* Condition-variable doorbell: a process-shared mutex + condvar (clock
 * CLOCK_MONOTONIC) guarding a ring counter, the textbook monitor. The mutex
 * is robust so that a peer that dies holding it is reported, not waited
 * for. pthread_cond_timedwait never returns EINTR: a stop request ends a
 * wait only when its timeout does (callers wait in short slices). */
#include <pthread.h>
#include <string.h>

#include "ipclab/doorbell.h"

struct cond_db {
	pthread_mutex_t mtx;
	pthread_cond_t cond;
	uint64_t rings, seen;	/* guarded by mtx */
};

static int cond_init(struct cond_db *c)
{
	pthread_mutexattr_t ma;
	pthread_condattr_t ca;
	int r;

	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
	r = pthread_mutex_init(&c->mtx, &ma);
	pthread_mutexattr_destroy(&ma);
	if (r)
		return r;
	pthread_condattr_init(&ca);
	pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	r = pthread_cond_init(&c->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (r)
		pthread_mutex_destroy(&c->mtx);
	return r;
}

static int cond_create(void *shm, char *err, size_t errlen)
{
	int r = cond_init(shm);

	if (r)
		return errf(err, errlen, r, "process-shared mutex/condvar init: %s", strerror(r));
	return 0;
}

/* Lock; a holder that died leaves the state consistent enough (a counter),
 * but the peer is gone: -EOWNERDEAD says so. */
static int cond_lock(struct cond_db *c)
{
	int r = pthread_mutex_lock(&c->mtx);

	if (r == EOWNERDEAD) {
		pthread_mutex_consistent(&c->mtx);
		pthread_mutex_unlock(&c->mtx);
		return -EOWNERDEAD;
	}
	return -r;
}

static int cond_wait(void *shm, uint64_t timeout_ns, const _Atomic int *stop)
{
	struct cond_db *c = shm;
	struct timespec abs = { 0, 0 };
	int r = cond_lock(c);

	if (r)
		return r;
	while (c->rings == c->seen) {
		if (stop_requested(stop)) {
			r = -EINTR;
			break;
		}
		if (!abs.tv_sec && !abs.tv_nsec)
			abs = ns_to_timespec(db_deadline(timeout_ns));
		r = pthread_cond_timedwait(&c->cond, &c->mtx, &abs);
		if (r == EOWNERDEAD) {
			pthread_mutex_consistent(&c->mtx);
			r = -EOWNERDEAD;
			break;
		}
		if (r == ETIMEDOUT && c->rings == c->seen) {
			r = stop_requested(stop) ? -EINTR : -ETIMEDOUT;
			break;
		}
		if (r && r != ETIMEDOUT) {
			r = -r;
			break;
		}
		r = 0;
	}
	if (!r)
		c->seen++;
	pthread_mutex_unlock(&c->mtx);
	return r;
}

static int cond_ring(void *shm)
{
	struct cond_db *c = shm;
	int r = cond_lock(c);

	if (r)
		return r;
	c->rings++;
	r = pthread_cond_signal(&c->cond);
	pthread_mutex_unlock(&c->mtx);
	return -r;
}

/* No pthread_cond_destroy(): glibc's waits for every waiter to leave, and a
 * waiter that was SIGKILLed never does (the run hung). The mapping goes away
 * with the channel, which is all a process-shared condvar needs. */
static void cond_destroy(void *shm)
{
	(void)shm;
}

const struct doorbell db_cond = {
	.name = "cond",
	.summary = "process-shared pthread mutex + condvar around a ring counter",
	.flags = DB_UNINTERRUPTIBLE,
	.shm_size = sizeof(struct cond_db),
	.create = cond_create,
	.wait = cond_wait,
	.ring = cond_ring,
	.destroy = cond_destroy,
};
