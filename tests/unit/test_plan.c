// SPDX-License-Identifier: MIT
/* Unit tests for the experiment knobs: repetition statistics (medians,
 * spread, the noisy flag, failures) and paced-send arithmetic. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ipclab/cycle.h"
#include "ipclab/report.h"
#include "../../src/pattern/common.h"

static struct result *make_reps(unsigned n, const double *rate, const uint64_t *p50, const char *kind)
{
	struct result *r = calloc(n, sizeof(*r));

	for (unsigned i = 0; i < n; i++) {
		r[i].status = RES_OK;
		r[i].lat_kind = kind;
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
		cmocka_unit_test(test_paced_schedule),
		cmocka_unit_test(test_period_parse),
		cmocka_unit_test(test_cycle_series),
	};

	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
