// SPDX-License-Identifier: MIT
/* The CPU x CPU heatmap of a --pin matrix result file: one figure per
 * group of cells that differ only in their pin, rows the server's CPU and
 * columns the client's, both in the file's topology order (matrix.cpus),
 * each square labelled with its value and its pair's class mark. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/report.h"
#include "ipclab/util.h"
#include "rec_matrix.h"
#include "plot.h"

#define MX_GROUPS 32

/* One heatmap: its values in topology order, then the gnuplot script with
 * the class marks (the script is most of its length). */
static int matrix_one(struct plot_ctx *ctx, const struct rmatrix *m, const char *group,
		      const char *name)
{
	double (*v)[RMATRIX_MAX_CPUS] = malloc(sizeof(double[RMATRIX_MAX_CPUS][RMATRIX_MAX_CPUS]));
	const char *metric = m->metric;
	const long *cpus = m->cpus;
	size_t n = m->ncpus;
	char title[512];
	FILE *dat, *gp;

	if (!v)
		return errf(ctx->err, ctx->errlen, ENOMEM, "out of memory");
	for (size_t i = 0; i < RMATRIX_MAX_CPUS; i++)
		for (size_t j = 0; j < RMATRIX_MAX_CPUS; j++)
			v[i][j] = NAN;
	for (size_t k = 0; k < ctx->rf->n; k++) {
		const struct rcell *c = &ctx->rf->cells[k];
		char s[32], cl[32], lab[512];
		int i, j;

		if (!c->ok || rcell_param(c, "server_cpu", s, sizeof(s)) ||
		    rcell_param(c, "client_cpu", cl, sizeof(cl)))
			continue;
		rcell_label(c, ctx->names, ctx->nnames, "pin", lab, sizeof(lab));
		i = rmatrix_cpu_at(m, s);
		j = rmatrix_cpu_at(m, cl);
		if (i >= 0 && j >= 0 && !strcmp(lab, group))
			v[i][j] = rcell_metric(c, metric);
	}
	if (fig_open(ctx, name, &dat, &gp)) {
		free(v);
		return -EIO;
	}
	fprintf(dat, "# %s: rows server CPU, columns client CPU, in topology order%s", metric,
		group[0] ? "; cells " : "");
	dat_text(dat, group);
	fputc('\n', dat);
	fprintf(dat, "server\\client");
	for (size_t j = 0; j < n; j++)
		fprintf(dat, "\t%ld", cpus[j]);
	fputc('\n', dat);
	for (size_t i = 0; i < n; i++) {
		fprintf(dat, "%ld", cpus[i]);
		for (size_t j = 0; j < n; j++)
			fprintf(dat, isnan(v[i][j]) ? "\tNaN" : "\t%.6g", v[i][j]);
		fputc('\n', dat);
	}
	fig_script_head(ctx, gp, name, "CPU x CPU matrix");
	snprintf(title, sizeof(title), "%.60s, server CPU x client CPU%s%.400s", metric,
		 group[0] ? ": " : "", group);
	fprintf(gp, "set title ");
	gp_quote(gp, title);
	fprintf(gp, "\nset xlabel \"client CPU\"\nset ylabel \"server CPU\"\nunset grid\nset key off\n"
		"set yrange [] reverse\n"
		"set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 '#21918c', 0.75 '#5ec962', 1 '#fde725')\n"
		"set cblabel ");
	gp_quote(gp, metric);
	fprintf(gp, "\nset style textbox opaque noborder\n");
	/* the class marks, one array per row: = same CPU, s SMT, l LLC, o other LLC, n node */
	fprintf(gp, "# pair classes: = same CPU, s SMT sibling, l same LLC, o other LLC, n other node\n"
		"array cls[%zu]\n", n * n);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			fprintf(gp, "cls[%zu] = \"%s\"\n", i * n + j + 1, rmatrix_mark(m, i, j));
	fig_script_begin_output(gp, name);
	fprintf(gp, "\tplot \"%s.dat\" matrix rowheaders columnheaders using 1:2:3 with image, \\\n"
		"\t     \"\" matrix rowheaders columnheaders using 1:2:($3 != $3 ? \"\" : "
		"(abs($3) >= 1000 ? sprintf(\"%%.0f\", $3) : sprintf(\"%%.3g\", $3)) . cls[int($2) * %zu + int($1) + 1]) with labels boxed\n",
		name, n);
	fig_script_end_output(gp);
	free(v);
	return fig_finish(ctx, name, dat, gp);
}

/* matrix.metric names a metric ipclab writes: it is part of file names. */
int fig_check_matrix(struct plot_ctx *ctx)
{
	struct rmatrix m;

	if (rfile_matrix(ctx->rf, &m) && m.metric && !field_find(m.metric))
		return errf(ctx->err, ctx->errlen, EINVAL, "%s: matrix.metric '%.60s' is not a metric ipclab writes; is the file damaged?",
			    ctx->rf->path, m.metric);
	return 0;
}

/* One figure per group of cells that differ only in their pin. */
static int matrix_groups(struct plot_ctx *ctx, const struct rmatrix *m)
{
	char groups[MX_GROUPS][512], name[112], word[80];
	size_t ng = 0;
	int ret = 0;

	for (size_t k = 0; k < ctx->rf->n; k++) {
		char lab[512];
		size_t g = 0;

		if (!ctx->rf->cells[k].ok)
			continue;
		rcell_label(&ctx->rf->cells[k], ctx->names, ctx->nnames, "pin", lab, sizeof(lab));
		while (g < ng && strcmp(groups[g], lab))
			g++;
		if (g == ng && ng < MX_GROUPS)
			snprintf(groups[ng++], sizeof(groups[0]), "%s", lab);
	}
	fig_name(word, sizeof(word), m->metric);
	for (size_t g = 0; !ret && g < ng; g++) {
		if (ng > 1)
			snprintf(name, sizeof(name), "matrix-%s-%zu", word, g + 1);
		else
			snprintf(name, sizeof(name), "matrix-%s", word);
		ret = matrix_one(ctx, m, groups[g], name);
	}
	return ret;
}

int fig_matrix(struct plot_ctx *ctx)
{
	struct rmatrix m;

	if (!rfile_matrix(ctx->rf, &m))
		return 0;
	if (!m.ncpus || !m.metric)
		return errf(ctx->err, ctx->errlen, EINVAL, "%s: the \"matrix\" object has no cpus or metric",
			    ctx->rf->path);
	return matrix_groups(ctx, &m);
}
