/* SPDX-License-Identifier: MIT */
/* The result record: one cell's configuration and what it measured
 * (struct result), one run's results with the machine's (struct report),
 * and the field table that names every value of them (src/report/fields.c
 * drives the human table, JSON and CSV from it). The formats that print a
 * report: reporter.h. */
#ifndef IPCLAB_RESULT_H
#define IPCLAB_RESULT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "ipclab/floors.h"
#include "ipclab/interference.h"
#include "ipclab/metrics.h"
#include "ipclab/pattern.h"
#include "ipclab/profile.h"
#include "ipclab/reference.h"
#include "ipclab/trace.h"
#include "ipclab/transport.h"

#define SCHEMA_VERSION 1
#define NOISY_PCT 10.0
#define REPEAT_MAX_VALUES 64	/* repetitions whose values a result keeps, per metric */

enum result_status { RES_OK, RES_SKIPPED, RES_FAILED };

#define PAT_RESULT_MAX (20 * 1024)	/* bytes a pattern keeps in each result */

struct side_result {
	enum tp_role role;
	unsigned id;
	uint64_t user_ns, sys_ns;
	uint64_t poll_ns;		/* of its CPU time, polling for the peer (polling.h) */
	double cpu_pct;
	uint64_t vol_cs, invol_cs;
	uint64_t msgs, bytes;
	uint64_t elapsed_ns;
};

/* A cell between hosts (run --peer): the server side's host, where it
 * ran, the clock offset measured over the control connection, and the
 * server's channel settings (src/remote/peer.c). */
struct remote_result {
	bool on;
	char host[64];
	int server_pin;			/* pinned to this CPU there (-1 = not pinned) */
	int server_cpu;			/* ran on this CPU there at its start (-1 = not known) */
	int64_t clock_offset_ns;	/* server clock - client clock */
	uint64_t clock_err_ns;		/* bound on that offset's error */
	bool clock_known;
	bool one_way_unknown;		/* one-way latency not reported: two clocks */
	struct tp_settings settings;	/* the server's channel, read back there */
};

/* Everything one cell produced. */
struct result {
	struct cell cell;		/* full configuration */
	char transport[32], pattern[32];
	char section[32];		/* suite section, "" if none */
	enum result_status status;
	char reason[ERRLEN];
	struct tp_settings settings;	/* effective, read back */
	char tp_opts[256];		/* "key=value,..." private options in force */
	char pat_opts[256];

	/* metrics */
	uint64_t elapsed_ns;
	uint64_t msgs, bytes;
	double msgs_per_s, bytes_per_s;
	enum lat_kind lat_kind;		/* the pattern's (metrics.h) */
	uint64_t lat_min_ns, lat_p50_ns, lat_p90_ns, lat_p99_ns, lat_p99_9_ns,
		lat_p99_99_ns, lat_max_ns;
	double lat_mean_ns;
	uint64_t lat_samples;
	uint32_t sample_every;		/* one-way: every Nth message carried a timestamp */
	/* --rate: lat_* count from the actual send; ping-pong's round trips
	 * from the intended send time too, and (ping-pong and stream) the
	 * sender's lateness; 0 samples: none */
	uint64_t paced_samples, late_samples;
	uint64_t lat_intended_p50_ns, lat_intended_p99_ns, lat_intended_max_ns;
	uint64_t send_late_p50_ns, send_late_p99_ns, send_late_max_ns;
	/* a pattern whose figure runs from each period's intended start (the
	 * cycle): its timer's mean lateness, inside that figure; 0: none */
	double timer_late_mean_ns;
	double cpu_pct_total;		/* all sides, of one CPU (200 = two CPUs busy) */
	double cpu_ns_per_msg;		/* user+sys of all sides per message */
	double sys_ctx_switches_per_s;
	double sys_intr_per_s;
	double sys_busy_pct;		/* all CPUs, of all CPUs */
	unsigned ncpu;
	double cpu_busy_pct[SYS_MAX_CPUS];	/* per CPU */
	uint64_t lost, dups, reorders;
	bool zerocopy;
	bool serve_ready;		/* the server waited on all its clients at once */
	bool serve_spin;		/* ... spinning over them before it slept */

	/* --repeat N: every metric above holds the median of N repetitions;
	 * repeat[] keeps, per metric, min, max, spread, the 95 % interval of
	 * the median, its two clusters when it has two, and the values
	 * themselves for compare's tests (src/core/repeat.c, ipclab/stats.h). */
	unsigned repeat_n;
	unsigned n_repeat_stats;
	struct repeat_stat {
		const char *key;
		double min, max, spread_pct;
		double ci_lo, ci_hi;		/* NAN: fewer than STATS_CI_MIN_N repetitions */
		bool bimodal;			/* two clusters (stats_bimodal) */
		unsigned n_low, n_high;		/* ... of these many repetitions */
		double low_median, high_median;	/* ... with these medians */
		double split;			/* ... either side of this value */
		unsigned n_values;		/* values[] filled */
		double values[REPEAT_MAX_VALUES];	/* in the order they ran (thinned evenly past the bound) */
	} repeat[24];
	bool noisy;			/* a headline metric spread over NOISY_PCT */
	bool bimodal;			/* the headline metric's repetitions fall in two clusters */
	bool repeat_auto;		/* --repeat auto: rounds added until converged */
	bool converged;			/* ... the headline's interval came within target_pct */
	double target_pct;		/* ... of its median */
	const char *stopped_by;		/* ... the rounds ended: "converged", "cap", "budget", "signal" */
	bool over_runs;			/* run --runs N: repeat[] is over N separate runs */

	unsigned nsides;
	struct side_result sides[MAX_SIDES];
	struct hist hist;		/* merged latency histogram */
	struct trace_result trace;	/* --trace (trace.on) */
	struct profile_result profile;	/* --profile (profile.on) */
	struct ref_result ref;		/* --reference (ref.on) */
	struct remote_result remote;	/* --peer (remote.on) */
	/* the pattern's own figures (its collect hook; zero where it has none
	 * or the cell did not run), read by its report hooks */
	_Alignas(8) unsigned char pat_result[PAT_RESULT_MAX];
	struct interference intf;	/* other tasks on the endpoints' CPUs (always) */
};

/* Environment every result file carries (src/core/env.c; `ipclab env` shows
 * the same keys, src/report/envcmd.c). Numbers the kernel does not expose
 * are ENV_UNKNOWN; a resource limit without one is ENV_UNLIMITED (-1 is a
 * real value: sched_rt_runtime_us -1 = no RT throttling). */
#define ENV_UNKNOWN INT64_MIN
#define ENV_UNLIMITED (INT64_MIN + 1)
#define ENV_MAX_CACHES 8
#define ENV_MAX_WARNINGS 6
struct env_cache {
	unsigned level, line_bytes;
	char type[16];			/* Data, Instruction, Unified */
	int64_t size_bytes;
	char shared_cpus[48];		/* shared_cpu_list */
};
struct env_info {
	char kernel[128], cpu_model[128], clocksource[32], virtualization[32];
	char governor[32], hostname[64];
	unsigned cpus_online;
	struct clock_info clock;

	/* kernel configuration hints */
	char preempt[24], preempt_source[96], nohz[16];
	int64_t preempt_dynamic;	/* 1, 0 or ENV_UNKNOWN */
	int64_t hz;
	/* CPU topology and frequency */
	int64_t cpus_configured, smt_active, threads_per_core;
	char smt_siblings[128];		/* distinct thread_siblings_list, space-separated */
	unsigned ncaches;
	struct env_cache caches[ENV_MAX_CACHES];
	double cpu_mhz, cpu_min_mhz, cpu_max_mhz;	/* NAN when unknown */
	double loadavg_1min;
	/* scheduling and IPC limits */
	int64_t sched_rt_runtime_us, sched_rt_period_us;
	int64_t pipe_max_size_bytes, mqueue_msg_max, mqueue_msgsize_max_bytes,
		mqueue_queues_max, msgmax_bytes, msgmnb_bytes, unix_max_dgram_qlen;
	int64_t rlimit_msgqueue_bytes, rlimit_rtprio, rlimit_nofile;
	/* build */
	char glibc_version[32], compiler[96], ipclab_version[32], ipclab_git_rev[48];
	/* the canary at the run's start [0] and end [1], the floors
	 * (run --floors): .on when measured (include/ipclab/floors.h) */
	struct canary canary[2];
	struct floors floors;
	/* what may distort results measured here */
	unsigned nwarnings;
	char warnings[ENV_MAX_WARNINGS][160];
};
void env_collect(struct env_info *env);

/* A suite's section as it ran: its name (the results' "section"), title,
 * and the text it printed (its own table and its reading). */
struct report_section {
	const char *name, *title;
	char *text;
	const struct report_why *why;	/* its question, tested; or NULL */
};

/* A section's question (its thread's own claim) tested on this machine's
 * cells: the result file's sections[].why and the page's box. A ratio is
 * of b over a (its "of" says which); lo, hi NAN without a 95 % interval,
 * p_value NAN without a test. */
#define WHY_MAX_HYP 6
#define WHY_MAX_TESTS 6
struct why_ratio {
	char of[128];
	double ratio, lo, hi;
	const char *ci_basis;		/* what [lo, hi] is over (why_test) */
};
struct why_hyp {
	char claim[160], conditions[96], evidence[320];
	bool reproduced;
};
struct why_test {
	char knob[48], of[128];
	const char *verdict;		/* "confirmed", "refuted", "no difference", ... */
	double ratio, lo, hi, p_value;
	/* what [lo, hi] is over: "repetitions" (the cells' repeated runs),
	 * "exchanges" (one run each: the medians' intervals over their
	 * exchanges, the spread between runs not in it), NULL: none */
	const char *ci_basis;
};
struct report_why {
	char question[240], answer[1024];
	const char *verdict;		/* confirmed, refuted, no difference,
					 * not reproduced here, too noisy */
	struct why_ratio compared;	/* the section's headline pair */
	unsigned nhyp, ntests;
	struct why_hyp hyp[WHY_MAX_HYP];
	struct why_test tests[WHY_MAX_TESTS];
};

/* run --runs N: one of the N separate runs of the plan, each with its own
 * start and its own canary at its start and end. */
struct run_mark {
	time_t started;			/* wall clock, UTC */
	uint64_t start_ns;		/* CLOCK_MONOTONIC at its start */
	uint64_t elapsed_ns;		/* from its start canary to its end canary */
	struct canary canary[2];	/* start, end (on: measured) */
	double canary_change;		/* end against start (canary_ratio), 0 without both */
};

/* A run's output: header + results. */
struct matrix_info;
struct report {
	const char *cmdline;
	struct env_info env;
	struct result *results;
	size_t n;
	const struct matrix_info *matrix;	/* --pin matrix (ipclab/topology.h), or NULL */
	const char *remote_env_json;	/* --peer: the server host's env object (JSON), or NULL */
	time_t created;			/* created_utc (0: when written); one time for -o and --db */
	const struct report_section *sections;	/* a suite's, in the order they ran */
	size_t nsections;
	/* run --runs N: the runs (runs[j]) and each cell's figures in each
	 * (cell i's run j at run_results[i * nruns + j]); results[i] is the
	 * fold of cell i's runs (medians, repeat[] over the runs). 0: one run. */
	unsigned nruns;
	const struct run_mark *runs;
	const struct result *run_results;
};

enum field_kind { F_U64, F_DBL, F_STR, F_BOOL };	/* F_BOOL: get_num gives 0/1 */
enum field_unit { U_NONE, U_NS, U_BYTES, U_PER_S, U_BYTES_PER_S, U_PCT, U_COUNT };

/* One metric or configuration column. */
struct field {
	const char *key;	/* JSON key / CSV column, unit in the name */
	const char *label;	/* human table header */
	enum field_kind kind;
	enum field_unit unit;
	const char *(*get_str)(const struct result *r);
	double (*get_num)(const struct result *r);
	bool config;		/* configuration (top level) vs metrics */
	bool table;		/* shown in the human table */
	const char *doc;	/* one line for docs/output.md */
	bool optional;		/* left out of JSON where it does not apply (another pattern's) */
	signed char better;	/* a metric: +1 higher is better, -1 lower is, 0 neither */
};
/* The field with this key, or NULL. */
const struct field *field_find(const char *key);
/* THE table (src/report/fields.c): the engine's configuration, each
 * pattern's, the engine's metrics, each pattern's (struct pat_report). */
extern const struct field *const result_fields;
extern size_t n_result_fields;

/* A pattern's own part of the result record (pat_report_of): the
 * fields it adds to the field table, and the sections it writes into a
 * result's JSON and under its row of the text table. Each reads only a
 * result of its own pattern: NAN, "" or nothing for any other. */
struct json_t;
struct html;
struct html_view;
struct plot_ctx;
struct pat_report {
	const struct field *config, *metrics;
	size_t nconfig, nmetrics;
	/* inside "metrics" (after cpu_busy_pct), and beside it (after
	 * "trace"); 0, or nonzero when a section could not be made */
	int (*json_metrics)(struct json_t *metrics, const struct result *r);
	int (*json_result)(struct json_t *res, const struct result *r);
	void (*table_line)(FILE *f, const struct result *r);
	/* From a result file (its JSON): ipclab report's section of the page
	 * (src/report/html.h), after the profiles; ipclab plot's figures
	 * (src/report/plot.h), 0 or -errno, 0 too when the file has none. */
	void (*html)(struct html *h, const struct html_view *v);
	int (*plot)(struct plot_ctx *ctx);
};
/* p's part, or NULL when it has none (src/report/pat_reports.c: THE list,
 * each entry naming its pattern). */
const struct pat_report *pat_report_of(const struct pattern *p);

/* Fold n repetitions of one cell into reps[0] (src/core/repeat.c): each
 * metric becomes the median, repeat[] gets min/max/spread, the interval,
 * the modes and the values. */
void repeat_fold(struct result *reps, unsigned n);
/* Fold cell i's n runs (run --runs) into out (src/core/runs.c): as
 * repeat_fold, marked over_runs; a failed run decides the cell. */
void runs_fold(const struct result *runs, unsigned n, struct result *out);
/* The headline metric's key: lat_p50_ns for a round-trip pattern, else
 * msgs_per_s. */
const char *result_headline_key(const struct result *r);
/* repeat[] of the metric key, or NULL (no --repeat, or not a repeated metric). */
const struct repeat_stat *result_repeat_stat(const struct result *r, const char *key);
/* The headline's 95 % interval over n repetitions as +-% of its median
 * (stats_ci_pct); NAN with fewer than STATS_CI_MIN_N, or when one did not
 * run. For --repeat auto. */
double repeat_headline_ci_pct(const struct result *reps, unsigned n);
/* The same of a folded result (NAN without an interval). */
double result_headline_ci_pct(const struct result *r);

#endif
