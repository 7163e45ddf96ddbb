/* SPDX-License-Identifier: MIT */
/* The results store on the command line: --db, --label and --db-failed of
 * run and suite (db_run.c), `ipclab db` (db.c), `ipclab history`
 * (history*.c), compare's stored baseline (db_baseline.c), and the
 * command line recorded in results with passwords hidden (redact.c). */
#ifndef IPCLAB_CMD_DBCMD_H
#define IPCLAB_CMD_DBCMD_H

#include <stdbool.h>
#include <stddef.h>

#include "../db/db.h"
#include "../report/rfile.h"
#include "ipclab/result.h"

/* What run and suite were asked to store. */
struct db_args {
	bool on;			/* --db, or IPCLAB_DB set */
	const char *url;		/* NULL: IPCLAB_DB or the default file */
	bool failed;			/* --db-failed: store a run that failed too */
	bool shared;			/* --db-shared: a store other users may write */
	struct db_label labels[DB_MAX_LABELS];
	size_t nlabels;
};

/* Which of those options a row is (its id), told apart by db_args_option. */
enum { DB_OPT_DB = 0x4000, DB_OPT_LABEL, DB_OPT_FAILED, DB_OPT_SHARED };

/* The same as rows of a command's option table (cli_opt.h), the
 * command's struct db_args at off. */
struct cli_opt;
struct cli_ctx;
int db_cli_option(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx);
#define DB_CLI_OPTIONS(off)                                                               \
	{ .name = "db", .has_arg = optional_argument, .metavar = "[=URL]", .kind = CLI_CALL, \
	  .help = "also store every result in a database: a file (default\n"              \
		  "~/.local/share/ipclab/results.db, or $IPCLAB_DB) or\n"                  \
		  "postgresql://HOST/DB; see ipclab history",                               \
	  .call = db_cli_option, .id = DB_OPT_DB, .offset = (off), .values = "@file" },     \
	{ .name = "label", .has_arg = required_argument, .metavar = "K=V[,K=V]",           \
	  .kind = CLI_CALL, .call = db_cli_option, .id = DB_OPT_LABEL, .offset = (off),     \
	  .help = "labels of this run in the store (kernel and machine are added)" },       \
	{ .name = "db-failed", .has_arg = no_argument, .kind = CLI_CALL,                   \
	  .call = db_cli_option, .id = DB_OPT_FAILED, .offset = (off),                      \
	  .help = "store the run even when it failed" },                              \
	DB_SHARED_ROW(.kind = CLI_CALL, .call = db_cli_option, .id = DB_OPT_SHARED,         \
		      .offset = (off))

/* --db-shared, a row of every table that takes --db. */
#define DB_SHARED_ROW(...)                                                                \
	{ .name = "db-shared", .has_arg = no_argument, __VA_ARGS__,                        \
	  .help = "the store is a file other users own or may write, and is\n"          \
		  "meant to be (else it is refused; a PostgreSQL store is\n"               \
		  "unaffected)" }

/* One of those options (argv, optind: --db URL as well as --db=URL);
 * 0, or 2 with the error said. */
int db_args_option(struct db_args *a, int opt, char *arg, int argc, char **argv);
/* After the options: IPCLAB_DB, and the store opened once so that one
 * refused (foreign, damaged, newer, unreachable) stops before the run.
 * 0, 1 or 2 (said). */
int db_args_check(struct db_args *a, const char *cmd);
/* Store rep (the run's exit status ret: a failed run is not stored unless
 * --db-failed); says what it stored unless quiet. The exit status: ret,
 * or 1 or 2 when storing failed. */
int db_store_report(const struct db_args *a, const struct report *rep, int ret, bool quiet,
		    const char *cmd);

/* The store's URL from --db (NULL: $IPCLAB_DB, the default file), opened
 * (flags: DB_OPEN_CREATE for writing, DB_OPEN_SHARED for --db-shared);
 * prints its error: 0, 1 or 2. */
int db_cmd_open(const char *url, unsigned flags, const char *cmd, struct db **out);
static inline unsigned db_open_flags(bool create, bool shared)
{
	return (create ? DB_OPEN_CREATE : 0) | (shared ? DB_OPEN_SHARED : 0);
}

/* compare --db URL --baseline K=V AFTER.json: the newest stored result of
 * each of after's cells with that label, on after's machine (machine: or
 * this one), as a result file (shared: --db-shared); 0, 1 or 2 (said). */
int db_baseline_load(const char *url, bool shared, const char *label, const char *machine,
		     const struct rfile *after, const char *const *ignore, struct rfile *before);

/* The command line as recorded in results: the words of argv joined, a
 * password in any URL among them shown as ***. */
void cmdline_redacted(char *buf, size_t len, int argc, char **argv);

/* s for a terminal, through the safe printer (ipclab/safe_print.h). */
const char *db_text_safe(char *buf, size_t len, const char *s);

int cmd_db(int argc, char **argv);
int cmd_history(int argc, char **argv);

#endif
