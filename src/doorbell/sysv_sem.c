// SPDX-License-Identifier: MIT
/* SysV semaphore doorbell: a private one-semaphore set (semget
 * IPC_PRIVATE | IPC_EXCL, mode 0600), registered with cleanup before it
 * exists. ring() is semop(+1), wait() is semtimedop(-1) with a relative
 * timeout; every operation is a system call, unlike a POSIX semaphore. */
#include <string.h>
#include <sys/sem.h>

#include "ipclab/cleanup.h"
#include "ipclab/doorbell.h"

struct sysv_sem_db {
	int semid;
	int cleanup;		/* cleanup handle, owned by the parent */
};

static int sysv_sem_create(void *shm, char *err, size_t errlen)
{
	struct sysv_sem_db *s = shm;
	int h = cleanup_add_id(CL_SYSV_SEM, -1);

	if (h < 0)
		return errf(err, errlen, -h, "sysv-sem: cleanup registry: %s", strerror(-h));
	s->semid = semget(IPC_PRIVATE, 1, IPC_CREAT | IPC_EXCL | 0600);
	if (s->semid < 0) {
		int e = errno;

		cleanup_forget(h);
		return errf(err, errlen, e, "semget(IPC_PRIVATE): %s%s", strerror(e),
			    e == ENOSPC ? " (raise kernel.sem or remove stale sets with ipcrm)" : "");
	}
	cleanup_set_id(h, s->semid);
	s->cleanup = h;
	return 0;		/* a new set's value is 0 (Linux) */
}

static int sysv_sem_wait(void *shm, uint64_t timeout_ns, const _Atomic int *stop)
{
	struct sysv_sem_db *s = shm;
	struct sembuf op = { .sem_num = 0, .sem_op = -1, .sem_flg = 0 };
	struct timespec ts = ns_to_timespec(timeout_ns);

	/* Stopping: take a ring that is already there, but do not sleep. */
	if (stop_requested(stop))
		op.sem_flg = IPC_NOWAIT;
	if (semtimedop(s->semid, &op, 1, &ts) == 0)
		return 0;
	if (errno == EAGAIN && stop_requested(stop))
		return -EINTR;
	if (errno == EAGAIN)
		return -ETIMEDOUT;
	if (errno == EIDRM || errno == EINVAL)
		return -EPIPE;	/* the set was removed: the run is over */
	return -errno;
}

static int sysv_sem_ring(void *shm)
{
	struct sysv_sem_db *s = shm;
	struct sembuf op = { .sem_num = 0, .sem_op = 1, .sem_flg = 0 };

	if (semop(s->semid, &op, 1) < 0)
		return errno == EIDRM || errno == EINVAL ? -EPIPE : -errno;
	return 0;
}

static void sysv_sem_destroy(void *shm)
{
	struct sysv_sem_db *s = shm;

	cleanup_run_one(s->cleanup);
	s->semid = -1;
}

const struct doorbell db_sysv_sem = {
	.name = "sysv-sem",
	.summary = "SysV semaphore (semget IPC_PRIVATE): semop(+1) / semtimedop(-1)",
	.flags = DB_SYSV,
	.shm_size = sizeof(struct sysv_sem_db),
	.create = sysv_sem_create,
	.wait = sysv_sem_wait,
	.ring = sysv_sem_ring,
	.destroy = sysv_sem_destroy,
};
