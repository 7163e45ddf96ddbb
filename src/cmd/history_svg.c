// SPDX-License-Identifier: MIT
/* `ipclab history`'s figure: one panel per series, each run a point with
 * its 95 % interval where it has one, the mean of each segment between
 * change points as a line, each change point a dashed rule with its ratio.
 * Plain SVG written here (no gnuplot: the figure is part of an HTML page
 * too); every text that came from the store -- labels, cells, times -- is
 * written through the report's escaper (html_esc), which keeps the SVG
 * well-formed XML whatever the store holds, and a label is cut at a
 * character, never inside one. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ipclab/safe_print.h"
#include "cmd.h"
#include "history.h"
#include "../report/html.h"

#define W 960
#define PANEL_H 300
#define ML 90	/* margins: left, right, top, bottom */
#define MR 20
#define MT 34
#define MB 46

struct scale {
	double lo, hi;
	size_t n;
	double y0;	/* the panel's top */
};

static double sx(const struct scale *sc, double i)
{
	return ML + (sc->n > 1 ? i / (double)(sc->n - 1) : 0.5) * (W - ML - MR);
}

static double sy(const struct scale *sc, double v)
{
	double h = PANEL_H - MT - MB;

	return sc->y0 + MT + h - (v - sc->lo) / (sc->hi - sc->lo) * h;
}

static void range(const struct hseries *s, struct scale *sc)
{
	sc->lo = INFINITY;
	sc->hi = -INFINITY;
	for (size_t i = 0; i < s->n; i++) {
		const struct hpoint *p = &s->pts[i];

		sc->lo = fmin(sc->lo, isfinite(p->lo) ? fmin(p->lo, p->value) : p->value);
		sc->hi = fmax(sc->hi, isfinite(p->hi) ? fmax(p->hi, p->value) : p->value);
	}
	if (!(sc->hi > sc->lo)) {
		sc->lo -= fabs(sc->lo) * 0.1 + 1;
		sc->hi += fabs(sc->hi) * 0.1 + 1;
	}
	double pad = (sc->hi - sc->lo) * 0.08;

	sc->lo = sc->lo - pad < 0 && sc->lo >= 0 ? 0 : sc->lo - pad;
	sc->hi += pad;
	sc->n = s->n;
}

/* At most max bytes of s into buf, cut at a character: a tick's label. */
static void cut(char *buf, size_t len, const char *s, size_t max)
{
	snprintf(buf, len, "%.*s", (int)utf8_cut(s, max), s);
}

static void axes(FILE *f, const struct hseries *s, const struct scale *sc, const char *by)
{
	bool one_day = s->n && !strncmp(s->pts[0].at, s->pts[s->n - 1].at, 10);
	char buf[32];

	fprintf(f, "<text x=\"%d\" y=\"%.0f\" class=\"title\">", ML, sc->y0 + 20);
	html_esc(f, s->label);
	fputs(" \xe2\x80\x94 ", f);
	html_esc(f, s->metric);
	fputs("</text>\n", f);
	for (int t = 0; t <= 4; t++) {
		double v = sc->lo + (sc->hi - sc->lo) * t / 4;

		fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>", ML,
			W - MR, sy(sc, v), sy(sc, v));
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">", ML - 6,
			sy(sc, v) + 4);
		html_esc(f, history_fmt(buf, sizeof(buf), s->metric, v));
		fputs("</text>\n", f);
	}
	for (size_t i = 0; i < s->n; i += s->n > 8 ? (s->n + 7) / 8 : 1) {
		fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" class=\"tick\" text-anchor=\"middle\">", sx(sc, (double)i),
			sc->y0 + PANEL_H - MB + 16);
		/* the date; the time of day when every run is of one day */
		cut(buf, sizeof(buf), s->pts[i].at, 10);
		if (one_day && strlen(s->pts[i].at) >= 19)
			cut(buf, sizeof(buf), s->pts[i].at + 11, 8);
		if (by && rec_label(s->pts[i].labels, by))
			cut(buf, sizeof(buf), rec_label(s->pts[i].labels, by), 24);
		html_esc(f, buf);
		fputs("</text>\n", f);
	}
	fprintf(f, "<text x=\"%d\" y=\"%.0f\" class=\"tick\">", ML, sc->y0 + PANEL_H - MB + 34);
	if (by && !strcmp(by, "machine")) {
		fputs("machines by name: the median of each one's runs", f);
	} else if (by) {
		fputs("runs in the order of their label ", f);
		html_esc(f, by);
	} else {
		fputs("runs, oldest first", f);
	}
	fputs("</text>\n", f);
}

static void segments(FILE *f, const struct hseries *s, const struct scale *sc)
{
	size_t a = 0;

	for (int k = 0; k <= s->ncp; k++) {
		size_t b = k < s->ncp ? s->cp[k].index : s->n;
		double m = 0;

		for (size_t i = a; i < b; i++)
			m += s->pts[i].value;
		m /= (double)(b - a);
		fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"mean\"/>\n",
			sx(sc, (double)a), sx(sc, (double)(b - 1)), sy(sc, m), sy(sc, m));
		if (k < s->ncp) {
			double x = sx(sc, (double)b - 0.5);

			fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\" class=\"cp\"/>", x, x,
				sc->y0 + MT, sc->y0 + PANEL_H - MB);
			fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" class=\"cpt\">x%.2f p=%.3f</text>\n", x + 4,
				sc->y0 + MT + 12, s->cp[k].ratio, s->cp[k].p_value);
		}
		a = b;
	}
}

static void points(FILE *f, const struct hseries *s, const struct scale *sc)
{
	char buf[32];

	for (size_t i = 0; i < s->n; i++) {
		const struct hpoint *p = &s->pts[i];
		double x = sx(sc, (double)i);

		if (isfinite(p->lo))
			fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"ci\"/>", x, x,
				sy(sc, p->lo), sy(sc, p->hi));
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" class=\"pt\"><title>run %lld ", x,
			sy(sc, p->value), (long long)p->run);
		html_esc(f, p->at);
		fputc(' ', f);
		html_esc(f, history_fmt(buf, sizeof(buf), s->metric, p->value));
		fputs("</title></circle>\n", f);
	}
}

int history_svg(FILE *f, const struct history *h, bool in_html)
{
	size_t n = 0;

	for (size_t i = 0; i < h->n; i++)
		n += h->s[i].n > 0;
	if (!in_html)
		fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%zu\" viewBox=\"0 0 %d %zu\">\n",
		W, n * PANEL_H, W, n * PANEL_H);
	fputs("<style>text{font:12px sans-serif;fill:#222}.title{font-weight:bold}.tick{fill:#555}"
	      ".grid{stroke:#ddd}.pt{fill:#1f77b4}.ci{stroke:#1f77b4;stroke-width:1.5;opacity:.5}"
	      ".mean{stroke:#d62728;stroke-width:2}.cp{stroke:#d62728;stroke-dasharray:5,4}"
	      ".cpt{fill:#d62728}</style>\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n", f);
	n = 0;
	for (size_t i = 0; i < h->n; i++) {
		struct scale sc = { .y0 = (double)n * PANEL_H };

		if (!h->s[i].n)
			continue;
		range(&h->s[i], &sc);
		axes(f, &h->s[i], &sc, h->by);
		segments(f, &h->s[i], &sc);
		points(f, &h->s[i], &sc);
		n++;
	}
	fputs("</svg>\n", f);
	return ferror(f) ? -1 : 0;
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
