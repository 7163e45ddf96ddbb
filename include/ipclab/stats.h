/* SPDX-License-Identifier: MIT */
/* Statistics over the repetitions of a cell (src/metrics/stats.c): the
 * distribution-free interval of a median, a two-cluster (bimodality) test,
 * the Mann-Whitney U test and the Hodges-Lehmann interval of a ratio. No
 * state, no allocation the caller sees, no printing; every function takes
 * at most STATS_MAX_N values (the two-sample ones STATS_MAX_SAMPLE each). */
#ifndef IPCLAB_STATS_H
#define IPCLAB_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STATS_MAX_N 1024	/* values of one sample (--repeat takes up to 1000) */
#define STATS_MAX_SAMPLE 64	/* values of each sample of a two-sample test */
#define STATS_CI_MIN_N 6	/* a 95 % interval of a median needs this many values */
#define STATS_CI_NOTE "ci95 needs >= 6 rounds"	/* said where one is missing */
#define STATS_ALPHA 0.05	/* the tests' level: 95 % intervals, p < 0.05 */

/* Bimodality: the largest gap between neighbours of the sorted log values
 * that leaves at least STATS_MODE_MIN_N and STATS_MODE_MIN_FRAC of the values
 * on each side, at least STATS_MODE_MIN_GAP wide (as a ratio) and
 * STATS_MODE_GAP_RATIO times wider than the wider side's own range. */
#define STATS_MODE_MIN_N 2
#define STATS_MODE_MIN_FRAC 0.2
#define STATS_MODE_MIN_GAP 0.05
#define STATS_MODE_GAP_RATIO 3.0

/* Sort ascending (NAN-free input). */
void stats_sort(double *v, size_t n);
/* The median of sorted s (n >= 1). */
double stats_median_sorted(const double *s, size_t n);
/* The median of v (n >= 1), v sorted in place. */
double stats_median(double *v, size_t n);

/* The 95 % order-statistic interval of the median of sorted s: [s(j), s(k)]
 * (ranks from 1), k = n + 1 - j, j the largest rank with
 * P(j <= B < k) >= 0.95 for B ~ Binomial(n, 1/2). No assumption about the
 * distribution. 0, or -EDOM when n < STATS_CI_MIN_N (no such j exists). */
int stats_median_ci(const double *s, size_t n, double *lo, double *hi);

/* The ranks of a distribution-free interval of the median of n values
 * at level 1 - alpha: [x(j), x(n + 1 - j)] (ranks from 1), j the largest
 * with 2 P(B <= j - 1) <= alpha for B ~ Binomial(n, 1/2); exact up to
 * STATS_RANKS_EXACT_N values, the normal approximation (with its
 * continuity correction) above. 0, or -EDOM when no such j exists (too
 * few values) or alpha is not in (0, 1). */
#define STATS_RANKS_EXACT_N 2000
int stats_median_ranks(uint64_t n, double alpha, uint64_t *j);

/* The larger distance of [lo, hi] from med, as % of |med| (NAN if med is 0). */
double stats_ci_pct(double med, double lo, double hi);

/* Two clusters of sorted positive values. */
struct stats_modes {
	size_t n_low, n_high;		/* values below and above the gap */
	double low_median, high_median;	/* each cluster's median */
	double split;			/* a value inside the gap (geometric middle) */
};
/* Do sorted s fall in two clusters (the test above)? n >= STATS_CI_MIN_N
 * and every value > 0, else false. m is filled when true. */
bool stats_bimodal(const double *s, size_t n, struct stats_modes *m);

/* Mann-Whitney U of x against y (two-sided). */
struct stats_mw {
	double u;		/* pairs with x_i > y_j, ties counted half */
	double p_value;		/* two-sided */
	bool exact;		/* exact null distribution (no ties); else normal, tie-corrected */
};
/* 0; -EINVAL when a sample is empty or larger than STATS_MAX_SAMPLE. */
int stats_mann_whitney(const double *x, size_t nx, const double *y, size_t ny,
		       struct stats_mw *out);
/* The smallest two-sided p-value samples of these sizes can give (no ties). */
double stats_mw_min_p(size_t nx, size_t ny);

/* Hodges-Lehmann estimate and 95 % interval of the ratio y/x: the median and
 * order statistics of the nx * ny pairwise ratios y_j / x_i, the ranks from
 * the Mann-Whitney null distribution (exact). With a value <= 0 the pairwise
 * differences are used instead, scaled by the median of x. 0; -EDOM when the
 * samples are too small for a 95 % interval (e.g. 3 and 3) or the median of x
 * is not positive; -EINVAL as stats_mann_whitney. */
int stats_ratio_ci(const double *x, size_t nx, const double *y, size_t ny, double *est,
		   double *lo, double *hi);

/* What a ratio's 95 % interval says, with an equivalence margin m (0.10:
 * +-10 %, taken symmetric in log, [1/(1+m), 1+m]):
 *   SV_NO_DIFFERENCE  the whole interval lies inside the margin: a finding,
 *                     "the same within +-10 %", whether or not it excludes 1;
 *   SV_DIFFERENT      the interval excludes 1 and leaves the margin;
 *   SV_TOO_NOISY      the interval holds 1 and reaches past the margin: it
 *                     is wider than both the margin and the difference.
 *   SV_UNKNOWN        no interval (NAN bounds). */
enum stats_verdict { SV_UNKNOWN, SV_NO_DIFFERENCE, SV_DIFFERENT, SV_TOO_NOISY };
#define STATS_EQUIV_MARGIN 0.10
enum stats_verdict stats_ratio_verdict(double lo, double hi, double margin);
/* "no difference", "different", "too noisy", "unknown". */
const char *stats_verdict_name(enum stats_verdict v);

/* Two counts of rare events (xruns, late starts) over their exposures (the
 * cycles, messages or seconds each was counted in): the exact conditional
 * test that their rates are equal. Given k = x1 + x2, x1 is
 * Binomial(k, t1 / (t1 + t2)) under equal rates; the two-sided p-value sums
 * the outcomes no more likely than x1. 1 when k is 0; NAN when an exposure
 * is not positive. 3 against 0 in equal exposures: p = 0.25. */
double stats_rate_test(unsigned long long x1, double t1, unsigned long long x2, double t2);

#endif
