// SPDX-License-Identifier: MIT
/* The figures ipclab plot draws, as inline SVG in the HTML report: latency
 * by percentile and the latency histogram (one pair per latency kind:
 * round trip and one-way never share a figure), throughput and message
 * rate against message size, CPU time per message. Each takes its numbers
 * from the file through the field table's keys, its axis text from the
 * field's label and unit: the figures say what the tables say. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/util.h"
#include "fields.h"
#include "html_svg.h"

#define MAX_SERIES 64
#define MAX_POINTS 64
#define PCT_POINTS 75		/* percentile curve: p50 .. p99.99 */
#define BINS_PER_DECADE 20	/* latency histogram */

/* Does a parameter take two values among these cells? */
static bool varies(const struct rcell *const *cells, size_t n, const char *name)
{
	char first[HTML_LABEL], v[HTML_LABEL];
	int have = rcell_param(cells[0], name, first, sizeof(first));

	for (size_t i = 1; i < n; i++) {
		int ret = rcell_param(cells[i], name, v, sizeof(v));

		if (ret != have || (!ret && strcmp(v, first)))
			return true;
	}
	return false;
}

/* Labels from what differs among these cells only, less the axis. */
static void labels_for(const struct html_view *v, const struct rcell *const *cells, size_t n,
		       const char *skip, char (*out)[HTML_LABEL])
{
	struct html_view sub = *v;

	sub.nnames = 0;
	for (size_t i = 0; i < v->nnames; i++)
		if (varies(cells, n, v->names[i]) && (!skip || strcmp(v->names[i], skip)))
			sub.names[sub.nnames++] = v->names[i];
	for (size_t i = 0; i < n; i++) {
		rcell_label(cells[i], sub.names, sub.nnames, NULL, out[i], HTML_LABEL);
		if (!out[i][0])
			snprintf(out[i], HTML_LABEL, "%s", cells[i]->transport);
	}
}

/* ---- latency -------------------------------------------------------------- */

struct lat_set {
	const struct rcell *cells[MAX_SERIES];
	struct hist *h[MAX_SERIES];
	char labels[MAX_SERIES][HTML_LABEL];
	size_t n;
};

static void lat_collect(const struct html_view *v, enum lat_kind kind, struct lat_set *ls)
{
	ls->n = 0;
	for (size_t i = 0; i < v->n && ls->n < MAX_SERIES; i++) {
		const struct rcell *c = v->cells[i];
		struct hist *h;

		if (!c->ok || rcell_lat_kind(c) != kind || !(h = malloc(sizeof(*h))))
			continue;
		if (rcell_hist(c, h)) {
			free(h);
			continue;
		}
		ls->cells[ls->n] = c;
		ls->h[ls->n++] = h;
	}
	if (ls->n)
		labels_for(v, ls->cells, ls->n, NULL, ls->labels);
}

static void series_free(struct svg_series *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(s[i].x);
		free(s[i].y);
	}
	free(s);
}

static struct svg_series *series_alloc(size_t n, size_t points)
{
	struct svg_series *s = calloc(n ? n : 1, sizeof(*s));

	for (size_t i = 0; s && i < n; i++) {
		s[i].x = calloc(points, sizeof(double));
		s[i].y = calloc(points, sizeof(double));
		if (!s[i].x || !s[i].y) {
			series_free(s, i + 1);
			return NULL;
		}
	}
	return s;
}

static int fig_percentiles(struct html *h, enum lat_kind kind, const struct lat_set *ls)
{
	static const double ticks[] = { 2, 10, 100, 1000, 10000 };
	static const char *const tl[] = { "p50", "p90", "p99", "p99.9", "p99.99" };
	struct svg_series *s = series_alloc(ls->n, PCT_POINTS);
	char title[96];
	int ret;

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < ls->n; i++) {
		snprintf(s[i].label, sizeof(s[i].label), "%s", ls->labels[i]);
		s[i].n = PCT_POINTS;
		for (unsigned p = 0; p < PCT_POINTS; p++) {
			double e = log10(2.0) + (4.0 - log10(2.0)) * p / (PCT_POINTS - 1);

			s[i].x[p] = pow(10, e);
			s[i].y[p] = (double)hist_quantile(ls->h[i], 1 - pow(10, -e));
		}
	}
	snprintf(title, sizeof(title), "%s by percentile", lat_kind_title(kind));
	struct svg_xy c = {
		.title = title, .s = s, .ns = ls->n, .hline = NAN,
		.caption = "from each cell's histogram buckets (at most 1 % relative error)",
		.x = { .lo = 2, .hi = 10000, .log = 10, .label = "percentile", .percentile = true,
		       .ticks = ticks, .tick_labels = tl, .nticks = ARRAY_SIZE(ticks) },
		.y = { .log = 10, .fd = field_find("lat_p50_ns"), .label = "latency" },
	};

	ret = svg_xy(h, &c);
	series_free(s, ls->n);
	return ret;
}

/* Log-spaced bins, each series as % of its samples. */
static int fig_histogram(struct html *h, enum lat_kind kind, const struct lat_set *ls)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	long b0, b1;
	struct svg_series *s;
	char title[96];
	int ret;

	for (size_t i = 0; i < ls->n; i++) {
		lo = ls->h[i]->min < lo ? ls->h[i]->min : lo;
		hi = ls->h[i]->max > hi ? ls->h[i]->max : hi;
	}
	b0 = (long)floor(log10(lo ? (double)lo : 1.0) * BINS_PER_DECADE);
	b1 = (long)floor(log10(hi ? (double)hi : 1.0) * BINS_PER_DECADE);
	if (b1 - b0 > 400)
		b0 = b1 - 400;
	s = series_alloc(ls->n, (size_t)(b1 - b0 + 2));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < ls->n; i++) {
		const struct hist *hh = ls->h[i];

		snprintf(s[i].label, sizeof(s[i].label), "%s", ls->labels[i]);
		s[i].steps = true;
		for (long b = b0; b <= b1 + 1; b++) {
			double edge = pow(10, (double)b / BINS_PER_DECADE),
			       next = pow(10, (double)(b + 1) / BINS_PER_DECADE);
			uint64_t in = 0;

			for (unsigned k = 0; b <= b1 && k < HIST_BUCKETS; k++) {
				double mid = (double)hist_bucket_lower(k) + (double)hist_bucket_width(k) / 2;

				if (hh->buckets[k] && mid >= edge && mid < next)
					in += hh->buckets[k];
			}
			s[i].x[s[i].n] = edge;
			s[i].y[s[i].n++] = hh->count ? 100.0 * (double)in / (double)hh->count : 0;
		}
	}
	snprintf(title, sizeof(title), "%s histogram", lat_kind_title(kind));
	struct svg_xy c = {
		.title = title, .s = s, .ns = ls->n, .hline = NAN,
		.caption = "share of each cell's samples per bin, 20 bins a decade",
		.x = { .log = 10, .fd = field_find("lat_p50_ns"), .label = "latency" },
		.y = { .from_zero = true, .label = "% of samples" },
	};

	ret = svg_xy(h, &c);
	series_free(s, ls->n);
	return ret;
}

static int fig_latency(struct html *h, const struct html_view *v)
{
	static const enum lat_kind kinds[] = { LAT_RTT, LAT_ONE_WAY };
	int ret = 0;

	for (size_t k = 0; !ret && k < ARRAY_SIZE(kinds); k++) {
		struct lat_set *ls = calloc(1, sizeof(*ls));

		if (!ls)
			return -ENOMEM;
		lat_collect(v, kinds[k], ls);
		if (ls->n)
			ret = fig_percentiles(h, kinds[k], ls);
		if (ls->n && !ret)
			ret = fig_histogram(h, kinds[k], ls);
		for (size_t i = 0; i < ls->n; i++)
			free(ls->h[i]);
		free(ls);
	}
	return ret;
}

/* ---- against size --------------------------------------------------------- */

/* Cells with the metric, grouped into series by their label without the
 * axis parameter; points in the axis' order. */
static size_t group_series(const struct html_view *v, const char *axis, const char *metric,
			   struct svg_series *s)
{
	const struct rcell **cells = calloc(v->n + 1, sizeof(*cells));
	char (*lab)[HTML_LABEL] = calloc(v->n + 1, HTML_LABEL);
	size_t nc = 0, ns = 0;

	for (size_t i = 0; cells && lab && i < v->n; i++) {
		char t[64];

		if (v->cells[i]->ok && !isnan(rcell_metric(v->cells[i], metric)) &&
		    !rcell_param(v->cells[i], axis, t, sizeof(t)))
			cells[nc++] = v->cells[i];
	}
	if (nc)
		labels_for(v, cells, nc, axis, lab);
	for (size_t i = 0; i < nc; i++) {
		char t[64];
		size_t k = 0;

		while (k < ns && strcmp(s[k].label, lab[i]))
			k++;
		if (k == ns && (ns == MAX_SERIES || !(s[k].x = calloc(MAX_POINTS, sizeof(double))) ||
				!(s[k].y = calloc(MAX_POINTS, sizeof(double)))))
			break;
		if (k == ns) {
			snprintf(s[ns].label, sizeof(s[ns].label), "%s", lab[i]);
			s[ns++].points = true;
		}
		if (s[k].n == MAX_POINTS)
			continue;
		rcell_param(cells[i], axis, t, sizeof(t));
		size_t at = s[k].n++;
		double x = strtod(t, NULL);

		for (; at > 0 && s[k].x[at - 1] > x; at--) {
			s[k].x[at] = s[k].x[at - 1];
			s[k].y[at] = s[k].y[at - 1];
		}
		s[k].x[at] = x;
		s[k].y[at] = rcell_metric(cells[i], metric);
	}
	free(cells);
	free(lab);
	return ns;
}

static int fig_vs_size(struct html *h, const struct html_view *v, const char *metric,
		       const char *title)
{
	struct svg_series *s = calloc(MAX_SERIES + 1, sizeof(*s));
	const struct field *fd = field_find(metric);
	size_t ns;
	int ret;

	if (!s)
		return -ENOMEM;
	ns = group_series(v, "size_bytes", metric, s);
	/* against size means two sizes at least, in one series */
	bool two = false;

	for (size_t i = 0; i < ns; i++)
		two |= s[i].n > 1;
	if (!two)
		ns = 0;
	struct svg_xy c = {
		.title = title, .s = s, .ns = ns, .hline = NAN,
		.x = { .log = 2, .fd = field_find("size_bytes"), .label = "message size" },
		.y = { .from_zero = true, .fd = fd, .label = fd ? fd->label : metric },
	};

	ret = svg_xy(h, &c);
	series_free(s, MAX_SERIES);
	return ret;
}

/* Clustered bars: a group per transport, a bar per other configuration. */
static int fig_cpu(struct html *h, const struct html_view *v)
{
	const char *key = "cpu_ns_per_msg";
	const struct rcell **cells = calloc(v->n + 1, sizeof(*cells));
	char (*lab)[HTML_LABEL] = calloc(v->n + 1, HTML_LABEL);
	const char **cats = calloc(v->n + 1, sizeof(*cats)), **sers = calloc(v->n + 1, sizeof(*sers));
	double *val = NULL;
	size_t nc = 0, ncat = 0, nser = 0;
	int ret = -ENOMEM;

	for (size_t i = 0; cells && i < v->n; i++)
		if (v->cells[i]->ok && !isnan(rcell_metric(v->cells[i], key)))
			cells[nc++] = v->cells[i];
	if (!cells || !lab || !cats || !sers || !(val = malloc((nc * nc + 1) * sizeof(double))))
		goto out;
	ret = 0;
	if (!nc)
		goto out;
	labels_for(v, cells, nc, "transport", lab);
	for (size_t i = 0; i < nc * nc; i++)
		val[i] = NAN;
	for (size_t i = 0; i < nc; i++) {
		size_t a = 0, b = 0;

		while (a < ncat && strcmp(cats[a], cells[i]->transport))
			a++;
		if (a == ncat)
			cats[ncat++] = cells[i]->transport;
		while (b < nser && strcmp(sers[b], lab[i]))
			b++;
		if (b == nser)
			sers[nser++] = lab[i];
		if (isnan(val[a * nc + b]))
			val[a * nc + b] = rcell_metric(cells[i], key);
	}
	/* the table was nc wide: pack it to nser */
	for (size_t a = 0; a < ncat; a++)
		memmove(val + a * nser, val + a * nc, nser * sizeof(double));
	if (nser == 1 && !strcmp(sers[0], cells[0]->transport))
		sers[0] = field_find(key)->label;
	struct svg_bars bc = { .title = "CPU time per message (user+sys, all sides)",
			       .ylabel = field_find(key)->label, .fd = field_find(key),
			       .cats = cats, .ncat = ncat, .sers = sers, .nser = nser, .v = val };

	ret = svg_bars(h, &bc);
out:
	free(cells);
	free(lab);
	free(cats);
	free(sers);
	free(val);
	return ret;
}

int html_figures(struct html *h, const struct html_view *v)
{
	int ret = fig_latency(h, v);

	if (!ret)
		ret = fig_vs_size(h, v, "bytes_per_s", "throughput against message size");
	if (!ret)
		ret = fig_vs_size(h, v, "msgs_per_s", "message rate against message size");
	if (!ret)
		ret = fig_cpu(h, v);
	return ret;
}
