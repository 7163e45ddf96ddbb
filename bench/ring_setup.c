// SPDX-License-Identifier: MIT
/*
 * ring_setup.c - libipcring's connection set-up time: connect to first
 * reply, for connections back to back and for connections spaced apart,
 * measured in alternation against the same server. The server is a forked
 * child running the library's dispatcher (an echo); the parent connects,
 * sends 8 bytes, waits for the echo, and closes (or, with -k, keeps every
 * connection open, as a client pool would). Prints the p50 and p90 of each
 * spacing per round (and the p50 of ipcring_connect() alone), then the
 * medians of the rounds' p50s. Without -k it also prints the p50 of the
 * client's ipcring_conn_close() (the rings unmapped), back to back.
 *
 *   ring_setup [-r ROUNDS] [-n CONNECTS] [-g GAP_US] [-k] [-p]
 *
 * -p pins the server to CPU 0 and the client to CPU 1; unpinned, the
 * scheduler often runs both on one CPU (a wake-up moves the woken side to
 * the waker's), and then the server's work delays the client's.
 *
 * Defaults: 5 rounds of 200 connects each way, spaced 2000 us.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ipcring.h"

#define MAX_CONNS	2000
#define MAX_ROUNDS	64

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* -p: the server on CPU 0, the client on CPU 1 (best effort) */
static void pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("ring_setup: sched_setaffinity");
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int echo(void *ctx, struct ipcring_conn *c, const void *m, size_t len)
{
	(void)ctx;
	return ipcring_conn_send(c, m, len, IPCRING_MORE, 1000);
}

static const struct ipcring_server_ops ops = { .message = echo };

static void serve(struct ipcring_server *s)
{
	if (ipcring_server_set_ops(s, &ops, NULL))
		_exit(1);
	for (;;)
		if (ipcring_server_dispatch(s, -1) < 0)
			_exit(1);
}

/* One connect to first reply, in ns (*@conn_ns: the connect alone); 0 on
 * failure (reported). */
static uint64_t close_ns[MAX_CONNS];	/* the last batch's closes */

static uint64_t one(const char *name, struct ipcring_conn **keep, uint64_t *conn_ns,
		    uint64_t *cl_ns)
{
	char why[IPCRING_REASON_MAX];
	struct ipcring_conn *c;
	uint64_t v = 7, t0 = now_ns(), dt;
	size_t len;
	int r;

	r = ipcring_connect(&c, name, NULL, why, sizeof(why));
	*conn_ns = now_ns() - t0;
	if (r) {
		fprintf(stderr, "ring_setup: connect to %s: %s\n", name, why);
		return 0;
	}
	r = ipcring_conn_send(c, &v, sizeof(v), 0, 1000);
	if (!r)
		r = ipcring_conn_recv(c, &v, sizeof(v), &len, 5000) == 1 ? 0 : -EIO;
	dt = now_ns() - t0;
	if (r) {
		fprintf(stderr, "ring_setup: first round trip: %s\n", strerror(-r));
		ipcring_conn_close(c);
		return 0;
	}
	if (keep) {
		*keep = c;
	} else {
		uint64_t t1 = now_ns();

		ipcring_conn_close(c);
		*cl_ns = now_ns() - t1;
	}
	return dt;
}

/* n connects @gap_us apart; p50 and p90 in ns, and the p50 of the connect
 * alone; -1 on failure. */
static int batch(const char *name, unsigned n, unsigned gap_us, bool keep, uint64_t *p50,
		 uint64_t *p90, uint64_t *c50)
{
	static uint64_t t[MAX_CONNS], tc[MAX_CONNS];
	static struct ipcring_conn *open[MAX_CONNS];
	int ret = 0;

	for (unsigned i = 0; i < n; i++) {
		if (gap_us)
			usleep(gap_us);
		t[i] = one(name, keep ? &open[i] : NULL, &tc[i], &close_ns[i]);
		if (!t[i]) {
			n = i;
			ret = -1;
			break;
		}
	}
	for (unsigned i = 0; keep && i < n; i++)
		ipcring_conn_close(open[i]);
	if (ret)
		return ret;
	qsort(t, n, sizeof(t[0]), cmp_u64);
	qsort(tc, n, sizeof(tc[0]), cmp_u64);
	if (!keep)
		qsort(close_ns, n, sizeof(close_ns[0]), cmp_u64);
	*c50 = tc[n / 2];
	*p50 = t[n / 2];
	*p90 = t[n * 9 / 10];
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: ring_setup [-r ROUNDS (1-%d)] [-n CONNECTS (1-%d)] "
		"[-g GAP_US] [-k] [-p]\n", MAX_ROUNDS, MAX_CONNS);
	return 2;
}

int main(int argc, char **argv)
{
	unsigned rounds = 5, n = 200, gap = 2000;
	uint64_t b2b[MAX_ROUNDS], spaced[MAX_ROUNDS];
	char name[64], why[IPCRING_REASON_MAX];
	struct ipcring_server *s;
	bool keep = false, pin = false;
	int opt, st, ret = 0;
	pid_t pid;

	while ((opt = getopt(argc, argv, "r:n:g:kp")) != -1) {
		switch (opt) {
		case 'r': rounds = (unsigned)atoi(optarg); break;
		case 'n': n = (unsigned)atoi(optarg); break;
		case 'g': gap = (unsigned)atoi(optarg); break;
		case 'k': keep = true; break;
		case 'p': pin = true; break;
		default: return usage();
		}
	}
	if (optind != argc || !rounds || rounds > MAX_ROUNDS || !n || n > MAX_CONNS || !gap)
		return usage();
	signal(SIGPIPE, SIG_IGN);
	snprintf(name, sizeof(name), "@ipcring-setup-%d", (int)getpid());
	if (ipcring_listen(&s, name, NULL, why, sizeof(why))) {
		fprintf(stderr, "ring_setup: listen on %s: %s\n", name, why);
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("ring_setup: fork");
		return 1;
	}
	if (pid == 0) {
		if (pin)
			pin_to(0);
		serve(s);
	}
	if (pin)
		pin_to(1);
	(void)ipcring_server_close(s);	/* the child serves */
	for (unsigned r = 0; r < rounds && !ret; r++) {
		uint64_t a50, a90, ac, s50, s90, sc;

		uint64_t cl50;

		ret = batch(name, n, 0, keep, &a50, &a90, &ac);
		cl50 = close_ns[n / 2];	/* sorted by batch() */
		if (!ret)
			ret = batch(name, n, gap, keep, &s50, &s90, &sc);
		if (ret)
			break;
		b2b[r] = a50;
		spaced[r] = s50;
		printf("round %u: back to back p50 %.1f us p90 %.1f us (connect %.1f); %u us apart "
		       "p50 %.1f us p90 %.1f us (connect %.1f)", r + 1, a50 / 1e3, a90 / 1e3,
		       ac / 1e3, gap, s50 / 1e3, s90 / 1e3, sc / 1e3);
		if (!keep)
			printf("; close p50 %.1f us", cl50 / 1e3);
		printf("\n");
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	if (ret)
		return 1;
	qsort(b2b, rounds, sizeof(b2b[0]), cmp_u64);
	qsort(spaced, rounds, sizeof(spaced[0]), cmp_u64);
	printf("median of %u rounds (%u connects each%s): back to back %.1f us, %u us apart "
	       "%.1f us\n", rounds, n, keep ? ", kept open" : "", b2b[rounds / 2] / 1e3, gap,
	       spaced[rounds / 2] / 1e3);
	return 0;
}
