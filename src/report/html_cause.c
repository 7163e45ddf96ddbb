// SPDX-License-Identifier: MIT
/* --trace's reading of a cell in the HTML report (html.h): the cause
 * split of each traced cell's figure as stacked bars whose segments add
 * up to 100 %, with its sentence; who took each side's CPU while it
 * waited (trace.sides[].preempted_by) as a table with each taker's share
 * of the side's window; and --explain's test of the largest cause, its
 * figure before and after the knob and the verdict. Names in a result
 * file (a task's comm, a share's name, a note) are hostile: each is
 * written through html_esc, and a share whose name is not one of the
 * cause split's is drawn as "other". */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/util.h"
#include "html_svg.h"
#include "rec_trace.h"

#define MAX_ROWS 128

/* the cause split's shares (src/trace/cause.c), and one for any other */
static const char *const share_names[] = { "user work", "kernel work", "wakeup latency",
					   "wakeup from idle", "waiting for a CPU", "preempted",
					   "waiting for the peer", "timer lateness", "unattributed",
					   "polling", "the hypervisor (steal)", "other" };
#define NSHARES ARRAY_SIZE(share_names)

static size_t share_at(const char *name)
{
	for (size_t i = 0; name && i + 1 < NSHARES; i++)
		if (!strcmp(share_names[i], name))
			return i;
	return NSHARES - 1;
}

/* One row a traced cell: its shares' time, each segment its share of the
 * row (the shares add up to the figure: 100 %). */
void html_cause_split(struct html *h, const struct html_view *v)
{
	char (*lab)[HTML_LABEL] = calloc(MAX_ROWS, HTML_LABEL);
	double *val = calloc(MAX_ROWS * NSHARES, sizeof(double));
	const char *rows[MAX_ROWS];
	size_t n = 0;

	for (size_t i = 0; lab && val && i < v->n && n < MAX_ROWS; i++) {
		struct rtrace_cause cs;
		char cl[HTML_LABEL], tot[32];

		if (!rcell_trace_cause(v->cells[i], &cs))
			continue;
		html_label(v, v->cells[i], NULL, cl, sizeof(cl));
		fmt_ns(tot, sizeof(tot), cs.total_ns);
		snprintf(lab[n], HTML_LABEL, "%.100s: %.40s %s", cl, cs.whose ? cs.whose : "figure",
			 tot);
		rows[n] = lab[n];
		for (size_t k = 0; k < cs.nshares; k++) {
			double ns = cs.shares[k].ns;

			if (isfinite(ns) && ns > 0)
				val[n * NSHARES + share_at(cs.shares[k].name)] += ns;
		}
		n++;
	}
	struct svg_stack c = {
		.title = "cause split of each traced cell's figure", .parts = share_names,
		.nparts = NSHARES, .rows = rows, .nrows = n, .v = val, .percent = true,
		.fd = field_find("lat_mean_ns"), .unit_label = "% of the figure",
		.caption = "the cell's headline figure (round trip, time per message, cycle) split into named shares that add up to it (--trace's cause split); each segment's title has its time and share",
	};

	if (n)
		svg_stack(h, &c);
	free(lab);
	free(val);
}

/* The cell's sentence and its shares in words (each with its 95 %
 * interval where it has one), under its details. */
void html_cause_text(struct html *h, const struct rcell *c)
{
	struct rtrace_cause cs;

	if (!rcell_trace_cause(c, &cs))
		return;
	fputs("<p class=\"cause\"><b>cause:</b>", h->f);
	for (size_t k = 0; k < cs.nshares; k++) {
		const char *name = cs.shares[k].name;

		html_escf(h->f, "%s %s %.1f %%", k ? "," : "", name ? name : "?", cs.shares[k].pct);
		if (isfinite(cs.shares[k].ci_lo))
			fprintf(h->f, " (%.0f&ndash;%.0f %%)", cs.shares[k].ci_lo, cs.shares[k].ci_hi);
	}
	if (!cs.decided)
		fputs(" <span class=\"badge noisy\">no single leading cause</span>", h->f);
	if (cs.sentence) {
		fputs(". ", h->f);
		html_esc(h->f, cs.sentence);
	}
	fputs("</p>\n", h->f);
}

static void taker_row(struct html *h, const char *side, const struct rtrace_taker *t, double wall)
{
	char a[32];

	fmt_ns(a, sizeof(a), t->ns);
	fputs("<tr>", h->f);
	html_elem(h->f, "td", NULL, side);
	html_elem(h->f, "td", "comm", t->comm ? t->comm : "?");
	fprintf(h->f, "<td class=\"num\">%.0f</td><td class=\"num\">%.0f</td>", t->pid, t->tid);
	html_elem(h->f, "td", "num", a);
	fprintf(h->f, "<td class=\"num\">%.0f</td>", t->count);
	if (wall > 0 && isfinite(t->ns))
		fprintf(h->f, "<td class=\"num\">%.1f %%</td>", 100.0 * t->ns / wall);
	else
		fputs("<td class=\"num\">-</td>", h->f);
	fputs("</tr>\n", h->f);
}

/* Each side's takers: who, how long, how often, its share of the side's
 * window; then the side's total lost to others and its interrupts. */
void html_preempted_by(struct html *h, const struct rcell *c)
{
	size_t nsides = rcell_trace_sides(c), rows = 0;
	struct rtrace_side s;

	for (size_t i = 0; i < nsides; i++)
		if (rcell_trace_side(c, i, &s))
			rows += s.ntakers;
	if (!rows)
		return;
	fputs("<h5>preempted by: other tasks on the CPU each side waited for</h5>\n"
	      "<div class=\"tw\"><table class=\"kv takers\"><thead><tr><th>side</th><th>task (comm)</th>"
	      "<th>pid</th><th>tid</th><th>time</th><th>slices</th><th>% of the side's window</th>"
	      "</tr></thead><tbody>\n", h->f);
	rows = 0;
	for (size_t i = 0; i < nsides && rcell_trace_side(c, i, &s); i++) {
		struct rtrace_taker t[RTRACE_MAX_TAKERS];
		size_t nt = rcell_trace_takers(c, i, t, ARRAY_SIZE(t));
		double wall = s.wall_ns, all = s.preempted_by_ns;
		char side[32], a[32];

		if (s.role && !strcmp(s.role, "server"))
			snprintf(side, sizeof(side), "server");
		else
			snprintf(side, sizeof(side), "client %.0f", s.id);
		for (size_t k = 0; k < nt; k++)
			if (rows++ < MAX_ROWS)
				taker_row(h, side, &t[k], wall);
		if (!nt || !(wall > 0) || !isfinite(all))
			continue;
		fmt_ns(a, sizeof(a), all);
		fputs("<tr class=\"sum\">", h->f);
		html_elem(h->f, "td", NULL, side);
		fputs("<td colspan=\"3\">all other tasks</td>", h->f);
		html_elem(h->f, "td", "num", a);
		fprintf(h->f, "<td></td><td class=\"num\">%.1f %%</td></tr>\n", 100.0 * all / wall);
	}
	fputs("</tbody></table></div>\n", h->f);
}

static void explain_value(struct html *h, const char *of, double v)
{
	char t[32];

	if (!isfinite(v)) {
		fputs("-", h->f);
		return;
	}
	if (of && strstr(of, "_ns"))
		fmt_ns(t, sizeof(t), v);
	else
		snprintf(t, sizeof(t), "%.4g", v);
	html_esc(h->f, t);
}

/* --explain: the cause tested, the knob, the figure before and after it
 * (medians of the pairs), the ratio with its range, and the verdict. */
void html_explain(struct html *h, const struct rcell *c)
{
	struct rtrace_explain e;

	if (!rcell_trace_explain(c, &e))
		return;
	fputs("<h5>explain: the largest cause, tested by its knob</h5>\n<div class=\"tw\">"
	      "<table class=\"kv explain\"><tbody>\n<tr><th>cause</th>", h->f);
	html_elem(h->f, "td", NULL, e.cause ? e.cause : "none");
	fputs("</tr>\n<tr><th>knob</th>", h->f);
	html_elem(h->f, "td", NULL, e.knob ? e.knob : "none");
	fputs("</tr>\n<tr><th>share</th><td class=\"num\">", h->f);
	if (isfinite(e.share_pct))
		fprintf(h->f, "%.1f %%", e.share_pct);
	else
		fputs("-", h->f);
	fputs("</td></tr>\n", h->f);
	fputs("<tr><th>figure</th>", h->f);
	html_elem(h->f, "td", NULL, e.of ? e.of : "-");
	fputs("</tr>\n<tr><th>before</th><td class=\"num\">", h->f);
	explain_value(h, e.of, e.before);
	fputs("</td></tr>\n<tr><th>after</th><td class=\"num\">", h->f);
	explain_value(h, e.of, e.after);
	fputs("</td></tr>\n<tr><th>ratio (after / before)</th><td class=\"num\">", h->f);
	if (isfinite(e.ratio))
		html_escf(h->f, "%.2fx (%.2f-%.2f over %.0f pairs)", e.ratio, e.ratio_lo,
			  e.ratio_hi, e.pairs);
	else
		fputs("-", h->f);
	fputs("</td></tr>\n<tr><th>verdict</th><td>", h->f);
	if (e.verdict == RT_CONFIRMED)
		fputs("<span class=\"badge ok\">confirmed</span>", h->f);
	else if (e.verdict == RT_NOT_CONFIRMED)
		fputs("<span class=\"badge inc\">not confirmed</span>", h->f);
	else
		fputs("<span class=\"badge noisy\">not tested</span>", h->f);
	if (e.note) {
		fputs(" ", h->f);
		html_esc(h->f, e.note);
	}
	fputs("</td></tr>\n</tbody></table></div>\n", h->f);
}
