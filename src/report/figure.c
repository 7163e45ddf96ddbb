// SPDX-License-Identifier: MIT
/* The figures of a set of result cells, each computed once for both back
 * ends (figure.h): latency by percentile and the latency histogram (one
 * pair per latency kind: round trip and one-way never share a figure),
 * throughput and message rate against message size, CPU time per message.
 * Series are labelled with the parameters that vary among the figure's own
 * cells, less the one on the axis: a figure of round trips need not say
 * "pingpong" forty times. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/safe_print.h"
#include "ipclab/util.h"
#include "figure.h"

#define PCT_POINTS 75		/* percentile curve: p50 .. p99.99 */
#define BINS_PER_DECADE 20	/* latency histogram */
#define MAX_BINS 400		/* 20 decades */
#define MAX_NAMES 64

void figure_free(struct figure *f)
{
	for (size_t i = 0; i < f->ns; i++) {
		free(f->s[i].x);
		free(f->s[i].y);
		free(f->s[i].lo);
		free(f->s[i].hi);
		for (size_t k = 0; f->s[i].tips && k < f->s[i].n; k++)
			free(f->s[i].tips[k]);
		free(f->s[i].tips);
	}
	free(f->cats);
	free(f->rules);
	free(f->tick_at);
	free(f->tick_text);
	free(f->grid.rows);
	free(f->grid.cols);
	free(f->grid.v);
	free(f->grid.text);
	free(f->grid.tip);
	memset(f, 0, sizeof(*f));
}

struct fig_series *figure_series(struct figure *f, const char *label)
{
	if (f->ns == FIG_MAX_SERIES) {
		snprintf(f->note, sizeof(f->note), "more than %d series: the first %d drawn",
			 FIG_MAX_SERIES, FIG_MAX_SERIES);
		return NULL;
	}
	snprintf(f->s[f->ns].label, FIG_LABEL, "%s", label);
	return &f->s[f->ns++];
}

static int grow(void *pp, size_t n, size_t size)
{
	void **p = pp, *np = realloc(*p, n * size);

	if (!np)
		return -ENOMEM;
	*p = np;
	return 0;
}

/* Room for one point more in every array the series has; with more:
 * its intervals and tips too. */
static int room(struct fig_series *s, bool more)
{
	size_t cap = s->n < s->cap ? s->cap : s->cap ? 2 * s->cap : 16;

	if (cap != s->cap && (grow(&s->x, cap, sizeof(double)) || grow(&s->y, cap, sizeof(double))))
		return -ENOMEM;
	if ((more || s->lo) && cap != s->cap) {
		bool first = !s->lo;

		if (grow(&s->lo, cap, sizeof(double)) || grow(&s->hi, cap, sizeof(double)) ||
		    grow(&s->tips, cap, sizeof(char *)))
			return -ENOMEM;
		for (size_t k = first ? 0 : s->cap; k < cap; k++) {
			s->lo[k] = s->hi[k] = NAN;
			s->tips[k] = NULL;
		}
	} else if (more && !s->lo) {
		if (!(s->lo = malloc(cap * sizeof(double))) || !(s->hi = malloc(cap * sizeof(double))) ||
		    !(s->tips = calloc(cap, sizeof(char *))))
			return -ENOMEM;
		for (size_t k = 0; k < cap; k++)
			s->lo[k] = s->hi[k] = NAN;
	}
	s->cap = cap;
	return 0;
}

int figure_point(struct fig_series *s, double x, double y)
{
	if (room(s, false))
		return -ENOMEM;
	s->x[s->n] = x;
	s->y[s->n++] = y;
	return 0;
}

int figure_point_more(struct fig_series *s, double x, double y, double lo, double hi,
		      const char *tip)
{
	if (room(s, true) || (tip && !(s->tips[s->n] = strdup(tip))))
		return -ENOMEM;
	s->lo[s->n] = lo;
	s->hi[s->n] = hi;
	s->x[s->n] = x;
	s->y[s->n++] = y;
	return 0;
}

void fig_axis_title(const struct fig_axis *a, char *buf, size_t len)
{
	if (a->unit && a->unit[0])
		snprintf(buf, len, "%s (%s)", a->label, a->unit);
	else
		snprintf(buf, len, "%s", a->label);
}

/* ---- labels ----------------------------------------------------------------- */

/* Does a parameter take two values among these cells (one without it
 * counts as a value of its own)? */
static bool varies(const struct rcell *const *cells, size_t n, const char *name)
{
	for (size_t i = 1; i < n; i++)
		if (!rcell_same_label(cells[0], cells[i], &name, 1, NULL))
			return true;
	return false;
}

/* The file's parameters that vary among these cells, less the axis'. */
struct names {
	const char *v[MAX_NAMES];
	size_t n;
};

static void names_for(const struct fig_in *in, const struct rcell *const *cells, size_t n,
		      const char *axis, struct names *nm)
{
	const struct rfile *files[1] = { in->rf };
	const char *cand[MAX_NAMES];
	size_t nc = rf_varying(files, 1, true, cand, ARRAY_SIZE(cand));

	nm->n = 0;
	for (size_t i = 0; i < nc; i++)
		if ((!axis || strcmp(cand[i], axis)) && varies(cells, n, cand[i]))
			nm->v[nm->n++] = cand[i];
}

/* The cell's label from those names; fallback (NULL: the transport) when
 * none of them tells it apart. */
static void label_of(const struct names *nm, const struct rcell *c, const char *fallback,
		     char *buf)
{
	rcell_label(c, nm->v, nm->n, NULL, buf, FIG_LABEL);
	if (!buf[0])
		snprintf(buf, FIG_LABEL, "%s", fallback ? fallback : c->transport);
}

/* The cells that have something for a figure, in the file's order. */
static const struct rcell **cells_where(const struct fig_in *in, size_t *n,
					bool (*has)(const struct rcell *c, const void *arg),
					const void *arg)
{
	const struct rcell **out = calloc(in->n + 1, sizeof(*out));

	*n = 0;
	for (size_t i = 0; out && i < in->n; i++)
		if (in->cells[i]->ok && has(in->cells[i], arg))
			out[(*n)++] = in->cells[i];
	return out;
}

/* ---- latency ---------------------------------------------------------------- */

struct lat_set {
	const struct rcell *cells[FIG_MAX_SERIES];
	struct hist *h[FIG_MAX_SERIES];
	char labels[FIG_MAX_SERIES][FIG_LABEL];
	size_t n;
	bool more;
};

static void lat_free(struct lat_set *ls)
{
	for (size_t i = 0; i < ls->n; i++)
		free(ls->h[i]);
	free(ls);
}

/* Every cell of one latency kind with a histogram, labelled. */
static struct lat_set *lat_collect(const struct fig_in *in, enum lat_kind kind)
{
	struct lat_set *ls = calloc(1, sizeof(*ls));
	struct hist *h = NULL;
	struct names nm = { .n = 0 };

	for (size_t i = 0; ls && i < in->n; i++) {
		const struct rcell *c = in->cells[i];

		if (!c->ok || rcell_lat_kind(c) != kind)
			continue;
		if (!h && !(h = malloc(sizeof(*h)))) {
			lat_free(ls);
			return NULL;
		}
		if (rcell_hist(c, h))
			continue;
		if (ls->n == FIG_MAX_SERIES) {
			ls->more = true;
			break;
		}
		ls->cells[ls->n] = c;
		ls->h[ls->n++] = h;
		h = NULL;
	}
	free(h);
	if (ls && ls->n) {
		names_for(in, ls->cells, ls->n, NULL, &nm);
		for (size_t i = 0; i < ls->n; i++)
			label_of(&nm, ls->cells[i], NULL, ls->labels[i]);
	}
	return ls;
}

/* A series per cell, or -ENOMEM. */
static int lat_series(struct figure *f, const struct lat_set *ls)
{
	for (size_t i = 0; i < ls->n && figure_series(f, ls->labels[i]); i++)
		;
	if (ls->more)
		snprintf(f->note, sizeof(f->note), "more than %d cells: the first %d drawn",
			 FIG_MAX_SERIES, FIG_MAX_SERIES);
	return 0;
}

static void lat_axis(struct fig_axis *a, const char *key)
{
	a->label = "latency";
	a->key = key;
	a->fd = field_find("lat_p50_ns");
	a->per = 1e3;
	a->unit = "us";
}

/* x = 1/(1-q) on a log axis spreads p50 .. p99.99 evenly: the tail shows. */
int figure_percentiles(struct figure *f, const struct fig_in *in, enum lat_kind kind)
{
	static const double ticks[] = { 2, 10, 100, 1000, 10000 };
	static const char *const tl[] = { "p50", "p90", "p99", "p99.9", "p99.99" };
	struct lat_set *ls = lat_collect(in, kind);
	int ret = ls ? lat_series(f, ls) : -ENOMEM;

	snprintf(f->name, sizeof(f->name), "latency-percentiles-%s", lat_kind_key(kind));
	snprintf(f->title, sizeof(f->title), "%s by percentile", lat_kind_title(kind));
	f->caption = "from each cell's histogram buckets (at most 1 % relative error)";
	f->kind = FIG_LINES;
	f->x = (struct fig_axis){ .label = "percentile", .key = "x", .log = 10, .lo = 2, .hi = 10000,
				  .percentile = true, .ticks = ticks, .tick_labels = tl,
				  .nticks = ARRAY_SIZE(ticks) };
	lat_axis(&f->y, NULL);
	f->y.log = 10;
	f->y.decimals = 4;
	for (size_t i = 0; !ret && i < f->ns; i++)
		for (unsigned p = 0; !ret && p < PCT_POINTS; p++) {
			double e = log10(2.0) + (4.0 - log10(2.0)) * p / (PCT_POINTS - 1);

			ret = figure_point(&f->s[i], pow(10, e),
					   (double)hist_quantile(ls->h[i], 1 - pow(10, -e)));
		}
	if (ls)
		lat_free(ls);
	return ret;
}

/* Log-spaced bins, BINS_PER_DECADE a decade, each series as % of its
 * samples: histograms of different lengths compare by shape. */
int figure_histogram(struct figure *f, const struct fig_in *in, enum lat_kind kind)
{
	struct lat_set *ls = lat_collect(in, kind);
	int ret = ls ? lat_series(f, ls) : -ENOMEM;
	uint64_t lo = UINT64_MAX, hi = 0;
	long b0, b1;

	snprintf(f->name, sizeof(f->name), "latency-histogram-%s", lat_kind_key(kind));
	snprintf(f->title, sizeof(f->title), "%s histogram", lat_kind_title(kind));
	f->caption = "share of each cell's samples per bin, 20 bins a decade";
	f->kind = FIG_STEPS;
	lat_axis(&f->x, "latency_us");
	f->x.log = 10;
	f->y = (struct fig_axis){ .label = "% of samples", .from_zero = true };
	for (size_t i = 0; ls && i < ls->n; i++) {
		lo = ls->h[i]->min < lo ? ls->h[i]->min : lo;
		hi = ls->h[i]->max > hi ? ls->h[i]->max : hi;
	}
	b0 = (long)floor(log10(lo && lo != UINT64_MAX ? (double)lo : 1.0) * BINS_PER_DECADE);
	b1 = (long)floor(log10(hi ? (double)hi : 1.0) * BINS_PER_DECADE);
	if (b1 - b0 > MAX_BINS)
		b0 = b1 - MAX_BINS;
	for (size_t i = 0; !ret && i < f->ns; i++) {
		const struct hist *hh = ls->h[i];

		for (long b = b0; !ret && b <= b1 + 1; b++) {
			double edge = pow(10, (double)b / BINS_PER_DECADE),
			       next = pow(10, (double)(b + 1) / BINS_PER_DECADE);
			uint64_t n = 0;

			for (unsigned k = 0; b <= b1 && k < HIST_BUCKETS; k++) {
				double mid = (double)hist_bucket_lower(k) + (double)hist_bucket_width(k) / 2;

				if (hh->buckets[k] && mid >= edge && mid < next)
					n += hh->buckets[k];
			}
			ret = figure_point(&f->s[i], edge,
					   hh->count ? 100.0 * (double)n / (double)hh->count : 0);
		}
	}
	if (ls)
		lat_free(ls);
	return ret;
}

/* ---- against message size ---------------------------------------------------- */

/* A message size as written by ipclab: digits only (the axis is numeric). */
static bool is_count(const char *s)
{
	return s[0] && strspn(s, "0123456789") == strlen(s) && strlen(s) < 20;
}

static bool has_size_and(const struct rcell *c, const void *metric)
{
	char t[64];

	return !isnan(rcell_metric(c, metric)) && !rcell_param(c, "size_bytes", t, sizeof(t)) &&
	       is_count(t);
}

/* The point at x in its place (x ascending); the first cell's value stays
 * where two cells share a label and a size. */
static int point_sorted(struct fig_series *s, double x, double y)
{
	size_t at = s->n;
	int ret;

	for (size_t k = 0; k < s->n; k++)
		if (s->x[k] == x)
			return 0;
	ret = figure_point(s, x, y);
	for (; !ret && at > 0 && s->x[at - 1] > x; at--) {
		s->x[at] = s->x[at - 1];
		s->y[at] = s->y[at - 1];
		s->x[at - 1] = x;
		s->y[at - 1] = y;
	}
	return ret;
}

static const struct {
	const char *metric, *name, *title, *label, *unit;
	double per;
} size_figs[] = {
	{ "bytes_per_s", "throughput-vs-size", "throughput against message size", "throughput",
	  "MB/s = 10^6 bytes/s", 1e6 },
	{ "msgs_per_s", "msgrate-vs-size", "message rate against message size", "message rate",
	  "10^3 messages/s", 1e3 },
};

/* A line per label without the size (transport, and whatever else varies);
 * drawn when one of them has two sizes at least. */
int figure_vs_size(struct figure *f, const struct fig_in *in, const char *metric)
{
	const struct field *fd = field_find(metric);
	size_t n, k = 0;
	const struct rcell **cells = cells_where(in, &n, has_size_and, metric);
	const struct rcell *rep[FIG_MAX_SERIES] = { NULL };	/* each series' first cell */
	struct names nm = { .n = 0 };
	bool two = false;
	int ret = cells ? 0 : -ENOMEM;

	while (k < ARRAY_SIZE(size_figs) && strcmp(size_figs[k].metric, metric))
		k++;
	snprintf(f->name, sizeof(f->name), "%s", k < ARRAY_SIZE(size_figs) ? size_figs[k].name : metric);
	snprintf(f->title, sizeof(f->title), "%s", k < ARRAY_SIZE(size_figs) ? size_figs[k].title : metric);
	f->kind = FIG_POINTS;
	f->x = (struct fig_axis){ .label = "message size", .key = "size_bytes",
				  .fd = field_find("size_bytes"), .per = 1, .unit = "bytes", .log = 2 };
	f->y = (struct fig_axis){ .label = fd ? fd->label : metric, .fd = fd, .from_zero = true };
	if (k < ARRAY_SIZE(size_figs)) {
		f->y.label = size_figs[k].label;
		f->y.unit = size_figs[k].unit;
		f->y.per = size_figs[k].per;
	}
	if (cells && n)
		names_for(in, cells, n, "size_bytes", &nm);
	for (size_t i = 0; !ret && i < n; i++) {
		char label[FIG_LABEL], t[64];
		struct fig_series *s = NULL;

		/* a series per configuration, told by the whole values (its
		 * label is cut to FIG_LABEL bytes) */
		for (size_t j = 0; !s && j < f->ns; j++)
			if (rcell_same_label(rep[j], cells[i], nm.v, nm.n, NULL))
				s = &f->s[j];
		if (!s) {
			label_of(&nm, cells[i], NULL, label);
			if (!(s = figure_series(f, label)))
				continue;
			rep[f->ns - 1] = cells[i];
		}
		rcell_param(cells[i], "size_bytes", t, sizeof(t));
		ret = point_sorted(s, strtod(t, NULL), rcell_metric(cells[i], metric));
		two |= s->n > 1;
	}
	free(cells);
	if (!two) {	/* against size means two sizes at least, in one series */
		for (size_t i = 0; i < f->ns; i++) {
			free(f->s[i].x);
			free(f->s[i].y);
		}
		f->ns = 0;
	}
	return ret;
}

/* ---- CPU time ----------------------------------------------------------------- */

static bool has_metric(const struct rcell *c, const void *metric)
{
	return !isnan(rcell_metric(c, metric));
}

/* The index of KEY among the N keys seen so far, KEY added if new. KEYS
 * holds the whole names (pointers into the cells), LABELS their printed
 * form, cut to FIG_LABEL bytes at a character's boundary: two names that
 * agree in their first FIG_LABEL bytes stay two groups. */
static size_t index_of(const char **keys, char (*labels)[FIG_LABEL], size_t *n, const char *key)
{
	size_t i = 0;

	while (i < *n && strcmp(keys[i], key))
		i++;
	if (i == *n) {
		keys[i] = key;
		snprintf(labels[(*n)++], FIG_LABEL, "%.*s", (int)utf8_cut(key, FIG_LABEL - 1), key);
	}
	return i;
}

/* Clustered bars: a group per transport, a bar per other configuration
 * (one bar, named after the metric, when nothing else varies). */
int figure_cpu(struct figure *f, const struct fig_in *in)
{
	const char *key = "cpu_ns_per_msg";
	size_t n;
	const struct rcell **cells = cells_where(in, &n, has_metric, key);
	char (*lab)[FIG_LABEL] = calloc(n + 1, FIG_LABEL);
	const char **keys = calloc(n + 1, sizeof(*keys));
	const struct rcell *rep[FIG_MAX_SERIES] = { NULL };	/* each series' first cell */
	struct names nm = { .n = 0 };
	int ret = 0;

	snprintf(f->name, sizeof(f->name), "cpu-per-msg");
	snprintf(f->title, sizeof(f->title), "CPU time per message (user+sys, all sides)");
	f->kind = FIG_BARS;
	f->x = (struct fig_axis){ .label = "transport", .key = "transport" };
	f->y = (struct fig_axis){ .label = "CPU time per message", .fd = field_find(key), .per = 1,
				  .unit = "ns", .from_zero = true };
	f->cats = calloc(n + 1, FIG_LABEL);
	if (!cells || !lab || !keys || !f->cats) {
		ret = -ENOMEM;
		goto out;
	}
	if (n)
		names_for(in, cells, n, "transport", &nm);
	for (size_t i = 0; i < n; i++) {	/* the groups, and the series' labels */
		label_of(&nm, cells[i], f->y.label, lab[i]);
		index_of(keys, f->cats, &f->ncat, cells[i]->transport);
	}
	for (size_t i = 0; !ret && i < n; i++) {
		size_t a = index_of(keys, f->cats, &f->ncat, cells[i]->transport), b = 0;
		struct fig_series *s;

		/* a bar per configuration, told by the whole values (its label
		 * is cut to FIG_LABEL bytes) */
		while (b < f->ns && !rcell_same_label(rep[b], cells[i], nm.v, nm.n, NULL))
			b++;
		if (b == f->ns) {
			if (!(s = figure_series(f, lab[i])))
				continue;
			rep[b] = cells[i];
			for (size_t c = 0; !ret && c < f->ncat; c++)
				ret = figure_point(s, (double)c, NAN);
		}
		if (!ret && isnan(f->s[b].y[a]))
			f->s[b].y[a] = rcell_metric(cells[i], key);
	}
out:
	free(cells);
	free(keys);
	free(lab);
	return ret;
}

int figure_build(struct figure *f, enum fig_id id, const struct fig_in *in)
{
	memset(f, 0, sizeof(*f));
	switch (id) {
	case FIG_PCT_RTT: return figure_percentiles(f, in, LAT_RTT);
	case FIG_HIST_RTT: return figure_histogram(f, in, LAT_RTT);
	case FIG_PCT_ONE_WAY: return figure_percentiles(f, in, LAT_ONE_WAY);
	case FIG_HIST_ONE_WAY: return figure_histogram(f, in, LAT_ONE_WAY);
	case FIG_THROUGHPUT: return figure_vs_size(f, in, "bytes_per_s");
	case FIG_MSGRATE: return figure_vs_size(f, in, "msgs_per_s");
	case FIG_CPU: return figure_cpu(f, in);
	case FIG_COUNT: break;
	}
	return 0;
}
