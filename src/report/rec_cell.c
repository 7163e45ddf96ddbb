// SPDX-License-Identifier: MIT
/* A result record read by what it holds (rec_cell.h): every key name a
 * reader of results needs, once, each value checked as it is read (a file
 * or a store is anyone's: no NaN, no object where a name is expected, no
 * megabyte of text for a transport's name). */
#include <math.h>
#include <string.h>

#include "ipclab/util.h"
#include "rec_cell.h"
#include "rfile.h"

/* ---- checked values ---- */

static const char *str_of(const json_t *v)
{
	const char *s = json_string_value(v);

	return s && json_string_length(v) <= REC_STR_MAX ? s : NULL;
}

static double num_of(const json_t *v)
{
	double d = json_number_value(v);

	return json_is_number(v) && isfinite(d) ? d : NAN;
}

static const json_t *obj_of(const json_t *parent, const char *key)
{
	const json_t *o = json_object_get(parent, key);

	return json_is_object(o) ? o : NULL;
}

static const json_t *metrics_of(const json_t *result)
{
	return obj_of(result, "metrics");
}

/* repeat.<key>: an older file's "repeat" was a count */
static const json_t *repeat_of(const json_t *result, const char *key)
{
	return obj_of(obj_of(result, "repeat"), key);
}

/* ---- one result ---- */

double rec_metric(const json_t *result, const char *key)
{
	return num_of(json_object_get(metrics_of(result), rf_metric_alias(key)));
}

enum lat_kind rec_lat_kind(const json_t *result)
{
	return lat_kind_parse(str_of(json_object_get(metrics_of(result), "lat_kind")));
}

const char *rec_headline(const json_t *result)
{
	return rec_lat_kind(result) == LAT_RTT ? "lat_p50_ns" : "msgs_per_s";
}

bool rec_flag(const json_t *result, const char *key)
{
	return json_is_true(json_object_get(metrics_of(result), key));
}

const json_t *rec_field(const json_t *result, const char *key, bool config)
{
	const json_t *v = json_object_get(config ? result : metrics_of(result), key);

	if (json_is_string(v))
		return str_of(v) ? v : NULL;
	if (json_is_number(v))
		return isnan(num_of(v)) ? NULL : v;
	return json_is_boolean(v) ? v : NULL;
}

double rec_field_num(const json_t *result, const char *key, bool config)
{
	const json_t *v = rec_field(result, key, config);

	if (json_is_boolean(v))
		return json_is_true(v);
	return num_of(v);
}

const char *rec_field_text(const json_t *result, const char *key, bool config)
{
	return str_of(rec_field(result, key, config));
}

bool rec_ci95(const json_t *result, const char *key, double *lo, double *hi)
{
	const json_t *ci = json_object_get(repeat_of(result, key), "ci95");
	double a = num_of(json_array_get(ci, 0)), b = num_of(json_array_get(ci, 1));

	if (json_array_size(ci) != 2 || isnan(a) || isnan(b))
		return false;
	*lo = a;
	*hi = b;
	return true;
}

const char *rec_transport(const json_t *result)
{
	return str_of(json_object_get(result, "transport"));
}

const char *rec_pattern(const json_t *result)
{
	return str_of(json_object_get(result, "pattern"));
}

const char *rec_status(const json_t *result)
{
	return str_of(json_object_get(result, "status"));
}

const char *rec_reason(const json_t *result)
{
	return str_of(json_object_get(result, "reason"));
}

const char *rec_section(const json_t *result)
{
	return str_of(json_object_get(result, "section"));
}

bool rec_same_size(const json_t *a, const json_t *b)
{
	const json_t *x = json_object_get(a, "size_bytes"), *y = json_object_get(b, "size_bytes");

	return x || y ? json_equal((json_t *)x, (json_t *)y) : true;
}

json_t *rec_metrics_part(const json_t *result)
{
	const json_t *m = metrics_of(result);

	return m ? json_pack("{s:O}", "metrics", (json_t *)m) : NULL;
}

json_t *rec_config_copy(const json_t *result)
{
	static const char *const drop[] = { "metrics", "sides", "histogram", "repeat", "trace",
					    "profile", "profile_run", "reference",
					    "remote", "settings", "interference", NULL };
	json_t *cfg = json_deep_copy(result);

	for (const char *const *k = drop; cfg && *k; k++)
		json_object_del(cfg, *k);
	if (cfg)
		rec_pat_keys_del(cfg);
	return cfg;
}

const json_t *rec_calibration(const json_t *root)
{
	return json_object_get(root, "calibration");
}

size_t rec_drift_cells(const json_t *cal, struct rec_drift *d, size_t max)
{
	const json_t *cells = json_object_get(cal, "cells"), *c;
	size_t i, n = 0;

	json_array_foreach(cells, i, c) {
		struct rec_drift x = {
			.transport = str_of(json_object_get(c, "transport")),
			.pattern = str_of(json_object_get(c, "pattern")),
			.what = str_of(json_object_get(c, "what")),
			.lo = json_number_value(json_object_get(c, "lo")),
			.hi = json_number_value(json_object_get(c, "hi")),
		};

		if (n >= max || !x.transport || !x.pattern || !(x.lo > 0) || !(x.hi >= x.lo) ||
		    !isfinite(x.hi))
			continue;
		if (!x.what)
			x.what = "";
		d[n++] = x;
	}
	return n;
}

/* ---- the file ---- */

static const char *text_or_empty(const json_t *o, const char *key)
{
	const char *s = str_of(json_object_get(o, key));

	return s ? s : "";
}

void rec_file_section(const json_t *root, const char *name, struct rec_sect *s)
{
	const json_t *list = json_object_get(root, "sections"), *sec = NULL, *x, *why;
	size_t i;

	memset(s, 0, sizeof(*s));
	json_array_foreach(list, i, x) {
		const char *n = json_string_value(json_object_get(x, "name"));

		if (n && !strcmp(n, name)) {
			sec = x;
			break;
		}
	}
	s->title = str_of(json_object_get(sec, "title"));
	s->text = json_string_value(json_object_get(sec, "text"));	/* shown in part */
	why = obj_of(sec, "why");
	if (!why)
		return;
	s->why = true;
	s->question = text_or_empty(why, "question");
	s->answer = text_or_empty(why, "answer");
	s->verdict = text_or_empty(why, "verdict");
	json_array_foreach(json_object_get(why, "hypotheses"), i, x) {
		if (i >= REC_HYP_MAX)
			break;
		s->hyp[i] = (struct rec_hyp){ .claim = text_or_empty(x, "claim"),
					      .conditions = text_or_empty(x, "conditions"),
					      .evidence = text_or_empty(x, "evidence"),
					      .reproduced = json_is_true(json_object_get(x, "reproduced")) };
		s->nhyp = i + 1;
	}
}

/* ---- a stored run ---- */

const char *rec_label(const json_t *labels, const char *name)
{
	return str_of(json_object_get(labels, name));
}
