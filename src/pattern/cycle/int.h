/* SPDX-License-Identifier: MIT */
/* Shared by the cycle pattern's files: cycle.c (the driver and the
 * stages, its period at plan time), collect.c (its figures into a
 * result) and report/out.c (its part of the
 * result record). */
#ifndef IPCLAB_PATTERN_CYCLE_INT_H
#define IPCLAB_PATTERN_CYCLE_INT_H

#include "cycle.h"
#include "ipclab/result.h"
#include "../common.h"

enum { SHAPE_CHAIN, SHAPE_FAN };

struct cycle_opts {
	int shape;
	uint64_t deadline_ns;	/* 0 = the period */
	uint64_t timer_slack_ns;
	uint64_t think_stage;	/* only this stage (1..N) thinks; 0 = every stage */
};

extern const struct pattern pat_cycle;

static inline const struct cycle_cell *cycle_cell(const struct cell *c)
{
	return (const struct cycle_cell *)c->pat_cell;
}

static inline bool cycle_is_chain(const struct cell *c)
{
	return ((const struct cycle_opts *)c->pat_opts)->shape == SHAPE_CHAIN;
}

int cycle_plan(struct cell *c, struct pat_plan *pp, char *err, size_t errlen);
void cycle_collect(const struct side_stats *sides, unsigned n, struct result *res);
void cycle_collect_trace(struct result *res);
void cycle_live(const struct side_stats *sides, unsigned n, char *buf, size_t len);

/* An xrun's cause (cause.c): the parts of a cycle that ran and
 * missed its deadline, as the driver timed them. */
struct cycle_parts {
	bool slept;			/* it slept to the start: start_late is the timer's lateness */
	uint64_t start_late_ns;		/* its start after the intended one */
	uint64_t completion_ns, deadline_ns, done_ns;
	uint64_t driver_lost_ns;	/* --trace: the driver's time lost to other tasks in it */
};
/* The driver: count buffer m's xrun by its cause, from cp and what every
 * stage published (into cs->causes and cs->blame). */
void cycle_cause_count(const struct participant *p, struct cycle_side *cs, uint32_t m,
		       const struct cycle_parts *cp);
/* A stage, before it sends buffer m on: its wait, its work [t_in, t_out]
 * and (--trace) its time lost to other tasks since its last send. */
void cycle_cause_publish(struct participant *p, struct cycle_side *cs, uint32_t m,
			 uint64_t wait_ns, uint64_t t_in, uint64_t t_out);

_Static_assert(sizeof(struct cycle_cell) <= PAT_CELL_MAX, "a cycle cell fits its pat_cell");
_Static_assert(sizeof(struct cycle_result) <= PAT_RESULT_MAX, "a cycle result fits its pat_result");

#endif
