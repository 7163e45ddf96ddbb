// SPDX-License-Identifier: MIT
/* Seed 000's question (suite_question.h): the pipe's context switches per message
 * under SCHED_FIFO against normal scheduling in each placement, and the
 * policy's effect on the pipe's and the queue's rates. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suite_question.h"
#include "ipclab/stats.h"
#include "ipclab/transport.h"

/* ---- seed 000 ---------------------------------------------------------------- */

/* Context switches per message: the trace's where traced, else the
 * system's count over the messages. */
static double cs_per_msg(const struct result *r)
{
	if (!sq_ran(r))
		return NAN;
	if (r->trace.on && r->trace.per_msg.ctx_switches > 0)
		return r->trace.per_msg.ctx_switches;
	return r->msgs_per_s > 0 ? r->sys_ctx_switches_per_s / r->msgs_per_s : NAN;
}

/* The pipe's capacity as the cell read it back (pipe_size_bytes), 0
 * when not known. */
static double pipe_bytes(const struct result *r)
{
	const char *v = r ? tp_setting_get(&r->settings, "pipe_size_bytes") : NULL;

	return v ? strtod(v, NULL) : 0;
}

/* On one CPU under SCHED_FIFO, the writer and reader at one priority do
 * not preempt each other: the writer fills the pipe, blocks, the reader
 * empties it - one switch each way per pipe-full, 2 x size / capacity
 * per message. Said when the measured figure is within 25 % of that. */
static void fifo_batching(char *buf, size_t len, const struct result *pf)
{
	double cap = pipe_bytes(pf), cf = cs_per_msg(pf), want;

	if (!(cap > 0) || !sq_ran(pf) || !pf->cell.size || isnan(cf))
		return;
	want = 2.0 * (double)pf->cell.size / cap;
	if (fabs(cf / want - 1) <= 0.25)
		snprintf(buf, len,
			 " On one CPU under SCHED_FIFO it switched %.3g times a message: one switch each way per pipe-full (2 x %llu B / %.0f B = %.3g); tasks of one FIFO priority do not preempt each other, so the writer fills the pipe first.",
			 cf, (unsigned long long)pf->cell.size, cap, want);
}

static const char *const place_000[SQ_000_PLACES] = { "unpinned", "one CPU", "two CPUs" };

void sq_000(struct report_why *w, const struct result *const po[SQ_000_PLACES],
	    const struct result *const pf[SQ_000_PLACES], const struct result *qo,
	    const struct result *qf, const char *fifo_why)
{
	struct why_test *tp = sq_add_test(w), *tq = sq_add_test(w), *cs[SQ_000_PLACES] = { NULL }, *head = NULL;
	char where[96] = "", notwhere[96] = "", figs[160] = "", batch[320] = "", hl[360] = "";
	unsigned measured = 0, yes = 0;

	if (!tp || !tq)
		return;
	snprintf(w->question, sizeof(w->question),
		 "Does SCHED_FIFO make a pipe switch context on every 4 KiB message (almost 100x the switches), and does it speed pipes up and slow POSIX message queues down?");
	snprintf(tp->of, sizeof(tp->of), "msgs/s of pipe, SCHED_FIFO over normal, unpinned");
	sq_test(tp, "policy", po[0], pf[0], "msgs_per_s", true);
	snprintf(tq->of, sizeof(tq->of), "msgs/s of posix-mq, SCHED_FIFO over normal, unpinned");
	sq_test(tq, "policy", qo, qf, "msgs_per_s", false);
	/* the thread's claim, its switches per message, with an interval over
	 * the repetitions: the system's count, as vmstat gave the thread; the
	 * headline the first that decides of one CPU (where a woken FIFO
	 * reader could preempt its writer), unpinned, two CPUs */
	for (unsigned k = 0; k < SQ_000_PLACES; k++) {
		cs[k] = sq_add_test(w);
		if (!cs[k])
			break;
		snprintf(cs[k]->of, sizeof(cs[k]->of),
			 "context switches per message (system-wide) of pipe, SCHED_FIFO over normal, %s", place_000[k]);
		sq_test_cs(cs[k], "policy", po[k], pf[k]);
	}
	for (unsigned i = 0; i < SQ_000_PLACES && !head; i++) {
		static const unsigned order[SQ_000_PLACES] = { 1, 0, 2 };

		if (cs[order[i]] && sq_decided(cs[order[i]]->verdict))
			head = cs[order[i]];
	}
	sq_compared(w, head ? head : tp);
	/* the thread's effect, placement by placement: a woken SCHED_FIFO
	 * reader preempts its writer only where both share a CPU */
	for (unsigned k = 0; k < SQ_000_PLACES && w->nhyp < WHY_MAX_HYP; k++) {
		double co = cs_per_msg(po[k]), cf = cs_per_msg(pf[k]);
		struct why_hyp *h = &w->hyp[w->nhyp++];
		size_t n;

		snprintf(h->claim, sizeof(h->claim), "SCHED_FIFO makes the pipe switch context per message");
		snprintf(h->conditions, sizeof(h->conditions), "pipe, 4 KiB stream, %s", place_000[k]);
		if (isnan(co) || isnan(cf)) {
			snprintf(h->evidence, sizeof(h->evidence), "%s",
				 fifo_why ? fifo_why : "a pipe cell is missing or did not run");
			continue;
		}
		measured++;
		h->reproduced = cf >= SQ_CS_PER_MSG && cf >= 2 * co;
		yes += h->reproduced;
		snprintf(h->evidence, sizeof(h->evidence),
			 "%.3g context switches per message under SCHED_FIFO against %.3g under normal (%.3gx; the thread: about 100x)",
			 cf, co, co > 0 ? cf / co : NAN);
		n = strlen(h->reproduced ? where : notwhere);
		snprintf((h->reproduced ? where : notwhere) + n, sizeof(where) - n, "%s%s",
			 n ? ", " : "", place_000[k]);
		n = strlen(figs);
		snprintf(figs + n, sizeof(figs) - n, "%s%s %.2g against %.2g", n ? "; " : "", place_000[k], cf, co);
	}
	sq_hyp(w, "SCHED_FIFO makes pipes a bit faster", "pipe, 4 KiB stream, unpinned", tp, NULL);
	sq_hyp(w, "SCHED_FIFO makes POSIX message queues dramatically slower", "posix-mq, 4 KiB stream, unpinned",
	       tq, NULL);
	if (!measured) {
		snprintf(w->answer, sizeof(w->answer), "SCHED_FIFO's cells did not run here (%s): nothing to compare.",
			 fifo_why ? fifo_why : "a pipe cell is missing or failed");
		w->verdict = SQ_NOT_HERE;
		return;
	}
	w->verdict = yes ? SQ_CONFIRMED : SQ_REFUTED;
	fifo_batching(batch, sizeof(batch), pf[1]);
	if (head) {
		char r[96];

		sq_ratio_text(r, sizeof(r), head);
		snprintf(hl, sizeof(hl), " Over the repetitions, %s: %s, %s.", head->of, r, head->verdict);
	}
	if (yes && notwhere[0])
		snprintf(w->answer, sizeof(w->answer),
			 "Under SCHED_FIFO the pipe switched context on about every message in these placements: %s; not in: %s (switches per message, FIFO against normal: %s): a woken FIFO reader preempts its writer at each write only on the writer's CPU. Keep normal scheduling for bulk streams there, or put the ends on two CPUs. The rates: pipe %.3gx (%s), queue %.3gx (%s), unpinned.%s",
			 where, notwhere, figs, tp->ratio, tp->verdict, tq->ratio, tq->verdict, hl);
	else if (yes)
		snprintf(w->answer, sizeof(w->answer),
			 "Under SCHED_FIFO the pipe switched context on about every message in every placement measured (%s): keep normal scheduling for bulk streams, or batch the writes. The rates: pipe %.3gx (%s), queue %.3gx (%s), unpinned.%s",
			 figs, tp->ratio, tp->verdict, tq->ratio, tq->verdict, hl);
	else
		snprintf(w->answer, sizeof(w->answer),
			 "SCHED_FIFO did not make the pipe switch per message in any placement measured here (%s); it changed the pipe's rate %.3gx (%s) and the queue's %.3gx (%s), unpinned.%s%s",
			 figs, tp->ratio, tp->verdict, tq->ratio, tq->verdict, batch, hl);
}
