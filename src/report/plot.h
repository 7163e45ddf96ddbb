/* SPDX-License-Identifier: MIT */
/* ipclab plot: figures from a result file, each as NAME.dat (the numbers),
 * NAME.gp (the gnuplot script that draws them) and NAME.png/NAME.svg. */
#ifndef IPCLAB_REPORT_PLOT_H
#define IPCLAB_REPORT_PLOT_H

#include <stdio.h>

#include "rfile.h"

#define PLOT_MAX_PIVOTS 8

struct plot_pivot {
	char row[64], col[64], metric[64];	/* parameter, parameter, metric key */
};

struct plot_opts {
	unsigned width, height;			/* pixels of every figure */
	struct plot_pivot pivots[PLOT_MAX_PIVOTS];
	unsigned npivots;
	FILE *list;				/* names of the files written, or NULL */
};

/* Figures in progress: the directory and what has been written. */
struct plot_ctx {
	const struct plot_opts *o;
	const char *dir;
	const struct rfile *rf;
	const char *names[64];			/* parameters that tell cells apart */
	size_t nnames;
	unsigned nfigs;
	char *err;
	size_t errlen;
};

/* The package that brings gnuplot, for messages. */
#define GNUPLOT_PKG "gnuplot-nox"

/* Every figure of a result file into dir (created if missing): 0, -ENOENT
 * or -EINVAL (bad input: the file, a pivot, no gnuplot), or another -errno
 * (plotting failed); why in err. */
int plot_file(const char *json_path, const char *dir, struct plot_opts *o, char *err,
	      size_t errlen);

/* "ROW,COL,METRIC" (run --pivot's syntax). */
int plot_parse_pivot(const char *spec, struct plot_pivot *pv, char *err, size_t errlen);

/* The figures (plot_fig.c); each returns 0, or -errno with ctx->err
 * filled; a figure the file has no data for is skipped (0). */
int fig_latency(struct plot_ctx *ctx);
int fig_throughput(struct plot_ctx *ctx);
int fig_cpu(struct plot_ctx *ctx);
int fig_heatmap(struct plot_ctx *ctx, const struct plot_pivot *pv);
/* -p cycle: completion over the run and the stages' wait and busy
 * (plot_cycle.c); 0 when the file has no cycle result. */
int fig_cycle(struct plot_ctx *ctx);
/* --pin matrix's CPU x CPU heatmap (plot_matrix.c); 0 when the file has none. */
int fig_matrix(struct plot_ctx *ctx);
/* -EINVAL when no result has the pivot's parameters or metric. */
int fig_check_pivot(struct plot_ctx *ctx, const struct plot_pivot *pv);

/* Open DIR/NAME.dat and DIR/NAME.gp for writing (plot.c). */
int fig_open(struct plot_ctx *ctx, const char *name, FILE **dat, FILE **gp);
/* The script's head: comments, size, data format; and the loop that
 * draws into NAME.png and NAME.svg around the plot commands. */
void fig_script_head(const struct plot_ctx *ctx, FILE *gp, const char *name, const char *what);
void fig_script_begin_output(FILE *gp, const char *name);
void fig_script_end_output(FILE *gp);
/* Close both files and run gnuplot on NAME.gp in the directory. */
int fig_finish(struct plot_ctx *ctx, const char *name, FILE *dat, FILE *gp);

#endif
