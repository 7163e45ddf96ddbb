// SPDX-License-Identifier: MIT
/* The figures of ipclab plot: latency percentile curves and latency
 * histograms (one pair per latency kind: round trip and one-way are never
 * drawn together), throughput against message size, CPU time per message,
 * and heatmaps of a metric over two parameters. Each writes its numbers to
 * NAME.dat and a script that reads only them to NAME.gp (plot.c runs it).
 * Labels are the result file's text: quoted with gp_quote in scripts. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/util.h"
#include "plot.h"

#define GRID_MAX 64
#define LABEL_LEN 160
#define PCT_POINTS 75		/* percentile curve: p50 .. p99.99 */
#define BINS_PER_DECADE 20	/* latency histogram */

/* Is name shown by the axis skip? server_cpu and client_cpu come from pin. */
static bool on_axis(const char *name, const char *skip)
{
	if (!skip)
		return false;
	if (!strcmp(name, "pin") && (!strcmp(skip, "server_cpu") || !strcmp(skip, "client_cpu")))
		return true;
	return !strcmp(name, skip);
}

/* The cell's label without the parameters a figure shows on an axis;
 * fallback when nothing else tells cells apart. */
static void label_of(const struct plot_ctx *ctx, const struct rcell *c, const char *skip,
		     const char *skip2, const char *fallback, char *buf, size_t len)
{
	const char *names[64];
	size_t n = 0;

	for (size_t i = 0; i < ctx->nnames; i++)
		if (!on_axis(ctx->names[i], skip) && !on_axis(ctx->names[i], skip2))
			names[n++] = ctx->names[i];
	rcell_label(c, names, n, NULL, buf, len);
	if (!buf[0])
		snprintf(buf, len, "%s", fallback);
}

/* ---- a grid: rows x columns of one number ------------------------------------------ */

struct grid {
	char rows[GRID_MAX][LABEL_LEN], cols[GRID_MAX][LABEL_LEN];
	size_t nr, nc;
	double v[GRID_MAX][GRID_MAX];
};

static struct grid *grid_new(void)
{
	struct grid *g = calloc(1, sizeof(*g));

	for (size_t r = 0; g && r < GRID_MAX; r++)
		for (size_t c = 0; c < GRID_MAX; c++)
			g->v[r][c] = NAN;
	return g;
}

static long grid_index(char (*keys)[LABEL_LEN], size_t *n, const char *key)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(keys[i], key))
			return (long)i;
	if (*n == GRID_MAX)
		return -1;
	snprintf(keys[*n], LABEL_LEN, "%s", key);
	return (long)(*n)++;
}

/* The first value of a (row, column) stays: the file's first cell. */
static int grid_set(struct grid *g, const char *row, const char *col, double v)
{
	long r = grid_index(g->rows, &g->nr, row), c = grid_index(g->cols, &g->nc, col);

	if (r < 0 || c < 0)
		return -E2BIG;
	if (isnan(g->v[r][c]))
		g->v[r][c] = v;
	return 0;
}

static bool all_numeric(char (*keys)[LABEL_LEN], size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *end;

		strtod(keys[i], &end);
		if (end == keys[i] || *end)
			return false;
	}
	return n > 0;
}

/* Numbers in numeric order (sizes, CPU numbers); names as first seen. */
static void grid_sort(struct grid *g)
{
	bool rows = all_numeric(g->rows, g->nr), cols = all_numeric(g->cols, g->nc);

	for (size_t i = 1; rows && i < g->nr; i++)
		for (size_t j = i; j > 0 && strtod(g->rows[j - 1], NULL) > strtod(g->rows[j], NULL); j--) {
			char t[LABEL_LEN];
			double tv[GRID_MAX];

			memcpy(t, g->rows[j], LABEL_LEN);
			memcpy(g->rows[j], g->rows[j - 1], LABEL_LEN);
			memcpy(g->rows[j - 1], t, LABEL_LEN);
			memcpy(tv, g->v[j], sizeof(tv));
			memcpy(g->v[j], g->v[j - 1], sizeof(tv));
			memcpy(g->v[j - 1], tv, sizeof(tv));
		}
	for (size_t i = 1; cols && i < g->nc; i++)
		for (size_t j = i; j > 0 && strtod(g->cols[j - 1], NULL) > strtod(g->cols[j], NULL); j--) {
			char t[LABEL_LEN];

			memcpy(t, g->cols[j], LABEL_LEN);
			memcpy(g->cols[j], g->cols[j - 1], LABEL_LEN);
			memcpy(g->cols[j - 1], t, LABEL_LEN);
			for (size_t r = 0; r < g->nr; r++) {
				double tv = g->v[r][j];

				g->v[r][j] = g->v[r][j - 1];
				g->v[r][j - 1] = tv;
			}
		}
}

static void grid_write(FILE *dat, const struct grid *g, const char *corner, double scale)
{
	fprintf(dat, "%s", corner);
	for (size_t c = 0; c < g->nc; c++) {
		fputc('\t', dat);
		dat_text(dat, g->cols[c]);
	}
	fputc('\n', dat);
	for (size_t r = 0; r < g->nr; r++) {
		dat_text(dat, g->rows[r]);
		for (size_t c = 0; c < g->nc; c++)
			fprintf(dat, isnan(g->v[r][c]) ? "\tNaN" : "\t%.6g", g->v[r][c] * scale);
		fputc('\n', dat);
	}
}

static int too_many(struct plot_ctx *ctx, const char *what)
{
	return errf(ctx->err, ctx->errlen, E2BIG, "%s: more than %d distinct values; plot a smaller file",
		    what, GRID_MAX);
}

/* ---- latency --------------------------------------------------------------------- */

struct series {
	const struct rcell *cell;
	struct hist *h;
	char label[LABEL_LEN];
};

/* Every cell of one latency kind that has a histogram. */
/* Does a parameter take two values among these series? */
static bool series_vary(const struct series *s, size_t n, const char *name)
{
	char first[LABEL_LEN], v[LABEL_LEN];
	int have = rcell_param(s[0].cell, name, first, sizeof(first));

	for (size_t i = 1; i < n; i++) {
		int ret = rcell_param(s[i].cell, name, v, sizeof(v));

		if (ret != have || (!ret && strcmp(v, first)))
			return true;
	}
	return false;
}

/* Labels from what differs among the series of this figure only: a figure
 * of round trips need not say "pingpong" forty times. */
static void series_labels(const struct plot_ctx *ctx, struct series *s, size_t n)
{
	const char *names[64];
	size_t nn = 0;

	for (size_t i = 0; i < ctx->nnames; i++)
		if (series_vary(s, n, ctx->names[i]))
			names[nn++] = ctx->names[i];
	for (size_t i = 0; i < n; i++) {
		rcell_label(s[i].cell, names, nn, NULL, s[i].label, sizeof(s[i].label));
		if (!s[i].label[0])
			snprintf(s[i].label, sizeof(s[i].label), "%s", s[i].cell->transport);
	}
}

/* Every cell of one latency kind that has a histogram. */
static size_t latency_series(struct plot_ctx *ctx, enum lat_kind kind, struct series *s, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < ctx->rf->n && n < max; i++) {
		const struct rcell *c = &ctx->rf->cells[i];

		if (!c->ok || rcell_lat_kind(c) != kind)
			continue;
		s[n].h = malloc(sizeof(*s[n].h));
		if (!s[n].h)
			break;
		if (rcell_hist(c, s[n].h)) {
			free(s[n].h);
			continue;
		}
		s[n++].cell = c;
	}
	if (n)
		series_labels(ctx, s, n);
	return n;
}

/* Past a dozen series a key beside the plot squeezes it: put it below. */
static void key_place(FILE *gp, size_t nseries)
{
	if (nseries > 12)
		fprintf(gp, "set key below left Left reverse noenhanced\n");
}

/* x = 1/(1-q) on a log axis spreads p50 .. p99.99 evenly: the tail shows. */
static int fig_percentiles(struct plot_ctx *ctx, enum lat_kind kind, struct series *s, size_t n)
{
	char name[64];
	FILE *dat, *gp;

	snprintf(name, sizeof(name), "latency-percentiles-%s", lat_kind_key(kind));
	if (fig_open(ctx, name, &dat, &gp))
		return -EIO;
	fprintf(dat, "# latency (us) at each percentile, from the histogram buckets\npercentile\tx");
	for (size_t i = 0; i < n; i++) {
		fputc('\t', dat);
		dat_text(dat, s[i].label);
	}
	fputc('\n', dat);
	for (unsigned p = 0; p < PCT_POINTS; p++) {
		double e = log10(2.0) + (4.0 - log10(2.0)) * p / (PCT_POINTS - 1);
		double q = 1 - pow(10, -e);

		fprintf(dat, "%.4f\t%.6g", 100 * q, pow(10, e));
		for (size_t i = 0; i < n; i++)
			fprintf(dat, "\t%.4f", (double)hist_quantile(s[i].h, q) / 1e3);
		fputc('\n', dat);
	}
	fig_script_head(ctx, gp, name, lat_kind_title(kind));
	fprintf(gp, "set title \"%s by percentile\"\n"
		"set logscale xy\nset xrange [2:10000]\n"
		"set xtics (\"p50\" 2, \"p90\" 10, \"p99\" 100, \"p99.9\" 1000, \"p99.99\" 10000)\n"
		"set xlabel \"percentile\"\nset ylabel \"latency (us)\"\n", lat_kind_title(kind));
	key_place(gp, n);
	fig_script_begin_output(gp, name);
	fprintf(gp, "\tplot for [i=3:%zu] \"%s.dat\" using 2:i with lines lw 2 title columnheader(i)\n",
		n + 2, name);
	fig_script_end_output(gp);
	return fig_finish(ctx, name, dat, gp);
}

/* Log-spaced bins, BINS_PER_DECADE per decade, each series as % of its
 * samples: histograms of different lengths compare by shape. */
static void write_bins(FILE *dat, struct series *s, size_t n)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	long b0, b1;

	for (size_t i = 0; i < n; i++) {
		lo = s[i].h->min < lo ? s[i].h->min : lo;
		hi = s[i].h->max > hi ? s[i].h->max : hi;
	}
	b0 = (long)floor(log10(lo ? (double)lo : 1.0) * BINS_PER_DECADE);
	b1 = (long)floor(log10(hi ? (double)hi : 1.0) * BINS_PER_DECADE);
	for (long b = b0; b <= b1 + 1; b++) {
		double edge = pow(10, (double)b / BINS_PER_DECADE),
		       next = pow(10, (double)(b + 1) / BINS_PER_DECADE);

		fprintf(dat, "%.6g", edge / 1e3);
		for (size_t i = 0; i < n; i++) {
			uint64_t in = 0;

			for (unsigned k = 0; b <= b1 && k < HIST_BUCKETS; k++) {
				double mid = (double)hist_bucket_lower(k) +
					     (double)hist_bucket_width(k) / 2;

				if (s[i].h->buckets[k] && mid >= edge && mid < next)
					in += s[i].h->buckets[k];
			}
			fprintf(dat, "\t%.6g", s[i].h->count ? 100.0 * (double)in / (double)s[i].h->count : 0);
		}
		fputc('\n', dat);
	}
}

static int fig_histogram(struct plot_ctx *ctx, enum lat_kind kind, struct series *s, size_t n)
{
	char name[64];
	FILE *dat, *gp;

	snprintf(name, sizeof(name), "latency-histogram-%s", lat_kind_key(kind));
	if (fig_open(ctx, name, &dat, &gp))
		return -EIO;
	fprintf(dat, "# %% of each series' samples per bin; bins start at latency_us, %d per decade\nlatency_us",
		BINS_PER_DECADE);
	for (size_t i = 0; i < n; i++) {
		fputc('\t', dat);
		dat_text(dat, s[i].label);
	}
	fputc('\n', dat);
	write_bins(dat, s, n);
	fig_script_head(ctx, gp, name, lat_kind_title(kind));
	fprintf(gp, "set title \"%s histogram\"\nset logscale x\nset yrange [0:*]\n"
		"set xlabel \"latency (us)\"\nset ylabel \"%% of samples\"\n", lat_kind_title(kind));
	key_place(gp, n);
	fig_script_begin_output(gp, name);
	fprintf(gp, "\tplot for [i=2:%zu] \"%s.dat\" using 1:i with steps lw 2 title columnheader(i)\n",
		n + 1, name);
	fig_script_end_output(gp);
	return fig_finish(ctx, name, dat, gp);
}

int fig_latency(struct plot_ctx *ctx)
{
	static const enum lat_kind kinds[] = { LAT_RTT, LAT_ONE_WAY };
	int ret = 0;

	for (size_t k = 0; !ret && k < ARRAY_SIZE(kinds); k++) {
		struct series s[GRID_MAX];
		size_t n = latency_series(ctx, kinds[k], s, GRID_MAX);

		if (n)
			ret = fig_percentiles(ctx, kinds[k], s, n);
		if (n && !ret)
			ret = fig_histogram(ctx, kinds[k], s, n);
		for (size_t i = 0; i < n; i++)
			free(s[i].h);
	}
	return ret;
}

/* ---- throughput and CPU ------------------------------------------------------------ */

/* A message size as written by ipclab: digits only (the axis is numeric). */
static bool is_count(const char *s)
{
	return s[0] && strspn(s, "0123456789") == strlen(s) && strlen(s) < 20;
}

/* One grid over the ok cells: row = a parameter's value, column = the label
 * without it, value = metric. */
static int fill_grid(struct plot_ctx *ctx, struct grid *g, const char *row_param,
		     const char *metric, const char *skip2, const char *group)
{
	for (size_t i = 0; i < ctx->rf->n; i++) {
		const struct rcell *c = &ctx->rf->cells[i];
		char row[LABEL_LEN], col[LABEL_LEN], grp[LABEL_LEN];
		double v = rcell_metric(c, metric);

		if (!c->ok || isnan(v) || rcell_param(c, row_param, row, sizeof(row)))
			continue;
		if (!strcmp(row_param, "size_bytes") && !is_count(row))
			continue;
		if (group) {
			label_of(ctx, c, row_param, skip2, "", grp, sizeof(grp));
			if (strcmp(grp, group))
				continue;
			if (rcell_param(c, skip2, col, sizeof(col)))
				continue;
		} else {
			label_of(ctx, c, row_param, skip2, metric, col, sizeof(col));
		}
		if (grid_set(g, row, col, v))
			return too_many(ctx, row_param);
	}
	grid_sort(g);
	return 0;
}

/* One rate against message size, a line per transport (and whatever else
 * varies). */
static int fig_vs_size(struct plot_ctx *ctx, const char *name, const char *metric, double scale,
		       const char *title, const char *ylabel)
{
	struct grid *g = grid_new();
	FILE *dat, *gp;
	int ret = g ? fill_grid(ctx, g, "size_bytes", metric, NULL, NULL) :
		      errf(ctx->err, ctx->errlen, ENOMEM, "out of memory");

	if (ret || !g->nr || fig_open(ctx, name, &dat, &gp)) {
		ret = ret ? ret : g->nr ? -EIO : 0;
		free(g);
		return ret;
	}
	fprintf(dat, "# %s, by message size (bytes)\n", ylabel);
	grid_write(dat, g, "size_bytes", scale);
	fig_script_head(ctx, gp, name, title);
	fprintf(gp, "set title \"%s\"\nset logscale x 2\nset xlabel \"message size (bytes)\"\n"
		"set ylabel \"%s\"\nset yrange [0:*]\n", title, ylabel);
	if (g->nr == 1)	/* a count (fill_grid): digits only */
		fprintf(gp, "set xrange [%.0f/2.0:%.0f*2.0]\n", strtod(g->rows[0], NULL),
			strtod(g->rows[0], NULL));
	key_place(gp, g->nc);
	fig_script_begin_output(gp, name);
	fprintf(gp, "\tplot for [i=2:%zu] \"%s.dat\" using 1:i with linespoints lw 2 title columnheader(i)\n",
		g->nc + 1, name);
	fig_script_end_output(gp);
	free(g);
	return fig_finish(ctx, name, dat, gp);
}

int fig_throughput(struct plot_ctx *ctx)
{
	int ret = fig_vs_size(ctx, "throughput-vs-size", "bytes_per_s", 1e-6,
			      "throughput against message size", "MB/s (10^6 bytes/s)");

	if (!ret)
		ret = fig_vs_size(ctx, "msgrate-vs-size", "msgs_per_s", 1e-3,
				  "message rate against message size", "thousand messages/s");
	return ret;
}

int fig_cpu(struct plot_ctx *ctx)
{
	struct grid *g = grid_new();
	const char *name = "cpu-per-msg";
	FILE *dat, *gp;
	int ret = g ? fill_grid(ctx, g, "transport", "cpu_ns_per_msg", NULL, NULL) :
		      errf(ctx->err, ctx->errlen, ENOMEM, "out of memory");

	if (ret || !g->nr || fig_open(ctx, name, &dat, &gp)) {
		ret = ret ? ret : g->nr ? -EIO : 0;
		free(g);
		return ret;
	}
	fprintf(dat, "# user+sys CPU time of all sides per message, ns\n");
	grid_write(dat, g, "transport", 1);
	fig_script_head(ctx, gp, name, "CPU time per message");
	fprintf(gp, "set title \"CPU time per message (user+sys, all sides)\"\n"
		"set ylabel \"ns per message\"\nset yrange [0:*]\n"
		"set style data histogram\nset style histogram clustered gap 1\n"
		"set style fill solid 0.8 border -1\nset xtics rotate by -30 noenhanced\n");
	key_place(gp, g->nc);
	fig_script_begin_output(gp, name);
	fprintf(gp, "\tplot for [i=2:%zu] \"%s.dat\" using i:xtic(1) title columnheader(i)\n",
		g->nc + 1, name);
	fig_script_end_output(gp);
	free(g);
	return fig_finish(ctx, name, dat, gp);
}

/* ---- heatmaps ------------------------------------------------------------------------ */

static int heatmap_one(struct plot_ctx *ctx, const struct plot_pivot *pv, const char *group,
		       const char *name)
{
	struct grid *g = grid_new();
	char title[512];
	FILE *dat, *gp;
	int ret = g ? fill_grid(ctx, g, pv->row, pv->metric, pv->col, group) :
		      errf(ctx->err, ctx->errlen, ENOMEM, "out of memory");

	if (ret || fig_open(ctx, name, &dat, &gp)) {
		free(g);
		return ret ? ret : -EIO;
	}
	fprintf(dat, "# ");
	snprintf(title, sizeof(title), "%s: rows %s, columns %s%s%s", pv->metric, pv->row, pv->col,
		 group[0] ? ", cells " : "", group);
	dat_text(dat, title);
	fputc('\n', dat);
	grid_write(dat, g, "row\\col", 1);
	fig_script_head(ctx, gp, name, "heatmap");
	snprintf(title, sizeof(title), "%s over %s x %s%s%s", pv->metric, pv->row, pv->col,
		 group[0] ? ": " : "", group);
	fprintf(gp, "set title ");
	gp_quote(gp, title);
	fprintf(gp, "\nset xlabel ");
	gp_quote(gp, pv->col);
	fprintf(gp, "\nset ylabel ");
	gp_quote(gp, pv->row);
	fprintf(gp, "\nunset grid\nset key off\n"
		"set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 '#21918c', 0.75 '#5ec962', 1 '#fde725')\n"
		"set cblabel ");
	gp_quote(gp, pv->metric);
	fprintf(gp, "\nset style textbox opaque noborder\n");
	fig_script_begin_output(gp, name);
	fprintf(gp, "\tplot \"%s.dat\" matrix rowheaders columnheaders using 1:2:3 with image, \\\n"
		"\t     \"\" matrix rowheaders columnheaders using 1:2:($3 != $3 ? \"\" : abs($3) >= 1000 ? sprintf(\"%%.0f\", $3) : sprintf(\"%%.3g\", $3)) with labels boxed\n",
		name);
	fig_script_end_output(gp);
	free(g);
	return fig_finish(ctx, name, dat, gp);
}

/* Does any ok cell have this parameter (or metric)? */
static bool have_param(const struct plot_ctx *ctx, const char *name, bool metric)
{
	for (size_t i = 0; i < ctx->rf->n; i++) {
		char v[64];

		if (ctx->rf->cells[i].ok &&
		    (metric ? !isnan(rcell_metric(&ctx->rf->cells[i], name)) :
			      !rcell_param(&ctx->rf->cells[i], name, v, sizeof(v))))
			return true;
	}
	return false;
}

int fig_check_pivot(struct plot_ctx *ctx, const struct plot_pivot *pv)
{
	for (int k = 0; k < 3; k++) {
		const char *p = k == 0 ? pv->row : k == 1 ? pv->col : pv->metric;

		if (!have_param(ctx, p, k == 2))
			return errf(ctx->err, ctx->errlen, EINVAL, "--pivot %s,%s,%s: no result in %s has %s '%s'",
				    pv->row, pv->col, pv->metric, ctx->rf->path,
				    k == 2 ? "a metric" : "a parameter", p);
	}
	return 0;
}

/* One heatmap per combination of the other parameters that vary. */
int fig_heatmap(struct plot_ctx *ctx, const struct plot_pivot *pv)
{
	char (*groups)[LABEL_LEN] = calloc(GRID_MAX, LABEL_LEN), base[224];
	size_t ng = 0;
	int ret = 0;

	if (!groups)
		return errf(ctx->err, ctx->errlen, ENOMEM, "out of memory");
	for (size_t i = 0; i < ctx->rf->n; i++) {
		char grp[LABEL_LEN];

		if (!ctx->rf->cells[i].ok)
			continue;
		label_of(ctx, &ctx->rf->cells[i], pv->row, pv->col, "", grp, sizeof(grp));
		if (grid_index(groups, &ng, grp) < 0) {
			free(groups);
			return too_many(ctx, "--pivot: other parameters");
		}
	}
	snprintf(base, sizeof(base), "heatmap-%s-%s-%s", pv->row, pv->col, pv->metric);
	for (size_t gi = 0; !ret && gi < ng; gi++) {
		char name[240], word[FIG_NAME_MAX - 8];

		fig_name(word, sizeof(word), base);
		if (ng > 1)
			snprintf(name, sizeof(name), "%s-%zu", word, gi + 1);
		else
			snprintf(name, sizeof(name), "%s", word);
		ret = heatmap_one(ctx, pv, groups[gi], name);
	}
	free(groups);
	return ret;
}
