// SPDX-License-Identifier: MIT
/* The PostgreSQL back end (Debian's libpq), for a store many ipclab
 * processes on many hosts write at once: each run is one transaction, a
 * migration takes an advisory lock, every value travels as a parameter.
 * The connection gives up after 10 s, keepalives find a dead server, no
 * statement waits more than a minute, and a stop signal (SIGINT, SIGTERM)
 * cancels the one waited for within 100 ms. The tables live in schema
 * ipclab, and a connection's search_path is that schema and the system's
 * only: another role's schema cannot capture a name (an older store's
 * tables, made in public, are moved there once). The URL is handed to
 * libpq as it is; its password never reaches a message. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/util.h"
#include "db.h"

static const char *const v1[] = {
	"CREATE TABLE IF NOT EXISTS ipclab.ipclab_runs (id BIGSERIAL PRIMARY KEY, digest TEXT NOT NULL UNIQUE, "
	"created_utc TEXT NOT NULL, stored_utc TEXT NOT NULL, machine TEXT NOT NULL, kernel TEXT NOT NULL, "
	"ipclab_version TEXT NOT NULL, ipclab_git_rev TEXT NOT NULL, cmdline TEXT NOT NULL, "
	"nresults INTEGER NOT NULL, labels TEXT NOT NULL, header TEXT NOT NULL)",
	"CREATE INDEX IF NOT EXISTS ipclab_runs_created ON ipclab.ipclab_runs (created_utc)",
	"CREATE TABLE IF NOT EXISTS ipclab.ipclab_labels (run_id BIGINT NOT NULL REFERENCES ipclab.ipclab_runs (id) "
	"ON DELETE CASCADE, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (run_id, key))",
	"CREATE INDEX IF NOT EXISTS ipclab_labels_kv ON ipclab.ipclab_labels (key, value)",
	"CREATE TABLE IF NOT EXISTS ipclab.ipclab_results (id BIGSERIAL PRIMARY KEY, run_id BIGINT NOT NULL "
	"REFERENCES ipclab.ipclab_runs (id) ON DELETE CASCADE, idx INTEGER NOT NULL, transport TEXT NOT NULL, "
	"pattern TEXT NOT NULL, size_bytes BIGINT, endpoints TEXT, pin TEXT, sched TEXT, clients INTEGER, "
	"section TEXT, status TEXT NOT NULL, cell_key TEXT NOT NULL, body TEXT NOT NULL, UNIQUE (run_id, idx))",
	"CREATE INDEX IF NOT EXISTS ipclab_results_cell ON ipclab.ipclab_results (transport, pattern, size_bytes)",
	NULL,
};

static const char *const v2[] = {
	"ALTER TABLE ipclab.ipclab_results ADD COLUMN IF NOT EXISTS msgs_per_s DOUBLE PRECISION, "
	"ADD COLUMN IF NOT EXISTS lat_p50_ns DOUBLE PRECISION, "
	"ADD COLUMN IF NOT EXISTS lat_p99_ns DOUBLE PRECISION, "
	"ADD COLUMN IF NOT EXISTS cpu_ns_per_msg DOUBLE PRECISION",
	"UPDATE ipclab.ipclab_results SET msgs_per_s = (body::pg_catalog.jsonb #>> '{metrics,msgs_per_s}')::double precision, "
	"lat_p50_ns = (body::pg_catalog.jsonb #>> '{metrics,lat_p50_ns}')::double precision, "
	"lat_p99_ns = (body::pg_catalog.jsonb #>> '{metrics,lat_p99_ns}')::double precision, "
	"cpu_ns_per_msg = (body::pg_catalog.jsonb #>> '{metrics,cpu_ns_per_msg}')::double precision",
	"CREATE INDEX IF NOT EXISTS ipclab_results_key ON ipclab.ipclab_results (cell_key)",
	NULL,
};

static const char *const *const steps[] = { v1, v2 };
_Static_assert(ARRAY_SIZE(steps) == DB_SCHEMA_VERSION, "one step per schema version");

#ifdef HAVE_PQ
#include <poll.h>

#include <libpq-fe.h>

#include "ipclab/runner.h"

#define PG_CONNECT_S 10
/* one migration, one move of an older store, at a time across every host:
 * "ipclab" as a number */
#define PG_LOCK "SELECT pg_catalog.pg_advisory_xact_lock(6973812348766521)"
#define PG_TABLES "ipclab_meta", "ipclab_runs", "ipclab_labels", "ipclab_results"

/* libpq's messages end in a newline and may run over lines: the first,
 * the password scrubbed from the whole of it before it is cut. */
static int pg_err(struct db *db, int e, const char *what, const char *msg, char *err, size_t len)
{
	size_t n = strlen(msg ? msg : "") + 16;
	char *m = malloc(n);
	int ret;

	if (!m)
		return errf(err, len, e, "%s: %s(out of memory)", db->where, what);
	snprintf(m, n, "%s", msg ? msg : "");
	db_scrub(db, m, n);
	m[strcspn(m, "\n")] = '\0';
	ret = errf(err, len, e, "%s: %s%s", db->where, what, m);
	explicit_bzero(m, n);
	free(m);
	return ret;
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

/* Up to ms for the connection's socket; a signal ends the wait early. */
static void pg_poll(PGconn *c, short events, int ms)
{
	struct pollfd p = { .fd = PQsocket(c), .events = events };

	(void)poll(&p, 1, ms);
}

/* A stop signal (SIGINT, SIGTERM, ...) came: the statement cancelled on
 * the server, and the connection closed -- which rolls back its
 * transaction -- so that ipclab ends at once. */
static int pg_interrupted(struct db *db, const char *doing, char *err, size_t len)
{
	PGcancel *k = PQgetCancel(db->h);
	char why[256];

	if (k) {
		(void)PQcancel(k, why, sizeof(why));
		PQfreeCancel(k);
	}
	PQfinish(db->h);
	db->h = NULL;
	return errf(err, len, EINTR, "%s: interrupted by signal %d while %s", db->where,
		    (int)runner_interrupted, doing);
}

/* The statement's result, waited for 100 ms at a time, looking for a stop
 * signal in between (libpq's own waits go on through one). The first
 * error, else the last result; NULL when the connection broke. */
static PGresult *pg_result(PGconn *c, bool *stopped)
{
	PGresult *res = NULL, *r;

	for (;;) {
		while (PQisBusy(c) && !(*stopped = runner_interrupted != 0)) {
			pg_poll(c, POLLIN, 100);
			if (!PQconsumeInput(c))
				break;
		}
		if (*stopped || !(r = PQgetResult(c)))
			break;
		if (res && PQresultStatus(res) == PGRES_FATAL_ERROR) {
			PQclear(r);
			continue;
		}
		PQclear(res);
		res = r;
	}
	if (*stopped)
		PQclear(res);
	return *stopped ? NULL : res;
}

static int pg_exec(struct db *db, const char *sql, const char *const *param, int nparam,
		   db_row_fn fn, void *arg, char *err, size_t len)
{
	PGresult *res;
	ExecStatusType st;
	bool stopped = false;
	int ret = 0;

	if (!db->h)
		return errf(err, len, EINTR, "%s: the connection was given up", db->where);
	if (!PQsendQueryParams(db->h, sql, nparam, NULL, param, NULL, NULL, 0))
		return pg_err(db, EIO, "", PQerrorMessage(db->h), err, len);
	res = pg_result(db->h, &stopped);
	if (stopped)
		return pg_interrupted(db, "waiting for the server; the statement was cancelled", err,
				      len);
	st = PQresultStatus(res);
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

static int one_text(void *arg, const char *const *col, int ncol)
{
	snprintf(arg, 64, "%s", ncol > 0 && col[0] ? col[0] : "");
	return 0;
}

/* A store of an older ipclab, its tables in the schema named as the role
 * or in public (found through the default search_path), moved into
 * schema ipclab: once, under the migrations' lock, by a role that owns
 * them. Inside the caller's transaction. */
static int pg_move_old(struct db *db, const char *from, char *err, size_t len)
{
	static const char *const tables[] = { PG_TABLES };
	char *q = PQescapeIdentifier(db->h, from, strlen(from));
	int ret = q ? 0 : errf(err, len, ENOMEM, "out of memory");

	for (size_t i = 0; !ret && i < ARRAY_SIZE(tables); i++) {
		char sql[256];

		snprintf(sql, sizeof(sql), "ALTER TABLE IF EXISTS %s.%s SET SCHEMA ipclab", q, tables[i]);
		ret = pg_exec(db, sql, NULL, 0, NULL, NULL, err, len);
	}
	if (ret && ret != -EINTR) {
		char why[ERRLEN];

		snprintf(why, sizeof(why), "%s", err);
		ret = errf(err, len, EINVAL, "%.200s; the store's tables are in schema %s and ipclab keeps them in schema ipclab now: have their owner run ipclab against it once (it moves them)",
			   why, from);
	}
	PQfreemem(q);
	return ret;
}

#define PG_HAS_STORE "SELECT pg_catalog.count(*) FROM pg_catalog.pg_tables WHERE schemaname = 'ipclab' AND tablename = 'ipclab_meta'"

/* Schema ipclab made (create) and an older store's tables moved into it,
 * in one transaction under the lock: hosts coming to a new or an older
 * store at once do it once. Nothing to do (the store there): no
 * transaction. */
static int pg_prepare(struct db *db, bool create, char *err, size_t len)
{
	char old[64] = "";
	long long have = 0;
	int ret = pg_exec(db, PG_HAS_STORE, NULL, 0, one_int, &have, err, len);

	if (ret || have)
		return ret;
	ret = pg_exec(db, "BEGIN", NULL, 0, NULL, NULL, err, len);
	if (!ret)
		ret = pg_exec(db, PG_LOCK, NULL, 0, NULL, NULL, err, len);
	if (!ret)
		ret = pg_exec(db, PG_HAS_STORE, NULL, 0, one_int, &have, err, len);
	if (!ret && !have)
		ret = pg_exec(db, "SELECT schemaname FROM pg_catalog.pg_tables WHERE tablename = 'ipclab_meta' AND schemaname OPERATOR(pg_catalog.=) ANY (ARRAY[CURRENT_USER::pg_catalog.text, 'public']) ORDER BY schemaname OPERATOR(pg_catalog.=) 'public' LIMIT 1",
			      NULL, 0, one_text, old, err, len);
	if (!ret && !have && (create || *old))
		ret = pg_exec(db, "CREATE SCHEMA IF NOT EXISTS ipclab", NULL, 0, NULL, NULL, err, len);
	if (!ret && !have && *old)
		ret = pg_move_old(db, old, err, len);
	if (!ret)
		return pg_exec(db, "COMMIT", NULL, 0, NULL, NULL, err, len);
	if (db->h)
		(void)pg_exec(db, "ROLLBACK", NULL, 0, NULL, NULL, (char[ERRLEN]){ 0 }, ERRLEN);
	return ret;
}

/* Is there a store here, and of which version? */
static int pg_identify(struct db *db, bool create, char *err, size_t len)
{
	long long meta = 0, ver = 0;
	int ret = pg_prepare(db, create, err, len);

	if (!ret)
		ret = pg_exec(db, PG_HAS_STORE, NULL, 0, one_int, &meta, err, len);
	if (!ret && !meta && !create)
		return errf(err, len, ENOENT, "%s holds no results yet; store runs with ipclab run --db URL",
			    db->where);
	if (!ret && meta)
		ret = pg_exec(db, "SELECT value FROM ipclab.ipclab_meta WHERE key = 'schema_version'",
			      NULL, 0, one_int, &ver, err, len);
	db->version = (int)ver;
	return ret;
}

/* The connection made, 100 ms at a time: a stop signal ends the wait. */
static int pg_connect(struct db *db, const char *const *keys, const char *const *vals, char *err,
		      size_t len)
{
	uint64_t end = now_ns() + PG_CONNECT_S * NSEC_PER_SEC;
	PostgresPollingStatusType st = PGRES_POLLING_WRITING;

	db->h = PQconnectStartParams(keys, vals, 1);
	if (!db->h)
		return errf(err, len, ENOMEM, "out of memory");
	while (PQstatus(db->h) != CONNECTION_BAD && st != PGRES_POLLING_OK &&
	       st != PGRES_POLLING_FAILED) {
		if (runner_interrupted)
			return pg_interrupted(db, "connecting", err, len);
		if (now_ns() > end)
			return errf(err, len, EIO, "%s: cannot connect: no answer in %d s",
				    db->where, PG_CONNECT_S);
		pg_poll(db->h, st == PGRES_POLLING_READING ? POLLIN : POLLOUT, 100);
		st = PQconnectPoll(db->h);
	}
	if (PQstatus(db->h) != CONNECTION_OK)
		return pg_err(db, EIO, "cannot connect: ", PQerrorMessage(db->h), err, len);
	return 0;
}

/* The password as libpq reads the URL (percent-decoded) scrubbed too. */
static int pg_secrets(struct db *db, const PQconninfoOption *opts)
{
	int ret = 0;

	for (const PQconninfoOption *o = opts; o->keyword && !ret; o++)
		if (o->val && (!strcmp(o->keyword, "password") || !strcmp(o->keyword, "sslpassword")))
			ret = db_secret_add(db, o->val, strlen(o->val));
	return ret;
}

static int pg_open(struct db *db, const char *url, bool create, char *err, size_t len)
{
	static const char *const keys[] = { "connect_timeout", "keepalives_idle", "keepalives_interval",
					    "keepalives_count", "application_name", "dbname", NULL };
	const char *vals[] = { "10", "10", "5", "3", "ipclab", url, NULL };
	char *why = NULL;
	PQconninfoOption *opts;
	int ret = db_url_pg_check(url, db->where, err, len);

	if (ret)
		return ret;
	opts = PQconninfoParse(url, &why);
	if (!opts) {
		ret = pg_err(db, EINVAL, "not a PostgreSQL URL: ", why ? why : "out of memory", err, len);
		PQfreemem(why);
		return ret;
	}
	ret = pg_secrets(db, opts);
	PQconninfoFree(opts);
	if (ret)
		return errf(err, len, ENOMEM, "out of memory");
	/* the URL comes last: what it says wins over these defaults */
	ret = pg_connect(db, keys, vals, err, len);
	if (ret)
		return ret;
	PQsetNoticeProcessor(db->h, pg_quiet, NULL);
	/* names are looked up in the store's own schema and the system's
	 * only: no other role's schema comes in between */
	ret = pg_exec(db, "SET search_path = ipclab, pg_catalog, pg_temp", NULL, 0, NULL, NULL, err,
		      len);
	if (!ret)
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
	.lock = "SELECT pg_catalog.pg_advisory_xact_lock(6973812348766521)",
};
