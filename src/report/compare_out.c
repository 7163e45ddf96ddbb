// SPDX-License-Identifier: MIT
/* Printing a comparison (compare.c, compare_test.c): a text table per cell
 * for people, one markdown table for an issue or a mailing list, JSON for
 * scripts. Every format carries the same verdicts (the test's p and ratio
 * interval where there was one, the spread rule's words where not, and the
 * cells' noisy and bimodal flags) and the cells found in one file only.
 * Labels, paths, reasons and dates come from the files: the text and
 * markdown forms show them through the safe printer (safe_print.h), so a
 * file's escape sequences reach no terminal. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ipclab/safe_print.h"
#include "ipclab/stats.h"
#include "ipclab/util.h"
#include "compare.h"
#include "rec_env.h"

#define STATS_MARGIN_PCT (STATS_EQUIV_MARGIN * 100)

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

/* Without a test: the spread rule's words. */
static void spread_verdict(unsigned m, const struct cmp_value *v, const struct cmp_opts *o,
			   char *buf, size_t len)
{
	if (v->regressed)
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

/* How much worse at least: the interval's nearer end, in %. */
static double worse_at_least(unsigned m, const struct cmp_test *t)
{
	return cmp_metric(m)->higher_better ? (1 - t->ratio_hi) * 100 : (t->ratio_lo - 1) * 100;
}

/* The test's words: "worse", "no change", "fast mode worse, slow mode no change". */
static void test_verdict(unsigned m, const struct cmp_value *v, const struct cmp_opts *o,
			 char *buf, size_t len)
{
	const struct cmp_test *t = v->nmodes ? &v->modes[v->modes[0].verdict != CV_WORSE] : &v->test;

	if (v->regressed)
		snprintf(buf, len, "REGRESSION (worse by %.1f%% or more > %g%%)", worse_at_least(m, t),
			 o->fail_above_pct);
	else if (v->nmodes)
		snprintf(buf, len, "bimodal: fast mode %s (p %.2g, %.3f..%.3f), slow mode %s (p %.2g, %.3f..%.3f)",
			 cmp_verdict_name(v->modes[0].verdict), v->modes[0].p_value,
			 v->modes[0].ratio_lo, v->modes[0].ratio_hi,
			 cmp_verdict_name(v->modes[1].verdict), v->modes[1].p_value,
			 v->modes[1].ratio_lo, v->modes[1].ratio_hi);
	else
		snprintf(buf, len, "%s", cmp_verdict_name(v->verdict));
}

/* The cell's flags, said in each verdict: " (before noisy, after bimodal)". */
static void flags_text(const struct cmp_row *row, char *buf, size_t len)
{
	static const char *const side[2] = { "before", "after" };
	size_t off = 0;

	buf[0] = '\0';
	for (int k = 0; k < 2 && off < len; k++) {
		if (row->noisy[k])
			off += (size_t)snprintf(buf + off, len - off, "%s%s noisy", off ? ", " : " (",
						side[k]);
		if (row->bimodal[k] && off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%s bimodal", off ? ", " : " (",
						side[k]);
	}
	if (off && off < len)
		snprintf(buf + off, len - off, ")");
}

static void verdict_text(unsigned m, const struct cmp_row *row, const struct cmp_opts *o,
			 char *buf, size_t len)
{
	const struct cmp_value *v = &row->v[m];
	char flags[96], what[200];

	if (isnan(v->change_pct)) {
		snprintf(buf, len, "-");
		return;
	}
	if (v->verdict == CV_OTHER_STATE)	/* the canaries: the whole file's why */
		snprintf(what, sizeof(what), "%s", v->why);
	else if (v->verdict == CV_CANNOT)
		snprintf(what, sizeof(what), "cannot compare: %s", v->why);
	else if (v->verdict == CV_UNTESTED)
		spread_verdict(m, v, o, what, sizeof(what));
	else if (v->basis != CB_REPETITIONS && v->verdict == CV_SAME && v->why[0])
		snprintf(what, sizeof(what), "no change: %s", v->why);
	else
		test_verdict(m, v, o, what, sizeof(what));
	flags_text(row, flags, sizeof(flags));
	if (v->basis == CB_REPETITIONS || v->verdict == CV_OTHER_STATE)
		snprintf(buf, len, "%s%s", what, flags);
	else
		snprintf(buf, len, "%s%s [%s]", what, flags, cmp_basis_name(v->basis));
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
	const char *status = rec_status(c->obj), *reason = rec_reason(c->obj);

	snprintf(buf, len, "not compared: %s %s%s%s", c == row->before ? "before" : "after",
		 status ? status : "?", reason ? ": " : "", reason ? reason : "");
}

struct cells {
	char before[32], after[32], ratio[16], ci[40], p[16], change[16], verdict[320];
};

/* The interval and p of the test. */
static void test_cells(const struct cmp_value *v, struct cells *c)
{
	const struct cmp_test *t = &v->test;	/* bimodal: each mode's in the verdict */

	snprintf(c->ci, sizeof(c->ci), "-");
	snprintf(c->p, sizeof(c->p), "-");
	if (!v->nmodes && !isnan(t->ratio_lo))
		snprintf(c->ci, sizeof(c->ci), "%.3f..%.3f", t->ratio_lo, t->ratio_hi);
	if (!v->nmodes && !isnan(t->p_value))
		snprintf(c->p, sizeof(c->p), t->p_value < 0.001 ? "%.1e" : "%.3f", t->p_value);
}

static void cells_of(unsigned m, const struct cmp_row *row, const struct cmp_opts *o,
		     struct cells *c)
{
	const struct cmp_value *v = &row->v[m];

	value_text(m, v->before, c->before, sizeof(c->before));
	value_text(m, v->after, c->after, sizeof(c->after));
	snprintf(c->ratio, sizeof(c->ratio), isnan(v->ratio) ? "-" : "%.3f", v->ratio);
	test_cells(v, c);
	snprintf(c->change, sizeof(c->change), isnan(v->change_pct) ? "-" : "%+.1f%%",
		 v->change_pct);
	verdict_text(m, row, o, c->verdict, sizeof(c->verdict));
}

/* "untested: why", once under a row whose metrics had no test. */
static const char *row_why(const struct cmp_row *row, const struct cmp_opts *o)
{
	for (unsigned m = 0; m < CMP_NMETRICS; m++)
		if ((o->metric_mask & (1u << m)) && row->v[m].verdict == CV_UNTESTED &&
		    row->v[m].why[0])
			return row->v[m].why;
	return NULL;
}

static void file_line(FILE *f, const char *what, const struct rfile *rf)
{
	const char *when = rfile_created(rf);
	struct env_info e;
	const char *kernel = rfile_env(rf, &e) && e.kernel[0] ? e.kernel : NULL;
	char p[1024], w[128], k[512];

	fprintf(f, "%s: %s (%s, kernel %s)\n", what, safe_str(p, sizeof(p), rf->path),
		when ? safe_str(w, sizeof(w), when) : "undated",
		kernel ? safe_str(k, sizeof(k), kernel) : "unknown");
}

static void text_row(FILE *f, const struct cmp_row *row, const struct cmp_opts *o)
{
	char why[400], shown[2048];

	fprintf(f, "\n%s%s\n", safe_str(shown, sizeof(shown), row->label),
		row->comparable && !row_has_spread(row) ? "  (no spread data (use --repeat))" : "");
	if (!row->comparable) {
		not_compared(row, why, sizeof(why));
		fprintf(f, "  %s\n", safe_str(shown, sizeof(shown), why));
		return;
	}
	fprintf(f, "  %-8s %10s %10s %8s %13s %7s %8s  %s\n", "metric", "before", "after", "ratio",
		"ratio ci95", "p", "change", "verdict");
	for (unsigned m = 0; m < CMP_NMETRICS; m++) {
		struct cells c;

		if (!(o->metric_mask & (1u << m)))
			continue;
		cells_of(m, row, o, &c);
		fprintf(f, "  %-8s %10s %10s %8s %13s %7s %8s  %s\n", cmp_metric(m)->label, c.before,
			c.after, c.ratio, c.ci, c.p, c.change, safe_str(shown, sizeof(shown), c.verdict));
	}
	if (row_why(row, o))
		fprintf(f, "  untested: %s\n", safe_str(shown, sizeof(shown), row_why(row, o)));
}

static void only_list(FILE *f, const char *which, const char *path, char (*labels)[256],
		      size_t n, bool md)
{
	char shown[2048];

	if (!n)
		return;
	fprintf(f, md ? "\n**Only in %s (%s), not compared:**\n\n" : "\nonly in %s (%s), not compared:\n",
		which, safe_str(shown, sizeof(shown), path));
	for (size_t i = 0; i < n; i++)
		fprintf(f, md ? "- %s\n" : "  %s\n", safe_str(shown, sizeof(shown), labels[i]));
}

static void summary_line(FILE *f, const struct cmp_result *r, const struct cmp_opts *o)
{
	size_t failed = 0;

	for (size_t i = 0; i < r->nrows; i++)
		failed += !r->rows[i].comparable;
	size_t tested = 0;

	for (size_t i = 0; i < r->nrows; i++) {
		bool t = false;

		for (unsigned m = 0; r->rows[i].comparable && m < CMP_NMETRICS; m++)
			t |= (o->metric_mask & (1u << m)) && r->rows[i].v[m].verdict != CV_UNTESTED &&
			     r->rows[i].v[m].verdict != CV_NONE &&
			     r->rows[i].v[m].verdict != CV_OTHER_STATE;
		tested += t;
	}
	fprintf(f, "\n%zu cells compared (%zu tested over their %s)", r->nrows - failed, tested,
		o->nruns[0] > 1 || o->nruns[1] > 1 ? "runs" : "repetitions");
	if (failed)
		fprintf(f, ", %zu not (skipped or failed in one file)", failed);
	if (!isnan(o->fail_above_pct))
		fprintf(f, ", %u regressed by more than %g%%", r->regressions, o->fail_above_pct);
	fprintf(f, ", %zu only in before, %zu only in after.\n", r->nonly_before, r->nonly_after);
}

/* What the verdicts rest on: the runs, or one run a side with or without
 * the machine's calibrated drift. */
static void basis_text(FILE *f, const struct cmp_result *r, const struct cmp_opts *o)
{
	char shown[1024];

	(void)r;
	if (o->nruns[0] > 1 || o->nruns[1] > 1)
		fprintf(f, "basis: runs (%zu before, %zu after): each run's median per cell; with 4 and 4 runs or more\n"
			   "a Mann-Whitney test over them, else every after run against every before run; better or\n"
			   "worse only beyond +-%g %%%s\n",
			o->nruns[0] ? o->nruns[0] : 1, o->nruns[1] ? o->nruns[1] : 1,
			STATS_MARGIN_PCT, o->ndrift ? " and the calibrated drift" : "");
	else if (o->ndrift)
		fprintf(f, "basis: one run a side and this machine's calibrated run-to-run drift (%s): a change\n"
			   "within it is within run-to-run noise\n",
			safe_str(shown, sizeof(shown), o->drift_source ? o->drift_source : "given"));
	else
		fprintf(f, "basis: repetitions of one run a side; this machine's run-to-run drift is not calibrated\n"
			   "(ipclab env --calibrate), nor are there several runs a side (compare A1 A2 -- B1 B2)\n");
}

static int print_text(FILE *f, const struct cmp_result *r, const struct cmp_opts *o)
{
	file_line(f, "before", r->before);
	file_line(f, "after ", r->after);
	fprintf(f, "ratio = after / before; verdict: lower latency and CPU are better, higher rates are better\n"
		   "with repetitions in both files: Mann-Whitney U over them (p) and the 95 %% interval of the ratio\n"
		   "(Hodges-Lehmann, ratio ci95); better or worse when p < 0.05 and the interval lies beyond +-%g %%\n",
		CMP_NOISE_PCT);
	basis_text(f, r, o);
	cmp_env_text(f, &r->env);
	cmp_canary_text(f, &r->canary);
	for (size_t i = 0; i < r->nrows; i++)
		text_row(f, &r->rows[i], o);
	only_list(f, "before", r->before->path, r->only_before_label, r->nonly_before, false);
	only_list(f, "after", r->after->path, r->only_after_label, r->nonly_after, false);
	summary_line(f, r, o);
	return ferror(f) ? -EIO : 0;
}

/* A label or reason inside a markdown cell, shown safely: '|' would end
 * the cell. */
static void md_cell(FILE *f, const char *text)
{
	char shown[2048];

	for (const char *s = safe_str(shown, sizeof(shown), text); *s; s++) {
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
		fputs(" | | | | | | | | ", f);
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
		cells_of(m, row, o, &c);
		fputs("| ", f);
		md_cell(f, first ? row->label : "");
		fprintf(f, " | %s | %s | %s | %s | %s | %s | %s | ", cmp_metric(m)->label, c.before,
			c.after, c.ratio, c.ci, c.p, c.change);
		md_cell(f, c.verdict);
		fputs(" |\n", f);
		first = false;
	}
}

static int print_markdown(FILE *f, const struct cmp_result *r, const struct cmp_opts *o)
{
	size_t nospread = 0, ncompared = 0;

	fprintf(f, "| cell | metric | before | after | ratio | ratio ci95 | p | change | verdict |\n");
	fprintf(f, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
	for (size_t i = 0; i < r->nrows; i++)
		md_row(f, &r->rows[i], o, &nospread, &ncompared);
	char pa[1024], pb[1024];

	fprintf(f, "\nbefore: `%s`, after: `%s`; ratio = after / before.",
		safe_str(pa, sizeof(pa), r->before->path), safe_str(pb, sizeof(pb), r->after->path));
	if (nospread)
		fprintf(f, " %zu of %zu cells: no spread data (use --repeat).", nospread, ncompared);
	fputc('\n', f);
	basis_text(f, r, o);
	cmp_env_markdown(f, &r->env);
	cmp_canary_markdown(f, &r->canary);
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

static json_t *ci_json(const struct cmp_test *t)
{
	return isfinite(t->ratio_lo) && isfinite(t->ratio_hi) ?
		       json_pack("[f, f]", t->ratio_lo, t->ratio_hi) : json_null();
}

/* One test: {before, after (the medians), n_before, n_after, p_value, ratio_ci95, verdict} */
static json_t *test_json(const struct cmp_test *t)
{
	return json_pack("{s:o, s:o, s:i, s:i, s:o, s:o, s:s}", "before", num_or_null(t->before),
			 "after", num_or_null(t->after), "n_before", (int)t->n_before, "n_after",
			 (int)t->n_after, "p_value", num_or_null(t->p_value), "ratio_ci95", ci_json(t),
			 "verdict", cmp_verdict_name(t->verdict));
}

/* The test's keys beside the values: test, p_value, ratio_ci95, verdict,
 * n_before, n_after, why, modes. */
static void put_test(json_t *o, const struct cmp_value *v)
{
	bool tested = v->verdict != CV_UNTESTED && v->verdict != CV_CANNOT &&
		      v->verdict != CV_OTHER_STATE && !v->nmodes;

	json_object_set_new(o, "test", !tested ? json_null() :
				       v->basis == CB_DRIFT ? json_string("calibrated drift") :
				       v->basis == CB_RUNS ? json_string(isnan(v->runs.p_value) ?
									 "range of the runs" :
									 "mann-whitney over runs") :
				       json_string("mann-whitney"));
	json_object_set_new(o, "basis", json_string(cmp_basis_name(v->basis)));
	if (v->basis == CB_RUNS)
		json_object_set_new(o, "runs", test_json(&v->runs));
	if (!isnan(v->drift_lo))
		json_object_set_new(o, "drift", json_pack("[f, f]", v->drift_lo, v->drift_hi));
	json_object_set_new(o, "p_value", tested ? num_or_null(v->test.p_value) : json_null());
	json_object_set_new(o, "ratio_ci95", tested ? ci_json(&v->test) : json_null());
	json_object_set_new(o, "n_before", json_integer(v->test.n_before));
	json_object_set_new(o, "n_after", json_integer(v->test.n_after));
	json_object_set_new(o, "verdict", json_string(cmp_verdict_name(v->verdict)));
	json_object_set_new(o, "bimodal", json_pack("{s:b, s:b}", "before", v->bimodal_before,
						     "after", v->bimodal_after));
	if (v->why[0])
		json_object_set_new(o, "why", json_string(v->why));
	if (v->nmodes == 2)
		json_object_set_new(o, "modes", json_pack("{s:o, s:o}", "fast", test_json(&v->modes[0]),
							  "slow", test_json(&v->modes[1])));
}

static json_t *value_json(unsigned m, const struct cmp_value *v)
{
	json_t *o = json_pack("{s:o, s:o, s:o, s:o, s:s, s:o, s:b}", "before", num_or_null(v->before),
			      "after", num_or_null(v->after), "ratio", num_or_null(v->ratio),
			      "change_pct", num_or_null(v->change_pct), "spread",
			      spread_names[v->spread], "better",
			      isnan(v->change_pct) ? json_null() : json_boolean(is_better(m, v)),
			      "regressed", v->regressed);

	if (o && !isnan(v->change_pct))
		put_test(o, v);
	return o;
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
	obj = json_pack("{s:s, s:o, s:b, s:o, s:{s:b, s:b}, s:{s:b, s:b}}", "label", row->label,
			"config", config_json(row->before), "compared", row->comparable, "metrics",
			metrics, "noisy", "before", row->noisy[0], "after", row->noisy[1], "bimodal",
			"before", row->bimodal[0], "after", row->bimodal[1]);
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
	if (root && json_object_set_new(root, "basis",
					json_pack("{s:i, s:i, s:b, s:o}", "runs_before",
						  (int)(o->nruns[0] ? o->nruns[0] : 1), "runs_after",
						  (int)(o->nruns[1] ? o->nruns[1] : 1), "calibrated",
						  o->ndrift > 0, "drift_source",
						  o->drift_source ? json_string(o->drift_source) :
								    json_null()))) {
		json_decref(root);
		root = NULL;
	}
	if (root && json_object_set_new(root, "canary", cmp_canary_json(&r->canary))) {
		json_decref(root);
		root = NULL;
	}
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
