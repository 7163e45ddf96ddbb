// SPDX-License-Identifier: MIT
/* The trace record of one cell, filled from the result the runner
 * collected, and what tracing cost (the ratios of the untraced/traced
 * pairs that src/core/traced.c runs). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/result.h"
#include "ipclab/trace.h"

void trace_fill(struct trace *t, struct result *res)
{
	struct trace_rusage ru[TRACE_MAX_SIDES];
	bool rtt = res->lat_kind == LAT_RTT;

	for (unsigned i = 0; i < res->nsides && i < TRACE_MAX_SIDES; i++)
		ru[i] = (struct trace_rusage){ res->sides[i].user_ns, res->sides[i].sys_ns };
	trace_collect(t, res->msgs, rtt ? res->lat_mean_ns : 0, ru, &res->trace);
	for (unsigned i = 0; i < res->nsides && i < res->trace.nsides && i < TRACE_MAX_SIDES; i++)
		res->trace.sides[i].poll_ns = res->sides[i].poll_ns;
	trace_cause_fill(res);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void trace_perturbation(struct trace_result *tr, const double *ratio, unsigned n)
{
	double v[TRACE_COST_MAX];

	if (!tr->on || !n || n > TRACE_COST_MAX)
		return;
	memcpy(v, ratio, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_dbl);
	tr->perturbation = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	tr->perturbation_lo = v[0];
	tr->perturbation_hi = v[n - 1];
	tr->perturbation_pairs = n;
	tr->perturbation_separable = n >= 2 && (v[0] > 1 || v[n - 1] < 1);
}

void profile_cost_from(struct profile_result *pr, const double *ratio, unsigned n)
{
	struct trace_result tmp = { .on = true };

	trace_perturbation(&tmp, ratio, n);
	pr->perturbation = tmp.perturbation;
	pr->perturbation_lo = tmp.perturbation_lo;
	pr->perturbation_hi = tmp.perturbation_hi;
	pr->perturbation_pairs = tmp.perturbation_pairs;
	pr->perturbation_separable = tmp.perturbation_separable;
}
