// SPDX-License-Identifier: MIT
/*
 * consumer.c - ipcring example, the receiving end. It creates the ring,
 * waits for a producer on an abstract unix socket, hands it the memfd with
 * SCM_RIGHTS, and reads records until the producer closes (exit 0) or
 * dies (exit 1; the socket is the death detector).
 *
 * Anyone can connect to an abstract socket, and whoever gets the memfd can
 * write the ring. So the memfd goes only to a producer that runs as our
 * own uid (SO_PEERCRED) or as the one -u allows; any other is refused with
 * a message, and the consumer waits for the next.
 *
 *   ipcring-consumer [-u UID] NAME &  ipcring-producer [-u UID] NAME [COUNT [SIZE]]
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

/* The first producer that may have the ring: others are told off and closed. */
static int accept_producer(int lsock, uid_t allow)
{
	char why[160];

	for (;;) {
		int sock = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);

		if (sock < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return -errno;
		}
		if (ex_check_peer(sock, allow, why, sizeof(why)) == 0)
			return sock;
		fprintf(stderr, "ipcring-consumer: refused a producer: %s\n", why);
		close(sock);
	}
}

int main(int argc, char **argv)
{
	struct ipcring_opts o = { .capacity = 1 << 20 };
	uid_t allow = EX_NO_UID;
	int lsock, sock, memfd, ret, a = 1;

	if (argc == 4 && !strcmp(argv[1], "-u")) {
		if (ex_parse_uid(argv[2], &allow)) {
			fprintf(stderr, "ipcring-consumer: -u %s: not a uid; give a number such as 1000\n",
				argv[2]);
			return 2;
		}
		a = 3;
	}
	if (argc != a + 1 || argv[a][0] == '-') {
		fprintf(stderr, "usage: ipcring-consumer [-u UID] NAME\n");
		return 2;
	}
	lsock = ex_listen(argv[a]);
	if (lsock < 0)
		return die("listen", lsock);
	ret = ipcring_create(&o, &memfd, NULL);
	if (ret)
		return die("create", ret);
	sock = accept_producer(lsock, allow);
	if (sock < 0)
		return die("accept", sock);
	close(lsock);
	ret = serve(sock, memfd);
	close(memfd);
	close(sock);
	return ret;
}
