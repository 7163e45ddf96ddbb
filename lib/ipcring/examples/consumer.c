// SPDX-License-Identifier: MIT
/*
 * consumer.c - ipcring example, the receiving end. It creates the ring,
 * waits for a producer on an abstract unix socket, hands it the memfd with
 * SCM_RIGHTS, and reads records until the producer closes (exit 0) or
 * dies (exit 1; the socket is the death detector).
 *
 *   ipcring-consumer NAME &  ipcring-producer NAME [COUNT [SIZE]]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* accept4, MSG_CMSG_CLOEXEC when built standalone */
#endif
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipcring.h"
#include "common.h"

static int die(const char *what, int err)
{
	fprintf(stderr, "ipcring-consumer: %s: %s\n", what, strerror(-err));
	return 1;
}

/* zero-copy handler: the bytes stay in the ring while we look at them */
static int on_record(void *ctx, const void *msg, size_t len)
{
	unsigned long long *sum = ctx;
	const unsigned char *p = msg;

	for (size_t i = 0; i < len; i++)
		sum[1] += p[i];
	sum[0] += len;
	return 0;
}

static int serve(int sock, int memfd)
{
	unsigned long long sum[2] = { 0, 0 }, msgs = 0;
	struct ipcring *ring;
	int ret;

	ret = ipcring_attach(&ring, memfd, IPCRING_CONSUMER, -1);
	if (ret)
		return die("attach", ret);
	ipcring_set_peer(ring, sock, IPCRING_PEER_SOCKET);
	ret = ex_send_fd(sock, memfd);
	if (ret)
		return die("send memfd", ret);
	while ((ret = ipcring_read_batch(ring, on_record, sum, 64, -1)) > 0)
		msgs += (unsigned long long)ret;
	printf("consumer: %llu records, %llu bytes, byte sum %llu: %s\n", msgs,
	       sum[0], sum[1], ret == 0 ? "producer closed" : strerror(-ret));
	ipcring_close(ring);
	return ret == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct ipcring_opts o = { .capacity = 1 << 20 };
	int lsock, sock, memfd, ret;

	if (argc != 2) {
		fprintf(stderr, "usage: ipcring-consumer NAME\n");
		return 2;
	}
	lsock = ex_listen(argv[1]);
	if (lsock < 0)
		return die("listen", lsock);
	ret = ipcring_create(&o, &memfd, NULL);
	if (ret)
		return die("create", ret);
	sock = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
	if (sock < 0)
		return die("accept", -errno);
	close(lsock);
	ret = serve(sock, memfd);
	close(memfd);
	close(sock);
	return ret;
}
