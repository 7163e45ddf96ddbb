/* SPDX-License-Identifier: MIT */
/* The machine's floors and a run's canary (src/core/floors.c).
 *
 * The floors: what the cheapest message between the run's CPUs costs at
 * the least - a cache line's round trip, a futex wake-to-run onto an idle
 * CPU and onto a busy one, a minimal system call - each a median with its
 * spread. ipclab env --floors and run --floors.
 *
 * The canary: a short, bounded measurement (a cache line's round trip
 * between the run's CPUs and a pipe's round trip with both ends on its
 * first CPU, medians, ~10-50 ms) taken at the start and the end of every
 * run. A virtual machine that switches between a fast and a slow mode (a
 * cache-line round trip of ~110 or ~470 ns) shows it there, and compare
 * and history refuse to set runs of two modes against each other. */
#ifndef IPCLAB_FLOORS_H
#define IPCLAB_FLOORS_H

#include <stdbool.h>
#include <stddef.h>

/* Two canaries more than this factor apart (either way) were measured in
 * different states of the machine. The two modes of the 2-vCPU guest
 * ipclab was built on are ~4x apart (cache line ~110 vs ~470 ns, same-CPU
 * pipe ~4 vs ~17 us); within one mode the canary scattered up to 1.6x
 * (cache line 381-601 ns, pipe 6.9-10.5 us over 15 runs) only under a
 * load average of 18 on its 2 CPUs. 1.8x sits between the two. */
#define CANARY_RATIO_MAX 1.8

/* One floor: the median and the 10th and 90th percentiles of n samples,
 * in ns; n 0 when it could not be measured (why says so). */
struct floor_stat {
	double median_ns, p10_ns, p90_ns;
	unsigned n;
};

struct floors {
	bool on;
	int cpus[2];		/* [0] the waker and the caller, [1] the woken; -1 */
	struct floor_stat cacheline_rtt, wake_idle, wake_busy, syscall;
	char why[160];		/* a floor that could not be measured: why */
};

struct canary {
	bool on;
	int cpus[2];		/* the cache line between them; the pipe on cpus[0] */
	double cacheline_rtt_ns, pipe_rtt_ns;	/* medians; NAN when not measured */
};

/* The two CPUs to measure on: want[0] and want[1] where this process may
 * run on them, else the next ones it may; out[1] -1 with one CPU only. */
void floors_pick_cpus(const int *want, unsigned nwant, int out[2]);

/* The canary on cpus (floors_pick_cpus). Never fails: a part that could
 * not be measured is NAN. */
void canary_measure(const int cpus[2], struct canary *c);

/* The floors on cpus (~0.2 s). A floor that could not be measured has
 * n 0 and f->why says why. */
void floors_measure(const int cpus[2], struct floors *f);

/* How far apart two canaries are: the cache line's round-trip ratio, taken
 * as >= 1 (the pipe's moves with the load on its CPU as much as with the
 * machine's state: recorded, not used here); *what names it ("cache-line
 * RTT"). 0 when they share no cache-line figure. */
double canary_ratio(double cl_a, double pipe_a, double cl_b, double pipe_b, const char **what);

#endif
