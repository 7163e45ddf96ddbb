/* SPDX-License-Identifier: MIT */
/* The figures of a result file, computed once (figure.c) and drawn by two
 * back ends: inline SVG in the HTML page (fig_svg.c) and a gnuplot script
 * with its data for ipclab plot (fig_gnuplot.c). What a figure shows is
 * decided here only: which cells, which series, their labels (the
 * parameters that vary among the figure's cells), the axes' units and
 * scales. A back end only draws: the page and the plot of one file show
 * the same series under the same labels. Labels are the result file's
 * text, hostile: each back end writes them through its own escaping
 * (html_esc; plot_text.c's quoting). */
#ifndef IPCLAB_REPORT_FIGURE_H
#define IPCLAB_REPORT_FIGURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ipclab/result.h"
#include "rfile.h"

#define FIG_MAX_SERIES 64
#define FIG_LABEL 192
#define FIG_NOTE 160

enum fig_kind {
	FIG_LINES,	/* a line through each series' points */
	FIG_STEPS,	/* a histogram's steps: y holds from x to the next x */
	FIG_POINTS,	/* lines with a marker at each point */
	FIG_BARS,	/* clustered bars: x is a category's index (figure.cats) */
	FIG_HEAT,	/* a grid of squares coloured by value (figure.grid, figure.z) */
};

struct fig_axis {
	const char *label;		/* "latency", "message size" */
	const char *key;		/* its column in a data file: "latency_us" */
	const struct field *fd;		/* the values' unit (ticks, hover text), or NULL */
	/* one fixed unit, for a back end that cannot scale per tick: a value
	 * is shown as value / per, in unit ("us"); per 0: as is, no unit */
	double per;
	const char *unit;
	unsigned decimals;		/* data file: that many decimals; 0: "%.6g" */
	unsigned log;			/* 0 linear, else the base of a log axis (2, 10) */
	double lo, hi;			/* lo >= hi: from the data */
	bool from_zero;			/* a linear axis that starts at 0 */
	bool percentile;		/* the value is 1/(1-q), shown as the percentile */
	const double *ticks;		/* fixed ticks, or none */
	const char *const *tick_labels;
	size_t nticks;
};

struct fig_series {
	char label[FIG_LABEL];
	double *x, *y;			/* NAN in y: no value there */
	size_t n, cap;
	/* each point's 95 % interval (NAN: none) and more text for its hover
	 * title, or NULL: none (figure_point_more) */
	double *lo, *hi;
	char **tips;
	bool marks;			/* points singled out: markers only, in the mark colour */
};

/* FIG_HEAT's squares: nr rows along y (top first), nc columns along x,
 * the rows' and columns' texts their ticks; square [r * nc + c] has a
 * value (NAN: none), the text it shows (its value in the field's unit
 * and its mark, or "-" for none) and its hover text. */
#define FIG_CELL 48
struct fig_grid {
	size_t nr, nc;
	char (*rows)[24], (*cols)[24];
	double *v;
	char (*text)[FIG_CELL];
	char (*tip)[FIG_CELL + 32];
};

/* The colour scale of a FIG_HEAT: its stops from low to high (viridis),
 * interpolated; a square without a value is FIG_NO_COLOUR. */
#define FIG_STOPS 5
extern const unsigned char fig_stops[FIG_STOPS][3];
#define FIG_NO_COLOUR "#eeeeee"

/* A vertical rule across the plot (a change point), in its series' colour. */
struct fig_rule {
	double x;
	size_t series;
	char label[FIG_NOTE];
};

struct figure {
	char name[64];			/* a file name's stem: "latency-percentiles-rtt" */
	char title[640];
	const char *caption;		/* how the numbers were made, or NULL */
	enum fig_kind kind;
	struct fig_axis x, y;
	char (*cats)[FIG_LABEL];	/* FIG_BARS: the groups along x */
	size_t ncat;
	struct fig_series s[FIG_MAX_SERIES];
	size_t ns;
	char note[FIG_NOTE];		/* what was left out, or "" */
	struct fig_rule *rules;		/* vertical rules, or NULL */
	size_t nrules;
	/* x ticks the figure made (FIG_BARS' cats as labels): owned, x.ticks
	 * and x.tick_labels point here; an axis text of its own */
	double *tick_at;
	const char **tick_text;
	char axis_text[FIG_LABEL];
	/* FIG_HEAT: the squares, and the colour scale (z: the values' axis,
	 * lo..hi the lowest and highest value, the ends of the stops) */
	struct fig_grid grid;
	struct fig_axis z;
};

/* The cells a figure is made from: a file, or one section of a suite
 * file; rf names the parameters that may tell them apart. */
struct fig_in {
	const struct rfile *rf;
	const struct rcell *const *cells;
	size_t n;
};

/* The standard figures, in the order both back ends draw them. */
enum fig_id {
	FIG_PCT_RTT, FIG_HIST_RTT, FIG_PCT_ONE_WAY, FIG_HIST_ONE_WAY,
	FIG_THROUGHPUT, FIG_MSGRATE,
	FIG_CPU,
	FIG_COUNT
};

/* Figure id from these cells into f (zeroed first): 0 with f->ns == 0 when
 * they have nothing for it, -ENOMEM. figure_free in every case. */
int figure_build(struct figure *f, enum fig_id id, const struct fig_in *in);
void figure_free(struct figure *f);

/* The figures one by one. */
int figure_percentiles(struct figure *f, const struct fig_in *in, enum lat_kind kind);
int figure_histogram(struct figure *f, const struct fig_in *in, enum lat_kind kind);
int figure_vs_size(struct figure *f, const struct fig_in *in, const char *metric);
int figure_cpu(struct figure *f, const struct fig_in *in);

/* ipclab history's figure: a series of stored runs per cell (and
 * machine), or per cell across machines (--by machine). A point's place on
 * x is its key: (the --by label's value, the run's time, the run), the
 * same for the points of one run; the machine's name with --by machine. */
struct fig_hpoint {
	const char *by;			/* the --by label's value or the machine, or NULL */
	const char *at;			/* the run's created_utc */
	long long run;
	double value, lo, hi;		/* lo, hi: its 95 % interval, NAN: none */
	const char *tip;		/* more for its hover title ("run 12"), or NULL */
	const char *state;		/* why it was another state of the machine, or NULL */
};

struct cp_change;
struct fig_hseries {
	const char *label, *metric;	/* metric: a metrics key (field_find) */
	const struct fig_hpoint *pts;
	size_t n;
	const struct cp_change *cp;	/* its change points, before pts[cp->index] */
	size_t ncp;
};

enum fig_hx { FIG_HX_RUNS, FIG_HX_LABEL, FIG_HX_MACHINE };

struct fig_hin {
	const struct fig_hseries *s;
	size_t n;
	enum fig_hx x;
	const char *by;			/* FIG_HX_LABEL: the label's name */
};

/* The series of in whose metric is metric, one figure (f zeroed first):
 * x the run's place (time, or the label's order, or the machine), y the
 * metric in the field table's unit, a series per cell, a rule per change
 * point, the points of another state of the machine as marks. 0 (f->ns 0:
 * nothing of that metric), -ENOMEM; figure_free in every case. */
int figure_history(struct figure *f, const struct fig_hin *in, const char *metric);

/* --pin matrix's CPU x CPU heatmaps of a result file (figure_matrix.c):
 * *figs a new array of *n figures, one per group of cells that differ
 * only in their pin, rows the server's CPU and columns the client's in
 * the file's topology order, a square per pair with the matrix metric's
 * value and the pair's topology mark. 0 (*n 0: no "matrix" object),
 * -EINVAL (one without cpus or metric), -ENOMEM. figure_free_n frees. */
int figure_matrix(const struct rfile *rf, struct figure **figs, size_t *n);
void figure_free_n(struct figure *figs, size_t n);
/* A value's colour on f's colour scale ("#rrggbb"); NAN: FIG_NO_COLOUR. */
void fig_colour(const struct figure *f, double v, char *buf, size_t len);

/* A series more (its label), or NULL when FIG_MAX_SERIES are there (the
 * note says so); a point more: 0 or -ENOMEM. */
struct fig_series *figure_series(struct figure *f, const char *label);
int figure_point(struct fig_series *s, double x, double y);
/* A point with its interval (lo, hi; NAN: none) and its hover text (or NULL). */
int figure_point_more(struct fig_series *s, double x, double y, double lo, double hi,
		      const char *tip);

/* The axis' text with its fixed unit: "latency (us)". */
void fig_axis_title(const struct fig_axis *a, char *buf, size_t len);

/* The back ends: inline SVG into the page (fig_svg.c), NAME.dat and
 * NAME.gp drawn by gnuplot (fig_gnuplot.c). A figure without series is
 * skipped (0); else 0 or -errno (plot: ctx->err filled). */
struct html;
struct plot_ctx;
int fig_svg(struct html *h, const struct figure *f);
/* Figures as one SVG document of their own, stacked, with its style sheet
 * (no page around them); decl: with the XML declaration. 0 or -errno. */
int fig_svg_doc(FILE *out, const struct figure *figs, size_t n, bool decl);
int fig_gnuplot(struct plot_ctx *ctx, const struct figure *f);

#endif
