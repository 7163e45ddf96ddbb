// SPDX-License-Identifier: MIT
/* `ipclab history`'s figure and page. The figure is the figure model's
 * (src/report/figure_history.c): a figure per metric, x the runs (or the
 * --by label's order, or the machines), y the metric in the field table's
 * unit, a series per cell, each change point a rule, the points of
 * another state of the machine marked; fig_svg.c draws it as an SVG
 * document, every text that came from the store through the report's
 * escaper (html_esc), so that it stays well-formed XML whatever the store
 * holds. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "history.h"
#include "../report/figure.h"
#include "../report/html.h"

#define TIP 96

/* The model's view of the series: points, their ticks' keys and tips. */
struct hview {
	struct fig_hseries *s;
	struct fig_hpoint *pts;
	char (*tips)[TIP];
	const char **metrics;		/* distinct, in the order of their first series */
	size_t nm;
};

static void view_free(struct hview *v)
{
	free(v->s);
	free(v->pts);
	free(v->tips);
	free(v->metrics);
}

static int view_of(const struct history *h, struct hview *v)
{
	size_t np = 0, k = 0;

	for (size_t i = 0; i < h->n; i++)
		np += h->s[i].n;
	v->s = calloc(h->n + 1, sizeof(*v->s));
	v->pts = calloc(np + 1, sizeof(*v->pts));
	v->tips = calloc(np + 1, sizeof(*v->tips));
	v->metrics = calloc(h->n + 1, sizeof(*v->metrics));
	v->nm = 0;
	if (!v->s || !v->pts || !v->tips || !v->metrics)
		return -ENOMEM;
	for (size_t i = 0; i < h->n; i++) {
		const struct hseries *hs = &h->s[i];
		size_t m = 0;

		while (m < v->nm && strcmp(v->metrics[m], hs->metric))
			m++;
		if (m == v->nm)
			v->metrics[v->nm++] = hs->metric;
		v->s[i] = (struct fig_hseries){ .label = hs->label, .metric = hs->metric,
						.pts = &v->pts[k], .n = hs->n, .cp = hs->cp,
						.ncp = (size_t)hs->ncp };
		for (size_t j = 0; j < hs->n; j++, k++) {
			const struct hpoint *p = &hs->pts[j];

			if (h->hosts)
				snprintf(v->tips[k], TIP, "%u run%s, the last %lld at %s", p->runs,
					 p->runs == 1 ? "" : "s", (long long)p->run, p->at);
			else
				snprintf(v->tips[k], TIP, "run %lld at %s", (long long)p->run, p->at);
			v->pts[k] = (struct fig_hpoint){ .by = h->by ? rec_label(p->labels, h->by) : NULL,
							 .at = p->at, .run = p->run, .value = p->value,
							 .lo = p->lo, .hi = p->hi, .tip = v->tips[k],
							 .state = p->state_why };
		}
	}
	return 0;
}

int history_svg(FILE *f, const struct history *h, bool in_html)
{
	struct hview v = { 0 };
	struct figure *figs = NULL;
	int ret = view_of(h, &v);
	struct fig_hin in = { .s = v.s, .n = h->n, .by = h->by,
			      .x = h->hosts ? FIG_HX_MACHINE : h->by ? FIG_HX_LABEL : FIG_HX_RUNS };

	if (!ret && !(figs = calloc(v.nm + 1, sizeof(*figs))))
		ret = -ENOMEM;
	for (size_t m = 0; !ret && m < v.nm; m++)
		ret = figure_history(&figs[m], &in, v.metrics[m]);
	if (!ret)
		ret = fig_svg_doc(f, figs, v.nm, !in_html);
	for (size_t m = 0; figs && m < v.nm; m++)
		figure_free(&figs[m]);
	free(figs);
	view_free(&v);
	if (ret)
		errno = -ret;
	return ret || ferror(f) ? -1 : 0;
}

static void html_changes(FILE *f, const struct hseries *s)
{
	char a[32], b[32];

	if (!s->ncp) {
		fputs("<p>No change point.</p>\n", f);
		return;
	}
	fputs("<table><tr><th>first run after</th><th>at</th><th>before</th><th>after</th><th>ratio</th><th>p</th></tr>\n", f);
	for (int k = 0; k < s->ncp; k++) {
		const struct cp_change *c = &s->cp[k];

		fprintf(f, "<tr><td>%lld</td><td>", (long long)s->pts[c->index].run);
		html_esc(f, s->pts[c->index].at);
		fputs("</td><td>", f);
		html_esc(f, history_fmt(a, sizeof(a), s->metric, c->before));
		fputs("</td><td>", f);
		html_esc(f, history_fmt(b, sizeof(b), s->metric, c->after));
		fprintf(f, "</td><td>%.3f</td><td>%.3f</td></tr>\n", c->ratio, c->p_value);
	}
	fputs("</table>\n", f);
}

/* One self-contained page: the figure, then each series' change points,
 * and the table the text output gives. */
int history_html(FILE *f, const struct history *h)
{
	char *text = NULL;
	size_t len = 0;
	FILE *t = open_memstream(&text, &len);

	if (!t || history_table(t, h) || fclose(t))
		return -1;
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>ipclab history</title>\n"
	      "<style>body{font:14px sans-serif;margin:2em;color:#222}table{border-collapse:collapse}"
	      "td,th{border:1px solid #ccc;padding:2px 8px}pre{background:#f6f6f6;padding:1em}</style>\n"
	      "</head><body>\n<h1>ipclab history: ", f);
	html_esc(f, h->metric ? h->metric : "each cell's headline metric");
	fputs("</h1>\n", f);
	if (!h->against) {
		history_svg(f, h, true);
		for (size_t i = 0; i < h->n; i++) {
			fputs("<h2>", f);
			html_esc(f, h->s[i].label);
			fputs("</h2>\n", f);
			html_changes(f, &h->s[i]);
		}
	}
	fputs("<h2>Table</h2>\n<pre>", f);
	html_esc(f, text);
	fputs("</pre>\n<p>Change points: E-Divisive means (Matteson &amp; James 2014) with a permutation test; see docs/history.md.</p>\n</body></html>\n", f);
	free(text);
	return ferror(f) ? -1 : 0;
}
