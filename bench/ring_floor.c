// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
/*
 * ring_floor.c - the smallest spinning single-producer ring this machine can
 * run, to show how far libipcring (bench/ring_bare) is from the floor: two
 * threads pinned to CPU 0 (producer) and CPU 1 (consumer) stream 64-byte
 * messages through a 1 MiB byte ring in private memory; the producer
 * publishes tail, and the consumer head, once per 32 messages. Three record
 * layouts, alternated:
 *   plain       64-byte records, no header: the consumer trusts tail
 *   header      ipcring's 8-byte header (commit word, stamp) and pre-zeroed
 *               next header; the consumer polls the commit word
 *   header+tail the same records; the consumer reads only what tail covers
 * No waiting, no checks, no API: a ceiling, not a library.
 * Not a test; run it by hand: ring_floor [-n messages] [-r runs]
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pin.h"

#define CAP	(1u << 20)
#define MSG	64u
#define HDR	8u
#define BATCH	32u
#define COMMIT	0x80000000u

enum layout { PLAIN, HEADER, HEADER_TAIL, NLAYOUTS };
static const char *const names[] = { "plain", "header", "header+tail" };

/* Every word either side writes in a 128-byte block of its own. */
struct ring {
	_Alignas(128) _Atomic uint64_t tail;
	_Alignas(128) _Atomic uint64_t head;
	_Alignas(128) uint8_t *data;	/* read-only once running */
	uint64_t count;
	enum layout layout;
	_Alignas(128) uint64_t sum;	/* the consumer's */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint32_t rec_size(enum layout l)
{
	return l == PLAIN ? MSG : MSG + HDR;
}

static _Atomic uint32_t *commit_word(uint8_t *data, uint64_t pos)
{
	return (_Atomic uint32_t *)(void *)(data + (pos & (CAP - 1)));
}

static void *producer(void *arg)
{
	struct ring *r = arg;
	uint8_t *data = r->data;
	uint32_t rs = rec_size(r->layout);
	uint64_t pos = 0, head = 0;

	pin(0);
	for (uint64_t i = 0; i < r->count; i++) {
		uint8_t *p = data + (pos & (CAP - 1));

		while (pos + rs + HDR - head > CAP)
			head = atomic_load_explicit(&r->head, memory_order_acquire);
		if (r->layout == PLAIN) {
			memset(p, (int)i, MSG);
		} else {
			memset(p + HDR, (int)i, MSG);
			atomic_store_explicit(commit_word(data, pos + rs), 0, memory_order_relaxed);
			memcpy(p + 4, &(uint32_t){ (uint32_t)pos }, 4);
			atomic_store_explicit(commit_word(data, pos), COMMIT | MSG,
					      memory_order_release);
		}
		pos += rs;
		if ((i + 1) % BATCH == 0 || i + 1 == r->count)
			atomic_store(&r->tail, pos);
	}
	return NULL;
}

static double run(enum layout l, uint64_t count)
{
	struct ring *r = aligned_alloc(128, sizeof(*r));
	uint32_t rs = rec_size(l);
	uint64_t pos = 0, tail = 0, sum = 0;
	pthread_t t;
	double t0, dt;

	if (!r || !(r->data = aligned_alloc(4096, CAP + 4096))) {
		fprintf(stderr, "ring_floor: out of memory\n");
		exit(1);
	}
	memset(r->data, 0, CAP + 4096);
	atomic_init(&r->tail, 0);
	atomic_init(&r->head, 0);
	r->count = count;
	r->layout = l;
	pin(1);
	t0 = now_s();
	if (pthread_create(&t, NULL, producer, r)) {
		fprintf(stderr, "ring_floor: cannot start the producer\n");
		exit(1);
	}
	for (uint64_t i = 0; i < count; i++) {
		const uint8_t *p = r->data + (pos & (CAP - 1));
		uint64_t w[MSG / 8];

		if (l == HEADER) {
			while (!(atomic_load_explicit(commit_word(r->data, pos),
						      memory_order_acquire) & COMMIT))
				;
		} else {
			while (pos >= tail)
				tail = atomic_load_explicit(&r->tail, memory_order_acquire);
		}
		memcpy(w, p + (l == PLAIN ? 0 : HDR), MSG);
		for (unsigned k = 0; k < MSG / 8; k++)
			sum += w[k];
		pos += rs;
		if ((i + 1) % BATCH == 0)
			atomic_store_explicit(&r->head, pos, memory_order_release);
	}
	dt = now_s() - t0;
	pthread_join(t, NULL);
	r->sum = sum;		/* keep the reads */
	free(r->data);
	free(r);
	return (double)count / dt;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	double mps[NLAYOUTS][32];
	uint64_t count = 30000000;
	int opt, reps = 5;

	while ((opt = getopt(argc, argv, "n:r:")) != -1) {
		if (opt == 'n')
			count = strtoull(optarg, NULL, 0);
		else
			reps = atoi(optarg);
	}
	if (reps < 1 || reps > 32 || !count) {
		fprintf(stderr, "usage: ring_floor [-n messages] [-r runs (1-32)]\n");
		return 2;
	}
	printf("ring_floor: 64 B messages, 1 MiB ring, publish every %u, producer CPU 0, "
	       "consumer CPU 1, %d alternated runs of %llu messages\n",
	       BATCH, reps, (unsigned long long)count);
	for (int i = 0; i < reps; i++)
		for (int l = 0; l < NLAYOUTS; l++)
			mps[l][i] = run((enum layout)l, count);
	for (int l = 0; l < NLAYOUTS; l++) {
		qsort(mps[l], (size_t)reps, sizeof(double), cmp);
		printf("%-12s median %6.1f M msg/s  min %6.1f  max %6.1f\n", names[l],
		       mps[l][reps / 2] / 1e6, mps[l][0] / 1e6, mps[l][reps - 1] / 1e6);
	}
	return 0;
}
