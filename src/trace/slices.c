// SPDX-License-Identifier: MIT
/* --trace: the sides' time slice by slice of their window (struct
 * trace_slices), from the in-kernel bins (src/trace/bpf/sched.bpf.c,
 * sl_add), for the intervals of the stream, fan-in and cycle splits
 * (cause.c): the tracer's slices of 4.2 ms joined, neighbour to
 * neighbour, into at most TRACE_SL_BINS slices of equal length. */
#include <stdlib.h>
#include <string.h>

#include "path_int.h"

/* the record's rows are the tracer's: one side more or fewer on either
 * side would read past sl_full's rows */
_Static_assert(TRACE_SL_SIDES == TR_SL_SIDES, "the record's slice rows are the tracer's");

typedef double fine_row[TR_SL_BINS][TSL_NPARTS];

/* What a side's bins miss of its sums, spread over the tracer's slices
 * from @from to its window's end, into row. */
static void spread(fine_row row, const struct tr_win *w, uint64_t from, const double *miss)
{
	uint64_t a = from > w->start ? from : w->start, len = w->end > a ? w->end - a : 0;

	for (uint64_t t = a; len && t < w->end;) {
		uint64_t j = (t - w->start) >> TR_SL_SHIFT, next = w->start + ((j + 1) << TR_SL_SHIFT);
		double f = (double)((next < w->end ? next : w->end) - t) / (double)len;

		for (unsigned p = 0; p < TSL_NPARTS; p++)
			row[j & (TR_SL_BINS - 1)][p] += miss[p] * f;
		t = next;
	}
}

/* Side i's part of what the bins miss (collect_side): the interval still
 * open at the window's end, or a side that never left its CPU (its whole
 * window, running); into its row, and a client's into the clients' row. */
static void open_end(fine_row *row, const struct tr_globals *g, unsigned i)
{
	const struct tr_win *w = &g->wins[i];
	const struct tr_side *s = &g->sides[i];
	double miss[TSL_NPARTS] = { 0 };

	if (s->t_last && s->t_last < w->end && s->phase != TR_PH_UNKNOWN)
		miss[s->phase == TR_PH_RUN ? (s->in_sys ? TSL_KERNEL : TSL_USER) :
		     s->phase == TR_PH_WOKEN ? TSL_WOKEN :
		     s->phase == TR_PH_PREEMPTED ? TSL_PREEMPTED : TSL_SLEEP] =
			(double)(w->end - (s->t_last > w->start ? s->t_last : w->start));
	else if (!s->t_last && s->phase == TR_PH_UNKNOWN && !s->vol_cs && !s->invol_cs && !s->wakeups)
		miss[TSL_USER] = (double)(w->end - w->start);
	if (i < TRACE_SL_SIDES)
		spread(row[i], w, s->t_last, miss);
	if (i > 0)
		spread(row[TRACE_SL_SIDES], w, s->t_last, miss);
}

/* The tracer's slices of the longest window (wall; in order up to
 * TR_SL_BINS), so many neighbours joined into each of at most
 * TRACE_SL_BINS; running time split into user and kernel in the row's own
 * proportion (usr of run) without syscall probes. */
static void join_slices(fine_row *row, const double *usr, const double *run, uint64_t wall,
			bool syscalls, struct trace_slices *sl)
{
	uint64_t fine = (wall + (1ull << TR_SL_SHIFT) - 1) >> TR_SL_SHIFT, join;

	fine = fine < TR_SL_BINS ? fine : TR_SL_BINS;
	join = (fine + TRACE_SL_BINS - 1) / TRACE_SL_BINS;
	memset(sl, 0, sizeof(*sl));
	for (unsigned k = 0; k <= TRACE_SL_SIDES && join; k++)
		for (uint64_t b = 0; b < fine; b++) {
			double *v = row[k][b], u = run[k] > 0 ? usr[k] / run[k] : 1, rn;

			/* without syscall probes, running time is split as the
			 * side's whole window was (getrusage's proportion) */
			if (!syscalls) {
				rn = v[TSL_USER] + v[TSL_KERNEL];
				v[TSL_USER] = rn * u;
				v[TSL_KERNEL] = rn - v[TSL_USER];
			}
			for (unsigned p = 0; p < TSL_NPARTS; p++)
				sl->bin[k][b / join][p] += (float)v[p];
		}
	sl->slice_ns = (double)(join << TR_SL_SHIFT);
	sl->slices = join ? (unsigned)((fine + join - 1) / join) : 0;
}

void trace_slices_collect(const struct tr_globals *g, unsigned nsides, bool syscalls,
			  struct trace_result *r)
{
	static const unsigned slot[TSL_NPARTS] = {
		[TSL_USER] = TR_USER, [TSL_KERNEL] = TR_SYS, [TSL_WOKEN] = TR_WOKEN,
		[TSL_PREEMPTED] = TR_PREEMPTED, [TSL_SLEEP] = TR_SLEEP,
		[TSL_IDLE] = TR_NSLOTS + TR_WK_IDLE, [TSL_CPU_WAIT] = TR_NSLOTS + TR_WK_OTHER,
		[TSL_TIMER] = TR_SL_TIMER,
	};
	fine_row *row = calloc(TRACE_SL_SIDES + 1, sizeof(*row));
	double usr[TRACE_SL_SIDES + 1] = { 0 }, run[TRACE_SL_SIDES + 1] = { 0 };
	uint64_t wall = 0;

	if (!row)
		return;
	/* each bin's parts of slices, and the whole slices of the runs that
	 * cover it (their +1 and -1 summed from the first bin on) */
	for (unsigned k = 0; k <= TRACE_SL_SIDES; k++)
		for (unsigned p = 0; p < TSL_NPARTS; p++) {
			int64_t runs = 0;

			for (unsigned b = 0; b < TR_SL_BINS; b++) {
				runs += (int64_t)g->sl_full[k][b][slot[p]];
				row[k][b][p] = (double)g->sl_bin[k][b][slot[p]] +
					       (double)(runs > 0 ? runs : 0) * (double)(1ull << TR_SL_SHIFT);
			}
		}
	for (unsigned i = 0; i < nsides && i < TR_MAX_SIDES; i++) {
		const struct tr_win *w = &g->wins[i];
		const struct trace_side *ts = &r->sides[i];

		if (!w->start || w->end <= w->start)
			continue;
		wall = w->end - w->start > wall ? w->end - w->start : wall;
		open_end(row, g, i);
		for (unsigned k = 0; k <= TRACE_SL_SIDES; k++)
			if (k == i || (k == TRACE_SL_SIDES && i > 0)) {
				usr[k] += (double)ts->user_ns;
				run[k] += (double)(ts->user_ns + ts->sys_ns);
			}
	}
	join_slices(row, usr, run, wall, syscalls, &r->slices);
	free(row);
	r->has_slices = r->slices.slices > 0;
}
