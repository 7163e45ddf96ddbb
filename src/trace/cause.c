// SPDX-License-Identifier: MIT
/* The cause split of a traced cell (ipclab/trace.h, struct trace_cause):
 * the headline figure's time split into named shares that add up to it,
 * from the trace's critical path (one-client ping-pong) or its sides'
 * partitions (stream, fan-in, cycle), and one sentence naming the largest
 * share and what would change it. docs/trace.md says how each is read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/report.h"
#include "ipclab/trace.h"

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
};

const char *trace_cause_name(enum trace_cause_kind k)
{
	return (unsigned)k < TC_NKINDS ? cause_names[k] : "?";
}

const struct trace_cause *trace_cause(const struct trace_result *tr)
{
	return tr && tr->on && tr->cause.on ? &tr->cause : NULL;
}

/* Time per unit (message, exchange, cycle) by kind, before it is folded. */
struct parts {
	double ns[TC_NKINDS];
};

/* A side's window, over n units, into p (its sleep is waiting for the peer). */
static void side_parts(const struct trace_side *s, double n, struct parts *p, bool sleep_is_peer)
{
	double woken = (double)s->runnable_ns, idle = (double)s->woken_idle_ns,
	       other = (double)s->woken_other_ns, timer = (double)s->woken_timer_ns;

	p->ns[TC_USER] += (double)s->user_ns / n;
	p->ns[TC_KERNEL] += (double)s->sys_ns / n;
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
 * they exceed it by (parts that ran at once) scales them down to it. */
static void fold(struct trace_cause *c, struct parts *p, double figure)
{
	double sum = 0;

	for (unsigned k = 0; k < TC_NKINDS; k++)
		sum += p->ns[k] > 0 ? p->ns[k] : (p->ns[k] = 0);
	if (sum < figure) {
		p->ns[TC_UNATTRIBUTED] += figure - sum;
		sum = figure;
	}
	c->scale = sum > 0 ? figure / sum : 1;
	c->total_ns = figure;
	c->nshares = 0;
	for (unsigned k = 0; k < TC_NKINDS; k++) {
		double ns = p->ns[k] * c->scale;

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

/* One-client ping-pong: the round trip's critical path. */
static void cause_pingpong(const struct result *r, struct trace_cause *c)
{
	const struct trace_cpath *p = &r->trace.cpath;
	double wk = p->client_wakeup_ns + p->server_wakeup_ns;
	struct parts q = { { 0 } };

	q.ns[TC_USER] = p->client_user_ns + p->server_user_ns;
	q.ns[TC_KERNEL] = p->client_kernel_ns + p->server_kernel_ns;
	q.ns[TC_WAKEUP_IDLE] = p->wakeup_idle_ns;
	q.ns[TC_CPU_WAIT] = p->wakeup_cpu_wait_ns;
	q.ns[TC_WAKEUP] = wk - p->wakeup_idle_ns - p->wakeup_cpu_wait_ns;
	q.ns[TC_PREEMPTED] = p->preempted_ns;
	q.ns[TC_UNATTRIBUTED] = p->unattributed_ns - p->preempted_ns;
	c->of = "rtt_mean_ns";
	snprintf(c->whose, sizeof(c->whose), "round trip");
	fold(c, &q, p->measured_ns);
}

/* Fan-in: each client's window per exchange (asleep: waiting for the
 * server, that serves the others too), over all clients. */
static void cause_fanin(const struct result *r, struct trace_cause *c)
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

		side_parts(s, (double)n, &q, true);
		c->clients[c->nclients++] = (struct trace_client_path){
			.id = s->id, .total_ns = (double)s->wall_ns / m,
			.work_ns = (double)(s->user_ns + s->sys_ns) / m,
			.wakeup_ns = (double)s->runnable_ns / m, .preempted_ns = (double)s->preempted_ns / m,
			.peer_ns = (double)s->sleep_ns / m };
	}
	c->of = "rtt_mean_ns";
	snprintf(c->whose, sizeof(c->whose), "clients' round trip");
	fold(c, &q, r->lat_mean_ns);
}

/* Stream: the busier side sets the pace; its window per message, asleep
 * = waiting on the other (a full buffer for a sender, an empty one for a
 * receiver). */
static void cause_stream(const struct result *r, struct trace_cause *c)
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
	side_parts(&tr->sides[b], (double)r->msgs, &q, true);
	c->of = "ns_per_msg";
	c->bottleneck = b;
	c->bottleneck_sends = (b == 0) == s2c;
	snprintf(c->whose, sizeof(c->whose), "%s", c->bottleneck_sends ? "sender" : "receiver");
	/* the other side: how much of its window it waited (asleep) */
	const struct trace_side *o = &tr->sides[b == 0 ? 1 : 0];

	c->other_wait_pct = o->wall_ns ? 100.0 * (double)o->sleep_ns / (double)o->wall_ns : 0;
	fold(c, &q, (double)r->elapsed_ns / (double)r->msgs);
}

/* Cycle: per cycle, the driver's timer lateness and each side's work,
 * wakeups and preemption; a chain's stages run one after another (summed),
 * a fan's at once (the busiest one). */
static void cause_cycle(const struct result *r, uint64_t cycles, bool chain,
			struct trace_cause *c)
{
	const struct trace_result *tr = &r->trace;
	double n = (double)cycles, busiest = -1;
	struct parts q = { { 0 } }, fan = { { 0 } };

	if (!n || !tr->nsides)
		return;
	for (unsigned i = 0; i < tr->nsides; i++) {
		struct trace_side s = tr->sides[i];
		struct parts one = { { 0 } };
		double busy = 0;

		s.sleep_ns = 0;	/* asleep: before its turn, or after it */
		side_parts(&s, n, &one, false);
		for (unsigned k = 0; k < TC_NKINDS; k++) {
			busy += one.ns[k];
			if (i == 0 || chain)
				q.ns[k] += one.ns[k];
		}
		if (i > 0 && !chain && busy > busiest) {
			busiest = busy;
			fan = one;
		}
	}
	for (unsigned k = 0; k < TC_NKINDS && !chain && busiest >= 0; k++)
		q.ns[k] += fan.ns[k];
	c->of = "cycle_ns";
	snprintf(c->whose, sizeof(c->whose), "cycle");
	fold(c, &q, r->lat_mean_ns);
}

static const char *knob(const struct trace_cause *c, const struct result *r)
{
	switch (c->largest) {
	case TC_USER:
		return "less work per message (--think, the message size) or a faster CPU would";
	case TC_KERNEL:
		return "fewer or cheaper system calls per message (a shared-memory transport, batching) would";
	case TC_WAKEUP:
		return c->cross_cpu_frac > 0.5 ? "both ends on one CPU (--pin same), or a transport that spins, would"
					       : "a transport that spins instead of sleeping would";
	case TC_WAKEUP_IDLE:
		return "keeping the CPUs out of idle (--keep-awake) or both ends on one CPU (--pin same) would";
	case TC_CPU_WAIT:
	case TC_PREEMPTED:
		return "a real-time class (--sched fifo:N) or CPUs of their own (--pin) would";
	case TC_PEER:
		return r->lat_kind == LAT_ONE_WAY ? "a faster other side or a larger buffer would"
						     : "fewer clients per server, or a faster server, would";
	case TC_TIMER:
		return "a tighter timer (-O timer_slack=1ns) or a real-time class (--sched fifo:N) would";
	default:
		return "a trace of the transport's own threads would tell; a quieter machine may";
	}
}

static void sentence(struct trace_cause *c, const struct result *r)
{
	int n = snprintf(c->sentence, sizeof(c->sentence), "%s is %.0f %% of the %s (%.3g of %.3g us)",
			 cause_names[c->largest], c->largest_pct, c->whose, c->shares[0].ns / 1e3,
			 c->total_ns / 1e3);

	if (!strcmp(c->of, "ns_per_msg") && n > 0 && (size_t)n < sizeof(c->sentence))
		n += snprintf(c->sentence + n, sizeof(c->sentence) - (size_t)n,
			      "; the %s sets the pace, the %s waited %.0f %% of its window on %s",
			      c->whose, c->bottleneck_sends ? "receiver" : "sender", c->other_wait_pct,
			      c->bottleneck_sends ? "an empty buffer" : "a full buffer");
	if (n > 0 && (size_t)n < sizeof(c->sentence))
		n += snprintf(c->sentence + n, sizeof(c->sentence) - (size_t)n, ": %s change it most",
			      knob(c, r));
	/* paced: the timer's lateness is no part of the round trip, but said */
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

	memset(c, 0, sizeof(*c));
	if (!r->trace.on)
		return;
	if (pat && pat->cycles_of && pat->cycles_of(r, &cycles, &chain))
		cause_cycle(r, cycles, chain, c);
	else if (rtt && r->trace.has_cpath)
		cause_pingpong(r, c);
	else if (rtt && r->trace.nsides > 2)
		cause_fanin(r, c);
	else if (r->lat_kind == LAT_ONE_WAY)
		cause_stream(r, c);
	if (!c->on)
		return;
	cross_cpu(c, &r->trace);
	sentence(c, r);
}
