// SPDX-License-Identifier: MIT
/* The SQLite back end: a store is hostile input (sqlite.c opens and
 * connects; sqlite_int.h holds what the two share). This file holds the
 * look at a store before it is trusted -- the file and its directory, a
 * read-only look at what the file is, its schema objects against what
 * ipclab's steps make, quick_check -- and the hardening of every
 * connection.
 *
 * A store is a file anyone may have made: its schema is SQL that SQLite
 * runs as it reads it (a view, a trigger, a virtual table's module). So a
 * store is read first through a read-only connection, with triggers,
 * views, extensions and untrusted schema functions turned off, and taken
 * only if it holds no view, trigger or virtual table, and its ipclab_*
 * tables and indexes are exactly what ipclab's steps make. A file another
 * user owns or may write is refused unless --db-shared says so: they could
 * change it between the check and the use. Every statement ends within a
 * moment of SIGINT or SIGTERM, waits for a lock included, and what SQLite
 * keeps aside (sorts, temporary tables) stays in bounded memory. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ipclab/runner.h"
#include "ipclab/util.h"
#include "db.h"
#include "sqlite_int.h"

#ifdef HAVE_SQLITE

/* "iplb": PRAGMA application_id of an ipclab store (`file` shows it). */
#define IPCLAB_APP_ID 0x69706c62

static int one_int(void *arg, const char *const *col, int ncol)
{
	*(long long *)arg = ncol > 0 && col[0] ? strtoll(col[0], NULL, 10) : 0;
	return 0;
}

static int damaged(struct db *db, char *err, size_t len, const char *why)
{
	return errf(err, len, EINVAL, "%s is a damaged SQLite database (%s); it is left as it is: restore it from a copy, or name a new file",
		    db->where, why);
}

/* The signal that ends the command (runner.c's handler) ends a statement:
 * the progress handler is called every SQ_PROGRESS_OPS VM steps. */
#define SQ_PROGRESS_OPS 1000

static int sq_progress(void *arg)
{
	(void)arg;
	return runner_interrupted != 0;
}

/* Two writers at once queue (a minute at most), unless a signal came. */
static int sq_busy(void *arg, int n)
{
	(void)arg;
	if (runner_interrupted || n >= 6000)
		return 0;
	nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	return !runner_interrupted;
}

/* What SQLite may hold for one command: temporary storage is in memory
 * (PRAGMA temp_store), and all of SQLite's memory is capped: 1 GiB, or
 * twice the store when larger (a sort of everything it holds fits). */
void dbsq_heap_limit(const char *path)
{
	struct stat st;
	sqlite3_int64 lim = 1ll << 30;

	if (!stat(path, &st) && 2 * (sqlite3_int64)st.st_size > lim)
		lim = 2 * (sqlite3_int64)st.st_size;
	sqlite3_hard_heap_limit64(lim);
}

void dbsq_harden(sqlite3 *h)
{
	static const int off[] = {
		SQLITE_DBCONFIG_ENABLE_TRIGGER, SQLITE_DBCONFIG_ENABLE_VIEW,
		SQLITE_DBCONFIG_TRUSTED_SCHEMA, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION,
	};

	for (size_t i = 0; i < ARRAY_SIZE(off); i++)
		sqlite3_db_config(h, off[i], 0, (int *)NULL);
	sqlite3_db_config(h, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
	sqlite3_busy_handler(h, sq_busy, NULL);
	sqlite3_progress_handler(h, SQ_PROGRESS_OPS, sq_progress, NULL);
}

/* A name from the file, for a message: printable, short. */
static const char *shown(char *buf, size_t len, const char *s)
{
	size_t i = 0;

	for (; s && s[i] && i + 1 < len && i < 64; i++)
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	buf[i] = '\0';
	return buf;
}

/* The schema objects of one table family, as sqlite_schema holds them. */
#define SQ_MAX_OBJS 64
struct sq_obj {
	char *name, *what;	/* what: type, table and SQL, for comparing */
	char type[8];
};
struct sq_objs {
	struct sq_obj o[SQ_MAX_OBJS];
	int n;
	bool over;
};

static int got_obj(void *arg, const char *const *col, int ncol)
{
	struct sq_objs *s = arg;
	struct sq_obj *o;

	if (ncol < 4 || !col[0] || !col[1])
		return 0;
	if (s->n >= SQ_MAX_OBJS) {
		s->over = true;
		return 1;
	}
	o = &s->o[s->n];
	o->name = strdup(col[1]);
	snprintf(o->type, sizeof(o->type), "%s", col[0]);
	if (asprintf(&o->what, "%s\x1f%s\x1f%s", col[0], col[2] ? col[2] : "", col[3] ? col[3] : "") < 0)
		o->what = NULL;
	s->n++;
	return !o->name || !o->what ? -ENOMEM : 0;
}

static void objs_free(struct sq_objs *s)
{
	for (int i = 0; i < s->n; i++) {
		free(s->o[i].name);
		free(s->o[i].what);
	}
	s->n = 0;
}

/* ipclab's objects: its tables, their indexes, whatever names them. */
static const char sq_objs_sql[] =
	"SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE lower(name) GLOB 'ipclab_*' "
	"OR lower(tbl_name) GLOB 'ipclab_*' OR lower(name) GLOB 'sqlite_autoindex_ipclab_*' "
	"ORDER BY name";

/* What ipclab's steps make at schema version, read from a private
 * in-memory database that ran them. */
static int sq_reference(int version, struct sq_objs *ref, char *err, size_t len)
{
	struct db mem = { .where = "(ipclab's schema)" };
	struct sq_conn c = { .h = NULL };
	int ret = 0;

	if (sqlite3_open_v2(":memory:", &c.h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, NULL) !=
	    SQLITE_OK) {
		sqlite3_close(c.h);
		return errf(err, len, ENOMEM, "out of memory");
	}
	mem.h = &c;
	if (version > 0)
		ret = dbsq_exec(&mem, DB_META_SQL, NULL, 0, NULL, NULL, err, len);
	for (int v = 0; !ret && v < version; v++)
		for (const char *const *sql = db_sqlite.steps[v]; !ret && *sql; sql++)
			ret = dbsq_exec(&mem, *sql, NULL, 0, NULL, NULL, err, len);
	if (!ret)
		ret = dbsq_exec(&mem, sq_objs_sql, NULL, 0, got_obj, ref, err, len);
	sqlite3_close(c.h);
	return ret;
}

static const struct sq_obj *obj_find(const struct sq_objs *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->o[i].name, name))
			return &s->o[i];
	return NULL;
}

/* The table an object belongs to (sqlite_schema's tbl_name), into buf. */
static const char *obj_table(const struct sq_obj *o, char *buf, size_t len)
{
	const char *t = strchr(o->what, '\x1f') + 1;

	snprintf(buf, len, "%.*s", (int)strcspn(t, "\x1f"), t);
	return buf;
}

/* The store's ipclab objects against the reference's (those of table
 * only, when it is not NULL). */
static int objs_compare(struct db *db, const struct sq_objs *got, const struct sq_objs *ref,
			const char *table, int version, char *err, size_t len)
{
	char a[72], t[128];

	for (int i = 0; i < got->n; i++) {
		const struct sq_obj *o = &got->o[i], *r = obj_find(ref, o->name);

		if (table && strcmp(obj_table(o, t, sizeof(t)), table))
			continue;
		if (!r)
			return errf(err, len, EINVAL, "%s holds %s %s that ipclab does not make (schema %d): not a store as ipclab left it; it is left as it is: drop it if you made it, or name a new file",
				    db->where, o->type, shown(a, sizeof(a), o->name), version);
		if (strcmp(o->what, r->what))
			return errf(err, len, EINVAL, "%s: its %s %s is not the one ipclab makes (schema %d): a changed or foreign store; it is left as it is: name a new file",
				    db->where, o->type, shown(a, sizeof(a), o->name), version);
	}
	for (int i = 0; !table && i < ref->n; i++)
		if (!obj_find(got, ref->o[i].name))
			return damaged(db, err, len, ref->o[i].name);
	return 0;
}

/* No view, trigger or virtual table anywhere in the file. */
static int sq_no_code(struct db *db, char *err, size_t len)
{
	struct sq_objs s = { .n = 0 };
	char a[72], b[72], t[128];
	int ret = dbsq_exec(db, "SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE type IN ('view', 'trigger') "
			    "OR (type = 'table' AND sql LIKE 'create virtual table%') ORDER BY type, name LIMIT 1",
			    NULL, 0, got_obj, &s, err, len);

	if (!ret && s.n)
		ret = errf(err, len, EINVAL, "%s holds %s %s (on %s), which ipclab never makes: a store with views, triggers or virtual tables is refused, as SQLite would run their SQL; it is left as it is: name a new file",
			   db->where, strcmp(s.o[0].type, "table") ? s.o[0].type : "a virtual table",
			   shown(a, sizeof(a), s.o[0].name),
			   shown(b, sizeof(b), obj_table(&s.o[0], t, sizeof(t))));
	objs_free(&s);
	return ret;
}

/* The store's schema is what ipclab made: first the meta table (read
 * next for the version), then, at that version, all of ipclab's objects.
 * A schema SQLite cannot read is a damaged file. */
static int sq_schema_ok(struct db *db, int *version, char *err, size_t len)
{
	struct sq_objs got = { .n = 0 }, ref = { .n = 0 };
	long long meta = 0;
	int ret = sq_no_code(db, err, len);

	if (!ret) {
		ret = dbsq_exec(db, sq_objs_sql, NULL, 0, got_obj, &got, err, len);
		if (got.over)
			ret = errf(err, len, EINVAL, "%s holds more than %d ipclab tables and indexes: not a store ipclab made; it is left as it is: name a new file",
				   db->where, SQ_MAX_OBJS);
		else if (ret == -ENOMEM)
			ret = errf(err, len, ENOMEM, "out of memory");
		else if (ret == -EINVAL)
			ret = damaged(db, err, len, "its schema does not read");
	}
	if (!ret)
		ret = sq_reference(1, &ref, err, len);
	if (!ret)
		ret = objs_compare(db, &got, &ref, "ipclab_meta", 1, err, len);
	if (!ret && obj_find(&got, "ipclab_meta") &&
	    dbsq_exec(db, "SELECT value FROM ipclab_meta WHERE key = 'schema_version'", NULL, 0,
		      one_int, &meta, err, len))
		ret = damaged(db, err, len, "its schema version does not read");
	objs_free(&ref);
	*version = (int)meta;
	if (!ret && (meta < 0 || meta > INT_MAX))
		ret = damaged(db, err, len, "its schema version is out of range");
	/* a newer schema is refused by the caller, as it is */
	if (!ret && meta <= DB_SCHEMA_VERSION)
		ret = sq_reference((int)meta, &ref, err, len);
	if (!ret && meta <= DB_SCHEMA_VERSION)
		ret = objs_compare(db, &got, &ref, NULL, (int)meta, err, len);
	objs_free(&got);
	objs_free(&ref);
	return ret;
}

/* What the file is, read without writing: not SQLite, another program's,
 * an empty database (a new store), or an ipclab store of some version
 * whose schema is ipclab's. */
int dbsq_identify(struct db *db, bool create, char *err, size_t len)
{
	long long app = 0, tables = 0;
	char why[ERRLEN];
	int ret = dbsq_exec(db, "PRAGMA application_id", NULL, 0, one_int, &app, why, sizeof(why));

	if (!ret)
		ret = dbsq_exec(db, "SELECT count(*) FROM sqlite_schema", NULL, 0, one_int, &tables, why,
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
	return sq_schema_ok(db, &db->version, err, len);
}

/* A damaged file is refused, never written: quick_check reads every page. */
static int sq_check(struct db *db, char *err, size_t len)
{
	char verdict[64] = "";
	int ret = dbsq_exec(db, "PRAGMA quick_check(1)", NULL, 0, dbsq_one_text, verdict, err, len);

	if (ret == -EINVAL || (!ret && strcmp(verdict, "ok")))
		return damaged(db, err, len, verdict[0] ? verdict : "unreadable");
	return ret;
}

int dbsq_refuse_path(struct db *db, const char *path, bool create, char *err, size_t len)
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

/* One of the store's files (or its directory): another user's, or one
 * they may write, is refused unless --db-shared. A directory of root's is
 * the system's (/var/lib, /srv): root is trusted with it. */
static int sq_foreign(struct db *db, const char *path, const struct stat *st, bool dir,
		      char *err, size_t len)
{
	uid_t me = geteuid();

	if (db->shared)
		return 0;
	if (st->st_uid != me && !(dir && st->st_uid == 0))
		return errf(err, len, EINVAL, "%s: %s %s is owned by uid %u, not you: another user could change what ipclab reads and stores; use a store of your own, or pass --db-shared if it is meant to be shared",
			    db->where, dir ? "its directory" : "the file", path, (unsigned)st->st_uid);
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return errf(err, len, EINVAL, "%s: %s %s is writable by other users (mode %04o): they could change what ipclab reads and stores; chmod go-w %s, or pass --db-shared if it is meant to be shared",
			    db->where, dir ? "its directory" : "the file", path,
			    (unsigned)(st->st_mode & 07777), path);
	return 0;
}

/* The store's directory, the file and its -wal, -shm and -journal: none
 * a link or a special file, none another user's (unless --db-shared). */
int dbsq_owned(struct db *db, const char *dir, const char *real, char *err, size_t len)
{
	static const char *const sib[] = { "", "-wal", "-shm", "-journal" };
	char p[PATH_MAX + 16];
	struct stat st;
	int ret = 0;

	if (stat(dir, &st))
		return errf(err, len, ENOENT, "%s: the directory %s: %s", db->where, dir, strerror(errno));
	ret = sq_foreign(db, dir, &st, true, err, len);
	for (size_t i = 0; !ret && i < ARRAY_SIZE(sib); i++) {
		snprintf(p, sizeof(p), "%s%s", real, sib[i]);
		if (lstat(p, &st))
			continue;
		if (!S_ISREG(st.st_mode))
			return errf(err, len, EINVAL, "%s: %s is %s, not the store's own file; it is left as it is: remove it, or name another store",
				    db->where, p, S_ISLNK(st.st_mode) ? "a symbolic link" : "not a regular file");
		ret = sq_foreign(db, p, &st, false, err, len);
	}
	return ret;
}

/* An existing file is looked at through a read-only connection first:
 * nothing is written to a file that is refused. The -wal and -shm files a
 * reader of a WAL database makes (and leaves) are removed again when the
 * file is refused and the -wal holds nothing. */
int dbsq_inspect(struct db *db, const char *real, bool create, char *err, size_t len)
{
	char wal[PATH_MAX + 8], shm[PATH_MAX + 8];
	struct stat st;
	bool had_wal, had_shm;
	int ret;

	snprintf(wal, sizeof(wal), "%s-wal", real);
	snprintf(shm, sizeof(shm), "%s-shm", real);
	had_wal = !lstat(wal, &st);
	had_shm = !lstat(shm, &st);
	ret = dbsq_connect(db, real, SQLITE_OPEN_READONLY, err, len);
	if (!ret)
		ret = dbsq_identify(db, create, err, len);
	if (!ret && db->version && db->version <= DB_SCHEMA_VERSION)
		ret = sq_check(db, err, len);
	dbsq_disconnect(db);
	if ((ret || db->version > DB_SCHEMA_VERSION) && !had_wal && !lstat(wal, &st) &&
	    S_ISREG(st.st_mode) && st.st_size == 0) {
		unlink(wal);
		if (!had_shm)
			unlink(shm);
	}
	return ret;
}

#endif /* HAVE_SQLITE */
