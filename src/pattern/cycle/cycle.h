/* SPDX-License-Identifier: MIT */
/* The cycle pattern's model (src/pattern/cycle/): a driver woken by an
 * absolute periodic timer passes a buffer through a graph of stages, once
 * per period, against a deadline, as an audio server does. Here: the
 * period parser, what a cell keeps, what each side records (its
 * side_stats.pat), and what a result carries (its pat_result). The engine
 * knows none of it: the pattern's hooks fill and read these. */
#ifndef IPCLAB_CYCLE_H
#define IPCLAB_CYCLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipclab/metrics.h"

/* --period: a time ("1.333ms", "500us") or FRAMES@RATE ("64@48000": 64
 * frames at 48 kHz = 1333333 ns). 0, or -EINVAL with why (one line, the
 * fix included). The shortest period taken is CYCLE_MIN_PERIOD_NS. */
#define CYCLE_MIN_PERIOD_NS 20000ull
#define CYCLE_MAX_PERIOD_NS (10ull * 1000000000ull)
/* Each hop of the graph needs at least this much of the period. */
#define CYCLE_MIN_HOP_NS 5000ull
int cycle_period_parse(const char *s, uint64_t *ns, char *err, size_t errlen);

/* What a cycle cell keeps (its pat_cell, filled at plan time): the period
 * as given and in ns, and the deadline (-O deadline=, else the period). */
struct cycle_cell {
	uint64_t period_ns, deadline_ns;
	char period_text[24];
};
struct cell;
struct result;
/* A cell's or a result's, or NULL when it is not of the cycle pattern. */
const struct cycle_cell *cycle_cell_of(const struct cell *c);
const struct cycle_result *cycle_result_of(const struct result *r);

/* Completion time over the run, in constant memory: point i holds the
 * worst completion of `per` consecutive cycles (UINT64_MAX when none of
 * them ran: all late starts) and how many of them were xruns; when the
 * points run out, neighbours are merged and `per` doubles. */
#define CYCLE_SERIES_MAX 1024
struct cycle_series {
	uint32_t n;			/* points filled */
	uint32_t per;			/* cycles per point (a power of two) */
	uint32_t in_last;		/* cycles in the last point so far */
	uint32_t xruns[CYCLE_SERIES_MAX];
	uint64_t max_ns[CYCLE_SERIES_MAX];
};
void cycle_series_init(struct cycle_series *s);
/* One cycle: its completion time (UINT64_MAX for a late start, never run). */
void cycle_series_add(struct cycle_series *s, uint64_t completion_ns, bool xrun);

#define CYCLE_MAX_STAGES 64

/* Why a cycle was an xrun: one cause each (cause.c).
 * From the cycle's own clock reads: the part of its time that was the
 * largest (its start, a hop, a stage's work, the hop back); with --trace
 * also whether other tasks held the graph's CPUs longer than it overran. */
enum cycle_xrun_cause {
	XC_LATE_START,		/* its deadline passed before it could start (never run) */
	XC_BEHIND,		/* it started behind schedule: the previous cycle ran long */
	XC_TIMER_LATE,		/* the driver's timer woke it late */
	XC_STAGE_WAIT,		/* a stage got the buffer late (its hop: sent to received) */
	XC_STAGE_BUSY,		/* a stage's work ran long (received to sent on) */
	XC_DRIVER_WAIT,		/* the driver got the graph's end late (the hop back) */
	XC_PREEMPTED,		/* --trace: other tasks took the graph's CPUs for longer than
				 * the cycle overran: without them it would have kept time */
	XC_UNKNOWN,		/* a stage's figures for it were not there */
	XC_N
};
/* The JSON name of each ("late_start", ...). */
const char *cycle_cause_name(enum cycle_xrun_cause k);

/* A stage's figures of the buffer it last passed on, for the driver to
 * read when the graph's end comes back (its side_stats.pat; atomics: the
 * driver reads them while the stage runs). m is the buffer's number + 1. */
struct cycle_pub {
	_Atomic uint64_t m, wait_ns, busy_ns, t_out, lost_ns;
};

/* The xruns one stage caused, by cause (its wait, its work, or other
 * tasks taking its CPU). */
struct cycle_blame {
	uint64_t wait, busy, preempted;
};

/* What one side of a cycle cell counted (its side_stats.pat). The
 * driver: cycles, xruns, late starts, timer lateness in `b` (its
 * completion times are the side's main histogram), each xrun's cause and
 * the stage it blames; a stage: its wait in the main histogram (the
 * previous hop's send to its receive), its busy time in `b` (receive to
 * its own send), and its last buffer's figures in pub. */
struct cycle_side {
	uint64_t cycles, xruns, late_starts;
	_Atomic uint64_t cycles_live, xruns_live;	/* the same, for the progress line */
	struct hist b;
	struct cycle_series series;	/* the driver's */
	bool traced;			/* the driver could read --trace's counters */
	uint64_t causes[XC_N];		/* the driver's: xruns by cause (they add up to xruns) */
	uint64_t driver_preempted;	/* of causes[XC_PREEMPTED], the driver's own CPU */
	struct cycle_blame blame[CYCLE_MAX_STAGES];
	struct cycle_pub pub;		/* a stage's */
	uint64_t pub_lost0;		/* a stage's: --trace's lost time at its last send */
};

/* In a result (the driver's and each stage's figures folded). */
struct cycle_result {
	bool on;
	char shape[8];			/* "chain" or "fan" */
	uint64_t period_ns, deadline_ns;
	uint64_t cycles, xruns, late_starts;
	double xruns_per_million;
	uint64_t cycle_p50_ns, cycle_p99_ns, cycle_p99_9_ns, cycle_max_ns;
	uint64_t timer_late_p50_ns, timer_late_p99_ns, timer_late_max_ns;
	uint64_t timer_samples;		/* cycles the driver slept for (timed its wake) */
	unsigned nstages;
	struct cycle_stage {
		uint64_t wait_p50_ns, wait_p99_ns, wait_max_ns;
		uint64_t busy_p50_ns, busy_p99_ns;
		double wait_share_pct, busy_share_pct;	/* p50 over the period */
		/* --trace: woken to running, from the scheduler's events */
		bool traced;
		uint64_t woken_p50_ns, woken_p99_ns, woken_max_ns;
		/* the xruns it caused, by cause */
		uint64_t xruns;
		struct cycle_blame blame;
	} stages[CYCLE_MAX_STAGES];
	/* every xrun's cause (they add up to xruns); causes_traced: with
	 * --trace's counters, else XC_PREEMPTED is not known (0, and said) */
	bool causes_traced;
	uint64_t causes[XC_N];
	uint64_t driver_preempted;	/* of causes[XC_PREEMPTED], the driver's own CPU */
	struct cycle_series series;
};

#endif
