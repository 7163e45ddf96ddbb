// SPDX-License-Identifier: MIT
/*
 * foreign_hook.so - a test helper for tests/cli/foreign_peer.sh, loaded
 * with LD_PRELOAD into ipclab. The first listen() of an AF_INET socket, or
 * the first bind() of an AF_INET datagram socket, is held: the helper
 * writes "tcp PORT" or "udp PORT" to the FIFO $IPCLAB_FOREIGN_HOOK/req and
 * waits for a line on $IPCLAB_FOREIGN_HOOK/ack. Meanwhile the test plays
 * the foreign peer on that port. Once per process (the channel is made by
 * the parent, single-threaded, before any endpoint starts); without the
 * variable it changes nothing. A listen() on the port in
 * $IPCLAB_FOREIGN_HOOK_SKIP (ipclab serve's control port) is let through
 * and does not count: the one held is then a cell's, in serve's child.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

int listen(int fd, int backlog);
int bind(int fd, const struct sockaddr *addr, socklen_t len);

static int hooked;

static void hold(const char *proto, int fd)
{
	const char *dir = getenv("IPCLAB_FOREIGN_HOOK");
	struct sockaddr_in sa;
	socklen_t l = sizeof(sa);
	char path[4096], line[16];
	int saved = errno;
	FILE *f;

	const char *skip = getenv("IPCLAB_FOREIGN_HOOK_SKIP");

	if (hooked || !dir || getsockname(fd, (struct sockaddr *)&sa, &l) ||
	    sa.sin_family != AF_INET || (skip && atoi(skip) == ntohs(sa.sin_port)))
		goto out;
	hooked = 1;
	snprintf(path, sizeof(path), "%s/req", dir);
	f = fopen(path, "w");
	if (!f)
		goto out;
	fprintf(f, "%s %u\n", proto, (unsigned)ntohs(sa.sin_port));
	fclose(f);
	snprintf(path, sizeof(path), "%s/ack", dir);
	f = fopen(path, "r");
	if (!f)
		goto out;
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	fclose(f);
out:
	errno = saved;
}

int listen(int fd, int backlog)
{
	int ret = (int)syscall(SYS_listen, fd, backlog);

	if (ret == 0)
		hold("tcp", fd);
	return ret;
}

int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	int ret = (int)syscall(SYS_bind, fd, addr, len), type = 0;
	socklen_t tl = sizeof(type);

	if (ret == 0 && getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 && type == SOCK_DGRAM)
		hold("udp", fd);
	return ret;
}
