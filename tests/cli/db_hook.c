// SPDX-License-Identifier: MIT
/*
 * db_hook.so - a test helper for tests/cli/db_store.sh and db_pg.sh,
 * loaded with LD_PRELOAD into ipclab. With IPCLAB_DB_HOOK=DIR, the first
 * time a result row has been written inside a run's transaction (the
 * first "INSERT INTO ipclab_results" through sqlite3_step, or sent by
 * PQsendQueryParams or PQexecParams), the helper creates DIR/held and then waits for a line on
 * the FIFO DIR/go: the test knows the transaction is open, and may start
 * a second writer, or kill -9 this one, before letting it go. With
 * IPCLAB_DB_HOOK_BEGIN=FILE, FILE is created just before the process
 * begins a transaction: the second writer has come to the lock the first
 * holds. Without the variables it changes nothing. Once per process.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int sqlite3_step(void *stmt);
void *PQexecParams(void *conn, const char *command, int nparams, const void *types,
		   const char *const *values, const int *lengths, const int *formats, int rformat);
int PQsendQueryParams(void *conn, const char *command, int nparams, const void *types,
		      const char *const *values, const int *lengths, const int *formats,
		      int rformat);

static int held, begun;

static void mark_begin(const char *sql)
{
	const char *path = getenv("IPCLAB_DB_HOOK_BEGIN");
	int fd;

	if (begun || !path || !sql || strncmp(sql, "BEGIN", 5))
		return;
	begun = 1;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
}

static void maybe_hold(const char *sql)
{
	const char *dir = getenv("IPCLAB_DB_HOOK");
	char path[4096], line[16];
	FILE *f;
	int fd;

	if (held || !dir || !sql || strncmp(sql, "INSERT INTO ipclab_results", 26))
		return;
	held = 1;
	snprintf(path, sizeof(path), "%s/held", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof(path), "%s/go", dir);
	f = fopen(path, "r");
	if (f) {
		if (!fgets(line, sizeof(line), f))
			line[0] = '\0';
		fclose(f);
	}
}

int sqlite3_step(void *stmt)
{
	static int (*real)(void *);
	static const char *(*sql)(void *);
	int rc;

	if (!real) {
		real = (int (*)(void *))dlsym(RTLD_NEXT, "sqlite3_step");
		sql = (const char *(*)(void *))dlsym(RTLD_NEXT, "sqlite3_sql");
	}
	mark_begin(sql ? sql(stmt) : NULL);
	rc = real(stmt);
	maybe_hold(sql ? sql(stmt) : NULL);	/* after the row is written */
	return rc;
}

void *PQexecParams(void *conn, const char *command, int nparams, const void *types,
		   const char *const *values, const int *lengths, const int *formats, int rformat)
{
	static void *(*real)(void *, const char *, int, const void *, const char *const *,
			     const int *, const int *, int);
	void *res;

	if (!real)
		real = (void *(*)(void *, const char *, int, const void *, const char *const *,
				  const int *, const int *, int))dlsym(RTLD_NEXT, "PQexecParams");
	mark_begin(command);
	res = real(conn, command, nparams, types, values, lengths, formats, rformat);
	maybe_hold(command);
	return res;
}

/* ipclab sends a statement and waits for its result itself (a stop signal
 * cancels it): held once the INSERT is on its way to the server. */
int PQsendQueryParams(void *conn, const char *command, int nparams, const void *types,
		      const char *const *values, const int *lengths, const int *formats,
		      int rformat)
{
	static int (*real)(void *, const char *, int, const void *, const char *const *,
			   const int *, const int *, int);
	int ret;

	if (!real)
		real = (int (*)(void *, const char *, int, const void *, const char *const *,
				const int *, const int *, int))dlsym(RTLD_NEXT, "PQsendQueryParams");
	mark_begin(command);
	ret = real(conn, command, nparams, types, values, lengths, formats, rformat);
	maybe_hold(command);
	return ret;
}
