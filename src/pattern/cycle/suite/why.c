// SPDX-License-Identifier: MIT
/* Seed 000's cycle section's Why line (suite.h): why the worst cycle
 * cell missed more deadlines, or had the longer p99 completion, than the
 * best. From the result records alone: the causes of its xruns (they add
 * up to its xruns) and the stage that made most of them, by its wait or
 * its work; without more xruns, the part of the cycle whose p99 grew most;
 * with --trace, its cycle's cause split, who took the CPUs and what
 * --explain measured; the noise when the repetitions spread wider than
 * the difference. One sentence. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../../suite/suite_why.h"
#include "../cycle.h"
#include "suite.h"
#include "ipclab/stats.h"
#include "ipclab/util.h"

static const struct cycle_result *cyc(const struct result *r)
{
	static const struct cycle_result none;
	const struct cycle_result *cr = cycle_result_of(r);

	return cr && cr->on ? cr : &none;
}

/* A record's name made safe to print: at most 31 bytes of printable
 * ASCII, '?' for the rest, terminated whether the source was or not. */
static void clean(char *dst, size_t len, const char *src, size_t n)
{
	size_t k = 0;

	for (; k < n && k + 1 < len && k < 31 && src[k]; k++)
		dst[k] = src[k] >= 0x20 && src[k] < 0x7f ? src[k] : '?';
	dst[k] = '\0';
}

/* "worst cell (posix-mq, other)" */
static void cell_name(char *dst, size_t len, const char *what, const struct result *r)
{
	char tp[32], sc[32];

	clean(tp, sizeof(tp), r->transport, sizeof(r->transport));
	clean(sc, sizeof(sc), r->cell.sched.text, sizeof(r->cell.sched.text));
	snprintf(dst, len, "%s cell (%s, %s)", what, tp, sc);
}

/* What each cause means, said after the largest. */
static const char *cause_says(enum cycle_xrun_cause k)
{
	static const char *const says[XC_N] = {
		[XC_LATE_START] = "its deadline passed before it could start",
		[XC_BEHIND] = "it started behind, the cycle before having run long",
		[XC_TIMER_LATE] = "the driver's timer woke late",
		[XC_STAGE_WAIT] = "a stage got the buffer late",
		[XC_STAGE_BUSY] = "a stage's work ran long",
		[XC_DRIVER_WAIT] = "the driver got the graph's end back late",
		[XC_PREEMPTED] = "other tasks took the graph's CPUs for longer than it overran",
		[XC_UNKNOWN] = "a stage's figures for it were missing",
	};

	return (unsigned)k < XC_N ? says[k] : "?";
}

/* "its wait p99 40.0us against 12.0us in the best" */
static void p99s(char *buf, size_t len, size_t *n, const char *what, uint64_t a, uint64_t b)
{
	char t[2][32];

	why_add(buf, len, n, "%s p99 %s against %s in the best", what, fmt_ns(t[0], sizeof(t[0]), (double)a),
		fmt_ns(t[1], sizeof(t[1]), (double)b));
}

static unsigned nstages(const struct cycle_result *c)
{
	return c->nstages < CYCLE_MAX_STAGES ? c->nstages : CYCLE_MAX_STAGES;
}

/* The worst cell's xruns by cause, largest first, then the stage that
 * made most of them and by what, its figure against the best's. */
static void xruns(char *buf, size_t len, size_t *n, const struct cycle_result *w,
		  const struct cycle_result *b)
{
	bool done[XC_N] = { false };
	unsigned first = XC_N, st = CYCLE_MAX_STAGES;

	for (unsigned m = 0; m < XC_N; m++) {
		unsigned k = XC_N;

		for (unsigned j = 0; j < XC_N; j++)
			if (!done[j] && w->causes[j] && (k == XC_N || w->causes[j] > w->causes[k]))
				k = j;
		if (k == XC_N)
			break;
		done[k] = true;
		why_add(buf, len, n, "%s %s %" PRIu64, first == XC_N ? ", by cause" : ",", cycle_cause_name(k),
			w->causes[k]);
		if (first == XC_N)
			first = k;
	}
	if (first == XC_N) {
		why_add(buf, len, n, ", none of them with a cause counted");
		return;
	}
	why_add(buf, len, n, ": mostly %s (%s)", cycle_cause_name(first), cause_says(first));
	if (w->causes[XC_PREEMPTED] && w->driver_preempted)
		why_add(buf, len, n, ", %" PRIu64 " of the preempted on the driver's own CPU",
			w->driver_preempted < w->causes[XC_PREEMPTED] ? w->driver_preempted : w->causes[XC_PREEMPTED]);
	for (unsigned i = 0; i < nstages(w); i++)
		if (w->stages[i].xruns && (st == CYCLE_MAX_STAGES || w->stages[i].xruns > w->stages[st].xruns))
			st = i;
	if (first == XC_TIMER_LATE)
		p99s(buf, len, n, ", the timer's lateness", w->timer_late_p99_ns, b->timer_late_p99_ns);
	if (first == XC_LATE_START || first == XC_BEHIND) {	/* a long cycle pushes the next ones out */
		char t[2][32];

		why_add(buf, len, n, ", its longest cycle %s against %s in the best",
			fmt_ns(t[0], sizeof(t[0]), (double)w->cycle_max_ns),
			fmt_ns(t[1], sizeof(t[1]), (double)b->cycle_max_ns));
	}
	if (st < CYCLE_MAX_STAGES) {
		const struct cycle_stage *s = &w->stages[st];
		bool busy = s->blame.busy > s->blame.wait;

		why_add(buf, len, n, "; stage %u made %" PRIu64 " of them (its wait %" PRIu64 ", its work %" PRIu64,
			st + 1, s->xruns, s->blame.wait, s->blame.busy);
		if (w->causes_traced)
			why_add(buf, len, n, ", preempted %" PRIu64, s->blame.preempted);
		why_add(buf, len, n, ")");
		p99s(buf, len, n, busy ? ", its work" : ", its wait", busy ? s->busy_p99_ns : s->wait_p99_ns,
		     st < nstages(b) ? (busy ? b->stages[st].busy_p99_ns : b->stages[st].wait_p99_ns) : 0);
		if (s->traced && st < nstages(b) && b->stages[st].traced)
			p99s(buf, len, n, ", woken to running", s->woken_p99_ns, b->stages[st].woken_p99_ns);
	}
	if (!w->causes_traced)
		why_add(buf, len, n, "; whether other tasks took the CPUs is not known without --trace");
}

/* No more xruns than the best: the part of the cycle whose p99 grew most
 * (the timer, a stage's wait or its work). */
static void grew(char *buf, size_t len, size_t *n, const struct cycle_result *w,
		 const struct cycle_result *b)
{
	/* in double: a record's figures may be anything, up to UINT64_MAX */
	double most = (double)w->timer_late_p99_ns - (double)b->timer_late_p99_ns;
	int at = -1;	/* the timer */
	bool busy = false;
	char what[48];

	for (unsigned i = 0; i < nstages(w) && i < nstages(b); i++) {
		double dw = (double)w->stages[i].wait_p99_ns - (double)b->stages[i].wait_p99_ns;
		double db = (double)w->stages[i].busy_p99_ns - (double)b->stages[i].busy_p99_ns;

		if (dw > most || db > most) {
			busy = db > dw;
			most = busy ? db : dw;
			at = (int)i;
		}
	}
	if (!(most > 0)) {
		why_add(buf, len, n, "; no part of its cycle (the timer, a stage's wait or work) has a longer p99");
		return;
	}
	if (at < 0)
		snprintf(what, sizeof(what), "the driver's timer lateness");
	else
		snprintf(what, sizeof(what), "stage %d's %s", at + 1, busy ? "work" : "wait");
	why_add(buf, len, n, "; the part that grew most is %s,", what);
	if (at < 0)
		p99s(buf, len, n, "", w->timer_late_p99_ns, b->timer_late_p99_ns);
	else
		p99s(buf, len, n, "", busy ? w->stages[at].busy_p99_ns : w->stages[at].wait_p99_ns,
		     busy ? b->stages[at].busy_p99_ns : b->stages[at].wait_p99_ns);
}

double why_xruns_p(const struct result *a, const struct result *b)
{
	const struct cycle_result *ca = cyc(a), *cb = cyc(b);

	return stats_rate_test(ca->xruns, (double)ca->cycles, cb->xruns, (double)cb->cycles);
}

size_t why_000_cycle(char *buf, size_t len, const struct result *best, const struct result *worst)
{
	const struct cycle_result *w = cyc(worst), *b = cyc(best);
	char an[80], bn[80], t[2][32];
	bool more, traced, same_rate;
	double xp = NAN;
	size_t n = 0;
	struct why_pair p;

	if (len)
		buf[0] = '\0';
	if (!best || !worst || best == worst || best->status != RES_OK || worst->status != RES_OK ||
	    !w->on || !b->on)
		return 0;
	more = w->xruns > b->xruns;
	/* more xruns, but not more by an exact test of their rates: no cell is
	 * the worst by them (3 against 0 in 1500 cycles is p = 0.25) */
	if (more)
		xp = why_xruns_p(worst, best);
	same_rate = more && !(xp < STATS_ALPHA);
	cell_name(an, sizeof(an), same_rate ? "one" : "worst", worst);
	cell_name(bn, sizeof(bn), same_rate ? "other" : "best", best);
	p = (struct why_pair){ worst, best, an, bn, "", false, NULL };
	more = more && !same_rate;
	p.key = more ? "xruns" : "cycle_p99_ns";
	traced = (worst->trace.on && trace_cause(&worst->trace)) || (best->trace.on && trace_cause(&best->trace));
	why_add(buf, len, &n, traced ? "Why (trace): " : "Why: ");
	if (why_noise(buf, len, &n, worst, an, best, bn, p.key)) {
		why_add(buf, len, &n, "; ");
	} else {
		if (more)
			why_add(buf, len, &n, "the %s missed %" PRIu64 " of %" PRIu64 " deadlines against %" PRIu64
				" of %" PRIu64 " in the %s", an, w->xruns, w->cycles, b->xruns, b->cycles, bn);
		else if (same_rate)
			why_add(buf, len, &n, "the %s missed %" PRIu64 " of %" PRIu64 " deadlines against %" PRIu64
				" of %" PRIu64 " in the %s: no difference by an exact test of their rates (p = %.2g), so neither is worse by its xruns",
				an, w->xruns, w->cycles, b->xruns, b->cycles, bn, xp);
		else if (w->xruns)
			why_add(buf, len, &n, "both cells missed %" PRIu64 " deadlines", w->xruns);
		else
			why_add(buf, len, &n, "neither cell missed a deadline");
		if (!more)
			why_add(buf, len, &n, ", but the %s completed later: p99 %s against %s in the %s",
				same_rate ? "first" : an,
				fmt_ns(t[0], sizeof(t[0]), (double)w->cycle_p99_ns),
				fmt_ns(t[1], sizeof(t[1]), (double)b->cycle_p99_ns), bn);
		if (more)
			xruns(buf, len, &n, w, b);
		else
			grew(buf, len, &n, w, b);
		why_add(buf, len, &n, "; ");
		if (traced) {
			why_split(buf, len, &n, &p);
			why_add(buf, len, &n, "; ");
		}
	}
	why_others(buf, len, &n, &p);
	if (!traced)
		why_add(buf, len, &n, "--trace would split the cycle's time by cause and name who took the CPUs");
	return why_end(buf, len, &n);
}
