// SPDX-License-Identifier: MIT
/* Log-linear latency histogram; the layout and its error bound are described
 * in include/ipclab/metrics.h. */
#include <string.h>

#include "ipclab/metrics.h"

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

uint64_t hist_quantile(const struct hist *h, double q)
{
	uint64_t rank, seen = 0;

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

double hist_mean(const struct hist *h)
{
	return h->count ? h->sum / (double)h->count : 0;
}
