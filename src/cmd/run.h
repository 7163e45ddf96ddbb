/* SPDX-License-Identifier: MIT */
/* The run command's text (struct run_args: the lists as the user typed
 * them) and its three steps: options (run.c), text -> typed plan_spec
 * (run_spec.c), and plan -> session -> report (run_exec.c). The suite
 * uses the last step with specs of its own. */
#ifndef IPCLAB_CMD_RUN_H
#define IPCLAB_CMD_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "ipclab/engine.h"
#include "ipclab/remote.h"
#include "ipclab/reporter.h"
#include "cli_opt.h"
#include "dbcmd.h"
#include "ipclab/trace.h"

struct matrix_info;

#define MAX_LIST PLAN_MAX_LIST

struct run_args {
	char *transports, *patterns, *sizes, *endpoints, *pins, *scheds, *clients;
	char *thinks, *think_nss, *rates, *pivot;
	/* --peer HOST[:PORT]; --token-file, else --token (its value copied
	 * into token_arg, hidden in argv), else IPCLAB_TOKEN */
	const char *peer, *token, *token_file;
	char token_arg[REMOTE_TOKEN_MAX + 1];
	char *period;		/* --period */
	const struct field *pivot_spec[3];
	uint64_t count, warmup, duration_ns, timeout_ns, max_time_ns;
	bool count_set, warmup_set, max_time_set, verify, quiet, default_run, keep_awake;
	bool floors;
	bool dry_run;		/* plan only: every cell is reported as skipped ("dry run") */
	bool reference;		/* --reference */
	bool trace;		/* --trace */
	bool trace_syscalls;	/* --trace=syscalls */
	bool explain;		/* --explain */
	const char *trace_events_path;	/* --trace=events FILE */
	struct trace_events_opts trace_span;	/* --trace-span D|N */
	bool profile;		/* --profile */
	const char *profile_dir;	/* --profile DIR */
	bool lenient;		/* a named transport that cannot run is skipped, not an error */
	const char *plot_dir;	/* --plot DIR */
	const char *html;	/* --html FILE */
	struct matrix_info *matrix;	/* --pin matrix: CPUs and topology (run_spec.c fills it) */
	const struct field *matrix_metric;	/* --matrix-metric (NULL = lat_p50_ns) */
	int pm_qos_us;
	const char *format, *output;
	unsigned repeat;	/* --repeat N; with repeat_auto the most rounds */
	bool repeat_auto;	/* --repeat auto[=PCT][,max=ROUNDS] */
	double auto_pct;
	uint64_t budget_ns;	/* --budget (0 = none) */
	unsigned runs;		/* --runs N: N separate runs of the plan (0 = one) */
	char *kv[MAX_LIST];
	unsigned nkv;
	char cmdline[1024];
	struct db_args db;	/* --db, --label, --db-failed */
};

/* run's options (run.c), a row each (cli_opt.h). */
extern const struct cli_opt run_options[];

/* Defaults for every field, as `ipclab run` with no options. */
void args_defaults(struct run_args *a);

/* run_spec.c: the lists of a into a typed spec (its option blocks owned by
 * pl); 0, or 2 for bad input (printed). */
int run_spec_parse(struct run_args *a, struct plan_spec *spec, struct plan *pl);
/* Every transport's and pattern's option block of d at its defaults (no
 * -O), owned by pl; 0 or 2. */
int run_spec_default_options(struct plan_spec *d, struct plan *pl);
/* Parse a and append its cells to pl (as one `ipclab run` would); 0 or 2. */
int build_plan(struct run_args *a, struct plan *pl);
/* Iterations of the think loop per ns, calibrated once; said on stderr
 * unless quiet (arg: a bool *, true = quiet). For plan_spec.think_per_ns. */
double run_think_per_ns(void *quiet);

/* run_exec.c: the cells of pl run as one session, results in rep (the
 * caller frees rep->results, which is NULL when nothing ran). Warnings
 * and progress on stderr unless quiet. Returns 0, 1 (an idle knob failed,
 * printed), 2 (out of memory, printed) or 128+N (interrupted). */
int run_session(const struct plan *pl, const struct session_opts *so, bool quiet,
		struct report *rep);
/* run_runs.c: --runs N, the plan run as N separate runs (run_session
 * each, its cells interleaved run by run), folded into rep (rep->runs,
 * rep->run_results: the caller frees them with run_runs_free). Returns
 * as run_session. */
int run_runs(const struct plan *pl, const struct session_opts *so, bool quiet, unsigned nruns,
	     struct report *rep);
void run_runs_free(struct report *rep);
/* --runs with what it cannot take (-p cycle): 0 or 2 (printed). */
int run_runs_check(const struct plan *pl);
/* Plan, run and report args[0..n) as one plan; the exit status. */
int do_run(struct run_args *args, unsigned nargs);
/* --vmstat's line (run_exec.c), the runner's tick. */
struct sys_snap;
void vmstat_line(const struct cell *c, const struct sys_snap *a, const struct sys_snap *b);

#endif
