// SPDX-License-Identifier: MIT
/* The store, whichever back end holds it: a URL picks it (a path or
 * sqlite:PATH for SQLite, postgresql:// or postgres:// for PostgreSQL),
 * transactions, and every statement through one door that scrubs the
 * password from what the back end says. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/util.h"
#include "db.h"

/* The back end of url and what it is given: the path, or the URL. */
static int pick(const char *url, const struct db_backend **be, const char **target, char *err,
		size_t len)
{
	const char *sep = strstr(url, "://");

	if (!strncmp(url, "postgresql://", 13) || !strncmp(url, "postgres://", 11)) {
		*be = &db_pg;
		*target = url;
		return 0;
	}
	*be = &db_sqlite;
	if (!strncmp(url, "sqlite://", 9))
		*target = url + 9;	/* sqlite:///abs/path */
	else if (!strncmp(url, "sqlite:", 7))
		*target = url + 7;
	else if (sep && strspn(url, "abcdefghijklmnopqrstuvwxyz0123456789+.-") == (size_t)(sep - url))
		return errf(err, len, EINVAL, "--db: unknown kind of store '%.*s://'; expected a file (PATH or sqlite:PATH) or postgresql://HOST/DB",
			    (int)(sep - url), url);
	else
		*target = url;
	if (!**target)
		return errf(err, len, EINVAL, "--db %s: no file named; e.g. --db results.db", url);
	return 0;
}

static int read_version(void *arg, const char *const *col, int ncol)
{
	*(int *)arg = ncol > 0 && col[0] ? atoi(col[0]) : 0;
	return 0;
}

/* The store's schema brought to DB_SCHEMA_VERSION, in one transaction: a
 * run killed half way leaves the old schema. Another process may migrate
 * at the same time: the version is read again under the lock. */
static int db_migrate(struct db *db, char *err, size_t len)
{
	char ver[16];
	const char *p[1] = { ver };
	int v = 0, ret = db_begin(db, err, len);

	if (!ret && db->be->lock)
		ret = db_exec(db, db->be->lock, NULL, 0, NULL, NULL, err, len);
	if (!ret)
		ret = db_exec(db, DB_META_SQL, NULL, 0, NULL, NULL, err, len);
	if (!ret)
		ret = db_exec(db, "SELECT value FROM ipclab_meta WHERE key = 'schema_version'", NULL, 0,
			      read_version, &v, err, len);
	if (!ret && v > DB_SCHEMA_VERSION)
		ret = errf(err, len, EPROTO, "%s holds results of schema %d, newer than this ipclab writes (%d); use a newer ipclab",
			   db->where, v, DB_SCHEMA_VERSION);
	for (int step = v; !ret && step < DB_SCHEMA_VERSION; step++)
		for (const char *const *sql = db->be->steps[step]; !ret && *sql; sql++)
			ret = db_exec(db, *sql, NULL, 0, NULL, NULL, err, len);
	snprintf(ver, sizeof(ver), "%d", DB_SCHEMA_VERSION);
	if (!ret && v < DB_SCHEMA_VERSION)
		ret = db_exec(db, "INSERT INTO ipclab_meta (key, value) VALUES ('application', 'ipclab') ON CONFLICT (key) DO NOTHING",
			      NULL, 0, NULL, NULL, err, len);
	if (!ret && v < DB_SCHEMA_VERSION)
		ret = db_exec(db, "INSERT INTO ipclab_meta (key, value) VALUES ('schema_version', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
			      p, 1, NULL, NULL, err, len);
	if (ret) {
		db_rollback(db);
		return ret;
	}
	ret = db_commit(db, err, len);
	if (!ret)
		db->version = DB_SCHEMA_VERSION;
	return ret;
}

int db_open_url(const char *url, unsigned flags, struct db **out, char *err, size_t len)
{
	const struct db_backend *be = NULL;
	const char *target = NULL;
	struct db *db;
	int ret;

	*out = NULL;
	ret = pick(url, &be, &target, err, len);
	if (ret)
		return ret;
	db = calloc(1, sizeof(*db));
	if (!db)
		return errf(err, len, ENOMEM, "out of memory");
	db->be = be;
	db->shared = flags & DB_OPEN_SHARED;
	db_url_redact(url, db->where, sizeof(db->where));
	ret = db_url_secrets(db, url) ? errf(err, len, ENOMEM, "out of memory") :
					  be->open(db, target, flags & DB_OPEN_CREATE, err, len);
	if (!ret && db->version > DB_SCHEMA_VERSION)
		ret = errf(err, len, EPROTO, "%s holds results of schema %d, newer than this ipclab writes (%d); use a newer ipclab",
			   db->where, db->version, DB_SCHEMA_VERSION);
	if (!ret && db->version < DB_SCHEMA_VERSION)
		ret = db_migrate(db, err, len);
	if (ret) {
		db_scrub(db, err, len);
		db_close(db);
		return ret;
	}
	*out = db;
	return 0;
}

void db_close(struct db *db)
{
	if (!db)
		return;
	if (db->in_tx)
		db_rollback(db);
	if (db->h)
		db->be->close(db);
	db_secrets_free(db);
	free(db);
}

int db_exec(struct db *db, const char *sql, const char *const *param, int n, db_row_fn fn,
	    void *arg, char *err, size_t len)
{
	int ret = db->be->exec(db, sql, param, n, fn, arg, err, len);

	if (ret < 0)
		db_scrub(db, err, len);
	return ret;
}

int db_begin(struct db *db, char *err, size_t len)
{
	/* SQLite: take the write lock now, so that two writers queue on the
	 * busy timeout instead of one failing when it upgrades */
	int ret = db_exec(db, db->be == &db_sqlite ? "BEGIN IMMEDIATE" : "BEGIN", NULL, 0, NULL,
			  NULL, err, len);

	db->in_tx = !ret;
	return ret;
}

int db_commit(struct db *db, char *err, size_t len)
{
	int ret = db_exec(db, "COMMIT", NULL, 0, NULL, NULL, err, len);

	if (ret)
		db_rollback(db);
	db->in_tx = false;
	return ret;
}

void db_rollback(struct db *db)
{
	char err[ERRLEN];

	if (db->in_tx)
		(void)db_exec(db, "ROLLBACK", NULL, 0, NULL, NULL, err, sizeof(err));
	db->in_tx = false;
}

int db_exit_status(int err)
{
	return err == -EINVAL || err == -EPROTO || err == -ENOTSUP || err == -ENOENT ? 2 : 1;
}
