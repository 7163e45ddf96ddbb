// SPDX-License-Identifier: MIT
/* compare at the level of runs. What differs between two runs of the same
 * plan is the run: its placement, its start, the mode the machine was in.
 * The repetitions inside one run share all that, so a test over them takes
 * a run's luck for a change. So:
 *  - several runs a side (compare A1 A2 -- B1 B2, --by machine): each run
 *    gives one value per cell (its median), and the test works on those:
 *    with enough runs (4 and 4 or more) the Mann-Whitney U test and the
 *    Hodges-Lehmann interval of the ratio, judged by stats_ratio_verdict
 *    (better or worse only when p < 0.05 and the interval leaves +-10 %);
 *    with fewer, the range of every ratio of an after run to a before run,
 *    better or worse only when the whole range lies beyond +-10 % (and the
 *    machine's calibrated drift, when known);
 *  - one run a side, with the machine's calibrated run-to-run drift (env
 *    --calibrate): better or worse only when the repetitions' interval (or
 *    the ratio, without one) lies wholly beyond that drift and +-10 %; a
 *    smaller change is "within run-to-run noise";
 *  - one run a side, no calibration: the test over the repetitions
 *    (compare_test.c), said to be so. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ipclab/stats.h"
#include "ipclab/util.h"
#include "compare.h"

const char *cmp_basis_name(enum cmp_basis b)
{
	switch (b) {
	case CB_RUNS: return "runs";
	case CB_DRIFT: return "calibrated drift";
	case CB_REPETITIONS: break;
	}
	return "repetitions";
}

/* The cell of rf that matches c (the k-th of its configuration in its own
 * file own, the k-th in rf), NULL when none. */
static const struct rcell *cell_in(const struct rfile *rf, const struct rfile *own,
				   const struct rcell *c)
{
	size_t k = 0;

	for (const struct rcell *p = own->cells; p < c; p++)
		k += !strcmp(p->match, c->match);
	for (size_t i = 0; i < rf->n; i++)
		if (!strcmp(rf->cells[i].match, c->match) && !k--)
			return &rf->cells[i];
	return NULL;
}

/* Side k's values of metric key for row: one per run with the cell ok. */
static size_t side_values(const struct cmp_row *row, const struct cmp_opts *o, int k,
			  const char *key, double *out, size_t max)
{
	const struct rcell *own = k ? row->after : row->before;
	size_t n = 0, runs = o->nruns[k] ? o->nruns[k] : 1;

	for (size_t j = 0; j < runs && n < max; j++) {
		const struct rcell *c = j ? cell_in(o->runs[k][j], o->runs[k][0], own) : own;
		double v = c && c->ok ? rcell_metric(c, key) : NAN;

		if (isfinite(v))
			out[n++] = v;
	}
	return n;
}

/* The band a change must leave: +-STATS_EQUIV_MARGIN, widened to the
 * calibrated drift d when there is one. */
static void noise_band(const struct cmp_drift *d, double *lo, double *hi)
{
	*hi = 1 + STATS_EQUIV_MARGIN;
	*lo = 1 / *hi;
	if (d && d->lo < *lo)
		*lo = d->lo;
	if (d && d->hi > *hi)
		*hi = d->hi;
}

static enum cmp_verdict direction(double lo, bool higher_better)
{
	return (lo > 1) == higher_better ? CV_BETTER : CV_WORSE;
}

/* Worse by more than --fail-above, the interval's nearer end. */
static bool past(const struct cmp_test *t, bool higher_better, double pct)
{
	if (isnan(pct) || t->verdict != CV_WORSE)
		return false;
	return higher_better ? t->ratio_hi < 1 - pct / 100 : t->ratio_lo > 1 + pct / 100;
}

static double vmin(const double *v, size_t n)
{
	double m = v[0];

	for (size_t i = 1; i < n; i++)
		m = v[i] < m ? v[i] : m;
	return m;
}

static double vmax(const double *v, size_t n)
{
	double m = v[0];

	for (size_t i = 1; i < n; i++)
		m = v[i] > m ? v[i] : m;
	return m;
}

static double med(const double *v, size_t n)
{
	double s[STATS_MAX_SAMPLE];

	memcpy(s, v, n * sizeof(*v));
	return stats_median(s, n);
}

/* Several runs a side: the test over the runs' values. */
static void runs_test(const double *x, size_t nx, const double *y, size_t ny,
		      const struct cmp_drift *d, bool higher_better, struct cmp_test *t,
		      char *why, size_t wlen)
{
	struct stats_mw mw;
	double est, blo, bhi;

	*t = (struct cmp_test){ .n_before = (unsigned)nx, .n_after = (unsigned)ny, .p_value = NAN,
				.ratio_lo = NAN, .ratio_hi = NAN, .before = NAN, .after = NAN,
				.verdict = CV_UNTESTED };
	if (!nx || !ny) {
		snprintf(why, wlen, "no run of this cell ok in %s", nx ? "after" : "before");
		return;
	}
	t->before = med(x, nx);
	t->after = med(y, ny);
	if (stats_mw_min_p(nx, ny) < STATS_ALPHA && !stats_mann_whitney(x, nx, y, ny, &mw) &&
	    !stats_ratio_ci(x, nx, y, ny, &est, &t->ratio_lo, &t->ratio_hi)) {
		enum stats_verdict sv = stats_ratio_verdict(t->ratio_lo, t->ratio_hi,
							    STATS_EQUIV_MARGIN);

		t->p_value = mw.p_value;
		t->verdict = mw.p_value < STATS_ALPHA && sv == SV_DIFFERENT ?
				     direction(t->ratio_lo, higher_better) : CV_SAME;
		if (t->verdict == CV_SAME)
			snprintf(why, wlen, "%s over %zu and %zu runs", stats_verdict_name(sv), nx, ny);
		return;
	}
	if (!(vmin(x, nx) > 0) || !(vmin(y, ny) > 0)) {
		snprintf(why, wlen, "a run's value is not above 0: no ratio");
		return;
	}
	/* Too few runs for the test: every after run against every before run. */
	t->ratio_lo = vmin(y, ny) / vmax(x, nx);
	t->ratio_hi = vmax(y, ny) / vmin(x, nx);
	noise_band(d, &blo, &bhi);
	if (t->ratio_lo > bhi || t->ratio_hi < blo) {
		t->verdict = direction(t->ratio_lo, higher_better);
	} else {
		t->verdict = CV_SAME;
		snprintf(why, wlen, "within run-to-run noise (every ratio of %zu and %zu runs, %.3f..%.3f, not beyond %.3f..%.3f)",
			 nx, ny, t->ratio_lo, t->ratio_hi, blo, bhi);
	}
}

/* One run a side, the machine's drift known. */
static void drift_test(struct cmp_value *v, const struct cmp_drift *d, bool higher_better,
		       double fail_above_pct)
{
	double lo = v->test.ratio_lo, hi = v->test.ratio_hi, blo, bhi;

	if (v->verdict == CV_CANNOT || v->verdict == CV_MIXED || v->nmodes || isnan(v->ratio))
		return;	/* not like with like, or a mode each: as the repetitions say */
	if (isnan(lo) || isnan(hi))
		lo = hi = v->ratio;
	noise_band(d, &blo, &bhi);
	v->basis = CB_DRIFT;
	v->drift_lo = d->lo;
	v->drift_hi = d->hi;
	if (lo > bhi || hi < blo) {
		v->verdict = direction(lo, higher_better);
		v->why[0] = '\0';
	} else {
		v->verdict = CV_SAME;
		snprintf(v->why, sizeof(v->why), "within run-to-run noise (calibrated drift %.3f..%.3f)",
			 d->lo, d->hi);
	}
	v->test.ratio_lo = lo;
	v->test.ratio_hi = hi;
	v->test.verdict = v->verdict;
	v->regressed = past(&v->test, higher_better, fail_above_pct);
}

const struct cmp_drift *cmp_drift_for(const struct cmp_row *row, const struct cmp_opts *o)
{
	const struct cmp_drift *widest = NULL;

	for (size_t i = 0; i < o->ndrift; i++) {
		const struct cmp_drift *d = &o->drift[i];

		if (row->before->transport && row->before->pattern &&
		    !strcmp(d->transport, row->before->transport) &&
		    !strcmp(d->pattern, row->before->pattern))
			return d;
		if (!widest || d->hi / d->lo > widest->hi / widest->lo)
			widest = d;
	}
	return widest;
}

void cmp_runs_value(const struct cmp_row *row, unsigned m, const struct cmp_opts *o,
		    struct cmp_value *v)
{
	const struct cmp_metric *cm = cmp_metric(m);
	const struct cmp_drift *d = cmp_drift_for(row, o);
	double x[STATS_MAX_SAMPLE], y[STATS_MAX_SAMPLE];
	size_t nx, ny;

	v->basis = CB_REPETITIONS;
	v->drift_lo = v->drift_hi = NAN;
	v->runs = (struct cmp_test){ .p_value = NAN, .ratio_lo = NAN, .ratio_hi = NAN,
				     .verdict = CV_NONE };
	if (o->nruns[0] <= 1 && o->nruns[1] <= 1) {
		if (d)
			drift_test(v, d, cm->higher_better, o->fail_above_pct);
		return;
	}
	nx = side_values(row, o, 0, cm->key, x, STATS_MAX_SAMPLE);
	ny = side_values(row, o, 1, cm->key, y, STATS_MAX_SAMPLE);
	v->basis = CB_RUNS;
	v->why[0] = '\0';
	v->nmodes = 0;
	if (d) {
		v->drift_lo = d->lo;
		v->drift_hi = d->hi;
	}
	runs_test(x, nx, y, ny, d, cm->higher_better, &v->runs, v->why, sizeof(v->why));
	v->test = v->runs;
	v->verdict = v->runs.verdict;
	if (nx && ny) {
		v->before = v->runs.before;
		v->after = v->runs.after;
		v->ratio = v->before > 0 ? v->after / v->before : NAN;
		v->change_pct = (v->ratio - 1) * 100;
		v->worse_pct = cm->higher_better ? -v->change_pct : v->change_pct;
	}
	v->regressed = past(&v->runs, cm->higher_better, o->fail_above_pct);
}

size_t cmp_drift_from_json(const json_t *cal, struct cmp_drift *d, size_t max)
{
	struct rec_drift x[CMP_DRIFT_MAX];
	size_t n = rec_drift_cells(cal, x, max < CMP_DRIFT_MAX ? max : CMP_DRIFT_MAX);

	for (size_t i = 0; i < n; i++) {
		snprintf(d[i].transport, sizeof(d[i].transport), "%s", x[i].transport);
		snprintf(d[i].pattern, sizeof(d[i].pattern), "%s", x[i].pattern);
		snprintf(d[i].what, sizeof(d[i].what), "%s", x[i].what);
		d[i].lo = x[i].lo;
		d[i].hi = x[i].hi;
	}
	return n;
}
