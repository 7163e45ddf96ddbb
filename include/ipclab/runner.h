/* SPDX-License-Identifier: MIT */
/* The runner: runs one cell (fork or threads, start barrier, watchdog,
 * collect) and turns the sides' records into a result. */
#ifndef IPCLAB_RUNNER_H
#define IPCLAB_RUNNER_H

#include <signal.h>

#include "ipclab/pattern.h"
#include "ipclab/result.h"

/* Set by SIGINT/SIGTERM in the parent: the signal number. */
extern volatile sig_atomic_t runner_interrupted;

/* Install the parent's signal handlers (once). */
void runner_init(void);

/* Run one cell. Fills res (status ok / failed / skipped with a reason).
 * Returns 0, or -EINTR when the run was interrupted by a signal. */
int run_cell(const struct cell *c, struct result *res);

/* What the runner hands to runner_collect() (src/core/collect.c). */
struct run_ctl_view {
	const struct side_stats *sides;
	unsigned nsides;
	const struct sys_snap *sys0, *sys1;
	const struct intf_helpers *helpers;	/* ipclab's own tasks there (may be NULL) */
};
void runner_collect(const struct run_ctl_view *v, struct result *res);

/* --vmstat: called by the runner about once a second while a cell runs,
 * with the previous and the current /proc/stat snapshot. */
typedef void (*runner_tick_fn)(const struct cell *c, const struct sys_snap *prev,
			       const struct sys_snap *cur);
void runner_set_tick(runner_tick_fn fn);

/* The progress line: called by the runner about once a second while a
 * cell runs, with the sides' records as they are (only their atomic
 * fields may be read: progress, and those of a pattern's own record that
 * its live hook reads). */
typedef void (*runner_live_fn)(const struct cell *c, const struct side_stats *sides,
			       unsigned nsides, uint64_t ran_ns);
void runner_set_live(runner_live_fn fn);

/* Default warm-up for a count. */
uint64_t runner_default_warmup(uint64_t count);

#endif
