// SPDX-License-Identifier: MIT
/*
 * common.c - rendezvous on an abstract unix socket (no file left behind)
 * and fd passing with SCM_RIGHTS, for the ipcring example programs.
 * Functions return an fd or 0, or -errno.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* accept4, MSG_CMSG_CLOEXEC when built standalone */
#endif
#include <errno.h>
#include <stddef.h>
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
