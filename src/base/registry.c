// SPDX-License-Identifier: MIT
/* The run registry (registry.h): one append-only file per ipclab process that
 * registers cleanup entries, in a directory only its user can write.
 *
 * A file is "run-<pid>-<start>" and holds, one record a line:
 *   R 1 <pid> <start ticks> <boot id> <ipc ns> <mnt ns> <uid> <wall s> <pid ns>
 *   + <handle> <kind> <id> <name in hex>      created (registered)
 *   = <handle> <id> <start ticks>             got its id (a pid: its start)
 *   - <handle>                                removed, or forgotten
 * The process holds a shared flock on the file for as long as it or a child
 * it forked lives (the lock belongs to the open file, which children
 * inherit): a sweeper that gets the exclusive lock knows nobody is left. The
 * file is first written as ".new-<pid>" and renamed once its header is
 * complete, so a sweeper never reads half a header. Paths are written
 * absolute, with no symbolic link in their directory, as the sweeper
 * (registry_check.c) takes only such a path. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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
#include <time.h>
#include <unistd.h>

#include "ipclab/registry.h"
#include "ipclab/util.h"
#include "registry_int.h"

#define REG_LINE (2 * PATH_MAX + 128)

static char reg_dirpath[PATH_MAX];
static char reg_path[PATH_MAX];
static int reg_fd = -1;
static pid_t reg_pid;		/* the process that owns reg_fd's file */
static int reg_failed;		/* 1 once said that the registry cannot be written */

const char *registry_dir(void)
{
	const char *d = getenv("IPCLAB_STATE_DIR"), *tmp = getenv("TMPDIR");

	if (d && *d)
		snprintf(reg_dirpath, sizeof(reg_dirpath), "%s", d);
	else
		snprintf(reg_dirpath, sizeof(reg_dirpath), "%s/.ipclab-runs-%u",
			 tmp && *tmp ? tmp : "/tmp", (unsigned)geteuid());
	return reg_dirpath;
}

void registry_boot_id(char *buf, size_t len)
{
	if (read_text_file("/proc/sys/kernel/random/boot_id", buf, len) <= 0)
		snprintf(buf, len, "-");
	buf[strcspn(buf, "\n ")] = '\0';
	if (!buf[0])
		snprintf(buf, len, "-");
}

/* The directory exists, is a directory (not a link), is ours and nobody
 * else may write or read it: a descriptor of it, or -1 (err says why). */
static int dir_open(const char *dir, char *err, size_t errlen)
{
	struct stat st;
	int fd;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return errf(err, errlen, errno, "run registry %s: %s", dir, strerror(errno)), -1;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno != ELOOP && errno != ENOTDIR)
		return errf(err, errlen, errno, "run registry %s: %s", dir, strerror(errno)), -1;
	if (fd < 0 || fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		if (fd >= 0)
			close(fd);
		return errf(err, errlen, EPERM, "run registry %s is not a directory of this user's "
			    "with mode 0700; remove it or set IPCLAB_STATE_DIR", dir), -1;
	}
	return fd;
}

static void say_failed(const char *why)
{
	if (reg_failed)
		return;
	reg_failed = 1;
	fprintf(stderr, "ipclab: warning: %s; a run killed by SIGKILL cannot be cleaned up by "
		"'ipclab clean'\n", why);
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Create this process's file: header first, under a temporary name, in
 * the directory as opened and checked (never a path looked up again). */
static int reg_create(char *err, size_t errlen)
{
	const char *dir = registry_dir();
	char tmp[32], name[64], head[256], boot[64];
	unsigned long long start = proc_start_ticks(getpid());
	int dfd, fd, n;

	snprintf(tmp, sizeof(tmp), ".new-%d", (int)getpid());
	snprintf(name, sizeof(name), "run-%d-%llu", (int)getpid(), start);
	if ((size_t)snprintf(reg_path, sizeof(reg_path), "%s/%s", dir, name) >= sizeof(reg_path))
		return errf(err, errlen, ENAMETOOLONG, "run registry %s: path too long", dir), -1;
	if ((dfd = dir_open(dir, err, errlen)) < 0)
		return -1;
	unlinkat(dfd, tmp, 0);	/* a stale one of a dead process with our pid */
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		errf(err, errlen, errno, "run registry %s/%s: %s", dir, tmp, strerror(errno));
		close(dfd);
		return -1;
	}
	flock(fd, LOCK_SH);
	registry_boot_id(boot, sizeof(boot));
	n = snprintf(head, sizeof(head), "R 1 %d %llu %s %lu %lu %u %lld %lu\n", (int)getpid(),
		     start, boot, ns_inode("ipc"), ns_inode("mnt"), (unsigned)geteuid(),
		     (long long)time(NULL), ns_inode("pid"));
	if (write_all(fd, head, (size_t)n) || renameat(dfd, tmp, dfd, name)) {
		errf(err, errlen, errno, "run registry %s/%s: %s", dir, tmp, strerror(errno));
		unlinkat(dfd, tmp, 0);
		close(fd);
		close(dfd);
		return -1;
	}
	close(dfd);
	reg_fd = fd;
	reg_pid = getpid();
	return 0;
}

/* This process's file, created (after a quiet sweep) on first use. */
static int reg_get(void)
{
	char err[512];

	if (reg_fd >= 0 && reg_pid == getpid())
		return reg_fd;
	if (reg_fd >= 0) {	/* a child: the file is its parent's */
		reg_fd = -1;
	}
	if (reg_failed)
		return -1;
	registry_sweep(NULL, false, NULL, err, sizeof(err));
	if (reg_create(err, sizeof(err))) {
		say_failed(err);
		return -1;
	}
	return reg_fd;
}

static void put_hex(char *out, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	for (; *s; s++) {
		*out++ = hex[(unsigned char)*s >> 4];
		*out++ = hex[(unsigned char)*s & 15];
	}
	*out = '\0';
}

/* A path as the sweeper takes it: its directory resolved (absolute, no
 * link; it exists when an object in it is registered), then its last
 * component. The name as given when that cannot be done: a sweep then
 * leaves it alone (a relative path means nothing to a sweeper elsewhere). */
static const char *real_name(enum cleanup_kind kind, const char *name)
{
	static char dir[PATH_MAX], real[PATH_MAX], out[PATH_MAX];	/* under cleanup's lock */
	const char *slash, *base;

	if (!name || (kind != CL_PATH && kind != CL_DIR))
		return name;
	slash = strrchr(name, '/');
	base = slash ? slash + 1 : name;
	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return name;
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == name ? 1 : (int)(slash - name), name);
	if (!realpath(dir, real) ||
	    (size_t)snprintf(out, sizeof(out), "%s%s%s", real, real[1] ? "/" : "", base) >=
		    sizeof(out))
		return name;
	return out;
}

void registry_note_add(int h, enum cleanup_kind kind, long id, const char *name)
{
	static char line[REG_LINE];	/* callers hold cleanup's lock */
	char *hex = line + REG_LINE - 2 * PATH_MAX - 2;
	int fd = reg_get();

	if (fd < 0)
		return;
	name = real_name(kind, name);
	put_hex(hex, name ? name : "");
	snprintf(line, (size_t)(hex - line), "+ %d %d %ld", h, (int)kind, id);
	/* "+ h kind id " then the hex name, one write */
	size_t n = strlen(line);

	line[n++] = ' ';
	memmove(line + n, hex, strlen(hex) + 1);
	n += strlen(line + n);
	line[n++] = '\n';
	if (write_all(fd, line, n))
		say_failed("the run registry cannot be written");
}

void registry_note_id(int h, long id)
{
	char line[96];
	int fd = reg_get(), n;

	if (fd < 0)
		return;
	n = snprintf(line, sizeof(line), "= %d %ld %llu\n", h, id,
		     id > 0 ? proc_start_ticks((pid_t)id) : 0ull);
	write_all(fd, line, (size_t)n);
}

/* Async-signal-safe: no stdio, no allocation. */
void registry_note_gone(int h)
{
	char line[32], digits[16];
	size_t n = 0, k = 0;
	unsigned v = (unsigned)h;

	if (reg_fd < 0 || reg_pid != getpid() || h < 0)
		return;
	line[n++] = '-';
	line[n++] = ' ';
	do
		digits[k++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (k)
		line[n++] = digits[--k];
	line[n++] = '\n';
	write_all(reg_fd, line, n);
}

void registry_close(void)
{
	if (reg_fd < 0 || reg_pid != getpid())
		return;
	unlink(reg_path);
	close(reg_fd);
	reg_fd = -1;
	rmdir(registry_dir());	/* only if no other run has a file there */
}
