// SPDX-License-Identifier: MIT
/* The figures of ipclab plot: those of figure.c (latency, throughput, CPU
 * time; the same the HTML page draws), written by fig_gnuplot.c, and
 * heatmaps of a metric over two parameters (--pivot), which only plot
 * draws. Each writes its numbers to NAME.dat and a script that reads only
 * them to NAME.gp (plot.c runs it). Labels are the result file's text:
 * quoted with gp_quote in scripts. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/util.h"
#include "figure.h"
#include "plot.h"

#define GRID_MAX 64
#define LABEL_LEN 160

/* Is name shown by the axis skip? server_cpu and client_cpu come from pin. */
static bool on_axis(const char *name, const char *skip)
{
	if (!skip)
		return false;
	if (!strcmp(name, "pin") && (!strcmp(skip, "server_cpu") || !strcmp(skip, "client_cpu")))
		return true;
	return !strcmp(name, skip);
}

/* The cell's label without the parameters a figure shows on an axis;
 * fallback when nothing else tells cells apart. */
static void label_of(const struct plot_ctx *ctx, const struct rcell *c, const char *skip,
		     const char *skip2, const char *fallback, char *buf, size_t len)
{
	const char *names[64];
	size_t n = 0;

	for (size_t i = 0; i < ctx->nnames; i++)
		if (!on_axis(ctx->names[i], skip) && !on_axis(ctx->names[i], skip2))
			names[n++] = ctx->names[i];
	rcell_label(c, names, n, NULL, buf, len);
	if (!buf[0])
		snprintf(buf, len, "%s", fallback);
}

/* ---- a grid: rows x columns of one number ------------------------------------------ */

struct grid {
	char rows[GRID_MAX][LABEL_LEN], cols[GRID_MAX][LABEL_LEN];
	size_t nr, nc;
	double v[GRID_MAX][GRID_MAX];
};

static struct grid *grid_new(void)
{
	struct grid *g = calloc(1, sizeof(*g));

	for (size_t r = 0; g && r < GRID_MAX; r++)
		for (size_t c = 0; c < GRID_MAX; c++)
			g->v[r][c] = NAN;
	return g;
}

static long grid_index(char (*keys)[LABEL_LEN], size_t *n, const char *key)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(keys[i], key))
			return (long)i;
	if (*n == GRID_MAX)
		return -1;
	snprintf(keys[*n], LABEL_LEN, "%s", key);
	return (long)(*n)++;
}

/* The first value of a (row, column) stays: the file's first cell. */
static int grid_set(struct grid *g, const char *row, const char *col, double v)
{
	long r = grid_index(g->rows, &g->nr, row), c = grid_index(g->cols, &g->nc, col);

	if (r < 0 || c < 0)
		return -E2BIG;
	if (isnan(g->v[r][c]))
		g->v[r][c] = v;
	return 0;
}

static bool all_numeric(char (*keys)[LABEL_LEN], size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *end;

		strtod(keys[i], &end);
		if (end == keys[i] || *end)
			return false;
	}
	return n > 0;
}

/* Numbers in numeric order (sizes, CPU numbers); names as first seen. */
static void grid_sort(struct grid *g)
{
	bool rows = all_numeric(g->rows, g->nr), cols = all_numeric(g->cols, g->nc);

	for (size_t i = 1; rows && i < g->nr; i++)
		for (size_t j = i; j > 0 && strtod(g->rows[j - 1], NULL) > strtod(g->rows[j], NULL); j--) {
			char t[LABEL_LEN];
			double tv[GRID_MAX];

			memcpy(t, g->rows[j], LABEL_LEN);
			memcpy(g->rows[j], g->rows[j - 1], LABEL_LEN);
			memcpy(g->rows[j - 1], t, LABEL_LEN);
			memcpy(tv, g->v[j], sizeof(tv));
			memcpy(g->v[j], g->v[j - 1], sizeof(tv));
			memcpy(g->v[j - 1], tv, sizeof(tv));
		}
	for (size_t i = 1; cols && i < g->nc; i++)
		for (size_t j = i; j > 0 && strtod(g->cols[j - 1], NULL) > strtod(g->cols[j], NULL); j--) {
			char t[LABEL_LEN];

			memcpy(t, g->cols[j], LABEL_LEN);
			memcpy(g->cols[j], g->cols[j - 1], LABEL_LEN);
			memcpy(g->cols[j - 1], t, LABEL_LEN);
			for (size_t r = 0; r < g->nr; r++) {
				double tv = g->v[r][j];

				g->v[r][j] = g->v[r][j - 1];
				g->v[r][j - 1] = tv;
			}
		}
}

static void grid_write(FILE *dat, const struct grid *g, const char *corner)
{
	fprintf(dat, "%s", corner);
	for (size_t c = 0; c < g->nc; c++) {
		fputc('\t', dat);
		dat_text(dat, g->cols[c]);
	}
	fputc('\n', dat);
	for (size_t r = 0; r < g->nr; r++) {
		dat_text(dat, g->rows[r]);
		for (size_t c = 0; c < g->nc; c++)
			fprintf(dat, isnan(g->v[r][c]) ? "\tNaN" : "\t%.6g", g->v[r][c]);
		fputc('\n', dat);
	}
}

static int too_many(struct plot_ctx *ctx, const char *what)
{
	return errf(ctx->err, ctx->errlen, E2BIG, "%s: more than %d distinct values; plot a smaller file",
		    what, GRID_MAX);
}

/* ---- the figures of figure.c ------------------------------------------------------ */

/* Figures first .. last of figure.h's list, from every cell of the file. */
static int draw_figures(struct plot_ctx *ctx, enum fig_id first, enum fig_id last)
{
	const struct rcell **cells = calloc(ctx->rf->n + 1, sizeof(*cells));
	struct figure *f = malloc(sizeof(*f));
	int ret = 0;

	if (!cells || !f) {
		free(cells);
		free(f);
		return errf(ctx->err, ctx->errlen, ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < ctx->rf->n; i++)
		cells[i] = &ctx->rf->cells[i];
	struct fig_in in = { .rf = ctx->rf, .cells = cells, .n = ctx->rf->n };

	for (unsigned id = first; !ret && id <= last; id++) {
		ret = figure_build(f, id, &in);
		if (ret)
			ret = errf(ctx->err, ctx->errlen, -ret, "out of memory");
		else
			ret = fig_gnuplot(ctx, f);
		figure_free(f);
	}
	free(f);
	free(cells);
	return ret;
}

int fig_latency(struct plot_ctx *ctx)
{
	return draw_figures(ctx, FIG_PCT_RTT, FIG_HIST_ONE_WAY);
}

int fig_throughput(struct plot_ctx *ctx)
{
	return draw_figures(ctx, FIG_THROUGHPUT, FIG_MSGRATE);
}

/* CPU time per message, and any figure figure.h lists after it. */
int fig_cpu(struct plot_ctx *ctx)
{
	return draw_figures(ctx, FIG_CPU, FIG_COUNT - 1);
}

/* ---- heatmaps ------------------------------------------------------------------------ */

/* A message size as written by ipclab: digits only (the axis is numeric). */
static bool is_count(const char *s)
{
	return s[0] && strspn(s, "0123456789") == strlen(s) && strlen(s) < 20;
}

/* One heatmap's grid over the ok cells of one group (their label without
 * the two parameters): row = a parameter's value, column = the other's,
 * value = metric. */
static int fill_grid(struct plot_ctx *ctx, struct grid *g, const char *row_param,
		     const char *metric, const char *skip2, const char *group)
{
	for (size_t i = 0; i < ctx->rf->n; i++) {
		const struct rcell *c = &ctx->rf->cells[i];
		char row[LABEL_LEN], col[LABEL_LEN], grp[LABEL_LEN];
		double v = rcell_metric(c, metric);

		if (!c->ok || isnan(v) || rcell_param(c, row_param, row, sizeof(row)))
			continue;
		if (!strcmp(row_param, "size_bytes") && !is_count(row))
			continue;
		label_of(ctx, c, row_param, skip2, "", grp, sizeof(grp));
		if (strcmp(grp, group) || rcell_param(c, skip2, col, sizeof(col)))
			continue;
		if (grid_set(g, row, col, v))
			return too_many(ctx, row_param);
	}
	grid_sort(g);
	return 0;
}

static int heatmap_one(struct plot_ctx *ctx, const struct plot_pivot *pv, const char *group,
		       const char *name)
{
	struct grid *g = grid_new();
	char title[512];
	FILE *dat, *gp;
	int ret = g ? fill_grid(ctx, g, pv->row, pv->metric, pv->col, group) :
		      errf(ctx->err, ctx->errlen, ENOMEM, "out of memory");

	if (ret || fig_open(ctx, name, &dat, &gp)) {
		free(g);
		return ret ? ret : -EIO;
	}
	fprintf(dat, "# ");
	snprintf(title, sizeof(title), "%s: rows %s, columns %s%s%s", pv->metric, pv->row, pv->col,
		 group[0] ? ", cells " : "", group);
	dat_text(dat, title);
	fputc('\n', dat);
	grid_write(dat, g, "row\\col");
	fig_script_head(ctx, gp, name, "heatmap");
	snprintf(title, sizeof(title), "%s over %s x %s%s%s", pv->metric, pv->row, pv->col,
		 group[0] ? ": " : "", group);
	fprintf(gp, "set title ");
	gp_quote(gp, title);
	fprintf(gp, "\nset xlabel ");
	gp_quote(gp, pv->col);
	fprintf(gp, "\nset ylabel ");
	gp_quote(gp, pv->row);
	fprintf(gp, "\nunset grid\nset key off\n"
		"set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 '#21918c', 0.75 '#5ec962', 1 '#fde725')\n"
		"set cblabel ");
	gp_quote(gp, pv->metric);
	fprintf(gp, "\nset style textbox opaque noborder\n");
	fig_script_begin_output(gp, name);
	fprintf(gp, "\tplot \"%s.dat\" matrix rowheaders columnheaders using 1:2:3 with image, \\\n"
		"\t     \"\" matrix rowheaders columnheaders using 1:2:($3 != $3 ? \"\" : abs($3) >= 1000 ? sprintf(\"%%.0f\", $3) : sprintf(\"%%.3g\", $3)) with labels boxed\n",
		name);
	fig_script_end_output(gp);
	free(g);
	return fig_finish(ctx, name, dat, gp);
}

/* Does any ok cell have this parameter (or metric)? */
static bool have_param(const struct plot_ctx *ctx, const char *name, bool metric)
{
	for (size_t i = 0; i < ctx->rf->n; i++) {
		char v[64];

		if (ctx->rf->cells[i].ok &&
		    (metric ? !isnan(rcell_metric(&ctx->rf->cells[i], name)) :
			      !rcell_param(&ctx->rf->cells[i], name, v, sizeof(v))))
			return true;
	}
	return false;
}

int fig_check_pivot(struct plot_ctx *ctx, const struct plot_pivot *pv)
{
	for (int k = 0; k < 3; k++) {
		const char *p = k == 0 ? pv->row : k == 1 ? pv->col : pv->metric;

		if (!have_param(ctx, p, k == 2))
			return errf(ctx->err, ctx->errlen, EINVAL, "--pivot %s,%s,%s: no result in %s has %s '%s'",
				    pv->row, pv->col, pv->metric, ctx->rf->path,
				    k == 2 ? "a metric" : "a parameter", p);
	}
	return 0;
}

/* One heatmap per combination of the other parameters that vary. */
int fig_heatmap(struct plot_ctx *ctx, const struct plot_pivot *pv)
{
	char (*groups)[LABEL_LEN] = calloc(GRID_MAX, LABEL_LEN), base[224];
	size_t ng = 0;
	int ret = 0;

	if (!groups)
		return errf(ctx->err, ctx->errlen, ENOMEM, "out of memory");
	for (size_t i = 0; i < ctx->rf->n; i++) {
		char grp[LABEL_LEN];

		if (!ctx->rf->cells[i].ok)
			continue;
		label_of(ctx, &ctx->rf->cells[i], pv->row, pv->col, "", grp, sizeof(grp));
		if (grid_index(groups, &ng, grp) < 0) {
			free(groups);
			return too_many(ctx, "--pivot: other parameters");
		}
	}
	snprintf(base, sizeof(base), "heatmap-%s-%s-%s", pv->row, pv->col, pv->metric);
	for (size_t gi = 0; !ret && gi < ng; gi++) {
		char name[240], word[FIG_NAME_MAX - 8];

		fig_name(word, sizeof(word), base);
		if (ng > 1)
			snprintf(name, sizeof(name), "%s-%zu", word, gi + 1);
		else
			snprintf(name, sizeof(name), "%s", word);
		ret = heatmap_one(ctx, pv, groups[gi], name);
	}
	free(groups);
	return ret;
}
