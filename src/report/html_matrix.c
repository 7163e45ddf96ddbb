// SPDX-License-Identifier: MIT
/* --pin matrix in the HTML report: the CPU x CPU heatmap of a matrix
 * file, a square per ordered pair with its value and the pair's class on
 * hover. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/util.h"
#include "html_svg.h"
#include "rec_matrix.h"

#define MX_GROUPS 32

struct mx {
	const struct rfile *rf;
	struct rmatrix mx;
	char names[RMATRIX_MAX_CPUS][16];
	const char *np[RMATRIX_MAX_CPUS];
	const char *lnames[64];
	size_t nl;
};

static void matrix_one(struct html *h, const struct mx *m, const char *group)
{
	size_t n = m->mx.ncpus;
	double *v = malloc(sizeof(double) * n * n);
	const char **marks = calloc(n * n, sizeof(*marks));
	char title[640];

	for (size_t i = 0; v && marks && i < n * n; i++)
		v[i] = NAN;
	for (size_t k = 0; v && marks && k < m->rf->n; k++) {
		const struct rcell *c = &m->rf->cells[k];
		char s[32], cl[32], lab[512];
		int i, j;

		if (!c->ok || rcell_param(c, "server_cpu", s, sizeof(s)) ||
		    rcell_param(c, "client_cpu", cl, sizeof(cl)))
			continue;
		rcell_label(c, m->lnames, m->nl, "pin", lab, sizeof(lab));
		i = rmatrix_cpu_at(&m->mx, s);
		j = rmatrix_cpu_at(&m->mx, cl);
		if (i < 0 || j < 0 || strcmp(lab, group))
			continue;
		v[(size_t)i * n + (size_t)j] = rcell_metric(c, m->mx.metric);
		marks[(size_t)i * n + (size_t)j] = rmatrix_mark(&m->mx, (size_t)i, (size_t)j);
	}
	snprintf(title, sizeof(title), "%.60s, server CPU x client CPU%s%.500s", m->mx.metric,
		 group[0] ? ": " : "", group);
	struct svg_heat c = {
		.title = title, .xlabel = "client CPU", .ylabel = "server CPU", .rows = m->np,
		.cols = m->np, .nr = n, .nc = n, .v = v, .marks = marks,
		.fd = field_find(m->mx.metric),
		.caption = "in topology order; marks: = same CPU, s SMT sibling, l same LLC, o other LLC, n other node",
	};

	if (v && marks)
		svg_heat(h, &c);
	free(v);
	free(marks);
}

void html_matrix(struct html *h, const struct rfile *rf)
{
	const struct rfile *files[1] = { rf };
	char groups[MX_GROUPS][512];
	struct mx *m = calloc(1, sizeof(*m));
	size_t ng = 0;

	if (!m || !rfile_matrix(rf, &m->mx) || !m->mx.metric) {
		free(m);
		return;
	}
	m->rf = rf;
	for (size_t i = 0; i < m->mx.ncpus; i++) {
		snprintf(m->names[i], sizeof(m->names[0]), "%ld", m->mx.cpus[i]);
		m->np[i] = m->names[i];
	}
	m->nl = rf_varying(files, 1, false, m->lnames, ARRAY_SIZE(m->lnames));
	for (size_t k = 0; k < rf->n; k++) {
		char lab[512];
		size_t g = 0;

		if (!rf->cells[k].ok)
			continue;
		rcell_label(&rf->cells[k], m->lnames, m->nl, "pin", lab, sizeof(lab));
		while (g < ng && strcmp(groups[g], lab))
			g++;
		if (g == ng && ng < MX_GROUPS)
			snprintf(groups[ng++], sizeof(groups[0]), "%s", lab);
	}
	if (m->mx.ncpus)
		fputs("<section class=\"matrix\"><h3>CPU x CPU matrix</h3>\n", h->f);
	for (size_t g = 0; m->mx.ncpus && g < ng; g++)
		matrix_one(h, m, groups[g]);
	if (m->mx.ncpus)
		fputs("</section>\n", h->f);
	free(m);
}
