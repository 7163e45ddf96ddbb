// SPDX-License-Identifier: MIT
/*
 * producer.c - ipcring example, the sending end. It connects to the
 * consumer's abstract unix socket, receives the ring's memfd (SCM_RIGHTS),
 * and writes COUNT records of SIZE bytes, reserving them in place and
 * batching the wakeups, then closes.
 *
 *   ipcring-producer NAME [COUNT [SIZE]]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* accept4, MSG_CMSG_CLOEXEC when built standalone */
#endif
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
	unsigned long count = argc > 2 ? strtoul(argv[2], NULL, 0) : 1000000;
	size_t size = argc > 3 ? strtoul(argv[3], NULL, 0) : 64;
	struct ipcring *ring;
	int sock, memfd, ret;

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: ipcring-producer NAME [COUNT [SIZE]]\n");
		return 2;
	}
	sock = ex_connect(argv[1], 5000);
	if (sock < 0)
		return die("connect", sock);
	memfd = ex_recv_fd(sock);
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
