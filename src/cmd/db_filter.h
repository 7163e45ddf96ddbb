/* SPDX-License-Identifier: MIT */
/* The filters `ipclab history` and `ipclab db` share with run (-t -p -s
 * -e --pin --sched --clients) and their own (--label --since --machine
 * --run), parsed into a db_filter (db_filter.c). */
#ifndef IPCLAB_CMD_DB_FILTER_H
#define IPCLAB_CMD_DB_FILTER_H

#include <getopt.h>

#include "dbcmd.h"

enum { FO_PIN = 0x4100, FO_SCHED, FO_CLIENTS, FO_LABEL, FO_SINCE, FO_MACHINE, FO_RUN, FO_DB };

/* The same as rows of a command's option table (cli_opt.h), the
 * command's struct filter_args at off. */
struct cli_opt;
struct cli_ctx;
int filter_cli_option(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx);
#define FILTER_ROW(off, l, s, i, mv, h, v)                                                    \
	{ .name = l, .short_name = s, .has_arg = required_argument, .metavar = mv, .help = h, \
	  .kind = CLI_CALL, .call = filter_cli_option, .id = i, .offset = (off), .values = v }
#define FILTER_CLI_OPTIONS(off)                                                              \
	FILTER_ROW(off, "db", 0, FO_DB, "URL", "the store (default $IPCLAB_DB, else\n"             \
		   "~/.local/share/ipclab/results.db); postgresql://HOST/DB", "@file"),          \
	DB_SHARED_ROW(.kind = CLI_FLAG, .offset = (off) + offsetof(struct filter_args, shared)), \
	FILTER_ROW(off, "transport", 't', 't', "LIST", "cells of these transports (globs: 'shm-*')", \
		   "@transports"),                                                            \
	FILTER_ROW(off, "pattern", 'p', 'p', "LIST", "cells of these patterns", "@patterns"),       \
	FILTER_ROW(off, "size", 's', 's', "LIST", "cells of these sizes (64,4k,1M)", NULL),         \
	FILTER_ROW(off, "endpoints", 'e', 'e', "LIST", "process, thread", "list:process thread"),   \
	FILTER_ROW(off, "pin", 0, FO_PIN, "LIST", "cells pinned so (as run names it)", NULL),      \
	FILTER_ROW(off, "sched", 0, FO_SCHED, "LIST", "cells of these policies (as run names them)", \
		   NULL),                                                                      \
	FILTER_ROW(off, "clients", 0, FO_CLIENTS, "LIST", "cells of these client counts", NULL),   \
	FILTER_ROW(off, "label", 0, FO_LABEL, "K=V[,K=V]",                                          \
		   "runs with these labels (repeatable; all must match)", NULL),               \
	FILTER_ROW(off, "since", 0, FO_SINCE, "WHEN",                                               \
		   "runs from WHEN on: 2025-06-30, 2025-06-30T12:00, 7d, 12h", NULL),          \
	FILTER_ROW(off, "machine", 0, FO_MACHINE, "NAME",                                           \
		   "runs on this machine (its hostname, or its machine label)", NULL),         \
	FILTER_ROW(off, "run", 0, FO_RUN, "ID[,ID]", "these stored runs (see ipclab db ls)", NULL)

struct filter_args {
	struct db_filter f;
	const char *url;		/* --db */
	bool shared;			/* --db-shared */
	const char *tglob[DB_MAX_LIST];	/* -t words with glob characters */
	unsigned ntglob;
	char since[32];
	char sizes[DB_MAX_LIST][24];
};

/* Parse one; 0, or 2 with the error said (cmd names the command). */
int filter_option(struct filter_args *fa, int opt, char *arg, const char *cmd);
/* Does a result's transport pass the -t globs (true without any)? */
bool filter_transport_ok(const struct filter_args *fa, const char *transport);

#endif
