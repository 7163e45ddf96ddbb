// SPDX-License-Identifier: MIT
/* ipclab compare at the level of runs (src/report/compare_runs.c), on
 * result files written here from a seeded model of a machine with
 * run-to-run drift: each separate run lands in a fast or a slow mode (1.35x
 * apart, as an unpinned pair on one CPU or two) and has its own few per cent
 * of luck, shared by its 5 repetitions. On such recorded data the verdicts
 * are known: an A/A pair of one run a side fools the test over the
 * repetitions, but not the calibrated drift (at most 1 of 12 says better or
 * worse); several runs a side are judged over the runs (at most 1 of 12);
 * a real 1.7x slowdown (a pipe ping-pong moved from one CPU to two) is
 * "worse" either way. The calibration's JSON is read, matched to a cell by
 * its transport and pattern, and a side's run in another state of the
 * machine still makes the comparison "not comparable". */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "ipclab/stats.h"
#include "ipclab/util.h"
#include "compare.h"

enum { M_MSGS, M_BYTES, M_P50 };
#define ALL ((1u << CMP_NMETRICS) - 1)
#define REPS 5
#define MAXRUNS 8

#include "seeded_rng.h"

static double gauss(void)
{
	return sqrt(-2 * log(uniform01())) * cos(2 * M_PI * uniform01());
}

/* One separate run's factor: its mode (fast or 1.35x slower, even odds)
 * and 4 % of its own luck. */
static double run_factor(double slow)
{
	return (uniform01() < 0.5 ? 1 : slow) * exp(0.04 * gauss());
}

/* A run's repetitions of a cell: its factor times 2 % noise each. */
static void draw_run(double *p50, double med, double slow)
{
	double f = run_factor(slow);

	for (int i = 0; i < REPS; i++)
		p50[i] = med * f * exp(0.02 * gauss());
}

static double median(const double *v, size_t n)
{
	double t[64];

	memcpy(t, v, n * sizeof(*v));
	return stats_median(t, n);
}

static json_t *metric_repeat(const double *v, size_t n)
{
	json_t *vals = json_array();
	double lo = v[0], hi = v[0];

	for (size_t i = 0; i < n; i++) {
		json_array_append_new(vals, json_real(v[i]));
		lo = fmin(lo, v[i]);
		hi = fmax(hi, v[i]);
	}
	return json_pack("{s:f, s:f, s:f, s:o}", "min", lo, "max", hi, "spread_pct",
			 (hi - lo) / lo * 100, "values", vals);
}

/* A result file of one ping-pong cell of transport (pin as given) with
 * these repetitions; canary: the env's cache-line round trip, 0 for none. */
static void write_run(const char *path, const char *transport, const char *pin,
		      const double *p50, double canary)
{
	double rate[REPS];
	json_t *rep, *res, *root, *env = json_pack("{s:s}", "hostname", "lab");

	for (size_t i = 0; i < REPS; i++)
		rate[i] = 1e9 / p50[i];
	rep = json_pack("{s:i, s:o, s:o}", "n", REPS, "lat_p50_ns", metric_repeat(p50, REPS),
			"msgs_per_s", metric_repeat(rate, REPS));
	res = json_pack("{s:s, s:s, s:i, s:s, s:s, s:s, s:i, s:s, s:i, s:{s:f, s:f, s:s, s:b, s:b},"
			" s:o, s:{s:{}, s:{}}}",
			"transport", transport, "pattern", "pingpong", "size_bytes", 64, "endpoints",
			"process", "pin", pin, "sched", "other", "clients", 1, "status", "ok",
			"repeat_n", REPS, "metrics", "lat_p50_ns", median(p50, REPS), "msgs_per_s",
			median(rate, REPS), "lat_kind", "rtt", "noisy", false, "bimodal", false,
			"repeat", rep, "options", "transport", "pattern");
	if (canary > 0)
		json_object_set_new(env, "canary",
				    json_pack("{s:{s:f, s:f, s:[i, i]}, s:{s:f, s:f, s:[i, i]}}", "start",
					      "cacheline_rtt_ns", canary, "pipe_rtt_ns", 5000.0, "cpus",
					      0, 1, "end", "cacheline_rtt_ns", canary, "pipe_rtt_ns",
					      5000.0, "cpus", 0, 1));
	root = json_pack("{s:i, s:s, s:o, s:[o]}", "schema_version", 1, "cmdline", "fixture", "env",
			 env, "results", res);
	assert_non_null(root);
	assert_int_equal(json_dump_file(root, path, 0), 0);
	json_decref(root);
}

/* Two sides of separate runs, loaded and compared. */
struct sides {
	char dir[64], path[2][MAXRUNS][96];
	struct rfile rf[2][MAXRUNS];
	const struct rfile *ptr[2][MAXRUNS];
	size_t n[2];
	struct cmp_result r;
};

static void sides_make(struct sides *s)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->dir, sizeof(s->dir), "/tmp/ipclab-test-cmpruns-XXXXXX");
	assert_non_null(mkdtemp(s->dir));
}

/* Side k gets a run: transport, pin, the cell's median and the machine's
 * slow mode, and its canary. */
static void sides_add(struct sides *s, int k, const char *transport, const char *pin, double med,
		      double slow, double canary)
{
	double p50[REPS];
	char err[ERRLEN] = "";
	size_t j = s->n[k]++;
	static const char *const ignore[] = { "pin", NULL };

	char dir[64];

	draw_run(p50, med, slow);
	memcpy(dir, s->dir, sizeof(dir));
	snprintf(s->path[k][j], sizeof(s->path[k][j]), "%s/%d-%zu.json", dir, k, j);
	write_run(s->path[k][j], transport, pin, p50, canary);
	if (rfile_load(&s->rf[k][j], s->path[k][j], ignore, err, sizeof(err)))
		fail_msg("%s", err);
	s->ptr[k][j] = &s->rf[k][j];
}

static void sides_compare(struct sides *s, const struct cmp_drift *d, size_t nd)
{
	struct cmp_opts o = { .fail_above_pct = NAN, .metric_mask = ALL, .drift = d, .ndrift = nd };

	for (int k = 0; k < 2; k++) {
		o.runs[k] = s->ptr[k];
		o.nruns[k] = s->n[k];
	}
	assert_int_equal(compare_files(&s->rf[0][0], &s->rf[1][0], &o, &s->r), 0);
	assert_int_equal(s->r.nrows, 1);
}

static void sides_free(struct sides *s)
{
	compare_free(&s->r);
	for (int k = 0; k < 2; k++)
		for (size_t j = 0; j < s->n[k]; j++) {
			rfile_free(&s->rf[k][j]);
			unlink(s->path[k][j]);
		}
	rmdir(s->dir);
}

static bool changed(enum cmp_verdict v)
{
	return v == CV_BETTER || v == CV_WORSE;
}

/* env --calibrate on the model: 6 separate runs, [min/max, max/min]. */
static void calibrate(struct cmp_drift *d, const char *transport, double med, double slow)
{
	double lo = INFINITY, hi = 0;

	for (int i = 0; i < 6; i++) {
		double p50[REPS], m;

		draw_run(p50, med, slow);
		m = median(p50, REPS);
		lo = fmin(lo, m);
		hi = fmax(hi, m);
	}
	*d = (struct cmp_drift){ .lo = lo / hi, .hi = hi / lo };
	snprintf(d->transport, sizeof(d->transport), "%s", transport);
	snprintf(d->pattern, sizeof(d->pattern), "pingpong");
}

/* 12 A/A pairs of one run a side: the repetitions alone call several of
 * them changed; with the calibrated drift at most one is. */
static void test_aa_one_run(void **state)
{
	struct cmp_drift d[2];
	unsigned alarms_reps = 0, alarms_drift = 0;

	(void)state;
	rng_state = 45;
	calibrate(&d[0], "null", 11000, 1.35);
	calibrate(&d[1], "pipe", 90000, 1.15);
	for (int cell = 0; cell < 2; cell++)
		for (int i = 0; i < 12; i++) {
			struct sides s, t;
			const char *tr = cell ? "pipe" : "null";
			double med = cell ? 90000 : 11000, slow = cell ? 1.15 : 1.35;
			uint64_t seed = rng_state;

			sides_make(&s);
			sides_add(&s, 0, tr, "none", med, slow, 0);
			sides_add(&s, 1, tr, "none", med, slow, 0);
			sides_compare(&s, NULL, 0);
			alarms_reps += changed(s.r.rows[0].v[M_P50].verdict);
			assert_int_equal(s.r.rows[0].v[M_P50].basis, CB_REPETITIONS);
			rng_state = seed;	/* the same two runs, judged by the drift */
			sides_make(&t);
			sides_add(&t, 0, tr, "none", med, slow, 0);
			sides_add(&t, 1, tr, "none", med, slow, 0);
			sides_compare(&t, d, 2);
			assert_int_equal(t.r.rows[0].v[M_P50].basis, CB_DRIFT);
			alarms_drift += changed(t.r.rows[0].v[M_P50].verdict);
			assert_int_equal(t.r.regressions, 0);
			sides_free(&s);
			sides_free(&t);
		}
	print_message("A/A, one run a side, 24 pairs: %u said changed over the repetitions, %u with the calibrated drift\n",
		      alarms_reps, alarms_drift);
	assert_true(alarms_reps >= 4);	/* the problem: a run's luck taken for a change */
	assert_true(alarms_drift <= 2);	/* at most 1 in 12 on each cell */
}

/* A pipe ping-pong moved from one CPU to two (1.7x slower): worse, by the
 * calibrated drift with one run a side. */
static void test_slowdown_one_run(void **state)
{
	struct cmp_drift d[2];

	(void)state;
	rng_state = 17;
	calibrate(&d[0], "null", 11000, 1.35);
	calibrate(&d[1], "pipe", 90000, 1.15);
	for (int i = 0; i < 12; i++) {
		struct sides s;
		const struct cmp_value *v;

		sides_make(&s);
		sides_add(&s, 0, "pipe", "same", 53000, 1.15, 0);
		sides_add(&s, 1, "pipe", "split", 53000 * 1.7, 1.15, 0);
		sides_compare(&s, d, 2);
		v = &s.r.rows[0].v[M_P50];
		assert_int_equal(v->basis, CB_DRIFT);
		assert_int_equal(v->verdict, CV_WORSE);
		assert_int_equal(s.r.rows[0].v[M_MSGS].verdict, CV_WORSE);
		assert_true(v->drift_hi < 1.5);	/* the pipe's own drift, not the null's */
		sides_free(&s);
	}
}

/* Several runs a side: 3 and 3 (every ratio of the runs), 5 and 5 (the
 * test over the runs): A/A at most 1 in 12 each, 1.7x worse every time. */
static void test_runs_a_side(void **state)
{
	(void)state;
	rng_state = 44;
	for (size_t nr = 3; nr <= 5; nr += 2) {
		unsigned alarms = 0;

		for (int i = 0; i < 12; i++) {
			struct sides a, b;

			sides_make(&a);
			sides_make(&b);
			for (size_t j = 0; j < nr; j++) {
				sides_add(&a, 0, "null", "none", 11000, 1.35, 0);
				sides_add(&a, 1, "null", "none", 11000, 1.35, 0);
				sides_add(&b, 0, "pipe", "same", 53000, 1.15, 0);
				sides_add(&b, 1, "pipe", "split", 53000 * 1.7, 1.15, 0);
			}
			sides_compare(&a, NULL, 0);
			sides_compare(&b, NULL, 0);
			assert_int_equal(a.r.rows[0].v[M_P50].basis, CB_RUNS);
			assert_int_equal(a.r.rows[0].v[M_P50].runs.n_before, nr);
			alarms += changed(a.r.rows[0].v[M_P50].verdict);
			assert_int_equal(b.r.rows[0].v[M_P50].verdict, CV_WORSE);
			assert_int_equal(b.r.rows[0].v[M_P50].basis, CB_RUNS);
			if (nr == 5)	/* the test over the runs, with its p */
				assert_true(b.r.rows[0].v[M_P50].runs.p_value < STATS_ALPHA);
			sides_free(&a);
			sides_free(&b);
		}
		print_message("A/A, %zu runs a side: %u of 12 said changed\n", nr, alarms);
		assert_true(alarms <= 1);
	}
}

/* The stored calibration's JSON: read, bad cells skipped; matched by
 * transport and pattern, else the widest. */
static void test_calibration_json(void **state)
{
	json_t *cal = json_pack("{s:[{s:s, s:s, s:f, s:f}, {s:s, s:s, s:f, s:f}, {s:s, s:s, s:f, s:f},"
				" {s:s, s:f}]}", "cells", "transport", "null", "pattern", "pingpong",
				"lo", 0.7, "hi", 1.4, "transport", "pipe", "pattern", "pingpong",
				"lo", 0.9, "hi", 1.1, "transport", "tcp", "pattern", "pingpong",
				"lo", 1.2, "hi", 0.8, "transport", "x", "lo", 1.0);
	struct cmp_drift d[CMP_DRIFT_MAX];
	struct rcell pipe = { .transport = "pipe", .pattern = "pingpong" },
		     unix_ = { .transport = "unix-stream", .pattern = "pingpong" };
	struct cmp_row row = { .before = &pipe };
	struct cmp_opts o = { .drift = d };

	(void)state;
	o.ndrift = cmp_drift_from_json(cal, d, CMP_DRIFT_MAX);
	assert_int_equal(o.ndrift, 2);	/* lo > hi and no pattern: skipped */
	assert_ptr_equal(cmp_drift_for(&row, &o), &d[1]);
	row.before = &unix_;
	assert_ptr_equal(cmp_drift_for(&row, &o), &d[0]);
	o.ndrift = 0;
	assert_null(cmp_drift_for(&row, &o));
	json_decref(cal);
}

/* A side's second run measured in another state of the machine (its
 * canary 2x the others'): not comparable, no verdict, no regression. */
static void test_other_state_run(void **state)
{
	struct sides s;

	(void)state;
	rng_state = 7;
	sides_make(&s);
	sides_add(&s, 0, "pipe", "same", 53000, 1.0, 50);
	sides_add(&s, 0, "pipe", "same", 53000, 1.0, 50);
	sides_add(&s, 1, "pipe", "same", 53000 * 1.7, 1.0, 50);
	sides_add(&s, 1, "pipe", "same", 53000 * 1.7, 1.0, 100);
	sides_compare(&s, NULL, 0);
	assert_true(s.r.canary.other_state);
	assert_int_equal(s.r.rows[0].v[M_P50].verdict, CV_OTHER_STATE);
	sides_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_aa_one_run),
		cmocka_unit_test(test_slowdown_one_run),
		cmocka_unit_test(test_runs_a_side),
		cmocka_unit_test(test_calibration_json),
		cmocka_unit_test(test_other_state_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
