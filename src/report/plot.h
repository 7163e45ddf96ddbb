/* SPDX-License-Identifier: MIT */
/* ipclab plot: figures from a result file, each as NAME.dat (the numbers),
 * NAME.gp (the gnuplot script that draws them) and NAME.png/NAME.svg. A
 * result file is untrusted input: what of it reaches a script goes through
 * the quoting of plot_text.c. */
#ifndef IPCLAB_REPORT_PLOT_H
#define IPCLAB_REPORT_PLOT_H

#include <stdio.h>

#include "ipclab/outdir.h"
#include "rfile.h"

#define PLOT_MAX_PIVOTS 8
#define FIG_NAME_MAX 200	/* characters of a figure's name */

struct plot_pivot {
	char row[64], col[64], metric[64];	/* parameter, parameter, metric key */
};

struct plot_opts {
	unsigned width, height;			/* pixels of every figure */
	struct plot_pivot pivots[PLOT_MAX_PIVOTS];
	unsigned npivots;
	FILE *list;				/* names of the files written, or NULL */
	/* plot_scripts: each figure's name, data and script, instead of files */
	int (*emit)(void *arg, const char *name, const char *dat, size_t datlen, const char *gp,
		    size_t gplen);
	void *emit_arg;
};

/* Figures in progress: the directory and what has been written. */
struct plot_ctx {
	const struct plot_opts *o;
	const char *dir;			/* for messages */
	const struct outdir *od;		/* where figures go; NULL with o->emit */
	const struct rfile *rf;
	const char *names[64];			/* parameters that tell cells apart */
	size_t nnames;
	unsigned nfigs;
	char *err;
	size_t errlen;
	/* the figure being made: its data and script in memory until fig_finish */
	FILE *dat, *gp;
	char *datbuf, *gpbuf;
	size_t datlen, gplen;
};

/* The package that brings gnuplot, for messages. */
#define GNUPLOT_PKG "gnuplot-nox"

/* Every figure of a result file into dir (made 0700 if missing; an existing
 * one must be the user's own, see ipclab/outdir.h): 0, -ENOENT or -EINVAL
 * (bad input: the file, a pivot, the directory, no gnuplot), or another
 * -errno (plotting failed); why in err. */
int plot_file(const char *json_path, const char *dir, struct plot_opts *o, char *err,
	      size_t errlen);
/* The figures of a result file held in memory (name stands for its path),
 * each handed to o->emit instead of written and drawn: no file is made and
 * gnuplot is not run. 0 or -errno with err filled. */
int plot_scripts(const char *name, const char *text, size_t len, struct plot_opts *o, char *err,
		 size_t errlen);

/* "ROW,COL,METRIC" (run --pivot's syntax): parameter names, and a metric
 * of the field table (aliases allowed). */
int plot_parse_pivot(const char *spec, struct plot_pivot *pv, char *err, size_t errlen);

/* The figures (plot_fig.c); each returns 0, or -errno with ctx->err
 * filled; a figure the file has no data for is skipped (0). */
int fig_latency(struct plot_ctx *ctx);
int fig_throughput(struct plot_ctx *ctx);
int fig_cpu(struct plot_ctx *ctx);
int fig_heatmap(struct plot_ctx *ctx, const struct plot_pivot *pv);
/* --pin matrix's CPU x CPU heatmap (plot_matrix.c); 0 when the file has none. */
int fig_matrix(struct plot_ctx *ctx);
/* -EINVAL when no result has the pivot's parameters or metric. */
int fig_check_pivot(struct plot_ctx *ctx, const struct plot_pivot *pv);
/* -EINVAL when the file's "matrix" names no metric of the field table. */
int fig_check_matrix(struct plot_ctx *ctx);

/* Start figure NAME (letters, digits, '_', '-'): its data and script, in
 * memory (plot.c). */
int fig_open(struct plot_ctx *ctx, const char *name, FILE **dat, FILE **gp);
/* The script's head: comments, size, data format; and the loop that
 * draws into NAME.png and NAME.svg around the plot commands. */
void fig_script_head(const struct plot_ctx *ctx, FILE *gp, const char *name, const char *what);
void fig_script_begin_output(FILE *gp, const char *name);
void fig_script_end_output(FILE *gp);
/* The figure complete: to o->emit, or written into the directory and drawn. */
int fig_finish(struct plot_ctx *ctx, const char *name, FILE *dat, FILE *gp);
/* NAME.dat, NAME.gp, NAME.png and NAME.svg into ctx->od: made in a private
 * directory inside it, gnuplot fed the script on its standard input (never
 * a file it opens by name), then all four moved in (plot_run.c). */
int fig_draw(struct plot_ctx *ctx, const char *name);

/* Text into a script (plot_text.c): a gnuplot string in single quotes
 * (control characters as spaces); a comment's text (control characters
 * and backslashes as '?'); a data file's text (control characters as
 * spaces, double quotes as single ones). */
void gp_quote(FILE *gp, const char *s);
void gp_comment(FILE *gp, const char *s);
void dat_text(FILE *dat, const char *s);
/* A figure name from any text: other characters than letters, digits, '_'
 * and '-' become '_'. fig_name_ok: is it one (and at most FIG_NAME_MAX)? */
void fig_name(char *dst, size_t len, const char *src);
bool fig_name_ok(const char *name);
/* A parameter or metric name: a letter or '_', then letters, digits, '_'
 * and '-', at most 63. */
bool plot_ident_ok(const char *s);

#endif
