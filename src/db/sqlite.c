// SPDX-License-Identifier: MIT
/* The SQLite back end (Debian's libsqlite3): one file, in WAL mode (a
 * reader never blocks the writer), a busy timeout (two runs writing at
 * once queue, neither fails), synchronous=FULL (a committed run survives a
 * power cut). A file that is not an ipclab store -- not SQLite, another
 * program's database (application_id), damaged (quick_check), or of a
 * newer schema -- is refused before anything is written to it, and a
 * symbolic link is not followed. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "ipclab/util.h"
#include "db.h"

/* "iplb": PRAGMA application_id of an ipclab store (`file` shows it). */
#define IPCLAB_APP_ID 0x69706c62

static const char *const v1[] = {
	"PRAGMA application_id = 1768975458",
	"CREATE TABLE IF NOT EXISTS ipclab_runs (id INTEGER PRIMARY KEY, digest TEXT NOT NULL UNIQUE, "
	"created_utc TEXT NOT NULL, stored_utc TEXT NOT NULL, machine TEXT NOT NULL, kernel TEXT NOT NULL, "
	"ipclab_version TEXT NOT NULL, ipclab_git_rev TEXT NOT NULL, cmdline TEXT NOT NULL, "
	"nresults INTEGER NOT NULL, labels TEXT NOT NULL, header TEXT NOT NULL)",
	"CREATE INDEX IF NOT EXISTS ipclab_runs_created ON ipclab_runs (created_utc)",
	"CREATE TABLE IF NOT EXISTS ipclab_labels (run_id INTEGER NOT NULL REFERENCES ipclab_runs (id) "
	"ON DELETE CASCADE, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (run_id, key))",
	"CREATE INDEX IF NOT EXISTS ipclab_labels_kv ON ipclab_labels (key, value)",
	"CREATE TABLE IF NOT EXISTS ipclab_results (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL "
	"REFERENCES ipclab_runs (id) ON DELETE CASCADE, idx INTEGER NOT NULL, transport TEXT NOT NULL, "
	"pattern TEXT NOT NULL, size_bytes INTEGER, endpoints TEXT, pin TEXT, sched TEXT, clients INTEGER, "
	"section TEXT, status TEXT NOT NULL, cell_key TEXT NOT NULL, body TEXT NOT NULL, UNIQUE (run_id, idx))",
	"CREATE INDEX IF NOT EXISTS ipclab_results_cell ON ipclab_results (transport, pattern, size_bytes)",
	NULL,
};

/* v2: the headline metrics as columns (for SQL of one's own), filled from
 * the stored results; the cell's identity indexed. */
static const char *const v2[] = {
	"ALTER TABLE ipclab_results ADD COLUMN msgs_per_s REAL",
	"ALTER TABLE ipclab_results ADD COLUMN lat_p50_ns REAL",
	"ALTER TABLE ipclab_results ADD COLUMN lat_p99_ns REAL",
	"ALTER TABLE ipclab_results ADD COLUMN cpu_ns_per_msg REAL",
	"UPDATE ipclab_results SET msgs_per_s = json_extract(body, '$.metrics.msgs_per_s'), "
	"lat_p50_ns = json_extract(body, '$.metrics.lat_p50_ns'), "
	"lat_p99_ns = json_extract(body, '$.metrics.lat_p99_ns'), "
	"cpu_ns_per_msg = json_extract(body, '$.metrics.cpu_ns_per_msg')",
	"CREATE INDEX IF NOT EXISTS ipclab_results_key ON ipclab_results (cell_key)",
	NULL,
};

static const char *const *const steps[] = { v1, v2 };
_Static_assert(ARRAY_SIZE(steps) == DB_SCHEMA_VERSION, "one step per schema version");

#ifdef HAVE_SQLITE
#include <sqlite3.h>

static int sq_errno(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_CONSTRAINT:
		return rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY ? -EEXIST :
											       -EINVAL;
	case SQLITE_NOTADB:
	case SQLITE_CORRUPT:
		return -EINVAL;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_READONLY:
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EACCES;
	}
	return -EIO;
}

/* $1..$N (both back ends' spelling here) as SQLite's ?1..?N. */
static char *sq_sql(const char *sql)
{
	char *s = strdup(sql);

	for (char *p = s; p && *p; p++)
		if (*p == '$' && p[1] >= '1' && p[1] <= '9')
			*p = '?';
	return s;
}

static int sq_exec(struct db *db, const char *sql, const char *const *param, int nparam,
		   db_row_fn fn, void *arg, char *err, size_t len)
{
	sqlite3 *h = db->h;
	sqlite3_stmt *st = NULL;
	char *text = sq_sql(sql);
	int rc, ret = 0;

	if (!text)
		return errf(err, len, ENOMEM, "out of memory");
	rc = sqlite3_prepare_v2(h, text, -1, &st, NULL);
	free(text);
	for (int i = 0; rc == SQLITE_OK && i < nparam; i++)
		rc = param[i] ? sqlite3_bind_text(st, i + 1, param[i], -1, SQLITE_STATIC) :
				sqlite3_bind_null(st, i + 1);
	while (rc == SQLITE_OK || rc == SQLITE_ROW) {
		rc = sqlite3_step(st);
		if (rc != SQLITE_ROW)
			break;
		const char *col[32];
		int n = sqlite3_column_count(st);

		n = n > 32 ? 32 : n;
		for (int i = 0; i < n; i++)
			col[i] = (const char *)sqlite3_column_text(st, i);
		if (fn && (ret = fn(arg, col, n)))
			break;
	}
	if (rc != SQLITE_DONE && rc != SQLITE_ROW && !ret)
		ret = errf(err, len, -sq_errno(sqlite3_extended_errcode(h)), "%s: %s", db->where,
			   sqlite3_errmsg(h));
	sqlite3_finalize(st);
	return ret;
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

static int damaged(struct db *db, char *err, size_t len, const char *why)
{
	return errf(err, len, EINVAL, "%s is a damaged SQLite database (%s); it is left as it is: restore it from a copy, or name a new file",
		    db->where, why);
}

/* What the file is, read without writing: not SQLite, another program's,
 * an empty database (a new store), or an ipclab store of some version. */
static int sq_identify(struct db *db, bool create, char *err, size_t len)
{
	long long app = 0, tables = 0, meta = 0;
	char why[ERRLEN];
	int ret = sq_exec(db, "PRAGMA application_id", NULL, 0, one_int, &app, why, sizeof(why));

	if (!ret)
		ret = sq_exec(db, "SELECT count(*) FROM sqlite_master", NULL, 0, one_int, &tables, why,
			      sizeof(why));
	if (ret == -EINVAL)
		return errf(err, len, EINVAL, "%s is not an ipclab results store (not an SQLite database, or a damaged one); name a new file, e.g. --db results.db",
			    db->where);
	if (ret)
		return errf(err, len, -ret, "%s", why);
	if (app != IPCLAB_APP_ID && (tables > 0 || app != 0))
		return errf(err, len, EINVAL, "%s is another program's SQLite database (application_id 0x%llx, %lld tables), not an ipclab results store; name a new file",
			    db->where, app, tables);
	if (!tables && !create)
		return errf(err, len, ENOENT, "%s holds no results yet; store runs with ipclab run --db %s",
			    db->where, db->where);
	if (!tables)
		return 0;
	ret = sq_exec(db, "SELECT count(*) FROM sqlite_master WHERE name = 'ipclab_meta'", NULL, 0,
		      one_int, &meta, err, len);
	if (!ret && meta)
		ret = sq_exec(db, "SELECT value FROM ipclab_meta WHERE key = 'schema_version'", NULL, 0,
			      one_int, &meta, err, len);
	if (ret == -EINVAL)
		return damaged(db, err, len, "its schema does not read");
	db->version = (int)meta;
	return ret;
}

/* A damaged file is refused, never written: quick_check reads every page. */
static int sq_check(struct db *db, char *err, size_t len)
{
	char verdict[64] = "";
	int ret = sq_exec(db, "PRAGMA quick_check(1)", NULL, 0, one_text, verdict, err, len);

	if (ret == -EINVAL || (!ret && strcmp(verdict, "ok")))
		return damaged(db, err, len, verdict[0] ? verdict : "unreadable");
	return ret;
}

/* journal_mode=WAL needs the file to itself for a moment: another opener
 * may hold it, so it is retried for as long as the busy timeout. */
static int sq_wal(struct db *db, char *err, size_t len)
{
	uint64_t until = now_ns() + 60 * NSEC_PER_SEC;
	char mode[64] = "";
	int ret;

	while ((ret = sq_exec(db, "PRAGMA journal_mode = WAL", NULL, 0, one_text, mode, err, len)) ==
		       -EBUSY &&
	       now_ns() < until)
		nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	return ret;
}

static int sq_refuse_path(struct db *db, const char *path, bool create, char *err, size_t len)
{
	struct stat st;

	if (lstat(path, &st)) {
		if (errno != ENOENT)
			return errf(err, len, EACCES, "%s: %s", db->where, strerror(errno));
		return create ? 0 : errf(err, len, ENOENT, "%s: no results stored there yet; store runs with ipclab run --db %s",
					db->where, db->where);
	}
	if (S_ISLNK(st.st_mode))
		return errf(err, len, EINVAL, "%s is a symbolic link; name the store's file itself", db->where);
	if (!S_ISREG(st.st_mode))
		return errf(err, len, EINVAL, "%s is not a regular file; name a file for the store", db->where);
	return 0;
}

/* The file in its directory's real path: the directories may be links the
 * user made, the file itself must not be one (SQLITE_OPEN_NOFOLLOW refuses
 * a link anywhere in the name it is given). */
static int sq_real_path(struct db *db, const char *path, char *out, size_t len, char *err,
			size_t errlen)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX], real[PATH_MAX];

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash == path ? 1 : slash - path) : 1,
		 slash ? path : ".");
	if (!realpath(dir, real))
		return errf(err, errlen, ENOENT, "%s: the directory %s: %s; create it first", db->where,
			    dir, strerror(errno));
	if ((size_t)snprintf(out, len, "%s/%s", strcmp(real, "/") ? real : "", slash ? slash + 1 : path) >=
	    len)
		return errf(err, errlen, EINVAL, "%s: the path is too long", db->where);
	return 0;
}

static int sq_open(struct db *db, const char *path, bool create, char *err, size_t len)
{
	char real[PATH_MAX];
	sqlite3 *h = NULL;
	int ret = sq_refuse_path(db, path, create, err, len), rc;

	if (!ret)
		ret = sq_real_path(db, path, real, sizeof(real), err, len);
	if (ret)
		return ret;
	rc = sqlite3_open_v2(real, &h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW |
				       (create ? SQLITE_OPEN_CREATE : 0), NULL);
	db->h = h;
	if (rc != SQLITE_OK)
		return errf(err, len, rc == SQLITE_CANTOPEN ? EACCES : -sq_errno(rc), "%s: %s",
			    db->where, h ? sqlite3_errmsg(h) : sqlite3_errstr(rc));
	sqlite3_busy_timeout(h, 60000);
	ret = sq_identify(db, create, err, len);
	if (!ret && db->version > DB_SCHEMA_VERSION)
		return 0;	/* refused by the caller, untouched */
	if (!ret && db->version)
		ret = sq_check(db, err, len);
	if (!ret)
		ret = sq_wal(db, err, len);
	if (!ret)
		ret = sq_exec(db, "PRAGMA synchronous = FULL", NULL, 0, NULL, NULL, err, len);
	if (!ret)
		ret = sq_exec(db, "PRAGMA foreign_keys = ON", NULL, 0, NULL, NULL, err, len);
	return ret;
}

static void sq_close(struct db *db)
{
	sqlite3_close(db->h);
	db->h = NULL;
}

#else /* !HAVE_SQLITE */

static int sq_open(struct db *db, const char *path, bool create, char *err, size_t len)
{
	return errf(err, len, ENOTSUP, "--db %s: this ipclab was built without SQLite; install libsqlite3-dev (apt-get install libsqlite3-dev) and rebuild",
		    db->where);
}

static int sq_exec(struct db *db, const char *sql, const char *const *param, int nparam,
		   db_row_fn fn, void *arg, char *err, size_t len)
{
	return errf(err, len, ENOTSUP, "SQLite is not built in");
}

static void sq_close(struct db *db)
{
}

#endif

const struct db_backend db_sqlite = {
	.name = "sqlite",
	.open = sq_open,
	.exec = sq_exec,
	.close = sq_close,
	.steps = steps,
};
