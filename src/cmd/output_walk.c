// SPDX-License-Identifier: MIT
/* The directory an -o path names, reached one component at a time
 * without following another user's link. The kernel resolves a path in
 * one call and follows every symbolic link on the way (with
 * fs.protected_symlinks=0 even one another user planted in /tmp): root's
 * `-o /tmp/x/out.json` would then write into /etc when another user made
 * /tmp/x a link to it, and replace /etc's file of that name. Here each
 * directory is opened (O_PATH, O_NOFOLLOW) from the one before it; a link
 * on the way is followed only when it is the caller's own or root's; the
 * file is then made, looked at and renamed relative to the directory's
 * descriptor, so a link swapped in after the walk is never used. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"

#define WALK_LINKS 40	/* the kernel's own bound on links in one path */

/* Is the link one the caller may follow: its own, or root's? */
static bool link_trusted(const struct stat *l)
{
	return l->st_uid == geteuid() || l->st_uid == 0;
}

/* rest = target "/" rest (the link's target put in front of what is left),
 * 0 or -ENAMETOOLONG. */
static int put_first(char *rest, size_t len, const char *target, const char *left)
{
	char tmp[2 * PATH_MAX];

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/%s", target, left) >= len)
		return -ENAMETOOLONG;
	memcpy(rest, tmp, strlen(tmp) + 1);
	return 0;
}

/* One step: *fd moves to the directory comp names in it, or to the start
 * of a trusted link's target (with rest spliced). 0 or -errno with err. */
static int step(int *fd, const char *comp, char *rest, size_t restlen, const char *left,
		unsigned *links, const char *path, char *err, size_t errlen)
{
	char target[PATH_MAX];
	struct stat st;
	ssize_t n;
	int nfd;

	if (fstatat(*fd, comp, &st, AT_SYMLINK_NOFOLLOW)) {
		int e = errno;

		snprintf(err, errlen, "-o %s: its directory %s ('%s' in it); create it first",
			 path, e == ENOENT ? "does not exist" : strerror(e), comp);
		return -e;
	}
	if (S_ISLNK(st.st_mode)) {
		if (++*links > WALK_LINKS) {
			snprintf(err, errlen, "-o %s: more than %d symbolic links on the way; name the directory itself",
				 path, WALK_LINKS);
			return -ELOOP;
		}
		if (!link_trusted(&st)) {
			snprintf(err, errlen, "-o %s: '%s' in that path is a symbolic link of uid %u, not yours; ipclab never follows another user's link: name the directory it points to, if you trust it",
				 path, comp, (unsigned)st.st_uid);
			return -EPERM;
		}
		n = readlinkat(*fd, comp, target, sizeof(target) - 1);
		if (n >= 0)
			target[n] = '\0';
		if (n <= 0 || (size_t)n >= sizeof(target) - 1 || put_first(rest, restlen, target, left)) {
			snprintf(err, errlen, "-o %s: cannot read the link '%s' in that path; name the directory itself",
				 path, comp);
			return -ENAMETOOLONG;
		}
		if (target[0] == '/') {
			if ((nfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
				return -errno;
			close(*fd);
			*fd = nfd;
		}
		return 1;	/* rest now starts at the target */
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "-o %s: '%s' in that path is not a directory; name a file in a directory",
			 path, comp);
		return -ENOTDIR;
	}
	nfd = openat(*fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (nfd < 0) {
		int e = errno;

		snprintf(err, errlen, "-o %s: '%s' in that path changed while being opened (%s); ipclab does not write through it",
			 path, comp, strerror(e));
		return e == ELOOP || e == ENOTDIR ? -EPERM : -e;
	}
	close(*fd);
	*fd = nfd;
	return 0;
}

int output_walk(const char *path, const char **name, char *err, size_t errlen)
{
	char rest[2 * PATH_MAX], comp[NAME_MAX + 1];
	const char *slash = strrchr(path, '/');
	unsigned links = 0;
	int fd, r;

	*name = slash ? slash + 1 : path;
	fd = open(slash && path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "-o %s: cannot open its directory: %s", path, strerror(errno));
		return -errno;
	}
	snprintf(rest, sizeof(rest), "%.*s", slash ? (int)(slash - path) : 0, path);
	for (char *p = rest; *p;) {
		size_t len;

		while (*p == '/')
			p++;
		len = strcspn(p, "/");
		if (!len)
			break;
		if (len > NAME_MAX) {
			snprintf(err, errlen, "-o %.64s...: a name in that path is too long; use a shorter one",
				 path);
			close(fd);
			return -ENAMETOOLONG;
		}
		memcpy(comp, p, len);
		comp[len] = '\0';
		p += len;
		if (!strcmp(comp, "."))
			continue;
		r = step(&fd, comp, rest, sizeof(rest), p, &links, path, err, errlen);
		if (r < 0) {
			close(fd);
			return r;
		}
		if (r > 0)
			p = rest;	/* the link's target, then what was left */
	}
	return fd;
}
