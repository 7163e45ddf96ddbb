// SPDX-License-Identifier: MIT
/* The statistics of --repeat and compare (src/metrics/stats.c): the ranks of
 * the median's interval against the binomial, its coverage over seeded
 * samples, the exact Mann-Whitney distribution against a brute-force count
 * of every ordering, textbook p-values, the tie-corrected normal p, the
 * Hodges-Lehmann interval's coverage, the test's false positives over many
 * A/A pairs drawn from one distribution, and the two-cluster test on
 * synthetic bimodal and unimodal series. Every sample comes from a fixed
 * seed, so each run sees the same numbers. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ipclab/metrics.h"
#include "ipclab/stats.h"

#include "seeded_rng.h"

/* log-normal around median med with log-sd sigma (Box-Muller) */
static double lognormal(double med, double sigma)
{
	double u = uniform01(), v = uniform01();

	return med * exp(sigma * sqrt(-2 * log(u)) * cos(2 * M_PI * v));
}

static void draw(double *v, size_t n, double med, double sigma)
{
	for (size_t i = 0; i < n; i++)
		v[i] = lognormal(med, sigma);
}

static void test_median_ci_ranks(void **state)
{
	double s[20], lo, hi;

	(void)state;
	for (size_t i = 0; i < 20; i++)
		s[i] = (double)(i + 1);		/* s(k) = k */
	assert_int_equal(stats_median_ci(s, 5, &lo, &hi), -EDOM);	/* 5 rounds: too few */
	assert_int_equal(stats_median_ci(s, 6, &lo, &hi), 0);	/* [min, max]: 96.9 % */
	assert_true(lo == 1 && hi == 6);
	assert_int_equal(stats_median_ci(s, 10, &lo, &hi), 0);	/* ranks 2 and 9: 97.9 % */
	assert_true(lo == 2 && hi == 9);
	assert_int_equal(stats_median_ci(s, 20, &lo, &hi), 0);	/* ranks 6 and 15: 95.9 % */
	assert_true(lo == 6 && hi == 15);
	assert_true(fabs(stats_ci_pct(10, 9, 10.5) - 10) < 1e-12);
}

/* The interval holds the true median (1) in >= 95 % of seeded samples. */
static void test_median_ci_coverage(void **state)
{
	static const size_t sizes[] = { 6, 7, 10, 15, 30, 200 };
	double v[200], lo, hi;

	(void)state;
	rng_state = 42;
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		unsigned hit = 0, trials = 2000;

		for (unsigned t = 0; t < trials; t++) {
			draw(v, sizes[k], 1, 0.3);
			stats_sort(v, sizes[k]);
			assert_int_equal(stats_median_ci(v, sizes[k], &lo, &hi), 0);
			hit += lo <= 1 && 1 <= hi;
		}
		if (hit < 0.94 * trials)
			fail_msg("n=%zu: the interval held the median in %u of %u samples", sizes[k],
				 hit, trials);
	}
}

/* P(B <= k) for B ~ Binomial(n, 1/2), by summing in log space. */
static double binom_half_cdf(uint64_t n, uint64_t k)
{
	double sum = 0;

	for (uint64_t i = 0; i <= k; i++)
		sum += exp(lgamma((double)n + 1) - lgamma((double)i + 1) - lgamma((double)(n - i) + 1) -
			   (double)n * M_LN2);
	return sum;
}

/* The ranks of a median's interval: the same as stats_median_ci's where
 * both apply; the largest j that keeps the coverage (exactly, up to
 * STATS_RANKS_EXACT_N values); the normal approximation above that within
 * a rank of the exact answer and never wider than the level allows. */
static void test_median_ranks(void **state)
{
	double s[300], lo, hi;
	uint64_t j;

	(void)state;
	for (size_t i = 0; i < 300; i++)
		s[i] = (double)(i + 1);
	assert_int_equal(stats_median_ranks(5, STATS_ALPHA, &j), -EDOM);
	assert_int_equal(stats_median_ranks(100, 0, &j), -EDOM);
	assert_int_equal(stats_median_ranks(100, 1, &j), -EDOM);
	for (size_t n = 6; n <= 300; n++) {
		assert_int_equal(stats_median_ci(s, n, &lo, &hi), 0);
		assert_int_equal(stats_median_ranks(n, STATS_ALPHA, &j), 0);
		assert_true((double)j == lo && (double)(n + 1 - j) == hi);
	}
	/* the exact rule at other levels: 2 P(B <= j-1) <= alpha < 2 P(B <= j) */
	for (uint64_t n = 20; n <= 2000; n += 397) {
		assert_int_equal(stats_median_ranks(n, STATS_ALPHA / 2, &j), 0);
		assert_true(2 * binom_half_cdf(n, j - 1) <= STATS_ALPHA / 2);
		assert_true(2 * binom_half_cdf(n, j) > STATS_ALPHA / 2);
	}
	/* across the switch to the approximation: no jump */
	uint64_t a, b;

	assert_int_equal(stats_median_ranks(STATS_RANKS_EXACT_N, STATS_ALPHA, &a), 0);
	assert_int_equal(stats_median_ranks(STATS_RANKS_EXACT_N + 1, STATS_ALPHA, &b), 0);
	assert_true(b + 1 >= a && b <= a + 1);
	/* 10 000 values: the exact j is 4902 (2 P(B <= 4901) = 0.0488) */
	assert_int_equal(stats_median_ranks(10000, STATS_ALPHA, &j), 0);
	assert_int_equal(j, 4902);
	assert_true(2 * binom_half_cdf(10000, j - 1) <= STATS_ALPHA);
	/* the approximation gives the exact rule's rank past the switch */
	for (uint64_t n = STATS_RANKS_EXACT_N + 1; n <= STATS_RANKS_EXACT_N + 400; n += 37) {
		assert_int_equal(stats_median_ranks(n, STATS_ALPHA, &j), 0);
		assert_true(2 * binom_half_cdf(n, j - 1) <= STATS_ALPHA);
		assert_true(2 * binom_half_cdf(n, j) > STATS_ALPHA);
	}
	/* ten million: well inside the range, well away from the middle */
	assert_int_equal(stats_median_ranks(10000000, STATS_ALPHA, &j), 0);
	assert_true(j > 4990000 && j < 5000000 - 3000);
}

/* The median's interval from a histogram: the values at the ranks. */
static void test_hist_median_ci(void **state)
{
	struct hist h;
	double lo, hi;
	uint64_t j;

	(void)state;
	hist_init(&h);
	assert_int_equal(hist_median_ci(&h, STATS_ALPHA, &lo, &hi), -EDOM);
	for (uint64_t v = 1; v <= 201; v++)	/* below HIST_EXACT: every value its own bucket */
		hist_add(&h, v);
	assert_true(201 < HIST_EXACT);
	assert_int_equal(hist_median_ci(&h, STATS_ALPHA, &lo, &hi), 0);
	assert_int_equal(stats_median_ranks(201, STATS_ALPHA, &j), 0);
	assert_true(lo == (double)j && hi == (double)(202 - j));
	assert_true(lo < 101 && hi > 101);
	/* a narrower level is wider */
	double lo2, hi2;

	assert_int_equal(hist_median_ci(&h, STATS_ALPHA / 2, &lo2, &hi2), 0);
	assert_true(lo2 < lo && hi2 > hi);
}

/* U of x against y by definition: pairs x > y, ties half. */
static double brute_u(const double *x, size_t nx, const double *y, size_t ny)
{
	double u = 0;

	for (size_t i = 0; i < nx; i++)
		for (size_t j = 0; j < ny; j++)
			u += x[i] > y[j] ? 1 : x[i] == y[j] ? 0.5 : 0;
	return u;
}

/* Every placement of 5 values among 11 ranks: U counted by definition over
 * all 462 orderings gives the exact distribution; the test's p for each
 * ordering must be twice its tail. */
static void sample_of(unsigned mask, unsigned nbits, double *x, double *y)
{
	size_t a = 0, b = 0;

	for (unsigned r = 0; r < nbits; r++) {
		if (mask & (1u << r))
			x[a++] = r;
		else
			y[b++] = r;
	}
}

static void test_mw_exact_brute_force(void **state)
{
	enum { NX = 5, NY = 6, N = NX + NY };
	unsigned count[NX * NY + 1] = { 0 }, total = 0, checked = 0;
	double x[NX], y[NY];

	(void)state;
	for (unsigned mask = 0; mask < 1u << N; mask++) {
		if (__builtin_popcount(mask) != NX)
			continue;
		sample_of(mask, N, x, y);
		count[(unsigned)brute_u(x, NX, y, NY)]++;
		total++;
	}
	assert_int_equal(total, 462);
	for (unsigned mask = 0; mask < 1u << N; mask++) {
		struct stats_mw mw;
		unsigned u, low;
		double below = 0, want;

		if (__builtin_popcount(mask) != NX)
			continue;
		sample_of(mask, N, x, y);
		u = (unsigned)brute_u(x, NX, y, NY);
		low = u <= NX * NY - u ? u : NX * NY - u;
		for (unsigned k = 0; k <= low; k++)
			below += count[k];
		want = fmin(1, 2 * below / total);
		assert_int_equal(stats_mann_whitney(x, NX, y, NY, &mw), 0);
		assert_true(mw.exact && mw.u == u);
		if (fabs(mw.p_value - want) > 1e-12)
			fail_msg("U=%u: p %.15g, the orderings give %.15g", u, mw.p_value, want);
		checked++;
	}
	assert_int_equal(checked, 462);
}

static void test_mw_textbook(void **state)
{
	const double a[] = { 1, 2, 3, 4, 5 }, b[] = { 6, 7, 8, 9, 10 };
	const double c[] = { 1, 2, 3, 5 }, d[] = { 4, 6, 7, 8 };
	const double e[] = { 1, 2, 2, 3 }, f[] = { 2, 3, 4, 5 };
	struct stats_mw mw;

	(void)state;
	assert_true(fabs(stats_mw_min_p(3, 3) - 0.1) < 1e-12);	/* 2 of C(6,3) = 20 */
	assert_true(fabs(stats_mw_min_p(5, 5) - 2.0 / 252) < 1e-12);
	assert_int_equal(stats_mann_whitney(a, 5, b, 5, &mw), 0);
	assert_true(mw.exact && mw.u == 0 && fabs(mw.p_value - 2.0 / 252) < 1e-12);
	assert_int_equal(stats_mann_whitney(c, 4, d, 4, &mw), 0);	/* U = 1: 4 of 70 */
	assert_true(mw.u == 1 && fabs(mw.p_value - 4.0 / 70) < 1e-12);
	/* ties: midranks 1, 3, 3, 3, 5.5, 5.5, 7, 8; Rx = 12.5, U = 2.5; three
	 * tied at 2 and two at 3: sum(t^3 - t) = 24 + 6 = 30;
	 * var = 16/12 (9 - 30/56) = 11.2857; z = (8 - 2.5 - 0.5) / 3.3594 */
	assert_int_equal(stats_mann_whitney(e, 4, f, 4, &mw), 0);
	assert_false(mw.exact);
	assert_true(mw.u == 2.5);
	assert_true(fabs(mw.p_value - erfc(5 / sqrt(16.0 / 12 * (9 - 30.0 / 56)) / M_SQRT2)) < 1e-12);
	assert_int_equal(stats_mann_whitney(a, 5, a, 5, &mw), 0);	/* the same values */
	assert_true(mw.p_value == 1);
	assert_int_equal(stats_mann_whitney(a, 0, b, 5, &mw), -EINVAL);
	assert_int_equal(stats_mann_whitney(a, 65, b, 5, &mw), -EINVAL);
}

/* A/A: both samples from one distribution. Over 20 pairs at most one
 * reads p < 0.05 (the bound), and over 4000 pairs, with and without
 * the ties of histogram buckets, the rate stays near 5 %. */
static void test_mw_false_positives(void **state)
{
	double x[STATS_MAX_SAMPLE], y[STATS_MAX_SAMPLE];
	struct stats_mw mw;
	unsigned fp = 0;

	(void)state;
	rng_state = 2025;
	for (int pair = 0; pair < 20; pair++) {
		draw(x, 10, 10600, 0.02);
		draw(y, 10, 10600, 0.02);
		assert_int_equal(stats_mann_whitney(x, 10, y, 10, &mw), 0);
		fp += mw.p_value < STATS_ALPHA;
	}
	assert_true(fp <= 1);
	for (int quantise = 0; quantise < 2; quantise++) {
		fp = 0;
		for (int pair = 0; pair < 4000; pair++) {
			size_t n = 6 + (size_t)pair % 20;

			draw(x, n, 10600, 0.02);
			draw(y, n, 10600, 0.02);
			for (size_t i = 0; quantise && i < n; i++) {	/* 64 ns buckets */
				x[i] = 64 * floor(x[i] / 64);
				y[i] = 64 * floor(y[i] / 64);
			}
			assert_int_equal(stats_mann_whitney(x, n, y, n, &mw), 0);
			fp += mw.p_value < STATS_ALPHA;
		}
		if (fp > 0.06 * 4000)
			fail_msg("A/A pairs%s: %u of 4000 read p < 0.05", quantise ? " (ties)" : "", fp);
	}
}

static void test_ratio_ci(void **state)
{
	double x[STATS_MAX_SAMPLE], y[STATS_MAX_SAMPLE], est, lo, hi;
	const double z[] = { 0, 1, 2, 3, 4, 5 }, w[] = { 1, 2, 3, 4, 5, 6 };
	unsigned hit = 0;

	(void)state;
	for (size_t i = 0; i < 8; i++) {
		x[i] = 100 + i;
		y[i] = 2 * x[i];
	}
	assert_int_equal(stats_ratio_ci(x, 8, y, 8, &est, &lo, &hi), 0);
	assert_true(fabs(est - 2) < 1e-12 && lo < 2 && hi > 2 && lo > 1.8 && hi < 2.2);
	assert_int_equal(stats_ratio_ci(x, 3, y, 3, &est, &lo, &hi), -EDOM);	/* too few */
	/* a zero: differences scaled by the median of x (2.5), shift 1 */
	assert_int_equal(stats_ratio_ci(z, 6, w, 6, &est, &lo, &hi), 0);
	assert_true(fabs(est - 1.4) < 1e-12 && lo <= 1.4 && hi >= 1.4);
	/* coverage of the true ratio 1.1 */
	rng_state = 7;
	for (int t = 0; t < 2000; t++) {
		draw(x, 8, 1000, 0.1);
		draw(y, 9, 1100, 0.1);
		assert_int_equal(stats_ratio_ci(x, 8, y, 9, &est, &lo, &hi), 0);
		hit += lo <= 1.1 && 1.1 <= hi;
	}
	if (hit < 0.935 * 2000)
		fail_msg("the ratio's interval held 1.1 in %u of 2000 samples", hit);
}

/* A VM's fast and slow modes: 10.8 us and 21.9 us, 2 % noise each. */
static void test_bimodal(void **state)
{
	double v[20], two[32];
	struct stats_modes m;
	unsigned flagged = 0;

	(void)state;
	rng_state = 99;
	for (size_t i = 0; i < 12; i++)
		v[i] = i % 3 ? lognormal(10800, 0.02) : lognormal(21900, 0.02);
	stats_sort(v, 12);
	assert_true(stats_bimodal(v, 12, &m));
	assert_int_equal(m.n_low, 8);
	assert_int_equal(m.n_high, 4);
	assert_true(fabs(m.low_median / 10800 - 1) < 0.03 && fabs(m.high_median / 21900 - 1) < 0.03);
	assert_true(m.split > v[7] && m.split < v[8]);
	/* one slow outlier is not a mode; neither are 5 values (too few) */
	for (size_t i = 0; i < 10; i++)
		two[i] = 10000 + 10 * (double)i;
	two[9] = 30000;
	assert_false(stats_bimodal(two, 10, &m));
	assert_false(stats_bimodal(v, 5, &m));
	/* unimodal noise, even wide (log-sd 0.2), is rarely split in two */
	for (int t = 0; t < 2000; t++) {
		size_t n = 6 + (size_t)t % 25;

		draw(two, n, 10000, t % 2 ? 0.2 : 0.02);
		stats_sort(two, n);
		flagged += stats_bimodal(two, n, &m);
	}
	if (flagged > 0.02 * 2000)
		fail_msg("%u of 2000 unimodal series flagged bimodal", flagged);
}

/* The equivalence rule: an interval inside +-10 % is "no difference" (a
 * finding), one that excludes 1 and leaves it "different", one that holds
 * 1 and reaches past it "too noisy". */
static void test_ratio_verdict(void **state)
{
	(void)state;
	/* 1.00x with +-3 %: the same within the margin */
	assert_int_equal(stats_ratio_verdict(0.97, 1.03, STATS_EQUIV_MARGIN), SV_NO_DIFFERENCE);
	/* significant but small: still inside the margin */
	assert_int_equal(stats_ratio_verdict(1.02, 1.05, STATS_EQUIV_MARGIN), SV_NO_DIFFERENCE);
	/* the margin is symmetric in log: 1/1.1 is inside, 0.90 is not */
	assert_int_equal(stats_ratio_verdict(1 / 1.1, 1.1, STATS_EQUIV_MARGIN), SV_NO_DIFFERENCE);
	assert_int_equal(stats_ratio_verdict(0.90, 1.05, STATS_EQUIV_MARGIN), SV_TOO_NOISY);
	/* a real change: the interval excludes 1 and leaves the margin */
	assert_int_equal(stats_ratio_verdict(1.5, 1.9, STATS_EQUIV_MARGIN), SV_DIFFERENT);
	assert_int_equal(stats_ratio_verdict(0.5, 0.98, STATS_EQUIV_MARGIN), SV_DIFFERENT);
	/* holds 1 and is wider than the margin: too noisy */
	assert_int_equal(stats_ratio_verdict(0.7, 1.6, STATS_EQUIV_MARGIN), SV_TOO_NOISY);
	assert_int_equal(stats_ratio_verdict(NAN, 1.2, STATS_EQUIV_MARGIN), SV_UNKNOWN);
	assert_string_equal(stats_verdict_name(SV_NO_DIFFERENCE), "no difference");
	assert_string_equal(stats_verdict_name(SV_TOO_NOISY), "too noisy");
}

/* The exact test of two event rates: a few events against none is not a
 * difference; many against none, or the same rate, come out as they
 * should; the p-value is checked against the binomial sum by hand. */
static void test_rate_test(void **state)
{
	double p;

	(void)state;
	/* 3 vs 0 xruns in 1500 cycles each: 2 * 0.5^3 */
	p = stats_rate_test(3, 1500, 0, 1500);
	assert_true(fabs(p - 0.25) < 1e-9);
	assert_true(stats_rate_test(0, 1500, 3, 1500) > STATS_ALPHA);
	/* 12 vs 0: 2 * 0.5^12 */
	p = stats_rate_test(12, 1500, 0, 1500);
	assert_true(fabs(p - 2 * pow(0.5, 12)) < 1e-12);
	/* the same rate over different exposures: 10 in 1000 vs 20 in 2000 */
	assert_true(stats_rate_test(10, 1000, 20, 2000) > 0.9);
	/* 5 in 100 vs 5 in 10000: very different rates */
	assert_true(stats_rate_test(5, 100, 5, 10000) < 1e-3);
	assert_true(stats_rate_test(0, 10, 0, 10) == 1);
	assert_true(isnan(stats_rate_test(1, 0, 1, 10)));
	/* large counts take the normal approximation and stay sane */
	p = stats_rate_test(1000000, 1e9, 1001000, 1e9);
	assert_true(p > 0.2 && p <= 1);
	/* the false-positive rate at the 5 % level stays under 5 % (equal
	 * rates, Poisson counts drawn with a fixed seed) */
	{
		unsigned flagged = 0;

		srand(7);
		for (unsigned t = 0; t < 2000; t++) {
			unsigned long long x[2] = { 0, 0 };

			for (unsigned s = 0; s < 2; s++)	/* ~ Poisson(4) as Binomial(400, 0.01) */
				for (unsigned i = 0; i < 400; i++)
					x[s] += rand() % 100 == 0;
			flagged += stats_rate_test(x[0], 1500, x[1], 1500) < STATS_ALPHA;
		}
		if (flagged > 0.05 * 2000)
			fail_msg("%u of 2000 equal-rate pairs flagged", flagged);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_median_ci_ranks),
		cmocka_unit_test(test_median_ci_coverage),
		cmocka_unit_test(test_median_ranks),
		cmocka_unit_test(test_hist_median_ci),
		cmocka_unit_test(test_mw_exact_brute_force),
		cmocka_unit_test(test_mw_textbook),
		cmocka_unit_test(test_mw_false_positives),
		cmocka_unit_test(test_ratio_ci),
		cmocka_unit_test(test_bimodal),
		cmocka_unit_test(test_ratio_verdict),
		cmocka_unit_test(test_rate_test),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
