// SPDX-License-Identifier: MIT
/* POSIX semaphore doorbell: an unnamed sem_t in the shared memory
 * (pshared = 1). ring() is sem_post, wait() is sem_clockwait on
 * CLOCK_MONOTONIC after a sem_trywait that needs no clock read. glibc's
 * sem_post only enters the kernel when a waiter sleeps. */
#include <semaphore.h>
#include <string.h>

#include "ipclab/doorbell.h"

struct sem_db {
	sem_t sem;
};

static int sem_db_create(void *shm, char *err, size_t errlen)
{
	struct sem_db *s = shm;

	if (sem_init(&s->sem, 1, 0) < 0)
		return errf(err, errlen, errno, "sem_init(pshared=1): %s", strerror(errno));
	return 0;
}

static int sem_db_wait(void *shm, uint64_t timeout_ns, const _Atomic int *stop)
{
	struct sem_db *s = shm;
	struct timespec abs;

	if (sem_trywait(&s->sem) == 0)
		return 0;
	if (errno != EAGAIN)
		return -errno;
	if (stop_requested(stop))
		return -EINTR;
	abs = ns_to_timespec(db_deadline(timeout_ns));
	if (sem_clockwait(&s->sem, CLOCK_MONOTONIC, &abs) < 0)
		return -errno;	/* ETIMEDOUT, EINTR (never restarted) */
	return 0;
}

static int sem_db_ring(void *shm)
{
	struct sem_db *s = shm;

	if (sem_post(&s->sem) < 0)
		return -errno;
	return 0;
}

static void sem_db_destroy(void *shm)
{
	struct sem_db *s = shm;

	sem_destroy(&s->sem);
}

const struct doorbell db_sem = {
	.name = "sem",
	.summary = "POSIX unnamed semaphore in shared memory: sem_post / sem_clockwait",
	.shm_size = sizeof(struct sem_db),
	.create = sem_db_create,
	.wait = sem_db_wait,
	.ring = sem_db_ring,
	.destroy = sem_db_destroy,
};
