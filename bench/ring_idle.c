// SPDX-License-Identifier: MIT
/*
 * ring_idle.c - two of issue 4's goals that ipclab's reports cannot show,
 * measured on libipcring directly (bench/ring.sh runs it):
 *  - idle: a consumer blocked for 1 s on an empty ring (futex and eventfd
 *    modes, default 30 us spin): its CPU time and the sleeps it made, beside
 *    a thread that only sleeps 10 x 100 ms (the ring wakes every 100 ms to
 *    check its peer). CPU time from CLOCK_THREAD_CPUTIME_ID (the scheduler's
 *    exact runtime); getrusage's is printed too, but with tick-based
 *    accounting (CONFIG_TICK_CPU_ACCOUNTING) it is scaled from 4 ms ticks
 *    and can be off by a millisecond either way;
 *  - futex calls per message while streaming: 64 B and 4 KiB records, one
 *    publish per record (ipclab's default batch=1), a consumer reading in
 *    place, producer and consumer threads pinned to CPU 0 and 1; the
 *    library's counters (sleeps + wakes of both sides) over the messages.
 * Output: one "key value" line per figure. Not a test.
 * Usage: ring_idle [-n messages]
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "pin.h"

#include "ipcring.h"

struct stream_arg {
	int memfd;
	uint32_t size;
	uint64_t count;
};

static uint64_t ns_now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_rusage_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000u +
	       ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000u;
}

static uint64_t thread_cpu_ns(void)
{
	return ns_now(CLOCK_THREAD_CPUTIME_ID);
}

static void die(const char *what, int err)
{
	fprintf(stderr, "ring_idle: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

/* A consumer that waits 1 s for a record that never comes. */
static void idle(uint32_t mode, const char *name)
{
	struct ipcring_opts o = { .wait_mode = mode };
	struct ipcring *p, *c;
	struct ipcring_stats st;
	int memfd, efd, r;
	const void *msg;
	uint64_t cpu0, ru0, t0, cpu, ru, wall;
	size_t len;

	r = ipcring_create(&o, &memfd, &efd);
	if (!r)
		r = ipcring_attach(&p, memfd, IPCRING_PRODUCER, efd);
	if (!r)
		r = ipcring_attach(&c, memfd, IPCRING_CONSUMER, efd);
	if (r)
		die("create/attach", r);
	t0 = ns_now(CLOCK_MONOTONIC);
	cpu0 = thread_cpu_ns();
	ru0 = thread_rusage_ns();
	r = ipcring_peek(c, &msg, &len, 1000);
	cpu = thread_cpu_ns() - cpu0;
	ru = thread_rusage_ns() - ru0;
	wall = ns_now(CLOCK_MONOTONIC) - t0;
	if (r != -ETIMEDOUT)
		die("idle peek", r ? r : -EPROTO);
	ipcring_stats(c, &st);
	printf("idle_%s_wall_ns %llu\n", name, (unsigned long long)wall);
	printf("idle_%s_cpu_ns %llu\n", name, (unsigned long long)cpu);
	printf("idle_%s_rusage_ns %llu\n", name, (unsigned long long)ru);
	printf("idle_%s_sleeps %llu\n", name, (unsigned long long)st.consumer.sleeps);
	ipcring_close(p);
	ipcring_close(c);
	close(memfd);
	if (efd >= 0)
		close(efd);
}

/* The floor: a thread that only sleeps, in the ring's 100 ms slices. */
static void idle_baseline(void)
{
	struct timespec ts = { .tv_nsec = 100000000 };
	uint64_t cpu0 = thread_cpu_ns();

	for (int i = 0; i < 10; i++)
		nanosleep(&ts, NULL);
	printf("idle_sleep_only_cpu_ns %llu\n", (unsigned long long)(thread_cpu_ns() - cpu0));
}

static void *producer(void *arg)
{
	struct stream_arg *a = arg;
	struct ipcring *r;
	void *p;
	int ret;

	pin(0);
	ret = ipcring_attach(&r, a->memfd, IPCRING_PRODUCER, -1);
	if (ret)
		die("attach", ret);
	for (uint64_t i = 0; i < a->count; i++) {
		ret = ipcring_reserve(r, a->size, &p, -1);
		if (ret)
			die("reserve", ret);
		memset(p, (int)i, a->size);
		ipcring_commit(r, a->size, 0);
	}
	ipcring_close(r);
	return NULL;
}

/* Stream count records; futex calls (sleeps + wakes, both sides) per record. */
static void stream(uint32_t size, uint64_t count)
{
	struct ipcring_opts o = { 0 };
	struct stream_arg a = { .size = size, .count = count };
	struct ipcring_stats st;
	struct ipcring *c;
	const void *msg;
	uint64_t got = 0, sum = 0, calls;
	pthread_t t;
	size_t len;
	int r;

	r = ipcring_create(&o, &a.memfd, NULL);
	if (!r)
		r = ipcring_attach(&c, a.memfd, IPCRING_CONSUMER, -1);
	if (r)
		die("create/attach", r);
	pin(1);
	pthread_create(&t, NULL, producer, &a);
	while ((r = ipcring_peek(c, &msg, &len, -1)) == 1) {
		sum += *(const uint8_t *)msg + ((const uint8_t *)msg)[len - 1];
		ipcring_release(c);
		got++;
	}
	pthread_join(t, NULL);
	if (r < 0 || got != count)
		die("stream", r < 0 ? r : -EPROTO);
	ipcring_stats(c, &st);
	calls = st.producer.sleeps + st.producer.wakes + st.consumer.sleeps + st.consumer.wakes;
	printf("stream_%u_msgs %llu\n", size, (unsigned long long)got);
	printf("stream_%u_futex_calls %llu\n", size, (unsigned long long)calls);
	printf("stream_%u_futex_per_msg %.7f\n", size, (double)calls / (double)got);
	printf("stream_%u_checksum %llu\n", size, (unsigned long long)sum);
	ipcring_close(c);
	close(a.memfd);
}

int main(int argc, char **argv)
{
	uint64_t n = 2000000;
	int opt;

	while ((opt = getopt(argc, argv, "n:")) != -1) {
		if (opt != 'n') {
			fprintf(stderr, "usage: ring_idle [-n messages]\n");
			return 2;
		}
		n = strtoull(optarg, NULL, 10);
	}
	idle_baseline();
	idle(IPCRING_WAIT_FUTEX, "futex");
	idle(IPCRING_WAIT_EVENTFD, "eventfd");
	stream(64, n);
	stream(4096, n / 8 ? n / 8 : 1);
	return 0;
}
