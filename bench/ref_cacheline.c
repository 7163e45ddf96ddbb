/* SPDX-License-Identifier: MIT */
/* ref_cacheline - the minimal two-line ping-pong that ipclab's cacheline
 * transport is checked against: one 64-byte line per direction in a
 * MAP_SHARED mapping, each written by one side only (an 8-byte sequence
 * word and up to 56 bytes of payload); the client writes its line and spins
 * on the server's, the server spins on the client's and answers in its own.
 * Per message the same work as ipclab: the payload copied into the line and
 * out of it (header with sequence and length, one byte per cache line
 * stored), sequence and length checked. Spins carry the pause hint, as
 * ipclab's do (without it a round trip here took 130 ns instead of 90: the
 * spinning load keeps stealing the line its peer is writing); no stop flag,
 * no yield, no end-of-stream.
 *
 *   ref_cacheline SIZE COUNT [batch]     (SIZE 16..56)
 *
 * The server on CPU 0, the client on CPU 1 (ipclab's --pin split); prints
 * "rtt_p50_ns N rtt_min_ns N rtt_mean_ns N rtt_p99_9_ns N rtt_max_ns N": round trips timed by the
 * client one by one (two clock reads each, as ipclab times them), the first
 * 10 % of exchanges left out as warm-up. With "batch" no clock is read in
 * the loop: "rtt_mean_ns N" is the time of all exchanges after the warm-up
 * over their count, what a program that times only its whole loop reports;
 * the two means apart are what timing each exchange costs. */
#define _GNU_SOURCE
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pin.h"

struct line {
	alignas(64) _Atomic uint64_t seq;	/* number of the message in data */
	unsigned char data[56];
};

struct hdr {
	uint32_t seq, len;
	uint64_t ts;
};

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

static uint64_t now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void put(struct line *l, unsigned char *buf, size_t size, uint32_t i)
{
	struct hdr *h = (struct hdr *)buf;

	h->seq = i;
	h->len = (uint32_t)size;
	memcpy(l->data, buf, size);
	atomic_store_explicit(&l->seq, i + 1, memory_order_release);
}

static void get(struct line *l, unsigned char *buf, size_t size, uint32_t i)
{
	const struct hdr *h = (const struct hdr *)buf;

	while (atomic_load_explicit(&l->seq, memory_order_acquire) != i + 1)
		relax();
	memcpy(buf, l->data, size);
	if (h->seq != i || h->len != size) {
		fprintf(stderr, "ref_cacheline: message %u: seq %u len %u\n", i, h->seq, h->len);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	size_t size = argc > 1 ? strtoul(argv[1], NULL, 0) : 32;
	uint32_t count = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 0) : 1000000, warm = count / 10;
	unsigned char buf[64] = { 0 };
	struct line *l;
	pid_t pid;
	int batch = argc > 3 && !strcmp(argv[3], "batch");

	if (size < sizeof(struct hdr) || size > sizeof(l->data) || count < 10 ||
	    (argc > 3 && !batch)) {
		fprintf(stderr, "usage: ref_cacheline SIZE(16..56) COUNT(>=10) [batch]\n");
		return 2;
	}
	l = mmap(NULL, 2 * sizeof(*l), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (l == MAP_FAILED)
		return 1;
	pid = fork();
	if (pid == 0) {		/* server: CPU 0, answers on line 1 */
		pin(0);
		for (uint32_t i = 0; i < count; i++) {
			get(&l[0], buf, size, i);
			put(&l[1], buf, size, i);
		}
		return 0;
	}
	uint64_t *rtt = calloc(count, sizeof(*rtt));

	pin(1);
	if (batch) {
		uint64_t t0 = 0;

		for (uint32_t i = 0; i < count; i++) {
			if (i == warm)
				t0 = now();
			for (size_t k = sizeof(struct hdr); k < size; k += 64)
				buf[k] = (unsigned char)i;
			put(&l[0], buf, size, i);
			get(&l[1], buf, size, i);
		}
		printf("rtt_mean_ns %.1f\n", (double)(now() - t0) / (count - warm));
		waitpid(pid, NULL, 0);
		return 0;
	}
	for (uint32_t i = 0; i < count; i++) {
		uint64_t t0 = now();

		for (size_t k = sizeof(struct hdr); k < size; k += 64)
			buf[k] = (unsigned char)i;
		put(&l[0], buf, size, i);
		get(&l[1], buf, size, i);
		rtt[i] = now() - t0;
	}
	waitpid(pid, NULL, 0);
	double sum = 0;

	for (uint32_t i = warm; i < count; i++)
		sum += (double)rtt[i];
	qsort(rtt + warm, count - warm, sizeof(*rtt), cmp);
	printf("rtt_p50_ns %llu rtt_min_ns %llu rtt_mean_ns %.1f rtt_p99_9_ns %llu rtt_max_ns %llu\n",
	       (unsigned long long)rtt[warm + (count - warm) / 2], (unsigned long long)rtt[warm],
	       sum / (count - warm), (unsigned long long)rtt[warm + (count - warm) * 999 / 1000],
	       (unsigned long long)rtt[count - 1]);
	return 0;
}
