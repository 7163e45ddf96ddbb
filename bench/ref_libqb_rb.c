/* SPDX-License-Identifier: MIT */
/* ref_libqb_rb - the simplest program that moves what ipclab's libqb-rb
 * transport moves, written from qbrb.h alone: libqb's ring used the plain
 * documented way, qb_rb_chunk_write to send and qb_rb_chunk_read(..., 1000)
 * to receive, between two processes. It does the same work per message as
 * ipclab does (a 16-byte header with sequence and length, one payload byte
 * stored per cache line, sequence and length checked on receipt), and
 * nothing more: no stop flag, no end-of-stream, no histogram.
 *
 *   ref_libqb_rb stream   SIZE COUNT [sem|poll|nosem] [split|same]
 *   ref_libqb_rb pingpong SIZE COUNT [sem|poll|nosem] [split|same]
 *
 * Placement as ipclab's --pin: the server (stream: the reader) on CPU 0, the
 * client (stream: the writer) on CPU 1 with split, both on CPU 0 with same.
 * Waits: sem = qb_rb_chunk_read(..., 1000 ms) blocks on the ring's
 * semaphore; poll = qb_rb_chunk_read(..., 0) in a loop (sem_trywait);
 * nosem = QB_RB_FLAG_NO_SEMAPHORE and qb_rb_chunk_read(..., 0) in a loop.
 * A full ring is retried at once, as qbrb.h's example writer does.
 * Prints one line: stream "msgs_per_s N", ping-pong "rtt_p50_ns N rtt_min_ns
 * N" (round trip, timed by the client around each exchange). The first 10 %
 * of messages are warm-up, outside the timed window, as in ipclab. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <qb/qbrb.h>

#include "pin.h"

struct hdr {
	uint32_t seq, len;
	uint64_t ts;
};

static int nosem, waitms = 1000;

static uint64_t now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void put(qb_ringbuffer_t *rb, unsigned char *buf, size_t size, uint32_t seq)
{
	struct hdr *h = (struct hdr *)buf;

	for (size_t i = sizeof(*h); i < size; i += 64)
		buf[i] = (unsigned char)seq;
	h->seq = seq;
	h->len = (uint32_t)size;
	while (qb_rb_chunk_write(rb, buf, size) < 0)
		;	/* full: try again */
}

static void get(qb_ringbuffer_t *rb, unsigned char *buf, size_t size, uint32_t seq)
{
	const struct hdr *h = (const struct hdr *)buf;
	ssize_t n;

	while ((n = qb_rb_chunk_read(rb, buf, size, waitms)) <= 0)
		;	/* timed out, or nothing yet */
	if ((size_t)n != size || h->seq != seq || h->len != size) {
		fprintf(stderr, "ref_libqb_rb: message %u: got %zd bytes, seq %u, len %u\n", seq,
			n, h->seq, h->len);
		exit(1);
	}
}

static qb_ringbuffer_t *ring(const char *dir, const char *name, size_t cap, int create)
{
	char path[256];
	qb_ringbuffer_t *rb;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	rb = qb_rb_open(path, cap, QB_RB_FLAG_SHARED_PROCESS | (create ? QB_RB_FLAG_CREATE : 0) |
			(nosem ? QB_RB_FLAG_NO_SEMAPHORE : 0), 0);
	if (!rb) {
		perror("qb_rb_open");
		exit(1);
	}
	return rb;
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	char dir[] = "/dev/shm/ref-qb-XXXXXX";
	size_t size, cap = 1u << 20;
	uint32_t count, warm;
	int pp, same = 0, up[2], down[2];
	unsigned char *buf;
	pid_t pid;
	char c;

	if (argc < 4) {
		fprintf(stderr, "usage: ref_libqb_rb stream|pingpong SIZE COUNT [sem|poll|nosem] "
			"[split|same]\n");
		return 2;
	}
	pp = strcmp(argv[1], "pingpong") == 0;
	size = strtoul(argv[2], NULL, 0);
	count = (uint32_t)strtoul(argv[3], NULL, 0);
	if (argc > 4 && strcmp(argv[4], "sem")) {
		waitms = 0;
		nosem = strcmp(argv[4], "nosem") == 0;
	}
	if (argc > 5)
		same = strcmp(argv[5], "same") == 0;
	warm = count / 10;
	if (size < sizeof(struct hdr) || count < 2 || !mkdtemp(dir)) {
		fprintf(stderr, "ref_libqb_rb: bad arguments or no /dev/shm\n");
		return 2;
	}
	buf = calloc(1, size);
	/* the server creates both rings, the client opens them by name */
	qb_ringbuffer_t *c2s = ring(dir, "c2s", cap, 1), *s2c = ring(dir, "s2c", cap, 1);

	if (pipe(up) || pipe(down))
		return 1;
	pid = fork();
	if (pid == 0) {		/* client: CPU 1 (split) */
		qb_ringbuffer_t *tx = ring(dir, "c2s", cap, 0), *rx = ring(dir, "s2c", cap, 0);
		uint64_t *rtt = pp ? calloc(count, sizeof(*rtt)) : NULL;

		pin(same ? 0 : 1);
		if (write(up[1], "r", 1) != 1)
			return 1;
		for (uint32_t i = 0; i < count; i++) {
			uint64_t t0 = pp ? now() : 0;

			put(tx, buf, size, i);
			if (pp) {
				get(rx, buf, size, i);
				rtt[i] = now() - t0;
			}
		}
		if (pp) {
			qsort(rtt + warm, count - warm, sizeof(*rtt), cmp);
			printf("rtt_p50_ns %llu rtt_min_ns %llu\n",
			       (unsigned long long)rtt[warm + (count - warm) / 2],
			       (unsigned long long)rtt[warm]);
		} else {	/* let the reader finish before the files go */
			if (read(down[0], &c, 1) != 1)
				return 1;
		}
		qb_rb_close(tx);
		qb_rb_close(rx);
		return 0;
	}
	/* server: CPU 0 */
	pin(0);
	if (read(up[0], &c, 1) != 1)
		return 1;
	uint64_t t0 = 0;

	for (uint32_t i = 0; i < count; i++) {
		if (i == warm)
			t0 = now();
		get(c2s, buf, size, i);
		if (pp)
			put(s2c, buf, size, i);
	}
	if (!pp) {
		printf("msgs_per_s %.0f\n", (double)(count - warm) * 1e9 / (double)(now() - t0));
		fflush(stdout);
		if (write(down[1], "d", 1) != 1)
			return 1;
	}
	waitpid(pid, NULL, 0);
	qb_rb_close(c2s);
	qb_rb_close(s2c);
	rmdir(dir);
	return 0;
}
