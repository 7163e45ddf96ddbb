// SPDX-License-Identifier: MIT
/* Line charts of the HTML report as inline SVG: two axes (linear or log),
 * ticks labelled in the field table's units, one path per series (lines,
 * steps, markers), a horizontal rule for a deadline. The numbers go into
 * the page's data block too, so that the script can show the value under
 * the pointer; without script every series still has its <title>. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/util.h"
#include "fields.h"
#include "html_svg.h"

#define W 760
#define H 380
#define ML 78
#define MR 18
#define MT 16
#define MB 48
#define MAX_TICKS 24
#define MANY_MARKS 120

void svg_figure_begin(struct html *h, const char *id, const char *title, unsigned w, unsigned ht)
{
	fprintf(h->f, "<figure class=\"fig\" id=\"%s\">\n<figcaption class=\"ft\">", id);
	html_esc(h->f, title);
	fprintf(h->f, "</figcaption>\n<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %u %u\" "
		"width=\"%u\" height=\"%u\" role=\"img\" class=\"chart\" data-fig=\"%s\"><title>",
		w, ht, w, ht, id);
	html_esc(h->f, title);
	fputs("</title>\n", h->f);
}

void svg_figure_end(struct html *h, const char *caption)
{
	if (caption) {
		fputs("<p class=\"cap\">", h->f);
		html_esc(h->f, caption);
		fputs("</p>\n", h->f);
	}
	fputs("</figure>\n", h->f);
}

void svg_legend(struct html *h, const char *fig, const char *const *labels, size_t n,
		const char *cls_prefix)
{
	fprintf(h->f, "<ul class=\"legend\" data-fig=\"%s\">", fig);
	for (size_t i = 0; i < n; i++) {
		fprintf(h->f, "<li data-s=\"%zu\"><span class=\"sw %s%zu\"></span>", i, cls_prefix,
			i % 10);
		html_esc(h->f, labels[i]);
		fputs("</li>", h->f);
	}
	fputs("</ul>\n", h->f);
}

void svg_value_text(const struct svg_axis *a, double v, char *buf, size_t len)
{
	double sc = a->scale ? a->scale : 1;

	if (a->cats && v >= 0 && v == floor(v) && v < (double)a->ncat)
		snprintf(buf, len, "%s", a->cats[(size_t)v]);
	else if (a->percentile && v > 1)
		snprintf(buf, len, "p%.6g", 100 * (1 - 1 / v));
	else if (a->fd)
		field_human_num(a->fd, v * sc, buf, len);
	else
		snprintf(buf, len, "%.4g", v * sc);
}

static const char *unit_name(const struct svg_axis *a)
{
	if (a->percentile)
		return "pctile";
	switch (a->fd ? a->fd->unit : U_NONE) {
	case U_NS: return "ns";
	case U_BYTES: return "bytes";
	case U_PER_S: return "per_s";
	case U_BYTES_PER_S: return "Bps";
	case U_PCT: return "pct";
	default: return "";
	}
}

/* ---- axes --------------------------------------------------------------- */

static bool usable(const struct svg_axis *a, double v)
{
	return isfinite(v) && (!a->log || v > 0);
}

static void data_range(struct svg_axis *a, const struct svg_xy *c, bool xaxis)
{
	double lo = INFINITY, hi = -INFINITY;

	for (size_t i = 0; i < c->ns; i++)
		for (size_t k = 0; k < c->s[i].n; k++) {
			double v = xaxis ? c->s[i].x[k] : c->s[i].y[k];

			if (usable(a, v)) {
				lo = fmin(lo, v);
				hi = fmax(hi, v);
			}
		}
	if (!xaxis && usable(a, c->hline))
		lo = fmin(lo, c->hline), hi = fmax(hi, c->hline);
	if (lo > hi)
		lo = 1, hi = 10;
	if (a->from_zero && !a->log)
		lo = fmin(lo, 0);
	if (a->log && xaxis) {
		/* points: a margin, so that none sits on the frame */
		lo /= pow(a->log, 0.25);
		hi *= pow(a->log, 0.25);
	} else if (a->log) {
		double b = a->log;

		lo = pow(b, floor(log(lo) / log(b) + 1e-9));
		hi = pow(b, ceil(log(hi) / log(b) - 1e-9));
		if (lo >= hi)
			lo /= b, hi *= b;
	} else if (lo >= hi) {
		hi = lo + (lo ? fabs(lo) : 1);
	} else if (!xaxis) {
		hi += (hi - lo) * 0.05;
	}
	a->lo = lo;
	a->hi = hi;
}

static double frac(const struct svg_axis *a, double v)
{
	if (a->log)
		return (log(v) - log(a->lo)) / (log(a->hi) - log(a->lo));
	return (v - a->lo) / (a->hi - a->lo);
}

static double px(const struct svg_axis *a, double v)
{
	return ML + frac(a, v) * (W - ML - MR);
}

static double py(const struct svg_axis *a, double v)
{
	return H - MB - frac(a, v) * (H - MT - MB);
}

/* A 1, 2 or 5 times a power of ten near range/5. */
static double nice_step(double range)
{
	double raw = range / 5, p = pow(10, floor(log10(raw))), m = raw / p;

	return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

static size_t make_ticks(const struct svg_axis *a, double *t)
{
	size_t n = 0;

	if (a->nticks) {
		for (size_t i = 0; i < a->nticks && n < MAX_TICKS; i++)
			t[n++] = a->ticks[i];
		return n;
	}
	if (!a->log) {
		double step = nice_step(a->hi - a->lo);

		for (double v = ceil(a->lo / step) * step; v <= a->hi * (1 + 1e-9) && n < MAX_TICKS;
		     v += step)
			t[n++] = fabs(v) < step * 1e-9 ? 0 : v;
		return n;
	}
	double b = a->log, decades = log(a->hi / a->lo) / log(b);
	unsigned every = decades > 10 ? (unsigned)ceil(decades / 10) : 1;
	unsigned k = 0;

	for (double v = pow(b, ceil(log(a->lo) / log(b) - 1e-9)); v <= a->hi * (1 + 1e-9) && n < MAX_TICKS;
	     v *= b, k++) {
		if (k % every == 0)
			t[n++] = v;
		if (b == 10 && decades < 2.5 && v * 2 < a->hi && n + 2 < MAX_TICKS) {
			t[n++] = v * 2;
			if (v * 5 < a->hi)
				t[n++] = v * 5;
		}
	}
	return n;
}

static void axis_ticks(struct html *h, const struct svg_axis *a, bool xaxis)
{
	double t[MAX_TICKS];
	size_t n = make_ticks(a, t);
	char txt[48];

	for (size_t i = 0; i < n; i++) {
		if (t[i] < a->lo * (1 - 1e-9) || t[i] > a->hi * (1 + 1e-9))
			continue;
		if (a->nticks && a->tick_labels)
			snprintf(txt, sizeof(txt), "%s", a->tick_labels[i]);
		else
			svg_value_text(a, t[i], txt, sizeof(txt));
		if (xaxis)
			fprintf(h->f, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/>"
				"<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">",
				px(a, t[i]), px(a, t[i]), MT, H - MB, px(a, t[i]), H - MB + 16);
		else
			fprintf(h->f, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>"
				"<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">",
				ML, W - MR, py(a, t[i]), py(a, t[i]), ML - 6, py(a, t[i]) + 4);
		html_esc(h->f, txt);
		fputs("</text>\n", h->f);
	}
}

static void axes(struct html *h, const struct svg_xy *c)
{
	fprintf(h->f, "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n", ML, MT,
		W - ML - MR, H - MT - MB);
	axis_ticks(h, &c->x, true);
	axis_ticks(h, &c->y, false);
	fprintf(h->f, "<text class=\"alabel\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">", (W + ML) / 2,
		H - 8);
	html_esc(h->f, c->x.label);
	fprintf(h->f, "</text>\n<text class=\"alabel\" transform=\"translate(16 %d) rotate(-90)\" "
		"text-anchor=\"middle\">", (H - MB + MT) / 2);
	html_esc(h->f, c->y.label);
	fputs("</text>\n", h->f);
}

/* ---- series ----------------------------------------------------------------- */

/* Steps as H and V moves, a run of equal values as one H. */
static void steps_of(struct html *h, const struct svg_xy *c, const struct svg_series *s)
{
	bool pen = false;
	double last = NAN;

	for (size_t k = 0; k < s->n; k++) {
		if (!usable(&c->x, s->x[k]) || !usable(&c->y, s->y[k])) {
			pen = false;
			continue;
		}
		double x = px(&c->x, s->x[k]), y = py(&c->y, s->y[k]);
		bool next = k + 1 < s->n && usable(&c->x, s->x[k + 1]);

		if (!pen)
			fprintf(h->f, "M%.1f %.1f", x, y);
		else if (y != last)
			fprintf(h->f, "H%.1fV%.1f", x, y);
		pen = true;
		last = y;
		if (!next)	/* the end of a run of equal values */
			fprintf(h->f, "H%.1f", x);
	}
}

static void path_of(struct html *h, const struct svg_xy *c, const struct svg_series *s)
{
	bool pen = false;

	fputs("<path d=\"", h->f);
	for (size_t k = 0; !s->steps && k < s->n; k++) {
		if (!usable(&c->x, s->x[k]) || !usable(&c->y, s->y[k])) {
			pen = false;
			continue;
		}
		fprintf(h->f, "%s%.1f %.1f", pen ? "L" : "M", px(&c->x, s->x[k]), py(&c->y, s->y[k]));
		pen = true;
	}
	if (s->steps)
		steps_of(h, c, s);
	fputs("\"/>", h->f);
}

static size_t usable_points(const struct svg_xy *c, const struct svg_series *s)
{
	size_t n = 0;

	for (size_t k = 0; k < s->n; k++)
		n += usable(&c->x, s->x[k]) && usable(&c->y, s->y[k]);
	return n;
}

/* Markers with a <title> each; past MANY_MARKS one path without them (the
 * script still reads every value out of the data block). */
static void markers(struct html *h, const struct svg_xy *c, const struct svg_series *s)
{
	bool many = usable_points(c, s) > MANY_MARKS;

	if (many)
		fputs("<path class=\"mk\" d=\"", h->f);
	for (size_t k = 0; k < s->n; k++) {
		char xt[48], yt[48];

		if (!usable(&c->x, s->x[k]) || !usable(&c->y, s->y[k]))
			continue;
		double x = px(&c->x, s->x[k]), y = py(&c->y, s->y[k]);

		if (many) {
			fprintf(h->f, "M%.1f %.1fl4 4m0 -4l-4 4", x - 2, y - 2);
			continue;
		}
		svg_value_text(&c->x, s->x[k], xt, sizeof(xt));
		svg_value_text(&c->y, s->y[k], yt, sizeof(yt));
		if (s->lo && s->hi && usable(&c->y, s->lo[k]) && usable(&c->y, s->hi[k]))
			fprintf(h->f, "<line class=\"ci\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>",
				x, x, py(&c->y, s->lo[k]), py(&c->y, s->hi[k]));
		if (s->marks)
			fprintf(h->f, "<path class=\"mk\" d=\"M%.1f %.1fl6 6m0 -6l-6 6\">", x - 3, y - 3);
		else
			fprintf(h->f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\">", x, y);
		fputs("<title>", h->f);
		html_escf(h->f, "%s: %s, %s%s%s", s->label, xt, yt, s->tips && s->tips[k] ? ": " : "",
			  s->tips && s->tips[k] ? s->tips[k] : "");
		fputs(s->marks ? "</title></path>" : "</title></circle>", h->f);
	}
	if (many)
		fputs("\"/>", h->f);
}

/* A number for the data block: whole from 1000 up (ns, sizes, rates). */
static json_t *num_json(double v)
{
	return fabs(v) >= 1000 && fabs(v) < 9e15 ? json_integer((json_int_t)llround(v)) : json_real(v);
}

/* x evenly spaced (a series over time): x0, dx and the y values */
static bool even(const struct svg_series *s)
{
	double dx = s->n > 2 ? s->x[1] - s->x[0] : 0;

	for (size_t k = 2; dx > 0 && k < s->n; k++)
		if (fabs(s->x[k] - s->x[k - 1] - dx) > 1e-9 * fabs(dx) + 1e-12)
			return false;
	return dx > 0;
}

/* {"l": label, "p": [[x, y], ...]} or {"l", "x0", "dx", "y": [y or null]};
 * a histogram's empty bins left out (nothing to read there). */
static json_t *series_json(const struct svg_xy *c, const struct svg_series *s)
{
	json_t *pts = json_array();

	if (even(s) && !s->steps) {
		for (size_t k = 0; pts && k < s->n; k++)
			json_array_append_new(pts, usable(&c->y, s->y[k]) ? num_json(s->y[k]) : json_null());
		return json_pack("{s:s, s:f, s:f, s:o}", "l", s->label, "x0", s->x[0], "dx",
				 s->x[1] - s->x[0], "y", pts);
	}
	for (size_t k = 0; pts && k < s->n; k++)
		if (usable(&c->x, s->x[k]) && usable(&c->y, s->y[k]) && !(s->steps && s->y[k] == 0))
			json_array_append_new(pts, json_pack("[o,o]", num_json(s->x[k]), num_json(s->y[k])));
	return json_pack("{s:s, s:o}", "l", s->label, "p", pts);
}

/* The numbers for the script: plot box, ranges, units, points. */
static json_t *axis_json(const struct svg_axis *a)
{
	return json_pack("{s:f, s:f, s:i, s:s, s:f}", "lo", a->lo, "hi", a->hi, "log", (int)a->log,
			 "u", unit_name(a), "sc", a->scale ? a->scale : 1.0);
}

static void fig_data(struct html *h, const char *id, const struct svg_xy *c)
{
	json_t *o = json_pack("{s:s, s:s, s:[i,i,i,i], s:o, s:o}", "t", "xy", "title", c->title,
			      "box", ML, MT, W - MR, H - MB, "x", axis_json(&c->x), "y",
			      axis_json(&c->y));
	json_t *ss = json_array();

	for (size_t i = 0; o && ss && i < c->ns; i++)
		json_array_append_new(ss, series_json(c, &c->s[i]));
	if (o && ss)
		json_object_set_new(o, "s", ss);
	else
		json_decref(ss);
	if (o)
		json_object_set_new(h->figs, id, o);
}

/* As svg_legend, the markers' series in the markers' colour. */
static void legend_xy(struct html *h, const char *id, const struct svg_xy *c)
{
	fprintf(h->f, "<ul class=\"legend\" data-fig=\"%s\">", id);
	for (size_t i = 0; i < c->ns; i++) {
		if (c->s[i].marks)
			fprintf(h->f, "<li data-s=\"%zu\"><span class=\"sw mkc\"></span>", i);
		else
			fprintf(h->f, "<li data-s=\"%zu\"><span class=\"sw c%zu k%zu\"></span>", i, i % 10,
				i / 10 % 3);
		html_esc(h->f, c->s[i].label);
		fputs("</li>", h->f);
	}
	fputs("</ul>\n", h->f);
}

/* A bare figure: a group moved down to its place in the document, a band
 * for its title above the plot, its legend and caption below it. */
#define BARE_TOP 24
#define BARE_ROW 16

void svg_xy_size(const struct svg_xy *c, unsigned *w, unsigned *ht)
{
	*w = W;
	*ht = BARE_TOP + H + BARE_ROW * (unsigned)c->ns + (c->caption ? BARE_ROW : 0) + 8;
}

static void bare_begin(struct html *h, const struct svg_xy *c)
{
	fprintf(h->f, "<g class=\"figure\" transform=\"translate(0 %u)\"><title>", c->top);
	html_esc(h->f, c->title);
	fprintf(h->f, "</title>\n<text class=\"title\" x=\"%d\" y=\"16\">", ML);
	html_esc(h->f, c->title);
	fprintf(h->f, "</text>\n<g transform=\"translate(0 %d)\">\n", BARE_TOP);
}

/* The legend and the caption as text under the plot. */
static void bare_end(struct html *h, const struct svg_xy *c)
{
	unsigned y = BARE_TOP + H;

	fputs("</g>\n", h->f);
	for (size_t i = 0; i < c->ns; i++, y += BARE_ROW) {
		if (c->s[i].marks)
			fprintf(h->f, "<path class=\"mk\" d=\"M%d %.1fl6 6m0 -6l-6 6\"/>", ML, y - 7.0);
		else
			fprintf(h->f, "<rect class=\"c%zu\" x=\"%d\" y=\"%u\" width=\"10\" height=\"3\"/>",
				i % 10, ML, y - 5);
		fprintf(h->f, "<text class=\"leg\" x=\"%d\" y=\"%u\">", ML + 16, y);
		html_esc(h->f, c->s[i].label);
		fputs("</text>\n", h->f);
	}
	if (c->caption) {
		fprintf(h->f, "<text class=\"tick\" x=\"%d\" y=\"%u\">", ML, y);
		html_esc(h->f, c->caption);
		fputs("</text>\n", h->f);
	}
	fputs("</g>\n", h->f);
}

static void rules_of(struct html *h, const struct svg_xy *c)
{
	for (size_t i = 0; i < c->nrules; i++) {
		const struct svg_rule *r = &c->rules[i];

		if (!usable(&c->x, r->x) || r->x < c->x.lo || r->x > c->x.hi)
			continue;
		double x = px(&c->x, r->x);
		bool left = x > (W + ML) / 2.0;	/* the label on the side with room */

		fprintf(h->f, "<line class=\"rule c%zu\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/>"
			"<text class=\"rlabel\" x=\"%.1f\" y=\"%zu\"%s>", r->series % 10, x, x, MT,
			H - MB, left ? x - 4 : x + 4, MT + 12 + 14 * (i % 4),
			left ? " text-anchor=\"end\"" : "");
		html_esc(h->f, r->label ? r->label : "");
		fputs("</text>\n", h->f);
	}
}

int svg_xy(struct html *h, const struct svg_xy *c0)
{
	struct svg_xy c = *c0;
	char id[32];

	if (!c.ns)
		return 0;
	if (c.x.lo >= c.x.hi)
		data_range(&c.x, &c, true);
	if (c.y.lo >= c.y.hi)
		data_range(&c.y, &c, false);
	html_new_id(h, "fig", id, sizeof(id));
	if (c.bare)
		bare_begin(h, &c);
	else
		svg_figure_begin(h, id, c.title, W, H);
	fprintf(h->f, "<defs><clipPath id=\"%s-clip\"><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>"
		"</clipPath></defs>\n", id, ML, MT, W - ML - MR, H - MT - MB);
	axes(h, &c);
	fprintf(h->f, "<g clip-path=\"url(#%s-clip)\">\n", id);
	if (usable(&c.y, c.hline) && c.hline >= c.y.lo && c.hline <= c.y.hi) {
		fprintf(h->f, "<line class=\"hline\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>"
			"<text class=\"hlabel\" x=\"%d\" y=\"%.1f\">", ML, W - MR, py(&c.y, c.hline),
			py(&c.y, c.hline), ML + 4, py(&c.y, c.hline) - 4);
		html_esc(h->f, c.hline_label ? c.hline_label : "");
		fputs("</text>\n", h->f);
	}
	rules_of(h, &c);
	for (size_t i = 0; i < c.ns; i++) {
		const struct svg_series *s = &c.s[i];

		fprintf(h->f, "<g class=\"s c%zu k%zu%s\" data-s=\"%zu\"><title>", i % 10, i / 10 % 3,
			s->marks ? " marks" : "", i);
		html_esc(h->f, s->label);
		fputs("</title>", h->f);
		if (!s->marks)
			path_of(h, &c, s);
		if (s->points || s->marks)
			markers(h, &c, s);
		fputs("</g>\n", h->f);
	}
	if (c.bare) {
		fputs("</g>\n", h->f);
		bare_end(h, &c);
		return 0;
	}
	fputs("</g></svg>\n", h->f);
	legend_xy(h, id, &c);
	fig_data(h, id, &c);
	svg_figure_end(h, c.caption);
	return 0;
}
