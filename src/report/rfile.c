// SPDX-License-Identifier: MIT
/* Result files read back: plot and compare work from the JSON a run wrote,
 * never from memory, so any stored file can be plotted or compared later.
 * A cell's identity (what compare matches on) is its configuration: every
 * top-level scalar key but those that only say how long it ran, plus its
 * options. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/result.h"
#include "ipclab/util.h"
#include "rfile.h"

const char *const rf_unmatched_keys[] = {
	"status", "reason", "count", "warmup", "duration_ns", "timeout_ns", "max_time_ns", "repeat", "repeat_n", NULL,
};

const char *rf_metric_alias(const char *name)
{
	static const struct { const char *alias, *key; } aliases[] = {
		{ "size", "size_bytes" },	{ "cpu_pct", "cpu_pct_total" },
		{ "rate", "rate_per_s" },	{ "p50", "lat_p50_ns" },
		{ "p99", "lat_p99_ns" },	{ "cs", "sys_ctx_switches_per_s" },
		{ "cpu_per_msg", "cpu_ns_per_msg" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(aliases); i++)
		if (!strcmp(name, aliases[i].alias))
			return aliases[i].key;
	return name;
}

void rf_scalar_text(const json_t *v, char *buf, size_t len)
{
	if (json_is_string(v))
		snprintf(buf, len, "%s", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, len, "%.15g", json_real_value(v));
	else if (json_is_boolean(v))
		snprintf(buf, len, "%s", json_is_true(v) ? "true" : "false");
	else
		snprintf(buf, len, "null");
}

static bool in_list(const char *const *list, const char *key)
{
	for (; list && *list; list++)
		if (!strcmp(*list, key))
			return true;
	return false;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "key=value;key=value;options={...}", keys sorted: the same configuration
 * gives the same text whatever order a writer put the keys in. */
static int match_key(struct rcell *c, const char *const *ignore)
{
	const char *keys[64], *k;
	size_t n = 0, off = 0;
	json_t *v;
	char *opts;

	json_object_foreach(c->obj, k, v)
		if (n < ARRAY_SIZE(keys) && !json_is_object(v) && !json_is_array(v) &&
		    !in_list(rf_unmatched_keys, k) && !in_list(ignore, k))
			keys[n++] = k;
	qsort(keys, n, sizeof(keys[0]), cmp_str);
	for (size_t i = 0; i < n; i++) {
		char val[256];

		rf_scalar_text(json_object_get(c->obj, keys[i]), val, sizeof(val));
		off += (size_t)snprintf(c->match + off, RF_KEYLEN - off, "%s=%s;", keys[i], val);
		if (off >= RF_KEYLEN)	/* never a pointer past the buffer */
			return -E2BIG;
	}
	opts = json_dumps(json_object_get(c->obj, "options"), JSON_COMPACT | JSON_SORT_KEYS |
			  JSON_ENCODE_ANY);
	if (!opts)
		return -ENOMEM;
	off += (size_t)snprintf(c->match + off, RF_KEYLEN - off, "options=%s", opts);
	free(opts);
	return off < RF_KEYLEN ? 0 : -E2BIG;
}

/* repeat.<key>.values: an array of at most REPF_MAX_VALUES finite numbers
 * (null where a repetition had none: run writes a NaN so; skipped). */
static bool values_ok(const json_t *vals)
{
	const json_t *v;
	size_t i;

	if (!json_is_array(vals) || json_array_size(vals) > REPF_MAX_VALUES)
		return false;
	json_array_foreach(vals, i, v)
		if (!json_is_null(v) && (!json_is_number(v) || !isfinite(json_number_value(v))))
			return false;
	return true;
}

/* repeat.<key>.modes: positive medians with the split between them. */
static bool modes_ok(const json_t *m)
{
	double lo = json_number_value(json_object_get(m, "low_median"));
	double hi = json_number_value(json_object_get(m, "high_median"));
	double split = json_number_value(json_object_get(m, "split"));

	return json_is_object(m) && json_is_number(json_object_get(m, "low_median")) &&
	       json_is_number(json_object_get(m, "high_median")) &&
	       json_is_number(json_object_get(m, "split")) && lo > 0 && lo < split &&
	       split < hi && isfinite(hi);
}

_Static_assert(REPF_MAX_VALUES == REPEAT_MAX_VALUES, "compare reads what run writes");

/* A key from a file, for a one-line message: printable ASCII only. */
static const char *safe_key(const char *key, char *buf, size_t len)
{
	size_t n = 0;

	for (; *key && n + 1 < len; key++)
		buf[n++] = *key >= 0x20 && *key < 0x7f ? *key : '?';
	buf[n] = '\0';
	return buf;
}

/* A results file is anyone's: what compare's tests read from "repeat" is
 * checked once here, so that they never meet a string, a NaN or a
 * thousand values. */
static int check_repeat(const json_t *rep, size_t i, char *err, size_t errlen)
{
	const char *key;
	char kb[65];
	json_t *m;

	if (!json_is_object(rep))	/* older files: "repeat": N, a configuration key */
		return 0;
	json_object_foreach((json_t *)rep, key, m) {
		json_t *vals = json_object_get(m, "values"), *modes = json_object_get(m, "modes");

		if (!json_is_object(m))
			continue;
		if (vals && !values_ok(vals))
			return errf(err, errlen, EINVAL,
				    "results[%zu].repeat.%s.values: expected at most %d finite numbers",
				    i, safe_key(key, kb, sizeof(kb)), REPF_MAX_VALUES);
		if (modes && !modes_ok(modes))
			return errf(err, errlen, EINVAL,
				    "results[%zu].repeat.%s.modes: expected low_median < split < high_median, all above 0",
				    i, safe_key(key, kb, sizeof(kb)));
	}
	return 0;
}

static int load_cell(struct rcell *c, json_t *obj, const char *const *ignore, size_t i,
		     char *err, size_t errlen)
{
	const char *status;
	int ret;

	if (!json_is_object(obj))
		return errf(err, errlen, EINVAL, "results[%zu] is not an object", i);
	c->obj = obj;
	c->transport = rec_transport(obj);
	c->pattern = rec_pattern(obj);
	status = rec_status(obj);
	if (!c->transport || !c->pattern || !status)
		return errf(err, errlen, EINVAL,
			    "results[%zu] lacks transport, pattern or status", i);
	c->ok = !strcmp(status, "ok") && json_is_object(json_object_get(obj, "metrics"));
	ret = check_repeat(json_object_get(obj, "repeat"), i, err, errlen);
	if (ret)
		return ret;
	ret = match_key(c, ignore);
	if (ret)
		return errf(err, errlen, -ret, "results[%zu]: configuration too long to match", i);
	return 0;
}

/* The file's tree (rf->root, owned) into its cells. */
static int rfile_from_root(struct rfile *rf, const char *const *ignore, char *err, size_t errlen)
{
	const char *path = rf->path;
	json_t *results, *ver;
	int ret = 0;

	ver = json_object_get(rf->root, "schema_version");
	results = json_object_get(rf->root, "results");
	if (!json_is_integer(ver) || !json_is_array(results))
		ret = errf(err, errlen, EINVAL, "%s: not an ipclab result file (no schema_version or results); write one with ipclab run -f json -o FILE",
			   path);
	else if (json_integer_value(ver) > SCHEMA_VERSION)
		ret = errf(err, errlen, EINVAL, "%s: schema_version %" JSON_INTEGER_FORMAT " is newer than this ipclab reads (%d); use a newer ipclab",
			   path, json_integer_value(ver), SCHEMA_VERSION);
	if (!ret) {
		rf->n = json_array_size(results);
		rf->cells = calloc(rf->n ? rf->n : 1, sizeof(*rf->cells));
		if (!rf->cells)
			ret = errf(err, errlen, ENOMEM, "%s: out of memory", path);
	}
	for (size_t i = 0; !ret && i < rf->n; i++) {
		char why[ERRLEN];

		ret = load_cell(&rf->cells[i], json_array_get(results, i), ignore, i, why, sizeof(why));
		if (ret)
			errf(err, errlen, -ret, "%s: %s", path, why);
	}
	if (ret)
		rfile_free(rf);
	return ret;
}

static int parse_error(const char *path, const json_error_t *jerr, char *err, size_t errlen)
{
	if (jerr->line < 1)
		return errf(err, errlen, EINVAL, "%s: %s", path, jerr->text);
	return errf(err, errlen, EINVAL, "%s: line %d: %s; expected a file from ipclab run -f json",
		    path, jerr->line, jerr->text);
}

int rfile_load(struct rfile *rf, const char *path, const char *const *ignore, char *err,
	       size_t errlen)
{
	json_error_t jerr;

	memset(rf, 0, sizeof(*rf));
	snprintf(rf->path, sizeof(rf->path), "%s", path);
	rf->root = json_load_file(path, 0, &jerr);
	if (!rf->root)
		return parse_error(path, &jerr, err, errlen);
	return rfile_from_root(rf, ignore, err, errlen);
}

int rfile_load_text(struct rfile *rf, const char *name, const char *text, size_t len,
		    const char *const *ignore, char *err, size_t errlen)
{
	json_error_t jerr;

	memset(rf, 0, sizeof(*rf));
	snprintf(rf->path, sizeof(rf->path), "%s", name);
	rf->root = json_loadb(text, len, 0, &jerr);
	if (!rf->root)
		return parse_error(name, &jerr, err, errlen);
	return rfile_from_root(rf, ignore, err, errlen);
}

int rfile_from_tree(struct rfile *rf, json_t *root, const char *path, const char *const *ignore,
		    char *err, size_t errlen)
{
	return rfile_adopt(rf, root, path, ignore, err, errlen);
}

int rfile_adopt(struct rfile *rf, json_t *root, const char *path, const char *const *ignore,
		char *err, size_t errlen)
{
	memset(rf, 0, sizeof(*rf));
	snprintf(rf->path, sizeof(rf->path), "%s", path);
	rf->root = root;
	return rfile_from_root(rf, ignore, err, errlen);
}

void rfile_free(struct rfile *rf)
{
	json_decref(rf->root);
	free(rf->cells);
	rf->root = NULL;
	rf->cells = NULL;
	rf->n = 0;
}

enum lat_kind rcell_lat_kind(const struct rcell *c)
{
	return rec_lat_kind(c->obj);
}

double rcell_metric(const struct rcell *c, const char *key)
{
	return rec_metric(c->obj, key);
}

/* pin "S:C": the server's and the client's CPU. */
static int pin_cpu(const struct rcell *c, bool server, char *buf, size_t len)
{
	const char *pin = json_string_value(json_object_get(c->obj, "pin"));
	const char *colon = pin ? strchr(pin, ':') : NULL;

	if (!colon)
		return -ENOENT;
	if (server)
		snprintf(buf, len, "%.*s", (int)(colon - pin), pin);
	else
		snprintf(buf, len, "%s", colon + 1);
	return 0;
}

/* The value of parameter name in c, as rcell_param finds it; NULL: none. */
static json_t *param_value(const struct rcell *c, const char *name)
{
	json_t *v = json_object_get(c->obj, rf_metric_alias(name));
	json_t *opts = json_object_get(c->obj, "options");

	if (!v || json_is_object(v) || json_is_array(v))
		v = json_object_get(json_object_get(opts, "transport"), name);
	if (!v)
		v = json_object_get(json_object_get(opts, "pattern"), name);
	return !v || json_is_object(v) || json_is_array(v) ? NULL : v;
}

int rcell_param(const struct rcell *c, const char *name, char *buf, size_t len)
{
	json_t *v;

	if (!strcmp(name, "server_cpu") || !strcmp(name, "client_cpu"))
		return pin_cpu(c, name[0] == 's', buf, len);
	if (!(v = param_value(c, name)))
		return -ENOENT;
	rf_scalar_text(v, buf, len);
	return 0;
}

bool rcell_same_label(const struct rcell *a, const struct rcell *b, const char *const *names, size_t n,
		      const char *skip)
{
	for (size_t i = 0; i < n; i++) {
		json_t *va, *vb;

		if (skip && !strcmp(names[i], skip))
			continue;
		if (!strcmp(names[i], "server_cpu") || !strcmp(names[i], "client_cpu")) {
			char x[32], y[32];
			int ra = rcell_param(a, names[i], x, sizeof(x)), rb = rcell_param(b, names[i], y, sizeof(y));

			if (ra != rb || (!ra && strcmp(x, y)))
				return false;
			continue;
		}
		va = param_value(a, names[i]);
		vb = param_value(b, names[i]);
		if (!va != !vb || (va && !json_equal(va, vb)))
			return false;
	}
	return true;
}

bool rcell_spread(const struct rcell *c, const char *key, double *min, double *max,
		  double *spread_pct)
{
	json_t *rep = json_object_get(c->obj, "repeat");
	json_t *m = json_is_object(rep) ? json_object_get(rep, key) : NULL;
	json_t *lo = json_object_get(m, "min"), *hi = json_object_get(m, "max");
	json_t *sp = json_object_get(m, "spread_pct");

	if (!json_is_number(lo) || !json_is_number(hi))
		return false;
	*min = json_number_value(lo);
	*max = json_number_value(hi);
	*spread_pct = json_is_number(sp) ? json_number_value(sp) : NAN;
	return true;
}

static json_t *repeat_of(const struct rcell *c, const char *key)
{
	json_t *rep = json_object_get(c->obj, "repeat");

	return json_is_object(rep) ? json_object_get(rep, rf_metric_alias(key)) : NULL;
}

size_t rcell_values(const struct rcell *c, const char *key, double *out, size_t max)
{
	json_t *vals = json_object_get(repeat_of(c, key), "values"), *v;
	size_t i, n = 0;

	if (!json_is_array(vals))
		return 0;
	json_array_foreach(vals, i, v)
		if (n < max && n < REPF_MAX_VALUES && json_is_number(v))
			out[n++] = json_number_value(v);
	return n;
}

bool rcell_modes(const struct rcell *c, const char *key, struct rcell_modes *m)
{
	json_t *mj = json_object_get(repeat_of(c, key), "modes");

	if (!modes_ok(mj))
		return false;
	m->low_median = json_number_value(json_object_get(mj, "low_median"));
	m->high_median = json_number_value(json_object_get(mj, "high_median"));
	m->split = json_number_value(json_object_get(mj, "split"));
	return true;
}

bool rcell_flag(const struct rcell *c, const char *key)
{
	return rec_flag(c->obj, key);
}

int rcell_hist(const struct rcell *c, struct hist *h)
{
	json_t *hj = json_object_get(c->obj, "histogram");
	json_t *buckets = json_object_get(hj, "buckets"), *b;
	json_t *sub = json_object_get(hj, "sub_buckets");
	double lo = rcell_metric(c, "lat_min_ns"), hi = rcell_metric(c, "lat_max_ns");
	size_t i;

	if (!json_is_array(buckets) || !json_array_size(buckets))
		return -ENOENT;
	if (json_integer_value(sub) != HIST_SUB)
		return -EINVAL;
	hist_init(h);
	json_array_foreach(buckets, i, b) {
		json_int_t lower = json_integer_value(json_array_get(b, 0));
		json_int_t n = json_integer_value(json_array_get(b, 1));

		if (lower < 0 || n < 0 || json_array_size(b) != 2)
			return -EINVAL;
		h->buckets[hist_index((uint64_t)lower)] += (uint64_t)n;
		h->count += (uint64_t)n;
		if ((uint64_t)lower < h->min)
			h->min = (uint64_t)lower;
		if ((uint64_t)lower > h->max)
			h->max = (uint64_t)lower;
	}
	if (!isnan(lo) && !isnan(hi)) {
		h->min = (uint64_t)lo;
		h->max = (uint64_t)hi;
	}
	return h->count ? 0 : -ENOENT;
}

/* ---- labels ------------------------------------------------------------------ */

static const char *const lead_params[] = { "transport", "pattern", "size_bytes", "endpoints" };

static bool has_name(const char **names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

/* Does name take two values among the cells that have it? */
/* Whether name takes two values among the cells that have it, each value
 * whole (not as cut to a label's buffer). */
static bool param_varies(const struct rfile *const *files, size_t nfiles, const char *name)
{
	const struct rcell *first = NULL;
	char val[32];

	for (size_t f = 0; f < nfiles; f++)
		for (size_t i = 0; i < files[f]->n; i++) {
			const struct rcell *c = &files[f]->cells[i];

			if (rcell_param(c, name, val, sizeof(val)))
				continue;
			if (first && !rcell_same_label(first, c, &name, 1, NULL))
				return true;
			if (!first)
				first = c;
		}
	return false;
}

static void add_candidates(const json_t *obj, const char **names, size_t *n, size_t max)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)obj, k, v)
		if (*n < max && !json_is_object(v) && !json_is_array(v) && !has_name(names, *n, k))
			names[(*n)++] = k;
}

size_t rf_varying(const struct rfile *const *files, size_t nfiles, bool lead, const char **names,
		  size_t max)
{
	const char *cand[128];
	size_t nc = 0, n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(lead_params); i++)
		cand[nc++] = lead_params[i];
	for (size_t f = 0; f < nfiles; f++)
		for (size_t i = 0; i < files[f]->n; i++) {
			const json_t *obj = files[f]->cells[i].obj, *o = json_object_get(obj, "options");

			add_candidates(obj, cand, &nc, ARRAY_SIZE(cand));
			add_candidates(json_object_get(o, "transport"), cand, &nc, ARRAY_SIZE(cand));
			add_candidates(json_object_get(o, "pattern"), cand, &nc, ARRAY_SIZE(cand));
		}
	for (size_t i = 0; i < nc && n < max; i++)
		if ((lead && i < ARRAY_SIZE(lead_params)) ||
		    (!in_list(rf_unmatched_keys, cand[i]) && param_varies(files, nfiles, cand[i])))
			names[n++] = cand[i];
	return n;
}

static void size_text(const char *val, char *buf, size_t len)
{
	uint64_t b = strtoull(val, NULL, 10);

	if (b && b % (1u << 20) == 0)
		snprintf(buf, len, "%" PRIu64 "MiB", b >> 20);
	else if (b && b % 1024 == 0)
		snprintf(buf, len, "%" PRIu64 "KiB", b >> 10);
	else
		snprintf(buf, len, "%" PRIu64 "B", b);
}

void rcell_label(const struct rcell *c, const char *const *names, size_t n, const char *skip,
		 char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && off < len; i++) {
		char val[256], word[300];
		bool bare = false;

		if ((skip && !strcmp(names[i], skip)) || rcell_param(c, names[i], val, sizeof(val)))
			continue;
		for (size_t k = 0; k < ARRAY_SIZE(lead_params); k++)
			bare |= !strcmp(names[i], lead_params[k]);
		if (!strcmp(names[i], "size_bytes"))
			size_text(val, word, sizeof(word));
		else if (bare)
			snprintf(word, sizeof(word), "%s", val);
		else
			snprintf(word, sizeof(word), "%s=%s", names[i], val);
		off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? " " : "", word);
	}
}
