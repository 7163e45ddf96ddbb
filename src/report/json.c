// SPDX-License-Identifier: MIT
/* JSON reporter: the result record of DESIGN.md, built as a jansson tree and
 * written in one go, so every string is escaped by the library, never by a
 * printf. Configuration keys sit at the top of a result, metrics under
 * "metrics"; both come from the field table (fields.c). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "ipclab/reporter.h"
#include "ipclab/result.h"
#include "ipclab/stats.h"
#include "ipclab/util.h"
#include "env_json.h"
#include "remote_json.h"
#include "fields.h"
#include "matrix.h"
#include "profile_out.h"
#include "trace_out.h"
#include "intf_out.h"

#ifndef IPCLAB_VERSION
#define IPCLAB_VERSION "unknown"
#endif
#ifndef IPCLAB_GIT_REV
#define IPCLAB_GIT_REV "unknown"
#endif

/* jansson refuses invalid UTF-8 (a command line may hold any bytes): such a
 * string is written with '?' for every non-ASCII byte rather than dropped. */
static json_t *jstr(const char *s)
{
	json_t *j = json_string(s ? s : "");
	char *copy;

	if (j)
		return j;
	copy = strdup(s);
	if (!copy)
		return NULL;
	for (char *p = copy; *p; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	j = json_string(copy);
	free(copy);
	return j;
}

/* Kernel-reported values are text; plain decimal integers become numbers so
 * that scripts need no conversion (a leading 0 stays text: octal modes). */
static json_t *jvalue(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 18 || strspn(s, "0123456789") != n || (n > 1 && s[0] == '0'))
		return jstr(s);
	return json_integer((json_int_t)strtoll(s, NULL, 10));
}

static json_t *field_json(const struct field *fd, const struct result *r)
{
	double v;

	if (field_missing(fd, r))
		return json_null();
	if (fd->kind == F_STR)
		return jstr(fd->get_str(r));
	v = fd->get_num(r);
	if (fd->kind == F_BOOL)
		return json_boolean(v != 0);
	if (fd->kind == F_U64)
		return json_integer((json_int_t)v);
	return isfinite(v) ? json_real(v) : json_null();
}

/* Configuration (config) or metrics (!config) of one result. An empty
 * configuration string (reason when ok, section when none) is left out. */
static int put_fields(json_t *obj, const struct result *r, bool config)
{
	int rc = 0;

	for (size_t i = 0; i < n_result_fields; i++) {
		const struct field *fd = &result_fields[i];

		if (fd->config != config)
			continue;
		if (config && fd->kind == F_STR && !fd->get_str(r)[0])
			continue;
		if (fd->optional && (fd->kind == F_STR ? !fd->get_str(r)[0] :
				     (r->status == RES_OK || config) && isnan(fd->get_num(r))))
			continue;
		rc |= json_object_set_new(obj, fd->key, field_json(fd, r));
	}
	return rc;
}

/* "key=value,key=value" (the options in force) as an object. */
static json_t *kv_list(const char *list)
{
	json_t *obj = json_object();
	char buf[256], *save = NULL;
	int rc = 0;

	if (!obj)
		return NULL;
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(it, '=');

		if (eq)
			*eq++ = '\0';
		rc |= json_object_set_new(obj, it, jvalue(eq ? eq : ""));
	}
	if (rc) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

static json_t *settings_json(const struct tp_settings *s)
{
	json_t *obj = json_object();
	int rc = 0;

	for (unsigned i = 0; obj && i < s->n && i < TP_MAX_SETTINGS; i++)
		rc |= json_object_set_new(obj, s->kv[i].key, jvalue(s->kv[i].val));
	if (rc) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

static json_t *options_json(const struct result *r)
{
	json_t *obj = json_object();

	if (obj && (json_object_set_new(obj, "transport", kv_list(r->tp_opts)) ||
		    json_object_set_new(obj, "pattern", kv_list(r->pat_opts)))) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

static json_t *side_json(const struct side_result *s)
{
	return json_pack("{s:s, s:I, s:I, s:I, s:f, s:I, s:I, s:I, s:I, s:I}",
			 "role", tp_role_name(s->role), "id", (json_int_t)s->id,
			 "user_ns", (json_int_t)s->user_ns, "sys_ns", (json_int_t)s->sys_ns,
			 "cpu_pct", isfinite(s->cpu_pct) ? s->cpu_pct : 0.0,
			 "vol_ctx_switches", (json_int_t)s->vol_cs,
			 "invol_ctx_switches", (json_int_t)s->invol_cs,
			 "msgs", (json_int_t)s->msgs, "bytes", (json_int_t)s->bytes,
			 "elapsed_ns", (json_int_t)s->elapsed_ns);
}

static json_t *sides_json(const struct result *r)
{
	json_t *arr = json_array();
	int rc = 0;

	for (unsigned i = 0; arr && i < r->nsides && i < MAX_SIDES; i++)
		rc |= json_array_append_new(arr, side_json(&r->sides[i]));
	if (rc) {
		json_decref(arr);
		return NULL;
	}
	return arr;
}

/* Non-empty buckets only, as [lower_ns, count]: a histogram is mostly empty. */
static json_t *hist_json(const struct hist *h)
{
	json_t *buckets = json_array();
	int rc = 0;

	for (unsigned i = 0; buckets && i < HIST_BUCKETS; i++)
		if (h->buckets[i])
			rc |= json_array_append_new(buckets, json_pack("[I, I]",
					(json_int_t)hist_bucket_lower(i), (json_int_t)h->buckets[i]));
	if (rc) {
		json_decref(buckets);
		return NULL;
	}
	return json_pack("{s:s, s:I, s:i, s:o}", "unit", "ns", "count", (json_int_t)h->count,
			 "sub_buckets", (int)HIST_SUB, "buckets", buckets);
}

static json_t *cpu_busy_json(const struct result *r)
{
	json_t *arr = json_array();
	int rc = 0;

	for (unsigned i = 0; arr && i < r->ncpu && i < SYS_MAX_CPUS; i++)
		rc |= json_array_append_new(arr, isfinite(r->cpu_busy_pct[i]) ?
						 json_real(r->cpu_busy_pct[i]) : json_null());
	if (rc) {
		json_decref(arr);
		return NULL;
	}
	return arr;
}

static json_t *pair_or_null(double lo, double hi)
{
	return isfinite(lo) && isfinite(hi) ? json_pack("[f,f]", lo, hi) : json_null();
}

/* One metric of "repeat": min, max, spread, ci95, values, and modes when
 * its repetitions fall in two clusters. */
static json_t *repeat_stat_json(const struct repeat_stat *rs)
{
	json_t *o = json_pack("{s:f,s:f,s:f,s:o}", "min", rs->min, "max", rs->max, "spread_pct",
			      rs->spread_pct, "ci95", pair_or_null(rs->ci_lo, rs->ci_hi));
	json_t *vals = json_array();

	for (unsigned i = 0; o && vals && i < rs->n_values && i < REPEAT_MAX_VALUES; i++)
		json_array_append_new(vals, isfinite(rs->values[i]) ? json_real(rs->values[i]) :
								       json_null());
	if (o && vals)
		json_object_set_new(o, "values", vals);
	else
		json_decref(vals);
	if (o && rs->bimodal)
		json_object_set_new(o, "modes", json_pack("{s:f,s:i,s:f,s:i,s:f}", "low_median",
							  rs->low_median, "n_low", (int)rs->n_low,
							  "high_median", rs->high_median, "n_high",
							  (int)rs->n_high, "split", rs->split));
	return o;
}

/* --repeat: {"n", "rounds", "headline", "ci95" (the headline's), "ci95_method",
 * [converged, target_pct], "<metric>": {...}, ...} */
static json_t *repeat_json(const struct result *r)
{
	const char *hk = result_headline_key(r);
	const struct repeat_stat *h = result_repeat_stat(r, hk);
	json_t *o = json_object();

	if (!o)
		return NULL;
	json_object_set_new(o, "n", json_integer(r->repeat_n));
	json_object_set_new(o, "rounds", json_integer(r->repeat_n));
	json_object_set_new(o, "headline", json_string(hk));
	json_object_set_new(o, "ci95", h ? pair_or_null(h->ci_lo, h->ci_hi) : json_null());
	json_object_set_new(o, "ci95_method", json_string("order statistics"));
	if (r->over_runs)	/* run --runs: the values are the runs' */
		json_object_set_new(o, "over", json_string("runs"));
	if (!h || isnan(h->ci_lo))
		json_object_set_new(o, "ci95_note", json_string(STATS_CI_NOTE));
	if (r->repeat_auto) {
		json_object_set_new(o, "converged", json_boolean(r->converged));
		json_object_set_new(o, "target_pct", json_real(r->target_pct));
		json_object_set_new(o, "stopped_by", json_string(r->stopped_by ? r->stopped_by : "cap"));
	}
	for (unsigned i = 0; i < r->n_repeat_stats; i++)
		json_object_set_new(o, r->repeat[i].key, repeat_stat_json(&r->repeat[i]));
	return o;
}

/* metrics, sides and histogram exist only for a result that ran; the
 * pattern's own sections where its report hooks put them. */
static int put_measured(json_t *res, const struct result *r)
{
	const struct pat_report *pr = pat_report_of(r->cell.pat);
	json_t *metrics = json_object();
	int rc = 0;

	if (!metrics)
		return -1;
	rc |= put_fields(metrics, r, false);
	rc |= json_object_set_new(metrics, "cpu_busy_pct", cpu_busy_json(r));
	if (pr && pr->json_metrics)
		rc |= pr->json_metrics(metrics, r);
	rc |= json_object_set_new(res, "metrics", metrics);
	rc |= json_object_set_new(res, "sides", sides_json(r));
	if (r->hist.count)
		rc |= json_object_set_new(res, "histogram", hist_json(&r->hist));
	if (r->repeat_n > 1)
		rc |= json_object_set_new(res, "repeat", repeat_json(r));
	rc |= json_object_set_new(res, "interference", interference_json(&r->intf));
	if (r->trace.on)
		rc |= json_object_set_new(res, "trace", trace_json(&r->trace));
	if (pr && pr->json_result)
		rc |= pr->json_result(res, r);
	if (r->profile.on) {
		rc |= json_object_set_new(res, "profile", profile_json(&r->profile));
		rc |= json_object_set_new(res, "profile_run", profile_run_json(&r->profile));
	}
	return rc;
}

/* a number, or null when it does not apply (NAN) */
static json_t *num_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

/* --reference: {msgs_per_s, lat_mean_ns, lat_p50_ns, pairs, ratio, ...},
 * or null with reference_reason beside it. */
static int put_reference(json_t *res, const struct result *r)
{
	const struct ref_result *x = &r->ref;
	json_t *o, *order;
	bool rtt = x->status == REF_OK && !isnan(x->lat_mean_ns);

	if (x->status == REF_NONE)
		return json_object_set_new(res, "reference", json_null()) |
		       json_object_set_new(res, "reference_reason", jstr(x->reason));
	if (!(o = json_object()) || !(order = json_array()))
		return -1;
	for (unsigned i = 0; i < x->pairs; i++)
		json_array_append_new(order, json_pack("[I,I]", (json_int_t)x->order[i][0],
						       (json_int_t)x->order[i][1]));
	json_object_set_new(o, "status", json_string(x->status == REF_OK ? "ok" : "failed"));
	if (x->status == REF_FAILED)
		json_object_set_new(o, "reason", jstr(x->reason));
	json_object_set_new(o, "msgs_per_s", num_or_null(x->status == REF_OK ? x->msgs_per_s : NAN));
	json_object_set_new(o, "lat_mean_ns", num_or_null(rtt ? x->lat_mean_ns : NAN));
	json_object_set_new(o, "lat_p50_ns",
			    rtt ? json_integer((json_int_t)x->lat_p50_ns) : json_null());
	json_object_set_new(o, "pairs", json_integer(x->pairs));
	json_object_set_new(o, "ratio", num_or_null(x->ratio));
	json_object_set_new(o, "ratio_of",
			    json_string(r->lat_kind == LAT_RTT ? "lat_mean_ns" : "msgs_per_s"));
	json_object_set_new(o, "overhead_pct", num_or_null(x->overhead_pct));
	json_object_set_new(o, "order", order);
	return json_object_set_new(res, "reference", o);
}

static json_t *result_json(const struct result *r)
{
	json_t *res = json_object();
	int rc = 0;

	if (!res)
		return NULL;
	rc |= put_fields(res, r, true);
	rc |= json_object_set_new(res, "settings", settings_json(&r->settings));
	rc |= json_object_set_new(res, "options", options_json(r));
	if (r->status == RES_OK)
		rc |= put_measured(res, r);
	if (r->ref.on)
		rc |= put_reference(res, r);
	if (r->remote.on)
		rc |= json_object_set_new(res, "remote", remote_result_json(&r->remote));
	if (rc) {
		json_decref(res);
		return NULL;
	}
	return res;
}

/* run --runs: run j of a cell, {"run", "status", ["reason"], ["metrics"]}. */
static json_t *cell_run_json(const struct result *r, unsigned j)
{
	const struct pat_report *pr = pat_report_of(r->cell.pat);
	json_t *o = json_pack("{s:i, s:s}", "run", (int)j + 1, "status", result_status_name(r->status));
	json_t *metrics;
	int rc = 0;

	if (o && r->status != RES_OK)
		rc |= json_object_set_new(o, "reason", jstr(r->reason));
	if (o && r->status == RES_OK) {
		if (!(metrics = json_object()))
			rc = -1;
		else if ((rc |= json_object_set_new(o, "metrics", metrics)) == 0) {
			rc |= put_fields(metrics, r, false);
			if (pr && pr->json_metrics)
				rc |= pr->json_metrics(metrics, r);
		}
	}
	if (!o || rc) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* run --runs: the runs ({"run", "started_utc", "start_offset_ns" (from
 * run 1's start), "elapsed_ns", "canary",
 * "canary_change"}) at the top, each cell's figures in each beside its
 * fold ("runs": [...] in every result). */
static int runs_json_put(json_t *root, json_t *results, const struct report *rep)
{
	json_t *arr = json_array();
	int rc = !arr;

	for (unsigned j = 0; arr && j < rep->nruns; j++) {
		const struct run_mark *m = &rep->runs[j];
		char when[32] = "";
		struct tm tm;

		if (gmtime_r(&m->started, &tm))
			strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		rc |= json_array_append_new(arr, json_pack("{s:i, s:s, s:I, s:I, s:o, s:o}", "run", (int)j + 1,
							   "started_utc", when,
							   "start_offset_ns", (json_int_t)(m->start_ns - rep->runs[0].start_ns),
							   "elapsed_ns", (json_int_t)m->elapsed_ns,
							   "canary", canary_json(m->canary),
							   "canary_change", m->canary_change > 0 ?
							   json_real(m->canary_change) : json_null()));
	}
	rc |= json_object_set_new(root, "runs", arr);
	for (size_t i = 0; !rc && i < rep->n; i++) {
		json_t *cell = json_array();

		for (unsigned j = 0; cell && j < rep->nruns; j++)
			rc |= json_array_append_new(cell, cell_run_json(&rep->run_results[i * rep->nruns + j], j));
		rc |= json_object_set_new(json_array_get(results, i), "runs", cell);
	}
	return rc;
}

/* The same builder as `ipclab env -f json` (envcmd.c): the same keys. */
static json_t *env_json(const struct env_info *e)
{
	return env_json_object(e);
}

/* A number, or null when NAN. */
static json_t *jnum(double v)
{
	return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

static json_t *jci(double lo, double hi)
{
	return isnan(lo) || isnan(hi) ? json_null() : json_pack("[o, o]", jnum(lo), jnum(hi));
}

/* A section's question, tested: {"question", "hypotheses", "answer",
 * "verdict", "compared", "tests"}. */
static json_t *why_json(const struct report_why *w)
{
	json_t *hyp = json_array(), *tests = json_array();

	for (unsigned i = 0; hyp && i < w->nhyp && i < WHY_MAX_HYP; i++)
		json_array_append_new(hyp, json_pack("{s:o, s:o, s:b, s:o}", "claim", jstr(w->hyp[i].claim),
						     "conditions", jstr(w->hyp[i].conditions),
						     "reproduced", w->hyp[i].reproduced,
						     "evidence", jstr(w->hyp[i].evidence)));
	for (unsigned i = 0; tests && i < w->ntests && i < WHY_MAX_TESTS; i++) {
		const struct why_test *t = &w->tests[i];

		json_array_append_new(tests, json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "knob", jstr(t->knob),
						       "of", jstr(t->of), "ratio", jnum(t->ratio),
						       "ratio_ci95", jci(t->lo, t->hi), "ci_basis", t->ci_basis ? jstr(t->ci_basis) : json_null(),
						       "p_value", jnum(t->p_value), "verdict", jstr(t->verdict)));
	}
	return json_pack("{s:o, s:o, s:o, s:o, s:{s:o, s:o, s:o, s:o}, s:o}", "question", jstr(w->question),
			 "hypotheses", hyp, "answer", jstr(w->answer), "verdict", jstr(w->verdict),
			 "compared", "of", jstr(w->compared.of), "ratio", jnum(w->compared.ratio),
			 "ratio_ci95", jci(w->compared.lo, w->compared.hi), "ci_basis",
			 w->compared.ci_basis ? jstr(w->compared.ci_basis) : json_null(), "tests", tests);
}

/* A suite's sections: [{"name", "title", "text"[, "why"]}], in the order
 * they ran. */
static json_t *sections_json(const struct report *rep)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < rep->nsections; i++) {
		const struct report_section *s = &rep->sections[i];
		json_t *o = json_pack("{s:o, s:o, s:o}", "name", jstr(s->name), "title", jstr(s->title),
				      "text", jstr(s->text));

		if (o && s->why)
			json_object_set_new(o, "why", why_json(s->why));
		json_array_append_new(arr, o);
	}
	return arr;
}

static json_t *report_tree(const struct report *rep)
{
	json_t *results = json_array(), *root;
	char when[32] = "";
	time_t t = rep->created ? rep->created : time(NULL);
	struct tm tm;
	int rc = 0;

	for (size_t i = 0; results && i < rep->n; i++)
		rc |= json_array_append_new(results, result_json(&rep->results[i]));
	if (rc) {
		json_decref(results);
		return NULL;
	}
	if (gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	root = json_pack("{s:i, s:s, s:s, s:s, s:o, s:o, s:o}",
			 "schema_version", SCHEMA_VERSION, "ipclab_version", IPCLAB_VERSION,
			 "ipclab_git_rev", IPCLAB_GIT_REV, "created_utc", when,
			 "cmdline", jstr(rep->cmdline), "env", env_json(&rep->env),
			 "results", results);
	if (root && rep->remote_env_json &&	/* --peer: the server host's */
	    json_object_set_new(root, "remote_env", remote_env_json(rep->remote_env_json))) {
		json_decref(root);
		return NULL;
	}
	if (root && rep->matrix && matrix_json_put(root, rep)) {	/* --pin matrix */
		json_decref(root);
		return NULL;
	}
	if (root && rep->nsections && json_object_set_new(root, "sections", sections_json(rep))) {
		json_decref(root);
		return NULL;
	}
	if (root && rep->nruns && runs_json_put(root, results, rep)) {	/* run --runs */
		json_decref(root);
		return NULL;
	}
	return root;
}

/* JSON_INDENT puts every number of a histogram bucket on its own line; an
 * array that holds only numbers is written on one line instead. A raw newline
 * never occurs inside a JSON string, so "[\n" always opens a real array. */
static void write_compact_leaves(FILE *f, const char *s)
{
	while (*s) {
		size_t n = strspn(s + 1, "0123456789.eE+-, \n");

		if (s[0] != '[' || s[1] != '\n' || s[1 + n] != ']') {
			fputc(*s++, f);
			continue;
		}
		fputc('[', f);
		for (const char *p = s + 1; p < s + 1 + n; p++) {
			if (*p == ' ' || *p == '\n')
				continue;
			fputc(*p, f);
			if (*p == ',')
				fputc(' ', f);
		}
		fputc(']', f);
		s += n + 2;
	}
}

int report_json(FILE *f, const struct report *rep, char *err, size_t errlen)
{
	json_t *root = report_tree(rep);
	char *text;

	if (!root)
		return errf(err, errlen, ENOMEM, "json: out of memory building the result record");
	text = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
	json_decref(root);
	if (!text)
		return errf(err, errlen, ENOMEM, "json: out of memory writing the result record");
	errno = 0;
	write_compact_leaves(f, text);
	free(text);
	if (fputc('\n', f) == EOF || fflush(f) || ferror(f))
		return errf(err, errlen, EIO, "json: cannot write the result record: %s",
			    strerror(errno ? errno : EIO));
	return 0;
}
