/* SPDX-License-Identifier: MIT */
/* pin.h - the benchmarks' one helper: run the calling thread on CPU `cpu`
 * (modulo the CPUs online, so that a 1-CPU machine still runs them). */
#ifndef BENCH_PIN_H
#define BENCH_PIN_H

#include <sched.h>
#include <unistd.h>

static inline void pin(int cpu)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu % (n > 0 ? n : 1), &set);
	sched_setaffinity(0, sizeof(set), &set);
}

#endif
