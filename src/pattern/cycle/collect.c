// SPDX-License-Identifier: MIT
/* The cycle pattern's figures (cycle.h): the completion series the
 * driver keeps, the sides' records folded into the result's pat_result
 * (the driver's cycles and timer, each stage's wait and busy, --trace's
 * woken-to-running per stage), and the progress line's cycles and xruns. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "int.h"

void cycle_series_init(struct cycle_series *s)
{
	memset(s, 0, sizeof(*s));
	s->per = 1;
}

void cycle_series_add(struct cycle_series *s, uint64_t completion_ns, bool xrun)
{
	if (s->n == 0 || s->in_last == s->per) {
		if (s->n == CYCLE_SERIES_MAX) {
			/* fold neighbours: half the points, each twice as many cycles */
			for (uint32_t i = 0; i < CYCLE_SERIES_MAX / 2; i++) {
				uint64_t a = s->max_ns[2 * i], b = s->max_ns[2 * i + 1];

				/* UINT64_MAX: no cycle of that point ran */
				s->max_ns[i] = a == UINT64_MAX ? b : b == UINT64_MAX ? a : a > b ? a : b;
				s->xruns[i] = s->xruns[2 * i] + s->xruns[2 * i + 1];
			}
			s->n = CYCLE_SERIES_MAX / 2;
			s->per *= 2;
			s->in_last = s->per;	/* the last merged point is full */
		}
		if (s->n == 0 || s->in_last == s->per) {
			s->max_ns[s->n] = UINT64_MAX;
			s->xruns[s->n] = 0;
			s->n++;
			s->in_last = 0;
		}
	}
	/* a late start (UINT64_MAX) counts as an xrun but has no completion */
	if (completion_ns != UINT64_MAX &&
	    (s->max_ns[s->n - 1] == UINT64_MAX || completion_ns > s->max_ns[s->n - 1]))
		s->max_ns[s->n - 1] = completion_ns;
	s->xruns[s->n - 1] += xrun;
	s->in_last++;
}

/* Each stage's wait (its main histogram) and busy time, and their share
 * of the period. */
static void collect_stages(const struct side_stats *sides, unsigned n, uint64_t period,
			   struct cycle_result *cr)
{
	for (unsigned i = 1; i < n && cr->nstages < CYCLE_MAX_STAGES; i++) {
		const struct side_stats *st = &sides[i];
		const struct cycle_side *cs = st->pat;
		struct cycle_stage *sg = &cr->stages[cr->nstages++];

		if (st->hist && st->hist->count) {
			sg->wait_p50_ns = hist_quantile(st->hist, 0.50);
			sg->wait_p99_ns = hist_quantile(st->hist, 0.99);
			sg->wait_max_ns = st->hist->max;
		}
		if (cs && cs->b.count) {
			sg->busy_p50_ns = hist_quantile(&cs->b, 0.50);
			sg->busy_p99_ns = hist_quantile(&cs->b, 0.99);
		}
		if (period) {
			sg->wait_share_pct = 100.0 * (double)sg->wait_p50_ns / (double)period;
			sg->busy_share_pct = 100.0 * (double)sg->busy_p50_ns / (double)period;
		}
	}
}

/* Every xrun's cause, and each stage's share of them (the driver's). */
static void collect_causes(const struct cycle_side *d, struct cycle_result *cr)
{
	cr->causes_traced = d->traced;
	memcpy(cr->causes, d->causes, sizeof(cr->causes));
	cr->driver_preempted = d->driver_preempted;
	for (unsigned i = 0; i < cr->nstages && i < CYCLE_MAX_STAGES; i++) {
		cr->stages[i].blame = d->blame[i];
		cr->stages[i].xruns = d->blame[i].wait + d->blame[i].busy + d->blame[i].preempted;
	}
}

/* The completion times are the result's histogram (the driver's);
 * messages are cycles, so msgs/s is cycles per second. */
void cycle_collect(const struct side_stats *sides, unsigned n, struct result *res)
{
	struct cycle_result *cr = (struct cycle_result *)res->pat_result;
	const struct side_stats *drv = &sides[0];
	const struct cycle_side *d = drv->pat;
	const struct cycle_cell *cc = cycle_cell(&res->cell);
	const struct hist *tl;

	memset(cr, 0, sizeof(*cr));
	if (!d)
		return;
	tl = &d->b;
	cr->on = true;
	snprintf(cr->shape, sizeof(cr->shape), "%s", cycle_is_chain(&res->cell) ? "chain" : "fan");
	cr->period_ns = cc->period_ns;
	cr->deadline_ns = cc->deadline_ns;
	cr->cycles = d->cycles;
	cr->xruns = d->xruns;
	cr->late_starts = d->late_starts;
	cr->xruns_per_million = cr->cycles ? 1e6 * (double)cr->xruns / (double)cr->cycles : 0;
	if (drv->hist && drv->hist->count) {
		cr->cycle_p50_ns = hist_quantile(drv->hist, 0.50);
		cr->cycle_p99_ns = hist_quantile(drv->hist, 0.99);
		cr->cycle_p99_9_ns = hist_quantile(drv->hist, 0.999);
		cr->cycle_max_ns = drv->hist->max;
	}
	cr->timer_samples = tl->count;
	if (tl->count) {
		cr->timer_late_p50_ns = hist_quantile(tl, 0.50);
		cr->timer_late_p99_ns = hist_quantile(tl, 0.99);
		cr->timer_late_max_ns = tl->max;
		res->timer_late_mean_ns = hist_mean(tl);
	}
	collect_stages(sides, n, cc->period_ns, cr);
	collect_causes(d, cr);
	cr->series = d->series;
	res->msgs = cr->cycles;
	res->bytes = drv->bytes;
}

/* --trace: each stage's woken-to-running latency from the scheduler's events. */
void cycle_collect_trace(struct result *res)
{
	struct cycle_result *cr = (struct cycle_result *)res->pat_result;

	if (!cr->on || !res->trace.on)
		return;
	for (unsigned i = 0; i < res->trace.nsides && i < TRACE_MAX_SIDES; i++) {
		const struct trace_side *t = &res->trace.sides[i];
		struct cycle_stage *sg;

		if (t->server || t->id >= cr->nstages || !t->lat_count)
			continue;
		sg = &cr->stages[t->id];
		sg->traced = true;
		sg->woken_p50_ns = t->lat_p50_ns;
		sg->woken_p99_ns = t->lat_p99_ns;
		sg->woken_max_ns = t->lat_max_ns;
	}
}

/* "N cycles, M xruns": the driver's so far. */
void cycle_live(const struct side_stats *sides, unsigned n, char *buf, size_t len)
{
	const struct cycle_side *d = n ? sides[0].pat : NULL;
	unsigned long long cycles = 0, xruns = 0;

	if (d) {
		cycles = atomic_load_explicit(&d->cycles_live, memory_order_relaxed);
		xruns = atomic_load_explicit(&d->xruns_live, memory_order_relaxed);
	}
	snprintf(buf, len, "%llu cycles, %llu xruns", cycles, xruns);
}
