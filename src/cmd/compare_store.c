// SPDX-License-Identifier: MIT
/* compare's sides from the store: --by machine (each machine's runs with
 * the --label labels are a side, the baseline machine's the before side of
 * every other's), and this machine's calibrated run-to-run drift (the
 * newest run labelled kind=calibration on it, made by env --calibrate). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "dbcmd.h"
#include "compare_store.h"

struct by_machine {
	struct cmp_machines *m;
	int err;
};

static int add_run(void *arg, const struct db_run_row *row)
{
	struct by_machine *b = arg;
	struct cmp_machines *m = b->m;
	const char *name = row->machine ? row->machine : "(unknown)";
	json_t *labels = row->labels_json ? json_loads(row->labels_json, 0, NULL) : NULL;
	const char *kind = rec_label(labels, "kind");
	bool calibration = kind && !strcmp(kind, "calibration");
	size_t i;

	json_decref(labels);
	if (calibration)	/* env --calibrate's runs are no side */
		return 0;

	for (i = 0; i < m->n && strcmp(m->host[i].name, name); i++)
		;
	if (i == m->n) {
		if (m->n == CMP_HOSTS_MAX) {
			b->err = -E2BIG;
			return 1;
		}
		snprintf(m->host[m->n++].name, sizeof(m->host[0].name), "%s", name);
	}
	if (m->host[i].nids == CMP_HOST_RUNS) {
		b->err = -E2BIG;
		return 1;
	}
	m->host[i].ids[m->host[i].nids++] = row->id;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct cmp_host *)a)->name, ((const struct cmp_host *)b)->name);
}

void cmp_machines_free(struct cmp_machines *m)
{
	for (size_t i = 0; i < m->n; i++) {
		for (size_t j = 0; j < m->host[i].nruns; j++)
			rfile_free(&m->host[i].runs[j]);
		free(m->host[i].ptr);
	}
	free(m->host);
	memset(m, 0, sizeof(*m));
}

int cmp_store_by_machine(const char *url, bool shared, const char *labels,
			 const char *const *ignore, struct cmp_machines *m)
{
	struct db_filter f = { .nlabels = 0 };
	struct by_machine b = { .m = m };
	char err[ERRLEN];
	struct db *db = NULL;
	int ret = 0;

	memset(m, 0, sizeof(*m));
	m->host = calloc(CMP_HOSTS_MAX, sizeof(*m->host));
	if (!m->host)
		return cmd_usage_error("compare", "out of memory");
	if (labels && db_labels_parse(labels, f.labels, &f.nlabels, err, sizeof(err))) {
		free(m->host);
		m->host = NULL;
		return cmd_usage_error("compare", "--label %s: expected K=V[,K=V], e.g. --label fleet_run=42", labels);
	}
	ret = db_cmd_open(url, db_open_flags(false, shared), "compare", &db);
	if (!ret && db_query_runs(db, &f, add_run, &b, err, sizeof(err)))
		ret = say_error("compare", "%s", err);
	if (!ret && b.err)
		ret = cmd_usage_error("compare", "--by machine: more than %d machines or %d runs of one; select fewer with --label",
				      CMP_HOSTS_MAX, CMP_HOST_RUNS);
	if (!ret && m->n < 2)
		ret = cmd_usage_error("compare", "--by machine: %s holds runs of %zu machine%s with %s; two or more are needed",
				      db->where, m->n, m->n == 1 ? "" : "s",
				      labels ? labels : "any label");
	if (!ret)
		qsort(m->host, m->n, sizeof(*m->host), by_name);
	for (size_t i = 0; !ret && i < m->n; i++) {
		struct cmp_host *h = &m->host[i];

		h->ptr = calloc(h->nids, sizeof(*h->ptr));
		if (!h->ptr)
			ret = cmd_usage_error("compare", "out of memory");
		for (size_t j = 0; !ret && j < h->nids; j++) {
			json_t *root;
			char name[1024];

			if (db_load_run(db, h->ids[j], &root, err, sizeof(err)))
				ret = say_error("compare", "%s", err);
			snprintf(name, sizeof(name), "%s run %" PRId64 " (%s)", db->where, h->ids[j],
				 h->name);
			if (!ret && rfile_adopt(&h->runs[j], root, name, ignore, err, sizeof(err)))
				ret = cmd_usage_error("compare", "%s", err);
			if (!ret)
				h->ptr[h->nruns++] = &h->runs[j];
		}
	}
	db_close(db);
	if (ret)
		cmp_machines_free(m);
	return ret;
}

struct newest {
	int64_t id;
	char when[64];
};

static int keep_newest(void *arg, const struct db_run_row *row)
{
	struct newest *n = arg;

	n->id = row->id;	/* oldest first: the last is the newest */
	snprintf(n->when, sizeof(n->when), "%s", row->created_utc ? row->created_utc : "?");
	return 0;
}

size_t cmp_store_drift(const char *url, bool shared, const char *machine, struct cmp_drift *d,
		       size_t max, char *source, size_t slen)
{
	struct db_filter f = { .nlabels = 0, .machine = machine };
	struct newest n = { 0 };
	char err[ERRLEN];
	struct db *db = NULL;
	json_t *root = NULL;
	size_t count = 0;

	char buf[4096];
	const char *u = db_default_url(url, false, buf, sizeof(buf));

	if (!u || !machine ||
	    db_labels_parse("kind=calibration", f.labels, &f.nlabels, err, sizeof(err)))
		return 0;
	/* A store that is not there (or not readable) holds no calibration. */
	if (db_open_url(u, db_open_flags(false, shared), &db, err, sizeof(err)))
		return 0;
	if (!db_query_runs(db, &f, keep_newest, &n, err, sizeof(err)) && n.id &&
	    !db_load_run(db, n.id, &root, err, sizeof(err))) {
		count = cmp_drift_from_json(rec_calibration(root), d, max);
		snprintf(source, slen, "env --calibrate of %s, %s, stored run %" PRId64, machine,
			 n.when, n.id);
	}
	json_decref(root);
	db_close(db);
	return count;
}
