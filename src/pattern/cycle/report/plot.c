// SPDX-License-Identifier: MIT
/* The figures of -p cycle results: completion time over the run (the worst
 * of each point of cycle_series, xruns marked, the deadline drawn), and
 * each stage's median wait and busy time as a share of the period (what
 * pw-top shows as W/Q and B/Q). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/util.h"
#include "../../../report/plot.h"
#include "out.h"
#include "rec.h"

#define CYC_MAX_CELLS 32

/* A label as one token of a .dat header or row: no blank, quote or
 * control character. */
static void clean_label(const char *in, char *out, size_t len)
{
	size_t j = 0;

	for (size_t i = 0; in[i] && j + 1 < len; i++)
		out[j++] = in[i] == ' ' || (unsigned char)in[i] < 0x20 || in[i] == 0x7f ? '_' :
			   in[i] == '"' || in[i] == '\\' ? '\'' : in[i];
	out[j] = '\0';
}

/* A cell's block (gnuplot: index k): time, worst completion, and the
 * completion again where the point holds an xrun (the deadline where its
 * xruns were late starts only, as on the report's page), else NaN. */
static void dat_points(FILE *dat, const struct rcell *c, struct rcycle_point *pts)
{
	double period = rcell_cycle_period_ns(c), deadline = rcell_cycle_deadline_ns(c);
	struct rcycle_series s = { 0 };
	size_t np = rcell_cycle_series(c, &s) ? rcell_cycle_points(c, pts, s.n) : 0;

	for (size_t i = 0; i < np; i++) {
		double t = (double)i * (double)s.per * period / 1e9;
		double ms = pts[i].max_ns / 1e6;

		if (isnan(ms) && pts[i].xruns && deadline > 0)	/* nothing ran */
			fprintf(dat, "%.6f\tNaN\t%.6f\n", t, deadline / 1e6);
		else if (isnan(ms))
			fprintf(dat, "%.6f\tNaN\tNaN\n", t);
		else
			fprintf(dat, pts[i].xruns ? "%.6f\t%.6f\t%.6f\n" : "%.6f\t%.6f\tNaN\n", t, ms,
				ms);
	}
}

static int fig_completion(struct plot_ctx *ctx, const struct rcell **cells, size_t n)
{
	const char *name = "cycle-completion";
	struct rcycle_point *pts = calloc(RCYCLE_MAX_POINTS, sizeof(*pts));
	FILE *dat, *gp;
	double deadline_ms = 0;

	if (!pts)
		return errf(ctx->err, ctx->errlen, ENOMEM, "out of memory");
	if (fig_open(ctx, name, &dat, &gp)) {
		free(pts);
		return -EIO;
	}
	for (size_t k = 0; k < n; k++) {
		char lab[512], clean[512];

		if (rcell_cycle_deadline_ns(cells[k]) / 1e6 > deadline_ms)
			deadline_ms = rcell_cycle_deadline_ns(cells[k]) / 1e6;
		rcell_label(cells[k], ctx->names, ctx->nnames, NULL, lab, sizeof(lab));
		clean_label(lab, clean, sizeof(clean));
		fprintf(dat, "%s# ", k ? "\n\n" : "");
		dat_text(dat, lab);
		fprintf(dat, "\ntime_s\t%s\txrun\n", clean);
		dat_points(dat, cells[k], pts);
	}
	fig_script_head(ctx, gp, name, "cycle completion time over the run");
	fprintf(gp, "set title \"completion time over the run (worst of each point; x = xrun)\"\n"
		"set xlabel \"time in the window (s)\"\nset ylabel \"completion (ms)\"\n"
		"set logscale y\nset yrange [*:*]\n");
	if (deadline_ms > 0)
		fprintf(gp, "set arrow from graph 0, first %.6f to graph 1, first %.6f nohead dt 2 lc rgb \"red\"\n"
			"set label \"deadline\" at graph 0.01, first %.6f offset 0,0.6 tc rgb \"red\"\n",
			deadline_ms, deadline_ms, deadline_ms);
	fig_script_begin_output(gp, name);
	fprintf(gp, "\tplot for [k=0:%zu] \"%s.dat\" index k using 1:2 with lines lw 1 title columnheader(2), \\\n"
		"\t     for [k=0:%zu] \"\" index k using 1:3 with points pt 2 ps 1 lc rgb \"red\" notitle\n",
		n - 1, name, n - 1);
	fig_script_end_output(gp);
	free(pts);
	return fig_finish(ctx, name, dat, gp);
}

static int fig_stages(struct plot_ctx *ctx, const struct rcell **cells, size_t n)
{
	const char *name = "cycle-stages";
	FILE *dat, *gp;
	if (fig_open(ctx, name, &dat, &gp))
		return -EIO;
	fprintf(dat, "# stage\twait_p50_pct\tbusy_p50_pct\n");
	for (size_t k = 0; k < n; k++) {
		struct rcycle_stage st[RCYCLE_MAX_STAGES];
		size_t ns = rcell_cycle_stages(cells[k], st, ARRAY_SIZE(st));
		char lab[512], clean[512];

		rcell_label(cells[k], ctx->names, ctx->nnames, NULL, lab, sizeof(lab));
		clean_label(lab, clean, sizeof(clean));
		for (size_t i = 0; i < ns; i++)
			fprintf(dat, "%s/stage%zu\t%.6g\t%.6g\n", clean, i + 1, st[i].wait_share_pct,
				st[i].busy_share_pct);
	}
	fig_script_head(ctx, gp, name, "cycle stages: wait and busy per period");
	fprintf(gp, "set title \"each stage's median wait (woken) and busy (processing), %% of the period\"\n"
		"set style data histograms\nset style histogram rowstacked\n"
		"set style fill solid 0.8 border -1\nset boxwidth 0.75\n"
		"set ylabel \"%% of the period\"\nset yrange [0:*]\nset xtics rotate by -45 noenhanced\n");
	fig_script_begin_output(gp, name);
	fprintf(gp, "\tplot \"%s.dat\" using 2:xtic(1) title \"wait p50\", \"\" using 3 title \"busy p50\"\n",
		name);
	fig_script_end_output(gp);
	return fig_finish(ctx, name, dat, gp);
}

int fig_cycle(struct plot_ctx *ctx)
{
	const struct rcell *cells[CYC_MAX_CELLS];
	size_t n = 0;
	int ret;

	for (size_t k = 0; k < ctx->rf->n && n < CYC_MAX_CELLS; k++)
		if (rcell_is_cycle(&ctx->rf->cells[k]))
			cells[n++] = &ctx->rf->cells[k];
	if (!n)
		return 0;
	ret = fig_completion(ctx, cells, n);
	return ret ? ret : fig_stages(ctx, cells, n);
}
