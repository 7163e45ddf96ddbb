/* SPDX-License-Identifier: MIT */
/* Inline SVG charts of the HTML report (html_svg.c, html_svg_more.c):
 * lines over two axes, clustered bars, stacked bars (a heatmap: fig_svg.c).
 * Each is an <svg> readable without script: every series, bar and square has a
 * <title> with its label and value; the data block (struct html.data)
 * carries the numbers of line charts for the script's hover readout. */
#ifndef IPCLAB_REPORT_HTML_SVG_H
#define IPCLAB_REPORT_HTML_SVG_H

#include "html.h"

struct svg_axis {
	double lo, hi;			/* lo >= hi: from the data */
	unsigned log;			/* 0 linear, else the base of a log axis (2 or 10) */
	const struct field *fd;		/* tick and value text in its unit, or NULL */
	double scale;			/* the field's value = axis value * scale (0 = 1) */
	const char *label;
	bool from_zero;			/* a linear axis that starts at 0 */
	bool percentile;		/* the value is 1/(1-q): shown as the percentile */
	/* fixed ticks (the percentile axis), or none */
	const double *ticks;
	const char *const *tick_labels;
	size_t nticks;
	/* x a place among these (a run's date, a label): value v's text is cats[v] */
	const char *const *cats;
	size_t ncat;
};

struct svg_series {
	char label[HTML_LABEL];
	double *x, *y;			/* NAN in y: a gap */
	size_t n;
	bool steps;			/* a histogram's steps */
	bool points;			/* markers at the points */
	bool marks;			/* markers only (xruns), in the mark colour */
	const char *const *tips;	/* per point, more for its <title> (an xrun's cause), or NULL */
	const double *lo, *hi;		/* per point, its interval (NAN: none), or NULL */
};

/* A vertical rule (a change point), in its series' colour, labelled. */
struct svg_rule {
	double x;
	size_t series;
	const char *label;
};

struct svg_xy {
	const char *title, *caption;
	struct svg_axis x, y;
	struct svg_series *s;
	size_t ns;
	double hline;			/* a horizontal rule (a deadline), NAN: none */
	const char *hline_label;
	const struct svg_rule *rules;
	size_t nrules;
	/* a figure of an SVG document (fig_svg_doc), not of a page: a group
	 * at top, its title, legend and caption drawn inside it, no data for
	 * the page's script */
	bool bare;
	unsigned top;
};

struct svg_bars {
	const char *title, *caption, *ylabel;
	const struct field *fd;		/* the values' unit */
	const char *const *cats;	/* groups along x */
	size_t ncat;
	const char *const *sers;	/* a bar per series in each group */
	size_t nser;
	const double *v;		/* [cat * nser + ser], NAN: no bar */
};

struct svg_stack {
	const char *title, *caption;
	const char *const *parts;	/* segment names, in stacking order */
	size_t nparts;
	const char *const *rows;
	size_t nrows;
	const double *v;		/* [row * nparts + part], >= 0 */
	bool percent;			/* each row as % of its own sum */
	const struct field *fd;		/* the values' unit (for their text) */
	const char *unit_label;		/* the axis: "% of the window" */
};

int svg_xy(struct html *h, const struct svg_xy *c);
/* The size of a bare svg_xy. */
void svg_xy_size(const struct svg_xy *c, unsigned *w, unsigned *ht);
int svg_bars(struct html *h, const struct svg_bars *c);
int svg_stack(struct html *h, const struct svg_stack *c);

/* A value's text on an axis or in a title. */
void svg_value_text(const struct svg_axis *a, double v, char *buf, size_t len);
/* The legend under a chart, one entry a series; the script toggles them. */
void svg_legend(struct html *h, const char *fig, const char *const *labels, size_t n,
		const char *cls_prefix);
/* <figure> and its caption around a chart. */
void svg_figure_begin(struct html *h, const char *id, const char *title, unsigned w, unsigned ht);
void svg_figure_end(struct html *h, const char *caption);

#endif
