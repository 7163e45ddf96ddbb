/* SPDX-License-Identifier: MIT */
/* The filters `ipclab history` and `ipclab db` share with run (-t -p -s
 * -e --pin --sched --clients) and their own (--label --since --machine
 * --run), parsed into a db_filter (db_filter.c). */
#ifndef IPCLAB_CMD_DB_FILTER_H
#define IPCLAB_CMD_DB_FILTER_H

#include <getopt.h>

#include "dbcmd.h"

enum { FO_PIN = 0x4100, FO_SCHED, FO_CLIENTS, FO_LABEL, FO_SINCE, FO_MACHINE, FO_RUN, FO_DB };

#define FILTER_LONG_OPTIONS                                                 \
	{ "transport", required_argument, NULL, 't' },                      \
	{ "pattern", required_argument, NULL, 'p' },                        \
	{ "size", required_argument, NULL, 's' },                           \
	{ "endpoints", required_argument, NULL, 'e' },                      \
	{ "pin", required_argument, NULL, FO_PIN },                         \
	{ "sched", required_argument, NULL, FO_SCHED },                     \
	{ "clients", required_argument, NULL, FO_CLIENTS },                 \
	{ "label", required_argument, NULL, FO_LABEL },                     \
	{ "since", required_argument, NULL, FO_SINCE },                     \
	{ "machine", required_argument, NULL, FO_MACHINE },                 \
	{ "run", required_argument, NULL, FO_RUN },                         \
	{ "db", required_argument, NULL, FO_DB }
#define FILTER_SHORT "t:p:s:e:"

#define FILTER_USAGE                                                                        \
	"      --db URL           the store (default $IPCLAB_DB, else\n"                         \
	"                         ~/.local/share/ipclab/results.db); postgresql://HOST/DB\n"     \
	"  -t, -p, -s, -e, --pin, --sched, --clients LIST   cells as run names them (-t takes\n" \
	"                         globs: 'shm-*')\n"                                           \
	"      --label K=V[,K=V]  runs with these labels (repeatable; all must match)\n"        \
	"      --since WHEN       runs from WHEN on: 2025-06-30, 2025-06-30T12:00, 7d, 12h\n"   \
	"      --machine NAME     runs on this machine (its hostname, or its machine label)\n"  \
	"      --run ID[,ID]      these stored runs (see ipclab db ls)\n"

struct filter_args {
	struct db_filter f;
	const char *url;		/* --db */
	const char *tglob[DB_MAX_LIST];	/* -t words with glob characters */
	unsigned ntglob;
	char since[32];
	char sizes[DB_MAX_LIST][24];
};

/* Is opt one of the filter options? */
bool filter_is_option(int opt);
/* Parse one; 0, or 2 with the error said (cmd names the command). */
int filter_option(struct filter_args *fa, int opt, char *arg, const char *cmd);
/* Does a result's transport pass the -t globs (true without any)? */
bool filter_transport_ok(const struct filter_args *fa, const char *transport);

#endif
