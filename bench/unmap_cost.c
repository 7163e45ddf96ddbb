/* SPDX-License-Identifier: MIT */
/* unmap_cost - what unmapping a connection ring costs this machine: a
 * memfd mapped the way libipcring maps a 64 KiB ring (a PROT_NONE
 * reservation, the header and data area, the data area again right after,
 * both MAP_POPULATE: 33 pages with page-table entries), then munmap()
 * timed. Three shapes, alternated run by run:
 *   ring       the ring's 33 pages
 *   ring+hole  the same in a 34-page reservation whose last page is never
 *              touched (no entry: the flushed range stays 33 pages)
 *   ring+zero  the same with that last page mapped read-only and
 *              populated (the zero page: the flushed range is 34 pages)
 * Linux flushes an unmapped range one page at a time up to
 * tlb_single_page_flush_ceiling (33) pages and all at once above. Where
 * each page's flush is cheap the shapes cost about the same; where it is
 * a call to the hypervisor, "ring" costs several times "ring+zero".
 *
 *   unmap_cost [-r ROUNDS] [-n UNMAPS]     (defaults 3 and 200)
 *
 * Prints each shape's p50 and p90 per round, then the median p50s. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define HDR	4096u
#define CAP	(64u * 1024)
#define MAX_N	10000
#define MAX_R	64
#define SHAPES	3

static const char *const shape_name[SHAPES] = { "ring", "ring+hole", "ring+zero" };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Map one ring of @shape, unmap it, return the munmap's ns (0: failed). */
static uint64_t one(int fd, int shape)
{
	size_t len = HDR + 2 * CAP + (shape ? 4096u : 0);
	uint8_t *r = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uint64_t t0;

	if (r == MAP_FAILED)
		return 0;
	if (mmap(r, HDR + CAP, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | MAP_POPULATE,
		 fd, 0) == MAP_FAILED ||
	    mmap(r + HDR + CAP, CAP, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | MAP_POPULATE,
		 fd, HDR) == MAP_FAILED ||
	    (shape == 2 && mmap(r + HDR + 2 * CAP, 4096, PROT_READ,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_POPULATE, -1,
				0) == MAP_FAILED)) {
		munmap(r, len);
		return 0;
	}
	t0 = now_ns();
	munmap(r, len);
	return now_ns() - t0;
}

int main(int argc, char **argv)
{
	static uint64_t t[MAX_N];
	uint64_t p50[SHAPES][MAX_R];
	unsigned rounds = 3, n = 200;
	int opt, fd;

	while ((opt = getopt(argc, argv, "r:n:")) != -1) {
		if (opt == 'r')
			rounds = (unsigned)atoi(optarg);
		else if (opt == 'n')
			n = (unsigned)atoi(optarg);
		else
			rounds = 0;
	}
	if (optind != argc || !rounds || rounds > MAX_R || n < 10 || n > MAX_N) {
		fprintf(stderr, "usage: unmap_cost [-r ROUNDS (1-%d)] [-n UNMAPS (10-%d)]\n", MAX_R,
			MAX_N);
		return 2;
	}
	fd = memfd_create("unmap_cost", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, HDR + CAP)) {
		perror("unmap_cost: memfd");
		return 1;
	}
	for (unsigned r = 0; r < rounds; r++) {
		printf("round %u:", r + 1);
		for (int s = 0; s < SHAPES; s++) {
			for (unsigned i = 0; i < n; i++) {
				t[i] = one(fd, s);
				if (!t[i]) {
					perror("unmap_cost: mmap");
					return 1;
				}
			}
			qsort(t, n, sizeof(t[0]), cmp_u64);
			p50[s][r] = t[n / 2];
			printf(" %s p50 %.1f us p90 %.1f us;", shape_name[s], t[n / 2] / 1e3,
			       t[n * 9 / 10] / 1e3);
		}
		printf("\n");
	}
	printf("median of %u rounds (%u unmaps each):", rounds, n);
	for (int s = 0; s < SHAPES; s++) {
		qsort(p50[s], rounds, sizeof(p50[s][0]), cmp_u64);
		printf(" %s %.1f us", shape_name[s], p50[s][rounds / 2] / 1e3);
	}
	printf("\n");
	return 0;
}
