// SPDX-License-Identifier: MIT
/* A figure of figure.c as inline SVG in the HTML page, drawn by html_svg.c
 * (lines, steps, markers) and html_svg_more.c (clustered bars), a heatmap
 * here: the figure's axes become the chart's, its series the chart's, its
 * text goes through html_esc. Ticks and values are in the field table's
 * units, scaled per value (ns, us, ms): the page has no need of one fixed
 * unit. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "figure.h"
#include "html_svg.h"

static struct svg_axis svg_axis_of(const struct fig_axis *a)
{
	return (struct svg_axis){ .lo = a->lo, .hi = a->hi, .log = a->log, .fd = a->fd,
				  .label = a->label, .from_zero = a->from_zero,
				  .percentile = a->percentile, .ticks = a->ticks,
				  .tick_labels = a->tick_labels, .nticks = a->nticks };
}

/* A figure of places (history's runs): their texts for the values on x. */
static const char **cats_of(const struct figure *f)
{
	const char **c = calloc(f->ncat + 1, sizeof(*c));

	for (size_t i = 0; c && i < f->ncat; i++)
		c[i] = f->cats[i];
	return c;
}

/* The caption, and what was left out. */
static const char *caption_of(const struct figure *f, char *buf, size_t len)
{
	if (!f->note[0])
		return f->caption;
	snprintf(buf, len, "%s%s%s", f->caption ? f->caption : "", f->caption ? "; " : "", f->note);
	return buf;
}

static int svg_lines(struct html *h, const struct figure *f, bool bare, unsigned y)
{
	struct svg_series *s = calloc(f->ns, sizeof(*s));
	struct svg_rule *r = calloc(f->nrules + 1, sizeof(*r));
	const char **cats = f->ncat ? cats_of(f) : NULL;
	char cap[320];
	int ret;

	if (!s || !r || (f->ncat && !cats)) {
		free(s);
		free(r);
		free(cats);
		return -ENOMEM;
	}
	for (size_t i = 0; i < f->nrules; i++)
		r[i] = (struct svg_rule){ .x = f->rules[i].x, .series = f->rules[i].series,
					  .label = f->rules[i].label };
	for (size_t i = 0; i < f->ns; i++) {
		snprintf(s[i].label, sizeof(s[i].label), "%s", f->s[i].label);
		s[i].x = f->s[i].x;
		s[i].y = f->s[i].y;
		s[i].n = f->s[i].n;
		s[i].steps = f->kind == FIG_STEPS;
		s[i].points = f->kind == FIG_POINTS;
		s[i].marks = f->s[i].marks;
		s[i].lo = f->s[i].lo;
		s[i].hi = f->s[i].hi;
		s[i].tips = (const char *const *)f->s[i].tips;
	}
	struct svg_xy c = { .title = f->title, .caption = caption_of(f, cap, sizeof(cap)), .s = s,
			    .ns = f->ns, .hline = NAN, .x = svg_axis_of(&f->x),
			    .y = svg_axis_of(&f->y), .rules = r, .nrules = f->nrules, .bare = bare,
			    .top = y };

	c.x.cats = cats;
	c.x.ncat = f->ncat;
	ret = svg_xy(h, &c);
	free(s);
	free(r);
	free(cats);
	return ret;
}

/* Bars: [category * series + series] from each series' y at the category. */
static int svg_bars_of(struct html *h, const struct figure *f)
{
	const char **cats = calloc(f->ncat + 1, sizeof(*cats)), **sers = calloc(f->ns, sizeof(*sers));
	double *v = calloc(f->ncat * f->ns + 1, sizeof(*v));
	char cap[320];
	int ret = -ENOMEM;

	if (cats && sers && v) {
		for (size_t a = 0; a < f->ncat; a++)
			cats[a] = f->cats[a];
		for (size_t b = 0; b < f->ns; b++) {
			sers[b] = f->s[b].label;
			for (size_t a = 0; a < f->ncat; a++)
				v[a * f->ns + b] = a < f->s[b].n ? f->s[b].y[a] : NAN;
		}
		struct svg_bars c = { .title = f->title, .caption = caption_of(f, cap, sizeof(cap)),
				      .ylabel = f->y.label, .fd = f->y.fd, .cats = cats,
				      .ncat = f->ncat, .sers = sers, .nser = f->ns, .v = v };

		ret = svg_bars(h, &c);
	}
	free(cats);
	free(sers);
	free(v);
	return ret;
}

/* A heatmap's square r, k at x, y, side cw: its colour, its hover text,
 * and its text where there is room for it. */
static void heat_square(struct html *h, const struct figure *f, size_t r, size_t k, double x,
			double y, double cw)
{
	const struct fig_grid *g = &f->grid;
	size_t i = r * g->nc + k;
	double v = g->v[i];
	char col[16];

	fig_colour(f, v, col, sizeof(col));
	fprintf(h->f, "<g class=\"hc\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
		"fill=\"%s\"/><title>", x, y, cw, cw, col);
	html_escf(h->f, "%s %s, %s %s: %s", f->y.label, g->rows[r], f->x.label, g->cols[k], g->tip[i]);
	fputs("</title>", h->f);
	if (cw >= 30) {
		bool dark = !isfinite(v) || v - f->z.lo > (f->z.hi - f->z.lo) * 0.6;

		fprintf(h->f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" class=\"%s\">",
			x + cw / 2, y + cw / 2 + 4, dark ? "hd" : "hl");
		html_esc(h->f, g->text[i]);
		fputs("</text>", h->f);
	}
	fputs("</g>", h->f);
}

/* A FIG_HEAT: squares of at most 60 px in a 600 px square, the rows'
 * ticks on the left, the columns' on top. */
static int svg_heat_of(struct html *h, const struct figure *f)
{
	const struct fig_grid *g = &f->grid;
	double cw = fmin(60, 600.0 / (double)(g->nr > g->nc ? g->nr : g->nc));
	unsigned side = (unsigned)(cw * (double)g->nc);
	char id[32], cap[320];

	html_new_id(h, "heat", id, sizeof(id));
	svg_figure_begin(h, id, f->title, side + 120, (unsigned)(cw * (double)g->nr) + 70);
	for (size_t r = 0; r < g->nr; r++) {
		fprintf(h->f, "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", 74,
			30 + cw * ((double)r + 0.5) + 4);
		html_escn(h->f, g->rows[r], 12);
		fputs("</text>", h->f);
		for (size_t k = 0; k < g->nc; k++)
			heat_square(h, f, r, k, 80 + cw * (double)k, 30 + cw * (double)r, cw);
		fputc('\n', h->f);
	}
	for (size_t k = 0; k < g->nc; k++) {
		fprintf(h->f, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">",
			80 + cw * ((double)k + 0.5), 24);
		html_escn(h->f, g->cols[k], 12);
		fputs("</text>", h->f);
	}
	fprintf(h->f, "<text class=\"alabel\" x=\"%.1f\" y=\"10\" text-anchor=\"middle\">",
		80 + side / 2.0);
	html_esc(h->f, f->x.label);
	fprintf(h->f, "</text><text class=\"alabel\" transform=\"translate(14 %.1f) rotate(-90)\" "
		"text-anchor=\"middle\">", 30 + cw * (double)g->nr / 2);
	html_esc(h->f, f->y.label);
	fputs("</text></svg>\n", h->f);
	svg_figure_end(h, caption_of(f, cap, sizeof(cap)));
	return ferror(h->f) ? -EIO : 0;
}

int fig_svg(struct html *h, const struct figure *f)
{
	if (f->kind == FIG_HEAT)
		return f->grid.nr && f->grid.nc ? svg_heat_of(h, f) : 0;
	if (!f->ns)
		return 0;
	return f->kind == FIG_BARS ? svg_bars_of(h, f) : svg_lines(h, f, false, 0);
}

/* The style of a document's figures: the page's (report.css) for what they use. */
static const char doc_style[] =
	"<style>text{font:11px sans-serif;fill:#222}.title{font-weight:bold;font-size:13px}"
	".tick{fill:#555}.alabel{font-size:12px}.frame{fill:none;stroke:#999}.grid{stroke:#e7e9eb}"
	"g.s path{fill:none;stroke-width:2}g.s circle{stroke:none}"
	".mk{stroke:#d62728;stroke-width:1.6;fill:none}.ci{stroke:#555;stroke-width:1.2;opacity:.6}"
	".rule{stroke-dasharray:5 4;stroke-width:1.2}.rlabel{fill:#444}"
	"g.s.k1 path{stroke-dasharray:7 3}g.s.k2 path{stroke-dasharray:2 2}"
	".c0{stroke:#1f77b4;fill:#1f77b4}.c1{stroke:#ff7f0e;fill:#ff7f0e}"
	".c2{stroke:#2ca02c;fill:#2ca02c}.c3{stroke:#d62728;fill:#d62728}"
	".c4{stroke:#9467bd;fill:#9467bd}.c5{stroke:#8c564b;fill:#8c564b}"
	".c6{stroke:#e377c2;fill:#e377c2}.c7{stroke:#7f7f7f;fill:#7f7f7f}"
	".c8{stroke:#bcbd22;fill:#bcbd22}.c9{stroke:#17becf;fill:#17becf}</style>\n";

int fig_svg_doc(FILE *out, const struct figure *figs, size_t n, bool decl)
{
	struct html h = { .f = out };
	unsigned w = 0, ht = 0, y = 0;

	for (size_t i = 0; i < n; i++) {	/* the document's size first */
		struct svg_xy c = { .ns = figs[i].ns, .caption = figs[i].caption || figs[i].note[0] ? "" : NULL };
		unsigned fw, fh;

		if (!figs[i].ns || figs[i].kind == FIG_BARS)
			continue;
		svg_xy_size(&c, &fw, &fh);
		w = fw > w ? fw : w;
		ht += fh;
	}
	if (decl)
		fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
	fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%u\" "
		"viewBox=\"0 0 %u %u\">\n%s<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
		w, ht, w, ht, doc_style);
	for (size_t i = 0; i < n; i++) {
		struct svg_xy c = { .ns = figs[i].ns, .caption = figs[i].caption || figs[i].note[0] ? "" : NULL };
		unsigned fw, fh;
		int ret;

		if (!figs[i].ns || figs[i].kind == FIG_BARS)
			continue;
		if ((ret = svg_lines(&h, &figs[i], true, y)))
			return ret;
		svg_xy_size(&c, &fw, &fh);
		y += fh;
	}
	fputs("</svg>\n", out);
	return ferror(out) ? -EIO : 0;
}
