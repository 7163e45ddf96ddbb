// SPDX-License-Identifier: MIT
/* Turn the sides' records of one cell into its result: throughput over the
 * window, merged latency, CPU per side and per message, system view. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/runner.h"

static void collect_sides(const struct run_ctl_view *v, struct result *res, uint64_t *cpu_ns)
{
	uint64_t start = UINT64_MAX, end = 0;

	res->nsides = v->nsides;
	*cpu_ns = 0;
	for (unsigned i = 0; i < v->nsides; i++) {
		const struct side_stats *st = &v->sides[i];
		struct side_result *sr = &res->sides[i];
		uint64_t el = st->win_end_ns > st->win_start_ns ? st->win_end_ns - st->win_start_ns : 0;

		sr->role = st->role;
		sr->id = st->id;
		sr->user_ns = st->ru.user_ns;
		sr->sys_ns = st->ru.sys_ns;
		sr->poll_ns = st->poll_ns;
		sr->vol_cs = st->ru.vol_cs;
		sr->invol_cs = st->ru.invol_cs;
		sr->msgs = st->msgs;
		sr->bytes = st->bytes;
		sr->elapsed_ns = el;
		sr->cpu_pct = el ? 100.0 * (double)(st->ru.user_ns + st->ru.sys_ns) / (double)el : 0;
		*cpu_ns += st->ru.user_ns + st->ru.sys_ns;
		if (st->win_start_ns && st->win_start_ns < start)
			start = st->win_start_ns;
		if (st->win_end_ns > end)
			end = st->win_end_ns;
		if (st->role == TP_CLIENT) {
			res->msgs += st->msgs;
			res->bytes += st->bytes;
		}
		res->lost += st->lost;
		res->dups += st->dups;
		res->reorders += st->reorders;
		if (st->sample_every)
			res->sample_every = st->sample_every;
		if (st->zerocopy)
			res->zerocopy = true;
		if (st->serve_ready)
			res->serve_ready = true;
		if (st->serve_spin)
			res->serve_spin = true;
		if (st->has_hist && st->hist)
			hist_merge(&res->hist, st->hist);
	}
	res->elapsed_ns = end > start ? end - start : 0;
}

/* --rate: every paced side's round trips from the intended send time (a
 * round-trip pattern's), and its sends' lateness, merged. */
static void collect_paced(const struct run_ctl_view *v, struct result *res)
{
	struct hist *h = NULL;

	for (unsigned i = 0; i < v->nsides; i++) {
		const struct side_stats *st = &v->sides[i];

		if (!st->has_paced || !st->paced)
			continue;
		if (!h) {
			h = malloc(2 * sizeof(*h));
			if (!h)
				return;
			hist_init(&h[0]);
			hist_init(&h[1]);
		}
		hist_merge(&h[0], &st->paced->intended);
		hist_merge(&h[1], &st->paced->late);
	}
	if (h && h[0].count) {
		res->paced_samples = h[0].count;
		res->lat_intended_p50_ns = hist_quantile(&h[0], 0.50);
		res->lat_intended_p99_ns = hist_quantile(&h[0], 0.99);
		res->lat_intended_max_ns = h[0].max;
	}
	if (h && h[1].count) {
		res->late_samples = h[1].count;
		res->send_late_p50_ns = hist_quantile(&h[1], 0.50);
		res->send_late_p99_ns = hist_quantile(&h[1], 0.99);
		res->send_late_max_ns = h[1].max;
	}
	free(h);
}

static void collect_latency(struct result *res)
{
	const struct hist *h = &res->hist;

	res->lat_samples = h->count;
	if (!h->count)
		return;
	res->lat_min_ns = h->min;
	res->lat_max_ns = h->max;
	res->lat_mean_ns = hist_mean(h);
	res->lat_p50_ns = hist_quantile(h, 0.50);
	res->lat_p90_ns = hist_quantile(h, 0.90);
	res->lat_p99_ns = hist_quantile(h, 0.99);
	res->lat_p99_9_ns = hist_quantile(h, 0.999);
	res->lat_p99_99_ns = hist_quantile(h, 0.9999);
}

static void collect_system(const struct run_ctl_view *v, struct result *res)
{
	const struct sys_snap *a = v->sys0, *b = v->sys1;
	double secs = b->t_ns > a->t_ns ? (double)(b->t_ns - a->t_ns) / 1e9 : 0;

	if (!secs || !a->ncpu)
		return;
	res->sys_ctx_switches_per_s = (double)(b->ctxt - a->ctxt) / secs;
	res->sys_intr_per_s = (double)(b->intr - a->intr) / secs;
	if (b->total[0] > a->total[0])
		res->sys_busy_pct = 100.0 * (double)(b->busy[0] - a->busy[0]) /
				    (double)(b->total[0] - a->total[0]);
	res->ncpu = a->ncpu;
	for (unsigned c = 0; c < a->ncpu && c < SYS_MAX_CPUS; c++) {
		uint64_t tot = b->total[c + 1] - a->total[c + 1];

		/* no clock tick in the window: unknown, not idle */
		res->cpu_busy_pct[c] = tot ? 100.0 * (double)(b->busy[c + 1] - a->busy[c + 1]) /
						     (double)tot : NAN;
	}
}

/* Other tasks on the endpoints' CPUs over the window (interference.h):
 * the endpoints' and helpers' schedstat deltas against /proc/stat. */
static void collect_interference(const struct run_ctl_view *v, struct result *res)
{
	struct intf_task ep[MAX_SIDES], help[INTF_MAX_HELPERS];
	struct intf_window w = { .a = v->sys0, .b = v->sys1, .ep = ep, .help = help };
	const struct intf_helpers *h = v->helpers;
	double load[1];

	for (unsigned i = 0; i < v->nsides && i < MAX_SIDES; i++) {
		const struct side_stats *st = &v->sides[i];

		if (!st->sched_known)
			continue;	/* not read, or run on another host */
		ep[w.nep++] = (struct intf_task){
			.cpus = st->cpu_mask, .run_ns = st->sched.run_ns,
			.wait_ns = st->sched.wait_ns, .known = true,
			.window_ns = st->win_end_ns > st->win_start_ns ?
				     st->win_end_ns - st->win_start_ns : 0,
		};
	}
	for (unsigned i = 0; h && i < h->n && i < INTF_MAX_HELPERS; i++)
		if (h->ok0[i] && h->ok1[i] && h->run1[i] >= h->run0[i] && h->cpu[i] >= 0 &&
		    h->cpu[i] < INTF_MAX_CPUS)
			help[w.nhelp++] = (struct intf_task){ .cpus = UINT64_C(1) << h->cpu[i],
							      .run_ns = h->run1[i] - h->run0[i],
							      .known = true };
	intf_compute(&w, getloadavg(load, 1) == 1 ? load[0] : NAN, &res->intf);
}

void runner_collect(const struct run_ctl_view *v, struct result *res)
{
	uint64_t cpu_ns;

	hist_init(&res->hist);
	collect_sides(v, res, &cpu_ns);
	/* a pattern's own figures (which may count its messages its way) */
	if (res->cell.pat && res->cell.pat->collect && v->nsides)
		res->cell.pat->collect(v->sides, v->nsides, res);
	collect_latency(res);
	collect_paced(v, res);
	collect_system(v, res);
	collect_interference(v, res);
	if (res->elapsed_ns) {
		double secs = (double)res->elapsed_ns / 1e9;

		res->msgs_per_s = (double)res->msgs / secs;
		res->bytes_per_s = (double)res->bytes / secs;
		res->cpu_pct_total = 100.0 * (double)cpu_ns / (double)res->elapsed_ns;
	}
	if (res->msgs)
		res->cpu_ns_per_msg = (double)cpu_ns / (double)res->msgs;
	res->lat_kind = res->cell.pat ? res->cell.pat->lat_kind : LAT_NONE;
	res->status = RES_OK;
}
