// SPDX-License-Identifier: MIT
/*
 * client.c - ipcring example, a client of ipcring-server. It connects to
 * NAME, makes COUNT round trips of SIZE bytes (a request, then its reply),
 * checks that every reply is its request, and closes.
 *
 * Who is at the other end: anyone could have bound NAME first (abstract
 * names have no permissions), so the library checks the server's
 * credentials before sending anything and by default trusts only our own
 * uid and root; -u UID trusts that uid too.
 *
 *   ipcring-client [-u UID] NAME [COUNT [SIZE]]
 *
 * Exits 0 when every round trip came back intact, 1 otherwise (refused,
 * the server died, a wrong reply), 2 for bad arguments.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ipcring.h"

#define MAX_SIZE 4096

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* request i: its number, then bytes that depend on it */
static void fill(unsigned char *p, size_t size, uint64_t i)
{
	for (size_t k = 0; k < size; k++)
		p[k] = (unsigned char)(k < sizeof(i) ? i >> (8 * k) : i + k);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int parse_ulong(const char *s, unsigned long min, unsigned long max,
		       unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno || end == s || *end || s[0] == '-' || *out < min || *out > max ?
		-EINVAL : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: ipcring-client [-u UID] NAME [COUNT [SIZE]]\n");
	return 2;
}

/* Long: an example read top to bottom: options, connect, the round trips, the figures. */
int main(int argc, char **argv)
{
	static unsigned char req[MAX_SIZE], rep[MAX_SIZE];
	struct ipcring_connect_opts co = { .tag = (uint64_t)getpid() };
	uint32_t trusted[2] = { (uint32_t)geteuid(), 0 };
	static uint32_t three[3];
	unsigned long count = 1000, size = 64, v;
	struct ipcring_conn *conn;
	char why[IPCRING_REASON_MAX];
	uint64_t t0, setup = 0, *rtt;
	const char *name;
	int opt, ret = 0;
	unsigned long i;
	size_t n;

	while ((opt = getopt(argc, argv, "u:")) != -1) {
		if (opt != 'u')
			return usage();
		if (parse_ulong(optarg, 0, UINT32_MAX - 1, &v)) {
			fprintf(stderr, "ipcring-client: -u %s: not a uid; give a number such as 1000\n",
				optarg);
			return 2;
		}
		/* the default list (our euid and 0) plus this one */
		three[0] = trusted[0], three[1] = trusted[1], three[2] = (uint32_t)v;
		co.server_uids = three;
		co.nserver_uids = 3;
	}
	if (optind >= argc || argc - optind > 3)
		return usage();
	name = argv[optind];
	if (argc - optind > 1 && parse_ulong(argv[optind + 1], 1, 1000000000, &count)) {
		fprintf(stderr, "ipcring-client: COUNT %s: give a number from 1 to 1000000000\n",
			argv[optind + 1]);
		return 2;
	}
	if (argc - optind > 2 && parse_ulong(argv[optind + 2], 8, MAX_SIZE, &size)) {
		fprintf(stderr, "ipcring-client: SIZE %s: give a size from 8 to %d bytes\n",
			argv[optind + 2], MAX_SIZE);
		return 2;
	}
	rtt = malloc((count < 100000 ? count : 100000) * sizeof(*rtt));
	if (!rtt) {
		fprintf(stderr, "ipcring-client: out of memory\n");
		return 1;
	}

	t0 = now_ns();
	ret = ipcring_connect(&conn, name, &co, why, sizeof(why));
	if (ret) {
		fprintf(stderr, "ipcring-client: connect to %s: %s (%s)\n", name, why,
			strerror(-ret));
		free(rtt);
		return 1;
	}
	for (i = 0; i < count; i++) {
		uint64_t t = now_ns();

		fill(req, size, i);
		ret = ipcring_conn_send(conn, req, size, 0, 5000);
		if (!ret)
			ret = ipcring_conn_recv(conn, rep, sizeof(rep), &n, 5000);
		if (ret == 0) {
			fprintf(stderr, "ipcring-client: the server closed the connection after %lu round trips\n",
				i);
			ret = -EPIPE;
			break;
		}
		if (ret < 0) {
			fprintf(stderr, "ipcring-client: round trip %lu: %s\n", i, strerror(-ret));
			break;
		}
		ret = 0;
		if (n != size || memcmp(req, rep, size)) {
			fprintf(stderr, "ipcring-client: reply %lu is not its request (%zu bytes, expected %lu)\n",
				i, n, size);
			ret = -EBADMSG;
			break;
		}
		if (i == 0)
			setup = now_ns() - t0;
		if (i < 100000)
			rtt[i] = now_ns() - t;
	}
	ipcring_conn_close(conn);
	if (!ret) {
		unsigned long m = count < 100000 ? count : 100000;

		qsort(rtt, m, sizeof(*rtt), cmp_u64);
		printf("client: %lu round trips of %lu bytes, all replies intact; connect to first reply %.1f us, RTT p50 %.2f us\n",
		       count, size, setup / 1e3, rtt[m / 2] / 1e3);
	}
	free(rtt);
	return ret ? 1 : 0;
}
