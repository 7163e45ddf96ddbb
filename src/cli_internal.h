/* SPDX-License-Identifier: MIT */
/* Private to cli.c and suite.c: a run's arguments, and planning and running
 * them without printing, so the suite can lay results out its own way. */
#ifndef IPCLAB_CLI_INTERNAL_H
#define IPCLAB_CLI_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "ipclab/report.h"

#define MAX_LIST 64
#define MAX_CELLS 10000	/* cells in one plan */

struct run_args {
	char *transports, *patterns, *sizes, *endpoints, *pins, *scheds, *clients;
	char *thinks, *think_nss, *rates, *pivot;
	const struct field *pivot_spec[3];
	uint64_t count, warmup, duration_ns, timeout_ns, max_time_ns;
	bool count_set, warmup_set, max_time_set, verify, quiet, default_run, keep_awake;
	bool dry_run;		/* plan only: every cell is reported as skipped ("dry run") */
	bool lenient;		/* a named transport that cannot run is skipped, not an error */
	const char *section;	/* suite section written into each result */
	const char *plot_dir;	/* --plot DIR */
	int pm_qos_us;
	const char *format, *output;
	unsigned repeat;
	char *kv[MAX_LIST];
	unsigned nkv;
	char cmdline[1024];
};

/* A plan: the cells of one or more run_args. */
struct plan {
	struct cell *cells;
	size_t n, cap;
	void *opt_blocks[2 * MAX_LIST];
	unsigned nblocks;
};


/* Defaults for every field, as `ipclab run` with no options. */
void args_defaults(struct run_args *a);

/* Plan and run args[0..n) as one plan (no output). On success *res holds
 * rep->n results (complete cells only when interrupted); returns 0, 2 for
 * bad input (printed), or 128+N when interrupted by signal N. */
int plan_and_run(struct run_args *args, unsigned nargs, struct report *rep, struct result **res);

int write_report(const struct run_args *a, const struct report *rep);

/* One line on stderr, "ipclab: ..."; returns 2 (bad input). */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Add the cells of one run_args to the plan (src/plan.c); 0 or 2. */
int build_plan(struct run_args *a, struct plan *pl);
/* Plan, run and report (src/run.c); the exit status. */
int do_run(struct run_args *args, unsigned nargs);
/* --vmstat's line (src/run.c). */
struct sys_snap;
void vmstat_line(const struct cell *c, const struct sys_snap *a, const struct sys_snap *b);

#endif
