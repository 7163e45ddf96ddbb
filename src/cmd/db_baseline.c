// SPDX-License-Identifier: MIT
/* compare --db URL --baseline K=V AFTER.json: the "before" side from the
 * store -- for each cell of AFTER, the newest stored result of that cell
 * with that label on the same machine -- made into a result file, so that
 * compare judges it exactly as it judges two files. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "dbcmd.h"
#include "../report/rec_env.h"

struct pick {
	const struct rfile *after;
	const char *const *ignore;
	json_t **best;		/* per cell of after: the newest match so far */
	int64_t run;		/* the run of the newest match of any cell */
	int err;
};

/* Rows come oldest first: a later one replaces an earlier one. A stored
 * result's identity is made again, as compare makes AFTER's (--ignore). */
static int pick_row(void *arg, const struct db_row *row)
{
	struct pick *p = arg;
	json_t *body = json_loads(row->body, 0, NULL);
	json_t *tree = json_pack("{s:i, s:[O]}", "schema_version", 1, "results", body);
	struct rfile one;
	char err[ERRLEN];

	if (!json_is_object(body) || !tree ||
	    rfile_adopt(&one, tree, "stored", p->ignore, err, sizeof(err))) {
		json_decref(body);
		p->err = -EINVAL;
		return 0;
	}
	for (size_t i = 0; i < p->after->n; i++) {
		if (strcmp(p->after->cells[i].match, one.cells[0].match))
			continue;
		json_decref(p->best[i]);
		p->best[i] = json_incref(body);
		p->run = row->run_id;
	}
	rfile_free(&one);
	json_decref(body);
	return 0;
}

/* The result file: the newest matching run's header, the picked results. */
static int baseline_tree(struct db *db, struct pick *p, json_t **out, char *err, size_t len)
{
	json_t *root, *results = json_array();
	int ret = db_load_run(db, p->run, &root, err, len);

	if (ret) {
		json_decref(results);
		return ret;
	}
	for (size_t i = 0; results && i < p->after->n; i++)
		if (p->best[i])
			json_array_append(results, p->best[i]);
	if (!results || json_object_set_new(root, "results", results)) {
		json_decref(root);
		return errf(err, len, ENOMEM, "out of memory");
	}
	*out = root;
	return 0;
}

int db_baseline_load(const char *url, bool shared, const char *label, const char *machine,
		     const struct rfile *after, const char *const *ignore, struct rfile *before)
{
	struct db_filter f = { .nlabels = 0 };
	struct pick p = { .after = after, .ignore = ignore,
			  .best = calloc(after->n + 1, sizeof(json_t *)) };
	const char *host = machine ? machine : rfile_hostname(after);
	char err[ERRLEN], name[640];
	struct db *db = NULL;
	json_t *root = NULL;
	int ret = p.best ? 0 : cmd_usage_error("compare", "out of memory");

	if (!ret && db_labels_parse(label, f.labels, &f.nlabels, err, sizeof(err)))
		ret = cmd_usage_error("compare", "--baseline %s: expected K=V, e.g. --baseline commit=abc123", label);
	f.machine = host;
	if (!ret)
		ret = db_cmd_open(url, db_open_flags(false, shared), "compare", &db);
	if (!ret && db_query_results(db, &f, pick_row, &p, err, sizeof(err)))
		ret = say_error("compare", "%s", err);
	if (!ret && p.err)
		ret = cmd_usage_error("compare", "%s: a stored result does not parse", db->where);
	if (!ret && !p.run)
		ret = cmd_usage_error("compare", "--baseline %s: %s holds no result of these cells with that label on machine %s",
				      label, db->where, host ? host : "(unknown)");
	if (!ret && baseline_tree(db, &p, &root, err, sizeof(err)))
		ret = say_error("compare", "%s", err);
	snprintf(name, sizeof(name), "%s (baseline %s)", db ? db->where : "", label);
	if (!ret && rfile_adopt(before, root, name, ignore, err, sizeof(err)))
		ret = cmd_usage_error("compare", "%s", err);
	for (size_t i = 0; p.best && i < after->n; i++)
		json_decref(p.best[i]);
	free(p.best);
	db_close(db);
	return ret;
}
