// SPDX-License-Identifier: MIT
/* --pivot ROW,COL,METRIC: one metric laid out over two swept parameters,
 * rows x columns, the way seed 001 tabulated CPU % over write size x think.
 * Any field of the field table can be a row, a column or the metric. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ipclab/reporter.h"
#include "ipclab/result.h"
#include "ipclab/util.h"
#include "fields.h"
#include "rfile.h"

#define PV_MAX 64
#define PV_LEN 32

struct pivot {
	const struct field *row, *col, *metric;
	char rows[PV_MAX][PV_LEN], cols[PV_MAX][PV_LEN];
	unsigned nrows, ncols;
	const struct result *cell[PV_MAX][PV_MAX];
	bool several;
};

/* a key of the field table, or one of the short names plot and compare take */
static const struct field *field_by_key(const char *key)
{
	return field_find(rf_metric_alias(key));
}

int pivot_parse(const char *spec, const struct field **f, char *err, size_t errlen)
{
	char buf[128], *save = NULL, *tok;
	unsigned n = 0;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == 3)
			return errf(err, errlen, EINVAL, "--pivot %s: expected ROW,COL,METRIC", spec);
		f[n] = field_by_key(tok);
		if (!f[n++])
			return errf(err, errlen, EINVAL,
				    "--pivot %s: no field '%s'; use a key of docs/output.md, e.g. size,think,cpu_pct",
				    spec, tok);
	}
	if (n != 3)
		return errf(err, errlen, EINVAL, "--pivot %s: expected ROW,COL,METRIC, e.g. size,think,cpu_pct",
			    spec);
	return 0;
}

static unsigned slot(char (*vals)[PV_LEN], unsigned *n, const char *v)
{
	for (unsigned i = 0; i < *n; i++)
		if (!strcmp(vals[i], v))
			return i;
	if (*n == PV_MAX)
		return PV_MAX;
	snprintf(vals[*n], PV_LEN, "%s", v);
	return (*n)++;
}

static void pivot_build(struct pivot *pv, const struct report *rep)
{
	for (size_t i = 0; i < rep->n; i++) {
		const struct result *r = &rep->results[i];
		char rv[PV_LEN], cv[PV_LEN];

		field_human(pv->row, r, rv, sizeof(rv));
		field_human(pv->col, r, cv, sizeof(cv));
		unsigned a = slot(pv->rows, &pv->nrows, rv), b = slot(pv->cols, &pv->ncols, cv);

		if (a == PV_MAX || b == PV_MAX)
			continue;
		if (pv->cell[a][b])
			pv->several = true;
		else
			pv->cell[a][b] = r;
	}
}

static void cell_text(const struct pivot *pv, unsigned a, unsigned b, char *buf, size_t len,
		      bool human)
{
	const struct result *r = pv->cell[a][b];

	if (!r)
		snprintf(buf, len, human ? "-" : "");
	else if (human)
		field_human(pv->metric, r, buf, len);
	else
		field_text(pv->metric, r, buf, len);
}

static void pivot_table(FILE *f, const struct pivot *pv, bool markdown)
{
	char v[PV_LEN];

	char corner[PV_LEN * 2];

	snprintf(corner, sizeof(corner), "%s \\ %s", pv->row->label, pv->col->label);
	fprintf(f, markdown ? "| %s |" : "%14s", corner);
	for (unsigned b = 0; b < pv->ncols; b++)
		fprintf(f, markdown ? " %s |" : " %9s", pv->cols[b]);
	fputc('\n', f);
	if (markdown) {
		fputs("|---|", f);
		for (unsigned b = 0; b < pv->ncols; b++)
			fputs("---:|", f);
		fputc('\n', f);
	}
	for (unsigned a = 0; a < pv->nrows; a++) {
		if (markdown)
			fprintf(f, "| %s |", pv->rows[a]);
		else
			fprintf(f, "%13s:", pv->rows[a]);
		for (unsigned b = 0; b < pv->ncols; b++) {
			cell_text(pv, a, b, v, sizeof(v), true);
			fprintf(f, markdown ? " %s |" : " %9s", v);
		}
		fputc('\n', f);
	}
	fprintf(f, "%s%s (%s) by %s (rows) and %s (columns)%s\n", markdown ? "\n" : "",
		pv->metric->label, pv->metric->key, pv->row->key, pv->col->key,
		pv->several ? "; other parameters vary too: each cell shows the first result" : "");
}

static void pivot_csv(FILE *f, const struct pivot *pv)
{
	char v[PV_LEN];

	fprintf(f, "%s\\%s", pv->row->key, pv->col->key);
	for (unsigned b = 0; b < pv->ncols; b++)
		fprintf(f, ",%s", pv->cols[b]);
	fputc('\n', f);
	for (unsigned a = 0; a < pv->nrows; a++) {
		fprintf(f, "%s", pv->rows[a]);
		for (unsigned b = 0; b < pv->ncols; b++) {
			cell_text(pv, a, b, v, sizeof(v), false);
			fprintf(f, ",%s", v);
		}
		fputc('\n', f);
	}
}

static int pivot_json(FILE *f, const struct pivot *pv)
{
	json_t *o = json_object(), *rows = json_array(), *cols = json_array(), *vals = json_array();
	int ret;

	for (unsigned a = 0; a < pv->nrows; a++)
		json_array_append_new(rows, json_string(pv->rows[a]));
	for (unsigned b = 0; b < pv->ncols; b++)
		json_array_append_new(cols, json_string(pv->cols[b]));
	for (unsigned a = 0; a < pv->nrows; a++) {
		json_t *line = json_array();

		for (unsigned b = 0; b < pv->ncols; b++) {
			const struct result *r = pv->cell[a][b];

			json_array_append_new(line, !r || field_missing(pv->metric, r) ? json_null() :
						    json_real(pv->metric->get_num(r)));
		}
		json_array_append_new(vals, line);
	}
	json_object_set_new(o, "rows", json_string(pv->row->key));
	json_object_set_new(o, "cols", json_string(pv->col->key));
	json_object_set_new(o, "metric", json_string(pv->metric->key));
	json_object_set_new(o, "row_values", rows);
	json_object_set_new(o, "col_values", cols);
	json_object_set_new(o, "values", vals);
	ret = json_dumpf(o, f, JSON_INDENT(2)) ? -EIO : 0;
	fputc('\n', f);
	json_decref(o);
	return ret;
}

int report_pivot(FILE *f, const struct report *rep, const struct field *const *spec,
		 const char *format)
{
	struct pivot *pv = calloc(1, sizeof(*pv));
	int ret = 0;

	if (!pv)
		return -ENOMEM;
	pv->row = spec[0];
	pv->col = spec[1];
	pv->metric = spec[2];
	if (pv->metric->kind == F_STR) {
		free(pv);
		return -EINVAL;
	}
	pivot_build(pv, rep);
	if (!strcmp(format, "json"))
		ret = pivot_json(f, pv);
	else if (!strcmp(format, "csv"))
		pivot_csv(f, pv);
	else
		pivot_table(f, pv, !strcmp(format, "markdown"));
	free(pv);
	return ret;
}
