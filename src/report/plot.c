// SPDX-License-Identifier: MIT
/* `ipclab plot RESULTS.json -o DIR`: figures from a stored result file.
 * Every figure is three files a person can keep working with: NAME.dat (the
 * numbers, tab-separated, a header row), NAME.gp (a gnuplot script that only
 * reads NAME.dat) and the NAME.png and NAME.svg it draws. Each is made in
 * memory, then written and drawn (plot_run.c); the figures themselves are
 * in plot_fig.c. The result file may be anyone's: its names are checked
 * here, its texts quoted where they land (plot_text.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipclab/reporter.h"
#include "ipclab/result.h"
#include "ipclab/util.h"
#include "plot.h"
#include "rec_env.h"

int plot_parse_pivot(const char *spec, struct plot_pivot *pv, char *err, size_t errlen)
{
	char buf[256], *w[4], *save = NULL;
	unsigned n = 0;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (char *t = strtok_r(buf, ",", &save); t && n < 4; t = strtok_r(NULL, ",", &save))
		w[n++] = t;
	if (n != 3)
		return errf(err, errlen, EINVAL, "--pivot %s: expected ROW,COL,METRIC, e.g. --pivot size,pin,cpu_pct_total",
			    spec);
	for (unsigned i = 0; i < 2; i++)
		if (!plot_ident_ok(w[i]))
			return errf(err, errlen, EINVAL, "--pivot %s: '%s' is not a parameter name (letters, digits, _ and -), e.g. size, pin, server_cpu",
				    spec, w[i]);
	if (!field_find(rf_metric_alias(w[2])))
		return errf(err, errlen, EINVAL, "--pivot %s: '%s' is not a metric; see docs/output.md, e.g. cpu_pct_total or p50",
			    spec, w[2]);
	snprintf(pv->row, sizeof(pv->row), "%s", rf_metric_alias(w[0]));
	snprintf(pv->col, sizeof(pv->col), "%s", rf_metric_alias(w[1]));
	snprintf(pv->metric, sizeof(pv->metric), "%s", rf_metric_alias(w[2]));
	return 0;
}

/* gnuplot in PATH, checked before anything is written. */
static bool have_gnuplot(void)
{
	const char *path = getenv("PATH");
	char buf[4096], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path ? path : "/usr/bin:/bin");
	for (char *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		char exe[4200];

		snprintf(exe, sizeof(exe), "%s/gnuplot", *d ? d : ".");
		if (access(exe, X_OK) == 0)
			return true;
	}
	return false;
}

/* ---- figure files --------------------------------------------------------------- */

int fig_open(struct plot_ctx *ctx, const char *name, FILE **dat, FILE **gp)
{
	if (!fig_name_ok(name))
		return errf(ctx->err, ctx->errlen, EINVAL, "figure name '%.40s...' is not one", name);
	ctx->datbuf = ctx->gpbuf = NULL;
	ctx->dat = open_memstream(&ctx->datbuf, &ctx->datlen);
	ctx->gp = ctx->dat ? open_memstream(&ctx->gpbuf, &ctx->gplen) : NULL;
	if (!ctx->gp) {
		if (ctx->dat)
			fclose(ctx->dat);
		free(ctx->datbuf);
		return errf(ctx->err, ctx->errlen, ENOMEM, "out of memory");
	}
	*dat = ctx->dat;
	*gp = ctx->gp;
	return 0;
}

void fig_script_head(const struct plot_ctx *ctx, FILE *gp, const char *name, const char *what)
{
	fprintf(gp, "# ipclab plot: %s\n# from ", what);
	gp_comment(gp, ctx->rf->path);
	fprintf(gp, "; the numbers are in %s.dat (tab-separated, header row).\n"
		"# Restyle freely, then redraw %s.png and %s.svg with: gnuplot %s.gp\n"
		"W = %u\nH = %u\n"
		"set datafile separator \"\\t\"\n"
		"set datafile missing \"NaN\"\n"
		"set grid\n"
		"set key outside right top noenhanced\n",
		name, name, name, name, ctx->o->width, ctx->o->height);
}

/* PNG by cairo where this gnuplot has it (smoother), else libgd. */
void fig_script_begin_output(FILE *gp, const char *name)
{
	fprintf(gp, "do for [fmt in \"png svg\"] {\n"
		"\tif (fmt eq \"svg\") {\n"
		"\t\tset terminal svg size W,H noenhanced background \"white\"\n"
		"\t} else {\n"
		"\t\tif (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n"
		"\t\t\tset terminal pngcairo size W,H noenhanced\n"
		"\t\t} else {\n"
		"\t\t\tset terminal png size W,H noenhanced\n"
		"\t\t}\n"
		"\t}\n"
		"\tset output \"%s.\" . fmt\n", name);
}

void fig_script_end_output(FILE *gp)
{
	fprintf(gp, "\tset output\n}\n");
}

int fig_finish(struct plot_ctx *ctx, const char *name, FILE *dat, FILE *gp)
{
	bool bad = ferror(dat) || ferror(gp);
	int ret;

	bad |= fclose(dat) != 0;
	bad |= fclose(gp) != 0;
	ctx->dat = ctx->gp = NULL;
	if (bad)
		ret = errf(ctx->err, ctx->errlen, ENOMEM, "out of memory writing %s", name);
	else if (ctx->o->emit)
		ret = ctx->o->emit(ctx->o->emit_arg, name, ctx->datbuf, ctx->datlen, ctx->gpbuf,
				   ctx->gplen);
	else
		ret = fig_draw(ctx, name);
	free(ctx->datbuf);
	free(ctx->gpbuf);
	ctx->datbuf = ctx->gpbuf = NULL;
	if (ret)
		return -EIO;
	ctx->nfigs++;
	if (ctx->o->list)
		fprintf(ctx->o->list, "%s/%s.png %s/%s.svg (%s.dat, %s.gp)\n", ctx->dir, name,
			ctx->dir, name, name, name);
	return 0;
}

/* ---- whole files ------------------------------------------------------------------ */

/* The --pivot options of the run that wrote the file, so that a run with
 * --pivot --plot draws its own heatmap. */
static void pivots_from_cmdline(const struct rfile *rf, struct plot_opts *o)
{
	const char *cmd = rfile_cmdline(rf);
	char buf[1024], *save = NULL, err[ERRLEN];
	bool next = false;

	snprintf(buf, sizeof(buf), "%s", cmd ? cmd : "");
	for (char *w = strtok_r(buf, " ", &save); w && o->npivots < PLOT_MAX_PIVOTS;
	     w = strtok_r(NULL, " ", &save)) {
		const char *spec = next ? w : !strncmp(w, "--pivot=", 8) ? w + 8 : NULL;

		next = !strcmp(w, "--pivot");
		if (spec && !plot_parse_pivot(spec, &o->pivots[o->npivots], err, sizeof(err)))
			o->npivots++;
	}
}

static bool any_ok(const struct rfile *rf)
{
	for (size_t i = 0; i < rf->n; i++)
		if (rf->cells[i].ok)
			return true;
	return false;
}

/* What must hold before anything is written: cells that ran, pivots and
 * matrix that name what the file has. */
static int plot_prepare(struct plot_ctx *ctx, struct rfile *rf, struct plot_opts *o)
{
	const struct rfile *files[1] = { rf };
	int ret = 0;

	if (!any_ok(rf))
		return errf(ctx->err, ctx->errlen, EINVAL, "%s: no result ran (all skipped or failed): nothing to plot",
			    rf->path);
	if (!o->npivots)
		pivots_from_cmdline(rf, o);
	ctx->rf = rf;
	ctx->nnames = rf_varying(files, 1, false, ctx->names, ARRAY_SIZE(ctx->names));
	for (unsigned i = 0; !ret && i < o->npivots; i++)
		ret = fig_check_pivot(ctx, &o->pivots[i]);
	return ret ? ret : fig_check_matrix(ctx);
}

static int plot_figures(struct plot_ctx *ctx)
{
	int ret = fig_latency(ctx);

	if (!ret)
		ret = fig_throughput(ctx);
	if (!ret)
		ret = fig_cpu(ctx);
	if (!ret)
		ret = fig_matrix(ctx);
	for (size_t i = 0; !ret && i < n_patterns; i++) {	/* each pattern's own figures */
		const struct pat_report *pr = pat_report_of(patterns[i]);

		if (pr && pr->plot)
			ret = pr->plot(ctx);
	}
	for (unsigned i = 0; !ret && i < ctx->o->npivots; i++)
		ret = fig_heatmap(ctx, &ctx->o->pivots[i]);
	return ret;
}

/* -ENOENT: gnuplot missing; -EINVAL: bad input; others: plotting failed. */
int plot_file(const char *json_path, const char *dir, struct plot_opts *o, char *err,
	      size_t errlen)
{
	struct plot_ctx ctx = { .o = o, .dir = dir, .err = err, .errlen = errlen };
	struct outdir od;
	struct rfile rf;
	int ret;

	if (!have_gnuplot())
		return errf(err, errlen, ENOENT, "gnuplot not found in PATH; install it: apt-get install %s",
			    GNUPLOT_PKG);
	ret = rfile_load(&rf, json_path, NULL, err, errlen);
	if (ret)
		return -EINVAL;
	ret = plot_prepare(&ctx, &rf, o) ? -EINVAL : 0;
	if (!ret && outdir_open(&od, "-o", dir, err, errlen))
		ret = -EINVAL;
	if (!ret) {
		ctx.od = &od;
		ret = plot_figures(&ctx);
		outdir_close(&od);
	}
	rfile_free(&rf);
	return ret;
}

int plot_scripts(const char *name, const char *text, size_t len, struct plot_opts *o, char *err,
		 size_t errlen)
{
	struct plot_ctx ctx = { .o = o, .dir = name, .err = err, .errlen = errlen };
	struct rfile rf;
	int ret;

	if (!o->emit)
		return errf(err, errlen, EINVAL, "plot_scripts: no emit");
	ret = rfile_load_text(&rf, name, text, len, NULL, err, errlen);
	if (ret)
		return ret;
	ret = plot_prepare(&ctx, &rf, o);
	if (!ret)
		ret = plot_figures(&ctx);
	rfile_free(&rf);
	return ret;
}

int plot_report_file(const char *json_path, const char *dir, char *err, size_t errlen)
{
	struct plot_opts o = { .width = 1000, .height = 600 };

	return plot_file(json_path, dir, &o, err, errlen);
}
