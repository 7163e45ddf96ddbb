/* SPDX-License-Identifier: MIT */
/* Shared by the SQLite back end's files: sqlite.c (the schema's steps,
 * statements, the connection and the opening of a store) and
 * sqlite_hostile.c (a store is hostile input: the look at it before it is
 * trusted, and the hardening of every connection). */
#ifndef IPCLAB_DB_SQLITE_INT_H
#define IPCLAB_DB_SQLITE_INT_H

#ifdef HAVE_SQLITE
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "db.h"

/* A connection (db->h), and the thread that interrupts what it runs when
 * a signal asks ipclab to stop: the progress handler is not called inside
 * one long VM step (PRAGMA quick_check of a large file, a sort's merge),
 * sqlite3_interrupt is seen there too. */
struct sq_conn {
	sqlite3 *h;
	pthread_t watcher;
	atomic_bool stop, watched;
};

/* sqlite.c */
int dbsq_exec(struct db *db, const char *sql, const char *const *param, int nparam, db_row_fn fn,
	      void *arg, char *err, size_t len);
/* A row's first column into arg, a char[64]. */
int dbsq_one_text(void *arg, const char *const *col, int ncol);
int dbsq_connect(struct db *db, const char *real, int flags, char *err, size_t len);
void dbsq_disconnect(struct db *db);

/* sqlite_hostile.c */
void dbsq_heap_limit(const char *path);
/* Triggers, views, extensions, untrusted schema functions off; a stop
 * signal ends a statement and a wait for a lock. */
void dbsq_harden(sqlite3 *h);
int dbsq_identify(struct db *db, bool create, char *err, size_t len);
/* path itself: a symbolic link or not a regular file is refused; missing,
 * it is one to create (create) or no store (ENOENT). */
int dbsq_refuse_path(struct db *db, const char *path, bool create, char *err, size_t len);
int dbsq_owned(struct db *db, const char *dir, const char *real, char *err, size_t len);
int dbsq_inspect(struct db *db, const char *real, bool create, char *err, size_t len);
#endif

#endif
