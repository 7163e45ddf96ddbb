// SPDX-License-Identifier: MIT
/* --trace or --profile around one cell, for the runner (traced.h): the
 * cell run plain and traced in interleaved pairs (what tracing costs,
 * measured beside what it shows, with the machine's own run-to-run
 * spread), then --explain's reruns (explain.c). The engine drives the
 * tracer; the tracer never calls back into the engine. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "traced.h"
#include "ipclab/result.h"
#include "ipclab/trace.h"

static double headline(const struct result *r, bool rtt)
{
	return rtt ? (double)r->lat_p50_ns : r->msgs_per_s;
}

/* The traced run whose headline is the median of the traced runs. */
static unsigned median_run(struct result *const *t, unsigned n, bool rtt)
{
	unsigned best = 0;
	double v[TRACE_PAIRS], med;

	for (unsigned i = 0; i < n; i++)
		v[i] = headline(t[i], rtt);
	for (unsigned i = 1; i < n; i++)	/* insertion sort of n <= TRACE_PAIRS */
		for (unsigned j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double x = v[j];

			v[j] = v[j - 1];
			v[j - 1] = x;
		}
	med = v[n / 2];
	for (unsigned i = 1; i < n; i++)
		if (fabs(headline(t[i], rtt) - med) < fabs(headline(t[best], rtt) - med))
			best = i;
	return best;
}

static unsigned pairs_per_run = TRACE_PAIRS;

void trace_set_pairs(unsigned n)
{
	pairs_per_run = n < 1 ? 1 : n > TRACE_PAIRS ? TRACE_PAIRS : n;
}

static void set_perturbation(struct result *res, const double *ratio, unsigned n, bool rtt)
{
	struct trace_result *tr = &res->trace;

	trace_perturbation(tr, ratio, n);
	if (tr->on)
		tr->perturbation_of = rtt ? "lat_p50_ns" : "msgs_per_s";
	if (res->profile.on) {
		profile_cost_from(&res->profile, ratio, n);
		res->profile.perturbation_of = rtt ? "lat_p50_ns" : "msgs_per_s";
	}
}

/* pairs_per_run pairs (TRACE_PAIRS unless the session folds them across
 * its repetitions), interleaved: the cell untraced, then traced, and so
 * on. The result is the traced run with the median headline (the last
 * one with --profile DIR, whose folded stacks are on disk); the cost is
 * the median of the pairs' ratios, with their spread. A failed run (or a
 * skipped one) decides the cell as it would alone. */
int trace_run_pair(const struct cell *c, struct result *res,
		   int (*run_once)(const struct cell *c, struct result *res))
{
	struct cell plain_cell = *c;
	struct result *plain = malloc(sizeof(*plain)), *t[TRACE_PAIRS] = { NULL };
	double ratio[TRACE_PAIRS];
	unsigned n = 0, k;
	bool rtt = false;
	int ret = 0;

	for (k = 0; k < TRACE_PAIRS; k++)
		if (!(t[k] = malloc(sizeof(*t[k]))))
			break;
	if (!plain || k < TRACE_PAIRS) {
		res->status = RES_FAILED;
		strcpy(res->reason, "out of memory");
		goto out;
	}
	plain_cell.trace = false;
	plain_cell.profile = false;
	/* a timeline (--trace=events) holds each traced run: one pair, so that
	 * it has one process per cell */
	const unsigned pairs = c->trace_events ? 1 : pairs_per_run;

	for (k = 0; k < pairs; k++) {
		*plain = *res;
		*t[k] = *res;
		ret = run_once(&plain_cell, plain);
		if (!ret)
			ret = run_once(c, t[k]);
		if (ret || t[k]->status != RES_OK) {
			*res = *t[k];	/* its reason, or a half-filled record on an error */
			goto out;
		}
		rtt = t[k]->lat_kind == LAT_RTT;
		if (plain->status == RES_OK && headline(plain, rtt) > 0 && headline(t[k], rtt) > 0)
			ratio[n++] = rtt ? headline(t[k], rtt) / headline(plain, rtt)
					 : headline(plain, rtt) / headline(t[k], rtt);
	}
	/* the folded stacks on disk are the last profiled run's: keep that one */
	*res = *t[c->profile_dir ? pairs - 1 : median_run(t, pairs, rtt)];
	set_perturbation(res, ratio, n, rtt);
	if (c->explain)
		ret = trace_explain(c, res, run_once);
out:
	for (k = 0; k < TRACE_PAIRS; k++)
		free(t[k]);
	free(plain);
	return ret;
}
