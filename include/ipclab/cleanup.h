/* SPDX-License-Identifier: MIT */
/* Register before you create: every named object, file, directory and child
 * process is known here before it exists, and is removed on every exit path
 * of the process that registered it (normal exit, error, SIGINT/SIGTERM).
 * Registration happens in the parent only; children never clean up. */
#ifndef IPCLAB_CLEANUP_H
#define IPCLAB_CLEANUP_H

#include <sys/types.h>

enum cleanup_kind {
	CL_PATH,	/* unlink(path) */
	CL_DIR,		/* rmdir(path) (after everything inside it) */
	CL_POSIX_MQ,	/* mq_unlink(name) */
	CL_POSIX_SHM,	/* shm_unlink(name) */
	CL_SYSV_MSG,	/* msgctl(id, IPC_RMID) */
	CL_SYSV_SEM,	/* semctl(id, 0, IPC_RMID) */
	CL_SYSV_SHM,	/* shmctl(id, IPC_RMID) */
	CL_PID,		/* kill(pid, SIGKILL) + waitpid */
	CL_QB_IPC,	/* name = a libqb IPC service: its rings' directories in /dev/shm */
};

/* Returns a handle (>= 0) or -ENOMEM. Names are copied. */
int cleanup_add(enum cleanup_kind kind, const char *name);
int cleanup_add_id(enum cleanup_kind kind, long id);
/* Set the id of a handle registered before the object existed (-1 = none yet). */
void cleanup_set_id(int handle, long id);
/* Remove one object now (if it still exists) and forget it. Idempotent. */
void cleanup_run_one(int handle);
/* Forget a handle without acting (a child reaped normally). */
void cleanup_forget(int handle);
/* Remove everything registered, newest first. Async-signal-safe enough to be
 * called from the fatal-signal path; only acts in the registering process. */
void cleanup_all(void);

/* Remove the directories /dev/shm/qb-* of this uid that hold the rings of
 * libqb IPC service `service` (libqb names them itself, with a random
 * part): each one's files, then the directory. Raw system calls only, so
 * the fatal-signal path may use it. Returns how many were removed. */
int cleanup_qb_ipc(const char *service);

/* A unique, unpredictable name: "<prefix>-<pid>-<random hex>". */
void cleanup_unique_name(char *buf, size_t len, const char *prefix);

/* The run's private directory (mkdtemp, 0700), created on first use and
 * registered for removal. NULL with errno on failure. */
const char *cleanup_private_dir(void);

#endif
