// SPDX-License-Identifier: MIT
/* Reading the store: results and runs that match a filter, in SQL. The
 * SQL text is made only of fixed pieces and $N placeholders; every value
 * the user gave travels as a parameter. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/util.h"
#include "db.h"

#define MAX_PARAMS 512

struct sql {
	char text[16384];
	size_t off;
	const char *p[MAX_PARAMS];
	char ids[DB_MAX_LIST][24];
	int n;
	bool full;
};

static void add(struct sql *q, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct sql *q, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (q->off < sizeof(q->text))
		q->off += (size_t)vsnprintf(q->text + q->off, sizeof(q->text) - q->off, fmt, ap);
	va_end(ap);
	q->full |= q->off >= sizeof(q->text);
}

/* A new placeholder for value: its number. */
static int param(struct sql *q, const char *value)
{
	if (q->n >= MAX_PARAMS) {
		q->full = true;
		return 1;
	}
	q->p[q->n++] = value;
	return q->n;
}

/* " AND col IN ($a, $b, ...)" over the words given. */
static void in_list(struct sql *q, const char *col, const char *const *vals, unsigned n)
{
	if (!n)
		return;
	add(q, " AND %s IN (", col);
	for (unsigned i = 0; i < n; i++)
		add(q, "%s$%d", i ? ", " : "", param(q, vals[i]));
	add(q, ")");
}

/* Conditions on a result row (alias r). */
static void result_conds(struct sql *q, const struct db_filter *f)
{
	in_list(q, "r.transport", f->transport, f->ntransport);
	in_list(q, "r.pattern", f->pattern, f->npattern);
	in_list(q, "r.endpoints", f->endpoints, f->nendpoints);
	in_list(q, "r.pin", f->pin, f->npin);
	in_list(q, "r.sched", f->sched, f->nsched);
	in_list(q, "r.clients", f->clients, f->nclients);
	in_list(q, "r.size_bytes", f->size, f->nsize);
	if (f->ok_only)
		add(q, " AND r.status = 'ok'");
}

static bool has_result_conds(const struct db_filter *f)
{
	return f->ntransport || f->npattern || f->nendpoints || f->npin || f->nsched ||
	       f->nclients || f->nsize || f->ok_only;
}

/* Conditions on a run row (alias u). */
static void run_conds(struct sql *q, const struct db_filter *f)
{
	for (size_t i = 0; i < f->nlabels; i++) {
		int k = param(q, f->labels[i].key);

		add(q, " AND EXISTS (SELECT 1 FROM ipclab_labels l WHERE l.run_id = u.id AND l.key = $%d AND l.value = $%d)",
		    k, param(q, f->labels[i].value));
	}
	if (f->since)
		add(q, " AND u.created_utc >= $%d", param(q, f->since));
	if (f->machine)
		add(q, " AND u.machine = $%d", param(q, f->machine));
	if (f->nrun_ids) {
		const char *ids[DB_MAX_LIST];

		for (unsigned i = 0; i < f->nrun_ids && i < DB_MAX_LIST; i++) {
			snprintf(q->ids[i], sizeof(q->ids[i]), "%" PRId64, f->run_ids[i]);
			ids[i] = q->ids[i];
		}
		in_list(q, "u.id", ids, f->nrun_ids < DB_MAX_LIST ? f->nrun_ids : DB_MAX_LIST);
	}
}

struct result_cb {
	db_result_fn fn;
	void *arg;
};

static int result_row(void *arg, const char *const *c, int n)
{
	struct result_cb *cb = arg;
	struct db_row row;

	if (n < 7 || !c[0] || !c[1] || !c[6])
		return 0;
	row = (struct db_row){ .run_id = strtoll(c[0], NULL, 10), .idx = (unsigned)atoi(c[1]),
			       .created_utc = c[2] ? c[2] : "", .machine = c[3] ? c[3] : "",
			       .cell_key = c[4] ? c[4] : "", .labels_json = c[5] ? c[5] : "{}",
			       .body = c[6] };
	return cb->fn(cb->arg, &row);
}

int db_query_results(struct db *db, const struct db_filter *f, db_result_fn fn, void *arg,
		     char *err, size_t len)
{
	struct sql *q = calloc(1, sizeof(*q));
	struct result_cb cb = { fn, arg };
	int ret;

	if (!q)
		return errf(err, len, ENOMEM, "out of memory");
	add(q, "SELECT r.run_id, r.idx, u.created_utc, u.machine, r.cell_key, u.labels, r.body "
	       "FROM ipclab_results r JOIN ipclab_runs u ON u.id = r.run_id WHERE 1 = 1");
	result_conds(q, f);
	run_conds(q, f);
	add(q, " ORDER BY u.created_utc, r.run_id, r.idx");
	ret = q->full ? errf(err, len, E2BIG, "too many filters at once") :
			db_exec(db, q->text, q->p, q->n, result_row, &cb, err, len);
	free(q);
	return ret;
}

struct run_cb {
	db_run_fn fn;
	void *arg;
};

static int run_row(void *arg, const char *const *c, int n)
{
	struct run_cb *cb = arg;
	struct db_run_row row;

	if (n < 8 || !c[0])
		return 0;
	row = (struct db_run_row){ .id = strtoll(c[0], NULL, 10), .created_utc = c[1] ? c[1] : "",
				   .machine = c[2] ? c[2] : "", .kernel = c[3] ? c[3] : "",
				   .version = c[4] ? c[4] : "", .git_rev = c[5] ? c[5] : "",
				   .labels_json = c[6] ? c[6] : "{}",
				   .nresults = c[7] ? (unsigned)atoi(c[7]) : 0 };
	return cb->fn(cb->arg, &row);
}

int db_query_runs(struct db *db, const struct db_filter *f, db_run_fn fn, void *arg, char *err,
		  size_t len)
{
	struct sql *q = calloc(1, sizeof(*q));
	struct run_cb cb = { fn, arg };
	int ret;

	if (!q)
		return errf(err, len, ENOMEM, "out of memory");
	add(q, "SELECT u.id, u.created_utc, u.machine, u.kernel, u.ipclab_version, u.ipclab_git_rev, "
	       "u.labels, u.nresults FROM ipclab_runs u WHERE 1 = 1");
	run_conds(q, f);
	if (has_result_conds(f)) {
		add(q, " AND EXISTS (SELECT 1 FROM ipclab_results r WHERE r.run_id = u.id");
		result_conds(q, f);
		add(q, ")");
	}
	add(q, " ORDER BY u.created_utc, u.id");
	ret = q->full ? errf(err, len, E2BIG, "too many filters at once") :
			db_exec(db, q->text, q->p, q->n, run_row, &cb, err, len);
	free(q);
	return ret;
}
