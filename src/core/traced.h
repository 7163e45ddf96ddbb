/* SPDX-License-Identifier: MIT */
/* The engine's drivers around a traced cell (traced.c, explain.c): the
 * runner calls them, they run the cell through run_once and read the
 * tracer's record; the tracer (src/trace) never calls back up. */
#ifndef IPCLAB_CORE_TRACED_H
#define IPCLAB_CORE_TRACED_H

struct cell;
struct result;

/* run_once(c) untraced, then traced, pairs_per_run times (trace_set_pairs),
 * with the perturbation ratio; --explain after them. */
int trace_run_pair(const struct cell *c, struct result *res,
		   int (*run_once)(const struct cell *c, struct result *res));
/* Untraced/traced pairs per traced run (1..TRACE_PAIRS; TRACE_PAIRS by
 * default): a session that repeats each cell TRACE_PAIRS times or more
 * asks for one, and folds the repetitions' ratios with trace_perturbation. */
void trace_set_pairs(unsigned n);
/* --explain, after the traced runs: res's trace picked, the knob tested;
 * 0, or -EINTR when a run was interrupted. */
int trace_explain(const struct cell *c, struct result *res,
		  int (*run_once)(const struct cell *c, struct result *res));

#endif
