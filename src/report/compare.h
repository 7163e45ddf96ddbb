/* SPDX-License-Identifier: MIT */
/* ipclab compare: two result files, cells matched by configuration, each
 * metric's ratio and whether it moved beyond the run-to-run spread. */
#ifndef IPCLAB_REPORT_COMPARE_H
#define IPCLAB_REPORT_COMPARE_H

#include <stdbool.h>
#include <stdio.h>

#include "rfile.h"

enum cmp_unit { CU_PER_S, CU_BYTES_PER_S, CU_NS, CU_PCT };

struct cmp_metric {
	const char *key;	/* "metrics" key */
	const char *label;	/* text and markdown */
	bool higher_better;	/* throughput; latency and CPU: lower is better */
	enum cmp_unit unit;
};
#define CMP_NMETRICS 8
/* Metric m of the comparison: its key, and its label, unit and better
 * direction as the field table (fields.c) has them. */
const struct cmp_metric *cmp_metric(unsigned m);

enum cmp_spread {
	CMP_NO_SPREAD,		/* neither file has --repeat data for it */
	CMP_WITHIN,		/* the difference is inside the run-to-run spread */
	CMP_BEYOND,		/* outside it */
};

/* What the test over the repetitions says of a metric (compare_test.c). */
enum cmp_verdict {
	CV_NONE,		/* not compared: a value is missing */
	CV_SAME,		/* tested: no change */
	CV_BETTER,		/* tested: p < 0.05 and the ratio's interval beyond CMP_NOISE_PCT */
	CV_WORSE,
	CV_UNTESTED,		/* no repetitions to test (or too few): the spread rule decides */
	CV_CANNOT,		/* bimodal in one file only: not like with like */
	CV_MIXED,		/* bimodal in both: one mode better, the other worse */
	CV_OTHER_STATE,		/* the machine was in another state (the canaries): no verdict */
};
/* A change whose whole 95 % interval lies within +-this (%) is no change. */
#define CMP_NOISE_PCT 1.0

/* What a verdict rests on: one run a side, the repetitions inside each
 * (run-to-run drift not known) or those and the machine's calibrated
 * run-to-run drift (env --calibrate); several runs a side, the runs. */
enum cmp_basis { CB_REPETITIONS, CB_RUNS, CB_DRIFT };
const char *cmp_basis_name(enum cmp_basis b);

/* A machine's run-to-run drift for a reference cell (env --calibrate): the
 * ratio of two separate runs' medians of an A/A pair lies in [lo, hi]. */
struct cmp_drift {
	char transport[32], pattern[32], what[96];
	double lo, hi;
};
#define CMP_DRIFT_MAX 8

/* Mann-Whitney U over two samples of repetitions, and the ratio's interval. */
struct cmp_test {
	double before, after;		/* the samples' medians */
	unsigned n_before, n_after;	/* repetitions in each */
	double p_value;			/* two-sided; NAN: not tested */
	double ratio_lo, ratio_hi;	/* Hodges-Lehmann 95 % interval of after/before; NAN */
	enum cmp_verdict verdict;	/* CV_SAME, CV_BETTER, CV_WORSE or CV_UNTESTED */
};

struct cmp_value {
	double before, after;	/* NAN: not measured (latency without samples) */
	double ratio;		/* after / before; NAN when before is 0 */
	double change_pct;	/* (after - before) / before * 100 */
	double worse_pct;	/* change_pct signed so that > 0 is a regression */
	enum cmp_spread spread;
	bool regressed;		/* tested: the ratio's whole interval worse than --fail-above;
				 * untested: worse_pct above it, and not within spread */
	enum cmp_verdict verdict;
	struct cmp_test test;	/* over all repetitions (neither file bimodal) */
	bool bimodal_before, bimodal_after;	/* this metric's repetitions */
	unsigned nmodes;	/* 2 when bimodal in both: [0] the fast mode, [1] the slow */
	struct cmp_test modes[2];
	char why[160];		/* CV_UNTESTED, CV_CANNOT: why */
	enum cmp_basis basis;	/* what the verdict rests on (compare_runs.c) */
	struct cmp_test runs;	/* CB_RUNS: over the runs' values (each run's median) */
	double drift_lo, drift_hi;	/* CB_DRIFT: the calibrated A/A interval used */
};

/* The keys whose values differ between two env objects (borrowed), the
 * readings that change from run to run on one machine left out. */
#define CMP_ENV_MAX 64
struct cmp_env_diff {
	bool present;			/* both are objects */
	size_t n;
	const char *key[CMP_ENV_MAX];
	const json_t *a[CMP_ENV_MAX], *b[CMP_ENV_MAX];	/* NULL: absent there */
};

/* The hosts behind a comparison: the files' env, their remote_env (the
 * server host of run --peer), and in a --peer file this host's against
 * the server's. */
struct cmp_envs {
	struct cmp_env_diff files, servers, peer_before, peer_after;
	bool server_only;		/* one file has a remote_env, the other not */
};

/* The two runs' canaries (compare_canary.c). */
struct cmp_canary {
	bool present;		/* both files have one */
	double ratio;		/* between the runs, >= 1; NAN or 0 when not known */
	double drift[2];	/* within before [0] and after [1], start to end; 0 */
	const char *drift_what[2];
	bool one_run;		/* both one run's cells, in interleaved rounds */
	bool other_state;	/* beyond CANARY_RATIO_MAX: no verdict */
	char why[160];		/* "the machine was in another state (...): not comparable" */
};
void cmp_canary(const struct rfile *before, const struct rfile *after, struct cmp_canary *c);
void cmp_canary_text(FILE *f, const struct cmp_canary *c);
void cmp_canary_markdown(FILE *f, const struct cmp_canary *c);
json_t *cmp_canary_json(const struct cmp_canary *c);

/* One configuration present in both files. */
struct cmp_row {
	const struct rcell *before, *after;
	char label[256];
	bool comparable;	/* both ran ("ok") */
	bool noisy[2], bimodal[2];	/* the cell's flags in before [0] and after [1] */
	struct cmp_value v[CMP_NMETRICS];
};

struct cmp_opts {
	double fail_above_pct;	/* NAN: never fail */
	unsigned metric_mask;	/* bit i: cmp_metric(i) is compared */
	/* Each side's runs (compare A1 A2 -- B1 B2, --by machine): runs[k][0]
	 * is before (k 0) or after (k 1) itself; nruns[k] 0 means one. */
	const struct rfile *const *runs[2];
	size_t nruns[2];
	/* The machine's calibrated drift (env --calibrate), for one run a side. */
	const struct cmp_drift *drift;
	size_t ndrift;
	const char *drift_source;	/* where it came from, for the header */
};

struct cmp_result {
	const struct rfile *before, *after;
	struct cmp_row *rows;
	size_t nrows;
	const struct rcell **only_before, **only_after;
	char (*only_before_label)[256], (*only_after_label)[256];
	size_t nonly_before, nonly_after;
	unsigned regressions;	/* rows with at least one regressed metric */
	struct cmp_envs env;	/* what differs between the hosts */
	struct cmp_canary canary;	/* the machine's state in each */
};

/* The test of metric m of row (compare_test.c): v->before and v->after
 * set, the rest of v filled. */
void cmp_test_value(const struct cmp_row *row, unsigned m, const struct cmp_opts *o,
		    struct cmp_value *v);
/* The run-level verdict of metric m of row (compare_runs.c), after
 * cmp_test_value: several runs a side, the test over the runs; one run a
 * side with a calibrated drift, the drift. */
void cmp_runs_value(const struct cmp_row *row, unsigned m, const struct cmp_opts *o,
		    struct cmp_value *v);
/* The drift for row's cell (same transport and pattern, else the widest). */
const struct cmp_drift *cmp_drift_for(const struct cmp_row *row, const struct cmp_opts *o);
/* The calibration object of a stored calibration run ("calibration":
 * {"cells": [{transport, pattern, what, lo, hi}]}) into d; the count. */
size_t cmp_drift_from_json(const json_t *cal, struct cmp_drift *d, size_t max);

/* "better", "worse", "no change", ... */
const char *cmp_verdict_name(enum cmp_verdict v);

/* Metric list ("lat_p50_ns,msgs_per_s", aliases allowed) to a mask. */
int cmp_parse_metrics(const char *list, unsigned *mask, char *err, size_t errlen);

/* Match cells (the k-th cell of a configuration in before with the k-th of
 * the same in after) and compute every value. 0 or -ENOMEM. */
int compare_files(const struct rfile *before, const struct rfile *after,
		  const struct cmp_opts *o, struct cmp_result *out);
void compare_free(struct cmp_result *r);

void cmp_env_diff(const json_t *a, const json_t *b, struct cmp_env_diff *d);
void cmp_env_all(const struct rfile *before, const struct rfile *after, struct cmp_envs *e);
void cmp_env_text(FILE *f, const struct cmp_envs *e);
void cmp_env_markdown(FILE *f, const struct cmp_envs *e);
json_t *cmp_env_json(const struct cmp_envs *e);

/* Outputs: "text", "markdown", "json". */
int compare_print(FILE *f, const struct cmp_result *r, const struct cmp_opts *o,
		  const char *format);

#endif
