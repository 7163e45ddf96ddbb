// SPDX-License-Identifier: MIT
/* Private output directories and the files made in them (outdir.h). The
 * directory is checked on the descriptor that is then used for every file,
 * so a path swapped after the check changes nothing; names inside it are
 * made with O_CREAT|O_EXCL|O_NOFOLLOW and put in place with renameat, which
 * replaces a link rather than writing through it. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipclab/cleanup.h"
#include "ipclab/outdir.h"

bool outdir_name_ok(const char *name)
{
	return name[0] && strcmp(name, ".") && strcmp(name, "..") && !strchr(name, '/') &&
	       strlen(name) <= NAME_MAX;
}

/* "plots/" would follow a link named plots: the name without its slashes. */
static int trim_path(struct outdir *d, const char *opt, const char *path, char *err,
		     size_t errlen)
{
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		n--;
	if (!n || n >= sizeof(d->path))
		return errf(err, errlen, EINVAL, "%s: %s directory name; give a shorter path",
			    opt, n ? "too long a" : "an empty");
	memcpy(d->path, path, n);
	d->path[n] = '\0';
	return 0;
}

/* Owned by this user and writable by no one else: nobody else can add,
 * replace or link a name in it. */
static int check_private(const struct outdir *d, const char *opt, char *err, size_t errlen)
{
	struct stat st;

	if (fstat(d->fd, &st))
		return errf(err, errlen, errno, "%s %s: %s", opt, d->path, strerror(errno));
	if (st.st_uid != geteuid())
		return errf(err, errlen, EPERM, "%s %s: the directory belongs to uid %u, not to this user (uid %u): ipclab writes only into a directory of its own; give a new path (made 0700)",
			    opt, d->path, (unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return errf(err, errlen, EPERM, "%s %s: the directory is writable by %s (mode %04o); chmod go-w %s, or give a new path (made 0700)",
			    opt, d->path, st.st_mode & S_IWOTH ? "others" : "its group",
			    (unsigned)(st.st_mode & 07777), d->path);
	return 0;
}

/* The directory itself, not what a link there points to, unless the link
 * is the user's own (~/plots -> /data/plots). */
static int open_nofollow(struct outdir *d, const char *opt, char *err, size_t errlen)
{
	struct stat st;

	d->fd = open(d->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d->fd >= 0)
		return 0;
	if (errno != ELOOP && errno != ENOTDIR)
		return errf(err, errlen, errno, "%s %s: %s", opt, d->path, strerror(errno));
	if (lstat(d->path, &st) || !S_ISLNK(st.st_mode))
		return errf(err, errlen, EPERM, "%s %s: not a directory; give a directory (made if missing)",
			    opt, d->path);
	if (st.st_uid != geteuid())
		return errf(err, errlen, EPERM, "%s %s: a symbolic link of uid %u, not of this user: ipclab does not follow it; give the directory itself",
			    opt, d->path, (unsigned)st.st_uid);
	d->fd = open(d->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d->fd < 0)
		return errf(err, errlen, errno == ENOTDIR ? EPERM : errno, "%s %s: %s", opt, d->path,
			    strerror(errno));
	return 0;
}

static int absolute(struct outdir *d, const char *opt, char *err, size_t errlen)
{
	char cwd[PATH_MAX];

	if (d->path[0] == '/') {
		snprintf(d->abs, sizeof(d->abs), "%s", d->path);
		return 0;
	}
	if (!getcwd(cwd, sizeof(cwd)))
		return errf(err, errlen, errno, "%s %s: cannot tell the working directory: %s", opt,
			    d->path, strerror(errno));
	if ((size_t)snprintf(d->abs, sizeof(d->abs), "%s/%s", cwd, d->path) >= sizeof(d->abs))
		return errf(err, errlen, ENAMETOOLONG, "%s %s: the path is too long; give a shorter one",
			    opt, d->path);
	return 0;
}

int outdir_open(struct outdir *d, const char *opt, const char *path, char *err, size_t errlen)
{
	int ret;

	d->fd = -1;
	ret = trim_path(d, opt, path, err, errlen);
	if (!ret && mkdir(d->path, 0700) && errno != EEXIST)
		ret = errf(err, errlen, errno, "%s %s: cannot create the directory: %s", opt, d->path,
			   strerror(errno));
	if (!ret)
		ret = open_nofollow(d, opt, err, errlen);
	if (!ret)
		ret = check_private(d, opt, err, errlen);
	if (!ret)
		ret = absolute(d, opt, err, errlen);
	if (ret)
		outdir_close(d);
	return ret;
}

int outdir_check(const char *opt, const char *path, char *err, size_t errlen)
{
	struct outdir d = { .fd = -1 };
	struct stat st;
	int ret = trim_path(&d, opt, path, err, errlen);

	if (ret || (lstat(d.path, &st) && errno == ENOENT))
		return ret;
	ret = open_nofollow(&d, opt, err, errlen);
	if (!ret)
		ret = check_private(&d, opt, err, errlen);
	outdir_close(&d);
	return ret;
}

void outdir_close(struct outdir *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}

/* ---- one file, put in place whole ---------------------------------------------------- */

/* dir/name as an absolute path for the cleanup table, registered now. */
static int register_in(const struct outdir *d, const char *name, char *err, size_t errlen)
{
	char abs[PATH_MAX];
	int h;

	if ((size_t)snprintf(abs, sizeof(abs), "%s/%s", d->abs, name) >= sizeof(abs))
		return errf(err, errlen, ENAMETOOLONG, "%s/%s: the path is too long", d->path, name);
	h = cleanup_add(CL_PATH, abs);
	if (h < 0)
		return errf(err, errlen, -h, "cannot write %s/%s: %s", d->path, name, strerror(-h));
	return h;
}

static int create_in(const struct outdir *d, const char *name)
{
	return openat(d->fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
}

int outfile_open(struct outfile *of, const struct outdir *d, const char *name, char *err,
		 size_t errlen)
{
	int fd, e;

	*of = (struct outfile){ .d = d, .handle = -1 };
	if (!outdir_name_ok(name))
		return errf(err, errlen, EINVAL, "%s: '%s' is not a file name", d->path, name);
	snprintf(of->name, sizeof(of->name), "%s", name);
	cleanup_unique_name(of->tmp, sizeof(of->tmp), ".ipclab-tmp");
	of->handle = register_in(d, of->tmp, err, errlen);
	if (of->handle < 0)
		return of->handle;
	fd = create_in(d, of->tmp);
	if (fd >= 0 && (of->f = fdopen(fd, "w")))
		return 0;
	e = errno;
	if (fd >= 0) {
		close(fd);
		unlinkat(d->fd, of->tmp, 0);
	}
	cleanup_forget(of->handle);
	of->handle = -1;
	return errf(err, errlen, e, "cannot write %s/%s: %s", d->path, name, strerror(e));
}

int outfile_commit(struct outfile *of, char *err, size_t errlen)
{
	bool bad = ferror(of->f);
	int e;

	bad |= fclose(of->f) != 0;
	of->f = NULL;
	e = errno;
	if (!bad && !renameat(of->d->fd, of->tmp, of->d->fd, of->name)) {
		cleanup_forget(of->handle);
		return 0;
	}
	e = bad ? (e ? e : EIO) : errno;
	outfile_abort(of);
	return errf(err, errlen, e, "cannot write %s/%s: %s", of->d->path, of->name, strerror(e));
}

void outfile_abort(struct outfile *of)
{
	if (of->f)
		fclose(of->f);
	of->f = NULL;
	if (of->handle >= 0) {
		unlinkat(of->d->fd, of->tmp, 0);
		cleanup_forget(of->handle);
	}
	of->handle = -1;
}

/* ---- files another program writes, moved in together -------------------------------- */

int outstage_open(struct outstage *st, const struct outdir *d, char *err, size_t errlen)
{
	int e;

	*st = (struct outstage){ .dir.fd = -1, .parent = d, .handle = -1 };
	cleanup_unique_name(st->name, sizeof(st->name), ".ipclab-stage");
	if ((size_t)snprintf(st->dir.path, sizeof(st->dir.path), "%s/%s", d->path, st->name) >=
		    sizeof(st->dir.path) ||
	    (size_t)snprintf(st->dir.abs, sizeof(st->dir.abs), "%s/%s", d->abs, st->name) >=
		    sizeof(st->dir.abs))
		return errf(err, errlen, ENAMETOOLONG, "%s: the path is too long; give a shorter one",
			    d->path);
	st->handle = cleanup_add(CL_DIR, st->dir.abs);
	if (st->handle < 0)
		return errf(err, errlen, -st->handle, "cannot write in %s: %s", d->path,
			    strerror(-st->handle));
	if (mkdirat(d->fd, st->name, 0700)) {
		e = errno;
		cleanup_forget(st->handle);
		st->handle = -1;
		return errf(err, errlen, e, "cannot write in %s: %s", d->path, strerror(e));
	}
	st->dir.fd = openat(d->fd, st->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (st->dir.fd >= 0)
		return 0;
	e = errno;
	unlinkat(d->fd, st->name, AT_REMOVEDIR);
	cleanup_forget(st->handle);
	st->handle = -1;
	return errf(err, errlen, e, "cannot write in %s: %s", d->path, strerror(e));
}

int outstage_expect(struct outstage *st, const char *name, char *err, size_t errlen)
{
	int h;

	if (!outdir_name_ok(name) || st->n == OUTSTAGE_FILES)
		return errf(err, errlen, EINVAL, "%s: '%s' is not a file name (or too many files)",
			    st->parent->path, name);
	for (unsigned i = 0; i < st->n; i++)
		if (!strcmp(st->files[i].name, name))
			return 0;
	h = register_in(&st->dir, name, err, errlen);
	if (h < 0)
		return h;
	snprintf(st->files[st->n].name, sizeof(st->files[0].name), "%s", name);
	st->files[st->n++].handle = h;
	return 0;
}

int outstage_write(struct outstage *st, const char *name, const void *buf, size_t len, char *err,
		   size_t errlen)
{
	int ret = outstage_expect(st, name, err, errlen), fd, e = 0;
	size_t off = 0;

	if (ret)
		return ret;
	fd = create_in(&st->dir, name);
	if (fd < 0)
		e = errno;
	while (!e && off < len) {
		ssize_t n = write(fd, (const char *)buf + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			e = n < 0 ? errno : EIO;
		else
			off += (size_t)n;
	}
	if (fd >= 0 && close(fd) && !e)
		e = errno;
	if (!e)
		return 0;
	return errf(err, errlen, e, "cannot write %s/%s: %s", st->parent->path, name, strerror(e));
}

int outstage_commit(struct outstage *st, char *err, size_t errlen)
{
	for (unsigned i = 0; i < st->n; i++) {
		const char *name = st->files[i].name;
		struct stat s;

		if (fstatat(st->dir.fd, name, &s, AT_SYMLINK_NOFOLLOW) || !S_ISREG(s.st_mode))
			return errf(err, errlen, EIO, "%s/%s was not written", st->parent->path, name);
		if (renameat(st->dir.fd, name, st->parent->fd, name))
			return errf(err, errlen, errno, "cannot write %s/%s: %s", st->parent->path,
				    name, strerror(errno));
	}
	return 0;
}

void outstage_close(struct outstage *st)
{
	for (unsigned i = 0; i < st->n; i++) {
		if (st->dir.fd >= 0)
			unlinkat(st->dir.fd, st->files[i].name, 0);
		cleanup_forget(st->files[i].handle);
	}
	st->n = 0;
	if (st->dir.fd >= 0)
		unlinkat(st->parent->fd, st->name, AT_REMOVEDIR);
	outdir_close(&st->dir);
	if (st->handle >= 0)
		cleanup_forget(st->handle);
	st->handle = -1;
}
