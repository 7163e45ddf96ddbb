// SPDX-License-Identifier: MIT
/* Seed 004's question (suite_question.h): processes against threads over a pipe in
 * each placement, and one CPU against unpinned and two CPUs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suite_question.h"
#include "ipclab/stats.h"
#include "ipclab/transport.h"

/* ---- seed 004 ---------------------------------------------------------------- */

enum { UNPINNED, ONE_CPU, TWO_CPUS };	/* sq_004's placements, in order */
static const char *const place_004[SQ_004_PLACES] = { "unpinned", "one CPU", "two CPUs" };
static const char *const where_004[SQ_004_PLACES] = { "unpinned", "on one CPU", "on two CPUs" };

/* The spread of a cell's exchange rate over its repetitions (NAN
 * without them). */
static double rate_spread(const struct result *r)
{
	const struct repeat_stat *st = sq_ran(r) ? result_repeat_stat(r, "msgs_per_s") : NULL;

	return st && r->repeat_n >= 2 ? st->spread_pct : NAN;
}

/* The widest spread of the pinned cells, NAN when none has one. */
static double pinned_spread(const struct result *const procs[SQ_004_PLACES],
			    const struct result *const threads[SQ_004_PLACES])
{
	double m = NAN;

	for (unsigned k = 1; k < SQ_004_PLACES; k++) {
		double a = rate_spread(procs[k]), b = rate_spread(threads[k]);

		if (!isnan(a) && !(a <= m))
			m = a;
		if (!isnan(b) && !(b <= m))
			m = b;
	}
	return m;
}

void sq_004(struct report_why *w, const struct result *const procs[SQ_004_PLACES],
	    const struct result *const threads[SQ_004_PLACES])
{
	struct why_test *ep[SQ_004_PLACES], *cpu, *cput, *two;
	const struct why_test *head = NULL;
	const char *where_yes[SQ_004_PLACES], *where_no[SQ_004_PLACES];
	unsigned nyes = 0, nno = 0, nsame = 0, nnoisy = 0;
	char e[160] = "";
	size_t n = 0;

	snprintf(w->question, sizeof(w->question),
		 "Is it cheaper to synchronise two processes with a pipe than two threads of one process, and does the exchange run faster with both on one CPU?");
	/* the thread's claim, in each of its placements: processes exchange
	 * more often than threads unpinned, "as before" on two CPUs, and
	 * stayed ahead on one */
	for (unsigned k = 0; k < SQ_004_PLACES; k++) {
		ep[k] = sq_add_test(w);
		if (!ep[k])
			return;
		snprintf(ep[k]->of, sizeof(ep[k]->of), "exchanges/s, processes over threads, %s", place_004[k]);
		sq_test(ep[k], "endpoints", threads[k], procs[k], "msgs_per_s", true);
	}
	cpu = sq_add_test(w);
	cput = sq_add_test(w);
	two = sq_add_test(w);
	if (!cpu || !cput || !two)
		return;
	snprintf(cpu->of, sizeof(cpu->of), "exchanges/s of processes, one CPU over unpinned");
	sq_test(cpu, "placement", procs[UNPINNED], procs[ONE_CPU], "msgs_per_s", true);
	snprintf(cput->of, sizeof(cput->of), "exchanges/s of threads, one CPU over unpinned");
	sq_test(cput, "placement", threads[UNPINNED], threads[ONE_CPU], "msgs_per_s", true);
	snprintf(two->of, sizeof(two->of), "exchanges/s of processes, one CPU over two CPUs");
	sq_test(two, "placement", procs[TWO_CPUS], procs[ONE_CPU], "msgs_per_s", true);
	for (unsigned k = 0; k < SQ_004_PLACES; k++) {
		char cond[64];

		snprintf(cond, sizeof(cond), "pipe, 16 B, %s", place_004[k]);
		sq_hyp(w, "processes synchronised by a pipe exchange more often than threads", cond, ep[k], NULL);
		if (ep[k]->verdict == SQ_CONFIRMED)
			where_yes[nyes++] = where_004[k];
		else if (ep[k]->verdict == SQ_REFUTED || ep[k]->verdict == SQ_SAME)
			where_no[nno++] = where_004[k];
		nsame += ep[k]->verdict == SQ_SAME;
		nnoisy += ep[k]->verdict == SQ_NOISY;
	}
	/* the headline: the thread's first claim (unpinned), else its "as
	 * before" (two CPUs), else one CPU: the first of them that decided,
	 * unpinned when none did */
	for (unsigned i = 0; i < SQ_004_PLACES && !head; i++) {
		static const unsigned order[SQ_004_PLACES] = { UNPINNED, TWO_CPUS, ONE_CPU };

		if (sq_decided(ep[order[i]]->verdict))
			head = ep[order[i]];
	}
	if (sq_ran(threads[ONE_CPU]) && sq_ran(procs[ONE_CPU]) && threads[ONE_CPU]->msgs_per_s > 0)
		snprintf(e, sizeof(e), "on one CPU processes/threads %.3gx",
			 procs[ONE_CPU]->msgs_per_s / threads[ONE_CPU]->msgs_per_s);
	sq_hyp(w, "both ends on one CPU make the exchange faster", "processes, pipe, one CPU vs unpinned", cpu,
	       e[0] ? e : NULL);
	sq_hyp(w, "one CPU beats two CPUs (the wakeup crosses CPUs)", "processes, pipe, one CPU vs two CPUs", two, NULL);
	sq_compared(w, head ? head : ep[UNPINNED]);
	if (nyes + nno + nnoisy == 0) {
		snprintf(w->answer, sizeof(w->answer), "The pipe's process and thread cells did not both run here: nothing to compare.");
		w->verdict = SQ_NOT_HERE;
		return;
	}
	/* processes/threads in each placement, with its verdict */
	n += (size_t)snprintf(w->answer, sizeof(w->answer), "Processes over threads on a pipe:");
	for (unsigned k = 0; k < SQ_004_PLACES && n < sizeof(w->answer); k++) {
		if (isnan(ep[k]->ratio))
			continue;
		n += (size_t)snprintf(w->answer + n, sizeof(w->answer) - n, "%s %s %.3gx", k ? ";" : "",
				      place_004[k], ep[k]->ratio);
		if (!isnan(ep[k]->lo) && n < sizeof(w->answer))
			n += (size_t)snprintf(w->answer + n, sizeof(w->answer) - n, " (%.3g-%.3gx)", ep[k]->lo,
					      ep[k]->hi);
		if (n < sizeof(w->answer))
			n += (size_t)snprintf(w->answer + n, sizeof(w->answer) - n, " %s", ep[k]->verdict);
	}
	if (n < sizeof(w->answer)) {
		if (nyes)
			n += (size_t)snprintf(w->answer + n, sizeof(w->answer) - n,
					      ". Processes exchange more often than threads %s%s%s, as the thread found%s",
					      where_yes[0], nyes > 1 ? " and " : "", nyes > 1 ? where_yes[1] : "",
					      nno ? ", but not everywhere" : "");
		else if (nno && nsame == nno)
			n += (size_t)snprintf(w->answer + n, sizeof(w->answer) - n,
					      ". Threads and processes exchange at the same rate %s%s%s (within +-%.0f %%): choose either for speed",
					      where_no[0], nno > 1 ? " and " : "", nno > 1 ? where_no[1] : "",
					      100 * STATS_EQUIV_MARGIN);
		else if (nno)
			n += (size_t)snprintf(w->answer + n, sizeof(w->answer) - n,
					      ". Processes are not ahead of threads %s%s%s: the thread's finding does not hold here",
					      where_no[0], nno > 1 ? " or " : "", nno > 1 ? where_no[1] : "");
		else
			n += (size_t)snprintf(w->answer + n, sizeof(w->answer) - n,
					      ". The repetitions spread too widely to tell threads from processes");
	}
	/* unpinned, the scheduler draws the placement for each run: on few
	 * CPUs some repetitions share a CPU and others do not */
	if (n < sizeof(w->answer) && ep[UNPINNED]->verdict == SQ_NOISY) {
		double su = fmax(rate_spread(procs[UNPINNED]), rate_spread(threads[UNPINNED]));
		double sp = pinned_spread(procs, threads);

		if (su > 0 && sp >= 0 && su > 2 * sp)
			n += (size_t)snprintf(w->answer + n, sizeof(w->answer) - n,
					      "; unpinned the repetitions spread %.0f %% against at most %.0f %% pinned: the scheduler put the two ends on one CPU in some runs and on two in others, so compare them pinned",
					      su, sp);
	}
	if (n < sizeof(w->answer))
		n += (size_t)snprintf(w->answer + n, sizeof(w->answer) - n, ".");
	if (n < sizeof(w->answer) && cpu->verdict == SQ_CONFIRMED)
		snprintf(w->answer + n, sizeof(w->answer) - n,
			 " Pinning both ends to one CPU is the knob that matters: %.3gx the unpinned rate%s.", cpu->ratio,
			 two->verdict == SQ_CONFIRMED ? ", and faster than two CPUs" : "");
	else if (n < sizeof(w->answer) && two->verdict == SQ_CONFIRMED)
		snprintf(w->answer + n, sizeof(w->answer) - n,
			 " Both ends on one CPU: %.3gx the rate on two CPUs (the wakeup no longer crosses CPUs); against unpinned %.3gx, %s.",
			 two->ratio, cpu->ratio, cpu->verdict);
	else if (n < sizeof(w->answer) && !isnan(cpu->ratio))
		snprintf(w->answer + n, sizeof(w->answer) - n, " One CPU against unpinned: %.3gx, %s.", cpu->ratio,
			 cpu->verdict);
	w->verdict = nyes ? SQ_CONFIRMED : nno && nsame == nno ? SQ_SAME : nno ? SQ_REFUTED : SQ_NOISY;
}
