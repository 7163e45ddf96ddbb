/* SPDX-License-Identifier: MIT */
/* Interference: how much of the endpoints' CPUs went to other tasks over a
 * cell's measured window, always measured (src/core/interference.c).
 *
 * For each CPU an endpoint ran on: the CPU's task time from /proc/stat
 * (user + nice + system; irq/softirq and steal are counted apart) minus
 * the endpoints' own run time (the scheduler's per-thread
 * /proc/thread-self/schedstat, read by each endpoint at its window's ends)
 * minus ipclab's own helpers there (--keep-awake's spinners), clamped to
 * [0, window]. This is the time other tasks ran on that CPU: what --trace
 * sees as sched_switch intervals of tasks that are not the endpoints, so
 * the two can be reconciled CPU by CPU (intf_foreign_ns).
 *
 * When every endpoint is confined to one CPU (--pin, or an affinity of
 * one CPU) the figures are per CPU; otherwise the endpoints may have moved
 * and only the pool of every CPU they may run on is known: its task time
 * minus the endpoints' total, over the pool's CPUs (method "pooled"). */
#ifndef IPCLAB_INTERFERENCE_H
#define IPCLAB_INTERFERENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipclab/metrics.h"

#define INTF_MAX_CPUS SYS_MAX_CPUS
#define INTF_MAX_HELPERS 64
/* noisy: another task took more than this share of an endpoint's CPU ... */
#define INTF_FOREIGN_NOISY_PCT 5.0
/* ... or the hypervisor stole at least this much of one */
#define INTF_STEAL_NOISY_PCT 1.0
/* /proc/stat counts in USER_HZ ticks: a difference of two readings is off by
 * up to a tick each, so a share below two ticks of the window is not told */
#define INTF_RESOLUTION_TICKS 2

/* The scheduler's accounting of one thread (/proc/.../schedstat): time on a
 * CPU, time runnable but waiting on a run queue, and time slices. */
struct sched_snap {
	uint64_t run_ns, wait_ns, slices;
};
/* The calling thread's; 0 or -errno (a kernel without CONFIG_SCHED_INFO). */
int sched_snap_self(struct sched_snap *s);
/* A process's (its main thread's); 0 or -errno. */
int sched_snap_pid(int pid, struct sched_snap *s);
/* Parse "run wait slices\n"; 0 or -EINVAL. */
int sched_snap_parse(const char *text, struct sched_snap *s);

/* One task the window accounts for: an endpoint or an ipclab helper. */
struct intf_task {
	uint64_t cpus;		/* CPUs it may run on, a bit each (CPU < 64) */
	uint64_t run_ns, wait_ns;	/* over its window (schedstat deltas) */
	uint64_t window_ns;	/* its own window (endpoints: for wait_pct) */
	bool known;		/* the deltas were read */
};

/* ipclab's helpers on the endpoints' CPUs (--keep-awake's spinners): read
 * at both ends of the window by the endpoint that takes the /proc/stat
 * snapshot, so that their time is not counted as another task's. */
struct intf_helpers {
	unsigned n;
	int pid[INTF_MAX_HELPERS], cpu[INTF_MAX_HELPERS];
	uint64_t run0[INTF_MAX_HELPERS], run1[INTF_MAX_HELPERS];
	bool ok0[INTF_MAX_HELPERS], ok1[INTF_MAX_HELPERS];
};
/* Read every helper's run time into run0/ok0 (end = false) or run1/ok1. */
void intf_helpers_take(struct intf_helpers *h, bool end);

/* A measured window: the two /proc/stat snapshots around it, the endpoints
 * and the helpers (their deltas). */
struct intf_window {
	const struct sys_snap *a, *b;
	const struct intf_task *ep;
	unsigned nep;
	const struct intf_task *help;
	unsigned nhelp;
};

enum intf_method { INTF_NONE, INTF_PER_CPU, INTF_POOLED };

/* Foreign time over the window: per CPU in foreign_ns[cpu] (UINT64_MAX for
 * a CPU that is not an endpoint's, or not known), *cpus the endpoints' CPU
 * set. INTF_PER_CPU; INTF_POOLED with the pool's total in *pool_ns (every
 * foreign_ns[] then UINT64_MAX); INTF_NONE when the window held no clock
 * tick or no endpoint was read. */
enum intf_method intf_foreign_ns(const struct intf_window *w, uint64_t foreign_ns[INTF_MAX_CPUS],
				 uint64_t *pool_ns, uint64_t *cpus);

/* One endpoint CPU's shares of the window, % (NAN: not known). */
struct intf_cpu {
	unsigned cpu;
	double busy_pct;	/* everything but idle and iowait */
	double endpoint_pct;	/* the endpoints' run time on it */
	double helper_pct;	/* ipclab's helpers' (--keep-awake's spinner) */
	double foreign_pct;	/* other tasks' */
	double irq_pct, steal_pct;
};

struct interference {
	enum intf_method method;
	uint64_t window_ns;	/* between the two /proc/stat snapshots */
	double resolution_pct;	/* two ticks of the window: smaller shares are not told */
	double foreign_pct;	/* the worst endpoint CPU's (pooled: the pool's) */
	int foreign_cpu;	/* which (-1: pooled or none) */
	double steal_pct, irq_pct;	/* the worst endpoint CPU's */
	double endpoint_wait_pct;	/* the worst endpoint's run-queue wait, % of its window */
	double loadavg_1min;
	bool noisy;
	unsigned ncpus;
	struct intf_cpu cpu[INTF_MAX_CPUS];
};

/* The record of a window. loadavg: the 1-minute load average (NAN: none). */
void intf_compute(const struct intf_window *w, double loadavg, struct interference *out);
/* A record that measured nothing (every figure NAN). */
void intf_clear(struct interference *out);
/* --repeat: another repetition's record folded into dst, the worst of the
 * two kept (the highest foreign, steal, irq and wait shares, the per-CPU
 * figures of the one with the highest foreign share; noisy when either was). */
void intf_fold(struct interference *dst, const struct interference *src);
/* "per_cpu", "pooled" or "none". */
const char *intf_method_name(enum intf_method m);
/* One word for a noisy record ("cpu1:48%", "pool:12%", "steal:3%",
 * "cpu1:48%,steal:3%"); "" when not noisy. */
void intf_summary(const struct interference *in, char *buf, size_t len);

#endif
