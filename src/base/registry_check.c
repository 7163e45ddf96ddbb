// SPDX-License-Identifier: MIT
/* What a dead run's record may still remove (registry_int.h). A record only
 * ever names what ipclab makes, so anything else it names is left alone:
 * - a child process: killed through a pidfd, only if it still has the
 *   recorded start time, is not older than the run and is this user's;
 * - SysV objects: this user's, IPC_PRIVATE, mode 0600, made since the run
 *   began;
 * - POSIX queues and shared memory, libqb services and /dev/shm ring
 *   directories: names that cleanup_unique_name() makes in the run's own
 *   process ("ipclab-...-<pid>-<16 hex digits>"), this user's;
 * - paths: the run's private directory ("ipclab-" and six letters or
 *   digits) and the unique-name directories, what lies in them, and the
 *   temporary file of an output ("<path>.tmp-<pid>-<16 hex>"); absolute, reached
 *   without following a symbolic link anywhere, this user's; a directory
 *   only of this user's with mode 0700, losing only what is this user's.
 * Every check is made on a descriptor of what is then removed. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mqueue.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ipclab/cleanup.h"
#include "ipclab/util.h"
#include "registry_int.h"

static enum reg_outcome kept(const char **why, const char *reason)
{
	*why = reason;
	return REG_KEPT;
}

static enum reg_outcome failed(const char **why, int e)
{
	if (e == ENOENT)
		return REG_GONE;
	*why = strerror(e);
	return REG_FAILED;
}

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* "ipclab-<word>[-<word>...]-<pid>-<16 hex digits>": a name that
 * cleanup_unique_name() made in process pid. */
static bool unique_name(const char *s, int pid)
{
	char tail[32];
	size_t n = strlen(s), t;

	if (pid <= 0)
		return false;
	t = (size_t)snprintf(tail, sizeof(tail), "-%d-", pid);
	if (n <= 7 + t + 16 || strncmp(s, "ipclab-", 7) || strncmp(s + n - 16 - t, tail, t))
		return false;
	for (size_t i = n - 16; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	for (size_t i = 7; i < n - 16 - t; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	return true;
}

/* The private directory's own name: "ipclab-" and six letters or digits. */
static bool private_dir_name(const char *s)
{
	if (strlen(s) != 13 || strncmp(s, "ipclab-", 7))
		return false;
	for (int i = 7; i < 13; i++)
		if (!is_alnum(s[i]))
			return false;
	return true;
}

/* Absolute, no empty, "." or ".." component, no control character. */
static bool canonical(const char *p)
{
	size_t n = strlen(p);

	if (p[0] != '/' || n >= PATH_MAX || p[n - 1] == '/')
		return false;
	for (const char *c = p; *c; c++) {
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return false;
		if (*c == '/' && (c[1] == '/' || (c[1] == '.' && (c[2] == '/' || !c[2])) ||
				  (c[1] == '.' && c[2] == '.' && (c[3] == '/' || !c[3]))))
			return false;
	}
	return true;
}

static bool dir_ok(const char *path, int pid)
{
	const char *base;

	if (!canonical(path))
		return false;
	base = strrchr(path, '/') + 1;
	return private_dir_name(base) || unique_name(base, pid);
}

/* "<anything>.tmp-<pid>-<16 hex digits>": an output's temporary file
 * (src/cmd/output.c) of the run @pid. */
static bool output_tmp_name(const char *base, int pid)
{
	char tail[32];
	size_t n = strlen(base), t = (size_t)snprintf(tail, sizeof(tail), ".tmp-%d-", pid);

	if (pid <= 0 || n <= t + 16)
		return false;
	for (size_t i = n - 16; i < n; i++)
		if (!((base[i] >= '0' && base[i] <= '9') || (base[i] >= 'a' && base[i] <= 'f')))
			return false;
	return strncmp(base + n - 16 - t, tail, t) == 0;
}

/* A file in one of ipclab's directories (*in_dir), or an output's
 * temporary file "<path>.tmp-<pid>-<16 hex digits>". */
static bool path_ok(const char *path, int pid, bool *in_dir)
{
	char parent[PATH_MAX];
	const char *base;
	size_t n;

	*in_dir = false;
	if (!canonical(path))
		return false;
	base = strrchr(path, '/') + 1;
	n = (size_t)(base - 1 - path);
	memcpy(parent, path, n);
	parent[n] = '\0';
	if (n && dir_ok(parent, pid))
		return *in_dir = true;
	return output_tmp_name(base, pid);
}

/* The directory that holds path's last component (*base), opened one
 * component at a time from "/", never following a symbolic link: a
 * descriptor (O_PATH), or -errno (-ELOOP: a link on the way). path is
 * canonical(). */
static int open_parent(const char *path, const char **base)
{
	char comp[NAME_MAX + 1];
	const char *p = path + 1, *slash;
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

	*base = strrchr(path, '/') + 1;
	while (fd >= 0 && (slash = strchr(p, '/'))) {
		size_t n = (size_t)(slash - p);
		struct stat st;
		int next, e;

		if (n > NAME_MAX) {
			close(fd);
			return -ENAMETOOLONG;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		/* with O_PATH, O_NOFOLLOW opens a link itself, which O_DIRECTORY refuses */
		next = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		e = errno;
		if (next < 0 && e == ENOTDIR && !fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) &&
		    S_ISLNK(st.st_mode))
			e = ELOOP;
		close(fd);
		if (next < 0)
			return -e;
		fd = next;
		p = slash + 1;
	}
	return fd < 0 ? -errno : fd;
}

static enum reg_outcome walk_failed(int r, const char **why)
{
	if (r == -ELOOP)
		return kept(why, "reached through a symbolic link");
	if (r == -ENOTDIR)
		return kept(why, "a component of its path is not a directory");
	return failed(why, -r);
}

/* A directory of ipclab's: this user's, nobody else may use it. */
static bool own_private(int fd)
{
	struct stat st;

	return !fstat(fd, &st) && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
	       !(st.st_mode & 077);
}

static enum reg_outcome remove_path(const struct run_head *h, const struct run_obj *o, bool dry,
				    const char **why)
{
	enum reg_outcome r;
	const char *base;
	struct stat st;
	bool in_dir;
	int dfd;

	if (!path_ok(o->name, h->pid, &in_dir))
		return kept(why, "not a name ipclab makes");
	if ((dfd = open_parent(o->name, &base)) < 0)
		return walk_failed(dfd, why);
	if (in_dir && !own_private(dfd))
		r = kept(why, "its directory is another user's, or others may write it");
	else if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW))
		r = failed(why, errno);
	else if (st.st_uid != geteuid())
		r = kept(why, "another user's");
	else if (S_ISDIR(st.st_mode) || (!in_dir && !S_ISREG(st.st_mode)))
		r = kept(why, "not a file ipclab makes there");
	else
		r = dry || !unlinkat(dfd, base, 0) ? REG_DONE : failed(why, errno);
	close(dfd);
	return r;
}

/* Everything in it that is this user's and not a directory. */
static void empty_dir(int dfd)
{
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	struct stat st;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    !fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) && st.st_uid == geteuid() &&
		    !S_ISDIR(st.st_mode))
			unlinkat(dfd, e->d_name, 0);
	closedir(d);
}

static enum reg_outcome remove_dir(const struct run_head *h, const struct run_obj *o, bool dry,
				   const char **why)
{
	enum reg_outcome r = REG_DONE;
	const char *base;
	int pfd, dfd;

	if (!dir_ok(o->name, h->pid))
		return kept(why, "not a name ipclab makes");
	if ((pfd = open_parent(o->name, &base)) < 0)
		return walk_failed(pfd, why);
	dfd = openat(pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		r = errno == ELOOP || errno == ENOTDIR ? kept(why, "not a directory")
						       : failed(why, errno);
	else if (!own_private(dfd))
		r = kept(why, "another user's, or others may write it");
	else if (!dry) {
		empty_dir(dfd);
		if (unlinkat(pfd, base, AT_REMOVEDIR))
			r = failed(why, errno);
	}
	if (dfd >= 0)
		close(dfd);
	close(pfd);
	return r;
}

static enum reg_outcome remove_mq(const struct run_obj *o, bool dry, const char **why)
{
	mqd_t q = mq_open(o->name, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	int r;

	if (q == (mqd_t)-1)
		return errno == EACCES ? kept(why, "another user's") : failed(why, errno);
	r = fstat((int)q, &st);	/* an mqd_t is a descriptor on Linux */
	mq_close(q);
	if (r || st.st_uid != geteuid())
		return kept(why, "another user's");
	return dry || !mq_unlink(o->name) ? REG_DONE : failed(why, errno);
}

/* In shm_unlink's directory, looked at without opening the object (an open
 * of a FIFO of that name would block). */
static enum reg_outcome remove_shm(const struct run_obj *o, bool dry, const char **why)
{
	enum reg_outcome r;
	struct stat st;
	int fd = open("/dev/shm", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return failed(why, errno);
	if (fstatat(fd, o->name + 1, &st, AT_SYMLINK_NOFOLLOW))
		r = failed(why, errno);
	else if (st.st_uid != geteuid() || !S_ISREG(st.st_mode))
		r = kept(why, "another user's, or not shared memory");
	else
		r = dry || !unlinkat(fd, o->name + 1, 0) ? REG_DONE : failed(why, errno);
	close(fd);
	return r;
}

/* POSIX queues and shared memory: "/" and a unique name of the run's. */
static enum reg_outcome remove_posix(const struct run_head *h, const struct run_obj *o, bool dry,
				     const char **why)
{
	if (o->name[0] != '/' || !unique_name(o->name + 1, h->pid))
		return kept(why, "not a name ipclab makes");
	return o->kind == CL_POSIX_MQ ? remove_mq(o, dry, why) : remove_shm(o, dry, why);
}

/* A SysV object is still the run's: this user's, private, mode 0600 (as
 * ipclab makes every one), made since the run began. */
static enum reg_outcome remove_sysv(const struct run_head *h, const struct run_obj *o, bool dry,
				    const char **why)
{
	struct ipc_perm *perm;
	time_t ctime_s;
	struct msqid_ds m;
	struct semid_ds s;
	struct shmid_ds d;
	int id = (int)o->id, r;

	if (o->id < 0 || o->id > INT_MAX)
		return REG_GONE;	/* never made */
	if (o->kind == CL_SYSV_MSG && msgctl(id, IPC_STAT, &m) == 0)
		perm = &m.msg_perm, ctime_s = m.msg_ctime;
	else if (o->kind == CL_SYSV_SEM && semctl(id, 0, IPC_STAT, &s) == 0)
		perm = &s.sem_perm, ctime_s = s.sem_ctime;
	else if (o->kind == CL_SYSV_SHM && shmctl(id, IPC_STAT, &d) == 0)
		perm = &d.shm_perm, ctime_s = d.shm_ctime;
	else
		return REG_GONE;
	if (perm->cuid != geteuid() || perm->uid != geteuid() || perm->__key != IPC_PRIVATE)
		return kept(why, "now another's");
	if ((perm->mode & 0777) != 0600)
		return kept(why, "not as ipclab makes it (mode not 0600)");
	if ((long long)ctime_s < h->wall - 1)
		return kept(why, "older than the run");
	if (dry)
		return REG_DONE;
	r = o->kind == CL_SYSV_MSG ? msgctl(id, IPC_RMID, NULL)
	    : o->kind == CL_SYSV_SEM ? semctl(id, 0, IPC_RMID)
				     : shmctl(id, IPC_RMID, NULL);
	return r ? failed(why, errno == EINVAL || errno == EIDRM ? ENOENT : errno) : REG_DONE;
}

/* The real uid of pid, from /proc/PID/status. */
static bool proc_ruid(pid_t pid, uid_t *uid)
{
	char path[64], buf[4096], *p;
	unsigned u;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_text_file(path, buf, sizeof(buf)) <= 0 || !(p = strstr(buf, "\nUid:")) ||
	    sscanf(p + 5, "%u", &u) != 1)
		return false;
	*uid = u;
	return true;
}

static int pidfd_open_(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

static int signal_(int pidfd, pid_t pid, int sig)
{
#ifdef SYS_pidfd_send_signal
	if (pidfd >= 0)
		return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
#endif
	/* no pidfd (a kernel before 5.3): the pid could be reused between the
	 * start-time check and this kill(), a window of two system calls */
	return kill(pid, sig);
}

/* A child of the run: the pidfd first, so that the signal can only reach
 * the process that had the pid then; then that pid's start time and user:
 * if the pidfd's process is still alive when signalled, what was read was
 * its own (a recycled pid reads another start time, or the signal finds
 * the pidfd's process gone). */
static enum reg_outcome kill_child(const struct run_head *h, const struct run_obj *o, bool dry,
				   const char **why)
{
	pid_t pid = (pid_t)o->id;
	enum reg_outcome r;
	uid_t uid;
	int pfd;

	if (!h->same_pid)
		return kept(why, h->pidns ? "in another pid namespace" : "its pid namespace not recorded");
	if (o->id <= 0 || o->id > INT_MAX || !o->start)
		return REG_GONE;
	if (o->start < h->start)
		return kept(why, "older than the run");
	pfd = pidfd_open_(pid);
	if (pfd < 0 && errno != ENOSYS)
		return errno == ESRCH ? REG_GONE : failed(why, errno);
	if (proc_start_ticks(pid) != o->start || !proc_ruid(pid, &uid))
		r = REG_GONE;	/* the pid is another process's now */
	else if (uid != geteuid())
		r = kept(why, "another user's");
	else if (signal_(pfd, pid, dry ? 0 : SIGKILL))
		r = failed(why, errno == ESRCH ? ENOENT : errno);
	else
		r = REG_DONE;
	if (pfd >= 0)
		close(pfd);
	return r;
}

enum reg_outcome reg_remove(const struct run_head *h, const struct run_obj *o, bool dry,
			    const char **why)
{
	*why = NULL;
	/* ids, pids and namespaces mean other things after a reboot */
	if (!h->same_boot)
		return kept(why, "recorded in another boot");
	switch (o->kind) {
	case CL_PID:
		return kill_child(h, o, dry, why);
	case CL_SYSV_MSG:
	case CL_SYSV_SEM:
	case CL_SYSV_SHM:
		return !h->same_ipc ? kept(why, "in another IPC namespace") : remove_sysv(h, o, dry, why);
	case CL_POSIX_MQ:
		if (!h->same_ipc)
			return kept(why, "in another IPC namespace");
		break;
	default:
		if (!h->same_mnt)
			return kept(why, "in another mount namespace");
		break;
	}
	if (!o->name || !o->name[0])
		return kept(why, "no name");
	switch (o->kind) {
	case CL_PATH:
		return remove_path(h, o, dry, why);
	case CL_DIR:
		return remove_dir(h, o, dry, why);
	case CL_QB_IPC:
		if (!unique_name(o->name, h->pid))
			return kept(why, "not a name ipclab makes");
		return dry || cleanup_qb_ipc(o->name) > 0 ? REG_DONE : REG_GONE;
	default:
		return remove_posix(h, o, dry, why);
	}
}
