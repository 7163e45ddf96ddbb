// SPDX-License-Identifier: MIT
/* The cause split's intervals (ipclab/trace.h, struct trace_cause: ci,
 * decided): each share's 95 % interval by a percentile bootstrap, over the
 * one-client round trip's exchanges or, for the stream, fan-in and cycle
 * splits, over the window's slices (a circular block bootstrap), through
 * one bootstrap; and whether the largest share is the leading cause.
 * docs/trace.md, "How sure". */
#include <stdlib.h>
#include <string.h>

#include "cause_int.h"

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
	tc_pp_parts(d->r, v, idle, cpu_wait, n / d->unit, &q);
	/* the figure: the client's own timing of the same exchanges (its
	 * marks), or without them the path's own time, what the path left
	 * of the figure (or exceeded it by) kept in proportion */
	fig = d->marks ? p->measured_ns * (m / nm) / (d->meas / d->nmeas)
		       : p->measured_ns * (tc_pp_path(v) / n) / d->path;
	tc_fold_parts(&q, fig, &scale);
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
	d.path = tc_pp_path(whole) / nall;
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

/* A sum of the tracer's bins as nanoseconds: the bins come from a map
 * another program writes, so a value past what a u64 holds (or not a
 * number) is cut, never cast as it is. */
static uint64_t ns_of(double x)
{
	return !(x > 0) ? 0 : x >= 1.8e19 ? (uint64_t)1.8e19 : (uint64_t)x;
}

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

		t.user_ns = ns_of(x[TSL_USER]);
		t.sys_ns = ns_of(x[TSL_KERNEL]);
		t.runnable_ns = ns_of(w);
		t.woken_idle_ns = ns_of(idle);
		t.woken_other_ns = ns_of(other);
		t.woken_timer_ns = ns_of(timer);
		t.preempted_ns = ns_of(x[TSL_PREEMPTED]);
		t.sleep_ns = src->no_sleep ? 0 : ns_of(x[TSL_SLEEP]);
		/* polling: the side's own share of its (user, or all) running time */
		if (r->trace.syscalls_traced)
			t.poll_ns = l->user_ns ? ns_of((double)l->poll_ns * x[TSL_USER] / (double)l->user_ns) : 0;
		else
			t.poll_ns = run > 0 ? ns_of((double)l->poll_ns * (x[TSL_USER] + x[TSL_KERNEL]) / run) : 0;
		tc_side_parts(r, &t, n, q, src->sleep_is_peer);
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
	tc_fold_parts(&q, d->src->figure, &scale);
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
	if (!nb)	/* no slice holds time: no interval, as a record without slices */
		return -1;
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
void tc_cause_ci(const struct result *r, const struct sl_src *src, struct trace_cause *c)
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
	/* what the trace did not place is no cause: its interval comes from
	 * the client's marks alone (no spread of its own, 71-71 %), and a
	 * second run of the cell names what the first could not see */
	c->decided = trace_ci_above(c->ci[0].lo, hi, c->nshares, 0) &&
		     c->shares[0].kind != TC_UNATTRIBUTED;
	/* without --trace=syscalls a slice's running time is split into user
	 * and kernel work in the whole window's proportion (getrusage): the
	 * slices never saw the two apart, so neither leads the other */
	if (c->decided && c->ci_slices && !r->trace.syscalls_traced && c->nshares > 1) {
		enum trace_cause_kind a = c->shares[0].kind, b = c->shares[1].kind;

		if ((a == TC_USER && b == TC_KERNEL) || (a == TC_KERNEL && b == TC_USER))
			c->decided = false;
	}
}
