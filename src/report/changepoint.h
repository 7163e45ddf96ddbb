/* SPDX-License-Identifier: MIT */
/* Change points in a series of measurements (src/report/changepoint.c):
 * E-Divisive with means (Matteson & James, 2014: energy statistic, the
 * hierarchical bisection, a permutation test), as MongoDB's and Hunter's
 * performance CI use it, over the logarithms of the values, seeded so that
 * the same series always gives the same answer. docs/history.md. */
#ifndef IPCLAB_REPORT_CHANGEPOINT_H
#define IPCLAB_REPORT_CHANGEPOINT_H

#include <stddef.h>
#include <stdint.h>

struct cp_opts {
	double alpha;			/* significance of the permutation test (0.01) */
	unsigned permutations;		/* per test (199) */
	unsigned min_segment;		/* fewest points on either side of a change (3) */
	double min_change_pct;		/* smaller steps are not reported (0) */
	uint64_t seed;			/* the permutations' generator */
	unsigned max_changes;		/* at most this many (0: 64) */
};

/* The defaults above. */
void cp_opts_defaults(struct cp_opts *o);

struct cp_change {
	size_t index;			/* the first point after the change */
	double before, after;		/* means of the segments on each side */
	double ratio;			/* after / before */
	double p_value;			/* of the permutation test that found it */
};

/* Change points of v[0..n) in order of index, into out[0..max); returns
 * how many, or -EINVAL (a value not finite), -ENOMEM. halfw[i], when halfw
 * is not NULL, is point i's own 95 % interval half-width (NAN: none): a
 * step no larger than the median half-width of the points on both sides
 * is within the measurements' own noise and is not reported. */
int cp_detect(const double *v, const double *halfw, size_t n, const struct cp_opts *o,
	      struct cp_change *out, size_t max);

/* Two groups (a baseline a[0..na), a candidate b[0..nb)) under the same
 * energy statistic at their boundary: the permutation test's p-value --
 * exact, over every split, where there are at most 20000 of them -- or NAN
 * with fewer than two values on a side. The smallest p it can give is
 * 1 / cp_two_sample_count(na, nb) (or 1 / (permutations + 1)). */
double cp_two_sample_p(const double *a, size_t na, const double *b, size_t nb,
		       const struct cp_opts *o);
/* The number of ways to split na + nb values into na and nb. */
double cp_two_sample_count(size_t na, size_t nb);

#endif
