// SPDX-License-Identifier: MIT
/* Change points (src/report/changepoint.c) on synthetic series made by a
 * seeded generator: a 2x step is found at its index, two steps both, a
 * flat noisy series gives (almost) no false alarm over 200 of them, a step
 * within the points' own intervals or under --min-change is not reported,
 * the answer is the same every time, and the two-sample test tells a
 * shifted group from an equal one. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "changepoint.h"

static uint64_t rng = 42;

static double uniform(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return ((double)((z ^ (z >> 31)) >> 11) + 0.5) / 9007199254740992.0;
}

/* Normal noise (Box-Muller). */
static double gauss(void)
{
	return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}

/* v[i] = level * (1 + sd * noise), level multiplied by step from index at. */
static void series(double *v, size_t n, double sd, size_t at, double step)
{
	for (size_t i = 0; i < n; i++)
		v[i] = 1000 * (i >= at ? step : 1) * (1 + sd * gauss());
}

static void test_step_found(void **state)
{
	struct cp_opts o;
	struct cp_change c[8];
	double v[40];

	cp_opts_defaults(&o);
	for (int rep = 0; rep < 20; rep++) {
		series(v, 40, 0.05, 20, 2.0);
		assert_int_equal(cp_detect(v, NULL, 40, &o, c, 8), 1);
		assert_int_equal(c[0].index, 20);
		assert_true(c[0].ratio > 1.8 && c[0].ratio < 2.2);
		assert_true(c[0].p_value <= o.alpha);
		assert_true(fabs(c[0].before - 1000) < 50);
	}
	series(v, 40, 0.05, 25, 0.5);	/* a halving is a change too */
	assert_int_equal(cp_detect(v, NULL, 40, &o, c, 8), 1);
	assert_int_equal(c[0].index, 25);
	assert_true(c[0].ratio < 0.55);
}

static void test_two_steps(void **state)
{
	struct cp_opts o;
	struct cp_change c[8];
	double v[45];

	cp_opts_defaults(&o);
	series(v, 45, 0.03, 15, 1.5);
	for (size_t i = 30; i < 45; i++)
		v[i] *= 2;
	assert_int_equal(cp_detect(v, NULL, 45, &o, c, 8), 2);
	assert_int_equal(c[0].index, 15);
	assert_int_equal(c[1].index, 30);
	assert_true(c[1].ratio > 1.8 && c[1].ratio < 2.2);
}

/* False alarms: 200 flat series of 40 points, 5 % noise. alpha = 0.01
 * bounds the chance of a first false split; the count printed is what
 * docs/history.md quotes. */
static void test_flat_false_alarms(void **state)
{
	struct cp_opts o;
	struct cp_change c[8];
	double v[40];
	int alarms = 0;

	cp_opts_defaults(&o);
	rng = 7;
	for (int k = 0; k < 200; k++) {
		series(v, 40, 0.05, 40, 1);
		int n = cp_detect(v, NULL, 40, &o, c, 8);

		assert_true(n >= 0);
		alarms += n > 0;
	}
	printf("flat series with a false change point: %d of 200\n", alarms);
	assert_true(alarms <= 6);
}

/* A 5 % step: found in 1 % noise, not when the points' own intervals are
 * +-10 %, not under --min-change 10. */
static void test_intervals_and_min_change(void **state)
{
	struct cp_opts o;
	struct cp_change c[8];
	double v[40], hw[40];

	cp_opts_defaults(&o);
	series(v, 40, 0.01, 20, 1.05);
	assert_int_equal(cp_detect(v, NULL, 40, &o, c, 8), 1);
	assert_int_equal(c[0].index, 20);
	for (size_t i = 0; i < 40; i++)
		hw[i] = 0.10 * v[i];
	assert_int_equal(cp_detect(v, hw, 40, &o, c, 8), 0);
	for (size_t i = 0; i < 40; i++)
		hw[i] = i % 2 ? NAN : 0.001 * v[i];	/* narrow: the step stands */
	assert_int_equal(cp_detect(v, hw, 40, &o, c, 8), 1);
	o.min_change_pct = 10;
	assert_int_equal(cp_detect(v, NULL, 40, &o, c, 8), 0);
}

static void test_deterministic_and_bad(void **state)
{
	struct cp_opts o;
	struct cp_change a[8], b[8];
	double v[30];
	int na, nb;

	cp_opts_defaults(&o);
	series(v, 30, 0.08, 12, 1.3);
	na = cp_detect(v, NULL, 30, &o, a, 8);
	nb = cp_detect(v, NULL, 30, &o, b, 8);
	assert_int_equal(na, nb);
	assert_memory_equal(a, b, (size_t)na * sizeof(a[0]));
	v[3] = NAN;
	assert_int_equal(cp_detect(v, NULL, 30, &o, a, 8), -EINVAL);
	assert_int_equal(cp_detect(v, NULL, 5, &o, a, 8), -EINVAL);
	v[3] = 1;
	assert_int_equal(cp_detect(v, NULL, 5, &o, a, 8), 0);	/* too short to split */
	for (size_t i = 0; i < 30; i++)
		v[i] = 5;	/* constant */
	assert_int_equal(cp_detect(v, NULL, 30, &o, a, 8), 0);
}

static void test_two_sample(void **state)
{
	struct cp_opts o;
	double a[8], b[8];

	cp_opts_defaults(&o);
	series(a, 8, 0.03, 8, 1);
	series(b, 8, 0.03, 8, 1);
	assert_true(cp_two_sample_p(a, 8, b, 8, &o) > 0.05);
	for (size_t i = 0; i < 8; i++)
		b[i] *= 1.3;
	assert_true(cp_two_sample_p(a, 8, b, 8, &o) <= 0.01);
	assert_true(isnan(cp_two_sample_p(a, 1, b, 8, &o)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_step_found),
		cmocka_unit_test(test_two_steps),
		cmocka_unit_test(test_flat_false_alarms),
		cmocka_unit_test(test_intervals_and_min_change),
		cmocka_unit_test(test_deterministic_and_bad),
		cmocka_unit_test(test_two_sample),
	};

	return cmocka_run_group_tests_name("change points", tests, NULL, NULL) ? 1 : 0;
}
