// SPDX-License-Identifier: MIT
/* The one output writer: -o of every command, --html, --trace=events, and
 * one file in an output directory (db export --dir). What is at the path
 * is looked at without following a link, and decides:
 *
 * - Nothing, a regular file, or a symbolic link to a file or to nothing:
 *   written atomically. A temporary file beside it, under a name no one
 *   can guess, registered for cleanup before it exists and created with
 *   O_EXCL|O_NOFOLLOW, renamed over the path only when complete. A reader
 *   never sees half a file, and a link at the path is replaced, its
 *   target untouched.
 * - A character or block device, a FIFO or a listening Unix socket named
 *   itself: written into, never replaced (renaming a file over /dev/null
 *   as root would break every other program on the machine). It is opened
 *   with O_NOFOLLOW and must still be what was looked at, so a link
 *   swapped in meanwhile is not followed; a FIFO is opened without
 *   blocking, so a FIFO no one reads is an error, not a hang.
 * - A symbolic link to a device, FIFO, socket or directory: refused.
 *   ipclab never writes through a link it did not make: a link another
 *   user planted in /tmp must not turn root's report into a write to a
 *   disk or to root's own FIFO.
 * - "-", /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: this
 *   process's own descriptor, duplicated; the path is never opened.
 *
 * A stop signal (SIGINT, SIGTERM, ...) that arrives while a file is
 * written means the file is not put in place: the temporary file is
 * removed and what was at the path stays as it was. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cmd.h"
#include "ipclab/cleanup.h"
#include "ipclab/reporter.h"
#include "ipclab/runner.h"

/* /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: the descriptor N
 * of this process, or -1. */
static int fd_alias(const char *path)
{
	static const char *const pre[] = { "/dev/fd/", "/proc/self/fd/" };
	char *end;
	long n;

	if (!strcmp(path, "-") || !strcmp(path, "/dev/stdout"))
		return STDOUT_FILENO;
	if (!strcmp(path, "/dev/stderr"))
		return STDERR_FILENO;
	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++) {
		size_t l = strlen(pre[i]);

		if (strncmp(path, pre[i], l) || path[l] < '0' || path[l] > '9')
			continue;
		errno = 0;
		n = strtol(path + l, &end, 10);
		if (!errno && !*end && n >= 0 && n <= INT_MAX)
			return (int)n;
	}
	return -1;
}

static const char *kind_of(mode_t m)
{
	return S_ISCHR(m)  ? "character device" :
	       S_ISBLK(m)  ? "block device" :
	       S_ISFIFO(m) ? "FIFO" :
	       S_ISSOCK(m) ? "socket" :
			     "special file";
}

enum target {
	T_FILE,		/* the atomic path: nothing, a file, a link to a file */
	T_SPECIAL,	/* a device, FIFO or socket named itself */
};

/* What is at name in the directory dfd (path's, walked), looked at
 * without following a link: 0 with *t (and *st, the special file), or 2
 * with the refusal said. Where it cannot be looked at the atomic path is
 * taken, and says why it cannot write. */
static int classify(int dfd, const char *name, const char *path, const char *cmd,
		    struct stat *st, enum target *t)
{
	struct stat to;

	*t = T_FILE;
	if (!*name)
		return cmd_usage_error(cmd, "-o %s: is a directory; name a file in it, e.g. %sresults.json",
				       path, path);
	if (fstatat(dfd, name, st, AT_SYMLINK_NOFOLLOW) || S_ISREG(st->st_mode))
		return 0;
	if (S_ISDIR(st->st_mode))
		return cmd_usage_error(cmd, "-o %s: is a directory; name a file in it, e.g. %s/results.json",
				       path, path);
	if (!S_ISLNK(st->st_mode)) {
		*t = T_SPECIAL;
		return 0;
	}
	/* a link: looked through only to say what it is, never opened */
	if (fstatat(dfd, name, &to, 0) || S_ISREG(to.st_mode))
		return 0;
	if (S_ISDIR(to.st_mode))
		return cmd_usage_error(cmd, "-o %s: a symbolic link to a directory; name a file in it",
				       path);
	return cmd_usage_error(cmd, "-o %s: a symbolic link to a %s; ipclab writes a device, FIFO or socket only when given its own path, never through a link: name it itself, or remove the link",
			       path, kind_of(to.st_mode));
}

/* output_walk's descriptor, or its refusal said: 2 (bad input) or 1. */
static int walk(const char *path, const char *cmd, const char **name, int *dfd)
{
	char err[ERRLEN];

	*dfd = output_walk(path, name, err, sizeof(err));
	if (*dfd >= 0)
		return 0;
	return *dfd == -EPERM || *dfd == -ENOENT || *dfd == -ENOTDIR || *dfd == -ELOOP ||
			       *dfd == -ENAMETOOLONG ?
		       cmd_usage_error(cmd, "%s", err) :
		       say_error(cmd, "%s", err);
}

int output_check(const char *path, const char *cmd)
{
	struct stat st;
	enum target t;
	const char *name;
	int dfd, ret;

	if (!path || fd_alias(path) >= 0)
		return 0;
	if (!*path)
		return cmd_usage_error(cmd, "-o '': empty path; name a file, or leave -o out for stdout");
	if (strlen(path) + sizeof(".tmp-4194304-0123456789abcdef") > PATH_MAX)
		return cmd_usage_error(cmd, "-o %.64s...: the path is too long; use a shorter one",
				       path);
	if ((ret = walk(path, cmd, &name, &dfd)))
		return ret;
	ret = classify(dfd, name, path, cmd, &st, &t);
	close(dfd);
	return ret;
}

/* Writes into a device, FIFO, socket or the caller's descriptor: whole,
 * but not past a stop signal. A reader that stopped reading blocks the
 * write; the signal interrupts it, and stdio would write the rest again
 * and block for good. */
static ssize_t special_write(void *cookie, const char *buf, size_t len)
{
	struct output *o = cookie;
	size_t off = 0;

	while (off < len) {
		ssize_t n;

		if (runner_interrupted != o->sig) {
			errno = EINTR;
			break;
		}
		n = write(o->fd, buf + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	return (ssize_t)off;	/* short: stdio marks the stream failed */
}

static int special_close(void *cookie)
{
	struct output *o = cookie;

	return close(o->fd);
}

/* o->f on fd, written into as it is (no rename): 0, or 1 said. */
static int use_fd(struct output *o, int fd)
{
	static const cookie_io_functions_t io = { .write = special_write, .close = special_close };

	o->fd = fd;
	o->f = fopencookie(o, "w", io);
	if (!o->f) {
		close(fd);
		o->f = stdout;
		return say_error(o->cmd, "cannot write %s: out of memory", o->path);
	}
	o->special = true;
	return 0;
}

/* "-", /dev/stdout, /dev/fd/N: the descriptor itself, duplicated. */
static int open_alias(struct output *o, int fd)
{
	fflush(stdout); /* what went to stdout first stays first */
	fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return say_error(o->cmd, "cannot write %s: %s", o->path, strerror(errno));
	return use_fd(o, fd);
}

/* The socket that lstat saw, connected to through its own descriptor
 * (O_PATH, /proc/self/fd/N): connect() by name would follow a link put
 * there since. The socket, or -1 with errno. */
static int connect_unix(int dfd, const char *name, const struct stat *seen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat now;
	int pfd, fd = -1, saved;

	pfd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return -1;
	if (fstat(pfd, &now) || now.st_dev != seen->st_dev || now.st_ino != seen->st_ino) {
		close(pfd);
		errno = ESTALE;
		return -1;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d", pfd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		saved = errno;
		close(fd);
		fd = -1;
		errno = saved;
	}
	saved = errno;
	close(pfd);
	errno = saved;
	return fd;
}

/* A device or FIFO named itself: opened without following a link and
 * without blocking (a FIFO without a reader fails at once), checked to be
 * what lstat saw, then written to as usual (blocking). */
static int open_device(int dfd, const char *name, const struct stat *seen)
{
	struct stat now;
	int fd = openat(dfd, name, O_WRONLY | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), fl;

	if (fd < 0)
		return -1;
	if (fstat(fd, &now) || now.st_dev != seen->st_dev || now.st_ino != seen->st_ino) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* What is at the path and is not a file: written into, never replaced. */
static int open_special(struct output *o, const struct stat *st)
{
	int fd = S_ISSOCK(st->st_mode) ? connect_unix(o->dfd, o->name, st) :
					 open_device(o->dfd, o->name, st);

	if (fd >= 0)
		return use_fd(o, fd);
	if (errno == ENXIO && S_ISFIFO(st->st_mode))
		return cmd_usage_error(o->cmd, "-o %s: a FIFO that no one reads; start its reader first (cat %s &), or name a file",
				       o->path, o->path);
	if (errno == ELOOP || errno == ESTALE)
		return cmd_usage_error(o->cmd, "-o %s: replaced while being opened (now a link or another file); ipclab does not write through it",
				       o->path);
	return say_error(o->cmd, "cannot write %s: %s", o->path, strerror(errno));
}

/* PATH.tmp-<pid>-<16 random hex digits>: a name another user cannot
 * create first, and that the run registry's sweep knows as this run's
 * (registry_check.c). Registered for cleanup before it exists. */
static int open_tmp(struct output *o, const char *path)
{
	for (int tries = 0; tries < 8; tries++) {
		unsigned char rnd[8];
		char hex[17];
		int fd;

		if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
			return say_error(o->cmd, "cannot write %s: getrandom: %s", path,
					 strerror(errno));
		for (size_t i = 0; i < sizeof(rnd); i++)
			snprintf(hex + 2 * i, 3, "%02x", rnd[i]);
		/* never shortened: a cut name could be the user's own file */
		if ((size_t)snprintf(o->tmp, sizeof(o->tmp), "%s.tmp-%d-%s", path, (int)getpid(),
				     hex) >=
		    sizeof(o->tmp))
			return cmd_usage_error(o->cmd,
					       "-o %.64s...: the path is too long; use a shorter one",
					       path);
		o->handle = cleanup_add(CL_PATH, o->tmp);
		if (o->handle < 0)
			return say_error(o->cmd, "cannot write %s: %s", o->tmp,
					 strerror(-o->handle));
		/* in the walked directory: o->tmp less the path's directory */
		fd = openat(o->dfd, o->tmp + (o->name - path),
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd >= 0 && (o->f = fdopen(fd, "w")))
			return 0;
		int saved = errno;

		if (fd >= 0)
			close(fd);
		/* not ours: it must not be removed at exit */
		cleanup_forget(o->handle);
		o->handle = -1;
		o->f = stdout;
		if (saved != EEXIST)
			return say_error(o->cmd, "cannot write %s: %s", o->tmp, strerror(saved));
	}
	return say_error(o->cmd, "cannot write %s: no free temporary name beside it", path);
}

static void close_dir(struct output *o)
{
	if (o->dfd >= 0)
		close(o->dfd);
	o->dfd = -1;
}

static void output_init(struct output *o, const char *path, const char *cmd)
{
	o->f = stdout;
	o->path = path;
	o->cmd = cmd;
	o->handle = -1;
	o->special = false;
	o->in_dir = false;
	o->fd = -1;
	o->dfd = -1;
	o->name = NULL;
	o->sig = runner_interrupted;
	o->tmp[0] = '\0';
}

int output_open(struct output *o, const char *path, const char *cmd)
{
	struct stat st;
	enum target t;
	int fd, ret;

	output_init(o, path, cmd);
	if (!path)
		return 0;
	fd = fd_alias(path);
	if (fd >= 0)
		return open_alias(o, fd);
	if ((ret = walk(path, cmd, &o->name, &o->dfd)))
		return ret;
	ret = classify(o->dfd, o->name, path, cmd, &st, &t);
	if (!ret)
		ret = t == T_SPECIAL ? open_special(o, &st) : open_tmp(o, path);
	if (ret)
		close_dir(o);
	return ret;
}

int output_open_in(struct output *o, const struct outdir *d, const char *name, const char *cmd)
{
	char err[ERRLEN];
	int ret;

	output_init(o, o->where, cmd);
	snprintf(o->where, sizeof(o->where), "%s/%s", d->path, name);
	ret = outfile_open(&o->of, d, name, err, sizeof(err));
	if (ret)
		return ret == -EINVAL || ret == -EPERM ? cmd_usage_error(cmd, "%s", err) :
							 say_error(cmd, "%s", err);
	o->f = o->of.f;
	o->in_dir = true;
	return 0;
}

/* A stop signal since the file was opened: nothing put in place (what
 * was written to a device or FIFO is cut short). 128+N. */
static int stopped(struct output *o, int sig)
{
	if (o->in_dir)
		outfile_abort(&o->of);
	else if (!o->special)
		cleanup_run_one(o->handle);
	say(o->cmd, "%s: not written, stopped by signal %d%s", o->path, sig,
	    o->special ? "; its reader got part of it" : "; what was there is left as it was");
	return 128 + sig;
}

static int failed_msg(struct output *o, const char *why)
{
	return say_error(o->cmd, "writing %s failed%s%s", o->path, why && *why ? ": " : "",
			 why ? why : "");
}

/* db export --dir's file: renamed into its directory by outfile_commit. */
static int commit_in_dir(struct output *o, int failed, const char *why)
{
	char err[ERRLEN];
	int sig;

	failed |= fflush(o->f) != 0 || ferror(o->f);
	if ((sig = runner_interrupted) != o->sig)
		return stopped(o, sig);
	if (failed) {
		outfile_abort(&o->of);
		return failed_msg(o, why);
	}
	if (outfile_commit(&o->of, err, sizeof(err)))
		return say_error(o->cmd, "%s", err);
	return 0;
}

/* The file put in place (renamed over its name, in the walked directory)
 * or the reason it was not: 0, 1, or 128+N. */
static int commit_file(struct output *o, int failed, const char *why)
{
	int sig = runner_interrupted;

	if (o->special) {
		/* a signal after the last byte went out cut nothing short */
		if (failed && sig != o->sig)
			return stopped(o, sig);
		return failed ? failed_msg(o, why) : 0;
	}
	if (sig != o->sig)
		return stopped(o, sig);
	if (failed) {
		cleanup_run_one(o->handle);
		return failed_msg(o, why);
	}
	if (renameat(o->dfd, o->tmp + (o->name - o->path), o->dfd, o->name)) {
		say(o->cmd, "cannot rename %s to %s: %s", o->tmp, o->path, strerror(errno));
		cleanup_run_one(o->handle);
		return 1;
	}
	cleanup_forget(o->handle);
	return 0;
}

int output_commit(struct output *o, int failed, const char *why)
{
	int ret;

	if (!o->path) {
		fflush(stdout);
		return failed ? 1 : 0;
	}
	if (o->in_dir)
		return commit_in_dir(o, failed, why);
	failed |= fclose(o->f) != 0;
	o->f = NULL;
	ret = commit_file(o, failed, why);
	close_dir(o);
	return ret;
}

int output_report(const char *path, const struct reporter_args *ra, const struct report *rep)
{
	const struct reporter *r = reporter_find(ra->pivot[0] ? "pivot" : ra->format);
	char err[ERRLEN] = "";
	struct output o;
	int ret = output_open(&o, path, NULL);

	if (ret)
		return ret;
	if (!r)
		r = reporter_find("table");
	ret = r->write(o.f, rep, ra, err, sizeof(err));
	return output_commit(&o, ret, err);
}
