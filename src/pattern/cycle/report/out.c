// SPDX-License-Identifier: MIT
/* -p cycle in the reports (out.h, docs/output.md): its fields of the
 * one field table, its JSON sections and its lines under a table row, which
 * the reporters reach as cycle_report (struct pat_report, pat_reports.c). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "ipclab/util.h"
#include "out.h"

static json_t *traced_ns(bool traced, uint64_t v)
{
	return traced ? json_integer((json_int_t)v) : json_null();
}

json_t *cycle_stages_json(const struct cycle_result *cr)
{
	json_t *arr = json_array();

	for (unsigned i = 0; arr && i < cr->nstages && i < CYCLE_MAX_STAGES; i++) {
		const struct cycle_stage *s = &cr->stages[i];

		json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f}",
				      "client", (json_int_t)i,
				      "wait_p50_ns", (json_int_t)s->wait_p50_ns,
				      "wait_p99_ns", (json_int_t)s->wait_p99_ns,
				      "wait_max_ns", (json_int_t)s->wait_max_ns,
				      "busy_p50_ns", (json_int_t)s->busy_p50_ns,
				      "busy_p99_ns", (json_int_t)s->busy_p99_ns,
				      "wait_share_pct", s->wait_share_pct,
				      "busy_share_pct", s->busy_share_pct);

		if (!o)
			continue;
		/* --trace: woken to running, the scheduler's figure */
		json_object_set_new(o, "woken_p50_ns", traced_ns(s->traced, s->woken_p50_ns));
		json_object_set_new(o, "woken_p99_ns", traced_ns(s->traced, s->woken_p99_ns));
		json_object_set_new(o, "woken_max_ns", traced_ns(s->traced, s->woken_max_ns));
		/* the xruns it caused, and by what */
		json_object_set_new(o, "xruns_caused", json_integer((json_int_t)s->xruns));
		json_object_set_new(o, "xrun_causes",
				    json_pack("{s:I, s:I, s:o}", "stage_wait", (json_int_t)s->blame.wait,
					      "stage_busy", (json_int_t)s->blame.busy, "preempted",
					      traced_ns(cr->causes_traced, s->blame.preempted)));
		json_array_append_new(arr, o);
	}
	return arr;
}

/* {late_start: N, ..., preempted: N or null (not known without
 * --trace), unknown: N}: every xrun once. */
json_t *cycle_causes_json(const struct cycle_result *cr)
{
	json_t *o = json_object();

	for (unsigned k = 0; o && k < XC_N; k++)
		json_object_set_new(o, cycle_cause_name(k),
				    k == XC_PREEMPTED ? traced_ns(cr->causes_traced, cr->causes[k]) :
							json_integer((json_int_t)cr->causes[k]));
	return o;
}

/* {cycles_per_point, max_ns: [...], xruns: [...]}; a point whose cycles
 * were all late starts (never run) has max_ns null. */
json_t *cycle_series_json(const struct cycle_series *s)
{
	json_t *o = json_object(), *mx = json_array(), *xr = json_array();

	if (!o || !mx || !xr) {
		json_decref(o);
		json_decref(mx);
		json_decref(xr);
		return NULL;
	}
	for (uint32_t i = 0; i < s->n && i < CYCLE_SERIES_MAX; i++) {
		json_array_append_new(mx, s->max_ns[i] == UINT64_MAX ? json_null() :
					  json_integer((json_int_t)s->max_ns[i]));
		json_array_append_new(xr, json_integer(s->xruns[i]));
	}
	json_object_set_new(o, "cycles_per_point", json_integer(s->per));
	json_object_set_new(o, "max_ns", mx);
	json_object_set_new(o, "xruns", xr);
	return o;
}

static void table_line(FILE *f, const struct result *r)
{
	const struct cycle_result *cr = cycle_result_of(r);

	if (cr && cr->on)
		cycle_table_line(f, cr);
}

/* "  cycle: 7500 cycles, 3 xruns (400/M), 1 late start; timer late p99
 * 40us; stage 1 wait 12us busy 100us (7.5 %) ..." */
void cycle_table_line(FILE *f, const struct cycle_result *cr)
{
	char a[24], b[24], c[24];

	fprintf(f, "  cycle %s: period %s, deadline %s: %llu cycles, %llu xruns (%.0f/M), %llu late starts",
		cr->shape, fmt_ns(a, sizeof(a), (double)cr->period_ns),
		fmt_ns(b, sizeof(b), (double)cr->deadline_ns), (unsigned long long)cr->cycles,
		(unsigned long long)cr->xruns, cr->xruns_per_million,
		(unsigned long long)cr->late_starts);
	fprintf(f, "; timer late p50 %s p99 %s max %s\n",
		fmt_ns(a, sizeof(a), (double)cr->timer_late_p50_ns),
		fmt_ns(b, sizeof(b), (double)cr->timer_late_p99_ns),
		fmt_ns(c, sizeof(c), (double)cr->timer_late_max_ns));
	cycle_causes_line(f, cr);
	for (unsigned i = 0; i < cr->nstages && i < CYCLE_MAX_STAGES; i++) {
		const struct cycle_stage *s = &cr->stages[i];

		fprintf(f, "    stage %u (client %u): wait p50 %s p99 %s (%.1f %% of the period)", i + 1, i,
			fmt_ns(a, sizeof(a), (double)s->wait_p50_ns),
			fmt_ns(b, sizeof(b), (double)s->wait_p99_ns), s->wait_share_pct);
		fprintf(f, ", busy p50 %s p99 %s (%.1f %%)",
			fmt_ns(a, sizeof(a), (double)s->busy_p50_ns),
			fmt_ns(b, sizeof(b), (double)s->busy_p99_ns), s->busy_share_pct);
		if (s->traced)
			fprintf(f, "; woken to running p50 %s p99 %s",
				fmt_ns(a, sizeof(a), (double)s->woken_p50_ns),
				fmt_ns(b, sizeof(b), (double)s->woken_p99_ns));
		if (s->xruns)
			fprintf(f, "; made %llu xruns (its wait %llu, its work %llu", (unsigned long long)s->xruns,
				(unsigned long long)s->blame.wait, (unsigned long long)s->blame.busy);
		if (s->xruns && cr->causes_traced)
			fprintf(f, ", preempted %llu", (unsigned long long)s->blame.preempted);
		if (s->xruns)
			fputc(')', f);
		fputc('\n', f);
	}
}

/* "    xrun causes: stage_busy 3, late_start 17; preempted: not known
 * without --trace": the causes that have xruns, largest first. */
void cycle_causes_line(FILE *f, const struct cycle_result *cr)
{
	bool done[XC_N] = { false };
	const char *sep = "";

	if (!cr->xruns)
		return;
	fputs("    xrun causes:", f);
	for (unsigned n = 0; n < XC_N; n++) {
		unsigned best = XC_N;

		for (unsigned k = 0; k < XC_N; k++)
			if (!done[k] && cr->causes[k] &&
			    (best == XC_N || cr->causes[k] > cr->causes[best]))
				best = k;
		if (best == XC_N)
			break;
		done[best] = true;
		fprintf(f, "%s %s %llu", sep, cycle_cause_name(best),
			(unsigned long long)cr->causes[best]);
		sep = ",";
	}
	if (!cr->causes_traced)
		fputs("; preempted by other tasks: not known without --trace (counted by the part it lengthened)", f);
	fputc('\n', f);
}

/* ---- the pattern's part of the result record ------------------------------------ */

static int json_metrics(json_t *metrics, const struct result *r)
{
	const struct cycle_result *cr = cycle_result_of(r);

	if (!cr || !cr->on)
		return 0;
	if (json_object_set_new(metrics, "xrun_causes", cycle_causes_json(cr)))
		return -ENOMEM;
	return json_object_set_new(metrics, "stages", cycle_stages_json(cr));
}

/* The key json_result adds beside the configuration (pat_reports.c). */
const char *const cycle_result_keys[] = { "cycle_series", NULL };

static int json_result(json_t *res, const struct result *r)
{
	const struct cycle_result *cr = cycle_result_of(r);

	if (!cr || !cr->on)
		return 0;
	return json_object_set_new(res, "cycle_series", cycle_series_json(&cr->series));
}

/* Its fields: NAN (or "") for another pattern's result, left out of JSON. */
static const char *get_period(const struct result *r)
{
	const struct cycle_cell *cc = cycle_cell_of(&r->cell);

	return cc ? cc->period_text : "";
}

static double get_period_ns(const struct result *r)
{
	const struct cycle_cell *cc = cycle_cell_of(&r->cell);

	return cc && cc->period_ns ? (double)cc->period_ns : NAN;
}

#define GET_CYC(name, expr) \
	static double get_##name(const struct result *r) \
	{ \
		const struct cycle_result *cr = cycle_result_of(r); \
		return cr && cr->on ? (double)(expr) : NAN; \
	}
#define GET_CYC_LAT(name, expr, h) \
	static double get_##name(const struct result *r) \
	{ \
		const struct cycle_result *cr = cycle_result_of(r); \
		return cr && cr->on && (h) ? (double)(expr) : NAN; \
	}
GET_CYC(deadline, cr->deadline_ns)
GET_CYC(cycles, cr->cycles)
GET_CYC(xruns, cr->xruns)
GET_CYC(late_starts, cr->late_starts)
GET_CYC(xruns_ppm, cr->xruns_per_million)
GET_CYC_LAT(cycle_p50, cr->cycle_p50_ns, r->lat_samples)
GET_CYC_LAT(cycle_p99, cr->cycle_p99_ns, r->lat_samples)
GET_CYC_LAT(cycle_p99_9, cr->cycle_p99_9_ns, r->lat_samples)
GET_CYC_LAT(cycle_max, cr->cycle_max_ns, r->lat_samples)
GET_CYC_LAT(timer_p50, cr->timer_late_p50_ns, cr->timer_samples)
GET_CYC_LAT(timer_p99, cr->timer_late_p99_ns, cr->timer_samples)
GET_CYC_LAT(timer_max, cr->timer_late_max_ns, cr->timer_samples)

static const struct field config_fields[] = {
	{ .key = "period", .label = "period", .kind = F_STR, .get_str = get_period, .config = true,
	  .optional = true, .doc = "-p cycle: --period as given (a time, or FRAMES@RATE such as 64@48000)" },
	{ .key = "period_ns", .label = "period", .kind = F_U64, .unit = U_NS, .get_num = get_period_ns,
	  .config = true, .optional = true, .doc = "-p cycle: the driver's period" },
};

#define CYC_N(k, l, kd, u, g, d) \
	{ .key = k, .label = l, .kind = kd, .unit = u, .get_num = get_##g, .optional = true, .doc = d }
static const struct field metric_fields[] = {
	CYC_N("deadline_ns", "deadline", F_U64, U_NS, deadline,
	      "-p cycle: a cycle completing later than this after its intended start is an xrun"),
	CYC_N("cycles", "cycles", F_U64, U_COUNT, cycles,
	      "-p cycle: periods in the window (late starts included)"),
	CYC_N("xruns", "xruns", F_U64, U_COUNT, xruns,
	      "-p cycle: cycles that missed their deadline (late starts included)"),
	CYC_N("late_starts", "late", F_U64, U_COUNT, late_starts,
	      "-p cycle: cycles whose deadline passed before the driver could start them (not run)"),
	CYC_N("xruns_per_million", "xruns/M", F_DBL, U_NONE, xruns_ppm,
	      "-p cycle: xruns per million cycles"),
	CYC_N("cycle_p50_ns", "cycle p50", F_U64, U_NS, cycle_p50,
	      "-p cycle: median completion time, intended start to the graph's end"),
	CYC_N("cycle_p99_ns", "cycle p99", F_U64, U_NS, cycle_p99, "-p cycle: 99th percentile completion time"),
	CYC_N("cycle_p99_9_ns", "cycle p99.9", F_U64, U_NS, cycle_p99_9,
	      "-p cycle: 99.9th percentile completion time"),
	CYC_N("cycle_max_ns", "cycle max", F_U64, U_NS, cycle_max, "-p cycle: longest completion time"),
	CYC_N("timer_late_p50_ns", "timer p50", F_U64, U_NS, timer_p50,
	      "-p cycle: the driver's timer lateness (intended wake to actual wake, cyclictest's figure), median"),
	CYC_N("timer_late_p99_ns", "timer p99", F_U64, U_NS, timer_p99,
	      "-p cycle: the driver's timer lateness, 99th percentile"),
	CYC_N("timer_late_max_ns", "timer max", F_U64, U_NS, timer_max,
	      "-p cycle: the driver's timer lateness, largest"),
};

const struct pat_report cycle_report = {
	.config = config_fields,
	.nconfig = ARRAY_SIZE(config_fields),
	.metrics = metric_fields,
	.nmetrics = ARRAY_SIZE(metric_fields),
	.json_metrics = json_metrics,
	.json_result = json_result,
	.table_line = table_line,
	.html = html_cycles,
	.plot = fig_cycle,
};
