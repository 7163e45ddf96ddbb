/* SPDX-License-Identifier: MIT */
/* The cycle pattern's parts of `ipclab suite seeds`: the seed-000-cycle
 * section (seed.c: its plan, its printer and the cell --explain reads),
 * listed in src/suite/suite_seeds.c's seeds[], and its Why line (why.c). */
#ifndef IPCLAB_PATTERN_CYCLE_SUITE_H
#define IPCLAB_PATTERN_CYCLE_SUITE_H

#include <stddef.h>

#include "../../../suite/suite.h"

struct seed_cells;

unsigned plan_000_cycle(const struct suite_opts *o, struct plan_spec *s, char *err, size_t errlen);
void print_000_cycle(const struct suite_opts *o, const struct seed_cells *c);
const struct result *pick_000_cycle(const struct suite_opts *o, const struct seed_cells *c);

/* Seed 000's cycle section's Why line: why the worst cycle cell missed
 * more deadlines, or had the longer p99 completion, than the best, from
 * the cycle's own figures ("Why: ...", with --trace "Why (trace): ...");
 * "" when a cell is missing, did not run, or best is worst. */
size_t why_000_cycle(char *buf, size_t len, const struct result *best, const struct result *worst);
/* The exact test's p-value that cycle cells a and b missed deadlines at the
 * same rate (their xruns over their cycles; stats_rate_test). */
double why_xruns_p(const struct result *a, const struct result *b);

#endif
