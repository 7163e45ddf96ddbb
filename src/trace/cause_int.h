/* SPDX-License-Identifier: MIT */
/* Inside src/trace/: the cause split's parts (cause.c) and its shares'
 * intervals (cause_ci.c). */
#ifndef IPCLAB_TRACE_CAUSE_INT_H
#define IPCLAB_TRACE_CAUSE_INT_H

#include <stdbool.h>

#include "ipclab/result.h"
#include "ipclab/trace.h"

/* Time per unit (message, exchange, cycle) by kind, before it is folded. */
struct parts {
	double ns[TC_NKINDS];
};

/* Stream, fan-in, cycle: where the split's parts lie in the window's
 * slices (struct trace_slices): up to two rows, each read as the side
 * `like` is (its CPUs for steal, its polling in proportion to its running
 * time), over n units (messages, exchanges, cycles) in the window. */
struct sl_src {
	unsigned nrows, row[2];
	struct trace_side like[2];
	bool sleep_is_peer, no_sleep;	/* asleep: waiting for the peer; no part (cycle) */
	double n, figure;
	struct parts point;		/* the point's parts, before they are folded */
};

/* A side's window, over n units, into p (its sleep is waiting for the
 * peer, or, sleep_is_peer false, unattributed). */
void tc_side_parts(const struct result *r, const struct trace_side *s, double n, struct parts *p,
		   bool sleep_is_peer);
/* The parts onto the figure (what they leave of it unattributed, what
 * they exceed it by scaled down); the scale into *scale. */
void tc_fold_parts(struct parts *p, double figure, double *scale);
/* A round trip's parts (enum trace_cp_part, summed over n exchanges; the
 * wakeups' parts bound) as the cause's kinds, per exchange, into q. */
void tc_pp_parts(const struct result *r, const double *v, double idle, double cpu_wait, double n,
		 struct parts *q);
/* The parts' time on the round trip's path. */
double tc_pp_path(const double *v);
/* Each share's 95 % interval (from the round trip's exchanges, else the
 * window's slices as src says) and whether the largest is stable. */
void tc_cause_ci(const struct result *r, const struct sl_src *src, struct trace_cause *c);

#endif
