// SPDX-License-Identifier: MIT
/* compare's test over the repetitions: both files keep each repetition's
 * value (repeat.<metric>.values), so a metric is judged by the Mann-Whitney
 * U test over them and the Hodges-Lehmann 95 % interval of the ratio
 * after/before (ipclab/stats.h). It changed (better or worse) when
 * p < 0.05 and the whole interval lies beyond +-CMP_NOISE_PCT; otherwise
 * it did not. --fail-above PCT fails a metric only when its whole interval
 * is worse than PCT. A metric whose repetitions fall in two clusters in one
 * file but not in the other is not compared (not like with like); in both,
 * the fast modes are tested against each other and so are the slow. Without
 * repetitions the spread rule of compare.c decides, and the verdict says
 * why there was no test. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ipclab/stats.h"
#include "ipclab/util.h"
#include "compare.h"

const char *cmp_verdict_name(enum cmp_verdict v)
{
	switch (v) {
	case CV_SAME: return "no change";
	case CV_BETTER: return "better";
	case CV_WORSE: return "worse";
	case CV_UNTESTED: return "untested";
	case CV_CANNOT: return "cannot compare";
	case CV_MIXED: return "mixed";
	case CV_OTHER_STATE: return "not comparable";
	case CV_NONE: break;
	}
	return "-";
}

static double median_of(const double *v, size_t n)
{
	double s[REPF_MAX_VALUES];

	if (!n)
		return NAN;
	memcpy(s, v, n * sizeof(*v));
	stats_sort(s, n);
	return stats_median_sorted(s, n);
}

/* x before, y after: the test, the interval, the verdict. */
static void test_sample(const double *x, size_t nx, const double *y, size_t ny,
			bool higher_better, struct cmp_test *t)
{
	const double noise = CMP_NOISE_PCT / 100;
	struct stats_mw mw;
	double est;

	*t = (struct cmp_test){ .before = median_of(x, nx), .after = median_of(y, ny),
				.n_before = (unsigned)nx, .n_after = (unsigned)ny,
				.p_value = NAN, .ratio_lo = NAN, .ratio_hi = NAN,
				.verdict = CV_UNTESTED };
	if (nx < 2 || ny < 2 || stats_mw_min_p(nx, ny) >= STATS_ALPHA ||
	    stats_mann_whitney(x, nx, y, ny, &mw))
		return;
	t->p_value = mw.p_value;
	if (stats_ratio_ci(x, nx, y, ny, &est, &t->ratio_lo, &t->ratio_hi)) {
		t->ratio_lo = t->ratio_hi = NAN;
		return;
	}
	t->verdict = CV_SAME;
	if (t->p_value < STATS_ALPHA && (t->ratio_lo > 1 + noise || t->ratio_hi < 1 - noise))
		t->verdict = (t->ratio_lo > 1) == higher_better ? CV_BETTER : CV_WORSE;
}

/* Is the whole interval worse than --fail-above? */
static bool beyond(const struct cmp_test *t, bool higher_better, double pct)
{
	if (isnan(pct) || t->verdict != CV_WORSE)
		return false;
	return higher_better ? t->ratio_hi < 1 - pct / 100 : t->ratio_lo > 1 + pct / 100;
}

/* The values of one side of the gap (low: below split). */
static size_t cluster(const double *v, size_t n, double split, bool low, double *out)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if ((v[i] < split) == low)
			out[k++] = v[i];
	return k;
}

/* Bimodal in both files: fast mode against fast, slow against slow. */
static void test_modes(const double *x, size_t nx, const struct rcell_modes *mx, const double *y,
		       size_t ny, const struct rcell_modes *my, bool higher_better,
		       struct cmp_value *v)
{
	double a[REPF_MAX_VALUES], b[REPF_MAX_VALUES];
	bool better = false, worse = false, tested = false;

	v->nmodes = 2;
	for (int k = 0; k < 2; k++) {
		size_t na = cluster(x, nx, mx->split, k == 0, a), nb = cluster(y, ny, my->split, k == 0, b);

		test_sample(a, na, b, nb, higher_better, &v->modes[k]);
		tested |= v->modes[k].verdict != CV_UNTESTED;
		better |= v->modes[k].verdict == CV_BETTER;
		worse |= v->modes[k].verdict == CV_WORSE;
	}
	v->verdict = better && worse ? CV_MIXED : better ? CV_BETTER : worse ? CV_WORSE :
		     tested ? CV_SAME : CV_UNTESTED;
	if (!tested)
		snprintf(v->why, sizeof(v->why), "bimodal in both: too few repetitions in each mode to test");
}

static void say_modes(char *buf, size_t len, const char *which, unsigned m,
		      const struct rcell_modes *md)
{
	char lo[32], hi[32];

	if (cmp_metric(m)->unit == CU_NS) {
		fmt_ns(lo, sizeof(lo), md->low_median);
		fmt_ns(hi, sizeof(hi), md->high_median);
	} else {
		snprintf(lo, sizeof(lo), "%.4g", md->low_median);
		snprintf(hi, sizeof(hi), "%.4g", md->high_median);
	}
	snprintf(buf, len, "bimodal in %s only (%s/%s): not like with like", which, lo, hi);
}

void cmp_test_value(const struct cmp_row *row, unsigned m, const struct cmp_opts *o,
		    struct cmp_value *v)
{
	const struct cmp_metric *cm = cmp_metric(m);
	double x[REPF_MAX_VALUES], y[REPF_MAX_VALUES];
	size_t nx = rcell_values(row->before, cm->key, x, REPF_MAX_VALUES);
	size_t ny = rcell_values(row->after, cm->key, y, REPF_MAX_VALUES);
	struct rcell_modes mx, my;

	v->verdict = CV_UNTESTED;
	v->nmodes = 0;
	v->why[0] = '\0';
	v->test = (struct cmp_test){ .p_value = NAN, .ratio_lo = NAN, .ratio_hi = NAN,
				     .verdict = CV_UNTESTED };
	v->bimodal_before = rcell_modes(row->before, cm->key, &mx);
	v->bimodal_after = rcell_modes(row->after, cm->key, &my);
	v->regressed = false;
	if (v->bimodal_before != v->bimodal_after) {
		v->verdict = CV_CANNOT;
		say_modes(v->why, sizeof(v->why), v->bimodal_before ? "before" : "after", m,
			  v->bimodal_before ? &mx : &my);
		return;
	}
	if (nx < 2 || ny < 2) {
		snprintf(v->why, sizeof(v->why), "no repetitions to test in %s (run --repeat 6 or more)",
			 nx < 2 && ny < 2 ? "either file" : nx < 2 ? "before" : "after");
		return;
	}
	if (v->bimodal_before) {
		test_modes(x, nx, &mx, y, ny, &my, cm->higher_better, v);
		v->regressed = beyond(&v->modes[0], cm->higher_better, o->fail_above_pct) ||
			       beyond(&v->modes[1], cm->higher_better, o->fail_above_pct);
		return;
	}
	test_sample(x, nx, y, ny, cm->higher_better, &v->test);
	v->verdict = v->test.verdict;
	if (v->verdict == CV_UNTESTED && isnan(v->test.p_value))
		snprintf(v->why, sizeof(v->why), "%zu and %zu repetitions are too few to test (p cannot go below %.2g)",
			 nx, ny, stats_mw_min_p(nx, ny));
	else if (v->verdict == CV_UNTESTED)
		snprintf(v->why, sizeof(v->why), "no interval of the ratio: the median before is not above 0");
	v->regressed = beyond(&v->test, cm->higher_better, o->fail_above_pct);
}
