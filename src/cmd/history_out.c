// SPDX-License-Identifier: MIT
/* `ipclab history`'s output: a table per series (its points, and where it
 * changed; the metric named, its values scaled and in their unit, by the
 * field table, as the figure's), or JSON (series[] {cell, points[] {at, labels, value, ci95},
 * change_points[] {at, before, after, ratio, p_value}}); with --against,
 * one row per cell. Written through the atomic writer; --figure adds the
 * SVG beside. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "history.h"
#include "../report/fields.h"

/* The unit a value of the field table's text does not carry itself. */
static const char *unit_after(const struct field *fd)
{
	switch (fd->unit) {
	case U_PER_S:
		return "/s";
	case U_BYTES_PER_S:
		return " MB/s";
	case U_PCT:
		return "%";
	default:
		return "";
	}
}

const char *history_fmt(char *buf, size_t len, const char *metric, double v)
{
	const struct field *fd = field_find(metric);
	size_t l;

	if (!isfinite(v)) {
		snprintf(buf, len, "-");
	} else if (fd && fd->kind != F_STR) {
		field_human_num(fd, v, buf, len);
		l = strlen(buf);
		snprintf(buf + l, len - l, "%s", unit_after(fd));
	} else {
		snprintf(buf, len, "%.4g", v);
	}
	return buf;
}

const char *history_metric_name(char *buf, size_t len, const char *metric)
{
	const struct field *fd = field_find(metric);
	const char *paren = fd && fd->doc ? strstr(fd->doc, " (") : NULL;

	/* the doc line without what it says in parentheses (the table's unit) */
	if (fd && fd->doc)
		snprintf(buf, len, "%.*s (%s)", paren ? (int)(paren - fd->doc) : 100, fd->doc, metric);
	else
		snprintf(buf, len, "%s", metric);
	return buf;
}

/* "k=v k=v": a point's labels, the machine left out (it is the series');
 * control bytes shown as '?' (they came from the store). */
static void labels_text(const json_t *labels, char *buf, size_t len)
{
	const char *k;
	json_t *v;
	size_t off = 0;

	buf[0] = '\0';
	json_object_foreach((json_t *)labels, k, v)
		if (strcmp(k, "machine") && json_is_string(v) && off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%s=%s", off ? " " : "", k,
						json_string_value(v));
	db_text_safe(buf, len, buf);
}

static void table_series(FILE *f, const struct hseries *s)
{
	char a[32], b[32], c[72], lab[512], at[32], name[160];
	int k = 0;

	fprintf(f, "%s: %s, %zu runs, %d change point%s\n", db_text_safe(lab, sizeof(lab), s->label),
		history_metric_name(name, sizeof(name), s->metric), s->n, s->ncp,
		s->ncp == 1 ? "" : "s");
	for (size_t i = 0; i < s->n; i++) {
		const struct hpoint *p = &s->pts[i];

		labels_text(p->labels, lab, sizeof(lab));
		if (isfinite(p->lo))
			snprintf(c, sizeof(c), "[%s, %s]", history_fmt(a, sizeof(a), s->metric, p->lo),
				 history_fmt(b, sizeof(b), s->metric, p->hi));
		else
			snprintf(c, sizeof(c), "-");
		fprintf(f, "  %5lld  %-20s  %10s  %-24s  %s%s%s\n", (long long)p->run,
			db_text_safe(at, sizeof(at), p->at), history_fmt(a, sizeof(a), s->metric, p->value),
			c, lab, p->state_why[0] ? "  ! " : "", p->state_why);
		if (k < s->ncp && s->cp[k].index == i + 1 && i + 1 < s->n) {
			const struct cp_change *cp = &s->cp[k++];

			fprintf(f, "  ----- change: %s -> %s (x%.3f, p = %.3f) -----\n",
				history_fmt(a, sizeof(a), s->metric, cp->before),
				history_fmt(b, sizeof(b), s->metric, cp->after), cp->ratio, cp->p_value);
		}
	}
}

static void table_against(FILE *f, const struct history *h)
{
	char a[32], b[32], p[16], lab[320];

	fprintf(f, "%-40s %16s %16s %8s %7s  %s\n", "cell", h->base_label.value, h->cand_label.value,
		"ratio", "p", "verdict");
	for (size_t i = 0; i < h->n; i++) {
		const struct hseries *s = &h->s[i];
		char ba[48], ca[48];

		snprintf(ba, sizeof(ba), "%s (%zu)", history_fmt(a, sizeof(a), s->metric, s->base.median),
			 s->base.n);
		snprintf(ca, sizeof(ca), "%s (%zu)", history_fmt(b, sizeof(b), s->metric, s->cand.median),
			 s->cand.n);
		snprintf(p, sizeof(p), isnan(s->p_value) ? "-" : "%.3f", s->p_value);
		fprintf(f, "%-40s %16s %16s %8.3f %7s  %s\n", db_text_safe(lab, sizeof(lab), s->label),
			ba, ca, s->ratio, p, s->changed ? "CHANGED" : "same");
	}
	fprintf(f, "%s=%s against %s=%s; medians (runs); p: permutation test of the energy statistic (two runs a side at least); a change is larger than %g %%\n",
		h->cand_label.key, h->cand_label.value, h->base_label.key, h->base_label.value,
		h->threshold_pct);
}

int history_table(FILE *f, const struct history *h)
{
	if (h->against) {
		table_against(f, h);
		return ferror(f) ? -1 : 0;
	}
	if (h->hosts)
		return history_hosts_table(f, h);
	for (size_t i = 0; i < h->n; i++) {
		if (i)
			fputc('\n', f);
		table_series(f, &h->s[i]);
	}
	fprintf(f, "\nchange points: E-Divisive means, alpha %g, %u permutations, segments of %u points at least (docs/history.md)\n",
		h->cp.alpha, h->cp.permutations, h->cp.min_segment);
	return ferror(f) ? -1 : 0;
}

/* ---- JSON ---- */

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *point_json(const struct history *h, const struct hpoint *p)
{
	json_t *ci = isfinite(p->lo) ? json_pack("[f,f]", p->lo, p->hi) : json_null();

	if (h->hosts)	/* a machine's runs of the cell */
		return json_pack("{s:s, s:s, s:I, s:i, s:O, s:o, s:o, s:s, s:o, s:b, s:o}", "machine",
				 rec_label(p->labels, "machine"), "at", p->at, "last_run",
				 (json_int_t)p->run, "runs", (int)p->runs, "labels", p->labels,
				 "value", num(p->value), "interval", ci, "interval_of",
				 p->runs > 1 ? "range of the runs" : "the run's ci95", "ratio", num(p->ratio),
				 "other_state", p->state_why[0] != '\0', "state",
				 p->state_why[0] ? json_string(p->state_why) : json_null());
	return json_pack("{s:s, s:I, s:O, s:o, s:o, s:b, s:o}", "at", p->at, "run", (json_int_t)p->run,
			 "labels", p->labels ? p->labels : json_object(), "value", num(p->value),
			 "ci95", ci, "other_state", p->state_why[0] != '\0', "state",
			 p->state_why[0] ? json_string(p->state_why) : json_null());
}

static json_t *change_json(const struct hseries *s, const struct cp_change *c)
{
	const struct hpoint *p = &s->pts[c->index];

	return json_pack("{s:s, s:I, s:i, s:O, s:o, s:o, s:o, s:o}", "at", p->at, "run",
			 (json_int_t)p->run, "index", (int)c->index, "labels",
			 p->labels ? p->labels : json_object(), "before", num(c->before), "after",
			 num(c->after), "ratio", num(c->ratio), "p_value", num(c->p_value));
}

static json_t *side_json(const struct hside *sd)
{
	json_t *vals = json_array();

	for (size_t i = 0; vals && i < sd->n; i++)
		json_array_append_new(vals, num(sd->v[i]));
	return json_pack("{s:i, s:o, s:o}", "n", (int)sd->n, "median", num(sd->median), "values", vals);
}

static json_t *series_json(const struct history *h, const struct hseries *s)
{
	json_t *o = json_pack("{s:s, s:s, s:s}", "cell", s->label, "machine", s->machine, "metric",
			      s->metric);
	json_t *pts = json_array(), *cps = json_array();

	for (size_t i = 0; o && pts && i < s->n; i++)
		json_array_append_new(pts, point_json(h, &s->pts[i]));
	for (int i = 0; o && cps && i < s->ncp; i++)
		json_array_append_new(cps, change_json(s, &s->cp[i]));
	if (!o || !pts || !cps) {
		json_decref(o);
		json_decref(pts);
		json_decref(cps);
		return NULL;
	}
	/* what a result holds beside its configuration is not part of a
	 * series' identity */
	json_object_set_new(o, "config", rec_config_copy(s->cell));
	if (h->against) {
		json_object_set_new(o, "baseline", side_json(&s->base));
		json_object_set_new(o, "candidate", side_json(&s->cand));
		json_object_set_new(o, "ratio", num(s->ratio));
		json_object_set_new(o, "p_value", num(s->p_value));
		json_object_set_new(o, "changed", json_boolean(s->changed));
		json_decref(pts);
		json_decref(cps);
		return o;
	}
	json_object_set_new(o, "points", pts);
	json_object_set_new(o, "change_points", cps);
	return o;
}

int history_json(FILE *f, const struct history *h)
{
	json_t *root = json_pack("{s:s, s:{s:s, s:s, s:f, s:i, s:i, s:f}}", "metric",
				 h->metric ? h->metric : "headline", "method", "name",
				 "E-Divisive means (Matteson & James 2014)", "test", "permutation",
				 "alpha", h->cp.alpha, "permutations", (int)h->cp.permutations,
				 "min_segment", (int)h->cp.min_segment, "min_change_pct",
				 h->cp.min_change_pct);
	json_t *arr = json_array();
	char *text;
	int ret;

	for (size_t i = 0; root && arr && i < h->n; i++)
		json_array_append_new(arr, series_json(h, &h->s[i]));
	if (root && h->against)
		json_object_set_new(root, "against", json_pack("{s:{s:s,s:s}, s:{s:s,s:s}, s:f}",
				    "baseline", "key", h->base_label.key, "value", h->base_label.value,
				    "candidate", "key", h->cand_label.key, "value", h->cand_label.value,
				    "threshold_pct", h->threshold_pct));
	if (root && h->hosts)
		json_object_set_new(root, "by", json_string("machine"));
	if (root)
		json_object_set_new(root, "series", arr);
	text = root ? json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(15)) : NULL;
	json_decref(root);
	if (!text)
		return -1;
	ret = fputs(text, f) == EOF || fputc('\n', f) == EOF ? -1 : 0;
	free(text);
	return ret;
}

static int write_one(const struct history *h, const char *path, const char *format)
{
	struct output out;
	int ret = output_open(&out, path, "history");

	if (ret)
		return ret;
	errno = 0;
	if (!strcmp(format, "json"))
		ret = history_json(out.f, h);
	else if (!strcmp(format, "svg"))
		ret = history_svg(out.f, h, false);
	else if (!strcmp(format, "html"))
		ret = history_html(out.f, h);
	else if (!strcmp(format, "csv"))
		ret = history_csv(out.f, h);
	else
		ret = history_table(out.f, h);
	return output_commit(&out, ret, strerror(errno ? errno : EIO));
}

int history_write(const struct history *h)
{
	int ret = write_one(h, h->output, h->format);

	if (!ret && h->figure)
		ret = write_one(h, h->figure, "svg");
	return ret;
}
