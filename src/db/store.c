// SPDX-License-Identifier: MIT
/* A result file into the store and back. The file is read through the
 * validated reader (src/report/rfile.c), so what is stored is what compare
 * and plot accept; each result is kept as its whole JSON object (numbers
 * to 17 digits: every double comes back exact) beside columns of its
 * configuration, and the file's header (everything but "results") as it
 * was, so that `db export` gives the file back. The same file stored twice
 * is one run (a digest of its content). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ipclab/util.h"
#include "../report/rfile.h"
#include "db.h"

#define DUMP_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(17))

static bool label_key_ok(const char *k, size_t n)
{
	return n && n < sizeof(((struct db_label *)0)->key) &&
	       strspn(k, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") >= n;
}

/* Printable, valid UTF-8 (it is stored as JSON too). */
static bool label_value_ok(const char *v, size_t n)
{
	json_t *j;

	if (n >= sizeof(((struct db_label *)0)->value))
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
			return false;
	j = json_stringn(v, n);
	json_decref(j);
	return j != NULL;
}

/* key=value into labels (room for cap), replacing the same key. */
static int label_set(struct db_label *labels, size_t *n, size_t cap, const char *k, size_t kl,
		     const char *v, size_t vl)
{
	size_t i = 0;

	while (i < *n && (strlen(labels[i].key) != kl || strncmp(labels[i].key, k, kl)))
		i++;
	if (i == *n && *n >= cap)
		return -E2BIG;
	snprintf(labels[i].key, sizeof(labels[i].key), "%.*s", (int)kl, k);
	snprintf(labels[i].value, sizeof(labels[i].value), "%.*s", (int)vl, v);
	if (i == *n)
		(*n)++;
	return 0;
}

static const char *label_get(const struct db_label *labels, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(labels[i].key, key))
			return labels[i].value;
	return NULL;
}

int db_labels_parse(const char *text, struct db_label *labels, size_t *n, char *err, size_t len)
{
	for (const char *p = text; *p;) {
		const char *e = strchrnul(p, ','), *eq = memchr(p, '=', (size_t)(e - p));

		if (!eq || !label_key_ok(p, (size_t)(eq - p)) ||
		    !label_value_ok(eq + 1, (size_t)(e - eq - 1)))
			return errf(err, len, EINVAL, "--label %s: expected KEY=VALUE[,KEY=VALUE...], keys of letters, digits, _ . - (e.g. --label kernel=6.18-rc3,commit=abc123)",
				    text);
		/* two places kept for the machine and the kernel */
		if (label_set(labels, n, DB_MAX_LABELS - 2, p, (size_t)(eq - p), eq + 1,
			      (size_t)(e - eq - 1)))
			return errf(err, len, EINVAL, "--label: at most %d labels", DB_MAX_LABELS - 2);
		p = *e ? e + 1 : e;
	}
	return 0;
}

static const char *str_of(const json_t *obj, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(obj, key));

	return s && *s ? s : dflt;
}

/* FNV-1a, 64 bits, of the file's content with its keys sorted. */
static int digest(const json_t *root, char *out, size_t len)
{
	char *text = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
	uint64_t h = 0xcbf29ce484222325ull;

	if (!text)
		return -ENOMEM;
	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		h = (h ^ *p) * 0x100000001b3ull;
	snprintf(out, len, "%016" PRIx64 "-%zx", h, strlen(text));
	free(text);
	return 0;
}

static int first_id(void *arg, const char *const *col, int ncol)
{
	*(int64_t *)arg = ncol > 0 && col[0] ? strtoll(col[0], NULL, 10) : 0;
	return 0;
}

/* The run's own row: header (the file with "results": null in its place),
 * what it ran on, labels. */
struct run_row {
	char digest[48], stored[32], nres[16], kernel[128];
	char *header, *labels;
	const char *created, *machine, *version, *rev, *cmdline;
};

static int run_row_fill(struct run_row *r, const json_t *root, struct db_label *labels,
			size_t *nlabels, size_t nresults)
{
	const json_t *env = json_object_get(root, "env");
	json_t *head = json_copy((json_t *)root), *lab = json_object();
	time_t t = time(NULL);
	struct tm tm;
	int ret = digest(root, r->digest, sizeof(r->digest));

	snprintf(r->kernel, sizeof(r->kernel), "%s", str_of(env, "kernel", "unknown"));
	r->kernel[strcspn(r->kernel, " ")] = '\0';	/* the release */
	r->machine = str_of(env, "hostname", "unknown");
	r->created = str_of(root, "created_utc", "");
	r->version = str_of(root, "ipclab_version", "");
	r->rev = str_of(root, "ipclab_git_rev", "");
	r->cmdline = str_of(root, "cmdline", "");
	snprintf(r->nres, sizeof(r->nres), "%zu", nresults);
	strftime(r->stored, sizeof(r->stored), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
	if (!*r->created)
		r->created = r->stored;
	/* the machine and the kernel are labels unless given */
	if (!ret && !label_get(labels, *nlabels, "machine"))
		ret = label_set(labels, nlabels, DB_MAX_LABELS, "machine", 7, r->machine,
				strlen(r->machine));
	if (!ret && !label_get(labels, *nlabels, "kernel"))
		ret = label_set(labels, nlabels, DB_MAX_LABELS, "kernel", 6, r->kernel,
				strlen(r->kernel));
	if (!ret)
		r->machine = label_get(labels, *nlabels, "machine");
	for (size_t i = 0; lab && i < *nlabels; i++)
		json_object_set_new(lab, labels[i].key, json_string(labels[i].value));
	if (head)
		json_object_set_new(head, "results", json_null());
	r->header = head ? json_dumps(head, DUMP_FLAGS) : NULL;
	r->labels = lab ? json_dumps(lab, DUMP_FLAGS | JSON_SORT_KEYS) : NULL;
	json_decref(head);
	json_decref(lab);
	return ret ? ret : r->header && r->labels ? 0 : -ENOMEM;
}

static int put_run(struct db *db, const struct run_row *r, int64_t *id, char *err, size_t len)
{
	const char *p[] = { r->digest, r->created, r->stored, r->machine, r->kernel, r->version,
			    r->rev, r->cmdline, r->nres, r->labels, r->header };

	*id = 0;
	return db_exec(db, "INSERT INTO ipclab_runs (digest, created_utc, stored_utc, machine, kernel, "
		       "ipclab_version, ipclab_git_rev, cmdline, nresults, labels, header) "
		       "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id",
		       p, ARRAY_SIZE(p), first_id, id, err, len);
}

static int put_labels(struct db *db, const char *run, const struct db_label *labels, size_t n,
		      char *err, size_t len)
{
	int ret = 0;

	for (size_t i = 0; i < n && !ret; i++) {
		const char *p[] = { run, labels[i].key, labels[i].value };

		ret = db_exec(db, "INSERT INTO ipclab_labels (run_id, key, value) VALUES ($1, $2, $3)",
			      p, 3, NULL, NULL, err, len);
	}
	return ret;
}

/* A key's value as a column: integers and strings as they are, else NULL. */
static const char *col_text(const json_t *obj, const char *key, bool integer, char *buf, size_t len)
{
	const json_t *v = json_object_get(obj, key);

	if (integer && json_is_integer(v))
		snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else if (!integer && json_is_string(v))
		snprintf(buf, len, "%s", json_string_value(v));
	else
		return NULL;
	return buf;
}

static const char *metric_text(const json_t *obj, const char *key, char *buf, size_t len)
{
	const json_t *v = json_object_get(json_object_get(obj, "metrics"), key);

	if (!json_is_number(v))
		return NULL;
	snprintf(buf, len, "%.17g", json_number_value(v));
	return buf;
}

static int put_result(struct db *db, const char *run, size_t idx, const struct rcell *c, char *err,
		      size_t len)
{
	char b[13][64], ix[24];
	char *body = json_dumps(c->obj, DUMP_FLAGS);
	const json_t *o = c->obj;
	const char *p[] = {
		run, ix, c->transport, c->pattern, col_text(o, "size_bytes", true, b[0], 64),
		col_text(o, "endpoints", false, b[1], 64), col_text(o, "pin", false, b[2], 64),
		col_text(o, "sched", false, b[3], 64), col_text(o, "clients", true, b[4], 64),
		col_text(o, "section", false, b[5], 64), str_of(o, "status", ""), c->match, body,
		metric_text(o, "msgs_per_s", b[6], 64), metric_text(o, "lat_p50_ns", b[7], 64),
		metric_text(o, "lat_p99_ns", b[8], 64), metric_text(o, "cpu_ns_per_msg", b[9], 64),
	};
	int ret;

	if (!body)
		return errf(err, len, ENOMEM, "out of memory");
	snprintf(ix, sizeof(ix), "%zu", idx);
	ret = db_exec(db, "INSERT INTO ipclab_results (run_id, idx, transport, pattern, size_bytes, "
		      "endpoints, pin, sched, clients, section, status, cell_key, body, msgs_per_s, "
		      "lat_p50_ns, lat_p99_ns, cpu_ns_per_msg) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, "
		      "$9, $10, $11, $12, $13, $14, $15, $16, $17)",
		      p, ARRAY_SIZE(p), NULL, NULL, err, len);
	free(body);
	return ret;
}

static int store_in_tx(struct db *db, const struct rfile *rf, const struct run_row *r,
		       const struct db_label *labels, size_t nlabels, int64_t *run_id, bool *dup,
		       char *err, size_t len)
{
	const char *p[] = { r->digest };
	char run[24];
	int ret = db_exec(db, "SELECT id FROM ipclab_runs WHERE digest = $1", p, 1, first_id, run_id,
			  err, len);

	if (ret || (*dup = *run_id != 0))
		return ret;
	ret = put_run(db, r, run_id, err, len);
	snprintf(run, sizeof(run), "%" PRId64, *run_id);
	if (!ret)
		ret = put_labels(db, run, labels, nlabels, err, len);
	for (size_t i = 0; i < rf->n && !ret; i++)
		ret = put_result(db, run, i, &rf->cells[i], err, len);
	return ret;
}

int db_store_tree(struct db *db, const json_t *root, const struct db_label *labels, size_t nlabels,
		  int64_t *run_id, bool *dup, char *err, size_t len)
{
	struct db_label all[DB_MAX_LABELS];
	struct run_row r = { 0 };
	struct rfile rf;
	size_t n = nlabels < DB_MAX_LABELS - 2 ? nlabels : DB_MAX_LABELS - 2;
	int ret = rfile_adopt(&rf, json_incref((json_t *)root), "the run", NULL, err, len);

	*dup = false;
	*run_id = 0;
	if (ret)
		return ret;
	memcpy(all, labels, n * sizeof(*labels));
	ret = run_row_fill(&r, root, all, &n, rf.n);
	if (ret)
		ret = errf(err, len, -ret, "out of memory, or too many labels");
	if (!ret)
		ret = db_begin(db, err, len);
	if (!ret) {
		ret = store_in_tx(db, &rf, &r, all, n, run_id, dup, err, len);
		if (ret || *dup)
			db_rollback(db);
		else
			ret = db_commit(db, err, len);
	}
	/* the same file stored by another process at the same moment */
	if (ret == -EEXIST) {
		const char *p[] = { r.digest };

		*dup = true;
		ret = db_exec(db, "SELECT id FROM ipclab_runs WHERE digest = $1", p, 1, first_id,
			      run_id, err, len);
	}
	free(r.header);
	free(r.labels);
	rfile_free(&rf);
	return ret;
}

/* ---- back out ---- */

struct loaded {
	json_t *root, *results;
	int bad;
};

static int got_header(void *arg, const char *const *col, int ncol)
{
	struct loaded *l = arg;

	l->root = ncol > 0 && col[0] ? json_loads(col[0], 0, NULL) : NULL;
	l->bad |= !json_is_object(l->root);
	return 0;
}

static int got_body(void *arg, const char *const *col, int ncol)
{
	struct loaded *l = arg;
	json_t *o = ncol > 0 && col[0] ? json_loads(col[0], 0, NULL) : NULL;

	l->bad |= !json_is_object(o) || json_array_append_new(l->results, o);
	return 0;
}

int db_load_run(struct db *db, int64_t id, json_t **out, char *err, size_t len)
{
	struct loaded l = { .results = json_array() };
	char run[24];
	const char *p[] = { run };
	int ret;

	snprintf(run, sizeof(run), "%" PRId64, id);
	ret = db_exec(db, "SELECT header FROM ipclab_runs WHERE id = $1", p, 1, got_header, &l, err,
		      len);
	if (!ret && !l.root && !l.bad)
		ret = errf(err, len, ENOENT, "%s holds no run %" PRId64 "; see ipclab db ls", db->where, id);
	if (!ret)
		ret = db_exec(db, "SELECT body FROM ipclab_results WHERE run_id = $1 ORDER BY idx", p, 1,
			      got_body, &l, err, len);
	if (!ret && (l.bad || !l.results))
		ret = errf(err, len, EINVAL, "%s: run %" PRId64 " is damaged (its stored JSON does not parse)",
			   db->where, id);
	/* "results" back in its place (the header holds null there) */
	if (!ret && json_object_set(l.root, "results", l.results))
		ret = errf(err, len, ENOMEM, "out of memory");
	json_decref(l.results);
	if (ret)
		json_decref(l.root);
	*out = ret ? NULL : l.root;
	return ret;
}
