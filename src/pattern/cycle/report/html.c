// SPDX-License-Identifier: MIT
/* -p cycle in the HTML report: a cycle cell's completion
 * time over the run (the worst of each point of cycle_series) with its
 * deadline drawn and every point that holds an xrun marked (late starts,
 * which never ran, at the deadline; its cause where the file records
 * one), its stages' median wait and busy as a share of the period, what
 * caused its xruns and the stages that made them. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/util.h"
#include "../../../report/html_svg.h"
#include "out.h"
#include "rec.h"
#define MAX_STAGE_ROWS 128

/* The worst completion of each point, and a mark where it holds xruns:
 * late starts never ran, so a point whose xruns are only those (its worst
 * completion in time, or none) has its mark on the deadline. */
static void fill_points(const struct rcycle_point *p, double secs_per_point, double deadline,
			struct svg_series *ser, const char **tips, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		ser[0].x[i] = ser[1].x[i] = (double)i * secs_per_point;
		ser[0].y[i] = p[i].max_ns;
		ser[1].y[i] = !p[i].xruns ? NAN : ser[0].y[i] > deadline ? ser[0].y[i] : deadline;
		tips[i] = p[i].cause;
	}
}

static int completion(struct html *h, const struct html_view *v, const struct rcell *c)
{
	double deadline = rcell_cycle_deadline_ns(c), period = rcell_cycle_period_ns(c);
	struct svg_series ser[2] = { 0 };
	struct rcycle_series s;
	struct rcycle_point *pts;
	const char **tips;
	char lab[HTML_LABEL], title[HTML_LABEL + 64];
	size_t n;
	int ret = -ENOMEM;

	if (!rcell_cycle_series(c, &s) || !(period > 0))
		return 0;
	n = s.n;
	pts = calloc(n + 1, sizeof(*pts));
	tips = calloc(n + 1, sizeof(*tips));
	for (int k = 0; k < 2; k++) {
		ser[k].x = calloc(n + 1, sizeof(double));
		ser[k].y = calloc(n + 1, sizeof(double));
		ser[k].n = n;
	}
	if (!pts || !tips || !ser[0].x || !ser[0].y || !ser[1].x || !ser[1].y)
		goto out;
	html_label(v, c, NULL, lab, sizeof(lab));
	snprintf(ser[0].label, sizeof(ser[0].label), "%.160s: worst completion", lab);
	snprintf(ser[1].label, sizeof(ser[1].label), "%.160s: xrun", lab);
	ser[1].marks = true;
	ser[1].tips = tips;
	rcell_cycle_points(c, pts, n);
	fill_points(pts, (double)s.per * period / 1e9, deadline, ser, tips, n);
	snprintf(title, sizeof(title), "completion time over the run: %s", lab);
	struct svg_xy fig = {
		.title = title, .s = ser, .ns = 2, .hline = deadline, .hline_label = "deadline",
		.caption = "the worst completion of each point (intended start to the graph's end); x = a point with an xrun, on the deadline when its xruns were late starts (cycles never run)",
		.x = { .from_zero = true, .label = "time in the window (s)" },
		.y = { .log = 10, .fd = field_find("cycle_max_ns"), .label = "completion" },
	};

	ret = svg_xy(h, &fig);
out:
	for (int k = 0; k < 2; k++) {
		free(ser[k].x);
		free(ser[k].y);
	}
	free(pts);
	free(tips);
	return ret;
}

static void stages(struct html *h, const struct html_view *v)
{
	static const char *const parts[] = { "wait p50", "busy p50" };
	char (*lab)[HTML_LABEL] = calloc(MAX_STAGE_ROWS, HTML_LABEL);
	const char *rows[MAX_STAGE_ROWS];
	double *val = calloc(MAX_STAGE_ROWS * 2, sizeof(double));
	size_t n = 0;

	for (size_t i = 0; lab && val && i < v->n; i++) {
		struct rcycle_stage st[RCYCLE_MAX_STAGES];
		char cl[HTML_LABEL];
		size_t ns;

		if (!rcell_is_cycle(v->cells[i]))
			continue;
		html_label(v, v->cells[i], NULL, cl, sizeof(cl));
		ns = rcell_cycle_stages(v->cells[i], st, ARRAY_SIZE(st));
		for (size_t k = 0; k < ns && n < MAX_STAGE_ROWS; k++) {
			snprintf(lab[n], HTML_LABEL, "%.150s: stage %zu", cl, k + 1);
			rows[n] = lab[n];
			val[n * 2] = st[k].wait_share_pct;
			val[n * 2 + 1] = st[k].busy_share_pct;
			n++;
		}
	}
	struct svg_stack c = {
		.title = "each stage's median wait and busy, % of the period", .parts = parts,
		.nparts = 2, .rows = rows, .nrows = n, .v = val, .unit_label = "% of the period",
		.caption = "wait: woken to running (what pw-top shows as W/Q); busy: processing (B/Q)",
	};

	if (n)
		svg_stack(h, &c);
	free(lab);
	free(val);
}

/* The stages that made a cell's xruns, and by what (its metrics.stages). */
static void stage_blame(struct html *h, const char *cell, const struct rcell *c,
			const struct rcycle_causes *xc)
{
	struct rcycle_stage st[RCYCLE_MAX_STAGES];
	size_t ns = rcell_cycle_stages(c, st, MAX_STAGE_ROWS);

	fputs("<div class=\"tw\"><table class=\"kv blame\"><caption>", h->f);
	html_escf(h->f, "%.150s: the xruns each stage made", cell);
	fputs("</caption><thead><tr><th>stage</th><th>xruns made</th><th>its wait</th><th>its work</th>"
	      "<th>preempted</th></tr></thead><tbody>\n", h->f);
	for (size_t k = 0; k < ns; k++) {
		fprintf(h->f, "<tr><td>stage %zu</td><td class=\"num\">%.0f</td><td class=\"num\">%.0f</td>"
			"<td class=\"num\">%.0f</td><td class=\"num\">", k + 1, st[k].xruns_caused,
			st[k].by_wait, st[k].by_busy);
		if (xc->preempted_known)
			fprintf(h->f, "%.0f", st[k].by_preempted);
		else
			fputs("not known without --trace", h->f);
		fputs("</td></tr>\n", h->f);
	}
	fputs("</tbody></table></div>\n", h->f);
}

/* A cycle cell with xruns and their causes. */
static bool has_causes(const struct rcell *c, struct rcycle_causes *xc)
{
	return rcell_is_cycle(c) && rcell_xrun_causes(c, xc) && rcell_cycle_xruns(c) > 0;
}

/* Every xrun's cause: a bar per cycle cell whose segments add up to its
 * xruns, and the stages that made them. */
static void xrun_causes(struct html *h, const struct html_view *v)
{
	char (*lab)[HTML_LABEL] = calloc(MAX_STAGE_ROWS, HTML_LABEL);
	double *val = calloc(MAX_STAGE_ROWS * XC_N, sizeof(double));
	const char *rows[MAX_STAGE_ROWS], *parts[XC_N];
	struct rcycle_causes xc;
	size_t n = 0;

	for (unsigned k = 0; k < XC_N; k++)
		parts[k] = cycle_cause_name(k);
	for (size_t i = 0; lab && val && i < v->n && n < MAX_STAGE_ROWS; i++) {
		char cl[HTML_LABEL];

		if (!has_causes(v->cells[i], &xc))
			continue;
		html_label(v, v->cells[i], NULL, cl, sizeof(cl));
		snprintf(lab[n], HTML_LABEL, "%.150s: %.0f xruns", cl, rcell_cycle_xruns(v->cells[i]));
		rows[n] = lab[n];
		for (size_t k = 0; k < XC_N; k++)
			val[n * XC_N + k] = xc.by[k];
		n++;
	}
	struct svg_stack c = {
		.title = "what caused each xrun", .parts = parts, .nparts = XC_N,
		.rows = rows, .nrows = n, .v = val, .percent = true, .fd = field_find("xruns"),
		.unit_label = "% of the cell's xruns",
		.caption = "one cause an xrun: the largest part of its cycle (its start: the timer, or behind schedule after a long cycle; a stage's wait or work; the hop back), a late start (never run), or with --trace preempted by other tasks (without --trace that is not known)",
	};

	if (n)
		svg_stack(h, &c);
	for (size_t i = 0; lab && i < v->n; i++) {
		char cl[HTML_LABEL];

		if (!has_causes(v->cells[i], &xc))
			continue;
		html_label(v, v->cells[i], NULL, cl, sizeof(cl));
		stage_blame(h, cl, v->cells[i], &xc);
	}
	free(lab);
	free(val);
}

void html_cycles(struct html *h, const struct html_view *v)
{
	size_t n = 0;

	for (size_t i = 0; i < v->n; i++)
		n += rcell_is_cycle(v->cells[i]);
	if (!n)
		return;
	fprintf(h->f, "<section class=\"cycle\" id=\"%s-cycle\"><h3>Cycles</h3>\n", v->idp);
	for (size_t i = 0; i < v->n; i++)
		if (rcell_is_cycle(v->cells[i]) && completion(h, v, v->cells[i]))
			break;
	stages(h, v);
	xrun_causes(h, v);
	fputs("</section>\n", h->f);
}
