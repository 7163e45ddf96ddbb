/* SPDX-License-Identifier: MIT */
/* Latency histogram, per-side statistics and system counters. */
#ifndef IPCLAB_METRICS_H
#define IPCLAB_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Log-linear histogram of nanosecond values, fixed memory, no allocation.
 * Values below 256 ns are counted exactly; above, each power of two is cut
 * into 128 equal buckets, so a bucket spans at most 1/128 of its lower bound
 * and a reported value (the bucket's midpoint) is within 0.4 % of every value
 * counted in it (relative error bound <= 1/256). Values up to 2^48 ns (78 h);
 * larger ones go to the last bucket. min, max and the sum are exact. */
#define HIST_SUB_BITS 7
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_EXACT (2u * HIST_SUB)
#define HIST_MAX_EXP 48
#define HIST_BUCKETS (HIST_EXACT + (HIST_MAX_EXP - HIST_SUB_BITS - 1) * HIST_SUB)

/* What a result's latencies measure ("lat_kind" in the result record): no
 * pattern ran, a round trip (send to reply), one way (send to receive), or
 * a periodic pattern's period (its intended start to its work's end; its
 * key and words are those of the one periodic pattern, "cycle"). */
enum lat_kind { LAT_NONE, LAT_RTT, LAT_ONE_WAY, LAT_PERIOD };
/* Its key in JSON and CSV ("" for LAT_NONE), its word in the text table
 * and its figures' title: one table (src/metrics/lat_kind.c). */
const char *lat_kind_key(enum lat_kind k);
const char *lat_kind_text(enum lat_kind k);
const char *lat_kind_title(enum lat_kind k);
/* A key read back from a result file; LAT_NONE when NULL or unknown. */
enum lat_kind lat_kind_parse(const char *key);

struct hist {
	uint64_t count;
	uint64_t min, max;
	double sum;
	uint64_t buckets[HIST_BUCKETS];
};

void hist_init(struct hist *h);
static inline unsigned hist_index(uint64_t v)
{
	if (v < HIST_EXACT)
		return (unsigned)v;
	unsigned e = 63u - (unsigned)__builtin_clzll(v);	/* >= 8 */
	if (e >= HIST_MAX_EXP)
		return HIST_BUCKETS - 1;
	return HIST_EXACT + (e - HIST_SUB_BITS - 1) * HIST_SUB +
	       (unsigned)((v >> (e - HIST_SUB_BITS)) & (HIST_SUB - 1));
}
static inline void hist_add(struct hist *h, uint64_t v)
{
	h->buckets[hist_index(v)]++;
	h->count++;
	h->sum += (double)v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}
/* Lower bound and width of bucket i. */
uint64_t hist_bucket_lower(unsigned i);
uint64_t hist_bucket_width(unsigned i);
void hist_merge(struct hist *dst, const struct hist *src);
/* Value at quantile q in [0, 1] (nearest-rank), clamped to [min, max]. */
uint64_t hist_quantile(const struct hist *h, double q);
/* A distribution-free interval of the median at level 1 - alpha, from the
 * order statistics of the values counted (stats_median_ranks), each the
 * middle of its bucket; 0, or -EDOM with too few values. */
int hist_median_ci(const struct hist *h, double alpha, double *lo, double *hi);
double hist_mean(const struct hist *h);

/* CPU usage and context switches of one side over its measured window. */
struct rusage_snap {
	uint64_t user_ns, sys_ns;
	uint64_t vol_cs, invol_cs;
};
int rusage_snap_take(struct rusage_snap *s, bool thread);
void rusage_snap_diff(struct rusage_snap *out, const struct rusage_snap *a,
		      const struct rusage_snap *b);

/* System-wide view from /proc/stat (what vmstat shows). */
#define SYS_MAX_CPUS 64
struct sys_snap {
	uint64_t ctxt, intr;
	unsigned ncpu;
	/* per CPU (index cpu+1) and total (index 0), in USER_HZ ticks: busy =
	 * user + nice + system + irq + softirq + steal; sys = system + irq +
	 * softirq; irq = irq + softirq; steal alone (a hypervisor's other work) */
	uint64_t busy[SYS_MAX_CPUS + 1], user[SYS_MAX_CPUS + 1], sys[SYS_MAX_CPUS + 1],
		total[SYS_MAX_CPUS + 1], irq[SYS_MAX_CPUS + 1], steal[SYS_MAX_CPUS + 1];
	uint64_t t_ns;
};
int sys_snap_take(struct sys_snap *s);
/* The same from a file in /proc/stat's format (a fake tree's). */
int sys_snap_read(const char *path, struct sys_snap *s);

/* Cost and resolution of the clock, measured at start. */
struct clock_info {
	double cost_ns;
	uint64_t resolution_ns;
};
void clock_measure(struct clock_info *ci);

#endif
