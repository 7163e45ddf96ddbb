// SPDX-License-Identifier: MIT
/* The cause split of a traced cell (ipclab/trace.h, struct trace_cause):
 * the headline figure's time split into named shares that add up to it,
 * from the trace's critical path (one-client ping-pong) or its sides'
 * partitions (stream, fan-in, cycle), and one sentence naming the largest
 * share and what would change it. docs/trace.md says how each is read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/placement.h"
#include "ipclab/report.h"
#include "ipclab/trace.h"
#include "ipclab/transport.h"

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

/* Time per unit (message, exchange, cycle) by kind, before it is folded. */
struct parts {
	double ns[TC_NKINDS];
};

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
static void side_parts(const struct result *r, const struct trace_side *s, double n,
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
static void fold_parts(struct parts *p, double figure, double *scale)
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
	fold_parts(p, figure, &c->scale);
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
static void pp_parts(const struct result *r, const double *v, double idle, double cpu_wait,
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
static double pp_path(const double *v)
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

	pp_parts(r, v, p->wakeup_idle_ns, p->wakeup_cpu_wait_ns, 1, &q);
	c->of = "rtt_mean_ns";
	snprintf(c->whose, sizeof(c->whose), "round trip");
	fold(c, &q, p->measured_ns);
}

/* A small generator of its own with a fixed seed: the same exchanges give
 * the same intervals, run after run (splitmix64). */
static uint64_t boot_next(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The bootstrap, for every split with intervals: TRACE_CI_BOOT draws of n
 * units with replacement, in blocks of `block` units in a row (circularly;
 * 1: one by one), each draw's ngroups shares (%) from draw(); their 2.5th
 * and 97.5th percentiles into lo[] and hi[]. */
typedef void boot_draw_fn(const void *ctx, const unsigned *pick, unsigned n, double *pct);

static int boot(unsigned n, unsigned block, unsigned ngroups, boot_draw_fn *draw, const void *ctx,
		double *lo, double *hi)
{
	double *pct = malloc(sizeof(*pct) * TRACE_CI_BOOT * ngroups), one[TC_NKINDS];
	unsigned *pick = malloc(sizeof(*pick) * (n ? n : 1));
	uint64_t x = 0x1b9ca5e5d1ce0461ull;

	if (!pct || !pick || ngroups > TC_NKINDS) {
		free(pct);
		free(pick);
		return -1;
	}
	block = block ? block : 1;
	for (unsigned i = 0; i < TRACE_CI_BOOT; i++) {
		for (unsigned j = 0; j < n;) {
			unsigned at = (unsigned)(boot_next(&x) % n);

			for (unsigned l = 0; l < block && j < n; l++)
				pick[j++] = (at + l) % n;
		}
		draw(ctx, pick, n, one);
		for (unsigned g = 0; g < ngroups; g++)
			pct[g * TRACE_CI_BOOT + i] = one[g];
	}
	for (unsigned g = 0; g < ngroups; g++) {
		double *a = pct + g * TRACE_CI_BOOT;

		qsort(a, TRACE_CI_BOOT, sizeof(*a), cmp_dbl);
		lo[g] = a[(unsigned)(0.025 * TRACE_CI_BOOT)];
		hi[g] = a[(unsigned)(0.975 * TRACE_CI_BOOT) - 1];
	}
	free(pick);
	free(pct);
	return 0;
}

/* A draw's parts (per kind, folded onto fig) summed into its groups, % of fig. */
static void group_pct(const struct parts *q, double fig, const int *group, unsigned ngroups,
		      double *pct)
{
	for (unsigned g = 0; g < ngroups; g++)
		pct[g] = 0;
	for (unsigned k = 0; k < TC_NKINDS; k++)
		if (group[k] >= 0 && (unsigned)group[k] < ngroups && fig > 0)
			pct[group[k]] += 100.0 * q->ns[k] / fig;
}

/* Ping-pong: a draw of the round trip's exchanges (their bins). */
struct pp_boot {
	const struct result *r;
	const struct trace_cpath *p;
	const unsigned *idx;
	const int *group;
	unsigned ngroups;
	bool marks;
	double meas, nmeas, path, unit;
};

static void pp_draw(const void *ctx, const unsigned *pick, unsigned nb, double *pct)
{
	const struct pp_boot *d = ctx;
	const struct trace_cpath *p = d->p;
	double v[TCP_NPARTS] = { 0 }, n = 0, m = 0, nm = 0, scale, idle, cpu_wait, fig;
	struct parts q;

	for (unsigned j = 0; j < nb; j++) {
		unsigned b = d->idx[pick[j]];

		n += p->bin_n[b];
		m += p->bin_meas[b];
		nm += p->bin_nmeas[b];
		for (unsigned k = 0; k < TCP_NPARTS; k++)
			v[k] += p->bin[b][k];
	}
	trace_cp_bound(v, &idle, &cpu_wait);
	pp_parts(d->r, v, idle, cpu_wait, n / d->unit, &q);
	/* the figure: the client's own timing of the same exchanges (its
	 * marks), or without them the path's own time, what the path left
	 * of the figure (or exceeded it by) kept in proportion */
	fig = d->marks ? p->measured_ns * (m / nm) / (d->meas / d->nmeas)
		       : p->measured_ns * (pp_path(v) / n) / d->path;
	fold_parts(&q, fig, &scale);
	group_pct(&q, fig, d->group, d->ngroups, pct);
}

int trace_cause_boot(const struct result *r, const int group[TC_NKINDS], unsigned ngroups,
		     double *lo, double *hi)
{
	const struct trace_cpath *p = &r->trace.cpath;
	double whole[TCP_NPARTS] = { 0 }, nall = 0;
	unsigned idx[TRACE_CP_BINS], nb = 0;
	struct pp_boot d = { .r = r, .p = p, .idx = idx, .group = group, .ngroups = ngroups,
			     .marks = true };

	if (!r->trace.has_cpath || !ngroups || ngroups > TC_NKINDS || !(p->measured_ns > 0))
		return -1;
	for (unsigned b = 0; b < TRACE_CP_BINS; b++)
		if (p->bin_n[b]) {
			idx[nb++] = b;
			nall += p->bin_n[b];
			d.meas += p->bin_meas[b];
			d.nmeas += p->bin_nmeas[b];
			d.marks = d.marks && p->bin_nmeas[b];
			for (unsigned k = 0; k < TCP_NPARTS; k++)
				whole[k] += p->bin[b][k];
		}
	if (!nb)	/* no exchanges kept (a record made without them) */
		return -1;
	/* A draw's parts and figure are scaled so that all the bins together
	 * give the point (per message the client counted: a send that woke
	 * nobody closed no bin, so the bins may count fewer exchanges). */
	d.path = pp_path(whole) / nall;
	d.unit = d.path > 0 ? p->total_ns / d.path : 0;
	if (nb < TRACE_CI_MIN_EXCHANGES || !(d.unit > 0) || (d.marks && !(d.meas > 0))) {	/* too few */
		for (unsigned g = 0; g < ngroups; g++) {
			lo[g] = 0;
			hi[g] = 100;
		}
		return 0;
	}
	return boot(nb, 1, ngroups, pp_draw, &d, lo, hi);
}

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

/* A sum of bins (v, per row) as the cause's kinds over n units, into q. */
static void sl_parts(const struct result *r, const struct sl_src *src,
		     const double v[2][TSL_NPARTS], double n, struct parts *q)
{
	memset(q, 0, sizeof(*q));
	for (unsigned k = 0; k < src->nrows; k++) {
		const struct trace_side *l = &src->like[k];
		const double *x = v[k];
		struct trace_side t = *l;
		double w = x[TSL_WOKEN], idle = x[TSL_IDLE] < w ? x[TSL_IDLE] : w,
		       other = x[TSL_CPU_WAIT] < w - idle ? x[TSL_CPU_WAIT] : w - idle,
		       timer = x[TSL_TIMER] < w - idle - other ? x[TSL_TIMER] : w - idle - other,
		       run = (double)(l->user_ns + l->sys_ns);

		t.user_ns = (uint64_t)x[TSL_USER];
		t.sys_ns = (uint64_t)x[TSL_KERNEL];
		t.runnable_ns = (uint64_t)w;
		t.woken_idle_ns = (uint64_t)idle;
		t.woken_other_ns = (uint64_t)other;
		t.woken_timer_ns = (uint64_t)timer;
		t.preempted_ns = (uint64_t)x[TSL_PREEMPTED];
		t.sleep_ns = src->no_sleep ? 0 : (uint64_t)x[TSL_SLEEP];
		/* polling: the side's own share of its (user, or all) running time */
		if (r->trace.syscalls_traced)
			t.poll_ns = l->user_ns ? (uint64_t)((double)l->poll_ns * x[TSL_USER] / (double)l->user_ns) : 0;
		else
			t.poll_ns = run > 0 ? (uint64_t)((double)l->poll_ns * (x[TSL_USER] + x[TSL_KERNEL]) / run) : 0;
		side_parts(r, &t, n, q, src->sleep_is_peer);
	}
}

/* A slice bin's length in the window: its first row's own time, asleep too. */
static double sl_time(const float *b)
{
	return (double)b[TSL_USER] + b[TSL_KERNEL] + b[TSL_WOKEN] + b[TSL_PREEMPTED] + b[TSL_SLEEP];
}

struct sl_boot {
	const struct result *r;
	const struct sl_src *src;
	const unsigned *idx;
	const int *group;
	unsigned ngroups;
	double time;			/* all the bins' time */
	double cal[TC_NKINDS];		/* all the bins' parts onto the point's; < 0: none */
};

/* The drawn bins' sums, per row, and their time. */
static double sl_sum(const struct sl_boot *d, const unsigned *pick, unsigned nb,
		     double v[2][TSL_NPARTS])
{
	const struct trace_slices *sl = &d->r->trace.slices;
	double t = 0;

	memset(v, 0, sizeof(double) * 2 * TSL_NPARTS);
	for (unsigned j = 0; j < nb; j++) {
		unsigned b = d->idx[pick ? pick[j] : j];

		t += sl_time(sl->bin[d->src->row[0]][b]);
		for (unsigned k = 0; k < d->src->nrows; k++)
			for (unsigned p = 0; p < TSL_NPARTS; p++)
				v[k][p] += sl->bin[d->src->row[k]][b][p];
	}
	return t;
}

/* A draw of the window's slices: its parts over the units in its time
 * (the units taken to be spread evenly over the window), onto the
 * point's parts, folded onto the figure. */
static void sl_draw(const void *ctx, const unsigned *pick, unsigned nb, double *pct)
{
	const struct sl_boot *d = ctx;
	double v[2][TSL_NPARTS], t = sl_sum(d, pick, nb, v), scale;
	struct parts q;

	sl_parts(d->r, d->src, (const double(*)[TSL_NPARTS])v, d->src->n * t / d->time, &q);
	for (unsigned k = 0; k < TC_NKINDS; k++)
		q.ns[k] = d->cal[k] >= 0 ? q.ns[k] * d->cal[k] : d->src->point.ns[k];
	fold_parts(&q, d->src->figure, &scale);
	group_pct(&q, d->src->figure, d->group, d->ngroups, pct);
}

/* The shares' intervals from the window's slices: a circular block
 * bootstrap over the bins that hold time (blocks of about the cube root
 * of their count: neighbouring slices are alike); as trace_cause_boot. */
static int sl_boot(const struct result *r, const struct sl_src *src, const int group[TC_NKINDS],
		   unsigned ngroups, double *lo, double *hi, uint64_t *nslices)
{
	const struct trace_slices *sl = &r->trace.slices;
	unsigned idx[TRACE_SL_BINS], nb = 0, block = 1;
	struct sl_boot d = { .r = r, .src = src, .idx = idx, .group = group, .ngroups = ngroups };
	double v[2][TSL_NPARTS];
	struct parts all;

	if (!r->trace.has_slices || !src->nrows || !ngroups || ngroups > TC_NKINDS ||
	    !(src->n > 0) || !(src->figure > 0))
		return -1;
	for (unsigned b = 0; b < TRACE_SL_BINS; b++)
		if (sl_time(sl->bin[src->row[0]][b]) > 0)
			idx[nb++] = b;
	*nslices = nb;
	if (nb < TRACE_CI_MIN_EXCHANGES) {	/* too few */
		for (unsigned g = 0; g < ngroups; g++) {
			lo[g] = 0;
			hi[g] = 100;
		}
		return 0;
	}
	d.time = sl_sum(&d, NULL, nb, v);
	sl_parts(r, src, (const double(*)[TSL_NPARTS])v, src->n, &all);
	for (unsigned k = 0; k < TC_NKINDS; k++)
		d.cal[k] = all.ns[k] > 0 ? src->point.ns[k] / all.ns[k] : -1;
	while ((block + 1) * (block + 1) * (block + 1) <= nb)
		block++;
	return boot(nb, block, ngroups, sl_draw, &d, lo, hi);
}

bool trace_ci_above(double lo, const double *hi, unsigned n, unsigned self)
{
	for (unsigned g = 0; g < n; g++)
		if (g != self && !(lo > hi[g]))
			return false;
	return true;
}

/* Each share's 95 % interval, and whether the largest is stable: its
 * interval above every other share's. Ping-pong draws from its exchanges,
 * the others from the window's slices (src); a split with neither (a
 * record made without them) has none, and names its largest. */
static void cause_ci(const struct result *r, const struct sl_src *src, struct trace_cause *c)
{
	int group[TC_NKINDS];
	double lo[TC_NKINDS], hi[TC_NKINDS];

	c->decided = true;
	for (unsigned k = 0; k < TC_NKINDS; k++)
		group[k] = -1;
	for (unsigned i = 0; i < c->nshares; i++)
		group[c->shares[i].kind] = (int)i;
	if (!trace_cause_boot(r, group, c->nshares, lo, hi))
		c->ci_exchanges = r->trace.cpath.exchanges;
	else if (sl_boot(r, src, group, c->nshares, lo, hi, &c->ci_slices))
		return;
	c->ci_on = true;
	for (unsigned i = 0; i < c->nshares; i++) {
		/* a percentile interval of a skewed share can miss its point by
		 * a hair: widened to hold it */
		c->ci[i].lo = lo[i] < c->shares[i].pct ? lo[i] : c->shares[i].pct;
		c->ci[i].hi = hi[i] > c->shares[i].pct ? hi[i] : c->shares[i].pct;
		hi[i] = c->ci[i].hi;
	}
	c->decided = trace_ci_above(c->ci[0].lo, hi, c->nshares, 0);
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

		side_parts(r, s, (double)n, &q, true);
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
	side_parts(r, &tr->sides[b], (double)r->msgs, &q, true);
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

/* Cycle: per cycle, the driver's timer lateness and each side's work,
 * wakeups and preemption; a chain's stages run one after another (summed),
 * a fan's at once (the busiest one). */
static void cause_cycle(const struct result *r, uint64_t cycles, bool chain,
			struct trace_cause *c, struct sl_src *src)
{
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
		side_parts(r, &s, n, &one, false);
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
	c->of = "cycle_ns";
	snprintf(c->whose, sizeof(c->whose), "cycle");
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

	for (unsigned i = 0; i < c->nshares && np < 3; i++)
		if (!i || c->ci[i].hi >= c->ci[0].lo)
			pick[np++] = i;
	for (unsigned j = 0; j < np && n > 0 && (size_t)n < len; j++) {
		const struct trace_share *s = &c->shares[pick[j]];

		n += snprintf(c->sentence + n, len - (size_t)n, "%s %s %.0f %% (%.0f-%.0f)",
			      !j ? "" : j + 1 < np ? "," : " and", s->name, s->pct, c->ci[pick[j]].lo,
			      c->ci[pick[j]].hi);
	}
	if (n > 0 && (size_t)n < len)
		n += snprintf(c->sentence + n, len - (size_t)n,
			      " overlap over %llu %s; run longer (-d) for a decision",
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
		cause_cycle(r, cycles, chain, c, &src);
	else if (rtt && r->trace.has_cpath)
		cause_pingpong(r, c);
	else if (rtt && r->trace.nsides > 2)
		cause_fanin(r, c, &src);
	else if (r->lat_kind == LAT_ONE_WAY)
		cause_stream(r, c, &src);
	if (!c->on)
		return;
	cross_cpu(c, &r->trace);
	cause_ci(r, &src, c);
	sentence(c, r);
}
