// SPDX-License-Identifier: MIT
/* ipclab report's page (src/report/html*.c): the one escaping helper in
 * text and attributes (markup, quotes, control bytes, invalid UTF-8), the
 * data block that no string can end, and figures whose numbers are the
 * result file's own, through the field table: the throughput figure's
 * points are each cell's bytes_per_s, the percentile curve at p50 its
 * lat_p50_ns within the histogram's bound; hostile strings of a result
 * file land in the page as text; a cycle cell's and a matrix's parts of
 * the record read back checked (src/pattern/cycle/report/rec.h, rec_matrix.h). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ipclab/util.h"
#include "html.h"
#include "../../src/pattern/cycle/report/rec.h"
#include "rec_matrix.h"

#ifndef SRCDIR
#define SRCDIR "."
#endif

/* What fn wrote into a memory stream, NUL-terminated (the caller frees). */
static char *esc(const char *in)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	html_esc(f, in);
	fclose(f);
	return buf;
}

static void test_escape(void **state)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;" },
		{ "a\"b'c&d", "a&quot;b&#39;c&amp;d" },
		{ "x\x01y\x7f", "x\xef\xbf\xbdy\xef\xbf\xbd" },		/* control bytes */
		{ "caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac" },	/* valid UTF-8 kept */
		{ "\xff<", "\xef\xbf\xbd&lt;" },				/* a stray byte */
		{ "\xc0\xbc", "\xef\xbf\xbd\xef\xbf\xbd" },		/* overlong '<' */
		{ "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },	/* a surrogate */
		{ "\xe2\x82", "\xef\xbf\xbd\xef\xbf\xbd" },		/* cut short */
		{ "tab\tnl\n", "tab\tnl\n" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *got = esc(cases[i].in);

		if (strcmp(got, cases[i].out))
			fail_msg("case %zu: got '%s', want '%s'", i, got, cases[i].out);
		free(got);
	}
}

/* The content of <script type="application/json" id="ID">...</script>. */
static char *data_block(const char *page, const char *id)
{
	char open[128];
	const char *a, *b;

	snprintf(open, sizeof(open), "<script type=\"application/json\" id=\"%s\">", id);
	a = strstr(page, open);
	assert_non_null(a);
	a += strlen(open);
	b = strstr(a, "</script>");
	assert_non_null(b);
	return strndup(a, (size_t)(b - a));
}

static void test_json_block(void **state)
{
	const char *hostile = "</script><script>alert(1)</script><!-- & </SCRIPT >";
	json_t *v = json_pack("{s:s}", "s", hostile), *back;
	char *buf = NULL, *inner;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_int_equal(html_json_script(f, "d", v), 0);
	fclose(f);
	inner = data_block(buf, "d");
	/* nothing inside could end the element or open a comment */
	assert_null(strchr(inner, '<'));
	assert_null(strchr(inner, '>'));
	assert_null(strchr(inner, '&'));
	back = json_loads(inner, 0, NULL);
	assert_non_null(back);
	assert_string_equal(json_string_value(json_object_get(back, "s")), hostile);
	json_decref(back);
	json_decref(v);
	free(inner);
	free(buf);
}

static char *page_of(const char *name, const char *folded)
{
	struct html_opts o = { .folded_dir = folded };
	const struct rfile *files[1];
	char path[4096], err[ERRLEN] = "", *buf = NULL;
	size_t len = 0;
	struct rfile rf;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/data/%s", SRCDIR, name);
	if (rfile_load(&rf, path, NULL, err, sizeof(err)))
		fail_msg("%s", err);
	files[0] = &rf;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	if (html_report(f, files, 1, &o, err, sizeof(err)))
		fail_msg("%s", err);
	fclose(f);
	rfile_free(&rf);
	return buf;
}

static const json_t *fig_titled(const json_t *data, const char *title)
{
	const char *k;
	json_t *v;

	json_object_foreach(json_object_get(data, "figs"), k, v)
		if (!strcmp(json_string_value(json_object_get(v, "title")), title))
			return v;
	fail_msg("no figure '%s' in the data block", title);
	return NULL;
}

/* The one ok cell of this size whose bytes_per_s is v, counted. */
static unsigned cells_with(const struct rfile *rf, double size, const char *key, double v)
{
	unsigned n = 0;

	for (size_t i = 0; i < rf->n; i++) {
		const json_t *s = json_object_get(rf->cells[i].obj, "size_bytes");

		n += rf->cells[i].ok && json_number_value(s) == size &&
		     fabs(rcell_metric(&rf->cells[i], key) - v) <= 1e-5 * fabs(v);
	}
	return n;
}

static void test_figures_are_the_files(void **state)
{
	char *page = page_of("plot-small.json", NULL), *block = data_block(page, "ipclab-data");
	json_t *data = json_loads(block, 0, NULL);
	const json_t *tp, *pct, *s, *p;
	char path[4096], err[ERRLEN];
	struct rfile rf;
	size_t i, k, points = 0;

	(void)state;
	assert_non_null(data);
	snprintf(path, sizeof(path), "%s/tests/data/plot-small.json", SRCDIR);
	assert_int_equal(rfile_load(&rf, path, NULL, err, sizeof(err)), 0);
	tp = fig_titled(data, "throughput against message size");
	json_array_foreach(json_object_get(tp, "s"), i, s)
		json_array_foreach(json_object_get(s, "p"), k, p) {
			double x = json_number_value(json_array_get(p, 0));
			double y = json_number_value(json_array_get(p, 1));

			if (!cells_with(&rf, x, "bytes_per_s", y))
				fail_msg("throughput point (%g, %g) is no cell's bytes_per_s", x, y);
			points++;
		}
	assert_true(points >= 4);
	/* the percentile curve at p50 (x = 2) is the cell's median, within 1 % */
	pct = fig_titled(data, "round-trip latency by percentile");
	json_array_foreach(json_object_get(pct, "s"), i, s) {
		const json_t *first = json_array_get(json_object_get(s, "p"), 0);
		double y = json_number_value(json_array_get(first, 1));
		bool found = false;

		assert_true(fabs(json_number_value(json_array_get(first, 0)) - 2) < 1e-9);
		for (size_t c = 0; c < rf.n; c++) {
			double p50 = rcell_metric(&rf.cells[c], "lat_p50_ns");

			found |= rf.cells[c].ok && fabs(y - p50) <= 0.011 * p50;
		}
		if (!found)
			fail_msg("series %zu: p50 %g is no cell's lat_p50_ns", i, y);
	}
	rfile_free(&rf);
	json_decref(data);
	free(block);
	free(page);
}

/* Every transport of the traced file on the page, its budget drawn, its
 * flame graphs read from the folded stacks. */
static void test_traced_page(void **state)
{
	char dir[4096];
	char *page;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/tests/data/report-folded", SRCDIR);
	page = page_of("report-traced.json", dir);
	assert_non_null(strstr(page, "time budget of each side over its window"));
	assert_non_null(strstr(page, "critical path of a round trip"));
	assert_non_null(strstr(page, "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 1200"));
	assert_non_null(strstr(page, "class=\"fr "));
	assert_non_null(strstr(page, ">pipe<"));
	assert_non_null(strstr(page, ">unix-stream<"));
	free(page);
}

/* A hostile file's numbers and lengths: extremes everywhere, long lists;
 * the page is written, in bounded time and size. */
static void test_hostile_numbers(void **state)
{
	char path[4096], err[ERRLEN] = "", *buf = NULL;
	struct html_opts o = { 0 };
	const struct rfile *files[1];
	json_t *root, *res, *c, *m, *top, *mx, *xr, *st, *sides;
	struct rfile rf;
	size_t len = 0;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/tests/data/plot-small.json", SRCDIR);
	root = json_load_file(path, 0, NULL);
	assert_non_null(root);
	res = json_object_get(root, "results");
	c = json_array_get(res, 0);
	m = json_object_get(c, "metrics");
	json_object_set_new(m, "cpu_ns_per_msg", json_real(1.7e308));
	json_object_set_new(m, "msgs_per_s", json_real(1e308));
	json_object_set_new(m, "bytes_per_s", json_real(-5));
	json_object_set_new(m, "lat_p50_ns", json_real(-1e300));
	json_object_set_new(m, "deadline_ns", json_real(1e308));
	json_object_set_new(json_array_get(res, 1), "size_bytes", json_real(1e308));
	top = json_array();
	for (int i = 0; i < 20000; i++)
		json_array_append_new(top, json_pack("{s:s, s:s, s:f, s:f}", "symbol", "<b>x</b>",
						     "object", "o", "samples", 1e308, "pct", -1.0));
	json_object_set_new(c, "profile", json_pack("[{s:s, s:o}]", "role", "server", "top", top));
	mx = json_array();
	xr = json_array();
	for (int i = 0; i < 100000; i++) {
		json_array_append_new(mx, json_real(i % 2 ? 1e308 : 1));
		json_array_append_new(xr, json_integer(i % 3));
	}
	json_object_set_new(c, "cycle_series", json_pack("{s:i, s:o, s:o}", "cycles_per_point", 1,
							 "max_ns", mx, "xruns", xr));
	/* its stages and xrun causes: too many, extremes, strings for numbers */
	st = json_array();
	for (int i = 0; i < 300; i++)
		json_array_append_new(st, i % 3 ? json_pack("{s:f, s:f, s:f, s:{s:s, s:f}}",
							     "wait_share_pct", 1e308, "busy_share_pct",
							     -1e308, "xruns_caused", 1e308, "xrun_causes",
							     "stage_wait", "<b>x</b>", "stage_busy", 1e308) :
						json_string("<b>x</b>"));
	json_object_set_new(m, "stages", st);
	json_object_set_new(m, "xruns", json_real(1e308));
	json_object_set_new(m, "xrun_causes", json_pack("{s:f, s:s, s:i}", "late_start", 1e308,
							"stage_busy", "<b>x</b>", "preempted", -1));
	sides = json_pack("[{s:s, s:f, s:f, s:f, s:f, s:f, s:f}]", "role", "server", "wall_ns", 1e308,
			  "user_ns", 1e308, "sys_ns", 1e308, "runnable_ns", -1.0, "preempted_ns", 0.0,
			  "sleep_ns", 1e308);
	json_object_set_new(c, "trace", json_pack("{s:o, s:{s:f, s:f, s:f}}", "sides", sides,
						  "critical_path_ns", "total", 1e308, "measured",
						  -1.0, "client_user", 1e308));
	assert_int_equal(rfile_from_tree(&rf, root, "hostile.json", NULL, err, sizeof(err)), 0);
	files[0] = &rf;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	if (html_report(f, files, 1, &o, err, sizeof(err)))
		fail_msg("%s", err);
	fclose(f);
	rfile_free(&rf);
	assert_true(len < (16u << 20));
	assert_null(strstr(buf, "<b>x</b>"));
	free(buf);
}

/* The cycle and matrix parts of a record read back: what ipclab writes
 * comes out as written; a hostile file's strings, negatives, mismatched
 * or endless arrays are refused or read as nothing. */
static const char cycle_file[] =
	"{\"schema_version\": 1, \"results\": ["
	"{\"transport\": \"pipe\", \"pattern\": \"cycle\", \"status\": \"ok\", \"options\": {}, \"period_ns\": 2000000,"
	" \"metrics\": {\"deadline_ns\": 1000000, \"xruns\": 3,"
	"  \"xrun_causes\": {\"late_start\": 1, \"stage_busy\": 2, \"preempted\": null},"
	"  \"stages\": [{\"wait_share_pct\": 1.5, \"busy_share_pct\": 7, \"xruns_caused\": 2,"
	"   \"xrun_causes\": {\"stage_wait\": 0, \"stage_busy\": 2, \"preempted\": null}}, \"x\"]},"
	" \"cycle_series\": {\"cycles_per_point\": 4, \"max_ns\": [900, null, 1200, \"7\", -5],"
	"  \"xruns\": [0, 1, 2, -3, \"1\"], \"xrun_causes\": [null, \"late_start\", 7]}},"
	"{\"transport\": \"pipe\", \"pattern\": \"cycle\", \"status\": \"ok\", \"options\": {},"
	" \"metrics\": {\"deadline_ns\": 5, \"stages\": []},"
	" \"cycle_series\": {\"cycles_per_point\": 0, \"max_ns\": [1], \"xruns\": [0]}},"
	"{\"transport\": \"pipe\", \"pattern\": \"cycle\", \"status\": \"ok\", \"options\": {}, \"period_ns\": \"soon\","
	" \"metrics\": {\"stages\": 3}, \"cycle_series\": {\"cycles_per_point\": 1,"
	"  \"max_ns\": [1, 2], \"xruns\": [0]}}],"
	" \"matrix\": {\"metric\": \"lat_p50_ns\", \"cpus\": [3, \"x\", 1],"
	"  \"pairs\": {\"3:1\": \"smt\", \"1:3\": \"<b>\", \"3:3\": 5}}}";

static void test_cycle_records(void **state)
{
	struct rcycle_point p[8];
	struct rcycle_stage st[4];
	struct rcycle_series s;
	struct rcycle_causes xc;
	struct rmatrix m;
	struct rfile rf;
	char err[ERRLEN] = "";

	(void)state;
	if (rfile_load_text(&rf, "cyc.json", cycle_file, strlen(cycle_file), NULL, err, sizeof(err)))
		fail_msg("%s", err);
	/* as written, and each odd value read as nothing */
	assert_true(rcell_is_cycle(&rf.cells[0]));
	assert_true(rcell_cycle_series(&rf.cells[0], &s));
	assert_int_equal(s.per, 4);
	assert_int_equal(s.n, 5);
	assert_int_equal(rcell_cycle_points(&rf.cells[0], p, 8), 5);
	assert_true(p[0].max_ns == 900 && !p[0].xruns && !p[0].cause);
	assert_true(isnan(p[1].max_ns) && p[1].xruns == 1 && !strcmp(p[1].cause, "late_start"));
	assert_true(p[2].max_ns == 1200 && p[2].xruns == 2 && !p[2].cause);
	assert_true(isnan(p[3].max_ns) && !p[3].xruns);
	assert_true(isnan(p[4].max_ns) && !p[4].xruns);
	assert_int_equal(rcell_cycle_points(&rf.cells[0], p, 2), 2);
	assert_true(rcell_cycle_period_ns(&rf.cells[0]) == 2e6);
	assert_true(rcell_cycle_deadline_ns(&rf.cells[0]) == 1e6);
	assert_true(rcell_cycle_xruns(&rf.cells[0]) == 3);
	assert_int_equal(rcell_cycle_stages(&rf.cells[0], st, 4), 2);
	assert_true(st[0].wait_share_pct == 1.5 && st[0].busy_share_pct == 7 &&
		    st[0].xruns_caused == 2 && st[0].by_busy == 2 && st[0].by_preempted == 0);
	assert_true(st[1].wait_share_pct == 0 && st[1].xruns_caused == 0);
	assert_int_equal(rcell_cycle_stages(&rf.cells[0], st, 1), 1);
	assert_true(rcell_xrun_causes(&rf.cells[0], &xc));
	assert_true(xc.by[XC_LATE_START] == 1 && xc.by[XC_STAGE_BUSY] == 2 && xc.by[XC_UNKNOWN] == 0);
	assert_false(xc.preempted_known);
	/* no series without whole cycles per point, nor with arrays of two lengths */
	assert_true(rcell_is_cycle(&rf.cells[1]));
	assert_false(rcell_cycle_series(&rf.cells[1], &s));
	assert_int_equal(rcell_cycle_points(&rf.cells[1], p, 8), 0);
	assert_true(rcell_cycle_period_ns(&rf.cells[1]) == 5);
	assert_false(rcell_xrun_causes(&rf.cells[1], &xc));
	assert_true(isnan(rcell_cycle_xruns(&rf.cells[1])));
	assert_false(rcell_is_cycle(&rf.cells[2]));
	assert_false(rcell_cycle_series(&rf.cells[2], &s));
	assert_true(isnan(rcell_cycle_period_ns(&rf.cells[2])));
	/* the matrix: whole-number CPUs, known classes only */
	assert_true(rfile_matrix(&rf, &m));
	assert_string_equal(m.metric, "lat_p50_ns");
	assert_int_equal(m.ncpus, 2);
	assert_int_equal(rmatrix_cpu_at(&m, "1"), 1);
	assert_int_equal(rmatrix_cpu_at(&m, "1x"), -1);
	assert_int_equal(rmatrix_cpu_at(&m, ""), -1);
	assert_string_equal(rmatrix_mark(&m, 0, 1), "s");
	assert_string_equal(rmatrix_mark(&m, 1, 0), "");
	assert_string_equal(rmatrix_mark(&m, 0, 0), "");
	assert_string_equal(rmatrix_mark(&m, 5, 0), "");
	rfile_free(&rf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_json_block),
		cmocka_unit_test(test_figures_are_the_files),
		cmocka_unit_test(test_traced_page),
		cmocka_unit_test(test_hostile_numbers),
		cmocka_unit_test(test_cycle_records),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
