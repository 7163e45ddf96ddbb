// SPDX-License-Identifier: MIT
/* The PostgreSQL back end (Debian's libpq), for a store many ipclab
 * processes on many hosts write at once: each run is one transaction, a
 * migration takes an advisory lock, every value travels as a parameter.
 * The connection gives up after 10 s (connect_timeout), keepalives find a
 * dead server, and no statement waits more than a minute. The tables are
 * ipclab_*, so a database shared with other programs is fine. The URL is
 * handed to libpq as it is; its password never reaches a message. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/util.h"
#include "db.h"

static const char *const v1[] = {
	"CREATE TABLE IF NOT EXISTS ipclab_runs (id BIGSERIAL PRIMARY KEY, digest TEXT NOT NULL UNIQUE, "
	"created_utc TEXT NOT NULL, stored_utc TEXT NOT NULL, machine TEXT NOT NULL, kernel TEXT NOT NULL, "
	"ipclab_version TEXT NOT NULL, ipclab_git_rev TEXT NOT NULL, cmdline TEXT NOT NULL, "
	"nresults INTEGER NOT NULL, labels TEXT NOT NULL, header TEXT NOT NULL)",
	"CREATE INDEX IF NOT EXISTS ipclab_runs_created ON ipclab_runs (created_utc)",
	"CREATE TABLE IF NOT EXISTS ipclab_labels (run_id BIGINT NOT NULL REFERENCES ipclab_runs (id) "
	"ON DELETE CASCADE, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (run_id, key))",
	"CREATE INDEX IF NOT EXISTS ipclab_labels_kv ON ipclab_labels (key, value)",
	"CREATE TABLE IF NOT EXISTS ipclab_results (id BIGSERIAL PRIMARY KEY, run_id BIGINT NOT NULL "
	"REFERENCES ipclab_runs (id) ON DELETE CASCADE, idx INTEGER NOT NULL, transport TEXT NOT NULL, "
	"pattern TEXT NOT NULL, size_bytes BIGINT, endpoints TEXT, pin TEXT, sched TEXT, clients INTEGER, "
	"section TEXT, status TEXT NOT NULL, cell_key TEXT NOT NULL, body TEXT NOT NULL, UNIQUE (run_id, idx))",
	"CREATE INDEX IF NOT EXISTS ipclab_results_cell ON ipclab_results (transport, pattern, size_bytes)",
	NULL,
};

static const char *const v2[] = {
	"ALTER TABLE ipclab_results ADD COLUMN IF NOT EXISTS msgs_per_s DOUBLE PRECISION, "
	"ADD COLUMN IF NOT EXISTS lat_p50_ns DOUBLE PRECISION, "
	"ADD COLUMN IF NOT EXISTS lat_p99_ns DOUBLE PRECISION, "
	"ADD COLUMN IF NOT EXISTS cpu_ns_per_msg DOUBLE PRECISION",
	"UPDATE ipclab_results SET msgs_per_s = (body::jsonb #>> '{metrics,msgs_per_s}')::double precision, "
	"lat_p50_ns = (body::jsonb #>> '{metrics,lat_p50_ns}')::double precision, "
	"lat_p99_ns = (body::jsonb #>> '{metrics,lat_p99_ns}')::double precision, "
	"cpu_ns_per_msg = (body::jsonb #>> '{metrics,cpu_ns_per_msg}')::double precision",
	"CREATE INDEX IF NOT EXISTS ipclab_results_key ON ipclab_results (cell_key)",
	NULL,
};

static const char *const *const steps[] = { v1, v2 };
_Static_assert(ARRAY_SIZE(steps) == DB_SCHEMA_VERSION, "one step per schema version");

#ifdef HAVE_PQ
#include <libpq-fe.h>

/* libpq's messages end in a newline and may run over lines: the first. */
static int pg_err(struct db *db, int e, const char *what, const char *msg, char *err, size_t len)
{
	size_t n = strcspn(msg ? msg : "", "\n");

	return errf(err, len, e, "%s: %s%.*s", db->where, what, (int)n, msg ? msg : "");
}

static int pg_errno(const PGresult *res, PGconn *c)
{
	const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);

	if (PQstatus(c) != CONNECTION_OK)
		return -EIO;
	if (state && !strcmp(state, "23505"))
		return -EEXIST;
	if (state && !strncmp(state, "42", 2))
		return -EINVAL;
	return -EIO;
}

static int pg_exec(struct db *db, const char *sql, const char *const *param, int nparam,
		   db_row_fn fn, void *arg, char *err, size_t len)
{
	PGresult *res = PQexecParams(db->h, sql, nparam, NULL, param, NULL, NULL, 0);
	ExecStatusType st = PQresultStatus(res);
	int ret = 0;

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		pg_err(db, 0, "", res ? PQresultErrorMessage(res) : PQerrorMessage(db->h), err, len);
		ret = pg_errno(res, db->h);
		PQclear(res);
		return ret;
	}
	for (int r = 0; fn && r < PQntuples(res) && !ret; r++) {
		const char *col[32];
		int n = PQnfields(res) > 32 ? 32 : PQnfields(res);

		for (int i = 0; i < n; i++)
			col[i] = PQgetisnull(res, r, i) ? NULL : PQgetvalue(res, r, i);
		ret = fn(arg, col, n);
	}
	PQclear(res);
	return ret;
}

static void pg_quiet(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;	/* NOTICEs ("already exists, skipping") are not for the user */
}

static int one_int(void *arg, const char *const *col, int ncol)
{
	*(long long *)arg = ncol > 0 && col[0] ? strtoll(col[0], NULL, 10) : 0;
	return 0;
}

/* Is there a store here, and of which version? Read only. */
static int pg_identify(struct db *db, bool create, char *err, size_t len)
{
	long long meta = 0, ver = 0;
	int ret = pg_exec(db, "SELECT count(*) FROM pg_catalog.pg_tables WHERE tablename = 'ipclab_meta' AND schemaname = ANY (current_schemas(false))",
			  NULL, 0, one_int, &meta, err, len);

	if (!ret && !meta && !create)
		return errf(err, len, ENOENT, "%s holds no results yet; store runs with ipclab run --db URL",
			    db->where);
	if (!ret && meta)
		ret = pg_exec(db, "SELECT value FROM ipclab_meta WHERE key = 'schema_version'", NULL, 0,
			      one_int, &ver, err, len);
	db->version = (int)ver;
	return ret;
}

static int pg_open(struct db *db, const char *url, bool create, char *err, size_t len)
{
	static const char *const keys[] = { "connect_timeout", "keepalives_idle", "keepalives_interval",
					    "keepalives_count", "application_name", "dbname", NULL };
	const char *vals[] = { "10", "10", "5", "3", "ipclab", url, NULL };
	char *why = NULL;
	PQconninfoOption *opts = PQconninfoParse(url, &why);
	int ret;

	if (!opts) {
		ret = pg_err(db, EINVAL, "not a PostgreSQL URL: ", why ? why : "out of memory", err, len);
		PQfreemem(why);
		return ret;
	}
	PQconninfoFree(opts);
	/* the URL comes last: what it says wins over these defaults */
	db->h = PQconnectdbParams(keys, vals, 1);
	if (!db->h)
		return errf(err, len, ENOMEM, "out of memory");
	if (PQstatus(db->h) != CONNECTION_OK)
		return pg_err(db, EIO, "cannot connect: ", PQerrorMessage(db->h), err, len);
	PQsetNoticeProcessor(db->h, pg_quiet, NULL);
	ret = pg_exec(db, "SET statement_timeout = '60s'", NULL, 0, NULL, NULL, err, len);
	if (!ret)
		ret = pg_exec(db, "SET client_min_messages = warning", NULL, 0, NULL, NULL, err, len);
	if (!ret)
		ret = pg_identify(db, create, err, len);
	return ret;
}

static void pg_close(struct db *db)
{
	PQfinish(db->h);
	db->h = NULL;
}

#else /* !HAVE_PQ */

static int pg_open(struct db *db, const char *url, bool create, char *err, size_t len)
{
	return errf(err, len, ENOTSUP, "--db %s: this ipclab was built without PostgreSQL; install libpq-dev (apt-get install libpq-dev) and rebuild",
		    db->where);
}

static int pg_exec(struct db *db, const char *sql, const char *const *param, int nparam,
		   db_row_fn fn, void *arg, char *err, size_t len)
{
	return errf(err, len, ENOTSUP, "PostgreSQL is not built in");
}

static void pg_close(struct db *db)
{
}

#endif

const struct db_backend db_pg = {
	.name = "postgresql",
	.open = pg_open,
	.exec = pg_exec,
	.close = pg_close,
	.steps = steps,
	/* one migration at a time across every host: "ipclab" as a number */
	.lock = "SELECT pg_advisory_xact_lock(6973812348766521)",
};
