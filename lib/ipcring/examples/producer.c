// SPDX-License-Identifier: MIT
/*
 * producer.c - ipcring example, the sending end. It connects to the
 * consumer's abstract unix socket, receives the ring's memfd (SCM_RIGHTS),
 * and writes COUNT records of SIZE bytes, reserving them in place and
 * batching the wakeups, then closes.
 *
 * Anyone can listen on an abstract socket name first, and would then get
 * every record. So the producer writes only into a ring from a consumer
 * that runs as our own uid (SO_PEERCRED) or as the one -u allows.
 *
 *   ipcring-producer [-u UID] NAME [COUNT [SIZE]]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* accept4, MSG_CMSG_CLOEXEC when built standalone */
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipcring.h"
#include "common.h"

static int die(const char *what, int err)
{
	fprintf(stderr, "ipcring-producer: %s: %s\n", what, strerror(-err));
	return 1;
}

static int produce(struct ipcring *ring, unsigned long count, size_t size)
{
	unsigned long i;
	void *p;
	int ret;

	for (i = 0; i < count; i++) {
		ret = ipcring_reserve(ring, size, &p, -1);
		if (ret)
			return die("reserve", ret);
		memset(p, (int)(i & 0xff), size);
		/* wake the consumer (if it sleeps) once per 32 records */
		ret = ipcring_commit(ring, size, (i + 1) % 32 ? IPCRING_MORE : 0);
		if (ret)
			return die("commit", ret);
	}
	printf("producer: %lu records of %zu bytes\n", count, size);
	return 0;
}

int main(int argc, char **argv)
{
	uid_t allow = EX_NO_UID;
	unsigned long count;
	size_t size;
	struct ipcring *ring;
	char why[160];
	int sock, memfd, ret, a = 1;

	if (argc > 2 && !strcmp(argv[1], "-u")) {
		if (ex_parse_uid(argv[2], &allow)) {
			fprintf(stderr, "ipcring-producer: -u %s: not a uid; give a number such as 1000\n",
				argv[2]);
			return 2;
		}
		a = 3;
	}
	if (argc < a + 1 || argc > a + 3 || argv[a][0] == '-') {
		fprintf(stderr, "usage: ipcring-producer [-u UID] NAME [COUNT [SIZE]]\n");
		return 2;
	}
	count = argc > a + 1 ? strtoul(argv[a + 1], NULL, 0) : 1000000;
	size = argc > a + 2 ? strtoul(argv[a + 2], NULL, 0) : 64;
	sock = ex_connect(argv[a], 5000);
	if (sock < 0)
		return die("connect", sock);
	if (ex_check_peer(sock, allow, why, sizeof(why))) {
		fprintf(stderr, "ipcring-producer: refused the consumer on @%s: %s\n", argv[a], why);
		return 1;
	}
	memfd = ex_recv_fd(sock);
	if (memfd == -ECONNRESET) {
		fprintf(stderr,
			"ipcring-producer: the consumer on @%s closed the connection without sending the ring: it refuses producers of another uid (see its message; it can allow one with -u)\n",
			argv[a]);
		return 1;
	}
	if (memfd < 0)
		return die("receive memfd", memfd);
	ret = ipcring_attach(&ring, memfd, IPCRING_PRODUCER, -1);
	if (ret)
		return die("attach", ret);
	close(memfd);
	ipcring_set_peer(ring, sock, IPCRING_PEER_SOCKET);
	ret = produce(ring, count, size);
	ipcring_close(ring);	/* flushes; the consumer then sees end of stream */
	close(sock);
	return ret;
}
