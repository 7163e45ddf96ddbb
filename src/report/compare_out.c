// SPDX-License-Identifier: MIT
/* Printing a comparison (compare.c): a text table per cell for people, one
 * markdown table for an issue or a mailing list, JSON for scripts. Every
 * format carries the same verdicts and the cells found in one file only. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ipclab/util.h"
#include "compare.h"

static void value_text(unsigned m, double v, char *buf, size_t len)
{
	char tmp[32];

	if (isnan(v)) {
		snprintf(buf, len, "-");
		return;
	}
	switch (cmp_metric(m)->unit) {
	case CU_BYTES_PER_S:
		snprintf(buf, len, "%s/s", fmt_bytes(tmp, sizeof(tmp), v));
		break;
	case CU_NS:
		fmt_ns(buf, len, v);
		break;
	case CU_PCT:
		snprintf(buf, len, "%.1f%%", v);
		break;
	case CU_PER_S:
		fmt_count(buf, len, v);
		break;
	}
}

static bool is_better(unsigned m, const struct cmp_value *v)
{
	return cmp_metric(m)->higher_better ? v->after > v->before : v->after < v->before;
}

static void verdict_text(unsigned m, const struct cmp_value *v, const struct cmp_opts *o,
			 char *buf, size_t len)
{
	if (isnan(v->change_pct))
		snprintf(buf, len, "-");
	else if (v->regressed)
		snprintf(buf, len, "REGRESSION (worse by %.1f%% > %g%%)", v->worse_pct,
			 o->fail_above_pct);
	else if (v->spread == CMP_WITHIN)
		snprintf(buf, len, "within spread");
	else if (v->after == v->before)
		snprintf(buf, len, "same");
	else
		snprintf(buf, len, "%s%s", is_better(m, v) ? "better" : "worse",
			 v->spread == CMP_BEYOND ? ", beyond spread" : "");
}

static bool row_has_spread(const struct cmp_row *row)
{
	for (unsigned m = 0; m < CMP_NMETRICS; m++)
		if (row->v[m].spread != CMP_NO_SPREAD)
			return true;
	return false;
}

/* "before failed: reason" for a row that cannot be compared. */
static void not_compared(const struct cmp_row *row, char *buf, size_t len)
{
	const struct rcell *c = row->before->ok ? row->after : row->before;
	const char *status = json_string_value(json_object_get(c->obj, "status"));
	const char *reason = json_string_value(json_object_get(c->obj, "reason"));

	snprintf(buf, len, "not compared: %s %s%s%s", c == row->before ? "before" : "after",
		 status ? status : "?", reason ? ": " : "", reason ? reason : "");
}

struct cells {
	char before[32], after[32], ratio[16], change[16], verdict[96];
};

static void cells_of(unsigned m, const struct cmp_value *v, const struct cmp_opts *o,
		     struct cells *c)
{
	value_text(m, v->before, c->before, sizeof(c->before));
	value_text(m, v->after, c->after, sizeof(c->after));
	snprintf(c->ratio, sizeof(c->ratio), isnan(v->ratio) ? "-" : "%.3f", v->ratio);
	snprintf(c->change, sizeof(c->change), isnan(v->change_pct) ? "-" : "%+.1f%%",
		 v->change_pct);
	verdict_text(m, v, o, c->verdict, sizeof(c->verdict));
}

static void file_line(FILE *f, const char *what, const struct rfile *rf)
{
	json_t *env = json_object_get(rf->root, "env");
	const char *when = json_string_value(json_object_get(rf->root, "created_utc"));
	const char *kernel = json_string_value(json_object_get(env, "kernel"));

	fprintf(f, "%s: %s (%s, kernel %s)\n", what, rf->path, when ? when : "undated",
		kernel ? kernel : "unknown");
}

static void text_row(FILE *f, const struct cmp_row *row, const struct cmp_opts *o)
{
	char why[400];

	fprintf(f, "\n%s%s\n", row->label,
		row->comparable && !row_has_spread(row) ? "  (no spread data (use --repeat))" : "");
	if (!row->comparable) {
		not_compared(row, why, sizeof(why));
		fprintf(f, "  %s\n", why);
		return;
	}
	fprintf(f, "  %-8s %10s %10s %8s %8s  %s\n", "metric", "before", "after", "ratio",
		"change", "verdict");
	for (unsigned m = 0; m < CMP_NMETRICS; m++) {
		struct cells c;

		if (!(o->metric_mask & (1u << m)))
			continue;
		cells_of(m, &row->v[m], o, &c);
		fprintf(f, "  %-8s %10s %10s %8s %8s  %s\n", cmp_metric(m)->label, c.before,
			c.after, c.ratio, c.change, c.verdict);
	}
}

static void only_list(FILE *f, const char *which, const char *path, char (*labels)[256],
		      size_t n, bool md)
{
	if (!n)
		return;
	fprintf(f, md ? "\n**Only in %s (%s), not compared:**\n\n" : "\nonly in %s (%s), not compared:\n",
		which, path);
	for (size_t i = 0; i < n; i++)
		fprintf(f, md ? "- %s\n" : "  %s\n", labels[i]);
}

static void summary_line(FILE *f, const struct cmp_result *r, const struct cmp_opts *o)
{
	size_t failed = 0;

	for (size_t i = 0; i < r->nrows; i++)
		failed += !r->rows[i].comparable;
	fprintf(f, "\n%zu cells compared", r->nrows - failed);
	if (failed)
		fprintf(f, ", %zu not (skipped or failed in one file)", failed);
	if (!isnan(o->fail_above_pct))
		fprintf(f, ", %u regressed by more than %g%%", r->regressions, o->fail_above_pct);
	fprintf(f, ", %zu only in before, %zu only in after.\n", r->nonly_before, r->nonly_after);
}

static int print_text(FILE *f, const struct cmp_result *r, const struct cmp_opts *o)
{
	file_line(f, "before", r->before);
	file_line(f, "after ", r->after);
	fprintf(f, "ratio = after / before; verdict: lower latency and CPU are better, higher rates are better\n");
	cmp_env_text(f, &r->env);
	for (size_t i = 0; i < r->nrows; i++)
		text_row(f, &r->rows[i], o);
	only_list(f, "before", r->before->path, r->only_before_label, r->nonly_before, false);
	only_list(f, "after", r->after->path, r->only_after_label, r->nonly_after, false);
	summary_line(f, r, o);
	return ferror(f) ? -EIO : 0;
}

/* A label or reason inside a markdown cell: '|' would end the cell. */
static void md_cell(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputc('\\', f);
		fputc(*s == '\n' ? ' ' : *s, f);
	}
}

static void md_row(FILE *f, const struct cmp_row *row, const struct cmp_opts *o, size_t *nospread,
		   size_t *ncompared)
{
	bool first = true;
	char why[400];

	if (!row->comparable) {
		not_compared(row, why, sizeof(why));
		fputs("| ", f);
		md_cell(f, row->label);
		fputs(" | | | | | | ", f);
		md_cell(f, why);
		fputs(" |\n", f);
		return;
	}
	*nospread += !row_has_spread(row);
	(*ncompared)++;
	for (unsigned m = 0; m < CMP_NMETRICS; m++) {
		struct cells c;

		if (!(o->metric_mask & (1u << m)))
			continue;
		cells_of(m, &row->v[m], o, &c);
		fputs("| ", f);
		md_cell(f, first ? row->label : "");
		fprintf(f, " | %s | %s | %s | %s | %s | %s |\n", cmp_metric(m)->label, c.before,
			c.after, c.ratio, c.change, c.verdict);
		first = false;
	}
}

static int print_markdown(FILE *f, const struct cmp_result *r, const struct cmp_opts *o)
{
	size_t nospread = 0, ncompared = 0;

	fprintf(f, "| cell | metric | before | after | ratio | change | verdict |\n");
	fprintf(f, "| --- | --- | ---: | ---: | ---: | ---: | --- |\n");
	for (size_t i = 0; i < r->nrows; i++)
		md_row(f, &r->rows[i], o, &nospread, &ncompared);
	fprintf(f, "\nbefore: `%s`, after: `%s`; ratio = after / before.", r->before->path,
		r->after->path);
	if (nospread)
		fprintf(f, " %zu of %zu cells: no spread data (use --repeat).", nospread, ncompared);
	fputc('\n', f);
	cmp_env_markdown(f, &r->env);
	only_list(f, "before", r->before->path, r->only_before_label, r->nonly_before, true);
	only_list(f, "after", r->after->path, r->only_after_label, r->nonly_after, true);
	summary_line(f, r, o);
	return ferror(f) ? -EIO : 0;
}

/* ---- JSON ------------------------------------------------------------------ */

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static const char *const spread_names[] = { "no spread data", "within", "beyond" };

static json_t *value_json(unsigned m, const struct cmp_value *v)
{
	return json_pack("{s:o, s:o, s:o, s:o, s:s, s:o, s:b}", "before", num_or_null(v->before),
			 "after", num_or_null(v->after), "ratio", num_or_null(v->ratio),
			 "change_pct", num_or_null(v->change_pct), "spread", spread_names[v->spread],
			 "better", isnan(v->change_pct) ? json_null() : json_boolean(is_better(m, v)),
			 "regressed", v->regressed);
}

static json_t *config_json(const struct rcell *c)
{
	json_t *cfg = json_object();
	const char *k;
	json_t *v;

	json_object_foreach(c->obj, k, v)
		if (cfg && (!json_is_object(v) || !strcmp(k, "options")) && !json_is_array(v) &&
		    strcmp(k, "reason"))
			json_object_set(cfg, k, v);
	return cfg;
}

static json_t *row_json(const struct cmp_row *row, const struct cmp_opts *o)
{
	json_t *metrics = json_object(), *obj;
	char why[400] = "";

	for (unsigned m = 0; metrics && row->comparable && m < CMP_NMETRICS; m++)
		if (o->metric_mask & (1u << m))
			json_object_set_new(metrics, cmp_metric(m)->key, value_json(m, &row->v[m]));
	if (!row->comparable)
		not_compared(row, why, sizeof(why));
	obj = json_pack("{s:s, s:o, s:b, s:o}", "label", row->label, "config",
			config_json(row->before), "compared", row->comparable, "metrics", metrics);
	if (obj && why[0])
		json_object_set_new(obj, "why", json_string(why));
	return obj;
}

static json_t *labels_json(char (*labels)[256], size_t n)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < n; i++)
		json_array_append_new(arr, json_string(labels[i]));
	return arr;
}

static int print_json(FILE *f, const struct cmp_result *r, const struct cmp_opts *o)
{
	json_t *cells = json_array(), *root;
	int ret;

	for (size_t i = 0; cells && i < r->nrows; i++)
		json_array_append_new(cells, row_json(&r->rows[i], o));
	root = json_pack("{s:i, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:i}", "schema_version", 1,
			 "before", r->before->path, "after", r->after->path,
			 "fail_above_pct", num_or_null(o->fail_above_pct),
			 "env_diff", cmp_env_json(&r->env), "cells", cells,
			 "only_before", labels_json(r->only_before_label, r->nonly_before),
			 "only_after", labels_json(r->only_after_label, r->nonly_after),
			 "regressions", (int)r->regressions);
	if (!root)
		return -ENOMEM;
	ret = json_dumpf(root, f, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
	json_decref(root);
	fputc('\n', f);
	return ret || ferror(f) ? -EIO : 0;
}

int compare_print(FILE *f, const struct cmp_result *r, const struct cmp_opts *o,
		  const char *format)
{
	if (!strcmp(format, "json"))
		return print_json(f, r, o);
	if (!strcmp(format, "markdown"))
		return print_markdown(f, r, o);
	return print_text(f, r, o);
}
