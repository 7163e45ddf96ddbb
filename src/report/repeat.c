// SPDX-License-Identifier: MIT
/* --repeat: fold the repetitions of one cell into one result whose metrics
 * are medians, keeping min, max and spread (max-min over the median) per
 * metric, and flagging a cell whose headline metric spread exceeds
 * NOISY_PCT. The histogram and per-side figures are those of the
 * repetition whose headline metric is the median one. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/report.h"

struct rep_metric {
	const char *key;
	size_t off;
	bool is_double;
	bool headline;
};

#define RD(k, h) { #k, offsetof(struct result, k), true, h }
#define RU(k, h) { #k, offsetof(struct result, k), false, h }
static const struct rep_metric rep_metrics[] = {
	RU(elapsed_ns, false), RD(msgs_per_s, true), RD(bytes_per_s, false),
	RU(lat_min_ns, false), RD(lat_mean_ns, false), RU(lat_p50_ns, true),
	RU(lat_p90_ns, false), RU(lat_p99_ns, false), RU(lat_p99_9_ns, false),
	RU(lat_p99_99_ns, false), RU(lat_max_ns, false), RD(cpu_pct_total, false),
	RD(cpu_ns_per_msg, false), RD(sys_ctx_switches_per_s, false),
	RD(sys_intr_per_s, false), RD(sys_busy_pct, false),
};

#define ARRAY_LEN (sizeof(rep_metrics) / sizeof(rep_metrics[0]))
_Static_assert(ARRAY_LEN <= sizeof(((struct result *)0)->repeat) / sizeof(struct repeat_stat),
	       "repeat[] holds every metric");

static double get(const struct result *r, const struct rep_metric *m)
{
	const char *p = (const char *)r + m->off;

	if (m->is_double)
		return *(const double *)p;
	return (double)*(const uint64_t *)p;
}

static void set(struct result *r, const struct rep_metric *m, double v)
{
	char *p = (char *)r + m->off;

	if (m->is_double)
		*(double *)p = v;
	else
		*(uint64_t *)p = (uint64_t)llround(v);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Index of the repetition whose headline value is the median. */
static unsigned median_rep(const struct result *reps, unsigned n)
{
	const bool rtt = reps[0].lat_kind && strcmp(reps[0].lat_kind, "rtt") == 0;
	const struct rep_metric *m = &rep_metrics[rtt ? 5 : 1];
	double v[n], med;
	unsigned best = 0;

	for (unsigned i = 0; i < n; i++)
		v[i] = get(&reps[i], m);
	med = median(v, n);
	for (unsigned i = 1; i < n; i++)
		if (fabs(get(&reps[i], m) - med) < fabs(get(&reps[best], m) - med))
			best = i;
	return best;
}

void repeat_fold(struct result *reps, unsigned n)
{
	const bool rtt = reps[0].lat_kind && strcmp(reps[0].lat_kind, "rtt") == 0;
	unsigned pick;

	/* a failed (or skipped) repetition decides the cell, with its reason */
	for (unsigned i = 0; i < n; i++) {
		if (reps[i].status != RES_OK) {
			if (i)
				reps[0] = reps[i];
			return;
		}
	}
	struct repeat_stat stats[ARRAY_LEN];
	double meds[ARRAY_LEN];
	bool noisy = false;

	/* statistics first: keeping the median repetition overwrites reps[0] */
	for (size_t k = 0; k < ARRAY_LEN; k++) {
		const struct rep_metric *m = &rep_metrics[k];
		double v[n];

		for (unsigned i = 0; i < n; i++)
			v[i] = get(&reps[i], m);
		meds[k] = median(v, n);
		stats[k] = (struct repeat_stat){ .key = m->key, .min = v[0], .max = v[n - 1],
						 .spread_pct = meds[k] ? 100.0 * (v[n - 1] - v[0]) /
									 fabs(meds[k]) : 0 };
		/* the pattern's headline: p50 RTT for ping-pong, msgs/s otherwise */
		if (m->headline && stats[k].spread_pct > NOISY_PCT &&
		    (m->off == offsetof(struct result, lat_p50_ns)) == rtt)
			noisy = true;
	}
	pick = median_rep(reps, n);
	if (pick)
		reps[0] = reps[pick];
	reps[0].repeat_n = n;
	reps[0].noisy = noisy;
	reps[0].n_repeat_stats = ARRAY_LEN;
	for (size_t k = 0; k < ARRAY_LEN; k++) {
		reps[0].repeat[k] = stats[k];
		set(&reps[0], &rep_metrics[k], meds[k]);
	}
}
