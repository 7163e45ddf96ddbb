// SPDX-License-Identifier: MIT
/*
 * tutil.c - helpers shared by the libipcring test programs.
 */
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "tutil.h"

void t_pair_open(struct t_pair *p, const struct ipcring_opts *o)
{
	int ret;

	p->efd = -1;
	ret = ipcring_create(o, &p->memfd, &p->efd);
	if (ret)
		T_FAIL("ipcring_create: %s", strerror(-ret));
	ret = ipcring_attach(&p->prod, p->memfd, IPCRING_PRODUCER, p->efd);
	if (ret)
		T_FAIL("attach producer: %s", strerror(-ret));
	ret = ipcring_attach(&p->cons, p->memfd, IPCRING_CONSUMER, p->efd);
	if (ret)
		T_FAIL("attach consumer: %s", strerror(-ret));
}

void t_pair_close(struct t_pair *p)
{
	ipcring_close(p->prod);
	ipcring_close(p->cons);
	close(p->memfd);
	if (p->efd >= 0)
		close(p->efd);
	memset(p, 0, sizeof(*p));
}

uint64_t t_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* FNV-1a-like 32-bit mix: cheap, order-sensitive */
uint32_t t_crc(uint32_t seed, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t h = seed ^ 2166136261u;

	while (len--)
		h = (h ^ *p++) * 16777619u;
	return h;
}

uint64_t t_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

void t_pin(int cpu)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	if (n < 1)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu % n, &set);
	sched_setaffinity(0, sizeof(set), &set);
}
