/* SPDX-License-Identifier: MIT */
/* Shared by the seed sections (suite_seeds.c, suite_seed003.c and a
 * pattern's own, src/pattern/NAME/suite/): building
 * their specs and finding their results again (suite_common.c). */
#ifndef IPCLAB_CMD_SUITE_INT_H
#define IPCLAB_CMD_SUITE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "suite.h"
#include "ipclab/rows.h"
#include "ipclab/trace.h"

extern const struct sched_spec seed_sched_other, seed_sched_fifo90;

/* A seed's cells as it planned them: its specs, kept, and where each
 * spec's cells begin among its results (plan order: plan_cell_index). A
 * printer finds a result by the indices of its cell in its spec's lists,
 * never by comparing names. */
struct seed_cells {
	const struct plan_spec *spec;	/* nspec of them */
	unsigned nspec;
	size_t first[2];
	const struct result *r;		/* every result of the seed, n of them */
	size_t n;
	struct report_why *why;		/* the printer's question, tested, or NULL */
};

enum prof_group { PG_COPY, PG_WAIT, PG_SYSCALL, PG_WAKE, PG_OTHER, PG_N };

/* Fewer samples than this are noise (a sample a ms of CPU time). */
#define PROF_MIN_SAMPLES 50

void spec_pattern(struct plan_spec *s, const char *name);
void spec_sizes(struct plan_spec *s, uint64_t lo, uint64_t hi);
void spec_thinks(struct plan_spec *s, const uint64_t *t, unsigned n);
int spec_pins(struct plan_spec *s, const char *const *names, char *err, size_t errlen);
/* The result of spec's cell k (plan_pick: an index into each list), or
 * NULL when there is no such cell (a list shorter, a cell not run). */
const struct result *seed_cell(const struct seed_cells *c, unsigned spec, const struct plan_pick *k);
/* The index of the transport named in s's list (the seed's own name for
 * it, kept by seed_transports when built here), or -1. */
int seed_tp(const struct plan_spec *s, const char *name);
/* A seed's table: rows through the one field table (ipclab/rows.h); a
 * row label (transport, "fifo:90") is the cell's own field. */
bool seed_ok(const struct result *r);
const char *seed_val(char *buf, size_t len, const struct result *r, double v, const char *(*fmt)(char *, size_t, double));
double seed_side_secs(const struct result *r, enum tp_role role);
bool seed_traced(const struct result *r);
bool seed_any_traced(const struct seed_cells *c);
const struct trace_side *seed_tside(const struct result *r, bool server);
double seed_pct_of(uint64_t part, uint64_t whole);
void seed_trace_cost(const struct seed_cells *c);
enum prof_group seed_prof_group(const char *sym);
uint64_t seed_prof_groups(const struct result *r, bool server, double pct[PG_N]);

/* --explain (suite_explain.c): each seed's cell that its reading explains
 * (traced, or NULL); seed_explain in suite.h. */
const struct result *pick_000(const struct suite_opts *o, const struct seed_cells *c);
const struct result *pick_001(const struct suite_opts *o, const struct seed_cells *c);
const struct result *pick_002(const struct suite_opts *o, const struct seed_cells *c);
const struct result *pick_003(const struct suite_opts *o, const struct seed_cells *c);
const struct result *pick_004(const struct suite_opts *o, const struct seed_cells *c);

/* The lists' order, as each seed's plan built them (suite_seeds.c): the
 * indices its printer and its pick find their cells by. */
enum { S_OTHER, S_FIFO };			/* seeds 000 (both sections), 002: sched */
enum { P002_SAME, P002_SPLIT, P002_NONE };	/* seed 002: pin (none when traced) */
enum { SPEC003_PACED, SPEC003_FLOOD };		/* seed 003: its two specs */
enum { C003_ONE, C003_FOUR };			/* seed 003: clients 1 and 4 */
enum { P004_NONE, P004_SAME, P004_SPLIT };	/* seed 004: pin */
enum { EP_PROCESS, EP_THREAD };			/* seed 004: endpoints */

/* seed 003 (suite_seed003.c) */
unsigned plan_003(const struct suite_opts *o, struct plan_spec *s, char *err, size_t errlen);
void print_003(const struct suite_opts *o, const struct seed_cells *c);

#endif
