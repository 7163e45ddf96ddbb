// SPDX-License-Identifier: MIT
/* --pin matrix's CPU x CPU heatmaps, computed once for both back ends
 * (figure.h): a figure per group of cells that differ only in their pin
 * (the label of what else varies), rows the server's CPU and columns the
 * client's in the file's topology order (matrix.cpus), each square the
 * matrix metric of its pair, its text that value in the field table's
 * unit with the pair's topology mark, "-" where the pair has no value
 * (failed, or not run). The colour scale runs from the lowest value of the
 * figure to its highest. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/topology.h"
#include "ipclab/util.h"
#include "fields.h"
#include "figure.h"
#include "plot.h"
#include "rec_matrix.h"

#define MX_GROUPS 32
#define MX_LABEL 512

/* viridis at five stops */
const unsigned char fig_stops[FIG_STOPS][3] = {
	{ 0x44, 0x01, 0x54 }, { 0x3b, 0x52, 0x8b }, { 0x21, 0x91, 0x8c },
	{ 0x5e, 0xc9, 0x62 }, { 0xfd, 0xe7, 0x25 },
};

void fig_colour(const struct figure *f, double v, char *buf, size_t len)
{
	double t = f->z.hi > f->z.lo ? (v - f->z.lo) / (f->z.hi - f->z.lo) : 0.5;
	double x = fmin(fmax(t, 0), 1) * (FIG_STOPS - 1);
	int i = x >= FIG_STOPS - 1 ? FIG_STOPS - 2 : (int)x, rgb[3];

	if (!isfinite(v)) {
		snprintf(buf, len, "%s", FIG_NO_COLOUR);
		return;
	}
	for (int k = 0; k < 3; k++)
		rgb[k] = (int)lround(fig_stops[i][k] +
				     (fig_stops[i + 1][k] - fig_stops[i][k]) * (x - i));
	snprintf(buf, len, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

void figure_free_n(struct figure *figs, size_t n)
{
	for (size_t i = 0; figs && i < n; i++)
		figure_free(&figs[i]);
	free(figs);
}

/* What a matrix figure is made from: the file, its matrix, the
 * parameters that tell its cells apart (less the pin: the squares). */
struct mx_in {
	const struct rfile *rf;
	struct rmatrix m;
	const char *names[64];
	size_t nnames;
};

/* The colour scale's axis: the metric in the field table's unit, one
 * fixed unit for a back end that has no other (us, MB/s). */
static void z_axis(struct fig_axis *z, const char *metric)
{
	const struct field *fd = field_find(metric);

	*z = (struct fig_axis){ .label = fd ? fd->label : metric, .key = metric, .fd = fd };
	if (fd && fd->unit == U_NS)
		z->per = 1e3, z->unit = "us";
	else if (fd && fd->unit == U_BYTES_PER_S)
		z->per = 1e6, z->unit = "MB/s";
	else if (fd && fd->unit == U_PCT)
		z->unit = "%";
}

static int grid_alloc(struct fig_grid *g, size_t n)
{
	g->nr = g->nc = n;
	g->rows = calloc(n, sizeof(*g->rows));
	g->cols = calloc(n, sizeof(*g->cols));
	g->v = malloc(n * n * sizeof(*g->v));
	g->text = calloc(n * n, sizeof(*g->text));
	g->tip = calloc(n * n, sizeof(*g->tip));
	if (!g->rows || !g->cols || !g->v || !g->text || !g->tip)
		return -ENOMEM;
	for (size_t i = 0; i < n * n; i++)
		g->v[i] = NAN;
	return 0;
}

/* Each square's text and hover text, and the colour scale's ends. */
static void squares_text(struct figure *f, const struct rmatrix *m)
{
	struct fig_grid *g = &f->grid;

	f->z.lo = INFINITY;
	f->z.hi = -INFINITY;
	for (size_t i = 0; i < g->nr; i++)
		for (size_t j = 0; j < g->nc; j++) {
			size_t k = i * g->nc + j;
			unsigned cls = m->cls[i][j];
			const char *name = cls ? topo_class_name((enum topo_class)(cls - 1)) : "";
			char t[FIG_CELL] = "-";

			if (isfinite(g->v[k])) {
				f->z.lo = fmin(f->z.lo, g->v[k]);
				f->z.hi = fmax(f->z.hi, g->v[k]);
				if (f->z.fd)
					field_human_num(f->z.fd, g->v[k], t, sizeof(t));
				else
					snprintf(t, sizeof(t), "%.4g", g->v[k]);
			}
			snprintf(g->tip[k], sizeof(g->tip[k]), "%s%s%s",
				 isfinite(g->v[k]) ? t : "no value", name[0] ? ", " : "", name);
			snprintf(g->text[k], sizeof(g->text[k]), "%s%s%s", t,
				 isfinite(g->v[k]) && cls ? " " : "",
				 isfinite(g->v[k]) ? rmatrix_mark(m, i, j) : "");
		}
	if (!(f->z.lo <= f->z.hi))
		f->z.lo = f->z.hi = 0;
}

/* The figure of one group of cells (those of rep's configuration, less
 * the pin), number no of ng. */
static int matrix_one(struct figure *f, const struct mx_in *in, const struct rcell *rep, size_t no,
		      size_t ng)
{
	const struct rmatrix *m = &in->m;
	char word[80], group[MX_LABEL];

	memset(f, 0, sizeof(*f));
	rcell_label(rep, in->names, in->nnames, "pin", group, sizeof(group));
	f->kind = FIG_HEAT;
	fig_name(word, sizeof(word), m->metric);
	if (ng > 1)
		snprintf(f->name, sizeof(f->name), "matrix-%.36s-%u", word, (unsigned)no + 1);
	else
		snprintf(f->name, sizeof(f->name), "matrix-%.36s", word);
	snprintf(f->title, sizeof(f->title), "%.60s, server CPU x client CPU%s%.500s", m->metric,
		 group[0] ? ": " : "", group);
	f->caption = "in topology order; marks: = same CPU, s SMT sibling, l same LLC, o other LLC, n other node; - no value";
	f->x = (struct fig_axis){ .label = "client CPU", .key = "client" };
	f->y = (struct fig_axis){ .label = "server CPU", .key = "server" };
	z_axis(&f->z, m->metric);
	if (grid_alloc(&f->grid, m->ncpus))
		return -ENOMEM;
	for (size_t i = 0; i < m->ncpus; i++) {
		snprintf(f->grid.rows[i], sizeof(f->grid.rows[i]), "%ld", m->cpus[i]);
		snprintf(f->grid.cols[i], sizeof(f->grid.cols[i]), "%ld", m->cpus[i]);
	}
	for (size_t k = 0; k < in->rf->n; k++) {
		const struct rcell *c = &in->rf->cells[k];
		char s[32], cl[32];
		int i, j;

		if (!c->ok || rcell_param(c, "server_cpu", s, sizeof(s)) ||
		    rcell_param(c, "client_cpu", cl, sizeof(cl)))
			continue;
		i = rmatrix_cpu_at(m, s);
		j = rmatrix_cpu_at(m, cl);
		if (i >= 0 && j >= 0 && rcell_same_label(c, rep, in->names, in->nnames, "pin"))
			f->grid.v[(size_t)i * m->ncpus + (size_t)j] = rcell_metric(c, m->metric);
	}
	squares_text(f, m);
	return 0;
}

/* The groups: the configurations of the ok cells, less their pin, in file
 * order, each by its first cell; told apart by their whole values (a
 * label is cut to MX_LABEL bytes). */
static size_t groups_of(const struct mx_in *in, const struct rcell **groups)
{
	size_t ng = 0;

	for (size_t k = 0; k < in->rf->n; k++) {
		const struct rcell *c = &in->rf->cells[k];
		size_t g = 0;

		if (!c->ok)
			continue;
		while (g < ng && !rcell_same_label(c, groups[g], in->names, in->nnames, "pin"))
			g++;
		if (g == ng && ng < MX_GROUPS)
			groups[ng++] = c;
	}
	return ng;
}

int figure_matrix(const struct rfile *rf, struct figure **figs, size_t *n)
{
	const struct rfile *files[1] = { rf };
	struct mx_in *in = calloc(1, sizeof(*in));
	const struct rcell **groups = calloc(MX_GROUPS, sizeof(*groups));
	size_t ng;
	int ret = 0;

	*figs = NULL;
	*n = 0;
	if (!in || !groups) {
		ret = -ENOMEM;
		goto out;
	}
	in->rf = rf;
	if (!rfile_matrix(rf, &in->m))
		goto out;
	if (!in->m.ncpus || !in->m.metric) {
		ret = -EINVAL;
		goto out;
	}
	in->nnames = rf_varying(files, 1, false, in->names, ARRAY_SIZE(in->names));
	ng = groups_of(in, groups);
	if (ng && !(*figs = calloc(ng, sizeof(**figs)))) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t g = 0; !ret && g < ng; g++) {
		ret = matrix_one(&(*figs)[g], in, groups[g], g, ng);
		*n = g + 1;
	}
	if (ret) {
		figure_free_n(*figs, *n);
		*figs = NULL;
		*n = 0;
	}
out:
	free(in);
	free(groups);
	return ret;
}
