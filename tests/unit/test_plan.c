// SPDX-License-Identifier: MIT
/* Unit tests for the experiment knobs: repetition statistics (medians,
 * spread, the noisy flag, the median's interval, the kept values, bimodal
 * repetitions, failures) and paced-send arithmetic. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/pattern/cycle/cycle.h"
#include "ipclab/reporter.h"
#include "ipclab/result.h"
#include "../../src/pattern/common.h"

static struct result *make_reps(unsigned n, const double *rate, const uint64_t *p50, const char *kind)
{
	struct result *r = calloc(n, sizeof(*r));

	for (unsigned i = 0; i < n; i++) {
		r[i].status = RES_OK;
		r[i].lat_kind = lat_kind_parse(kind);
		r[i].msgs_per_s = rate[i];
		r[i].lat_p50_ns = p50[i];
		r[i].lat_samples = 100;
		r[i].elapsed_ns = 1000 + i;	/* tells which repetition was kept */
	}
	return r;
}

static const struct repeat_stat *stat_of(const struct result *r, const char *key)
{
	for (unsigned i = 0; i < r->n_repeat_stats; i++)
		if (!strcmp(r->repeat[i].key, key))
			return &r->repeat[i];
	return NULL;
}

static void test_repeat_medians(void **state)
{
	const double rate[5] = { 100, 300, 200, 110, 500 };
	const uint64_t p50[5] = { 10, 12, 11, 13, 9 };
	struct result *r = make_reps(5, rate, p50, "one_way");
	const struct repeat_stat *st;

	(void)state;
	repeat_fold(r, 5);
	assert_int_equal(r[0].repeat_n, 5);
	assert_true(r[0].msgs_per_s == 200);		/* median of 100 110 200 300 500 */
	assert_int_equal(r[0].lat_p50_ns, 11);
	st = stat_of(&r[0], "msgs_per_s");
	assert_non_null(st);
	assert_true(st->min == 100 && st->max == 500);
	assert_true(st->spread_pct > 199.9 && st->spread_pct < 200.1);	/* (500-100)/200 */
	assert_true(r[0].noisy);			/* msgs/s is a stream's headline */
	free(r);
}

static void test_repeat_quiet_rtt(void **state)
{
	const double rate[3] = { 100, 300, 200 };	/* noisy, but not the headline */
	const uint64_t p50[3] = { 1000, 1010, 1020 };
	struct result *r = make_reps(3, rate, p50, "rtt");

	(void)state;
	repeat_fold(r, 3);
	assert_int_equal(r[0].lat_p50_ns, 1010);
	assert_false(r[0].noisy);			/* p50 spread 2 % */
	/* the histogram and sides kept are those of the median repetition */
	assert_int_equal(r[0].elapsed_ns, 1001);
	free(r);
}

static void test_repeat_failure_wins(void **state)
{
	const double rate[3] = { 1, 2, 3 };
	const uint64_t p50[3] = { 1, 2, 3 };
	struct result *r = make_reps(3, rate, p50, "rtt");

	(void)state;
	r[2].status = RES_FAILED;
	snprintf(r[2].reason, sizeof(r[2].reason), "client 0 died");
	repeat_fold(r, 3);
	assert_int_equal(r[0].status, RES_FAILED);
	assert_string_equal(r[0].reason, "client 0 died");
	free(r);
}

/* Six or more repetitions get the median's 95 % interval (ranks 1 and n up
 * to 8), five do not; the values are kept in the order they ran. */
static void test_repeat_interval(void **state)
{
	const double rate[8] = { 100, 101, 102, 103, 104, 105, 106, 107 };
	const uint64_t p50[8] = { 1010, 1000, 1030, 1020, 1050, 1040, 1070, 1060 };
	struct result *r = make_reps(8, rate, p50, "rtt");
	const struct repeat_stat *st;

	(void)state;
	repeat_fold(r, 8);
	st = result_repeat_stat(&r[0], "lat_p50_ns");
	assert_non_null(st);
	assert_true(st->ci_lo == 1000 && st->ci_hi == 1070);
	assert_int_equal(st->n_values, 8);
	assert_true(st->values[0] == 1010 && st->values[7] == 1060);
	/* median 1035: the farther end 1070 is 3.4 % away */
	assert_true(fabs(result_headline_ci_pct(&r[0]) - 100.0 * 35 / 1035) < 1e-9);
	assert_false(r[0].bimodal);
	free(r);
	r = make_reps(5, rate, p50, "rtt");
	repeat_fold(r, 5);
	st = result_repeat_stat(&r[0], "lat_p50_ns");
	assert_true(isnan(st->ci_lo) && isnan(st->ci_hi));
	assert_true(isnan(result_headline_ci_pct(&r[0])));
	free(r);
}

/* A VM's fast and slow modes: ping-pong p50 of 10.8 us in 6 repetitions and
 * 21.9 us in 4 is bimodal, with both medians; the same spread without a
 * gap (evenly from 10.8 to 21.9 us) is only noisy. */
static void test_repeat_bimodal(void **state)
{
	const double rate[10] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
	const uint64_t two[10] = { 10800, 21900, 10850, 10790, 22100, 10820, 21800, 10900, 10810, 22000 };
	uint64_t even[10];
	struct result *r = make_reps(10, rate, two, "rtt");
	const struct repeat_stat *st;

	(void)state;
	repeat_fold(r, 10);
	assert_true(r[0].bimodal);
	st = result_repeat_stat(&r[0], "lat_p50_ns");
	assert_true(st->bimodal);
	assert_int_equal(st->n_low, 6);
	assert_int_equal(st->n_high, 4);
	assert_true(st->low_median == 10815 && st->high_median == 21950);
	free(r);
	for (int i = 0; i < 10; i++)
		even[i] = 10800 + (uint64_t)i * 1233;
	r = make_reps(10, rate, even, "rtt");
	repeat_fold(r, 10);
	assert_false(r[0].bimodal);
	assert_true(r[0].noisy);
	free(r);
}

/* The table: the headline with its interval (± %) or both modes, and the
 * notes: what they mean, too few rounds, a cell --repeat auto left
 * unconverged with its interval and spread. */
static void test_repeat_table(void **state)
{
	const double rate[10] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
	const uint64_t quiet[8] = { 1010, 1000, 1030, 1020, 1050, 1040, 1070, 1060 };
	const uint64_t two[10] = { 10800, 21900, 10850, 10790, 22100, 10820, 21800, 10900, 10810, 22000 };
	struct result *a = make_reps(8, rate, quiet, "rtt"), *b = make_reps(10, rate, two, "rtt");
	struct result *c = make_reps(3, rate, quiet, "rtt"), res[3];
	struct report rep = { .cmdline = "test", .results = res, .n = 3 };
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	(void)state;
	repeat_fold(a, 8);
	repeat_fold(b, 10);
	repeat_fold(c, 3);
	b[0].repeat_auto = true;
	b[0].target_pct = 5;
	b[0].stopped_by = "cap";
	res[0] = a[0];
	res[1] = b[0];
	res[2] = c[0];
	for (int i = 0; i < 3; i++) {
		snprintf(res[i].transport, sizeof(res[i].transport), "null");
		snprintf(res[i].pattern, sizeof(res[i].pattern), "pingpong");
		snprintf(res[i].cell.pin.text, sizeof(res[i].cell.pin.text), "0:0");
		snprintf(res[i].cell.sched.text, sizeof(res[i].cell.sched.text), "other");
		res[i].cell.size = 64;
	}
	assert_non_null(f);
	assert_int_equal(report_table(f, &rep), 0);
	fclose(f);
	assert_non_null(strstr(text, "1.03us ±3.4%"));		/* 1035 ns, [1000, 1070] */
	assert_non_null(strstr(text, "10.8us/21.9us"));	/* the modes, not 10.9us */
	assert_non_null(strstr(text, "\n±: the 95 % interval of the headline's median"));
	assert_non_null(strstr(text, "\nci95 needs >= 6 rounds: 1 cell ran 3, so no interval is shown\n"));
	assert_non_null(strstr(text, "\na/b: bimodal"));
	assert_non_null(strstr(text, "\n--repeat auto: 1 cell did not converge within ±5% in 10 rounds (stopped by cap):\n"
				     "  null/pingpong 64B process pin 0:0 sched other: ci95 ±"));
	assert_non_null(strstr(text, ", bimodal 10.8us/21.9us\n"));
	free(text);
	free(a);
	free(b);
	free(c);
}

static void test_paced_schedule(void **state)
{
	struct cell c = { .rate = 1000 };
	struct participant p = { .cell = &c };

	(void)state;
	/* message k of the window is due at t0 + k/rate, whatever happened before */
	assert_int_equal(pat_intended(&p, 5000, 0), 5000);
	assert_int_equal(pat_intended(&p, 5000, 1), 5000 + 1000000);
	assert_int_equal(pat_intended(&p, 5000, 1000), 5000 + 1000000000ull);
	c.rate = 3;
	assert_int_equal(pat_intended(&p, 0, 2), 666666666);
}

/* --period: a time or FRAMES@RATE; the nanoseconds it gives read back
 * through the time form to the same value (round trip); out-of-range and
 * malformed periods are refused with the fix in the message. */
static void test_period_parse(void **state)
{
	static const struct { const char *in; uint64_t ns; } ok[] = {
		{ "64@48000", 1333333 }, { "256@44100", 5804989 }, { "128@96000", 1333333 },
		{ "1.333ms", 1333000 }, { "500us", 500000 }, { "20us", 20000 }, { "10s", 10000000000ull },
		{ "1@1", 1000000000 },
	};
	static const char *const bad[] = {
		"", "@", "64@", "@48000", "64@0", "0@48000", "64@48k", "1us", "19us", "11s", "soon",
		"64@48000@1", "-1ms", "1.5@48000",
	};
	char err[256], text[64];
	uint64_t v, back;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(cycle_period_parse(ok[i].in, &v, err, sizeof(err)), 0);
		assert_int_equal(v, ok[i].ns);
		snprintf(text, sizeof(text), "%lluns", (unsigned long long)v);
		assert_int_equal(cycle_period_parse(text, &back, err, sizeof(err)), 0);
		assert_int_equal(back, v);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_true(cycle_period_parse(bad[i], &v, err, sizeof(err)) < 0);
		assert_non_null(strstr(err, "--period"));
		assert_null(strchr(err, '\n'));
	}
}

/* The completion series keeps constant memory: folded in pairs when full,
 * every cycle and xrun still counted, the worst of each point kept. */
static void test_cycle_series(void **state)
{
	static struct cycle_series s;
	uint64_t xr = 0, n = 10 * CYCLE_SERIES_MAX + 3;

	(void)state;
	cycle_series_init(&s);
	for (uint64_t i = 0; i < n; i++) {
		bool x = i % 7 == 0;

		cycle_series_add(&s, i == 5000 ? 999999 : 100 + i % 10, x);
		xr += x;
	}
	assert_true(s.n <= CYCLE_SERIES_MAX);
	assert_int_equal(s.per, 16);
	uint64_t got = 0, mx = 0;

	for (uint32_t i = 0; i < s.n; i++) {
		got += s.xruns[i];
		if (s.max_ns[i] > mx)
			mx = s.max_ns[i];
	}
	assert_int_equal(got, xr);
	assert_int_equal(mx, 999999);
	assert_int_equal((uint64_t)(s.n - 1) * s.per + s.in_last, n);

	/* a late start is an xrun without a completion: it never hides the
	 * worst cycle that ran beside it, and a point of late starts only
	 * says so (UINT64_MAX) */
	cycle_series_init(&s);
	cycle_series_add(&s, 500, false);
	cycle_series_add(&s, UINT64_MAX, true);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.max_ns[0], 500);
	assert_true(s.max_ns[1] == UINT64_MAX);
	assert_int_equal(s.xruns[1], 1);
	for (uint64_t i = 2; i < 2 * CYCLE_SERIES_MAX; i++)
		cycle_series_add(&s, i < CYCLE_SERIES_MAX ? UINT64_MAX : 700, true);
	assert_int_equal(s.per, 2);
	assert_int_equal(s.max_ns[0], 500);	/* 500 and a late start, folded */
	assert_true(s.max_ns[1] == UINT64_MAX);	/* late starts only */
	assert_int_equal(s.max_ns[s.n - 1], 700);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_repeat_medians),
		cmocka_unit_test(test_repeat_quiet_rtt),
		cmocka_unit_test(test_repeat_failure_wins),
		cmocka_unit_test(test_repeat_interval),
		cmocka_unit_test(test_repeat_bimodal),
		cmocka_unit_test(test_repeat_table),
		cmocka_unit_test(test_paced_schedule),
		cmocka_unit_test(test_period_parse),
		cmocka_unit_test(test_cycle_series),
	};

	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
