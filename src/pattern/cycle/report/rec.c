// SPDX-License-Identifier: MIT
/* -p cycle's record read back (rec.h): each accessor reads its keys
 * of a result and checks them, so that the report's and plot's figures
 * never meet a string where a number belongs, an endless array or a NaN. */
#include <math.h>
#include <string.h>

#include "rec.h"

/* A finite number, else dflt (absent, null, a string, ...). */
static double num_or(const json_t *v, double dflt)
{
	return json_is_number(v) && isfinite(json_number_value(v)) ? json_number_value(v) : dflt;
}

static const json_t *metrics_of(const struct rcell *c)
{
	return json_object_get(c->obj, "metrics");
}

bool rcell_is_cycle(const struct rcell *c)
{
	return c->ok && json_is_object(json_object_get(c->obj, "cycle_series")) &&
	       json_is_array(json_object_get(metrics_of(c), "stages"));
}

double rcell_cycle_deadline_ns(const struct rcell *c)
{
	return num_or(json_object_get(metrics_of(c), "deadline_ns"), NAN);
}

double rcell_cycle_xruns(const struct rcell *c)
{
	return num_or(json_object_get(metrics_of(c), "xruns"), NAN);
}

double rcell_cycle_period_ns(const struct rcell *c)
{
	double p = num_or(json_object_get(c->obj, "period_ns"), NAN);

	return p > 0 ? p : rcell_cycle_deadline_ns(c);
}

/* cycle_series and its two arrays, when they hold a series: n points. */
static const json_t *series_of(const struct rcell *c, const json_t **mx, const json_t **xr,
			       struct rcycle_series *s)
{
	const json_t *o = json_object_get(c->obj, "cycle_series");
	const json_t *per = json_object_get(o, "cycles_per_point");

	*mx = json_object_get(o, "max_ns");
	*xr = json_object_get(o, "xruns");
	if (!json_is_object(o) || !json_is_array(*mx) || !json_is_array(*xr) ||
	    json_array_size(*mx) != json_array_size(*xr) || !json_is_integer(per) ||
	    json_integer_value(per) <= 0)
		return NULL;
	s->per = (uint64_t)json_integer_value(per);
	s->n = json_array_size(*mx) < RCYCLE_MAX_POINTS ? json_array_size(*mx) : RCYCLE_MAX_POINTS;
	return o;
}

bool rcell_cycle_series(const struct rcell *c, struct rcycle_series *s)
{
	const json_t *mx, *xr;

	return series_of(c, &mx, &xr, s) != NULL;
}

size_t rcell_cycle_points(const struct rcell *c, struct rcycle_point *out, size_t max)
{
	struct rcycle_series s;
	const json_t *mx, *xr, *causes, *o = series_of(c, &mx, &xr, &s);
	size_t i;

	if (!o)
		return 0;
	causes = json_object_get(o, "xrun_causes");	/* per point, where a file has them */
	for (i = 0; i < s.n && i < max; i++) {
		const json_t *x = json_array_get(xr, i);
		double m = num_or(json_array_get(mx, i), NAN);

		out[i].max_ns = m >= 0 ? m : NAN;
		out[i].xruns = json_is_integer(x) && json_integer_value(x) > 0 ?
				       (uint64_t)json_integer_value(x) : 0;
		out[i].cause = json_string_value(json_array_get(causes, i));
	}
	return i;
}

size_t rcell_cycle_stages(const struct rcell *c, struct rcycle_stage *out, size_t max)
{
	const json_t *st = json_object_get(metrics_of(c), "stages"), *s;
	size_t k, n = 0;

	json_array_foreach((json_t *)st, k, s) {
		const json_t *by = json_object_get(s, "xrun_causes");

		if (n == max || n == RCYCLE_MAX_STAGES)
			break;
		out[n++] = (struct rcycle_stage){
			.wait_share_pct = num_or(json_object_get(s, "wait_share_pct"), 0),
			.busy_share_pct = num_or(json_object_get(s, "busy_share_pct"), 0),
			.xruns_caused = num_or(json_object_get(s, "xruns_caused"), 0),
			.by_wait = num_or(json_object_get(by, "stage_wait"), 0),
			.by_busy = num_or(json_object_get(by, "stage_busy"), 0),
			.by_preempted = num_or(json_object_get(by, "preempted"), 0),
		};
	}
	return n;
}

bool rcell_xrun_causes(const struct rcell *c, struct rcycle_causes *out)
{
	const json_t *xc = json_object_get(metrics_of(c), "xrun_causes");

	if (!json_is_object(xc))
		return false;
	for (unsigned k = 0; k < XC_N; k++)
		out->by[k] = num_or(json_object_get(xc, cycle_cause_name(k)), 0);
	out->preempted_known = !json_is_null(json_object_get(xc, cycle_cause_name(XC_PREEMPTED)));
	return true;
}
