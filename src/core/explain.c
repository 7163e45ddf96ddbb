// SPDX-License-Identifier: MIT
/* --explain: test the trace's diagnosis. The traced cell's largest
 * scheduling cause (explain_pick) names the one knob that should remove
 * it; the cell is then run again untraced, as it was and with that knob,
 * interleaved (before, after, ... TRACE_EXPLAIN_PAIRS pairs), and the
 * medians say whether the figure moved the way the cause predicts. */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "traced.h"
#include "ipclab/idle.h"
#include "ipclab/placement.h"
#include "ipclab/result.h"
#include "ipclab/stats.h"
#include "ipclab/trace.h"
#include "ipclab/util.h"

#define EXPLAIN_FIFO_PRIO 10	/* SCHED_FIFO above every SCHED_OTHER task, below the kernel's own */
#define EXPLAIN_MIN_PCT 1.0	/* a cause under this share of the windows is none */
#define EXPLAIN_MIN_GAIN 0.05	/* confirmed: the median moved 5 % or more */

const char *explain_cause_name(enum explain_cause c)
{
	switch (c) {
	case EX_OTHERS: return "preempted by other tasks";
	case EX_CROSS_CPU: return "cross-CPU wakeups";
	case EX_IDLE_EXIT: return "idle exits";
	case EX_PEER_CPU: return "sharing a CPU with its peer";
	case EX_TIMER_LATE: return "timer lateness";
	case EX_POLLING: return "polling";
	case EX_STEAL: return "the hypervisor (steal)";
	default: return "none";
	}
}

static double sub0(double a, double b)
{
	return a > b ? a - b : 0;
}

/* From the cause split: its largest share a knob can act on, as a share of
 * the figure; EX_NONE when no share of EXPLAIN_MIN_PCT or more can. */
static bool pick_from_cause(const struct trace_result *tr, struct trace_pick *p, bool own_cpus)
{
	const struct trace_cause *c = trace_cause(tr);

	if (!c)
		return false;
	*p = (struct trace_pick){ .cause = EX_NONE };
	for (unsigned k = 0; k < c->nshares && k < TC_NKINDS; k++) {
		enum explain_cause e = trace_share_cause(&c->shares[k], c, tr, own_cpus);

		if (e != EX_NONE && c->shares[k].pct >= EXPLAIN_MIN_PCT) {
			*p = (struct trace_pick){ .cause = e, .ns = c->shares[k].ns,
						  .pct = c->shares[k].pct, .share = &c->shares[k],
						  .ci = &c->ci[k] };
			break;
		}
	}
	/* stable, as the leading cause is: its interval above that of every
	 * share of another cause a knob acts on */
	for (unsigned k = 0; p->share && c->ci_on && k < c->nshares && k < TC_NKINDS; k++) {
		const struct trace_share *o = &c->shares[k];
		enum explain_cause e = trace_share_cause(o, c, tr, own_cpus);

		if (o != p->share && e != EX_NONE && e != p->cause &&
		    !(p->ci->lo > c->ci[k].hi)) {
			p->rival = o;
			p->rival_ci = &c->ci[k];
			p->exchanges = c->ci_slices ? c->ci_slices : c->ci_exchanges;
			p->slices = c->ci_slices != 0;
			p->cause = EX_NONE;
			break;
		}
	}
	return true;
}

/* The sides' time by cause: others on their CPUs while they waited; the
 * rest of their wakeup latency, cross-CPU (idle exits where most wakeups
 * found the CPU idle) or same-CPU (waiting for the peer that woke them to
 * leave the CPU); and preemption that was not by others (by a peer). */
struct trace_pick explain_pick(const struct trace_result *tr)
{
	return explain_pick_placed(tr, false);
}

struct trace_pick explain_pick_placed(const struct trace_result *tr, bool own_cpus)
{
	double ns[EX_PEER_CPU + 1] = { 0 }, wall = 0, wk = 0, same = 0, cross, idle;
	struct trace_pick p = { .cause = EX_NONE };

	if (pick_from_cause(tr, &p, own_cpus))
		return p;

	for (unsigned i = 0; i < tr->nsides && i < TRACE_MAX_SIDES; i++) {
		const struct trace_side *s = &tr->sides[i];
		double woken = sub0((double)s->runnable_ns, (double)s->taken_woken_ns);

		wall += (double)s->wall_ns;
		ns[EX_OTHERS] += (double)s->taken_ns;
		ns[EX_PEER_CPU] += sub0((double)s->preempted_ns,
					(double)(s->taken_ns - s->taken_woken_ns));
		ns[EX_CROSS_CPU] += woken;
		wk += (double)s->wakeups;
		same += (double)s->wakeups_same_cpu;
	}
	cross = own_cpus ? 1 : wk > 0 ? (wk - same) / wk : 0;
	if (own_cpus) {		/* preempted, with no peer on the CPU: by others */
		ns[EX_OTHERS] += ns[EX_PEER_CPU];
		ns[EX_PEER_CPU] = 0;
	}
	idle = tr->per_msg.wakeups > 0 ? tr->per_msg.idle_exits / tr->per_msg.wakeups : 0;
	ns[EX_PEER_CPU] += ns[EX_CROSS_CPU] * (1 - cross);
	ns[EX_CROSS_CPU] *= cross;
	if (idle >= 0.5) {	/* most wakeups found their CPU idle: its exit is the latency */
		ns[EX_IDLE_EXIT] = ns[EX_CROSS_CPU];
		ns[EX_CROSS_CPU] = 0;
	}
	for (int c = EX_OTHERS; c <= EX_PEER_CPU; c++)
		if (ns[c] > p.ns)
			p = (struct trace_pick){ .cause = (enum explain_cause)c, .ns = ns[c] };
	p.pct = wall > 0 ? 100 * p.ns / wall : 0;
	if (p.pct < EXPLAIN_MIN_PCT)
		p.cause = EX_NONE;
	return p;
}

/* SCHED_FIFO at EXPLAIN_FIFO_PRIO: CAP_SYS_NICE or RLIMIT_RTPRIO. */
static bool rt_allowed(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_RTPRIO, &rl) && rl.rlim_cur >= 10)
		return true;
	return cap_effective(23);	/* CAP_SYS_NICE */
}

static bool one_cpu(const struct pin_spec *p)
{
	return p->mode == PIN_SAME || (p->mode == PIN_CPUS && p->server_cpu == p->client_cpu);
}

/* The knob into a (the cell as it was, untraced); 0, or -1 with why not in
 * e->note. */
static int knob_apply(enum trace_knob k, const struct cell *c, struct cell *a,
		      struct trace_explain *e)
{
	const struct trace_knob_info *ki = trace_knob_info(k);

	e->knob = ki->arg;
	switch (k) {
	case TK_SCHED_FIFO:	/* a realtime task's timers have no slack, and it preempts at once */
		if (c->sched.policy == SCHED_FIFO || c->sched.policy == SCHED_RR)
			return snprintf(e->note, sizeof(e->note), "the endpoints are realtime already (--sched %s)",
					c->sched.text), -1;
		if (!rt_allowed())
			return snprintf(e->note, sizeof(e->note), "--sched fifo needs CAP_SYS_NICE or RLIMIT_RTPRIO 10: run as root"), -1;
		if ((c->tp->caps & TP_SPINS) && one_cpu(&c->pin))
			return snprintf(e->note, sizeof(e->note), "%s spins while it waits: under SCHED_FIFO on one CPU its peer would never run",
					c->tp->name), -1;
		sched_make(SCHED_FIFO, EXPLAIN_FIFO_PRIO, &a->sched);
		return 0;
	case TK_PIN_SAME:
		if (one_cpu(&c->pin))
			return snprintf(e->note, sizeof(e->note), "the endpoints share one CPU already"), -1;
		return pin_make(PIN_SAME, &a->pin, e->note, sizeof(e->note)) ? -1 : 0;
	case TK_KEEP_AWAKE:
		if (c->keep_awake)
			return snprintf(e->note, sizeof(e->note), "--keep-awake is on already"), -1;
		a->keep_awake = true;
		return 0;
	case TK_PM_QOS:
		if (c->pm_qos_us == 0)
			return snprintf(e->note, sizeof(e->note), "--pm-qos 0 is on already"), -1;
		a->pm_qos_us = 0;
		return 0;
	case TK_PIN_SPLIT:
		if (!one_cpu(&c->pin) && c->pin.mode != PIN_NONE)
			return snprintf(e->note, sizeof(e->note), "the endpoints have CPUs of their own already"), -1;
		return pin_make(PIN_SPLIT, &a->pin, e->note, sizeof(e->note)) ? -1 : 0;
	case TK_NONE:
		snprintf(e->note, sizeof(e->note), "no scheduling cause took %.0f %% of the windows: nothing for a knob to remove",
			 EXPLAIN_MIN_PCT);
		return -1;
	default:
		snprintf(e->note, sizeof(e->note), "its remedy is %.120s: not run", ki->says);
		return -1;
	}
}

/* --keep-awake for the runs with the knob: a spinner on each CPU the
 * endpoints may use. */
static int awake_start(const struct cell *c, char *err, size_t len)
{
	int cpus[64];
	unsigned n = 0;

	if (one_cpu(&c->pin) || c->pin.mode == PIN_CPUS) {
		cpus[n++] = c->pin.server_cpu;
		if (c->pin.client_cpu != c->pin.server_cpu)
			cpus[n++] = c->pin.client_cpu;
	} else {
		for (long k = 0; k < sysconf(_SC_NPROCESSORS_ONLN) && k < 64; k++)
			cpus[n++] = (int)k;
	}
	if (keep_awake_start(cpus, n, err, len)) {
		keep_awake_stop();
		return -1;
	}
	return 0;
}

/* The figure e->of names (lower is better but for msgs_per_s). */
static double headline(const struct result *r, const char *of)
{
	return !strcmp(of, "lat_p50_ns") ? (double)r->lat_p50_ns :
	       !strcmp(of, "lat_p99_ns") ? (double)r->lat_p99_ns :
	       !strcmp(of, "send_late_p50_ns") ? (double)r->send_late_p50_ns : r->msgs_per_s;
}


/* One run of cell c into r (from tmpl), the knob's spinners around it
 * where it is --keep-awake; its headline in *out. 0, -EINTR, or -1 with
 * why in e->note. */
static int run_one(const struct cell *c, bool knob, const struct result *tmpl, struct result *r,
		   int (*run_once)(const struct cell *, struct result *), struct trace_explain *e,
		   double *out)
{
	bool awake = knob && c->keep_awake && !tmpl->cell.keep_awake;
	bool qos = knob && c->pm_qos_us >= 0 && tmpl->cell.pm_qos_us < 0;
	char err[ERRLEN];
	int ret, qfd = -1;

	*r = *tmpl;
	if (qos && (qfd = pm_qos_hold(c->pm_qos_us, err, sizeof(err))) < 0)
		return snprintf(e->note, sizeof(e->note), "%.150s", err), -1;
	if (awake && awake_start(c, err, sizeof(err))) {
		if (qfd >= 0)
			close(qfd);
		return snprintf(e->note, sizeof(e->note), "%.150s", err), -1;
	}
	ret = run_once(c, r);
	if (awake)
		keep_awake_stop();
	if (qfd >= 0)
		close(qfd);
	if (ret)
		return ret;
	*out = r->status == RES_OK ? headline(r, e->of) : NAN;
	if (!(*out > 0))
		return snprintf(e->note, sizeof(e->note), "a run %s did not complete: %.100s",
				knob ? "with the knob" : "without the knob",
				r->status == RES_OK ? "no headline" : r->reason), -1;
	return 0;
}

/* The pairs, before then after; the medians and their verdict in e. */
static int run_pairs(const struct cell *b, const struct cell *a, const struct result *tmpl,
		     int (*run_once)(const struct cell *, struct result *), struct trace_explain *e)
{
	double bv[TRACE_EXPLAIN_PAIRS], av[TRACE_EXPLAIN_PAIRS], ratio[TRACE_EXPLAIN_PAIRS];
	bool more = !strcmp(e->of, "msgs_per_s"), all = true;
	struct result *r = malloc(sizeof(*r));
	int ret = 0;

	if (!r)
		return snprintf(e->note, sizeof(e->note), "out of memory"), 0;
	for (unsigned k = 0; k < TRACE_EXPLAIN_PAIRS && !ret; k++) {
		ret = run_one(b, false, tmpl, r, run_once, e, &bv[k]);
		if (!ret)
			ret = run_one(a, true, tmpl, r, run_once, e, &av[k]);
		if (!ret) {
			ratio[k] = av[k] / bv[k];
			all &= more ? ratio[k] > 1 : ratio[k] < 1;
			e->pairs = k + 1;
		}
	}
	free(r);
	if (ret)
		return ret == -EINTR ? -EINTR : 0;
	e->before = stats_median(bv, e->pairs);
	e->after = stats_median(av, e->pairs);
	e->ratio = stats_median(ratio, e->pairs);	/* sorted: its ends are the spread */
	e->ratio_lo = ratio[0];
	e->ratio_hi = ratio[e->pairs - 1];
	e->confirmed = all && fabs(e->ratio - 1) >= EXPLAIN_MIN_GAIN;
	return 0;
}

/* A paced sender's lateness (intended to actual send, at its median, over
 * its messages), where it is more than the trace's largest cause: the
 * timer's wakeup, which the scheduler's events do not tell from the sleep
 * it ends, so at most the clients' sleep. A median lateness of a period or
 * more is a sender behind its schedule, not a late timer. */
static void timer_late(const struct cell *c, const struct result *res, struct trace_pick *p)
{
	double late = (double)res->send_late_p50_ns * (double)res->msgs, wall = 0, sleep = 0;

	if (!(c->rate > 0) || !res->late_samples || (double)res->send_late_p50_ns >= 1e9 / c->rate)
		return;
	for (unsigned i = 0; i < res->trace.nsides && i < TRACE_MAX_SIDES; i++) {
		wall += (double)res->trace.sides[i].wall_ns;
		sleep += i ? (double)res->trace.sides[i].sleep_ns : 0;
	}
	late = late < sleep ? late : sleep;
	if (late > p->ns && wall > 0 && 100 * late / wall >= EXPLAIN_MIN_PCT)
		*p = (struct trace_pick){ .cause = EX_TIMER_LATE, .ns = late, .pct = 100 * late / wall };
}

/* The knobs to try, at most two: the caller's first (c->explain_first,
 * the reading's own hypothesis), then the cause's from the one table, any
 * the cell has already left out. Each runs its pairs; the first tried is
 * e's own fields, each in e->tries. */
static int try_knobs(const struct cell *c, const struct cell *before, struct result *res,
		     enum explain_cause cause, int (*run_once)(const struct cell *, struct result *),
		     struct trace_explain *e)
{
	enum trace_knob k[4], first = trace_knob_parse(c->explain_first), ck[3];
	unsigned n = 0, m = trace_knobs_for(cause, c, ck, 3);
	int ret = 0;

	if (first != TK_NONE)
		k[n++] = first;
	for (unsigned i = 0; i < m; i++)
		if (ck[i] != first)
			k[n++] = ck[i];
	if (!n)		/* the cell has them all already (the note says so), or none */
		k[n++] = trace_knobs_for(cause, NULL, ck, 1) ? ck[0] : TK_NONE;
	for (unsigned i = 0, tried = 0; i < n && tried < 2 && !ret; i++) {
		struct trace_explain one = *e;
		struct cell after = *before;
		struct trace_explain_try *t;

		one.note[0] = 0;
		one.knob = NULL;
		one.pairs = 0;
		one.confirmed = one.applied = false;
		if (!knob_apply(k[i], c, &after, &one)) {
			one.applied = true;
			ret = run_pairs(before, &after, res, run_once, &one);
		}
		t = &e->tries[tried++];
		*t = (struct trace_explain_try){ .knob = one.knob, .applied = one.applied,
						 .confirmed = one.confirmed, .before = one.before,
						 .after = one.after, .ratio = one.ratio,
						 .ratio_lo = one.ratio_lo, .ratio_hi = one.ratio_hi,
						 .pairs = one.pairs };
		snprintf(t->note, sizeof(t->note), "%s", one.note);
		e->ntries = tried;
		if (tried == 1) {
			unsigned nt = e->ntries;
			struct trace_explain_try keep = e->tries[0];

			*e = one;
			e->ntries = nt;
			e->tries[0] = keep;
		}
		/* advice only (no option to run): the next knob is not run either */
		if (!trace_knob_info(k[i])->arg)
			break;
	}
	return ret;
}

int trace_explain(const struct cell *c, struct result *res,
		  int (*run_once)(const struct cell *c, struct result *res))
{
	struct trace_explain *e = &res->trace.explain;
	struct trace_pick p;
	struct cell before = *c;
	int ret;

	memset(e, 0, sizeof(*e));
	e->on = true;
	if (res->status != RES_OK || !res->trace.on) {
		e->cause = "none";
		snprintf(e->note, sizeof(e->note), "the traced run did not complete");
		return 0;
	}
	p = explain_pick_placed(&res->trace, !one_cpu(&c->pin) && c->pin.mode != PIN_NONE);
	timer_late(c, res, &p);
	/* a periodic pattern's rate is its period's: its figure is the p99
	 * completion, what keeps or misses the deadline */
	e->of = res->lat_kind == LAT_PERIOD ? "lat_p99_ns" :	/* its timer's lateness is in it */
		p.cause == EX_TIMER_LATE ? "send_late_p50_ns" :
		res->lat_kind == LAT_RTT ? "lat_p50_ns" : "msgs_per_s";
	e->cause = explain_cause_name(p.cause);
	e->share_pct = p.pct;
	before.trace = before.trace_syscalls = before.profile = before.explain = false;
	before.trace_events = NULL;
	before.profile_dir = NULL;
	ret = try_knobs(c, &before, res, p.cause, run_once, e);
	/* no cause stood out from the others a knob acts on: none is tested
	 * as if it were the cause (a knob the caller named still runs) */
	if (p.rival && !e->applied)
		snprintf(e->note, sizeof(e->note),
			 "no single cause a knob acts on: %s %.0f %% (%.0f-%.0f) and %s %.0f %% (%.0f-%.0f) overlap over %llu %s; run longer (-d) for a decision",
			 p.share->name, p.share->pct, p.ci->lo, p.ci->hi, p.rival->name, p.rival->pct,
			 p.rival_ci->lo, p.rival_ci->hi, (unsigned long long)p.exchanges,
			 p.slices ? "slices" : "exchanges");
	return ret;
}
