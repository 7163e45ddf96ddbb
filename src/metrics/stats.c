// SPDX-License-Identifier: MIT
/* Statistics over repetitions (ipclab/stats.h). Every method here is
 * distribution-free: a benchmark's repetitions are neither normal nor
 * symmetric (a VM's fast and slow modes, a tail of preempted runs), so the
 * interval of a median comes from order statistics, two samples are
 * compared by ranks (Mann-Whitney U), and the interval of their ratio is
 * the Hodges-Lehmann one that goes with that test. The exact null
 * distribution of U is the q-binomial coefficient [nx+ny choose nx]. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/stats.h"

#define MW_MAX_U (STATS_MAX_SAMPLE * STATS_MAX_SAMPLE)
/* mw_counts' work space: a step's product reaches degree a*b + a */
#define MW_COUNTS_LEN (MW_MAX_U + STATS_MAX_SAMPLE + 1)

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void stats_sort(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
}

double stats_median_sorted(const double *s, size_t n)
{
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

double stats_median(double *v, size_t n)
{
	stats_sort(v, n);
	return stats_median_sorted(v, n);
}

/* P(B = i) for B ~ Binomial(n, 1/2), in log space: 2^-n underflows for n
 * near STATS_MAX_N. */
static double binom_half_pmf(size_t n, size_t i)
{
	return exp(lgamma((double)n + 1) - lgamma((double)i + 1) - lgamma((double)(n - i) + 1) -
		   (double)n * M_LN2);
}

int stats_median_ci(const double *s, size_t n, double *lo, double *hi)
{
	uint64_t j;

	/* coverage of [s(j), s(n+1-j)] is 1 - 2 P(B <= j-1): the largest j
	 * that keeps it at 95 % or more (exact: n <= STATS_MAX_N) */
	if (n < STATS_CI_MIN_N || stats_median_ranks(n, STATS_ALPHA, &j))
		return -EDOM;
	*lo = s[j - 1];
	*hi = s[n - j];
	return 0;
}

/* The z with P(Z > z) = p for a standard normal Z (0 < p < 0.5): erfc is
 * monotone, so bisection to well below a rank's worth. */
static double normal_upper_z(double p)
{
	double lo = 0, hi = 40;

	for (int i = 0; i < 100; i++) {
		double mid = (lo + hi) / 2;

		if (0.5 * erfc(mid / M_SQRT2) > p)
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

int stats_median_ranks(uint64_t n, double alpha, uint64_t *j)
{
	double below = 0;
	uint64_t r = 0;

	if (!(alpha > 0 && alpha < 1) || n < 2)
		return -EDOM;
	if (n <= STATS_RANKS_EXACT_N) {
		while (r + 1 <= n / 2 && 2 * (below + binom_half_pmf((size_t)n, (size_t)r)) <= alpha)
			below += binom_half_pmf((size_t)n, (size_t)r++);
	} else {
		/* B ~ N(n/2, n/4) with the continuity correction:
		 * P(B <= j - 1) ~ Phi((j - 0.5 - n/2) / (sqrt(n)/2)) <= alpha/2
		 * for j <= n/2 - z sqrt(n)/2 + 0.5 */
		double z = normal_upper_z(alpha / 2), x = (double)n / 2 - z * sqrt((double)n) / 2 + 0.5;

		r = x >= 1 ? (uint64_t)floor(x) : 0;
	}
	if (!r)
		return -EDOM;
	*j = r;
	return 0;
}

double stats_ci_pct(double med, double lo, double hi)
{
	double d = fmax(fabs(med - lo), fabs(hi - med));

	return med != 0 ? 100 * d / fabs(med) : NAN;
}

bool stats_bimodal(const double *s, size_t n, struct stats_modes *m)
{
	size_t minc = (size_t)ceil(STATS_MODE_MIN_FRAC * (double)n), cut = 0;
	double gap = -1, wl, wh;

	if (minc < STATS_MODE_MIN_N)
		minc = STATS_MODE_MIN_N;
	if (n < STATS_CI_MIN_N || n > STATS_MAX_N || !(s[0] > 0))
		return false;
	/* the widest admissible gap: cut after index i */
	for (size_t i = minc - 1; i + minc < n; i++) {
		double g = log(s[i + 1]) - log(s[i]);

		if (g > gap) {
			gap = g;
			cut = i;
		}
	}
	if (gap < 0)
		return false;
	wl = log(s[cut]) - log(s[0]);
	wh = log(s[n - 1]) - log(s[cut + 1]);
	if (gap < log1p(STATS_MODE_MIN_GAP) || gap < STATS_MODE_GAP_RATIO * fmax(wl, wh))
		return false;
	m->n_low = cut + 1;
	m->n_high = n - cut - 1;
	m->low_median = stats_median_sorted(s, m->n_low);
	m->high_median = stats_median_sorted(s + m->n_low, m->n_high);
	m->split = sqrt(s[cut] * s[cut + 1]);
	return true;
}

/* The null distribution of U for sizes (a, b): c[u] = the number of the
 * C(a+b, a) orderings with U = u, the coefficients of the q-binomial
 * [a+b choose a] = prod_{i=1..a} (1 - q^(b+i)) / (1 - q^i). After step i
 * the polynomial is [b+i choose i], so nothing grows past C(a+b, a);
 * c holds a*b + a + 1 values. */
static void mw_counts(size_t a, size_t b, double *c)
{
	size_t deg = 0;

	memset(c, 0, (a * b + a + 1) * sizeof(*c));
	c[0] = 1;
	for (size_t i = 1; i <= a; i++) {
		size_t up = b + i;

		for (size_t u = deg + up; u >= up; u--)	/* * (1 - q^up) */
			c[u] -= c[u - up];
		deg += up;
		for (size_t u = i; u + i <= deg; u++)	/* / (1 - q^i) */
			c[u] += c[u - i];
		for (size_t u = deg - i + 1; u <= deg; u++)
			c[u] = 0;
		deg -= i;
	}
}

static double mw_total(const double *c, size_t len)
{
	double t = 0;

	for (size_t u = 0; u < len; u++)
		t += c[u];
	return t;
}

/* Two-sided exact p of an integer U. */
static double mw_exact_p(size_t nx, size_t ny, double u)
{
	double c[MW_COUNTS_LEN], below = 0, total;
	size_t len = nx * ny + 1, k = (size_t)u, lowk = k <= nx * ny - k ? k : nx * ny - k;

	mw_counts(nx, ny, c);
	total = mw_total(c, len);
	for (size_t i = 0; i <= lowk; i++)
		below += c[i];
	return fmin(1, 2 * below / total);
}

double stats_mw_min_p(size_t nx, size_t ny)
{
	if (!nx || !ny || nx > STATS_MAX_SAMPLE || ny > STATS_MAX_SAMPLE)
		return 1;
	return mw_exact_p(nx, ny, 0);
}

struct ranked {
	double v;
	bool from_x;
};

static int cmp_ranked(const void *a, const void *b)
{
	return cmp_double(&((const struct ranked *)a)->v, &((const struct ranked *)b)->v);
}

/* The rank sum of x (midranks for ties) and the tie term sum(t^3 - t). */
static double rank_sum_x(struct ranked *all, size_t n, double *ties)
{
	double rx = 0;

	qsort(all, n, sizeof(*all), cmp_ranked);
	*ties = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j + 1 < n && all[j + 1].v == all[i].v)
			j++;
		double t = (double)(j - i + 1), mid = (double)(i + j) / 2 + 1;

		*ties += t * t * t - t;
		for (size_t k = i; k <= j; k++)
			rx += all[k].from_x ? mid : 0;
		i = j + 1;
	}
	return rx;
}

int stats_mann_whitney(const double *x, size_t nx, const double *y, size_t ny,
		       struct stats_mw *out)
{
	struct ranked all[2 * STATS_MAX_SAMPLE];
	double n = (double)(nx + ny), ties, mu, var, z;

	if (!nx || !ny || nx > STATS_MAX_SAMPLE || ny > STATS_MAX_SAMPLE)
		return -EINVAL;
	for (size_t i = 0; i < nx; i++)
		all[i] = (struct ranked){ x[i], true };
	for (size_t j = 0; j < ny; j++)
		all[nx + j] = (struct ranked){ y[j], false };
	out->u = rank_sum_x(all, nx + ny, &ties) - (double)nx * ((double)nx + 1) / 2;
	out->exact = ties == 0;
	if (out->exact) {
		out->p_value = mw_exact_p(nx, ny, out->u);
		return 0;
	}
	mu = (double)nx * (double)ny / 2;
	var = (double)nx * (double)ny / 12 * ((n + 1) - ties / (n * (n - 1)));
	if (!(var > 0)) {		/* every value the same */
		out->p_value = 1;
		return 0;
	}
	z = fmax(0, fabs(out->u - mu) - 0.5) / sqrt(var);	/* continuity-corrected */
	out->p_value = fmin(1, erfc(z / M_SQRT2));
	return 0;
}

/* The rank k (from 1) of the Hodges-Lehmann interval [d(k), d(nx*ny+1-k)]:
 * the largest k with P(U <= k-1) <= alpha/2; 0 when there is none. */
static size_t hl_rank(size_t nx, size_t ny)
{
	double c[MW_COUNTS_LEN], total, cum = 0;
	size_t k = 0;

	mw_counts(nx, ny, c);
	total = mw_total(c, nx * ny + 1);
	while (k < nx * ny / 2 && (cum + c[k]) / total <= STATS_ALPHA / 2)
		cum += c[k++];
	return k;
}

int stats_ratio_ci(const double *x, size_t nx, const double *y, size_t ny, double *est,
		   double *lo, double *hi)
{
	double d[MW_MAX_U], xs[STATS_MAX_SAMPLE], mx;
	bool logs = true;
	size_t k, nd = nx * ny;

	if (!nx || !ny || nx > STATS_MAX_SAMPLE || ny > STATS_MAX_SAMPLE)
		return -EINVAL;
	memcpy(xs, x, nx * sizeof(*x));
	stats_sort(xs, nx);
	mx = stats_median_sorted(xs, nx);
	for (size_t i = 0; i < nx; i++)
		logs &= x[i] > 0;
	for (size_t j = 0; j < ny; j++)
		logs &= y[j] > 0;
	if (!(mx > 0) || !(k = hl_rank(nx, ny)))
		return -EDOM;
	for (size_t i = 0; i < nx; i++)
		for (size_t j = 0; j < ny; j++)
			d[i * ny + j] = logs ? log(y[j]) - log(x[i]) : y[j] - x[i];
	stats_sort(d, nd);
	*est = stats_median_sorted(d, nd);
	*lo = d[k - 1];
	*hi = d[nd - k];
	if (logs) {
		*est = exp(*est);
		*lo = exp(*lo);
		*hi = exp(*hi);
	} else {
		*est = 1 + *est / mx;
		*lo = 1 + *lo / mx;
		*hi = 1 + *hi / mx;
	}
	return 0;
}

enum stats_verdict stats_ratio_verdict(double lo, double hi, double margin)
{
	double top = 1 + margin;

	if (isnan(lo) || isnan(hi) || !(margin > 0) || lo > hi)
		return SV_UNKNOWN;
	if (lo >= 1 / top && hi <= top)
		return SV_NO_DIFFERENCE;
	if (lo > 1 || hi < 1)
		return SV_DIFFERENT;
	return SV_TOO_NOISY;
}

const char *stats_verdict_name(enum stats_verdict v)
{
	switch (v) {
	case SV_NO_DIFFERENCE:
		return "no difference";
	case SV_DIFFERENT:
		return "different";
	case SV_TOO_NOISY:
		return "too noisy";
	default:
		return "unknown";
	}
}

/* log P(X = i) for X ~ Binomial(k, p), 0 < p < 1 */
static double binom_log_pmf(double k, double i, double p)
{
	return lgamma(k + 1) - lgamma(i + 1) - lgamma(k - i + 1) + i * log(p) + (k - i) * log1p(-p);
}

double stats_rate_test(unsigned long long x1, double t1, unsigned long long x2, double t2)
{
	double k = (double)x1 + (double)x2, p, at, sum = 0;

	if (!(t1 > 0) || !(t2 > 0) || isinf(t1) || isinf(t2))
		return NAN;
	if (k == 0)
		return 1;
	p = t1 / (t1 + t2);
	if (k > 1e6) {	/* past exact sums: the normal approximation of the binomial */
		double z = fabs((double)x1 - k * p) / sqrt(k * p * (1 - p));

		return fmin(1, erfc(z / M_SQRT2));
	}
	at = binom_log_pmf(k, (double)x1, p);
	for (double i = 0; i <= k; i++) {
		double l = binom_log_pmf(k, i, p);

		if (l <= at + 1e-9)	/* no more likely than what was seen */
			sum += exp(l);
	}
	return fmin(sum, 1);
}
