// SPDX-License-Identifier: MIT
/* E-Divisive with means (Matteson & James, "A Nonparametric Approach for
 * Multiple Change Point Analysis of Multivariate Data", JASA 2014), the
 * method MongoDB's performance CI (Daly et al., ICPE 2020) and Hunter
 * (Fleming et al., ICPE 2023) run on noisy benchmark series.
 *
 * For a segment z[0..L) and a split t, X = z[0..t), Y = z[t..L):
 *   Q(t) = m k / (m + k) * (2/(m k) sum|x - y| - sum|x - x'| / C(m,2)
 *                           - sum|y - y'| / C(k,2))
 * (the energy distance with exponent 1, scaled by the sizes). The split of
 * largest Q over every segment is tested by permuting that segment's points
 * (R times, a seeded generator): p = (1 + #{Q* >= Q}) / (R + 1). While p <=
 * alpha the split is kept and the two halves are searched again. The
 * points are the logarithms of the values (a 2x step is the same distance
 * up or down); every split leaves min_segment points on each side. Each
 * Q(t) for all t costs O(L^2) through running sums of distances. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "changepoint.h"

void cp_opts_defaults(struct cp_opts *o)
{
	*o = (struct cp_opts){ .alpha = 0.01, .permutations = 199, .min_segment = 3,
			       .min_change_pct = 0, .seed = 0x1e5d1c0ffee5eedull,
			       .max_changes = 64 };
}

/* ---- the generator: splitmix64, so that a series always gives one answer ---- */

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void shuffle(double *z, size_t n, uint64_t *s)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)(((unsigned __int128)rng_next(s) * i) >> 64);
		double t = z[i - 1];

		z[i - 1] = z[j];
		z[j] = t;
	}
}

/* ---- the statistic ------------------------------------------------------------ */

static double q_value(double between, double wx, double wy, size_t m, size_t k)
{
	double dm = (double)m, dk = (double)k;

	return dm * dk / (dm + dk) *
	       (2 * between / (dm * dk) - wx / (dm * (dm - 1) / 2) - wy / (dk * (dk - 1) / 2));
}

/* The split of z[0..L) of largest Q with ms points on each side (ms >= 2);
 * wy: scratch of L + 1. Returns Q (-INFINITY when L < 2 ms). */
static double best_split(const double *z, size_t L, size_t ms, double *wy, size_t *tau)
{
	double wx = 0, best = -INFINITY;

	if (L < 2 * ms)
		return -INFINITY;
	wy[L] = wy[L - 1] = 0;	/* wy[t]: the sum of distances within z[t..L) */
	for (size_t t = L - 1; t-- > 0;) {
		double row = 0;

		for (size_t j = t + 1; j < L; j++)
			row += fabs(z[t] - z[j]);
		wy[t] = wy[t + 1] + row;
	}
	for (size_t t = 1; t < L; t++) {
		for (size_t i = 0; i + 1 < t; i++)	/* wx: within z[0..t) */
			wx += fabs(z[i] - z[t - 1]);
		if (t < ms || L - t < ms)
			continue;
		double q = q_value(wy[0] - wx - wy[t], wx, wy[t], t, L - t);

		if (q > best) {
			best = q;
			*tau = t;
		}
	}
	return best;
}

/* Q at the split t of z[0..L), directly. */
static double q_at(const double *z, size_t L, size_t t)
{
	double wx = 0, wy = 0, between = 0;

	for (size_t i = 0; i < L; i++)
		for (size_t j = i + 1; j < L; j++) {
			double d = fabs(z[i] - z[j]);

			if (j < t)
				wx += d;
			else if (i >= t)
				wy += d;
			else
				between += d;
		}
	return q_value(between, wx, wy, t, L - t);
}

/* A Q this close below the observed one counts as reaching it: equal
 * values give equal sums, summed in another order. */
static bool reaches(double q, double qhat)
{
	return q >= qhat - 1e-9 * fabs(qhat);
}

/* p-value of the best split of z[0..L) (its Q is qhat): permutations of
 * the segment, stopped as soon as p cannot come under alpha. */
static double perm_test(const double *z, size_t L, size_t ms, double qhat, const struct cp_opts *o,
			uint64_t salt, double *scratch, double *wy)
{
	uint64_t s = o->seed ^ (salt * 0x9e3779b97f4a7c15ull);
	unsigned r = o->permutations ? o->permutations : 199, hits = 0;
	unsigned enough = (unsigned)floor(o->alpha * (r + 1));	/* p > alpha past this */
	size_t tau;

	memcpy(scratch, z, L * sizeof(*z));
	for (unsigned i = 0; i < r; i++) {
		shuffle(scratch, L, &s);
		if (reaches(best_split(scratch, L, ms, wy, &tau), qhat) && ++hits >= enough)
			return (double)(hits + 1) / (r + 1);
	}
	return (double)(hits + 1) / (r + 1);
}

/* ---- the bisection -------------------------------------------------------------- */

struct seg {
	size_t start, len;
	double q;		/* best Q within it, -INFINITY when too short */
	size_t tau;		/* ... at start + tau */
};

struct work {
	const double *v, *halfw;
	double *z, *scratch, *wy;
	size_t n;
	size_t *cuts;		/* change indices found, with their p-values */
	double *pv;
	size_t ncuts;
};

static void seg_eval(struct work *w, struct seg *s, size_t ms)
{
	s->q = best_split(w->z + s->start, s->len, ms, w->wy, &s->tau);
}

static void add_cut(struct work *w, size_t at, double p)
{
	size_t i = w->ncuts;

	while (i > 0 && w->cuts[i - 1] > at) {
		w->cuts[i] = w->cuts[i - 1];
		w->pv[i] = w->pv[i - 1];
		i--;
	}
	w->cuts[i] = at;
	w->pv[i] = p;
	w->ncuts++;
}

/* Split while the best split of some segment passes the test. */
static int bisect(struct work *w, const struct cp_opts *o, size_t ms, size_t maxc)
{
	struct seg *segs = calloc(maxc + 1, sizeof(*segs));
	size_t nseg = 1;

	if (!segs)
		return -ENOMEM;
	segs[0] = (struct seg){ .start = 0, .len = w->n };
	seg_eval(w, &segs[0], ms);
	while (w->ncuts < maxc) {
		size_t b = 0;

		for (size_t i = 1; i < nseg; i++)
			if (segs[i].q > segs[b].q)
				b = i;
		if (!isfinite(segs[b].q))
			break;
		struct seg s = segs[b];
		double p = perm_test(w->z + s.start, s.len, ms, s.q, o, s.start * 1000003u + s.len,
				     w->scratch, w->wy);

		if (p > o->alpha)
			break;
		add_cut(w, s.start + s.tau, p);
		segs[b] = (struct seg){ .start = s.start, .len = s.tau };
		segs[nseg] = (struct seg){ .start = s.start + s.tau, .len = s.len - s.tau };
		seg_eval(w, &segs[b], ms);
		seg_eval(w, &segs[nseg++], ms);
	}
	free(segs);
	return 0;
}

/* ---- what is reported ---------------------------------------------------------- */

static double mean_of(const double *v, size_t a, size_t b)
{
	double s = 0;

	for (size_t i = a; i < b; i++)
		s += v[i];
	return s / (double)(b - a);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median half-width of the points of [a, b) that have one (NAN: none). */
static double median_halfw(const struct work *w, size_t a, size_t b)
{
	size_t k = 0;

	for (size_t i = a; w->halfw && i < b; i++)
		if (isfinite(w->halfw[i]))
			w->scratch[k++] = w->halfw[i];
	if (!k)
		return NAN;
	qsort(w->scratch, k, sizeof(double), cmp_dbl);
	return k % 2 ? w->scratch[k / 2] : (w->scratch[k / 2 - 1] + w->scratch[k / 2]) / 2;
}

/* Change i against its neighbours: filled into c; false when it is smaller
 * than min_change_pct or than the points' own intervals. */
static bool judge(struct work *w, size_t i, const struct cp_opts *o, struct cp_change *c)
{
	size_t a = i ? w->cuts[i - 1] : 0, at = w->cuts[i];
	size_t b = i + 1 < w->ncuts ? w->cuts[i + 1] : w->n;
	double hw = median_halfw(w, a, b), step;

	c->index = at;
	c->before = mean_of(w->v, a, at);
	c->after = mean_of(w->v, at, b);
	c->ratio = c->before != 0 ? c->after / c->before : NAN;
	c->p_value = w->pv[i];
	step = c->ratio > 0 ? fmax(c->ratio, 1 / c->ratio) - 1 : INFINITY;
	if (step * 100 < o->min_change_pct)
		return false;
	return !(isfinite(hw) && fabs(c->after - c->before) <= hw);
}

/* Drop the changes that do not hold, one at a time (each drop merges two
 * segments, so the others are judged again), then report the rest. */
static size_t report(struct work *w, const struct cp_opts *o, struct cp_change *out, size_t max)
{
	struct cp_change c;
	bool dropped = true;
	size_t k = 0;

	while (dropped) {
		dropped = false;
		for (size_t i = 0; i < w->ncuts && !dropped; i++) {
			if (judge(w, i, o, &c))
				continue;
			memmove(w->cuts + i, w->cuts + i + 1, (w->ncuts - i - 1) * sizeof(*w->cuts));
			memmove(w->pv + i, w->pv + i + 1, (w->ncuts - i - 1) * sizeof(*w->pv));
			w->ncuts--;
			dropped = true;
		}
	}
	for (size_t i = 0; i < w->ncuts && k < max; i++)
		if (judge(w, i, o, &out[k]))
			k++;
	return k;
}

/* log(v) where every value is positive, else v itself. */
static void to_points(const double *v, size_t n, double *z)
{
	bool pos = true;

	for (size_t i = 0; i < n; i++)
		pos &= v[i] > 0;
	for (size_t i = 0; i < n; i++)
		z[i] = pos ? log(v[i]) : v[i];
}

int cp_detect(const double *v, const double *halfw, size_t n, const struct cp_opts *o,
	      struct cp_change *out, size_t max)
{
	size_t ms = o->min_segment < 2 ? 2 : o->min_segment;
	size_t maxc = o->max_changes ? o->max_changes : 64;
	struct work w = { .v = v, .halfw = halfw, .n = n };
	int ret;

	for (size_t i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return -EINVAL;
	if (n < 2 * ms || !max)
		return 0;
	if (maxc > n / ms)
		maxc = n / ms;
	w.z = malloc(n * sizeof(double));
	w.scratch = malloc(n * sizeof(double));
	w.wy = malloc((n + 1) * sizeof(double));
	w.cuts = malloc((maxc + 1) * sizeof(size_t));
	w.pv = malloc((maxc + 1) * sizeof(double));
	ret = w.z && w.scratch && w.wy && w.cuts && w.pv ? 0 : -ENOMEM;
	if (!ret) {
		to_points(v, n, w.z);
		ret = bisect(&w, o, ms, maxc);
	}
	if (!ret)
		ret = (int)report(&w, o, out, max);
	free(w.z);
	free(w.scratch);
	free(w.wy);
	free(w.cuts);
	free(w.pv);
	return ret;
}

/* Q of the split mask (bit i set: z[i] in X, na of them), from the
 * distances d[n * n]. */
static double q_mask(const double *d, size_t n, uint32_t mask, size_t na)
{
	double wx = 0, wy = 0, between = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			bool xi = mask >> i & 1, xj = mask >> j & 1;

			if (xi && xj)
				wx += d[i * n + j];
			else if (!xi && !xj)
				wy += d[i * n + j];
			else
				between += d[i * n + j];
		}
	return q_value(between, wx, wy, na, n - na);
}

double cp_two_sample_count(size_t na, size_t nb)
{
	double c = 1;

	for (size_t i = 1; i <= nb; i++)
		c = c * (double)(na + i) / (double)i;
	return c;
}

/* Every split of n <= 24 points into na and n - na: the exact p-value. */
static double exact_p(const double *z, size_t n, size_t na)
{
	double d[24 * 24] = { 0 }, qhat, hits = 0, all = 0;
	uint32_t first = (1u << na) - 1, mask = first;

	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			d[i * n + j] = fabs(z[i] - z[j]);
	qhat = q_mask(d, n, first, na);
	while (mask < (1u << n)) {
		uint32_t c = mask & -mask, r = mask + c;

		hits += reaches(q_mask(d, n, mask, na), qhat);
		all++;
		mask = (((r ^ mask) >> 2) / c) | r;	/* the next set of na bits */
	}
	return hits / all;
}

double cp_two_sample_p(const double *a, size_t na, const double *b, size_t nb,
		       const struct cp_opts *o)
{
	size_t n = na + nb;
	double *v, *z, qhat, p;
	uint64_t s = o->seed ^ (n * 0x2545f4914f6cdd1dull);
	unsigned r = o->permutations ? o->permutations : 199, hits = 0;

	if (na < 2 || nb < 2)
		return NAN;
	v = malloc(n * sizeof(*v));
	z = malloc(n * sizeof(*z));
	if (!v || !z) {
		free(v);
		free(z);
		return NAN;
	}
	memcpy(v, a, na * sizeof(*a));
	memcpy(v + na, b, nb * sizeof(*b));
	to_points(v, n, z);
	if (n <= 24 && cp_two_sample_count(na, nb) <= 20000) {
		p = exact_p(z, n, na);
		goto out;
	}
	qhat = q_at(z, n, na);
	for (unsigned i = 0; i < r; i++) {
		shuffle(z, n, &s);
		hits += reaches(q_at(z, n, na), qhat);
	}
	p = (double)(hits + 1) / (r + 1);
out:
	free(v);
	free(z);
	return p;
}
