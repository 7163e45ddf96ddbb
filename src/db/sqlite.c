// SPDX-License-Identifier: MIT
/* The SQLite back end (Debian's libsqlite3): one file, in WAL mode (a
 * reader never blocks the writer), a busy timeout (two runs writing at
 * once queue, neither fails), synchronous=FULL (a committed run survives a
 * power cut). A file that is not an ipclab store -- not SQLite, another
 * program's database (application_id), damaged (quick_check), or of a
 * newer schema -- is refused before anything is written to it, and a
 * symbolic link is not followed. This file holds the schema's steps, the
 * statements, the connection and the opening of a store; the look at a
 * store before it is trusted is sqlite_hostile.c's (sqlite_int.h: what
 * the two share). */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "ipclab/runner.h"
#include "ipclab/util.h"
#include "db.h"
#include "sqlite_int.h"

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
	case SQLITE_INTERRUPT:
		return -EINTR;
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

int dbsq_exec(struct db *db, const char *sql, const char *const *param, int nparam, db_row_fn fn,
	      void *arg, char *err, size_t len)
{
	sqlite3 *h = ((struct sq_conn *)db->h)->h;
	sqlite3_stmt *st = NULL;
	char *text = sq_sql(sql);
	int rc, ret = 0;

	if (!text)
		return errf(err, len, ENOMEM, "out of memory");
	/* a signal ends the command: no statement starts after it but the
	 * rollback (one of a few VM steps may not meet the progress handler) */
	if (runner_interrupted && strcmp(sql, "ROLLBACK")) {
		free(text);
		return errf(err, len, EINTR, "%s: interrupted", db->where);
	}
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
	/* a wait for a lock given up for a signal is an interruption too */
	if (rc != SQLITE_DONE && rc != SQLITE_ROW && !ret && runner_interrupted)
		ret = errf(err, len, EINTR, "%s: interrupted", db->where);
	else if (rc != SQLITE_DONE && rc != SQLITE_ROW && !ret)
		ret = errf(err, len, -sq_errno(sqlite3_extended_errcode(h)), "%s: %s", db->where,
			   sqlite3_errmsg(h));
	sqlite3_finalize(st);
	return ret;
}

int dbsq_one_text(void *arg, const char *const *col, int ncol)
{
	snprintf(arg, 64, "%s", ncol > 0 && col[0] ? col[0] : "");
	return 0;
}

/* journal_mode=WAL needs the file to itself for a moment: another opener
 * may hold it, so it is retried for as long as the busy timeout. */
static int sq_wal(struct db *db, char *err, size_t len)
{
	uint64_t until = now_ns() + 60 * NSEC_PER_SEC;
	char mode[64] = "";
	int ret;

	while ((ret = dbsq_exec(db, "PRAGMA journal_mode = WAL", NULL, 0, dbsq_one_text, mode, err,
				len)) == -EBUSY &&
	       now_ns() < until && !runner_interrupted)
		nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	return ret;
}

/* The file in its directory's real path: the directories may be links the
 * user made, the file itself must not be one (SQLITE_OPEN_NOFOLLOW refuses
 * a link anywhere in the name it is given). dir: that directory. */
static int sq_real_path(struct db *db, const char *path, char *out, size_t len, char *dir_out,
			char *err, size_t errlen)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash == path ? 1 : slash - path) : 1,
		 slash ? path : ".");
	if (!realpath(dir, dir_out))
		return errf(err, errlen, ENOENT, "%s: the directory %s: %s; create it first", db->where,
			    dir, strerror(errno));
	if ((size_t)snprintf(out, len, "%s/%s", strcmp(dir_out, "/") ? dir_out : "",
			     slash ? slash + 1 : path) >= len)
		return errf(err, errlen, EINVAL, "%s: the path is too long", db->where);
	return 0;
}

/* Every 20 ms: a signal came? Then whatever the connection runs now is
 * interrupted (and dbsq_exec starts nothing new). */
static void *sq_watch(void *arg)
{
	struct sq_conn *c = arg;

	while (!atomic_load(&c->stop)) {
		if (runner_interrupted)
			sqlite3_interrupt(c->h);
		nanosleep(&(struct timespec){ .tv_nsec = 20000000 }, NULL);
	}
	return NULL;
}

void dbsq_disconnect(struct db *db)
{
	struct sq_conn *c = db->h;

	if (!c)
		return;
	if (atomic_load(&c->watched)) {
		atomic_store(&c->stop, true);
		pthread_join(c->watcher, NULL);
	}
	sqlite3_close(c->h);
	free(c);
	db->h = NULL;
}

/* Open real as flags say, hardened, watched; db->h is the connection. The
 * watcher takes no signal: they stay the main thread's (a blocked write
 * is interrupted by them). */
int dbsq_connect(struct db *db, const char *real, int flags, char *err, size_t len)
{
	struct sq_conn *c = calloc(1, sizeof(*c));
	sigset_t all, old;
	int rc;

	if (!c)
		return errf(err, len, ENOMEM, "out of memory");
	db->h = c;
	rc = sqlite3_open_v2(real, &c->h, flags | SQLITE_OPEN_NOFOLLOW, NULL);
	if (rc != SQLITE_OK)
		return errf(err, len, rc == SQLITE_CANTOPEN ? EACCES : -sq_errno(rc), "%s: %s",
			    db->where, c->h ? sqlite3_errmsg(c->h) : sqlite3_errstr(rc));
	dbsq_harden(c->h);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&c->watcher, NULL, sq_watch, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return errf(err, len, rc, "%s: no thread to watch for signals: %s", db->where,
			    strerror(rc));
	atomic_store(&c->watched, true);
	return dbsq_exec(db, "PRAGMA temp_store = MEMORY", NULL, 0, NULL, NULL, err, len);
}

static int sq_open(struct db *db, const char *path, bool create, char *err, size_t len)
{
	char real[PATH_MAX], dir[PATH_MAX];
	struct stat st;
	bool exists;
	int ret = dbsq_refuse_path(db, path, create, err, len);

	if (!ret)
		ret = sq_real_path(db, path, real, sizeof(real), dir, err, len);
	if (!ret)
		ret = dbsq_owned(db, dir, real, err, len);
	if (ret)
		return ret;
	dbsq_heap_limit(real);
	exists = !lstat(real, &st);
	if (exists)
		ret = dbsq_inspect(db, real, create, err, len);
	if (ret || db->version > DB_SCHEMA_VERSION)
		return ret;	/* a newer one: refused by the caller, untouched */
	ret = dbsq_connect(db, real, SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0), err,
			   len);
	/* made now: what was made is looked at all the same */
	if (!ret && !exists)
		ret = dbsq_identify(db, create, err, len);
	if (!ret)
		ret = sq_wal(db, err, len);
	if (!ret)
		ret = dbsq_exec(db, "PRAGMA synchronous = FULL", NULL, 0, NULL, NULL, err, len);
	if (!ret)
		ret = dbsq_exec(db, "PRAGMA foreign_keys = ON", NULL, 0, NULL, NULL, err, len);
	return ret;
}

static void sq_close(struct db *db)
{
	dbsq_disconnect(db);
}

#else /* !HAVE_SQLITE */

static int sq_open(struct db *db, const char *path, bool create, char *err, size_t len)
{
	return errf(err, len, ENOTSUP, "--db %s: this ipclab was built without SQLite; install libsqlite3-dev (apt-get install libsqlite3-dev) and rebuild",
		    db->where);
}

static int dbsq_exec(struct db *db, const char *sql, const char *const *param, int nparam,
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
	.exec = dbsq_exec,
	.close = sq_close,
	.steps = steps,
};