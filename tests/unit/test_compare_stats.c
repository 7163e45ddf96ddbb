// SPDX-License-Identifier: MIT
/* ipclab compare's test over the repetitions (src/report/compare_test.c),
 * on result files written here from seeded samples: 20 A/A pairs (both
 * files drawn from one distribution) read "no change" but for at most one;
 * a ping-pong 3 us slower reads "worse" with its p-value and ratio
 * interval, and --fail-above fails it only when the whole interval is past
 * the threshold; a metric bimodal in one file is not compared, in both its
 * modes are; noisy cells are said to be so; files without repetitions fall
 * back to the spread rule and say why; hostile "repeat" data is refused. */
#include <errno.h>
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

enum { M_MSGS, M_BYTES, M_P50, M_P99, M_MAX, M_CPUMSG, M_CPUPCT, M_CS };
#define ALL ((1u << CMP_NMETRICS) - 1)

#include "seeded_rng.h"

/* A p50 as the histogram reports it: log-normal noise, 64 ns buckets. */
static double p50_sample(double med, double sigma)
{
	double u = uniform01(), v = uniform01();

	return 64 * floor(med * exp(sigma * sqrt(-2 * log(u)) * cos(2 * M_PI * v)) / 64);
}

/* One cell's repetitions: p50 values, msgs/s = 1e9 / p50. */
struct sample {
	double p50[64];
	size_t n;
	bool noisy, bimodal_p50;
	double split;		/* with bimodal_p50 */
};

static void draw(struct sample *s, size_t n, double med, double sigma)
{
	memset(s, 0, sizeof(*s));
	s->n = n;
	for (size_t i = 0; i < n; i++)
		s->p50[i] = p50_sample(med, sigma);
}

static double median(const double *v, size_t n)
{
	double t[64];

	memcpy(t, v, n * sizeof(*v));
	stats_sort(t, n);
	return stats_median_sorted(t, n);
}

static json_t *metric_repeat(const double *v, size_t n, bool with_values)
{
	json_t *o = json_pack("{s:f, s:f, s:f}", "min", v[0], "max", v[0], "spread_pct", 1.0);
	json_t *vals = json_array();
	double lo = v[0], hi = v[0];

	for (size_t i = 0; i < n; i++) {
		json_array_append_new(vals, json_real(v[i]));
		lo = fmin(lo, v[i]);
		hi = fmax(hi, v[i]);
	}
	json_object_set_new(o, "min", json_real(lo));
	json_object_set_new(o, "max", json_real(hi));
	if (with_values)
		json_object_set_new(o, "values", vals);
	else
		json_decref(vals);
	return o;
}

/* A result file of one null pingpong cell with these repetitions. */
static void write_file(const char *path, const struct sample *s, bool with_values)
{
	double rate[64];
	json_t *rep, *res, *root;

	for (size_t i = 0; i < s->n; i++)
		rate[i] = 1e9 / s->p50[i];
	rep = json_pack("{s:i, s:o, s:o}", "n", (int)s->n, "lat_p50_ns",
			metric_repeat(s->p50, s->n, with_values), "msgs_per_s",
			metric_repeat(rate, s->n, with_values));
	if (s->bimodal_p50)
		json_object_set_new(json_object_get(rep, "lat_p50_ns"), "modes",
				    json_pack("{s:f, s:i, s:f, s:i, s:f}", "low_median", s->split * 0.9,
					      "n_low", 2, "high_median", s->split * 1.1, "n_high", 2,
					      "split", s->split));
	res = json_pack("{s:s, s:s, s:i, s:s, s:s, s:s, s:i, s:s, s:i, s:{s:f, s:f, s:s, s:b, s:b},"
			" s:o, s:{s:{}, s:{}}}",
			"transport", "null", "pattern", "pingpong", "size_bytes", 64, "endpoints",
			"process", "pin", "same", "sched", "other", "clients", 1, "status", "ok",
			"repeat_n", (int)s->n, "metrics", "lat_p50_ns", median(s->p50, s->n),
			"msgs_per_s", median(rate, s->n), "lat_kind", "rtt", "noisy", s->noisy,
			"bimodal", s->bimodal_p50, "repeat", rep, "options", "transport", "pattern");
	root = json_pack("{s:i, s:s, s:{}, s:[o]}", "schema_version", 1, "cmdline", "fixture",
			 "env", "results", res);
	assert_non_null(root);
	assert_int_equal(json_dump_file(root, path, 0), 0);
	json_decref(root);
}

struct pair {
	char dir[64], a[96], b[96];
	struct rfile before, after;
	struct cmp_result r;
};

static void compare_pair(struct pair *p, const struct sample *x, const struct sample *y,
			 bool values, double fail_above)
{
	struct cmp_opts o = { .fail_above_pct = fail_above, .metric_mask = ALL };
	char err[ERRLEN] = "";

	snprintf(p->dir, sizeof(p->dir), "/tmp/ipclab-test-cmpstats-XXXXXX");
	assert_non_null(mkdtemp(p->dir));
	snprintf(p->a, sizeof(p->a), "%s/a.json", p->dir);
	snprintf(p->b, sizeof(p->b), "%s/b.json", p->dir);
	write_file(p->a, x, values);
	write_file(p->b, y, values);
	if (rfile_load(&p->before, p->a, NULL, err, sizeof(err)) ||
	    rfile_load(&p->after, p->b, NULL, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(compare_files(&p->before, &p->after, &o, &p->r), 0);
	assert_int_equal(p->r.nrows, 1);
}

static void pair_free(struct pair *p)
{
	compare_free(&p->r);
	rfile_free(&p->before);
	rfile_free(&p->after);
	unlink(p->a);
	unlink(p->b);
	rmdir(p->dir);
}

/* 20 A/A pairs: the same cell twice, both files drawn from one distribution
 * (a null ping-pong's 10.6 us, 2 % noise, 10 repetitions each). */
static void test_aa_no_change(void **state)
{
	unsigned changed = 0, same = 0;

	(void)state;
	rng_state = 20250101;
	for (int i = 0; i < 20; i++) {
		struct sample x, y;
		struct pair p;

		draw(&x, 10, 10600, 0.02);
		draw(&y, 10, 10600, 0.02);
		compare_pair(&p, &x, &y, true, 5);
		for (unsigned m = 0; m < CMP_NMETRICS; m++) {
			enum cmp_verdict v = p.r.rows[0].v[m].verdict;

			if (m != M_P50 && m != M_MSGS)
				continue;
			changed += v == CV_BETTER || v == CV_WORSE;
			same += v == CV_SAME;
		}
		assert_int_equal(p.r.regressions, 0);
		pair_free(&p);
	}
	if (changed > 1)
		fail_msg("%u of 20 A/A pairs read changed", changed);
	assert_true(changed + same == 40);	/* every one tested */
}

/* 3 us slower: worse, with p and the ratio's interval; --fail-above fails
 * it at 10 % (the whole interval is past 1.10) but not at 40 %. */
static void test_slower_is_worse(void **state)
{
	struct sample x, y;
	struct pair p;
	const struct cmp_value *v;

	(void)state;
	rng_state = 3;
	draw(&x, 8, 10600, 0.02);
	draw(&y, 8, 13600, 0.02);
	compare_pair(&p, &x, &y, true, 10);
	v = &p.r.rows[0].v[M_P50];
	assert_int_equal(v->verdict, CV_WORSE);
	assert_true(v->test.p_value < 0.001);	/* 8 against 8, apart: 2 / C(16, 8) */
	assert_true(v->test.ratio_lo > 1.2 && v->test.ratio_hi < 1.38);
	assert_true(v->regressed);
	assert_int_equal(p.r.rows[0].v[M_MSGS].verdict, CV_WORSE);	/* fewer exchanges/s */
	assert_int_equal(p.r.regressions, 1);
	pair_free(&p);
	compare_pair(&p, &x, &y, true, 40);
	assert_int_equal(p.r.rows[0].v[M_P50].verdict, CV_WORSE);
	assert_false(p.r.rows[0].v[M_P50].regressed);
	assert_int_equal(p.r.regressions, 0);
	pair_free(&p);
	/* the other way round: better, never a regression */
	compare_pair(&p, &y, &x, true, 0);
	assert_int_equal(p.r.rows[0].v[M_P50].verdict, CV_BETTER);
	assert_int_equal(p.r.regressions, 0);
	pair_free(&p);
}

/* Too few repetitions, or none kept (an older file): the spread rule, and why. */
static void test_untested(void **state)
{
	struct sample x, y;
	struct pair p;

	(void)state;
	rng_state = 5;
	draw(&x, 3, 10600, 0.02);
	draw(&y, 3, 13600, 0.02);
	compare_pair(&p, &x, &y, true, NAN);
	assert_int_equal(p.r.rows[0].v[M_P50].verdict, CV_UNTESTED);
	assert_non_null(strstr(p.r.rows[0].v[M_P50].why, "too few"));
	pair_free(&p);
	draw(&x, 8, 10600, 0.02);
	draw(&y, 8, 13600, 0.02);
	compare_pair(&p, &x, &y, false, 10);
	assert_int_equal(p.r.rows[0].v[M_P50].verdict, CV_UNTESTED);
	assert_non_null(strstr(p.r.rows[0].v[M_P50].why, "no repetitions"));
	assert_true(p.r.rows[0].v[M_P50].regressed);	/* 28 % worse, ranges apart */
	pair_free(&p);
}

/* Bimodal in one file: not like with like; in both: mode against mode. */
static void test_bimodal_like_with_like(void **state)
{
	struct sample x, y;
	struct pair p;
	const struct cmp_value *v;

	(void)state;
	rng_state = 11;
	draw(&x, 10, 10600, 0.01);
	draw(&y, 10, 10600, 0.01);
	for (size_t i = 0; i < 4; i++)
		y.p50[i] = p50_sample(21900, 0.01);
	y.bimodal_p50 = true;
	y.split = 15000;
	compare_pair(&p, &x, &y, true, 5);
	v = &p.r.rows[0].v[M_P50];
	assert_int_equal(v->verdict, CV_CANNOT);
	assert_non_null(strstr(v->why, "bimodal in after only"));
	assert_false(v->regressed);
	pair_free(&p);
	/* both: the fast modes alike, the slow one 20 % slower */
	memcpy(&x, &y, sizeof(x));
	for (size_t i = 0; i < 4; i++)
		y.p50[i] = p50_sample(26300, 0.01);
	y.split = 17000;
	compare_pair(&p, &x, &y, true, 5);
	v = &p.r.rows[0].v[M_P50];
	assert_int_equal(v->nmodes, 2);
	assert_int_equal(v->modes[0].verdict, CV_SAME);
	assert_int_equal(v->modes[0].n_before, 6);
	assert_int_equal(v->modes[1].verdict, CV_WORSE);
	assert_int_equal(v->verdict, CV_WORSE);
	assert_true(v->regressed);
	pair_free(&p);
}

/* A noisy cell is said to be so in its verdicts. */
static void test_noisy_said(void **state)
{
	struct cmp_opts o = { .fail_above_pct = NAN, .metric_mask = ALL };
	struct sample x, y;
	struct pair p;
	char *text = NULL;
	size_t size = 0;
	FILE *f;

	(void)state;
	rng_state = 13;
	draw(&x, 8, 10600, 0.02);
	draw(&y, 8, 10600, 0.02);
	y.noisy = true;
	compare_pair(&p, &x, &y, true, NAN);
	f = open_memstream(&text, &size);
	assert_int_equal(compare_print(f, &p.r, &o, "text"), 0);
	fclose(f);
	assert_non_null(strstr(text, "(after noisy)"));
	assert_non_null(strstr(text, "ratio ci95"));
	assert_true(p.r.rows[0].noisy[1] && !p.r.rows[0].noisy[0]);
	free(text);
	pair_free(&p);
}

/* What a hostile file can put in "repeat" is refused at load, in one line. */
static void test_hostile_repeat(void **state)
{
	static const char *const bad[] = {
		"{\"lat_p50_ns\": {\"values\": \"many\"}}",
		"{\"lat_p50_ns\": {\"values\": [1, 2, \"x\"]}}",
		"{\"lat_p50_ns\": {\"values\": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65]}}",
		"{\"lat_p50_ns\": {\"modes\": {\"low_median\": 5, \"high_median\": 4, \"split\": 4.5}}}",
		"{\"lat\\n_p50\": {\"values\": \"x\"}}",
	};
	char dir[] = "/tmp/ipclab-test-cmpstats-XXXXXX", path[96], err[ERRLEN];
	struct rfile rf;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/bad.json", dir);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		fprintf(f, "{\"schema_version\": 1, \"results\": [{\"transport\": \"null\", "
			   "\"pattern\": \"pingpong\", \"status\": \"ok\", \"metrics\": {}, "
			   "\"repeat\": %s}]}\n", bad[i]);
		fclose(f);
		err[0] = '\0';
		assert_int_equal(rfile_load(&rf, path, NULL, err, sizeof(err)), -EINVAL);
		assert_null(strchr(err, '\n'));
		assert_true(err[0] != '\0');
	}
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_aa_no_change),
		cmocka_unit_test(test_slower_is_worse),
		cmocka_unit_test(test_untested),
		cmocka_unit_test(test_bimodal_like_with_like),
		cmocka_unit_test(test_noisy_said),
		cmocka_unit_test(test_hostile_repeat),
	};

	return cmocka_run_group_tests_name("compare's test over repetitions", tests, NULL, NULL) ? 1 : 0;
}
