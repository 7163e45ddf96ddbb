// SPDX-License-Identifier: MIT
/* Register before you create (cleanup.h). A fixed table, so the signal path
 * never allocates; only the process that registered an entry acts on it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mqueue.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/random.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipclab/cleanup.h"
#include "ipclab/registry.h"
#include "ipclab/util.h"

#define CL_MAX 1024
#define CL_NAME PATH_MAX	/* a name that does not fit is refused, never cut */

/* The entries' names live apart from them: a scan of the table (every
 * process's exit runs one) reads 24 KiB, not the 4 MiB of names, which
 * it would fault in a page an entry. */
struct cl_entry {
	volatile int used;
	enum cleanup_kind kind;
	pid_t owner;
	long id;
	char *name;	/* cl_names[its index] */
};

static struct cl_entry cl_table[CL_MAX];
static char cl_names[CL_MAX][CL_NAME];
static pthread_mutex_t cl_lock = PTHREAD_MUTEX_INITIALIZER;
static char cl_dir[CL_NAME];
static int cl_dir_handle = -1;

static int cl_alloc(enum cleanup_kind kind, const char *name, long id)
{
	int h = -ENOMEM;

	if (name && strlen(name) >= CL_NAME)
		return -ENAMETOOLONG;
	pthread_mutex_lock(&cl_lock);
	for (int i = 0; i < CL_MAX; i++) {
		if (!cl_table[i].used) {
			cl_table[i].kind = kind;
			cl_table[i].owner = getpid();
			cl_table[i].id = id;
			cl_table[i].name = cl_names[i];
			snprintf(cl_names[i], CL_NAME, "%s", name ? name : "");
			__atomic_store_n(&cl_table[i].used, 1, __ATOMIC_RELEASE);
			h = i;
			/* on disk too, for a run that no handler sees end */
			registry_note_add(h, kind, id, name);
			break;
		}
	}
	pthread_mutex_unlock(&cl_lock);
	return h;
}

int cleanup_add(enum cleanup_kind kind, const char *name)
{
	return cl_alloc(kind, name, -1);
}

int cleanup_add_id(enum cleanup_kind kind, long id)
{
	return cl_alloc(kind, NULL, id);
}

void cleanup_set_id(int h, long id)
{
	if (h >= 0 && h < CL_MAX) {
		cl_table[h].id = id;
		registry_note_id(h, id);
	}
}

static void cl_act(struct cl_entry *e)
{
	int status;

	switch (e->kind) {
	case CL_PATH:
		unlink(e->name);
		break;
	case CL_DIR:
		rmdir(e->name);
		break;
	case CL_POSIX_MQ:
		mq_unlink(e->name);
		break;
	case CL_POSIX_SHM:
		shm_unlink(e->name);
		break;
	case CL_SYSV_MSG:
		if (e->id >= 0)
			msgctl((int)e->id, IPC_RMID, NULL);
		break;
	case CL_SYSV_SEM:
		if (e->id >= 0)
			semctl((int)e->id, 0, IPC_RMID);
		break;
	case CL_SYSV_SHM:
		if (e->id >= 0)
			shmctl((int)e->id, IPC_RMID, NULL);
		break;
	case CL_PID:
		if (e->id > 0) {
			kill((pid_t)e->id, SIGKILL);
			waitpid((pid_t)e->id, &status, 0);
		}
		break;
	case CL_QB_IPC:
		cleanup_qb_ipc(e->name);
		break;
	}
}

/* Does name hold "-<service>-" (libqb's ring files: qb-request-<service>-header)? */
static int qb_names_service(const char *name, const char *service)
{
	size_t sl = strlen(service);

	for (const char *p = strchr(name, '-'); p; p = strchr(p + 1, '-'))
		if (strncmp(p + 1, service, sl) == 0 && p[1 + sl] == '-')
			return 1;
	return 0;
}

/* For each entry of the directory dfd (getdents64, no allocation): fn. */
static void qb_each(int dfd, void (*fn)(int dfd, const char *name, unsigned char type, void *arg),
		    void *arg)
{
	char buf[4096] __attribute__((aligned(8)));
	long n;

	while ((n = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0)
		for (long off = 0; off < n;) {
			struct cl_dirent64 {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (void *)(buf + off);

			if (strcmp(d->name, ".") && strcmp(d->name, ".."))
				fn(dfd, d->name, d->type, arg);
			off += d->reclen;
		}
}

struct qb_walk {
	const char *service;
	int found, removed;
};

static void qb_find(int dfd, const char *name, unsigned char type, void *arg)
{
	struct qb_walk *w = arg;

	(void)dfd;
	(void)type;
	if (qb_names_service(name, w->service))
		w->found = 1;
}

static void qb_unlink(int dfd, const char *name, unsigned char type, void *arg)
{
	(void)type;
	(void)arg;
	unlinkat(dfd, name, 0);
}

/* A pid written in decimal at *p up to the next '-': it, with *p moved
 * past the '-', or 0 (no allocation, no stdio: the signal path runs this). */
static pid_t qb_name_pid(const char **p)
{
	long v = 0;
	const char *q = *p;

	for (; *q >= '0' && *q <= '9' && v < (1L << 30); q++)
		v = v * 10 + (*q - '0');
	if (q == *p || *q != '-')
		return 0;
	*p = q + 1;
	return (pid_t)v;
}

/* libqb names a connection's directory qb-<pid>-<pid>-<fd>-XXXXXX, and
 * one made for a connection that then failed (out of descriptors, a stop
 * at the wrong moment) can stay behind empty, holding no service's name:
 * it goes when both its processes are gone. rmdir takes only an empty one. */
static int qb_orphan(int shm, const char *name)
{
	const char *p = name + 3;
	pid_t a = qb_name_pid(&p), b = a ? qb_name_pid(&p) : 0;

	if (!a || !b || !(kill(a, 0) < 0 && errno == ESRCH) || !(kill(b, 0) < 0 && errno == ESRCH))
		return 0;
	return unlinkat(shm, name, AT_REMOVEDIR) == 0;
}

/* An entry of /dev/shm: a directory qb-* of ours that holds the service's
 * rings loses its files, then goes; a ring file of the service lying
 * right in /dev/shm (libqb's older layout) goes too; so does an empty
 * connection directory whose processes are gone (qb_orphan). */
static void qb_top(int shm, const char *name, unsigned char type, void *arg)
{
	struct qb_walk *w = arg, in = { .service = w->service };
	struct stat st;
	int fd;

	if (strncmp(name, "qb-", 3) || fstatat(shm, name, &st, AT_SYMLINK_NOFOLLOW) ||
	    st.st_uid != geteuid())
		return;
	(void)type;
	if (S_ISREG(st.st_mode)) {
		if (qb_names_service(name, w->service) && unlinkat(shm, name, 0) == 0)
			w->removed++;
		return;
	}
	if (!S_ISDIR(st.st_mode))
		return;
	fd = openat(shm, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	qb_each(fd, qb_find, &in);
	if (in.found) {
		lseek(fd, 0, SEEK_SET);
		qb_each(fd, qb_unlink, NULL);
		if (unlinkat(shm, name, AT_REMOVEDIR) == 0)
			w->removed++;
	} else if (qb_orphan(shm, name)) {
		w->removed++;
	}
	close(fd);
}

int cleanup_qb_ipc(const char *service)
{
	struct qb_walk w = { .service = service };
	int shm;

	if (!service || !*service)
		return 0;
	shm = open("/dev/shm", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (shm < 0)
		return 0;
	qb_each(shm, qb_top, &w);
	close(shm);
	return w.removed;
}

void cleanup_run_one(int h)
{
	if (h < 0 || h >= CL_MAX || !cl_table[h].used || cl_table[h].owner != getpid())
		return;
	cl_act(&cl_table[h]);
	__atomic_store_n(&cl_table[h].used, 0, __ATOMIC_RELEASE);
	registry_note_gone(h);
}

void cleanup_forget(int h)
{
	if (h >= 0 && h < CL_MAX) {
		__atomic_store_n(&cl_table[h].used, 0, __ATOMIC_RELEASE);
		registry_note_gone(h);
	}
}

void cleanup_all(void)
{
	pid_t me = getpid();

	/* children first (they may hold objects open), then newest first */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = CL_MAX - 1; i >= 0; i--) {
			struct cl_entry *e = &cl_table[i];

			if (!e->used || e->owner != me || (pass == 0) != (e->kind == CL_PID))
				continue;
			if (e->kind == CL_DIR)
				continue;
			cl_act(e);
			e->used = 0;
			registry_note_gone(i);
		}
	}
	for (int i = CL_MAX - 1; i >= 0; i--) {
		struct cl_entry *e = &cl_table[i];

		if (e->used && e->owner == me && e->kind == CL_DIR) {
			cl_act(e);
			e->used = 0;
			registry_note_gone(i);
		}
	}
	if (cl_dir_handle >= 0 && cl_table[cl_dir_handle].owner == me)
		cl_dir[0] = '\0';
	registry_close();
}

void cleanup_unique_name(char *buf, size_t len, const char *prefix)
{
	uint64_t r = 0;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
		r = now_ns() ^ ((uint64_t)getpid() << 32);
	snprintf(buf, len, "%s-%d-%016llx", prefix, (int)getpid(), (unsigned long long)r);
}

const char *cleanup_private_dir(void)
{
	char tmpl[CL_NAME];
	const char *tmp = getenv("TMPDIR");

	pthread_mutex_lock(&cl_lock);
	if (cl_dir[0]) {
		pthread_mutex_unlock(&cl_lock);
		return cl_dir;
	}
	pthread_mutex_unlock(&cl_lock);
	int n = snprintf(tmpl, sizeof(tmpl), "%s/ipclab-XXXXXX", tmp && *tmp ? tmp : "/tmp"), h = -1;

	if ((size_t)n >= sizeof(tmpl))
		return errno = ENAMETOOLONG, NULL;
	/* mkdtemp's name (six random letters and digits), made here so that the
	 * run registry holds the very name before the directory exists: a
	 * SIGKILL between the two then leaves nothing `ipclab clean` cannot
	 * find (with mkdtemp the registry could only hold the template) */
	for (int tries = 0; h < 0; tries++) {
		static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
		unsigned char r[6];

		if (getrandom(r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
			for (size_t i = 0; i < sizeof(r); i++)
				r[i] = (unsigned char)((now_ns() >> (8 * i)) ^ (uint64_t)getpid() ^ tries);
		for (size_t i = 0; i < sizeof(r); i++)
			tmpl[n - 6 + (int)i] = set[r[i] % (sizeof(set) - 1)];
		h = cleanup_add(CL_DIR, tmpl);
		if (h < 0)
			return errno = -h, NULL;
		if (!mkdir(tmpl, 0700))
			break;
		int e = errno;

		cleanup_forget(h);	/* not ours: never removed */
		h = -1;
		if (e != EEXIST || tries >= 100)
			return errno = e, NULL;
	}
	pthread_mutex_lock(&cl_lock);
	snprintf(cl_dir, sizeof(cl_dir), "%s", tmpl);
	cl_dir_handle = h;
	pthread_mutex_unlock(&cl_lock);
	return cl_dir;
}
