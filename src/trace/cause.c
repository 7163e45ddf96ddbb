// SPDX-License-Identifier: MIT
/* The cause split of a traced cell (ipclab/trace.h, struct trace_cause):
 * the headline figure's time split into named shares that add up to it,
 * from the trace's critical path (one-client ping-pong) or its sides'
 * partitions (stream, fan-in, cycle), and one sentence naming the leading
 * cause and what would change it, or, where the shares' intervals
 * (cause_ci.c) say none is stable, that there is none. docs/trace.md says
 * how each is read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/placement.h"
#include "ipclab/result.h"
#include "ipclab/trace.h"
#include "ipclab/transport.h"

#include "cause_int.h"

static const char *const cause_names[TC_NKINDS] = {
	[TC_USER] = "user work",
	[TC_KERNEL] = "kernel work",
	[TC_WAKEUP] = "wakeup latency",
	[TC_WAKEUP_IDLE] = "wakeup from idle",
	[TC_CPU_WAIT] = "waiting for a CPU",
	[TC_PREEMPTED] = "preempted",
	[TC_PEER] = "waiting for the peer",
	[TC_TIMER] = "timer lateness",
	[TC_UNATTRIBUTED] = "unattributed",
	[TC_POLLING] = "polling",
	[TC_STEAL] = "the hypervisor (steal)",
};

const char *trace_cause_name(enum trace_cause_kind k)
{
	return (unsigned)k < TC_NKINDS ? cause_names[k] : "?";
}

const struct trace_cause *trace_cause(const struct trace_result *tr)
{
	return tr && tr->on && tr->cause.on ? &tr->cause : NULL;
}


/* Of the time the guest saw its CPUs run, the share the host took: /proc/stat
 * steal over busy on the CPUs in @cpus, from the interference record (taken
 * at the window's start and end); 0 where unknown. */
static double steal_frac(const struct result *r, uint64_t cpus)
{
	double steal = 0, busy = 0;

	for (unsigned k = 0; k < r->intf.ncpus && k < INTF_MAX_CPUS; k++) {
		const struct intf_cpu *ic = &r->intf.cpu[k];

		if (ic->cpu >= 64 || !(cpus >> ic->cpu & 1) || !(ic->busy_pct > 0) ||
		    !(ic->steal_pct >= 0))
			continue;
		steal += ic->steal_pct;
		busy += ic->busy_pct;
	}
	return busy > 0 ? (steal < busy ? steal / busy : 1) : 0;
}

/* A side's running time as it is: the host's share (steal) first, then
 * polling for the peer (the transport's own clocked count of the side's
 * spinning), then its work. With syscall probes the kernel's time is
 * exact and the spin is taken from the user time; without them the
 * user/kernel split is getrusage's, sampled a tick at a time (a side that
 * ran 4 ms in 3 s may read all kernel or all user), so the spin is taken
 * from the whole running time first and the rest split as getrusage did. */
static void running(const struct result *r, const struct trace_side *s, double user,
		    double kernel, struct parts *p)
{
	double sf = r ? steal_frac(r, s->cpus) : 0, pf, run;
	bool exact = r && r->trace.syscalls_traced;

	p->ns[TC_STEAL] += (user + kernel) * sf;
	user *= 1 - sf;
	kernel *= 1 - sf;
	if (exact) {
		pf = s->user_ns ? (double)s->poll_ns / (double)s->user_ns : 0;
		pf = pf > 1 ? 1 : pf;
		p->ns[TC_KERNEL] += kernel;
		p->ns[TC_POLLING] += user * pf;
		p->ns[TC_USER] += user * (1 - pf);
		return;
	}
	run = (double)(s->user_ns + s->sys_ns);
	pf = run > 0 ? (double)s->poll_ns / run : 0;
	pf = pf > 1 ? 1 : pf;
	p->ns[TC_POLLING] += (user + kernel) * pf;
	p->ns[TC_KERNEL] += kernel * (1 - pf);
	p->ns[TC_USER] += user * (1 - pf);
}

/* A side's window, over n units, into p (its sleep is waiting for the peer). */
void tc_side_parts(const struct result *r, const struct trace_side *s, double n,
		       struct parts *p, bool sleep_is_peer)
{
	double woken = (double)s->runnable_ns, idle = (double)s->woken_idle_ns,
	       other = (double)s->woken_other_ns, timer = (double)s->woken_timer_ns;

	running(r, s, (double)s->user_ns / n, (double)s->sys_ns / n, p);
	p->ns[TC_WAKEUP_IDLE] += idle / n;
	p->ns[TC_CPU_WAIT] += other / n;
	p->ns[TC_TIMER] += timer / n;
	p->ns[TC_WAKEUP] += (woken - idle - other - timer) / n;
	p->ns[TC_PREEMPTED] += (double)s->preempted_ns / n;
	p->ns[sleep_is_peer ? TC_PEER : TC_UNATTRIBUTED] += (double)s->sleep_ns / n;
}

static double side_busy(const struct trace_side *s)
{
	return (double)(s->wall_ns - (s->sleep_ns < s->wall_ns ? s->sleep_ns : s->wall_ns));
}

static int cmp_share(const void *a, const void *b)
{
	const struct trace_share *x = a, *y = b;

	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : (int)x->kind - (int)y->kind;
}

/* The parts onto the figure: what they leave of it is unattributed, what
 * they exceed it by (parts that ran at once) scales them down to it; the
 * parts in ns after, the scale into *scale. */
void tc_fold_parts(struct parts *p, double figure, double *scale)
{
	double sum = 0;

	for (unsigned k = 0; k < TC_NKINDS; k++)
		sum += p->ns[k] > 0 ? p->ns[k] : (p->ns[k] = 0);
	if (sum < figure) {
		p->ns[TC_UNATTRIBUTED] += figure - sum;
		sum = figure;
	}
	*scale = sum > 0 ? figure / sum : 1;
	for (unsigned k = 0; k < TC_NKINDS; k++)
		p->ns[k] *= *scale;
}

static void fold(struct trace_cause *c, struct parts *p, double figure)
{
	tc_fold_parts(p, figure, &c->scale);
	c->total_ns = figure;
	c->nshares = 0;
	for (unsigned k = 0; k < TC_NKINDS; k++) {
		double ns = p->ns[k];

		if (ns <= 0 || figure <= 0 || 100.0 * ns / figure < 0.05)
			continue;
		c->shares[c->nshares++] = (struct trace_share){ .kind = k, .name = cause_names[k],
								 .ns = ns, .pct = 100.0 * ns / figure };
	}
	qsort(c->shares, c->nshares, sizeof(c->shares[0]), cmp_share);
	c->on = c->nshares > 0;
	if (c->on) {
		c->largest = c->shares[0].kind;
		c->largest_pct = c->shares[0].pct;
	}
}

static void cross_cpu(struct trace_cause *c, const struct trace_result *tr)
{
	uint64_t w = 0, same = 0;

	for (unsigned i = 0; i < tr->nsides; i++) {
		w += tr->sides[i].lat_count;
		same += tr->sides[i].wakeups_same_cpu;
	}
	c->cross_cpu_frac = w ? 1.0 - (double)(same < w ? same : w) / (double)w : 0;
}

void trace_cp_bound(const double *v, double *idle, double *cpu_wait)
{
	static const unsigned part[2][3] = {
		{ TCP_SERVER_WAKEUP, TCP_SERVER_IDLE, TCP_SERVER_CPU_WAIT },
		{ TCP_CLIENT_WAKEUP, TCP_CLIENT_IDLE, TCP_CLIENT_CPU_WAIT },
	};

	*idle = *cpu_wait = 0;
	for (unsigned k = 0; k < 2; k++) {
		double w = v[part[k][0]] > 0 ? v[part[k][0]] : 0;
		double i = v[part[k][1]] < w ? v[part[k][1]] : w, o = v[part[k][2]];

		*idle += i;
		*cpu_wait += o < w - i ? o : w - i;
	}
}

/* A round trip's parts (enum trace_cp_part, summed over n exchanges; the
 * wakeups' parts bound: idle, cpu_wait) as the cause's kinds, per
 * exchange. */
void tc_pp_parts(const struct result *r, const double *v, double idle, double cpu_wait,
		     double n, struct parts *q)
{
	double wk = (v[TCP_CLIENT_WAKEUP] + v[TCP_SERVER_WAKEUP]) / n;

	memset(q, 0, sizeof(*q));
	if (r->trace.nsides >= 2) {
		running(r, &r->trace.sides[0], v[TCP_SERVER_USER] / n, v[TCP_SERVER_KERNEL] / n, q);
		running(r, &r->trace.sides[1], v[TCP_CLIENT_USER] / n, v[TCP_CLIENT_KERNEL] / n, q);
	} else {
		q->ns[TC_USER] = (v[TCP_CLIENT_USER] + v[TCP_SERVER_USER]) / n;
		q->ns[TC_KERNEL] = (v[TCP_CLIENT_KERNEL] + v[TCP_SERVER_KERNEL]) / n;
	}
	q->ns[TC_WAKEUP_IDLE] = idle / n;
	q->ns[TC_CPU_WAIT] = cpu_wait / n;
	q->ns[TC_WAKEUP] = wk - (idle + cpu_wait) / n;
	q->ns[TC_PREEMPTED] = v[TCP_PREEMPTED] / n;
	q->ns[TC_UNATTRIBUTED] = v[TCP_ASLEEP] / n;
}

/* The parts' time on the path (the wakeups' parts are in their wakeups). */
double tc_pp_path(const double *v)
{
	return v[TCP_CLIENT_USER] + v[TCP_CLIENT_KERNEL] + v[TCP_CLIENT_WAKEUP] + v[TCP_SERVER_USER] +
	       v[TCP_SERVER_KERNEL] + v[TCP_SERVER_WAKEUP] + v[TCP_PREEMPTED] + v[TCP_ASLEEP];
}

/* One-client ping-pong: the round trip's critical path. */
static void cause_pingpong(const struct result *r, struct trace_cause *c)
{
	const struct trace_cpath *p = &r->trace.cpath;
	double v[TCP_NPARTS] = {
		[TCP_CLIENT_USER] = p->client_user_ns, [TCP_CLIENT_KERNEL] = p->client_kernel_ns,
		[TCP_CLIENT_WAKEUP] = p->client_wakeup_ns, [TCP_SERVER_USER] = p->server_user_ns,
		[TCP_SERVER_KERNEL] = p->server_kernel_ns, [TCP_SERVER_WAKEUP] = p->server_wakeup_ns,
		[TCP_PREEMPTED] = p->preempted_ns, [TCP_ASLEEP] = p->unattributed_ns - p->preempted_ns,
	};
	struct parts q;

	tc_pp_parts(r, v, p->wakeup_idle_ns, p->wakeup_cpu_wait_ns, 1, &q);
	c->of = "rtt_mean_ns";
	snprintf(c->whose, sizeof(c->whose), "round trip");
	fold(c, &q, p->measured_ns);
}

/* Side s's sums added into *a (for a row of several sides: their CPUs,
 * their running and polling time). */
static void like_add(struct trace_side *a, const struct trace_side *s)
{
	a->cpus |= s->cpus;
	a->user_ns += s->user_ns;
	a->sys_ns += s->sys_ns;
	a->poll_ns += s->poll_ns;
}

/* Fan-in: each client's window per exchange (asleep: waiting for the
 * server, that serves the others too), over all clients. */
static void cause_fanin(const struct result *r, struct trace_cause *c, struct sl_src *src)
{
	struct parts q = { { 0 } };
	uint64_t n = 0;

	for (unsigned i = 1; i < r->trace.nsides && i < r->nsides; i++)
		n += r->sides[i].msgs;
	if (!n)
		return;
	for (unsigned i = 1; i < r->trace.nsides && i < r->nsides; i++) {
		const struct trace_side *s = &r->trace.sides[i];
		double m = (double)(r->sides[i].msgs ? r->sides[i].msgs : 1);

		tc_side_parts(r, s, (double)n, &q, true);
		c->clients[c->nclients++] = (struct trace_client_path){
			.id = s->id, .total_ns = (double)s->wall_ns / m,
			.work_ns = (double)(s->user_ns + s->sys_ns) / m,
			.wakeup_ns = (double)s->runnable_ns / m, .preempted_ns = (double)s->preempted_ns / m,
			.peer_ns = (double)s->sleep_ns / m };
	}
	c->of = "rtt_mean_ns";
	snprintf(c->whose, sizeof(c->whose), "clients' round trip");
	/* in the slices: the clients' row, read as one side */
	*src = (struct sl_src){ .nrows = 1, .row = { TRACE_SL_SIDES }, .sleep_is_peer = true,
				.n = (double)n, .figure = r->lat_mean_ns, .point = q };
	for (unsigned i = 1; i < r->trace.nsides && i < r->nsides; i++)
		like_add(&src->like[0], &r->trace.sides[i]);
	fold(c, &q, r->lat_mean_ns);
}

/* Stream: the busier side sets the pace; its window per message, asleep
 * = waiting on the other (a full buffer for a sender, an empty one for a
 * receiver). */
static void cause_stream(const struct result *r, struct trace_cause *c, struct sl_src *src)
{
	const struct trace_result *tr = &r->trace;
	bool s2c = strstr(r->pat_opts, "dir=s2c") != NULL;
	unsigned b = 0;
	struct parts q = { { 0 } };

	if (!r->msgs || !r->elapsed_ns || tr->nsides < 2)
		return;
	for (unsigned i = 1; i < tr->nsides; i++)
		if (side_busy(&tr->sides[i]) / (double)(tr->sides[i].wall_ns ? tr->sides[i].wall_ns : 1) >
		    side_busy(&tr->sides[b]) / (double)(tr->sides[b].wall_ns ? tr->sides[b].wall_ns : 1))
			b = i;
	tc_side_parts(r, &tr->sides[b], (double)r->msgs, &q, true);
	c->of = "ns_per_msg";
	c->bottleneck = b;
	c->bottleneck_sends = (b == 0) == s2c;
	snprintf(c->whose, sizeof(c->whose), "%s", c->bottleneck_sends ? "sender" : "receiver");
	/* the other side: how much of its window it waited (asleep) */
	const struct trace_side *o = &tr->sides[b == 0 ? 1 : 0];

	c->other_wait_pct = o->wall_ns ? 100.0 * (double)o->sleep_ns / (double)o->wall_ns : 0;
	if (b < TRACE_SL_SIDES)	/* in the slices: the bottleneck's own row */
		*src = (struct sl_src){ .nrows = 1, .row = { b }, .like = { tr->sides[b] },
					.sleep_is_peer = true, .n = (double)r->msgs,
					.figure = (double)r->elapsed_ns / (double)r->msgs, .point = q };
	fold(c, &q, (double)r->elapsed_ns / (double)r->msgs);
}

/* A periodic pattern: per period, the driver's timer lateness and each
 * side's work, wakeups and preemption; a chain's stages run one after
 * another (summed), a fan's at once (the busiest one). */
static void cause_periodic(const struct result *r, uint64_t cycles, bool chain,
			   struct trace_cause *c, struct sl_src *src)
{
	const struct pattern *pat = r->cell.pat;
	const struct trace_result *tr = &r->trace;
	double n = (double)cycles, busiest = -1;
	unsigned fan_side = 0;
	struct parts q = { { 0 } }, fan = { { 0 } };

	if (!n || !tr->nsides)
		return;
	for (unsigned i = 0; i < tr->nsides; i++) {
		struct trace_side s = tr->sides[i];
		struct parts one = { { 0 } };
		double busy = 0;

		s.sleep_ns = 0;	/* asleep: before its turn, or after it */
		tc_side_parts(r, &s, n, &one, false);
		for (unsigned k = 0; k < TC_NKINDS; k++) {
			busy += one.ns[k];
			if (i == 0 || chain)
				q.ns[k] += one.ns[k];
		}
		if (i > 0 && !chain && busy > busiest) {
			busiest = busy;
			fan = one;
			fan_side = i;
		}
	}
	for (unsigned k = 0; k < TC_NKINDS && !chain && busiest >= 0; k++)
		q.ns[k] += fan.ns[k];
	/* the figure runs from each period's intended start: the driver's
	 * timer lateness as the pattern measured it (the timer's expiry late,
	 * by its slack or the host, while the driver slept: no scheduler
	 * event shows it), of which its woken-to-running after the timer is
	 * a part; not unattributed */
	if (r->timer_late_mean_ns > q.ns[TC_TIMER])
		q.ns[TC_TIMER] = r->timer_late_mean_ns;
	c->of = pat && pat->period_figure ? pat->period_figure : "period_ns";
	snprintf(c->whose, sizeof(c->whose), "%s", pat && pat->period_name ? pat->period_name : "period");
	/* in the slices: the driver's row, and the stages' (a chain: all of
	 * them summed; a fan: the busiest one's), asleep no part */
	*src = (struct sl_src){ .nrows = 2, .row = { 0, chain ? TRACE_SL_SIDES : fan_side },
				.like = { tr->sides[0] }, .no_sleep = true, .n = n,
				.figure = r->lat_mean_ns, .point = q };
	for (unsigned i = 1; i < tr->nsides; i++)
		if (chain || i == fan_side)
			like_add(&src->like[1], &tr->sides[i]);
	if (tr->nsides < 2 || (!chain && (!fan_side || fan_side >= TRACE_SL_SIDES)))
		src->nrows = tr->nsides < 2 ? 1 : 0;
	fold(c, &q, r->lat_mean_ns);
}

/* The transport keeps its messages in shared memory (no system call per
 * message to save by moving to one). */
static bool shm_transport(const struct transport *tp)
{
	return tp && ((tp->caps & (TP_ZEROCOPY | TP_ZEROCOPY_SEND | TP_SPINS)) ||
		      !strncmp(tp->name, "shm", 3) || !strncmp(tp->name, "ring", 4) ||
		      !strcmp(tp->name, "cacheline"));
}

/* The knobs for the largest share, from the one table (knobs.c), those the
 * cell has already left out; into buf. */
static const char *knob(const struct trace_cause *c, const struct result *r, char *buf, size_t len)
{
	const struct cell *cl = r->cell.tp ? &r->cell : NULL;
	const struct transport *tp = r->cell.tp;
	bool own = cl && cl->pin.mode != PIN_NONE && cl->pin.mode != PIN_SAME &&
		   !(cl->pin.mode == PIN_CPUS && cl->pin.server_cpu == cl->pin.client_cpu);
	enum explain_cause cause = trace_share_cause(&c->shares[0], c, &r->trace, own);
	enum trace_knob k[3];
	unsigned n;
	int w = 0;

	switch (c->largest) {
	case TC_USER:
		return "less work per message (--think, the message size) or a faster CPU would";
	case TC_KERNEL:
		return shm_transport(tp) ? "fewer system calls per message (batching, a longer spin before it sleeps) would"
					 : "fewer or cheaper system calls per message (a shared-memory transport, batching) would";
	case TC_PEER:
		return r->lat_kind == LAT_ONE_WAY ? "a faster other side or a larger buffer would"
						     : "fewer clients per server, or a faster server, would";
	case TC_UNATTRIBUTED:
		return "a trace of the transport's own threads would tell; a quieter machine may";
	default:
		break;
	}
	n = trace_knobs_for(cause, cl, k, 3);
	buf[0] = 0;
	for (unsigned i = 0; i < n && w >= 0 && (size_t)w < len; i++)
		w += snprintf(buf + w, len - (size_t)w, "%s%s", i ? " or " : "", trace_knob_info(k[i])->says);
	/* a wakeup's latency: a transport that spins has none to wait */
	if (cause == EX_CROSS_CPU && !(tp && (tp->caps & TP_SPINS)) && w >= 0 && (size_t)w < len)
		w += snprintf(buf + w, len - (size_t)w, "%sa transport that spins", n ? ", or " : "");
	if (!buf[0])
		return "nothing the cell does not have already would";
	if (w >= 0 && (size_t)w < len)
		snprintf(buf + w, len - (size_t)w, " would");
	return buf;
}

/* "no single leading cause: X 48 % (35-60) and Y 40 % (28-52) overlap
 * over N exchanges; ...": the largest and every share whose interval
 * reaches its own. */
static int undecided(struct trace_cause *c)
{
	size_t len = sizeof(c->sentence);
	int n = snprintf(c->sentence, len, "no single leading cause:");
	unsigned pick[3], np = 0;
	/* the largest is time the trace did not place: said, with the
	 * largest share it did place */
	bool unplaced = c->nshares > 1 && c->shares[0].kind == TC_UNATTRIBUTED;

	for (unsigned i = 0; i < c->nshares && np < 3; i++)
		if (!i || (!unplaced && c->ci[i].hi >= c->ci[0].lo))
			pick[np++] = i;
	if (np == 1 && c->nshares > 1)	/* user and kernel work the slices never saw apart */
		pick[np++] = 1;
	for (unsigned j = 0; j < np && n > 0 && (size_t)n < len; j++) {
		const struct trace_share *s = &c->shares[pick[j]];

		n += snprintf(c->sentence + n, len - (size_t)n, "%s %s %.0f %% (%.0f-%.0f)%s",
			      unplaced ? (j ? "; the largest it placed," : "") :
			      !j ? "" : j + 1 < np ? "," : " and", s->name, s->pct, c->ci[pick[j]].lo,
			      c->ci[pick[j]].hi, unplaced ? (j ? "," : " is time the trace did not place") : "");
	}
	if (n > 0 && (size_t)n < len)
		n += snprintf(c->sentence + n, len - (size_t)n,
			      "%s over %llu %s; run longer (-d) for a decision", unplaced ? "" : " overlap",
			      (unsigned long long)(c->ci_slices ? c->ci_slices : c->ci_exchanges),
			      c->ci_slices ? "slices of the window" : "exchanges");
	return n;
}

static void sentence(struct trace_cause *c, const struct result *r)
{
	char kb[200];
	int n;

	if (!c->decided) {
		n = undecided(c);
		goto paced;
	}
	n = snprintf(c->sentence, sizeof(c->sentence), "%s is %.0f %% of the %s (%.3g of %.3g us)",
			 cause_names[c->largest], c->largest_pct, c->whose, c->shares[0].ns / 1e3,
			 c->total_ns / 1e3);

	if (!strcmp(c->of, "ns_per_msg") && n > 0 && (size_t)n < sizeof(c->sentence))
		n += snprintf(c->sentence + n, sizeof(c->sentence) - (size_t)n,
			      "; the %s sets the pace, the %s waited %.0f %% of its window on %s",
			      c->whose, c->bottleneck_sends ? "receiver" : "sender", c->other_wait_pct,
			      c->bottleneck_sends ? "an empty buffer" : "a full buffer");
	if (n > 0 && (size_t)n < sizeof(c->sentence))
		n += snprintf(c->sentence + n, sizeof(c->sentence) - (size_t)n, ": %s change it most",
			      knob(c, r, kb, sizeof(kb)));
paced:	/* paced: the timer's lateness is no part of the round trip, but said */
	if (r->trace.has_cpath && r->trace.cpath.timer_late_ns > 0 && n > 0 &&
	    (size_t)n < sizeof(c->sentence))
		snprintf(c->sentence + n, sizeof(c->sentence) - (size_t)n,
			 "; beside it, the client's timer woke it %.3g us late", r->trace.cpath.timer_late_ns / 1e3);
}

void trace_cause_fill(struct result *r)
{
	struct trace_cause *c = &r->trace.cause;
	const struct pattern *pat = r->cell.pat;
	uint64_t cycles = 0;
	bool rtt = r->lat_kind == LAT_RTT, chain = true;
	struct sl_src src = { 0 };

	memset(c, 0, sizeof(*c));
	if (!r->trace.on)
		return;
	if (pat && pat->cycles_of && pat->cycles_of(r, &cycles, &chain))
		cause_periodic(r, cycles, chain, c, &src);
	else if (rtt && r->trace.has_cpath)
		cause_pingpong(r, c);
	else if (rtt && r->trace.nsides > 2)
		cause_fanin(r, c, &src);
	else if (r->lat_kind == LAT_ONE_WAY)
		cause_stream(r, c, &src);
	if (!c->on)
		return;
	cross_cpu(c, &r->trace);
	tc_cause_ci(r, &src, c);
	sentence(c, r);
}
