// SPDX-License-Identifier: MIT
/* -p cycle and --pin matrix in the HTML report: a cycle cell's completion
 * time over the run (the worst of each point of cycle_series) with its
 * deadline drawn and every point that holds an xrun marked (late starts,
 * which never ran, at the deadline; its cause where the file records
 * one), its stages' median wait and busy as a share of the period, what
 * caused its xruns and the stages that made them; and
 * the CPU x CPU heatmap of a matrix file, a square per ordered pair with
 * its value and the pair's class on hover. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/util.h"
#include "matrix.h"
#include "html_svg.h"
#include "cycle_out.h"

#define MX_MAX 64
#define MX_GROUPS 32
#define MAX_STAGE_ROWS 128
#define MAX_POINTS 4096		/* a run's points drawn (ipclab writes at most 1024) */

static bool is_cycle(const struct rcell *c)
{
	return c->ok && json_is_object(json_object_get(c->obj, "cycle_series"));
}

/* The worst completion of each point, and a mark where it holds xruns:
 * late starts never ran, so a point whose xruns are only those (its worst
 * completion in time, or none) has its mark on the deadline. */
static void fill_points(const json_t *s, double secs_per_point, double deadline,
			struct svg_series *ser, const char **tips, size_t n)
{
	const json_t *mx = json_object_get(s, "max_ns"), *xr = json_object_get(s, "xruns");
	const json_t *causes = json_object_get(s, "xrun_causes");

	for (size_t i = 0; i < n; i++) {
		const json_t *m = json_array_get(mx, i);
		json_int_t x = json_integer_value(json_array_get(xr, i));

		ser[0].x[i] = ser[1].x[i] = (double)i * secs_per_point;
		ser[0].y[i] = json_is_number(m) ? json_number_value(m) : NAN;
		ser[1].y[i] = x <= 0 ? NAN : json_is_number(m) && ser[0].y[i] > deadline ? ser[0].y[i] :
										       deadline;
		tips[i] = json_string_value(json_array_get(causes, i));
	}
}

static int completion(struct html *h, const struct html_view *v, const struct rcell *c)
{
	const json_t *s = json_object_get(c->obj, "cycle_series");
	const json_t *mx = json_object_get(s, "max_ns"), *xr = json_object_get(s, "xruns");
	double per = (double)json_integer_value(json_object_get(s, "cycles_per_point"));
	double deadline = rcell_metric(c, "deadline_ns"), period = deadline;
	const json_t *pn = json_object_get(c->obj, "period_ns");
	size_t n = json_array_size(mx) < MAX_POINTS ? json_array_size(mx) : MAX_POINTS;
	struct svg_series ser[2] = { 0 };
	const char **tips = calloc(n + 1, sizeof(*tips));
	char lab[HTML_LABEL], title[HTML_LABEL + 64];
	int ret = -ENOMEM;

	if (json_is_number(pn))
		period = json_number_value(pn);
	if (json_array_size(mx) != json_array_size(xr) || !(per > 0) || !(period > 0)) {
		free(tips);
		return 0;
	}
	for (int k = 0; k < 2; k++) {
		ser[k].x = calloc(n + 1, sizeof(double));
		ser[k].y = calloc(n + 1, sizeof(double));
		ser[k].n = n;
	}
	if (!tips || !ser[0].x || !ser[0].y || !ser[1].x || !ser[1].y)
		goto out;
	html_label(v, c, NULL, lab, sizeof(lab));
	snprintf(ser[0].label, sizeof(ser[0].label), "%.160s: worst completion", lab);
	snprintf(ser[1].label, sizeof(ser[1].label), "%.160s: xrun", lab);
	ser[1].marks = true;
	ser[1].tips = tips;
	fill_points(s, per * period / 1e9, deadline, ser, tips, n);
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
		const json_t *st = json_object_get(json_object_get(v->cells[i]->obj, "metrics"), "stages"), *s;
		char cl[HTML_LABEL];
		size_t k;

		if (!is_cycle(v->cells[i]))
			continue;
		html_label(v, v->cells[i], NULL, cl, sizeof(cl));
		json_array_foreach((json_t *)st, k, s) {
			if (n == MAX_STAGE_ROWS)
				break;
			snprintf(lab[n], HTML_LABEL, "%.150s: stage %zu", cl, k + 1);
			rows[n] = lab[n];
			val[n * 2] = json_number_value(json_object_get(s, "wait_share_pct"));
			val[n * 2 + 1] = json_number_value(json_object_get(s, "busy_share_pct"));
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

static const char *const cause_keys[] = { "late_start", "behind_schedule", "timer_late", "stage_wait",
					  "stage_busy", "driver_wait", "preempted", "unknown" };
#define NCAUSES ARRAY_SIZE(cause_keys)

/* The stages that made a cell's xruns, and by what (its metrics.stages). */
static void stage_blame(struct html *h, const char *cell, const json_t *m)
{
	const json_t *st = json_object_get(m, "stages"), *s;
	bool traced = !json_is_null(json_object_get(json_object_get(m, "xrun_causes"), "preempted"));
	size_t k;

	fputs("<div class=\"tw\"><table class=\"kv blame\"><caption>", h->f);
	html_escf(h->f, "%.150s: the xruns each stage made", cell);
	fputs("</caption><thead><tr><th>stage</th><th>xruns made</th><th>its wait</th><th>its work</th>"
	      "<th>preempted</th></tr></thead><tbody>\n", h->f);
	json_array_foreach((json_t *)st, k, s) {
		const json_t *c = json_object_get(s, "xrun_causes");

		if (k == MAX_STAGE_ROWS)
			break;
		fprintf(h->f, "<tr><td>stage %zu</td><td class=\"num\">%.0f</td><td class=\"num\">%.0f</td>"
			"<td class=\"num\">%.0f</td><td class=\"num\">", k + 1,
			json_number_value(json_object_get(s, "xruns_caused")),
			json_number_value(json_object_get(c, "stage_wait")),
			json_number_value(json_object_get(c, "stage_busy")));
		if (traced)
			fprintf(h->f, "%.0f", json_number_value(json_object_get(c, "preempted")));
		else
			fputs("not known without --trace", h->f);
		fputs("</td></tr>\n", h->f);
	}
	fputs("</tbody></table></div>\n", h->f);
}

/* Every xrun's cause: a bar per cycle cell whose segments add up to its
 * xruns, and the stages that made them. */
static void xrun_causes(struct html *h, const struct html_view *v)
{
	char (*lab)[HTML_LABEL] = calloc(MAX_STAGE_ROWS, HTML_LABEL);
	double *val = calloc(MAX_STAGE_ROWS * NCAUSES, sizeof(double));
	const char *rows[MAX_STAGE_ROWS];
	size_t n = 0;

	for (size_t i = 0; lab && val && i < v->n && n < MAX_STAGE_ROWS; i++) {
		const json_t *m = json_object_get(v->cells[i]->obj, "metrics");
		const json_t *xc = json_object_get(m, "xrun_causes");
		char cl[HTML_LABEL];

		if (!is_cycle(v->cells[i]) || !json_is_object(xc) ||
		    !(json_number_value(json_object_get(m, "xruns")) > 0))
			continue;
		html_label(v, v->cells[i], NULL, cl, sizeof(cl));
		snprintf(lab[n], HTML_LABEL, "%.150s: %.0f xruns", cl,
			 json_number_value(json_object_get(m, "xruns")));
		rows[n] = lab[n];
		for (size_t k = 0; k < NCAUSES; k++)
			val[n * NCAUSES + k] = json_number_value(json_object_get(xc, cause_keys[k]));
		n++;
	}
	struct svg_stack c = {
		.title = "what caused each xrun", .parts = cause_keys, .nparts = NCAUSES,
		.rows = rows, .nrows = n, .v = val, .percent = true, .fd = field_find("xruns"),
		.unit_label = "% of the cell's xruns",
		.caption = "one cause an xrun: the largest part of its cycle (its start: the timer, or behind schedule after a long cycle; a stage's wait or work; the hop back), a late start (never run), or with --trace preempted by other tasks (without --trace that is not known)",
	};

	if (n)
		svg_stack(h, &c);
	for (size_t i = 0; lab && i < v->n; i++) {
		const json_t *m = json_object_get(v->cells[i]->obj, "metrics");
		char cl[HTML_LABEL];

		if (!is_cycle(v->cells[i]) || !json_is_object(json_object_get(m, "xrun_causes")) ||
		    !(json_number_value(json_object_get(m, "xruns")) > 0))
			continue;
		html_label(v, v->cells[i], NULL, cl, sizeof(cl));
		stage_blame(h, cl, m);
	}
	free(lab);
	free(val);
}

void html_cycles(struct html *h, const struct html_view *v)
{
	size_t n = 0;

	for (size_t i = 0; i < v->n; i++)
		n += is_cycle(v->cells[i]);
	if (!n)
		return;
	fprintf(h->f, "<section class=\"cycle\" id=\"%s-cycle\"><h3>Cycles</h3>\n", v->idp);
	for (size_t i = 0; i < v->n; i++)
		if (is_cycle(v->cells[i]) && completion(h, v, v->cells[i]))
			break;
	stages(h, v);
	xrun_causes(h, v);
	fputs("</section>\n", h->f);
}

/* ---- --pin matrix --------------------------------------------------------------- */


struct mx {
	const struct rfile *rf;
	const char *metric;
	long cpus[MX_MAX];
	char names[MX_MAX][16];
	const char *np[MX_MAX];
	size_t n;
	const json_t *pairs;
	const char *lnames[64];
	size_t nl;
};

static void matrix_one(struct html *h, const struct mx *m, const char *group)
{
	double *v = malloc(sizeof(double) * MX_MAX * MX_MAX);
	const char **marks = calloc(MX_MAX * MX_MAX, sizeof(*marks));
	char title[640];

	for (size_t i = 0; v && marks && i < m->n * m->n; i++)
		v[i] = NAN;
	for (size_t k = 0; v && marks && k < m->rf->n; k++) {
		const struct rcell *c = &m->rf->cells[k];
		char s[32], cl[32], lab[512], pin[72];
		int i, j;

		if (!c->ok || rcell_param(c, "server_cpu", s, sizeof(s)) ||
		    rcell_param(c, "client_cpu", cl, sizeof(cl)))
			continue;
		rcell_label(c, m->lnames, m->nl, "pin", lab, sizeof(lab));
		i = matrix_cpu_at(m->cpus, m->n, s);
		j = matrix_cpu_at(m->cpus, m->n, cl);
		if (i < 0 || j < 0 || strcmp(lab, group))
			continue;
		v[(size_t)i * m->n + (size_t)j] = rcell_metric(c, m->metric);
		snprintf(pin, sizeof(pin), "%s:%s", s, cl);
		marks[(size_t)i * m->n + (size_t)j] =
			matrix_class_mark(json_string_value(json_object_get(m->pairs, pin)));
	}
	snprintf(title, sizeof(title), "%.60s, server CPU x client CPU%s%.500s", m->metric,
		 group[0] ? ": " : "", group);
	struct svg_heat c = {
		.title = title, .xlabel = "client CPU", .ylabel = "server CPU", .rows = m->np,
		.cols = m->np, .nr = m->n, .nc = m->n, .v = v, .marks = marks,
		.fd = field_find(m->metric),
		.caption = "in topology order; marks: = same CPU, s SMT sibling, l same LLC, o other LLC, n other node",
	};

	if (v && marks)
		svg_heat(h, &c);
	free(v);
	free(marks);
}

void html_matrix(struct html *h, const struct rfile *rf)
{
	const json_t *mj = json_object_get(rf->root, "matrix"), *x;
	const struct rfile *files[1] = { rf };
	char groups[MX_GROUPS][512];
	struct mx *m = calloc(1, sizeof(*m));
	size_t ng = 0, i;

	if (!m || !json_is_object(mj) ||
	    !(m->metric = json_string_value(json_object_get(mj, "metric")))) {
		free(m);
		return;
	}
	m->rf = rf;
	m->pairs = json_object_get(mj, "pairs");
	json_array_foreach(json_object_get(mj, "cpus"), i, x)
		if (json_is_integer(x) && m->n < MX_MAX) {
			m->cpus[m->n] = (long)json_integer_value(x);
			snprintf(m->names[m->n], sizeof(m->names[0]), "%ld", m->cpus[m->n]);
			m->np[m->n] = m->names[m->n];
			m->n++;
		}
	m->nl = rf_varying(files, 1, false, m->lnames, ARRAY_SIZE(m->lnames));
	for (size_t k = 0; k < rf->n; k++) {
		char lab[512];
		size_t g = 0;

		if (!rf->cells[k].ok)
			continue;
		rcell_label(&rf->cells[k], m->lnames, m->nl, "pin", lab, sizeof(lab));
		while (g < ng && strcmp(groups[g], lab))
			g++;
		if (g == ng && ng < MX_GROUPS)
			snprintf(groups[ng++], sizeof(groups[0]), "%s", lab);
	}
	if (m->n)
		fputs("<section class=\"matrix\"><h3>CPU x CPU matrix</h3>\n", h->f);
	for (size_t g = 0; m->n && g < ng; g++)
		matrix_one(h, m, groups[g]);
	if (m->n)
		fputs("</section>\n", h->f);
	free(m);
}
