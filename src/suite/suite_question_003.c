// SPDX-License-Identifier: MIT
/* Seed 003's question (suite_question.h): a paced round trip against a
 * flood, 4 clients against 1, and where the paced round trip's time went
 * as its trace split it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "suite_question.h"
#include "ipclab/trace.h"

/* ---- seed 003 ---------------------------------------------------------------- */

/* The paced round trip's time as its trace split it, in the groups the
 * seed's question turns on: the wake path (woken to running, onto an idle
 * CPU, waiting for a CPU), polling, work (user and kernel), the
 * hypervisor, preemption; the largest into *largest (a name), its share
 * into *pct. False when the cell has no split. */
enum { G_WAKE, G_POLL, G_WORK, G_HOST, G_PREEMPT, G_OTHER, G_N };
static const char *const group_name[G_N] = { "the wake path", "polling", "work", "the hypervisor",
					      "preemption", "the rest" };
static const char *const group_knob[G_N] = {
	"keep the receiver's CPU awake (--keep-awake, --pm-qos 0) or let it poll where latency matters",
	"its receiver spins before it sleeps: waiting, not work; a shorter spin saves CPU, not time",
	"the work per message itself: a cheaper transport or less copying",
	"the host took it: another host or a dedicated vCPU, not a knob of ipclab's",
	"a real-time class (--sched fifo:N) or a CPU no other task uses",
	"a trace with --trace=syscalls places more of it",
};

/* The group of each share's kind, as cold_groups sums them. */
static int group_of(enum trace_cause_kind k)
{
	return k == TC_WAKEUP || k == TC_WAKEUP_IDLE || k == TC_CPU_WAIT ? G_WAKE :
	       k == TC_POLLING ? G_POLL : k == TC_USER || k == TC_KERNEL ? G_WORK :
	       k == TC_STEAL ? G_HOST : k == TC_PREEMPTED ? G_PREEMPT : G_OTHER;
}

static bool cold_groups(const struct result *r, double g[G_N], double *total)
{
	const struct trace_cause *c = sq_ran(r) ? trace_cause(&r->trace) : NULL;

	memset(g, 0, G_N * sizeof(*g));
	if (!c || !c->nshares || !(c->total_ns > 0))
		return false;
	for (unsigned i = 0; i < c->nshares && i < TC_NKINDS; i++) {
		const struct trace_share *sh = &c->shares[i];

		g[group_of(sh->kind)] += sh->ns;
	}
	*total = c->total_ns;
	return true;
}

/* The groups' 95 % intervals (% of the figure) over the paced cell's
 * exchanges; false where it has none. */
static bool group_ci(const struct result *r, double lo[G_N], double hi[G_N])
{
	int map[TC_NKINDS];

	for (unsigned k = 0; k < TC_NKINDS; k++)
		map[k] = group_of((enum trace_cause_kind)k);
	return !trace_cause_boot(r, map, G_N, lo, hi);
}

/* "no single leading cause: work 48 % (35-60) and the wake path 40 %
 * (28-52) overlap over N exchanges; ...": big and the groups whose
 * intervals reach its own. */
static void no_leader(char *buf, size_t len, const double g[G_N], double total, unsigned big,
		      const double lo[G_N], const double hi[G_N], uint64_t n)
{
	unsigned pick[3] = { big }, np = 1;
	int w = snprintf(buf, len, " No single leading cause:");

	for (unsigned k = 0; k < G_N && np < 3; k++)
		if (k != big && g[k] > 0 && hi[k] >= lo[big])
			pick[np++] = k;
	for (unsigned j = 0; j < np && w >= 0 && (size_t)w < len; j++)
		w += snprintf(buf + w, len - (size_t)w, "%s %s %.0f %% (%.0f-%.0f)",
			      !j ? "" : j + 1 < np ? "," : " and", group_name[pick[j]],
			      100 * g[pick[j]] / total, lo[pick[j]], hi[pick[j]]);
	if (w >= 0 && (size_t)w < len)
		snprintf(buf + w, len - (size_t)w,
			 " of the paced round trip overlap over %llu exchanges; run longer (-d) for a decision.",
			 (unsigned long long)n);
}

/* " Its kernel time went most to ppoll in the server (24.4 us of CPU a call,
 * asleep in each) and write in the client (16.8 us of CPU a call).": the two
 * syscalls of both sides that took the most CPU, with syscall probes
 * only (getrusage's tick-sampled split names no call). Empty without. */
static void kernel_calls(char *buf, size_t len, const struct result *r)
{
	const struct trace_syscall *top[2] = { NULL, NULL };
	const struct trace_side *who[2] = { NULL, NULL };
	int w;

	buf[0] = '\0';
	if (!sq_ran(r) || !r->trace.syscalls_traced)
		return;
	for (unsigned i = 0; i < r->trace.nsides; i++) {
		const struct trace_side *sd = &r->trace.sides[i];

		for (unsigned j = 0; j < sd->ntop && j < TRACE_TOP_SYSCALLS; j++) {
			const struct trace_syscall *c = &sd->top[j];

			if (!c->count || !c->cpu_ns)
				continue;
			if (!top[0] || c->cpu_ns > top[0]->cpu_ns) {
				top[1] = top[0], who[1] = who[0];
				top[0] = c, who[0] = sd;
			} else if (!top[1] || c->cpu_ns > top[1]->cpu_ns) {
				top[1] = c, who[1] = sd;
			}
		}
	}
	w = snprintf(buf, len, " Its kernel time went most to");
	for (unsigned k = 0; k < 2 && top[k] && w >= 0 && (size_t)w < len; k++)
		w += snprintf(buf + w, len - (size_t)w, "%s %s in the %s (%.3g us of CPU a call%s)",
			      k ? " and" : "", top[k]->name, who[k]->server ? "server" : "client",
			      (double)top[k]->cpu_ns / (double)top[k]->count / 1e3,
			      top[k]->wall_ns >= 10 * top[k]->cpu_ns ? ", asleep in each" : "");
	if (!top[0])
		buf[0] = '\0';
	else if (w >= 0 && (size_t)w < len)
		snprintf(buf + w, len - (size_t)w, ".");
}

static unsigned largest_group(const double g[G_N])
{
	unsigned best = 0;

	for (unsigned k = 1; k < G_N; k++)
		if (g[k] > g[best])
			best = k;
	return best;
}

void sq_003(struct report_why *w, const char *tp, const struct result *f1, const struct result *p1,
	    const struct result *p4, double rate)
{
	struct why_test *tr = sq_add_test(w), *tc = sq_add_test(w);
	char cond[96], e[160] = "", why[640] = "";
	double g[G_N], total = 0;
	bool split;

	if (!tr || !tc)
		return;
	snprintf(w->question, sizeof(w->question),
		 "Is a round trip at 1 message per second much slower than under a flood, and do more clients make it faster?");
	snprintf(tr->of, sizeof(tr->of), "p50 round trip of %s, paced at %g/s over flood, 1 client", tp, rate);
	sq_test(tr, "rate", f1, p1, "lat_p50_ns", true);
	snprintf(tc->of, sizeof(tc->of), "p50 round trip of %s paced, 4 clients over 1", tp);
	sq_test(tc, "clients", p1, p4, "lat_p50_ns", false);
	sq_compared(w, tr);
	if (sq_ran(p1) && p1->lat_intended_p50_ns > 0)
		snprintf(e, sizeof(e), "from the intended send time %.3gx the flood's",
			 sq_ran(f1) && f1->lat_p50_ns ? (double)p1->lat_intended_p50_ns / (double)f1->lat_p50_ns : NAN);
	snprintf(cond, sizeof(cond), "%s, 64 B, 1 client, %g msg/s vs flood", tp, rate);
	sq_hyp(w, "a round trip at a low rate is slower than under a flood (the cold path)", cond, tr,
	       e[0] ? e : NULL);
	snprintf(cond, sizeof(cond), "%s, 64 B, paced, 4 clients vs 1", tp);
	sq_hyp(w, "more clients make the round trip faster (70-120 us with 1, 40-50 us with 4)", cond, tc, NULL);
	/* where the paced round trip's time went: the thread's "why", from
	 * the trace, with the sender's timer lateness beside it (outside) */
	split = cold_groups(p1, g, &total);
	if (split && w->nhyp < WHY_MAX_HYP) {
		struct why_hyp *h = &w->hyp[w->nhyp++];
		unsigned big = largest_group(g);
		double lo[G_N], hi[G_N];
		/* the largest is the leading cause only where its interval lies
		 * above every other group's */
		bool ci = group_ci(p1, lo, hi), stable = !ci || trace_ci_above(lo[big], hi, G_N, big);

		snprintf(h->claim, sizeof(h->claim), "the paced round trip's extra time is the wake path, not work");
		snprintf(h->conditions, sizeof(h->conditions), "%s, 64 B, 1 client, %g msg/s, traced", tp, rate);
		h->reproduced = big == G_WAKE && stable;
		snprintf(h->evidence, sizeof(h->evidence),
			 "of %.3g us a round trip: the wake path %.0f %%, polling %.0f %%, work %.0f %%, the hypervisor %.0f %%, preemption %.0f %%, the rest %.0f %%; the sender's timer woke %.3g us late at the median, outside the round trip",
			 total / 1e3, 100 * g[G_WAKE] / total, 100 * g[G_POLL] / total, 100 * g[G_WORK] / total,
			 100 * g[G_HOST] / total, 100 * g[G_PREEMPT] / total, 100 * g[G_OTHER] / total,
			 (double)p1->send_late_p50_ns / 1e3);
		double gf[G_N], ftotal = 0;

		/* running 10x or more what a flood exchange runs is not the
		 * message's own work: the advice for work would be wrong */
		if (!stable)
			no_leader(why, sizeof(why), g, total, big, lo, hi, p1->trace.cpath.exchanges);
		else if (big == G_WORK && cold_groups(f1, gf, &ftotal) && gf[G_WORK] > 0 &&
			 g[G_WORK] >= 10 * gf[G_WORK])
			snprintf(why, sizeof(why),
				 " Its time went most to running (%.0f %%, %.3g us), but a flood exchange ran %.3g us: not the message's own work, but running slowed after a sleep (cold caches and TLB) or time the guest did not see taken; --profile would say where.",
				 100 * g[big] / total, g[big] / 1e3, gf[G_WORK] / 1e3);
		else
			snprintf(why, sizeof(why), " Its time went most to %s (%.0f %% of the paced round trip, traced): %s.",
				 group_name[big], 100 * g[big] / total, group_knob[big]);
		/* running the largest: which calls its kernel time went to */
		if (big == G_WORK) {
			size_t n = strlen(why);

			kernel_calls(why + n, sizeof(why) - n, p1);
		}
	} else if (tr->verdict == SQ_CONFIRMED) {
		snprintf(why, sizeof(why), " Where its time goes needs the trace: --trace.");
	}
	if (tr->verdict == SQ_NOT_HERE) {
		snprintf(w->answer, sizeof(w->answer), "The %s paced and flood cells did not both run here: nothing to compare.", tp);
		w->verdict = SQ_NOT_HERE;
		return;
	}
	w->verdict = tr->verdict;
	char ir[64] = "", ic[64] = "";

	if (!isnan(tr->lo))
		snprintf(ir, sizeof(ir), ", 95 %% %.3g-%.3gx", tr->lo, tr->hi);
	if (!isnan(tc->lo))
		snprintf(ic, sizeof(ic), ", 95 %% %.3g-%.3gx", tc->lo, tc->hi);
	snprintf(w->answer, sizeof(w->answer),
		 "At %g msg/s a %s round trip took %.3gx the flood's (%s%s); 4 clients against 1: %.3gx (%s%s).%s%s",
		 rate, tp, tr->ratio, tr->verdict, ir, tc->ratio, tc->verdict, ic,
		 isnan(tr->lo) ? " One run each: no interval." :
		 tr->ci_basis && !strcmp(tr->ci_basis, "exchanges") ?
		 " One run each: the intervals are over each run's exchanges, not between runs." : "", why);
}
