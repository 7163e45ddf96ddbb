/* SPDX-License-Identifier: MIT */
/* The results store: every run's result file kept in a database, SQLite
 * (a file, the default) or PostgreSQL (a server a team or a fleet shares).
 * One small interface over two back ends (sqlite.c, pg.c), each optional
 * at build time; the SQL both speak is in db.c and query.c, with $1..$N
 * parameters only (no value is ever pasted into SQL text). A run is stored
 * in one transaction: its header (the result file less its results), its
 * labels, and one row per result holding the result's whole JSON object
 * beside indexed columns of its configuration. docs/history.md. */
#ifndef IPCLAB_DB_H
#define IPCLAB_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* The schema this ipclab writes; a store of a newer one is refused. */
#define DB_SCHEMA_VERSION 2
#define DB_MAX_LABELS 32
#define DB_MAX_LIST 32
#define DB_MAX_SECRETS 8

struct db;

/* A row of text columns (NULL for SQL NULL); nonzero stops the query. */
typedef int (*db_row_fn)(void *arg, const char *const *col, int ncol);

/* What a back end provides: open (identify the store, refuse a foreign,
 * corrupt or newer one, create or migrate the schema), and run one SQL
 * statement with text parameters. Errors: -EINVAL (bad URL, a foreign or
 * corrupt store: exit 2), -EPROTO (a newer schema: exit 2), -ENOTSUP (not
 * built in: exit 2), -EEXIST (a unique key taken), else -EIO and the like. */
struct db_backend {
	const char *name;
	/* Connect, identify the store and read its schema version into
	 * db->version (0: none yet); create: a missing store may be made
	 * (else -ENOENT). */
	int (*open)(struct db *db, const char *target, bool create, char *err, size_t len);
	int (*exec)(struct db *db, const char *sql, const char *const *param, int nparam,
		    db_row_fn fn, void *arg, char *err, size_t len);
	void (*close)(struct db *db);
	/* steps[v - 1]: the statements that take a store from version v - 1
	 * to v, NULL-terminated; lock: taken first inside the migration's
	 * transaction (NULL: the transaction's own lock serialises it) */
	const char *const *const *steps;
	const char *lock;
};

struct db {
	const struct db_backend *be;
	void *h;			/* the back end's handle */
	char where[512];		/* the URL for messages: the password is *** */
	/* the password as written in the URL and as libpq reads it (any
	 * length), longest first: scrubbed from every message */
	char *secret[DB_MAX_SECRETS];
	unsigned nsecret;
	int version;			/* the store's schema version as opened */
	bool in_tx;
	bool shared;			/* --db-shared: other users may own or write it */
};

extern const struct db_backend db_sqlite, db_pg;

/* ---- URLs (url.c) ---- */

/* The store named by url: NULL or "" -> $IPCLAB_DB, else the default file
 * ~/.local/share/ipclab/results.db (its directory made, 0700, when
 * make_dir). Fills buf; NULL when HOME is unset. */
const char *db_default_url(const char *url, bool make_dir, char *buf, size_t len);
/* url with a password in it (user:PASSWORD@, password=...) as ***. Any
 * word: what has no "://" is copied as it is. */
void db_url_redact(const char *url, char *out, size_t len);
/* The passwords written in url (user:PASSWORD@, password=,
 * sslpassword=) added to db's secrets; 0 or -ENOMEM. */
int db_url_secrets(struct db *db, const char *url);
/* s[0..n) added to db's secrets (a copy); 0 or -ENOMEM. */
int db_secret_add(struct db *db, const char *s, size_t n);
/* The secrets overwritten and freed. */
void db_secrets_free(struct db *db);
/* Every occurrence of each of db's secrets in msg replaced by ***, in
 * place. */
void db_scrub(const struct db *db, char *msg, size_t len);
/* A PostgreSQL URL libpq would read otherwise than written: a password
 * holding an unencoded '@' or '/' (part of it would be taken for the host
 * and shown in messages). 0, or -EINVAL with why (where: the URL shown). */
int db_url_pg_check(const char *url, const char *where, char *err, size_t len);
/* Every word of argv[1..argc) holding a password (db_url_redact) is
 * overwritten in place with its *** form -- other users read it in
 * /proc/PID/cmdline -- and argv[i] pointed to a copy of what it was. */
void db_url_hide_argv(int argc, char **argv);

/* ---- the store (db.c) ---- */

/* How a store is opened: DB_OPEN_CREATE makes it when there is none (else
 * -ENOENT); DB_OPEN_SHARED accepts a SQLite file that other users own or
 * may write (--db-shared), which is otherwise refused. */
enum { DB_OPEN_CREATE = 1, DB_OPEN_SHARED = 2 };
/* The table of the store's own facts (the application, the schema
 * version), made before any step (the SQLite back end checks a store's
 * tables against what the steps make). */
#define DB_META_SQL "CREATE TABLE IF NOT EXISTS ipclab_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"

/* Open the store at url (flags: DB_OPEN_*), migrated to DB_SCHEMA_VERSION. */
int db_open_url(const char *url, unsigned flags, struct db **out, char *err, size_t len);
void db_close(struct db *db);
int db_begin(struct db *db, char *err, size_t len);
int db_commit(struct db *db, char *err, size_t len);
void db_rollback(struct db *db);
/* Run sql with param[0..n) through the back end, messages scrubbed. */
int db_exec(struct db *db, const char *sql, const char *const *param, int n, db_row_fn fn,
	    void *arg, char *err, size_t len);
/* The exit status an error of db_open_url/db_exec means: 2 or 1. */
int db_exit_status(int err);

/* ---- runs in, runs out (store.c) ---- */

struct db_label {
	char key[64], value[256];
};

/* "k=v,k=v" added to labels (a later key replaces an earlier one); 0 or
 * -EINVAL with why in err. */
int db_labels_parse(const char *text, struct db_label *labels, size_t *n, char *err, size_t len);

/* Store a result file's tree (a run) with its labels, the machine and the
 * kernel release added unless given: one transaction. *run_id is the new
 * run, or the one already holding the same file (*dup set). 0 or -errno. */
int db_store_tree(struct db *db, const json_t *root, const struct db_label *labels, size_t nlabels,
		  int64_t *run_id, bool *dup, char *err, size_t len);
/* The result file of run id, as it was stored, into *out (a new
 * reference); 0 or -errno (-ENOENT: no such run). */
int db_load_run(struct db *db, int64_t id, json_t **out, char *err, size_t len);

/* ---- queries (query.c) ---- */

struct db_filter {
	const char *transport[DB_MAX_LIST], *pattern[DB_MAX_LIST], *endpoints[DB_MAX_LIST],
		*pin[DB_MAX_LIST], *sched[DB_MAX_LIST], *clients[DB_MAX_LIST], *size[DB_MAX_LIST];
	unsigned ntransport, npattern, nendpoints, npin, nsched, nclients, nsize;
	struct db_label labels[DB_MAX_LABELS];	/* every one must match */
	size_t nlabels;
	const char *since;		/* created_utc >= this (ISO 8601, UTC) */
	const char *machine;
	int64_t run_ids[DB_MAX_LIST];	/* any of these (none: any run) */
	unsigned nrun_ids;
	bool ok_only;			/* results with status ok */
};

/* One stored result and its run. */
struct db_row {
	int64_t run_id;
	unsigned idx;			/* its place in the run's file */
	const char *created_utc, *machine, *cell_key;
	const char *labels_json;	/* {"key": "value", ...} */
	const char *body;		/* the result's JSON object */
};
typedef int (*db_result_fn)(void *arg, const struct db_row *row);

/* Results matching f, by run time, run, place. 0 or -errno. */
int db_query_results(struct db *db, const struct db_filter *f, db_result_fn fn, void *arg,
		     char *err, size_t len);

struct db_run_row {
	int64_t id;
	const char *created_utc, *machine, *kernel, *version, *git_rev, *labels_json;
	unsigned nresults;
};
typedef int (*db_run_fn)(void *arg, const struct db_run_row *row);
/* Runs matching f's labels, since, machine and run ids, oldest first. */
int db_query_runs(struct db *db, const struct db_filter *f, db_run_fn fn, void *arg, char *err,
		  size_t len);

#endif
