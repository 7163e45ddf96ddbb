// SPDX-License-Identifier: MIT
/* The busy loop of --think and --think-ns (pattern.h: pat_think), which
 * every pattern honours, and its calibration (iterations per ns), which
 * plan_build asks for when the command layer gave no think_per_ns. */
#include <time.h>

#include "ipclab/pattern.h"

static inline void think_loop(uint64_t n)
{
	volatile unsigned int v = 1;

	for (uint64_t i = 0; i < n; i++)
		v *= 3;
}

void pat_think_loop(const struct participant *p)
{
	const struct cell *c = p->cell;

	if (c->think)
		think_loop(c->think * c->size);
	else if (c->think_iters)
		think_loop(c->think_iters);
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* Timed on this thread's CPU clock, not the wall clock: time the loop
 * spent preempted (a loaded machine) would make every later think too
 * short. The fastest of three rounds. */
double think_calibrate(void)
{
	double best = 0;

	think_loop(1 << 17);	/* warm */
	for (int round = 0; round < 3; round++) {
		uint64_t n = 1 << 20, t0, el;

		do {
			t0 = thread_cpu_ns();
			think_loop(n);
			el = thread_cpu_ns() - t0;
			n *= 2;
		} while (el < 10 * NSEC_PER_MSEC);
		if ((double)(n / 2) / (double)el > best)
			best = (double)(n / 2) / (double)el;
	}
	return best;
}
