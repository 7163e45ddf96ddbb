/* SPDX-License-Identifier: MIT */
/*
 * tutil.h - tiny test helpers for the libipcring tests: assertions that
 * print one line and exit 1, skip with 77, ring setup, checksums.
 */
#ifndef IPCRING_TUTIL_H
#define IPCRING_TUTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipcring.h"

#define T_SKIP	77

#define T_FAIL(...)							\
	do {								\
		fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);	\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		exit(1);						\
	} while (0)

#define T_ASSERT(c)							\
	do {								\
		if (!(c))						\
			T_FAIL("assertion '%s' failed", #c);		\
	} while (0)

/* compare integers, printing both */
#define T_EQ(a, b)							\
	do {								\
		long long _a = (long long)(a), _b = (long long)(b);	\
		if (_a != _b)						\
			T_FAIL("%s == %lld, expected %s == %lld",	\
			       #a, _a, #b, _b);				\
	} while (0)

struct t_pair {
	int memfd;
	int efd;
	struct ipcring *prod;
	struct ipcring *cons;
};

/* create a ring and attach both ends in this process (threads or tests) */
void t_pair_open(struct t_pair *p, const struct ipcring_opts *o);
void t_pair_close(struct t_pair *p);

uint64_t t_now_ns(void);
uint32_t t_crc(uint32_t seed, const void *buf, size_t len);
/* xorshift PRNG */
uint64_t t_rand(uint64_t *s);
/* pin the caller to CPU @cpu modulo the online CPUs; best effort */
void t_pin(int cpu);

#endif
