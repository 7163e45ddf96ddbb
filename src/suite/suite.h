/* SPDX-License-Identifier: MIT */
/* `ipclab suite seeds`: the driver (suite.c) and the five seed
 * experiments (suite_seeds.c), each a table row: how to plan it as typed
 * plan_specs, how often to repeat it, and how to print it with a reading. */
#ifndef IPCLAB_CMD_SUITE_H
#define IPCLAB_CMD_SUITE_H

#include <stdbool.h>

#include "ipclab/engine.h"
#include "../cmd/dbcmd.h"

struct suite_opts {
	bool quick, dry_run, quiet;
	bool trace, profile;		/* --trace, --profile: on every spec */
	bool explain;			/* --explain: the cell each reading explains, tested */
	uint64_t repeat;		/* --repeat N: every section's repetitions */
	bool repeat_set;
	const char *profile_dir;	/* --profile=DIR */
	const char *format, *output;
	const char *html;		/* --html FILE: the page beside the sections */
	char cmdline[512];
	bool fifo_ok;
	char fifo_why[128];
	struct db_args db;		/* --db, --label, --db-failed */
};

/* A spec's transports, named by the seed: those built here are kept (as
 * named, so a cell they cannot run is skipped: the suite is lenient). */
#define SEED_MAX_TP 8

struct seed_cells;

struct seed {
	const char *name, *title;
	/* up to two specs (a plan of both); returns how many, or 0 with why
	 * in err (a placement this machine cannot give) */
	unsigned (*plan)(const struct suite_opts *o, struct plan_spec *s, char *err, size_t errlen);
	const char *const *transports;	/* NULL-terminated */
	unsigned repeat, repeat_quick;	/* 0 = 1 */
	void (*print)(const struct suite_opts *o, const struct seed_cells *c);
	/* the cell its reading explains, for --explain (NULL: none) */
	const struct result *(*pick)(const struct suite_opts *o, const struct seed_cells *c);
};

extern const struct seed seeds[];
extern const size_t n_seeds;

/* --explain (suite_explain.c): sd's pick of its cells c run once more,
 * traced, with its cause tested; what that measured into the picked
 * result's trace.explain (r: c's results, writable). 0, 2 or 128+N. */
int seed_explain(const struct suite_opts *o, const struct seed *sd, const struct seed_cells *c,
		 struct result *r);

/* `ipclab suite fidelity` (suite_fidelity.c): its own options and plan. */
int cmd_suite_fidelity(int argc, char **argv);

/* fn(arg) with what it prints to stdout kept (suite_capture.c): the text,
 * malloc'd, after it went to stdout as ever; NULL if it could not be kept. */
char *suite_capture(void (*fn)(void *arg), void *arg);

/* Fill s for a section: `ipclab run`'s defaults, lenient, named section. */
void seed_spec(const struct suite_opts *o, struct plan_spec *s, const char *section);

#endif
