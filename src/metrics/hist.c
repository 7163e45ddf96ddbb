// SPDX-License-Identifier: MIT
/* Log-linear latency histogram; the layout and its error bound are described
 * in include/ipclab/metrics.h. */
#include <string.h>

#include "ipclab/metrics.h"
#include "ipclab/stats.h"

void hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

uint64_t hist_bucket_lower(unsigned i)
{
	if (i < HIST_EXACT)
		return i;
	unsigned k = (i - HIST_EXACT) / HIST_SUB, sub = (i - HIST_EXACT) % HIST_SUB;
	unsigned e = k + HIST_SUB_BITS + 1;

	return (1ull << e) + ((uint64_t)sub << (e - HIST_SUB_BITS));
}

uint64_t hist_bucket_width(unsigned i)
{
	if (i < HIST_EXACT)
		return 1;
	return 1ull << ((i - HIST_EXACT) / HIST_SUB + 1);
}

void hist_merge(struct hist *dst, const struct hist *src)
{
	if (!src->count)
		return;
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		dst->buckets[i] += src->buckets[i];
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

/* The value of rank RANK (from 1, at most count): its bucket's middle,
 * kept inside [min, max]. */
static uint64_t at_rank(const struct hist *h, uint64_t rank)
{
	uint64_t seen = 0;

	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		seen += h->buckets[i];
		if (seen >= rank) {
			uint64_t v = hist_bucket_lower(i) + hist_bucket_width(i) / 2;

			if (v < h->min)
				v = h->min;
			if (v > h->max)
				v = h->max;
			return v;
		}
	}
	return h->max;
}

uint64_t hist_quantile(const struct hist *h, double q)
{
	uint64_t rank;

	if (!h->count)
		return 0;
	if (q <= 0)
		return h->min;
	if (q >= 1)
		return h->max;
	/* nearest rank: the smallest value with at least q*count values <= it */
	rank = (uint64_t)(q * (double)h->count + 0.999999999);
	if (rank < 1)
		rank = 1;
	return at_rank(h, rank);
}

int hist_median_ci(const struct hist *h, double alpha, double *lo, double *hi)
{
	uint64_t j;
	int rc = stats_median_ranks(h->count, alpha, &j);

	if (rc)
		return rc;
	*lo = (double)at_rank(h, j);
	*hi = (double)at_rank(h, h->count + 1 - j);
	return 0;
}

double hist_mean(const struct hist *h)
{
	return h->count ? h->sum / (double)h->count : 0;
}
