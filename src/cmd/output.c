// SPDX-License-Identifier: MIT
/* The one output writer for -o. A regular file (or a new path) is written
 * atomically: a temporary file beside it, under a name no one can guess,
 * registered for cleanup before it exists and created with O_EXCL, renamed
 * over the path only when complete. A reader never sees half a file, a
 * signal while writing leaves nothing behind, and a link planted at the
 * path is replaced, never written through.
 *
 * Anything else that already exists at the path is written into, never
 * replaced: a character or block device (/dev/null), a FIFO (its reader
 * gets the whole report), a listening Unix socket (connected to), and
 * /dev/stdout, /dev/stderr or /dev/fd/N (the descriptor itself, where the
 * process's output already goes). Renaming a file over /dev/null as root
 * would break every other program on the machine. */
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

static int connect_unix(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, saved;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

int output_check(const char *path, const char *cmd)
{
	struct stat st;
	char dir[PATH_MAX];
	const char *slash;

	if (!path || fd_alias(path) >= 0)
		return 0;
	if (!*path)
		return cmd_usage_error(cmd, "-o '': empty path; name a file, or leave -o out for stdout");
	if (strlen(path) + sizeof(".tmp-4194304-0123456789abcdef") > PATH_MAX)
		return cmd_usage_error(cmd, "-o %.64s...: the path is too long; use a shorter one",
				       path);
	if (!stat(path, &st)) {
		if (S_ISDIR(st.st_mode))
			return cmd_usage_error(cmd, "-o %s: is a directory; name a file in it, e.g. %s/results.json",
					       path, path);
		return 0;
	}
	slash = strrchr(path, '/');
	if (!slash)
		return 0;
	snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	if (stat(dir, &st) || !S_ISDIR(st.st_mode))
		return cmd_usage_error(cmd, "-o %s: the directory %s does not exist; create it first",
				       path, dir);
	return 0;
}

/* Something that is not a regular file already at path: write into it. 1 =
 * opened (o->f), 0 = a regular file or nothing there (the atomic path),
 * else the exit status of a refusal. */
static int open_special(struct output *o, const char *path)
{
	struct stat st;
	int fd = fd_alias(path), saved;

	if (fd >= 0) {
		fflush(stdout); /* what went to stdout first stays first */
		fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			return say_error(o->cmd, "cannot write %s: %s", path, strerror(errno));
	} else {
		if (stat(path, &st) || S_ISREG(st.st_mode))
			return 0;
		if (S_ISDIR(st.st_mode))
			return cmd_usage_error(o->cmd, "-o %s: is a directory; name a file in it", path);
		/* no O_CREAT, no O_TRUNC: what is there is written to, as it is */
		fd = S_ISSOCK(st.st_mode) ? connect_unix(path)
					  : open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			return say_error(o->cmd, "cannot write %s: %s", path, strerror(errno));
		if (fstat(fd, &st) || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
			/* replaced by a file since the stat: take the atomic path */
			close(fd);
			return 0;
		}
	}
	o->f = fdopen(fd, "w");
	if (!o->f) {
		saved = errno;
		close(fd);
		return say_error(o->cmd, "cannot write %s: %s", path, strerror(saved));
	}
	o->special = true;
	return 1;
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
		fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd >= 0 && (o->f = fdopen(fd, "w")))
			return 0;
		int saved = errno;

		if (fd >= 0)
			close(fd);
		/* not ours: it must not be removed at exit */
		cleanup_forget(o->handle);
		o->handle = -1;
		if (saved != EEXIST)
			return say_error(o->cmd, "cannot write %s: %s", o->tmp, strerror(saved));
	}
	return say_error(o->cmd, "cannot write %s: no free temporary name beside it", path);
}

int output_open(struct output *o, const char *path, const char *cmd)
{
	int ret;

	o->f = stdout;
	o->path = path;
	o->cmd = cmd;
	o->handle = -1;
	o->special = false;
	if (!path)
		return 0;
	ret = open_special(o, path);
	if (ret == 1)
		return 0;
	if (ret)
		return ret;
	return open_tmp(o, path);
}

int output_commit(struct output *o, int failed, const char *why)
{
	if (!o->path) {
		fflush(stdout);
		return failed ? 1 : 0;
	}
	if (o->special) {
		if (fclose(o->f) || failed)
			return say_error(o->cmd, "writing %s failed%s%s", o->path,
					 why && *why ? ": " : "", why ? why : "");
		return 0;
	}
	if (fclose(o->f) || failed) {
		cleanup_run_one(o->handle);
		return say_error(o->cmd, "writing %s failed%s%s", o->path, why && *why ? ": " : "",
				 why ? why : "");
	}
	if (rename(o->tmp, o->path)) {
		say(o->cmd, "cannot rename %s to %s: %s", o->tmp, o->path, strerror(errno));
		cleanup_run_one(o->handle);
		return 1;
	}
	cleanup_forget(o->handle);
	return 0;
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
