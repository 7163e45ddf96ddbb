// SPDX-License-Identifier: MIT
/*
 * common.c - rendezvous on an abstract unix socket (no file left behind)
 * that anyone on the machine (in the same network namespace) can connect
 * to, so each side checks the other's credentials; and fd passing with
 * SCM_RIGHTS. Functions return an fd or 0, or -errno.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* accept4, MSG_CMSG_CLOEXEC when built standalone */
#endif
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

static socklen_t ex_addr(struct sockaddr_un *a, const char *name)
{
	size_t n = strlen(name);

	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (n > sizeof(a->sun_path) - 2)
		n = sizeof(a->sun_path) - 2;
	memcpy(a->sun_path + 1, name, n);	/* abstract: leading NUL */
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

int ex_listen(const char *name)
{
	struct sockaddr_un a;
	socklen_t len = ex_addr(&a, name);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		return -errno;
	if (bind(s, (struct sockaddr *)&a, len) < 0 || listen(s, 1) < 0) {
		int err = -errno;

		close(s);
		return err;
	}
	return s;
}

int ex_connect(const char *name, int timeout_ms)
{
	struct sockaddr_un a;
	socklen_t len = ex_addr(&a, name);
	int s, err;

	for (;;) {
		s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (s < 0)
			return -errno;
		if (connect(s, (struct sockaddr *)&a, len) == 0)
			return s;
		err = -errno;
		close(s);
		if ((err != -ECONNREFUSED && err != -ENOENT) || timeout_ms <= 0)
			return err;
		usleep(10000);
		timeout_ms -= 10;
	}
}

int ex_send_fd(int sock, int fd)
{
	char byte = 'R';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	memset(&u, 0, sizeof(u));
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == 1 ? 0 : -errno;
}

int ex_check_peer(int sock, uid_t allow, char *why, size_t len)
{
	struct ucred cr;
	socklen_t l = sizeof(cr);
	uid_t me = geteuid();

	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cr, &l) < 0) {
		int err = -errno;

		snprintf(why, len, "SO_PEERCRED: %s", strerror(-err));
		return err;
	}
	if (cr.uid == me || (allow != EX_NO_UID && cr.uid == allow))
		return 0;
	snprintf(why, len, "pid %d runs as uid %u, not as ours (%u); to allow it, pass -u %u",
		 (int)cr.pid, (unsigned)cr.uid, (unsigned)me, (unsigned)cr.uid);
	return -EACCES;
}

int ex_parse_uid(const char *s, uid_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v >= (unsigned long)EX_NO_UID)
		return -EINVAL;
	*out = (uid_t)v;
	return 0;
}

/* room for a few fds: extra ones then arrive (and are closed) instead of
 * being cut off, which the kernel does too, closing them itself */
#define EX_FD_ROOM 4

int ex_recv_fd(int sock)
{
	char byte = 0;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(EX_FD_ROOM * sizeof(int))];
	} u;
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	const char *end;
	struct cmsghdr *c;
	int fd = -1, nfd = 0, other = 0;
	ssize_t n;

	memset(&u, 0, sizeof(u));
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	end = u.buf + msg.msg_controllen;
	/* every fd that arrived is ours now: keep the first, close the rest */
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		size_t k;

		if (c->cmsg_len < CMSG_LEN(0) || (const char *)c + c->cmsg_len > end)
			break;
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
			other = 1;
			continue;
		}
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int f;

			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (nfd++ == 0)
				fd = f;
			else
				close(f);
		}
	}
	if (n == 1 && byte == 'R' && nfd == 1 && !other && !(msg.msg_flags & MSG_CTRUNC))
		return fd;
	if (fd >= 0)
		close(fd);
	return n == 0 ? -ECONNRESET : -EPROTO;
}
