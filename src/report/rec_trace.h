/* SPDX-License-Identifier: MIT */
/* The trace and profile parts of a result read back (docs/output.md,
 * "trace", "profile", "profile_run"): plain copies of what the reports
 * draw, so that the trace section's keys are spelt here and in the writer
 * (trace_out.c, profile_out.c) only. A result file is hostile input: a
 * number reads as a finite double or NAN (absent, null, not a number), a
 * string as at most RTRACE_STR_MAX bytes without NUL or NULL, an array up
 * to its bound below (the rest left out), and an array entry that is not
 * an object as all absent. Strings and raw values are borrowed from the
 * file's tree: valid as long as its rfile. */
#ifndef IPCLAB_REPORT_REC_TRACE_H
#define IPCLAB_REPORT_REC_TRACE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "rfile.h"

#define RTRACE_STR_MAX 1024	/* a longer string reads as absent (the writer's longest: 320) */
#define RTRACE_MAX_SIDES 65	/* trace.sides and profile entries read (= TRACE_MAX_SIDES) */
#define RTRACE_MAX_SHARES 32	/* cause.shares (the writer's: 11) */
#define RTRACE_MAX_TAKERS 16	/* a side's preempted_by (5) */
#define RTRACE_MAX_SYSCALLS 16	/* a side's top_syscalls (3) */
#define RTRACE_MAX_NUMS 32	/* per_msg's numbers (6) */
#define RTRACE_MAX_EXTRAS 64	/* keys handed on as raw JSON */
#define RPROF_MAX_TOP 64	/* a profile side's top (15) */

/* ---- trace ---- */

/* trace is an object: the run had --trace. */
bool rcell_has_trace(const struct rcell *c);

/* trace.perturbation, perturbation_of, complete, lost_events: all absent
 * (incomplete false) without a trace, then false. */
struct rtrace_summary {
	double perturbation;		/* traced / untraced */
	const char *perturbation_of;	/* the figure compared */
	bool incomplete;		/* complete is false (absent: not said) */
	double lost_events;
};
bool rcell_trace_summary(const struct rcell *c, struct rtrace_summary *out);

/* trace.per_msg: its entries in the file's order, each key and its number
 * (NAN for null: syscalls without probes); the count, 0 without. */
struct rtrace_num {
	const char *key;
	double v;
};
size_t rcell_trace_per_msg(const struct rcell *c, struct rtrace_num *out, size_t max);

/* A side's time budget over its window (user_ns, sys_ns, runnable_ns,
 * preempted_ns, sleep_ns: they add up to wall_ns). */
enum rtrace_budget { RT_USER, RT_SYS, RT_RUNNABLE, RT_PREEMPTED, RT_SLEEP, RT_NBUDGET };

/* One of trace.sides. */
struct rtrace_side {
	const char *role;		/* "server", "client"; NULL */
	double id;
	double wall_ns, budget_ns[RT_NBUDGET];
	double wakeups, migrations, vol_ctx_switches, invol_ctx_switches;
	double wakeup_p50_ns, wakeup_p99_ns;	/* wakeup_lat_ns.p50, .p99 (null: never woken) */
	double preempted_by_ns;		/* all other tasks' time while it waited */
	size_t ntakers, nsyscalls;	/* preempted_by's and top_syscalls' entries, bounded */
};
/* trace.sides' count (at most RTRACE_MAX_SIDES), 0 without. */
size_t rcell_trace_sides(const struct rcell *c);
/* Side i of those; false past the count. */
bool rcell_trace_side(const struct rcell *c, size_t i, struct rtrace_side *out);

/* Side i's preempted_by: {comm, pid, tid, ns, count}; the count. */
struct rtrace_taker {
	const char *comm;
	double pid, tid, ns, count;
};
size_t rcell_trace_takers(const struct rcell *c, size_t side, struct rtrace_taker *out,
			  size_t max);

/* Side i's top_syscalls: {name, count, cpu_ns, wall_ns}; the count. */
struct rtrace_syscall {
	const char *name;
	double count, cpu_ns, wall_ns;
};
size_t rcell_trace_syscalls(const struct rcell *c, size_t side, struct rtrace_syscall *out,
			    size_t max);

/* A key with its value as the file has it, for a report that shows what
 * it has no drawing for. */
struct rtrace_extra {
	const char *key;
	const json_t *v;
};
/* Side i's objects and arrays that rtrace_side does not read
 * (runnable_split, ...), in the file's order; the count. */
size_t rcell_trace_side_more(const struct rcell *c, size_t side, struct rtrace_extra *out,
			     size_t max);
/* trace's keys that the summary, per_msg, sides, critical path, cause and
 * explain do not read (lost_by, events, perturbation_pairs, ...), null
 * ones left out, in the file's order; the count. */
size_t rcell_trace_more(const struct rcell *c, struct rtrace_extra *out, size_t max);

/* trace.critical_path_ns (ping-pong, one client): the parts of a round
 * trip, named as rtrace_cpath_parts, their total and the measured mean.
 * false when it is not an object (null: another pattern). */
#define RT_CPATH_PARTS 7
extern const char *const rtrace_cpath_parts[RT_CPATH_PARTS];
struct rtrace_cpath {
	double part_ns[RT_CPATH_PARTS];
	double total_ns, measured_ns;
};
bool rcell_trace_cpath(const struct rcell *c, struct rtrace_cpath *out);

/* trace.cause: the headline figure's split into shares {name, ns, pct,
 * pct_ci95}, and the leading cause (NULL: none stable, or a file from
 * before leading was written: `decided` tells them apart). false when it
 * has no shares array (null: no figure to split). */
struct rtrace_share {
	const char *name;
	double ns, pct;
	double ci_lo, ci_hi;		/* pct's 95 % interval; NAN both: none */
};
struct rtrace_cause {
	const char *of, *whose, *sentence, *largest, *leading;
	bool decided;			/* a leading cause is named: `leading`, or no
					 * `leading` key at all (a file before intervals) */
	double total_ns, largest_pct;
	double ci_exchanges;		/* the intervals' exchanges (ping-pong); NAN: none */
	double ci_slices;		/* ... or slices of the window (stream, fan-in,
					 * cycle); NAN: none */
	size_t nshares;
	struct rtrace_share shares[RTRACE_MAX_SHARES];
};
bool rcell_trace_cause(const struct rcell *c, struct rtrace_cause *out);

/* trace.explain (--explain): the cause tested, its knob, the figure before
 * and after, the ratio over the pairs and the verdict (confirmed true,
 * false, or null: not tested). false when it is not an object. */
enum rtrace_verdict { RT_NOT_TESTED, RT_CONFIRMED, RT_NOT_CONFIRMED };
struct rtrace_explain {
	const char *cause, *knob, *of, *note;
	double share_pct, before, after, ratio, ratio_lo, ratio_hi, pairs;
	enum rtrace_verdict verdict;
};
bool rcell_trace_explain(const struct rcell *c, struct rtrace_explain *out);

/* ---- profile ---- */

/* profile is an array: the run had --profile. */
bool rcell_has_profile(const struct rcell *c);
/* Its sides' count (at most RTRACE_MAX_SIDES), 0 without. */
size_t rcell_profile_sides(const struct rcell *c);

/* Profile side i: false past the count. */
struct rprof_side {
	const char *role;		/* "server", "client"; NULL */
	double id, samples, kernel_samples;
	const char *folded_file;	/* --profile DIR: its stacks' file name; NULL */
	size_t ntop;			/* top's entries, bounded */
};
bool rcell_profile_side(const struct rcell *c, size_t i, struct rprof_side *out);

/* Profile side i's top: {symbol, object, samples, pct}; the count. */
struct rprof_top {
	const char *symbol, *object;
	double samples, pct;
};
size_t rcell_profile_top(const struct rcell *c, size_t side, struct rprof_top *out, size_t max);

/* profile_run: the sampling. All absent (incomplete false) when it is not
 * an object, then false. */
struct rprof_run {
	double hz, perturbation, lost_samples;
	bool incomplete;		/* complete is false */
	const char *kernel_symbols_why;	/* why kernel frames are unnamed; NULL: named */
	const char *folded_dir;		/* --profile DIR; NULL */
};
bool rcell_profile_run(const struct rcell *c, struct rprof_run *out);

#endif
