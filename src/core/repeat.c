// SPDX-License-Identifier: MIT
/* --repeat: fold the repetitions of one cell into one result whose metrics
 * are medians, keeping per metric min, max and spread (max-min over the
 * median), the 95 % order-statistic interval of the median, the two
 * clusters when its values fall in two (a VM's fast and slow modes), and
 * the values themselves (at most REPEAT_MAX_VALUES) so that compare can test
 * one file's repetitions against another's. A cell whose headline metric
 * spreads over NOISY_PCT is flagged noisy; one whose headline falls in two
 * clusters, bimodal. The histogram and per-side figures are those of the
 * repetition whose headline metric is the median one. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/result.h"
#include "ipclab/stats.h"

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
enum { M_MSGS_PER_S = 1, M_LAT_P50 = 5 };

#define ARRAY_LEN (sizeof(rep_metrics) / sizeof(rep_metrics[0]))
_Static_assert(ARRAY_LEN <= sizeof(((struct result *)0)->repeat) / sizeof(struct repeat_stat),
	       "repeat[] holds every metric");

static bool is_rtt(const struct result *r)
{
	return r->lat_kind == LAT_RTT;
}

const char *result_headline_key(const struct result *r)
{
	return rep_metrics[is_rtt(r) ? M_LAT_P50 : M_MSGS_PER_S].key;
}

const struct repeat_stat *result_repeat_stat(const struct result *r, const char *key)
{
	for (unsigned i = 0; i < r->n_repeat_stats && i < ARRAY_LEN; i++)
		if (r->repeat[i].key && !strcmp(r->repeat[i].key, key))
			return &r->repeat[i];
	return NULL;
}

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

static double median(double *v, unsigned n)
{
	stats_sort(v, n);
	return stats_median_sorted(v, n);
}

/* Index of the repetition whose headline value is the median. */
static unsigned median_rep(const struct result *reps, unsigned n)
{
	const struct rep_metric *m = &rep_metrics[is_rtt(&reps[0]) ? M_LAT_P50 : M_MSGS_PER_S];
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

double repeat_headline_ci_pct(const struct result *reps, unsigned n)
{
	const struct rep_metric *m = &rep_metrics[is_rtt(&reps[0]) ? M_LAT_P50 : M_MSGS_PER_S];
	double v[n ? n : 1], lo, hi, med;

	for (unsigned i = 0; i < n; i++) {
		if (reps[i].status != RES_OK)
			return NAN;
		v[i] = get(&reps[i], m);
	}
	if (n > STATS_MAX_N)
		return NAN;
	med = median(v, n);
	if (stats_median_ci(v, n, &lo, &hi))
		return NAN;
	return stats_ci_pct(med, lo, hi);
}

double result_headline_ci_pct(const struct result *r)
{
	const struct rep_metric *m = &rep_metrics[is_rtt(r) ? M_LAT_P50 : M_MSGS_PER_S];
	const struct repeat_stat *st = result_repeat_stat(r, m->key);

	if (!st || isnan(st->ci_lo) || r->status != RES_OK)
		return NAN;
	return stats_ci_pct(get(r, m), st->ci_lo, st->ci_hi);
}

/* One metric over the n repetitions: its statistics into st, the median
 * returned. The values are kept in run order, thinned evenly to
 * REPEAT_MAX_VALUES. */
static double fold_metric(const struct result *reps, unsigned n, const struct rep_metric *m,
			  struct repeat_stat *st)
{
	double v[n], med;
	struct stats_modes modes;

	*st = (struct repeat_stat){ .key = m->key, .ci_lo = NAN, .ci_hi = NAN };
	st->n_values = n < REPEAT_MAX_VALUES ? n : REPEAT_MAX_VALUES;
	for (unsigned k = 0; k < st->n_values; k++)
		st->values[k] = get(&reps[(size_t)k * n / st->n_values], m);
	for (unsigned i = 0; i < n; i++)
		v[i] = get(&reps[i], m);
	med = median(v, n);
	st->min = v[0];
	st->max = v[n - 1];
	st->spread_pct = med ? 100.0 * (v[n - 1] - v[0]) / fabs(med) : 0;
	if (n <= STATS_MAX_N && stats_median_ci(v, n, &st->ci_lo, &st->ci_hi)) {
		st->ci_lo = NAN;
		st->ci_hi = NAN;
	}
	if (n <= STATS_MAX_N && stats_bimodal(v, n, &modes)) {
		st->bimodal = true;
		st->n_low = (unsigned)modes.n_low;
		st->n_high = (unsigned)modes.n_high;
		st->low_median = modes.low_median;
		st->high_median = modes.high_median;
		st->split = modes.split;
	}
	return med;
}

void repeat_fold(struct result *reps, unsigned n)
{
	const bool rtt = is_rtt(&reps[0]);
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
	bool noisy = false, bimodal = false;

	/* statistics first: keeping the median repetition overwrites reps[0] */
	for (size_t k = 0; k < ARRAY_LEN; k++) {
		const struct rep_metric *m = &rep_metrics[k];

		meds[k] = fold_metric(reps, n, m, &stats[k]);
		/* the pattern's headline: p50 RTT for ping-pong, msgs/s otherwise */
		if (m->headline && (m->off == offsetof(struct result, lat_p50_ns)) == rtt) {
			noisy = stats[k].spread_pct > NOISY_PCT;
			bimodal = stats[k].bimodal;
		}
	}
	pick = median_rep(reps, n);
	if (pick)
		reps[0] = reps[pick];
	reps[0].repeat_n = n;
	reps[0].noisy = noisy;
	reps[0].bimodal = bimodal;
	reps[0].n_repeat_stats = ARRAY_LEN;
	for (size_t k = 0; k < ARRAY_LEN; k++) {
		reps[0].repeat[k] = stats[k];
		set(&reps[0], &rep_metrics[k], meds[k]);
	}
}
