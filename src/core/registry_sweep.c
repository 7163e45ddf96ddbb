// SPDX-License-Identifier: MIT
/* registry_sweep(): read the files of runs that are gone (registry.c writes
 * them) and remove what they still list, checking before each removal that
 * the object is still the one the run made. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mqueue.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipclab/cleanup.h"
#include "ipclab/registry.h"
#include "ipclab/util.h"
#include "registry_int.h"

#define REG_MAX 1024

struct run_head {
	int pid;
	unsigned long long start;
	char boot[64];
	unsigned long ipcns, mntns;
	unsigned uid;
	long long wall;
};

struct run_obj {
	bool live;
	int kind;
	long id;
	unsigned long long start;	/* CL_PID: the child's start time */
	char *name;
};

struct sweep {
	FILE *out;
	bool dry;
	struct sweep_report *rep;
	struct run_head h;
	bool same_boot, same_ipc, same_mnt;
	struct run_obj obj[REG_MAX];
};

static const char *const kind_names[] = {
	[CL_PATH] = "file", [CL_DIR] = "directory", [CL_POSIX_MQ] = "posix-mq",
	[CL_POSIX_SHM] = "posix-shm", [CL_SYSV_MSG] = "sysv-msg", [CL_SYSV_SEM] = "sysv-sem",
	[CL_SYSV_SHM] = "sysv-shm", [CL_PID] = "process",
	[CL_QB_IPC] = "libqb-ipc rings",
};

static char *from_hex(const char *s)
{
	size_t n = strlen(s);
	char *out = malloc(n / 2 + 1);

	if (!out || n % 2)
		return free(out), NULL;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1 || !v)
			return free(out), NULL;
		out[i] = (char)v;
	}
	out[n / 2] = '\0';
	return out;
}

/* One record line into the table; malformed lines are ignored. */
static void parse_record(struct sweep *sw, char *line)
{
	int h, kind;
	long id;
	unsigned long long start;
	char hex[2 * PATH_MAX + 2];

	int n;

	if (line[0] == '+' && (n = sscanf(line, "+ %d %d %ld %8193s", &h, &kind, &id, hex)) >= 3 &&
	    h >= 0 && h < REG_MAX && kind >= CL_PATH && kind <= CL_QB_IPC) {
		free(sw->obj[h].name);
		sw->obj[h] = (struct run_obj){ .live = true, .kind = kind, .id = id };
		if (n == 4)
			sw->obj[h].name = from_hex(hex);
	} else if (line[0] == '=' && sscanf(line, "= %d %ld %llu", &h, &id, &start) == 3 &&
		   h >= 0 && h < REG_MAX) {
		sw->obj[h].id = id;
		sw->obj[h].start = start;
	} else if (line[0] == '-' && sscanf(line, "- %d", &h) == 1 && h >= 0 && h < REG_MAX) {
		sw->obj[h].live = false;
	}
}

static int read_run(struct sweep *sw, int fd)
{
	FILE *f = fdopen(dup(fd), "r");
	char *line = NULL;
	size_t cap = 0;
	int ret = -1;

	if (!f)
		return -1;
	if (getline(&line, &cap, f) > 0 &&
	    sscanf(line, "R 1 %d %llu %63s %lu %lu %u %lld", &sw->h.pid, &sw->h.start, sw->h.boot,
		   &sw->h.ipcns, &sw->h.mntns, &sw->h.uid, &sw->h.wall) == 7) {
		ret = 0;
		while (getline(&line, &cap, f) > 0)
			parse_record(sw, line);
	}
	free(line);
	fclose(f);
	return ret;
}

static void say(struct sweep *sw, const char *verb, const struct run_obj *o, const char *why)
{
	char what[64];

	if (!sw->out)
		return;
	if (o->name && o->name[0])
		fprintf(sw->out, "%s %s %s", verb, kind_names[o->kind], o->name);
	else
		fprintf(sw->out, "%s %s %ld", verb, kind_names[o->kind], o->id);
	snprintf(what, sizeof(what), " (run pid %d)", sw->h.pid);
	fprintf(sw->out, "%s%s%s\n", what, why ? ": " : "", why ? why : "");
}

/* A SysV object is still the run's: this user's, made since the run began. */
static const char *sysv_check(const struct sweep *sw, const struct run_obj *o)
{
	struct ipc_perm *perm;
	time_t ctime_s;
	struct msqid_ds m;
	struct semid_ds s;
	struct shmid_ds h;

	if (o->kind == CL_SYSV_MSG && msgctl((int)o->id, IPC_STAT, &m) == 0)
		perm = &m.msg_perm, ctime_s = m.msg_ctime;
	else if (o->kind == CL_SYSV_SEM && semctl((int)o->id, 0, IPC_STAT, &s) == 0)
		perm = &s.sem_perm, ctime_s = s.sem_ctime;
	else if (o->kind == CL_SYSV_SHM && shmctl((int)o->id, IPC_STAT, &h) == 0)
		perm = &h.shm_perm, ctime_s = h.shm_ctime;
	else
		return "gone";
	if (perm->cuid != geteuid() || perm->__key != IPC_PRIVATE)
		return "now another's";
	if ((long long)ctime_s < sw->h.wall - 1)
		return "older than the run";
	return NULL;
}

/* Why an object must be left alone, or NULL to remove it. */
static const char *keep_reason(const struct sweep *sw, const struct run_obj *o)
{
	/* pids, SysV ids and namespace numbers start again after a reboot */
	if (!sw->same_boot)
		return "recorded in another boot";
	switch (o->kind) {
	case CL_PID:
		if (o->id <= 0 || !o->start || proc_start_ticks((pid_t)o->id) != o->start)
			return "gone";
		return NULL;
	case CL_SYSV_MSG:
	case CL_SYSV_SEM:
	case CL_SYSV_SHM:
		if (!sw->same_ipc)
			return "in another IPC namespace";
		return o->id < 0 ? "never made" : sysv_check(sw, o);
	case CL_POSIX_MQ:
		return !sw->same_ipc ? "in another IPC namespace" : !o->name ? "no name" : NULL;
	default:
		return !sw->same_mnt ? "in another mount namespace" : !o->name ? "no name" : NULL;
	}
}

/* The run's private directory: its files first (none of them a directory,
 * never following a link), then the directory itself. */
static int remove_dir(const char *path)
{
	int dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	struct dirent *e;
	DIR *d;

	if (dfd < 0)
		return -errno;
	if (fstat(dfd, &st) || st.st_uid != geteuid() || !(d = fdopendir(dfd))) {
		close(dfd);
		return -EPERM;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(dfd, e->d_name, 0);
	closedir(d);
	return rmdir(path) ? -errno : 0;
}

/* Remove it; 0, or -errno (-ENOENT: it was gone already). */
static int remove_obj(const struct run_obj *o)
{
	int r = 0;

	switch (o->kind) {
	case CL_PID:
		r = kill((pid_t)o->id, SIGKILL);
		break;
	case CL_PATH:
		r = unlink(o->name);
		break;
	case CL_DIR:
		return remove_dir(o->name);
	case CL_QB_IPC:
		return cleanup_qb_ipc(o->name) > 0 ? 0 : -ENOENT;
	case CL_POSIX_MQ:
		r = mq_unlink(o->name);
		break;
	case CL_POSIX_SHM:
		r = shm_unlink(o->name);
		break;
	case CL_SYSV_MSG:
		r = msgctl((int)o->id, IPC_RMID, NULL);
		break;
	case CL_SYSV_SEM:
		r = semctl((int)o->id, 0, IPC_RMID);
		break;
	case CL_SYSV_SHM:
		r = shmctl((int)o->id, IPC_RMID, NULL);
		break;
	}
	return r ? -errno : 0;
}

static void act_on(struct sweep *sw, struct run_obj *o)
{
	const char *why = keep_reason(sw, o);
	int r;

	if (why) {
		if (strcmp(why, "gone") && strcmp(why, "never made")) {
			sw->rep->skipped++;
			say(sw, "skipped", o, why);
		}
		return;
	}
	if (sw->dry) {
		sw->rep->removed++;
		say(sw, "would remove", o, NULL);
		return;
	}
	r = remove_obj(o);
	if (r == 0) {
		sw->rep->removed++;
		say(sw, o->kind == CL_PID ? "killed" : "removed", o, NULL);
	} else if (r != -ENOENT) {
		sw->rep->skipped++;
		say(sw, "could not remove", o, strerror(-r));
	}
}

/* Children first (they may hold objects), then newest first, directories
 * last, as cleanup_all() does. */
static void sweep_run(struct sweep *sw)
{
	for (int pass = 0; pass < 3; pass++)
		for (int i = REG_MAX - 1; i >= 0; i--) {
			struct run_obj *o = &sw->obj[i];
			int want = o->kind == CL_PID ? 0 : o->kind == CL_DIR ? 2 : 1;

			if (o->live && want == pass)
				act_on(sw, o);
		}
}

static void clear_objs(struct sweep *sw)
{
	for (int i = 0; i < REG_MAX; i++) {
		free(sw->obj[i].name);
		sw->obj[i] = (struct run_obj){ 0 };
	}
}

/* One file of the directory: a dead run's is swept and removed. */
static void sweep_file(struct sweep *sw, int dfd, const char *name)
{
	bool pending = strncmp(name, ".new-", 5) == 0;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return;
	/* a header being written by a live process: not ours to judge yet */
	if (pending && proc_start_ticks((pid_t)atoi(name + 5))) {
		close(fd);
		return;
	}
	/* the run, or one of its children, still holds its shared lock */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    flock(fd, LOCK_EX | LOCK_NB)) {
		if (!pending)
			sw->rep->live_runs++;
		close(fd);
		return;
	}
	if (!pending && read_run(sw, fd) == 0 && sw->h.uid == geteuid()) {
		char boot[64];

		sw->rep->dead_runs++;
		registry_boot_id(boot, sizeof(boot));
		sw->same_boot = strcmp(boot, "-") && strcmp(boot, sw->h.boot) == 0;
		sw->same_ipc = sw->h.ipcns == ns_inode("ipc");
		sw->same_mnt = sw->h.mntns == ns_inode("mnt");
		sweep_run(sw);
		clear_objs(sw);
	}
	if (!sw->dry)
		unlinkat(dfd, name, 0);
	close(fd);
}

int registry_sweep(FILE *out, bool dry_run, struct sweep_report *rep, char *err, size_t errlen)
{
	struct sweep_report local = { 0 };
	const char *dir = registry_dir();
	struct sweep *sw;
	struct dirent *e;
	struct stat st;
	DIR *d;
	int dfd;

	if (!rep)
		rep = &local;
	*rep = (struct sweep_report){ 0 };
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOENT ? 0 : errf(err, errlen, errno, "%s: %s", dir, strerror(errno));
	if (fstat(dfd, &st) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		close(dfd);
		return errf(err, errlen, EPERM, "%s is not a directory of this user's with mode "
			    "0700; remove it or set IPCLAB_STATE_DIR", dir);
	}
	sw = calloc(1, sizeof(*sw));
	d = sw ? fdopendir(dfd) : NULL;
	if (!d) {
		free(sw);
		close(dfd);
		return errf(err, errlen, ENOMEM, "%s: out of memory", dir);
	}
	sw->out = out;
	sw->dry = dry_run;
	sw->rep = rep;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "run-", 4) || !strncmp(e->d_name, ".new-", 5))
			sweep_file(sw, dirfd(d), e->d_name);
	closedir(d);
	free(sw);
	if (!dry_run)
		rmdir(dir);	/* only if no run has a file there now */
	return 0;
}
