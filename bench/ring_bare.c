// SPDX-License-Identifier: MIT
/*
 * ring_bare.c - libipcring with no harness around it: two threads pinned to
 * CPU 0 and CPU 1 (modulo the online CPUs). Streams 64 B and 4 KiB records
 * (the producer writes every payload byte in place, the consumer reads every
 * payload word in place) and reports msgs/s, GB/s and syscalls per message;
 * then a 64 B ping-pong over two rings in spin-only mode, reporting the
 * round-trip time. Each stream runs -r times (best and median are shown).
 * Not a test; run it by hand: ring_bare [-s seconds] [-r runs]
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pin.h"

#include "ipcring.h"

#define BATCH	32

/* Read by the producer on every message; the consumer's running sum lives
 * in a line of its own, or every fold would pull this line across. */
struct bench {
	_Alignas(128) int memfd[2];
	uint32_t size;
	uint64_t count;		/* messages to move */
	int err;
	_Alignas(128) uint64_t sum;	/* consumer: fold of the payload */
	char pad[120];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "ring_bare: %s: %s\n", what, strerror(-err));
	exit(1);
}

static void *stream_producer(void *arg)
{
	struct bench *b = arg;
	struct ipcring *r;
	uint64_t i;
	void *p;
	int ret;

	pin(0);
	ret = ipcring_attach(&r, b->memfd[0], IPCRING_PRODUCER, -1);
	if (ret)
		die("attach", ret);
	for (i = 0; i < b->count; i++) {
		ret = ipcring_reserve(r, b->size, &p, -1);
		if (ret)
			die("reserve", ret);
		memset(p, (int)i, b->size);
		ipcring_commit(r, b->size, (i + 1) % BATCH ? IPCRING_MORE : 0);
	}
	ipcring_close(r);
	return NULL;
}

static int fold(void *ctx, const void *msg, size_t len)
{
	const uint64_t *w = msg;
	uint64_t *sum = ctx, s = 0;

	for (size_t i = 0; i < len / 8; i++)
		s += w[i];
	*sum += s;
	return 0;
}

struct result {
	double mps;		/* messages per second */
	double gbps;
	double sys_per_msg;	/* futex waits + wakes per message */
};

static struct result stream(uint32_t size, double secs, uint32_t mode)
{
	struct ipcring_opts o = { .capacity = 1 << 20, .wait_mode = mode };
	struct bench b = { .size = size };
	struct ipcring_stats st;
	struct result res;
	struct ipcring *r;
	pthread_t t;
	uint64_t t0, dt, got = 0;
	int ret;

	b.count = (uint64_t)(secs * (size <= 64 ? 20e6 : 2e6));
	ret = ipcring_create(&o, &b.memfd[0], NULL);
	if (ret)
		die("create", ret);
	pin(1);
	ret = ipcring_attach(&r, b.memfd[0], IPCRING_CONSUMER, -1);
	if (ret)
		die("attach", ret);
	t0 = now_ns();
	pthread_create(&t, NULL, stream_producer, &b);
	while ((ret = ipcring_read_batch(r, fold, &b.sum, 256, -1)) > 0)
		got += (uint64_t)ret;
	dt = now_ns() - t0;
	pthread_join(t, NULL);
	if (ret < 0 || got != b.count)
		die("stream", ret < 0 ? ret : -EPROTO);
	ipcring_stats(r, &st);
	res.mps = got / (dt / 1e9);
	res.gbps = got * (double)size / dt;
	res.sys_per_msg = (double)(st.producer.sleeps + st.producer.wakes +
				   st.consumer.sleeps + st.consumer.wakes) / (double)got;
	ipcring_close(r);
	close(b.memfd[0]);
	return res;
}

static int cmp_res(const void *a, const void *b)
{
	double x = ((const struct result *)a)->mps, y = ((const struct result *)b)->mps;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* Best and median of @reps runs: the machine may be shared and noisy. */
static void stream_report(uint32_t size, double secs, uint32_t mode, int reps)
{
	struct result res[32];
	int i;

	for (i = 0; i < reps; i++)
		res[i] = stream(size, secs, mode);
	qsort(res, (size_t)reps, sizeof(res[0]), cmp_res);
	printf("stream %5u B %-5s best %7.2f M msg/s %6.2f GB/s  median %7.2f M msg/s"
	       " %6.2f GB/s  futex calls/msg %.5f\n", size,
	       mode == IPCRING_WAIT_SPIN_ONLY ? "spin" : "futex", res[0].mps / 1e6,
	       res[0].gbps, res[reps / 2].mps / 1e6, res[reps / 2].gbps,
	       res[reps / 2].sys_per_msg);
}

/* Echo side of the ping-pong: ring 0 in, ring 1 out. */
static void *echo(void *arg)
{
	struct bench *b = arg;
	struct ipcring *in, *out;
	char buf[64];
	size_t len;
	int ret;

	pin(0);
	if (ipcring_attach(&in, b->memfd[0], IPCRING_CONSUMER, -1) ||
	    ipcring_attach(&out, b->memfd[1], IPCRING_PRODUCER, -1))
		die("attach", -EINVAL);
	while ((ret = ipcring_read(in, buf, sizeof(buf), &len, -1)) == 1)
		if (ipcring_write(out, buf, len, 0, -1))
			break;
	ipcring_close(in);
	ipcring_close(out);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void pingpong(double secs)
{
	struct ipcring_opts o = { .capacity = 65536, .align = 64,
				  .wait_mode = IPCRING_WAIT_SPIN_ONLY };
	enum { ROUNDS = 1000 };
	struct bench b = { .size = 64 };
	struct ipcring *out, *in;
	uint64_t *lat, i, n, t0, t1;
	char buf[64] = { 0 };
	pthread_t t;
	size_t len;

	n = (uint64_t)(secs * 2000);	/* batches of ROUNDS round trips */
	lat = calloc(n, sizeof(*lat));
	if (!lat || ipcring_create(&o, &b.memfd[0], NULL) ||
	    ipcring_create(&o, &b.memfd[1], NULL))
		die("create", -ENOMEM);
	pin(1);
	if (ipcring_attach(&out, b.memfd[0], IPCRING_PRODUCER, -1) ||
	    ipcring_attach(&in, b.memfd[1], IPCRING_CONSUMER, -1))
		die("attach", -EINVAL);
	pthread_create(&t, NULL, echo, &b);
	for (i = 0; i < n; i++) {
		t0 = now_ns();
		for (int k = 0; k < ROUNDS; k++) {
			if (ipcring_write(out, buf, sizeof(buf), 0, -1) ||
			    ipcring_read(in, buf, sizeof(buf), &len, -1) != 1)
				die("pingpong", -EPROTO);
		}
		t1 = now_ns();
		lat[i] = (t1 - t0) / ROUNDS;
	}
	ipcring_close(out);
	pthread_join(t, NULL);
	ipcring_close(in);
	qsort(lat, n, sizeof(*lat), cmp_u64);
	printf("pingpong 64 B spin  RTT per batch of %d: min %llu ns  median %llu ns"
	       "  p90 %llu ns  (%llu round trips)\n", ROUNDS,
	       (unsigned long long)lat[0], (unsigned long long)lat[n / 2],
	       (unsigned long long)lat[n * 9 / 10], (unsigned long long)(n * ROUNDS));
	free(lat);
	close(b.memfd[0]);
	close(b.memfd[1]);
}

int main(int argc, char **argv)
{
	double secs = 0.5;
	int opt, reps = 5;

	while ((opt = getopt(argc, argv, "s:r:")) != -1) {
		if (opt == 's')
			secs = atof(optarg);
		else
			reps = atoi(optarg);
	}
	if (reps < 1 || reps > 32)
		reps = 5;
	printf("ring_bare: %ld CPUs online, threads pinned to CPU 0 and 1, capacity 1 MiB,"
	       " flush every %d, default spin %u ns, %d runs of %.1f s each\n",
	       sysconf(_SC_NPROCESSORS_ONLN), BATCH, IPCRING_DEFAULT_SPIN_NS, reps, secs);
	stream_report(64, secs, IPCRING_WAIT_FUTEX, reps);
	stream_report(4096, secs, IPCRING_WAIT_FUTEX, reps);
	stream_report(64, secs, IPCRING_WAIT_SPIN_ONLY, reps);
	stream_report(4096, secs, IPCRING_WAIT_SPIN_ONLY, reps);
	for (opt = 0; opt < 3; opt++)
		pingpong(secs);
	return 0;
}
