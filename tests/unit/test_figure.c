// SPDX-License-Identifier: MIT
/* The figure model (src/report/figure.c) on made-up cells: which cells
 * become which series, under which labels (what varies among the
 * figure's own cells, less its axis), the axes' units and scales; and
 * both back ends drawing the model's figures: the HTML page's SVG
 * (html_report) and plot's data files (plot_scripts) carry the same
 * figures with the same series under the same labels, a hostile label
 * too (quotes, a newline, a backquote) without breaking out. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ipclab/util.h"
#include "changepoint.h"
#include "fields.h"
#include "figure.h"
#include "html.h"
#include "plot.h"
#include "../cmd/history.h"

/* A cell: transport, pattern, size, lat_kind (NULL: none), latency (ns),
 * bytes/s, CPU ns per message; status ok unless failed. */
static json_t *cell(const char *t, const char *p, int size, const char *kind, int lat,
		    double bps, double cpu, bool failed)
{
	json_t *c = json_pack("{s:s, s:s, s:i, s:s, s:s, s:s, s:i, s:{}}", "transport", t, "pattern",
			      p, "size_bytes", size, "endpoints", "process", "pin", "same", "status",
			      failed ? "failed" : "ok", "clients", 1, "options");
	json_t *m = json_pack("{s:f, s:f, s:f}", "bytes_per_s", bps, "msgs_per_s", bps / size,
			      "cpu_ns_per_msg", cpu);

	if (kind) {
		json_object_set_new(m, "lat_kind", json_string(kind));
		json_object_set_new(m, "lat_min_ns", json_integer(lat));
		json_object_set_new(m, "lat_max_ns", json_integer(lat * 3));
		json_object_set_new(m, "lat_p50_ns", json_integer(lat));
		json_object_set_new(c, "histogram",
				    json_pack("{s:s, s:i, s:i, s:[[i,i],[i,i]]}", "unit", "ns", "count", 100,
					      "sub_buckets", HIST_SUB, "buckets", lat, 90, lat * 3, 10));
	}
	json_object_set_new(c, "metrics", m);
	return c;
}

/* The file's text: cells as made above, each a json_t handed over. */
static char *file_text(json_t *results)
{
	json_t *root = json_pack("{s:i, s:s, s:o}", "schema_version", 1, "cmdline", "ipclab run",
				 "results", results);
	char *text = json_dumps(root, 0);

	json_decref(root);
	return text;
}

static json_t *four_cells(void)
{
	return json_pack("[o,o,o,o,o,o]",
			 cell("pipe", "pingpong", 64, "rtt", 5000, 1e6, 500, false),
			 cell("pipe", "pingpong", 1024, "rtt", 6000, 8e6, 600, false),
			 cell("unix-stream", "pingpong", 64, "rtt", 9000, 2e6, 900, false),
			 cell("unix-stream", "pingpong", 1024, "rtt", 9500, 9e6, 950, false),
			 cell("pipe", "stream", 64, "one_way", 3000, 4e6, 300, false),
			 cell("pipe", "pingpong", 4096, "rtt", 1, 1, 1, true));
}

static void load(struct rfile *rf, const struct rcell ***cells, struct fig_in *in, json_t *results)
{
	char *text = file_text(results), err[256];

	if (rfile_load_text(rf, "made-up.json", text, strlen(text), NULL, err, sizeof(err)))
		fail_msg("%s", err);
	free(text);
	*cells = calloc(rf->n, sizeof(**cells));
	assert_non_null(*cells);
	for (size_t i = 0; i < rf->n; i++)
		(*cells)[i] = &rf->cells[i];
	*in = (struct fig_in){ .rf = rf, .cells = *cells, .n = rf->n };
}

static void assert_labels(const struct figure *f, const char *const *want, size_t n)
{
	assert_int_equal(f->ns, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(f->s[i].label, want[i]);
}

static void test_model(void **state)
{
	static const char *const rtt[] = { "pipe 64B", "pipe 1KiB", "unix-stream 64B", "unix-stream 1KiB" };
	static const char *const size[] = { "pipe pingpong", "unix-stream pingpong", "pipe stream" };
	static const char *const cpu[] = { "pingpong 64B", "pingpong 1KiB", "stream 64B" };
	struct figure *f = malloc(sizeof(*f));
	const struct rcell **cells;
	struct fig_in in;
	struct rfile rf;

	(void)state;
	assert_non_null(f);
	load(&rf, &cells, &in, four_cells());

	/* round trips: four cells (not the failed one, not the one-way one),
	 * labelled by what varies among them: transport and size */
	assert_int_equal(figure_build(f, FIG_PCT_RTT, &in), 0);
	assert_labels(f, rtt, 4);
	assert_string_equal(f->name, "latency-percentiles-rtt");
	assert_true(f->x.percentile && f->x.log == 10 && f->y.log == 10);
	assert_string_equal(f->y.unit, "us");
	assert_true(f->y.per == 1e3 && f->kind == FIG_LINES && f->s[0].n == 75);
	assert_true(f->s[0].x[0] == 2 || fabs(f->s[0].x[0] - 2) < 1e-9);
	assert_true(fabs(f->s[0].y[0] - 5000) <= 5000 * 0.01);	/* p50: the cell's */
	figure_free(f);

	assert_int_equal(figure_build(f, FIG_HIST_RTT, &in), 0);
	assert_labels(f, rtt, 4);
	assert_true(f->kind == FIG_STEPS && f->x.log == 10 && !f->y.log && f->y.from_zero);

	/* one-way: one cell, nothing varies: the transport names it */
	figure_free(f);
	assert_int_equal(figure_build(f, FIG_PCT_ONE_WAY, &in), 0);
	assert_int_equal(f->ns, 1);
	assert_string_equal(f->s[0].label, "pipe");

	/* against size: size is the axis, not in the labels; points in size
	 * order, the stream's one point kept beside the lines */
	figure_free(f);
	assert_int_equal(figure_build(f, FIG_THROUGHPUT, &in), 0);
	assert_labels(f, size, 3);
	assert_true(f->kind == FIG_POINTS && f->x.log == 2 && !f->y.log && f->y.from_zero);
	assert_true(f->y.per == 1e6);
	assert_int_equal(f->s[0].n, 2);
	assert_true(f->s[0].x[0] == 64 && f->s[0].x[1] == 1024 && f->s[0].y[1] == 8e6);
	assert_int_equal(f->s[2].n, 1);

	/* CPU: a group per transport, a bar per what else varies */
	figure_free(f);
	assert_int_equal(figure_build(f, FIG_CPU, &in), 0);
	assert_labels(f, cpu, 3);
	assert_int_equal(f->ncat, 2);
	assert_string_equal(f->cats[0], "pipe");
	assert_string_equal(f->cats[1], "unix-stream");
	assert_true(f->s[0].y[0] == 500 && f->s[0].y[1] == 900);
	assert_true(isnan(f->s[2].y[1]));	/* no unix-stream stream */
	figure_free(f);
	free(cells);
	rfile_free(&rf);

	/* one size only: no figure against size; CPU a single bar series
	 * named after the metric */
	load(&rf, &cells, &in, json_pack("[o,o]", cell("pipe", "pingpong", 64, "rtt", 5000, 1e6, 500, false),
					 cell("unix-stream", "pingpong", 64, "rtt", 7000, 2e6, 700, false)));
	assert_int_equal(figure_build(f, FIG_THROUGHPUT, &in), 0);
	assert_int_equal(f->ns, 0);
	figure_free(f);
	assert_int_equal(figure_build(f, FIG_CPU, &in), 0);
	assert_int_equal(f->ns, 1);
	assert_string_equal(f->s[0].label, "CPU time per message");
	figure_free(f);
	free(cells);
	rfile_free(&rf);
	free(f);
}

/* ---- both back ends ------------------------------------------------------- */

struct emitted {
	char names[16][64], dat[16][4096], gp[16][4096];
	size_t n;
};

static int emit(void *arg, const char *name, const char *dat, size_t datlen, const char *gp,
		size_t gplen)
{
	struct emitted *e = arg;

	assert_true(e->n < 16);
	snprintf(e->names[e->n], 64, "%s", name);
	snprintf(e->gp[e->n], 4096, "%.*s", (int)gplen, gp);
	snprintf(e->dat[e->n++], 4096, "%.*s", (int)datlen, dat);
	return 0;
}

/* The series' labels of a data file: its second line, after the x columns. */
static size_t dat_labels(const char *dat, bool percentile, char (*out)[FIG_LABEL], size_t max)
{
	const char *p = strchr(dat, '\n') + 1, *end = strchr(p, '\n');
	size_t n = 0, skip = percentile ? 2 : 1;

	for (size_t col = 0; p < end && n < max; col++) {
		const char *tab = memchr(p, '\t', (size_t)(end - p));
		size_t l = (size_t)((tab ? tab : end) - p);

		if (col >= skip)
			snprintf(out[n++], FIG_LABEL, "%.*s", (int)l, p);
		p = tab ? tab + 1 : end;
	}
	return n;
}

/* The page's figure of this title: its legend's labels (html_esc'd). */
static size_t page_labels(const char *page, const char *title, char (*out)[FIG_LABEL], size_t max)
{
	char cap[800];
	const char *fig, *end, *p;
	size_t n = 0;

	snprintf(cap, sizeof(cap), "<figcaption class=\"ft\">%s</figcaption>", title);
	fig = strstr(page, cap);
	if (!fig)
		return 0;
	end = strstr(fig, "</figure>");
	p = strstr(fig, "<ul class=\"legend\"");
	while (p && p < end && n < max && (p = strstr(p, "</span>")) && p < end) {
		const char *e = strstr(p, "</li>");

		snprintf(out[n++], FIG_LABEL, "%.*s", (int)(e - p - 7), p + 7);
		p = e;
	}
	return n;
}

/* Both back ends on these cells: the model's figures, no other, each with
 * the model's series in its order; a label equal to raw as html and dat
 * there (its escaped forms). */
static void both_backends(json_t *results, const char *raw, const char *html, const char *dat)
{
	char *text = file_text(results), *page = NULL, err[256];
	struct emitted *e = calloc(1, sizeof(*e));
	struct plot_opts o = { .width = 640, .height = 480, .emit = emit, .emit_arg = e };
	struct html_opts ho = { .title = "t" };
	struct figure *f = malloc(sizeof(*f));
	const struct rcell **cells;
	struct fig_in in;
	struct rfile rf;
	size_t len = 0, drawn = 0;
	FILE *mf = open_memstream(&page, &len);

	assert_non_null(e);
	assert_non_null(f);
	if (plot_scripts("made-up.json", text, strlen(text), &o, err, sizeof(err)))
		fail_msg("%s", err);
	json_t *root = json_loads(text, 0, NULL);

	assert_non_null(root);
	load(&rf, &cells, &in, json_incref(json_object_get(root, "results")));
	json_decref(root);
	{
		const struct rfile *files[1] = { &rf };

		assert_int_equal(html_report(mf, files, 1, &ho, err, sizeof(err)), 0);
	}
	fclose(mf);
	for (unsigned id = 0; id < FIG_COUNT; id++) {
		char pl[FIG_MAX_SERIES][FIG_LABEL], dl[FIG_MAX_SERIES][FIG_LABEL];
		size_t k = 0, np, nd;

		assert_int_equal(figure_build(f, id, &in), 0);
		while (k < e->n && strcmp(e->names[k], f->name))
			k++;
		np = page_labels(page, f->title, pl, FIG_MAX_SERIES);
		if (!f->ns) {	/* neither back end draws it */
			assert_int_equal(k, e->n);
			assert_int_equal(np, 0);
			figure_free(f);
			continue;
		}
		drawn++;
		assert_true(k < e->n);
		nd = dat_labels(e->dat[k], f->x.percentile, dl, FIG_MAX_SERIES);
		assert_int_equal(np, f->ns);
		assert_int_equal(nd, f->ns);
		for (size_t i = 0; i < f->ns; i++) {
			bool hostile = raw && !strcmp(f->s[i].label, raw);

			assert_string_equal(pl[i], hostile ? html : f->s[i].label);
			assert_string_equal(dl[i], hostile ? dat : f->s[i].label);
		}
		/* the script reads the labels from the data file: none in it */
		assert_null(strchr(e->gp[k], '`'));
		assert_null(strstr(e->gp[k], "!id"));
		figure_free(f);
	}
	assert_true(drawn > 0);
	assert_int_equal(drawn, e->n);	/* plot drew the model's figures, no other */
	free(cells);
	rfile_free(&rf);
	free(page);
	free(text);
	free(e);
	free(f);
}

static void test_backends_agree(void **state)
{
	(void)state;
	both_backends(four_cells(), NULL, NULL, NULL);
}

/* A transport named to break out of both: in the page as text, in the
 * data file on one line, its double quote made single (a data file's
 * double quote would join columns); the script holds none of it. */
static void test_hostile_label(void **state)
{
	static const char raw[] = "x'`touch M`\"\n!id";

	(void)state;
	both_backends(json_pack("[o,o]", cell("ok", "pingpong", 64, "rtt", 5000, 1e6, 500, false),
				cell(raw, "pingpong", 64, "rtt", 7000, 2e6, 700, false)),
		      raw, "x&#39;`touch M`&quot;\n!id", "x'`touch M`' !id");
}

/* History's figure (figure_history.c) from made-up series: a series per
 * cell, points of one run at one place on x, ticks the runs' dates, y the
 * field table's metric and unit, a rule at the change point, the point of
 * another state a mark; drawn as a document, the hostile cell label
 * escaped. */
static void test_history(void **state)
{
	static const char raw[] = "pipe<b>\"'&amp;";
	const char *at[] = { "2025-01-01T12:00:00Z", "2025-01-02T12:00:00Z", "2025-01-03T12:00:00Z",
			     "2025-01-04T12:00:00Z" };
	struct fig_hpoint a[4], b[2];
	struct cp_change cp = { .index = 2, .before = 10000, .after = 20000, .ratio = 2, .p_value = 0.01 };
	struct fig_hseries s[3] = {
		{ .label = "pipe 64B", .metric = "lat_p50_ns", .pts = a, .n = 4, .cp = &cp, .ncp = 1 },
		{ .label = raw, .metric = "lat_p50_ns", .pts = b, .n = 2 },
		{ .label = "rate", .metric = "msgs_per_s", .pts = b, .n = 2 },
	};
	struct fig_hin in = { .s = s, .n = 3, .x = FIG_HX_RUNS };
	struct figure *f = calloc(1, sizeof(*f));
	char *doc = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&doc, &len);

	(void)state;
	assert_non_null(f);
	assert_non_null(out);
	for (int i = 0; i < 4; i++)
		a[i] = (struct fig_hpoint){ .at = at[i], .run = i + 1, .value = i < 2 ? 10000 : 20000,
					    .lo = NAN, .hi = NAN, .tip = "run" };
	a[1].state = "another state (cache-line RTT 4.3x)";
	a[0].lo = 9000;
	a[0].hi = 11000;
	/* the second cell measured in runs 2 and 4 only */
	b[0] = (struct fig_hpoint){ .at = at[1], .run = 2, .value = 30000, .lo = NAN, .hi = NAN };
	b[1] = (struct fig_hpoint){ .at = at[3], .run = 4, .value = 31000, .lo = NAN, .hi = NAN };

	assert_int_equal(figure_history(f, &in, "lat_p50_ns"), 0);
	assert_int_equal(f->ns, 3);
	assert_string_equal(f->s[0].label, "pipe 64B");
	assert_string_equal(f->s[1].label, raw);
	assert_string_equal(f->s[2].label, "another state of the machine");
	assert_true(!f->s[0].marks && !f->s[1].marks && f->s[2].marks);
	/* y: the field table's, not a key's suffix */
	assert_ptr_equal(f->y.fd, field_find("lat_p50_ns"));
	assert_string_equal(f->y.label, field_find("lat_p50_ns")->label);
	assert_non_null(strstr(f->title, field_find("lat_p50_ns")->doc));
	/* x: a place per run, the second cell's points at its runs' places */
	assert_int_equal(f->ncat, 4);
	assert_int_equal(f->x.nticks, 4);
	assert_string_equal(f->x.tick_labels[3], "2025-01-04");
	assert_true(f->s[1].x[0] == 1 && f->s[1].x[1] == 3 && f->s[0].x[3] == 3);
	assert_true(f->s[0].lo[0] == 9000 && f->s[0].hi[0] == 11000 && isnan(f->s[0].lo[1]));
	/* the change point between the runs 2 and 3, its means in the field's unit */
	assert_int_equal(f->nrules, 1);
	assert_true(f->rules[0].x == 1.5 && f->rules[0].series == 0);
	assert_non_null(strstr(f->rules[0].label, "10.0us"));
	assert_non_null(strstr(f->rules[0].label, "x2.00"));
	assert_true(f->s[2].n == 1 && f->s[2].x[0] == 1 && f->s[2].y[0] == 10000);

	assert_int_equal(fig_svg_doc(out, f, 1, true), 0);
	assert_int_equal(fclose(out), 0);
	assert_non_null(strstr(doc, "pipe&lt;b&gt;&quot;&#39;&amp;amp;"));
	assert_null(strstr(doc, "<b>"));
	assert_non_null(strstr(doc, ">2025-01-04<"));
	assert_non_null(strstr(doc, "class=\"rule c0\""));
	assert_non_null(strstr(doc, "class=\"ci\""));
	assert_non_null(strstr(doc, "<title>another state of the machine: 2025-01-02"));
	free(doc);
	figure_free(f);

	/* the other metric: a figure of its own */
	assert_int_equal(figure_history(f, &in, "msgs_per_s"), 0);
	assert_int_equal(f->ns, 1);
	assert_string_equal(f->s[0].label, "rate");
	assert_int_equal(f->ncat, 2);
	figure_free(f);
	free(f);
}

/* --pin matrix's heatmap (figure_matrix.c) from a made-up matrix file:
 * cpus in topology order (1 before 0), a figure per group of cells that
 * differ only in their pin, each square its pair's value, text and mark,
 * a failed pair without a value ("-"), the colour scale the values' ends;
 * both back ends draw the model's squares, the hostile group label
 * escaped in the page and quoted in the script. */
static json_t *pinned(const char *t, const char *pin, int lat, bool failed)
{
	json_t *c = cell(t, "pingpong", 64, "rtt", lat, 1e6, 500, failed);

	json_object_set_new(c, "pin", json_string(pin));
	return c;
}

static char *matrix_text(const char *raw)
{
	json_t *results = json_pack("[o,o,o,o,o,o]", pinned("pipe", "0:0", 5000, false),
				    pinned("pipe", "0:1", 6000, false), pinned("pipe", "1:0", 7000, false),
				    pinned("pipe", "1:1", 1, true), pinned(raw, "0:0", 9000, false),
				    pinned(raw, "1:1", 9500, false));
	json_t *root = json_pack("{s:i, s:s, s:o, s:{s:s, s:[i,i], s:{s:s, s:s, s:s, s:s}}}",
				 "schema_version", 1, "cmdline", "ipclab run --pin matrix",
				 "results", results, "matrix", "metric", "lat_p50_ns", "cpus", 1, 0,
				 "pairs", "0:0", "same_cpu", "0:1", "smt", "1:0", "smt", "1:1", "same_cpu");
	char *text = json_dumps(root, 0);

	json_decref(root);
	return text;
}

/* Two configurations whose labels agree past the labels' bytes (an
 * option's value of 300 equal bytes, then 1 or 2) are two series, two
 * bars and two heatmaps, not one. */
static json_t *tagged(const char *pin, int size, int lat, char last)
{
	char tag[302];
	json_t *c = cell("pipe", "pingpong", size, "rtt", lat, 1e6 * lat / 1000, lat / 10, false);

	memset(tag, 'a', 300);
	tag[300] = last;
	tag[301] = '\0';
	json_object_set_new(c, "pin", json_string(pin));
	json_object_set_new(json_object_get(c, "options"), "transport", json_pack("{s:s}", "tag", tag));
	return c;
}

static void test_long_labels(void **state)
{
	struct rfile rf;
	const struct rcell **cells;
	struct fig_in in;
	struct figure f, *figs;
	size_t n;

	(void)state;
	load(&rf, &cells, &in, json_pack("[o,o,o,o]", tagged("0:0", 64, 5000, '1'), tagged("0:0", 1024, 6000, '1'),
				       tagged("0:0", 64, 7000, '2'), tagged("0:0", 1024, 8000, '2')));
	assert_int_equal(figure_build(&f, FIG_THROUGHPUT, &in), 0);
	assert_int_equal(f.ns, 2);
	assert_true(f.s[0].n == 2 && f.s[1].n == 2);
	figure_free(&f);
	assert_int_equal(figure_build(&f, FIG_CPU, &in), 0);
	assert_int_equal(f.ns, 4);	/* a bar per size and tag */
	figure_free(&f);
	free(cells);
	rfile_free(&rf);
	{
		json_t *root = json_pack("{s:i, s:s, s:[o,o], s:{s:s, s:[i], s:{s:s}}}", "schema_version", 1,
					 "cmdline", "ipclab run --pin matrix", "results",
					 tagged("0:0", 64, 5000, '1'), tagged("0:0", 64, 7000, '2'), "matrix", "metric",
					 "lat_p50_ns", "cpus", 0, "pairs", "0:0", "same_cpu");
		char *text = json_dumps(root, 0), err[256];

		json_decref(root);
		if (rfile_load_text(&rf, "made-up.json", text, strlen(text), NULL, err, sizeof(err)))
			fail_msg("%s", err);
		assert_int_equal(figure_matrix(&rf, &figs, &n), 0);
		assert_int_equal(n, 2);
		assert_true(figs[0].grid.v[0] == 5000 && figs[1].grid.v[0] == 7000);
		figure_free_n(figs, n);
		rfile_free(&rf);
		free(text);
	}
}

static void test_matrix(void **state)
{
	static const char raw[] = "x'`touch M`\"<b>";
	char *text = matrix_text(raw), *page = NULL, err[256];
	struct emitted *e = calloc(1, sizeof(*e));
	struct plot_opts o = { .width = 640, .height = 480, .emit = emit, .emit_arg = e };
	struct html_opts ho = { .title = "t" };
	struct figure *figs;
	struct rfile rf;
	size_t n, len = 0, k = 0;
	FILE *mf = open_memstream(&page, &len);

	(void)state;
	assert_non_null(e);
	if (rfile_load_text(&rf, "made-up.json", text, strlen(text), NULL, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(figure_matrix(&rf, &figs, &n), 0);
	assert_int_equal(n, 2);
	assert_true(figs[0].kind == FIG_HEAT && figs[0].ns == 0);
	assert_string_equal(figs[0].name, "matrix-lat_p50_ns-1");
	assert_string_equal(figs[0].title, "lat_p50_ns, server CPU x client CPU: pipe");
	/* rows and columns in topology order: CPU 1, then CPU 0 */
	assert_true(figs[0].grid.nr == 2 && figs[0].grid.nc == 2);
	assert_string_equal(figs[0].grid.rows[0], "1");
	assert_string_equal(figs[0].grid.cols[1], "0");
	/* [server 1, client 0] is pin 1:0; [0, 0] is 0:0; 1:1 failed: no value */
	assert_true(figs[0].grid.v[0 * 2 + 1] == 7000 && figs[0].grid.v[1 * 2 + 1] == 5000);
	assert_true(figs[0].grid.v[1 * 2 + 0] == 6000 && isnan(figs[0].grid.v[0]));
	assert_string_equal(figs[0].grid.text[0], "-");
	assert_string_equal(figs[0].grid.text[1], "7.00us s");
	assert_string_equal(figs[0].grid.text[3], "5.00us =");
	assert_string_equal(figs[0].grid.tip[0], "no value, same CPU");
	assert_string_equal(figs[0].grid.tip[1], "7.00us, SMT sibling");
	/* the colour scale: the metric's field, from the lowest value to the highest */
	assert_ptr_equal(figs[0].z.fd, field_find("lat_p50_ns"));
	assert_true(figs[0].z.lo == 5000 && figs[0].z.hi == 7000 && figs[0].z.per == 1e3);
	assert_non_null(strstr(figs[1].title, raw));
	assert_true(figs[1].grid.v[0] == 9500 && isnan(figs[1].grid.v[1]));

	/* the page: the model's squares, colours and texts; the label escaped */
	{
		const struct rfile *files[1] = { &rf };
		char col[16], want[160];

		assert_int_equal(html_report(mf, files, 1, &ho, err, sizeof(err)), 0);
		assert_int_equal(fclose(mf), 0);
		fig_colour(&figs[0], 7000, col, sizeof(col));
		assert_string_equal(col, "#fde725");
		snprintf(want, sizeof(want),
			 "fill=\"%s\"/><title>server CPU 1, client CPU 0: 7.00us, SMT sibling</title>",
			 col);
		assert_non_null(strstr(page, want));
		assert_non_null(strstr(page, "fill=\"#eeeeee\"/><title>server CPU 1, client CPU 1: "
					     "no value, same CPU</title>"));
		assert_non_null(strstr(page, ">5.00us =</text>"));
		assert_non_null(strstr(page, "server CPU x client CPU: x&#39;`touch M`&quot;&lt;b&gt;"));
		assert_null(strstr(page, "M`\"<b>"));
	}
	/* the script: the squares' texts in cls, the values in us, the label
	 * quoted in the title and made plain text in the data file */
	if (plot_scripts("made-up.json", text, strlen(text), &o, err, sizeof(err)))
		fail_msg("%s", err);
	while (k < e->n && strcmp(e->names[k], "matrix-lat_p50_ns-1"))
		k++;
	assert_true(k + 1 < e->n);
	assert_string_equal(e->names[k + 1], "matrix-lat_p50_ns-2");
	assert_non_null(strstr(e->dat[k], "\nserver\\client\t1\t0\n1\tNaN\t7\n0\t6\t5\n"));
	assert_non_null(strstr(e->gp[k], "\ncls[1] = '-'\ncls[2] = '7.00us s'\n"));
	assert_non_null(strstr(e->gp[k], "\nset cblabel 'p50 (us)'\n"));
	/* the colours' ends as on the page: each figure's lowest and highest
	 * value (in us), not gnuplot's rounded ones */
	assert_non_null(strstr(e->gp[k], "\nset cbrange [5:7]\n"));
	assert_non_null(strstr(e->gp[k + 1], "\nset cbrange [9:9.5]\n"));
	/* a square without a value (NaN, left out of the image) in the
	 * page's grey, from behind */
	assert_non_null(strstr(e->gp[k], "\nset object 1 rectangle from graph 0, graph 0 to graph 1, graph 1 "
					 "behind fillcolor rgb \"#eeeeee\" fillstyle solid 1.0 noborder\n"));
	assert_non_null(strstr(e->gp[k + 1], "\nset title 'lat_p50_ns, server CPU x client CPU: "
					     "x''`touch M`\"<b>'\n"));
	assert_non_null(strstr(e->dat[k + 1], "client CPU: x'`touch M`'<b>"));
	figure_free_n(figs, n);
	rfile_free(&rf);
	free(page);
	free(text);
	free(e);
}

/* ipclab history's table (src/cmd/history_out.c): each series' metric
 * named by the field table, its values scaled and in its unit as the
 * table says (bytes_per_s in MB/s, not a count per second; a share in %;
 * a latency in us), not by the key's suffix; a key the table does not
 * have as a number. */
static void test_history_text(void **state)
{
	struct hpoint p[3] = {
		{ .run = 1, .at = "2025-01-01T12:00:00Z", .value = 2.5e8, .lo = 2.4e8, .hi = 2.6e8 },
		{ .run = 1, .at = "2025-01-01T12:00:00Z", .value = 45.25, .lo = NAN, .hi = NAN },
		{ .run = 1, .at = "2025-01-01T12:00:00Z", .value = 12345, .lo = NAN, .hi = NAN },
	};
	struct hseries s[3] = {
		{ .label = "pipe 64B", .metric = "bytes_per_s", .pts = &p[0], .n = 1 },
		{ .label = "pipe 64B", .metric = "cpu_pct_total", .pts = &p[1], .n = 1 },
		{ .label = "pipe 64B", .metric = "lat_p50_ns", .pts = &p[2], .n = 1 },
	};
	struct history h = { .s = s, .n = 3 };
	char *out = NULL, buf[32];
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	(void)state;
	assert_non_null(f);
	for (int i = 0; i < 3; i++)
		p[i].labels = json_object();
	assert_int_equal(history_table(f, &h), 0);
	assert_int_equal(fclose(f), 0);
	assert_non_null(strstr(out, "pipe 64B: message bytes per second, headers included "
				    "(bytes_per_s), 1 runs"));
	assert_non_null(strstr(out, " 250 MB/s  [240 MB/s, 260 MB/s] "));
	assert_non_null(strstr(out, "pipe 64B: user+sys time of all sides, % of one CPU "
				    "(cpu_pct_total), 1 runs"));
	assert_non_null(strstr(out, " 45%  - "));
	assert_non_null(strstr(out, "pipe 64B: median latency (lat_p50_ns), 1 runs"));
	assert_non_null(strstr(out, " 12.3us  - "));
	assert_null(strstr(out, "M/s"));
	/* a count per second; a key the table does not have: a number, its suffix no unit */
	assert_string_equal(history_fmt(buf, sizeof(buf), "msgs_per_s", 1.5e6), "1.50M/s");
	assert_string_equal(history_fmt(buf, sizeof(buf), "no_such_ns", 1500), "1500");
	assert_string_equal(history_fmt(buf, sizeof(buf), "lat_p50_ns", NAN), "-");
	for (int i = 0; i < 3; i++)
		json_decref(p[i].labels);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_backends_agree),
		cmocka_unit_test(test_hostile_label),
		cmocka_unit_test(test_history),
		cmocka_unit_test(test_matrix),
		cmocka_unit_test(test_long_labels),
		cmocka_unit_test(test_history_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
