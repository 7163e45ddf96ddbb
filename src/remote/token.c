// SPDX-License-Identifier: MIT
/* The shared token of ipclab serve and run --peer (remote.h): checked,
 * read from a file only its owner can read, or made from random bytes.
 * A command line can be read by every user (/proc/PID/cmdline), a file
 * of mode 0600 only by its owner: the file is the way to hand a token
 * over. The token is a secret: no message here contains it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipclab/remote.h"
#include "ipclab/util.h"

int remote_token_check(const char *what, const char *tok, char *err, size_t errlen)
{
	size_t n = strlen(tok);

	if (n < REMOTE_TOKEN_MIN)
		return errf(err, errlen, EINVAL,
			    "%s: the token has %zu bytes, at least %d are needed (ipclab serve without a token makes one)",
			    what, n, REMOTE_TOKEN_MIN);
	if (n > REMOTE_TOKEN_MAX)
		return errf(err, errlen, EINVAL, "%s: the token is longer than %d bytes", what,
			    REMOTE_TOKEN_MAX);
	for (size_t i = 0; i < n; i++)
		if (tok[i] < 0x20 || tok[i] > 0x7e)
			return errf(err, errlen, EINVAL,
				    "%s: the token holds a byte that is not printable ASCII (at %zu); use letters, digits and punctuation",
				    what, i);
	return 0;
}

/* Opened without following a link and without blocking on a FIFO; then
 * the checks on what it is and who may read it. */
static int token_open(const char *path, char *err, size_t errlen)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return errf(err, errlen, EINVAL, "--token-file %s: %s", path,
			    errno == ELOOP ? "a symbolic link; name the file itself" : strerror(errno));
	if (fstat(fd, &st) < 0) {
		close(fd);
		return errf(err, errlen, EINVAL, "--token-file %s: %s", path, strerror(errno));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return errf(err, errlen, EINVAL, "--token-file %s: not a regular file", path);
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		close(fd);
		return errf(err, errlen, EINVAL,
			    "--token-file %s: mode %04o lets other users read or change it; chmod 600 %s",
			    path, (unsigned)(st.st_mode & 07777), path);
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		close(fd);
		return errf(err, errlen, EINVAL,
			    "--token-file %s: owned by uid %u, not by this user (uid %u) or root",
			    path, (unsigned)st.st_uid, (unsigned)geteuid());
	}
	return fd;
}

int remote_token_file(const char *path, char *buf, size_t len, char *err, size_t errlen)
{
	char text[REMOTE_TOKEN_MAX + 3];
	ssize_t n;
	int fd = token_open(path, err, errlen), ret;

	if (fd < 0)
		return fd;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n < 0)
		return errf(err, errlen, EINVAL, "--token-file %s: %s", path, strerror(errno));
	text[n] = '\0';
	if (n && text[n - 1] == '\n')
		text[--n] = '\0';
	if (n && text[n - 1] == '\r')
		text[--n] = '\0';
	if ((size_t)n != strlen(text))
		ret = errf(err, errlen, EINVAL, "--token-file %s: the token holds a NUL byte", path);
	else if ((size_t)n >= len)
		ret = errf(err, errlen, EINVAL, "--token-file %s: longer than %d bytes (one line, the token)",
			   path, REMOTE_TOKEN_MAX);
	else if (!(ret = remote_token_check("--token-file", text, err, errlen)))
		memcpy(buf, text, (size_t)n + 1);
	explicit_bzero(text, sizeof(text));
	return ret;
}

int remote_token_generate(char *buf, size_t len)
{
	unsigned char r[REMOTE_TOKEN_GEN];
	size_t got = 0;

	if (len < 2 * sizeof(r) + 1)
		return -ENOSPC;
	while (got < sizeof(r)) {
		ssize_t n = getrandom(r + got, sizeof(r) - got, 0);

		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0)
			got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(buf + 2 * i, 3, "%02x", r[i]);
	explicit_bzero(r, sizeof(r));
	return 0;
}

void remote_token_hide(char *arg)
{
	argv_overwrite(arg, "***");
}

int remote_token_pick(const char *file, const char *arg, char *buf, size_t len, char *err,
		      size_t errlen)
{
	const char *env = getenv("IPCLAB_TOKEN");

	buf[0] = '\0';
	if (file && arg)
		return errf(err, errlen, EINVAL, "--token-file and --token: give one of them");
	if (file)
		return remote_token_file(file, buf, len, err, errlen);
	if (!arg && (!env || !*env))
		return 1;
	if (remote_token_check(arg ? "--token" : "IPCLAB_TOKEN", arg ? arg : env, err, errlen))
		return -EINVAL;
	snprintf(buf, len, "%s", arg ? arg : env);
	return 0;
}
