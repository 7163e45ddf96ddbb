// SPDX-License-Identifier: MIT
/* --trace and --profile in the HTML report: each traced side's time budget
 * as stacked bars (user, kernel, runnable, preempted, asleep: the five add
 * up to its window), the cause split (html_cause.c), the ping-pong
 * critical path, the per-message counts, what preempted the endpoints and
 * --explain's verdict (html_cause.c), and whatever else the tracer
 * recorded as tables; for a profiled cell each side's top functions and
 * its flame graph. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/util.h"
#include "html_svg.h"
#include "rec_trace.h"

#define MAX_ROWS 128

static const char *const budget_names[RT_NBUDGET] = {
	[RT_USER] = "user", [RT_SYS] = "kernel", [RT_RUNNABLE] = "runnable (woken, waiting)",
	[RT_PREEMPTED] = "preempted", [RT_SLEEP] = "asleep",
};

static void side_name(const char *role, double id, char *buf, size_t len)
{
	if (role && !strcmp(role, "server"))
		snprintf(buf, len, "server");
	else
		snprintf(buf, len, "client %.0f", isnan(id) ? 0 : id);
}

/* Any JSON the report has no drawing for, as a table: an object's keys,
 * an array of objects as rows. Strings are escaped like all others. */
static void json_table(struct html *h, const char *title, const json_t *v)
{
	char t[512];
	const char *k;
	json_t *x;
	size_t i;

	html_elem(h->f, "h5", NULL, title);
	fputs("<div class=\"tw\"><table class=\"kv\"><tbody>\n", h->f);
	if (json_is_object(v)) {
		i = 0;
		json_object_foreach((json_t *)v, k, x) {
			if (i++ == MAX_ROWS)
				break;
			html_json_text(x, t, sizeof(t));
			fputs("<tr>", h->f);
			html_elem(h->f, "th", NULL, k);
			html_elem(h->f, "td", NULL, t);
			fputs("</tr>\n", h->f);
		}
	} else if (json_is_array(v)) {
		json_array_foreach((json_t *)v, i, x) {
			if (i >= MAX_ROWS)
				break;
			html_json_text(x, t, sizeof(t));
			fputs("<tr>", h->f);
			html_elem(h->f, "td", NULL, t);
			fputs("</tr>\n", h->f);
		}
	} else {
		html_json_text(v, t, sizeof(t));
		fputs("<tr>", h->f);
		html_elem(h->f, "td", NULL, t);
		fputs("</tr>\n", h->f);
	}
	fputs("</tbody></table></div>\n", h->f);
}

/* ---- the view's budgets and critical paths --------------------------------------- */

struct rows {
	char (*label)[HTML_LABEL];
	const char *ptr[MAX_ROWS];
	double *v;
	size_t n;
};

static int rows_alloc(struct rows *r, size_t nparts)
{
	r->n = 0;
	r->label = calloc(MAX_ROWS, HTML_LABEL);
	r->v = calloc(MAX_ROWS * nparts, sizeof(double));
	for (size_t i = 0; r->label && i < MAX_ROWS; i++)
		r->ptr[i] = r->label[i];
	return r->label && r->v ? 0 : -ENOMEM;
}

static void rows_free(struct rows *r)
{
	free(r->label);
	free(r->v);
}

static void budgets(struct html *h, const struct html_view *v)
{
	struct rows r;

	if (rows_alloc(&r, RT_NBUDGET))
		goto out;
	for (size_t i = 0; i < v->n; i++) {
		const struct rcell *c = v->cells[i];
		size_t nsides = rcell_trace_sides(c);
		char lab[HTML_LABEL], side[32];
		struct rtrace_side s;

		html_label(v, c, NULL, lab, sizeof(lab));
		for (size_t k = 0; k < nsides && rcell_trace_side(c, k, &s); k++) {
			if (r.n == MAX_ROWS)
				break;
			side_name(s.role, s.id, side, sizeof(side));
			snprintf(r.label[r.n], HTML_LABEL, "%.150s: %s", lab, side);
			for (size_t p = 0; p < RT_NBUDGET; p++)
				r.v[r.n * RT_NBUDGET + p] = s.budget_ns[p];
			r.n++;
		}
	}
	struct svg_stack c = {
		.title = "time budget of each side over its window", .parts = budget_names,
		.nparts = ARRAY_SIZE(budget_names), .rows = r.ptr, .nrows = r.n, .v = r.v,
		.percent = true, .fd = field_find("elapsed_ns"), .unit_label = "% of the side's window",
		.caption = "from the scheduler's events (--trace): running in user space and in the kernel, woken but not yet running, runnable after a preemption, blocked",
	};

	svg_stack(h, &c);
out:
	rows_free(&r);
}

static void critical_paths(struct html *h, const struct html_view *v)
{
	struct rows r;

	if (rows_alloc(&r, RT_CPATH_PARTS))
		goto out;
	for (size_t i = 0; i < v->n && r.n < MAX_ROWS; i++) {
		struct rtrace_cpath cp;
		char lab[HTML_LABEL], tot[32], mea[32];

		if (!rcell_trace_cpath(v->cells[i], &cp))
			continue;
		html_label(v, v->cells[i], NULL, lab, sizeof(lab));
		fmt_ns(tot, sizeof(tot), cp.total_ns);
		fmt_ns(mea, sizeof(mea), cp.measured_ns);
		snprintf(r.label[r.n], HTML_LABEL, "%.120s (%s of %s)", lab, tot, mea);
		for (size_t p = 0; p < RT_CPATH_PARTS; p++)
			r.v[r.n * RT_CPATH_PARTS + p] = cp.part_ns[p];
		r.n++;
	}
	struct svg_stack c = {
		.title = "critical path of a round trip", .parts = rtrace_cpath_parts,
		.nparts = RT_CPATH_PARTS, .rows = r.ptr, .nrows = r.n, .v = r.v,
		.fd = field_find("lat_mean_ns"), .unit_label = "ns per exchange",
		.caption = "ping-pong with one client, per exchange: where the round trip goes, against the measured mean",
	};

	svg_stack(h, &c);
out:
	rows_free(&r);
}

/* ---- one traced cell's numbers ---------------------------------------------------- */

static void per_msg(struct html *h, const struct rcell *c)
{
	struct rtrace_num pm[RTRACE_MAX_NUMS];
	size_t n = rcell_trace_per_msg(c, pm, ARRAY_SIZE(pm));
	struct rtrace_summary sum;

	rcell_trace_summary(c, &sum);
	fputs("<p class=\"pm\">per message:", h->f);
	for (size_t k = 0; k < n; k++) {
		fputs(" ", h->f);
		html_esc(h->f, pm[k].key);
		if (!isnan(pm[k].v))
			fprintf(h->f, " %.3g;", pm[k].v);
		else
			fputs(" -;", h->f);
	}
	if (!isnan(sum.perturbation))
		html_escf(h->f, " traced/untraced %.2fx (%s)", sum.perturbation,
			  sum.perturbation_of ? sum.perturbation_of : "?");
	if (sum.incomplete)
		fprintf(h->f, " <span class=\"badge inc\">INCOMPLETE: %.0f events lost</span>",
			sum.lost_events);
	fputs("</p>\n", h->f);
}

/* A side's objects the table has no column for, as "key: {...}; ..." */
static void side_more(struct html *h, const struct rcell *c, size_t side)
{
	struct rtrace_extra x[RTRACE_MAX_EXTRAS];
	size_t n = rcell_trace_side_more(c, side, x, ARRAY_SIZE(x)), off = 0;
	char more[512] = "";

	for (size_t k = 0; k < n && off < sizeof(more); k++) {
		char t2[256];

		html_json_text(x[k].v, t2, sizeof(t2));
		off += (size_t)snprintf(more + off, sizeof(more) - off, "%s%s: %s", off ? "; " : "",
					x[k].key, t2);
	}
	html_esc(h->f, more);
}

static void side_table(struct html *h, const struct rcell *c)
{
	size_t nsides = rcell_trace_sides(c);
	struct rtrace_side s;

	fputs("<div class=\"tw\"><table class=\"kv\"><thead><tr><th>side</th><th>wakeups</th>"
	      "<th>woken p50</th><th>woken p99</th><th>migrations</th><th>ctx switches (vol/invol)</th>"
	      "<th>top syscalls</th><th>more</th></tr></thead><tbody>\n", h->f);
	for (size_t i = 0; i < nsides && rcell_trace_side(c, i, &s); i++) {
		struct rtrace_syscall top[RTRACE_MAX_SYSCALLS];
		size_t ntop = rcell_trace_syscalls(c, i, top, ARRAY_SIZE(top));
		char name[32], a[32], b[32];

		side_name(s.role, s.id, name, sizeof(name));
		fmt_ns(a, sizeof(a), s.wakeup_p50_ns);
		fmt_ns(b, sizeof(b), s.wakeup_p99_ns);
		fputs("<tr>", h->f);
		html_elem(h->f, "td", NULL, name);
		fprintf(h->f, "<td class=\"num\">%.0f</td><td class=\"num\">%s</td><td class=\"num\">%s</td>"
			"<td class=\"num\">%.0f</td><td class=\"num\">%.0f/%.0f</td><td>", s.wakeups,
			isnan(s.wakeup_p50_ns) ? "-" : a, isnan(s.wakeup_p99_ns) ? "-" : b, s.migrations,
			s.vol_ctx_switches, s.invol_ctx_switches);
		for (size_t k = 0; k < ntop; k++)
			html_escf(h->f, "%s%s %.0f", k ? ", " : "", top[k].name ? top[k].name : "?",
				  top[k].count);
		fputs("</td><td>", h->f);
		side_more(h, c, i);
		fputs("</td></tr>\n", h->f);
	}
	fputs("</tbody></table></div>\n", h->f);
}

static void trace_cell(struct html *h, const struct html_view *v, const struct rcell *c)
{
	struct rtrace_extra x[RTRACE_MAX_EXTRAS];
	size_t n = rcell_trace_more(c, x, ARRAY_SIZE(x));
	char lab[HTML_LABEL];

	html_label(v, c, NULL, lab, sizeof(lab));
	fputs("<details class=\"cell\"><summary>", h->f);
	html_esc(h->f, lab);
	fputs("</summary>\n", h->f);
	per_msg(h, c);
	html_cause_text(h, c);
	side_table(h, c);
	html_preempted_by(h, c);
	html_explain(h, c);
	for (size_t k = 0; k < n; k++)
		json_table(h, x[k].key, x[k].v);
	fputs("</details>\n", h->f);
}

void html_traces(struct html *h, const struct html_view *v)
{
	size_t n = 0;

	for (size_t i = 0; i < v->n; i++)
		n += rcell_has_trace(v->cells[i]);
	if (!n)
		return;
	fprintf(h->f, "<section class=\"trace\" id=\"%s-trace\"><h3>Trace</h3>\n", v->idp);
	budgets(h, v);
	html_cause_split(h, v);
	critical_paths(h, v);
	for (size_t i = 0; i < v->n; i++)
		if (rcell_has_trace(v->cells[i]))
			trace_cell(h, v, v->cells[i]);
	fputs("</section>\n", h->f);
}

/* ---- profiles ------------------------------------------------------------------ */

static void top_table(struct html *h, const struct rcell *c, size_t side)
{
	struct rprof_top top[RPROF_MAX_TOP];
	size_t n = rcell_profile_top(c, side, top, ARRAY_SIZE(top));
	struct rprof_side s;
	char name[32];

	if (!rcell_profile_side(c, side, &s))
		return;
	side_name(s.role, s.id, name, sizeof(name));
	fputs("<div class=\"tw\"><table class=\"top sortable\"><caption>", h->f);
	html_escf(h->f, "%s: %.0f samples, %.0f in the kernel", name, s.samples, s.kernel_samples);
	fputs("</caption><thead><tr><th data-k=\"n\">samples</th><th data-k=\"n\">%</th>"
	      "<th>symbol</th><th>object</th></tr></thead><tbody>\n", h->f);
	for (size_t i = 0; i < n && i < MAX_ROWS; i++) {
		/* plain numbers: the script sorts them by their text */
		fprintf(h->f, "<tr><td class=\"num\">%.0f</td><td class=\"num\">%.2f</td>",
			top[i].samples, top[i].pct);
		html_elem(h->f, "td", "sym", top[i].symbol ? top[i].symbol : "?");
		html_elem(h->f, "td", NULL, top[i].object ? top[i].object : "?");
		fputs("</tr>\n", h->f);
	}
	fputs("</tbody></table></div>\n", h->f);
}

static void profile_cell(struct html *h, const struct html_view *v, const struct rcell *c)
{
	size_t nsides = rcell_profile_sides(c);
	char lab[HTML_LABEL];
	struct rprof_run run;

	rcell_profile_run(c, &run);
	html_label(v, c, NULL, lab, sizeof(lab));
	fputs("<details class=\"cell\" open><summary>", h->f);
	html_esc(h->f, lab);
	fputs("</summary>\n<p class=\"pm\">", h->f);
	html_escf(h->f, "%.0f Hz", run.hz);
	if (!isnan(run.perturbation))
		html_escf(h->f, ", profiled/unprofiled %.2fx", run.perturbation);
	if (run.incomplete)
		fprintf(h->f, " <span class=\"badge inc\">INCOMPLETE: %.0f samples lost</span>",
			run.lost_samples);
	if (run.kernel_symbols_why) {
		fputs("; kernel frames unnamed: ", h->f);
		html_esc(h->f, run.kernel_symbols_why);
	}
	fputs("</p>\n<div class=\"sides\">", h->f);
	for (size_t i = 0; i < nsides; i++)
		top_table(h, c, i);
	fputs("</div>\n", h->f);
	for (size_t i = 0; i < nsides; i++)
		html_flame(h, v, c, (unsigned)i);
	fputs("</details>\n", h->f);
}

void html_profiles(struct html *h, const struct html_view *v)
{
	size_t n = 0;

	for (size_t i = 0; i < v->n; i++)
		n += rcell_has_profile(v->cells[i]);
	if (!n)
		return;
	fprintf(h->f, "<section class=\"profile\" id=\"%s-profile\"><h3>Profile</h3>\n", v->idp);
	for (size_t i = 0; i < v->n; i++)
		if (rcell_has_profile(v->cells[i]))
			profile_cell(h, v, v->cells[i]);
	fputs("</section>\n", h->f);
}
