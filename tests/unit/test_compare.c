// SPDX-License-Identifier: MIT
/* ipclab compare on two stored result files (tests/data/compare-*.json,
 * written by hand so that every expected ratio is a round number): cells
 * matched by configuration whatever their count or key order, ratios,
 * spread verdicts, --fail-above thresholds per direction, --metrics,
 * --ignore, unmatched and failed cells, a well-formed markdown table; and
 * result files read back for plot: the histogram rebuilt from the stored
 * buckets gives the run's own percentiles. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ipclab/util.h"
#include "compare.h"

#ifndef SRCDIR
#define SRCDIR "."
#endif

enum { M_MSGS, M_BYTES, M_P50, M_P99, M_MAX, M_CPUMSG, M_CPUPCT, M_CS };

struct fixture {
	struct rfile before, after;
};

static void data_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/tests/data/%s", SRCDIR, name);
}

static void load(struct rfile *rf, const char *name, const char *const *ignore)
{
	char path[4096], err[ERRLEN] = "";

	data_path(path, sizeof(path), name);
	if (rfile_load(rf, path, ignore, err, sizeof(err)))
		fail_msg("%s", err);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	load(&fx->before, "compare-before.json", NULL);
	load(&fx->after, "compare-after.json", NULL);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	rfile_free(&fx->before);
	rfile_free(&fx->after);
	free(fx);
	return 0;
}

static struct cmp_opts opts(double fail_above, unsigned mask)
{
	return (struct cmp_opts){ .fail_above_pct = fail_above, .metric_mask = mask };
}

#define ALL ((1u << CMP_NMETRICS) - 1)

static void assert_near(double got, double want)
{
	if (fabs(got - want) > 1e-9 * fabs(want))
		fail_msg("got %.12g, want %.12g", got, want);
}

static const char *param(const struct rcell *c, const char *name)
{
	static char buf[128];

	assert_int_equal(rcell_param(c, name, buf, sizeof(buf)), 0);
	return buf;
}

static void test_matching(void **state)
{
	struct fixture *fx = *state;
	struct cmp_opts o = opts(NAN, ALL);
	struct cmp_result r;

	assert_int_equal(compare_files(&fx->before, &fx->after, &o, &r), 0);
	/* pipe and unix-stream pingpong match although count differs */
	assert_int_equal(r.nrows, 3);
	assert_string_equal(r.rows[0].before->transport, "pipe");
	assert_string_equal(param(r.rows[0].after, "sched"), "other");
	assert_string_equal(r.rows[1].after->transport, "unix-stream");
	assert_true(r.rows[0].comparable && r.rows[1].comparable);
	/* pipe stream failed in after: matched, not compared */
	assert_string_equal(r.rows[2].before->pattern, "stream");
	assert_false(r.rows[2].comparable);
	assert_int_equal(r.nonly_before, 1);
	assert_string_equal(r.only_before[0]->transport, "posix-mq");
	assert_int_equal(r.nonly_after, 1);
	assert_string_equal(param(r.only_after[0], "sched"), "fifo:50");
	assert_non_null(strstr(r.only_after_label[0], "sched=fifo:50"));
	assert_int_equal(r.regressions, 0);
	compare_free(&r);
}

static void test_ratios_and_spread(void **state)
{
	struct fixture *fx = *state;
	struct cmp_opts o = opts(NAN, ALL);
	struct cmp_result r;
	const struct cmp_value *a, *b;

	assert_int_equal(compare_files(&fx->before, &fx->after, &o, &r), 0);
	a = r.rows[0].v;
	b = r.rows[1].v;
	assert_near(a[M_MSGS].before, 100000);
	assert_near(a[M_MSGS].after, 80000);
	assert_near(a[M_MSGS].ratio, 0.8);
	assert_near(a[M_MSGS].worse_pct, 20);	/* less throughput: worse */
	assert_near(a[M_P50].ratio, 1.2);
	assert_near(a[M_P50].worse_pct, 20);	/* more latency: worse */
	assert_near(a[M_MAX].ratio, 1.5);
	assert_near(a[M_P99].ratio, 1.0);
	assert_near(b[M_MSGS].ratio, 1.2);
	assert_near(b[M_MSGS].worse_pct, -20);	/* more throughput: better */
	assert_near(b[M_P50].ratio, 0.8);
	assert_near(b[M_P50].worse_pct, -20);
	assert_near(b[M_P99].change_pct, 7.5);
	/* ranges 98k-102k and 79k-81k do not overlap; max's do; bytes/s has none */
	assert_int_equal(a[M_MSGS].spread, CMP_BEYOND);
	assert_int_equal(a[M_P50].spread, CMP_BEYOND);
	assert_int_equal(a[M_MAX].spread, CMP_WITHIN);
	assert_int_equal(a[M_CPUPCT].spread, CMP_WITHIN);
	assert_int_equal(a[M_BYTES].spread, CMP_NO_SPREAD);
	assert_int_equal(b[M_MSGS].spread, CMP_NO_SPREAD);
	compare_free(&r);
}

static unsigned regressions(struct fixture *fx, double pct, unsigned mask, struct cmp_result *keep)
{
	struct cmp_opts o = opts(pct, mask);
	struct cmp_result r;
	unsigned n;

	assert_int_equal(compare_files(&fx->before, &fx->after, &o, &r), 0);
	n = r.regressions;
	if (keep)
		*keep = r;
	else
		compare_free(&r);
	return n;
}

static void test_fail_above(void **state)
{
	struct fixture *fx = *state;
	struct cmp_result r;

	/* pipe: msgs/s, bytes/s and p50 20 % worse; max 50 % worse but within spread */
	assert_int_equal(regressions(fx, 10, ALL, &r), 1);
	assert_true(r.rows[0].v[M_MSGS].regressed);
	assert_true(r.rows[0].v[M_BYTES].regressed);
	assert_true(r.rows[0].v[M_P50].regressed);
	assert_false(r.rows[0].v[M_MAX].regressed);
	assert_false(r.rows[1].v[M_P99].regressed);	/* 7.5 % < 10 % */
	assert_false(r.rows[1].v[M_MSGS].regressed);	/* 20 % better */
	compare_free(&r);
	assert_int_equal(regressions(fx, 25, ALL, NULL), 0);
	/* unix-stream: p99 7.5 %, CPU% and cs/s 8 % worse */
	assert_int_equal(regressions(fx, 5, ALL, &r), 2);
	assert_true(r.rows[1].v[M_P99].regressed);
	assert_true(r.rows[1].v[M_CS].regressed);
	assert_false(r.rows[1].v[M_CPUMSG].regressed);	/* 10 % better */
	compare_free(&r);
	assert_int_equal(regressions(fx, 7.9, ALL, NULL), 2);
	assert_int_equal(regressions(fx, 8.1, ALL, NULL), 1);
	/* only the metrics asked for count */
	assert_int_equal(regressions(fx, 1, 1u << M_MSGS, NULL), 1);
	assert_int_equal(regressions(fx, 1, 1u << M_CPUMSG, NULL), 0);
	/* pipe's CPU% is 3.3 % worse but within spread; unix-stream's 8 % counts */
	assert_int_equal(regressions(fx, 1, 1u << M_CPUPCT, &r), 1);
	assert_false(r.rows[0].v[M_CPUPCT].regressed);
	assert_true(r.rows[1].v[M_CPUPCT].regressed);
	compare_free(&r);
}

static void test_parse_metrics(void **state)
{
	char err[ERRLEN];
	unsigned mask;

	(void)state;
	assert_int_equal(cmp_parse_metrics("msgs_per_s,p50,cpu_pct", &mask, err, sizeof(err)), 0);
	assert_int_equal(mask, (1u << M_MSGS) | (1u << M_P50) | (1u << M_CPUPCT));
	assert_int_not_equal(cmp_parse_metrics("lat_p42_ns", &mask, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "lat_p42_ns"));
}

static void test_ignore(void **state)
{
	static const char *const ignore[] = { "sched", NULL };
	struct cmp_opts o = opts(NAN, ALL);
	struct rfile before, after;
	struct cmp_result r;

	(void)state;
	load(&before, "compare-before.json", ignore);
	load(&after, "compare-after.json", ignore);
	assert_int_equal(compare_files(&before, &after, &o, &r), 0);
	/* the first pipe pingpong of after (sched other) still pairs with before's */
	assert_int_equal(r.nrows, 3);
	assert_string_equal(param(r.rows[0].after, "sched"), "other");
	assert_int_equal(r.nonly_after, 1);
	compare_free(&r);
	rfile_free(&before);
	rfile_free(&after);
}

/* The same file with every object's keys in another order matches itself. */
static void test_key_order(void **state)
{
	char path[4096], tmp[] = "/tmp/ipclab-test-compare-XXXXXX", err[ERRLEN];
	struct cmp_opts o = opts(0, ALL);
	struct rfile a, b;
	struct cmp_result r;
	json_t *root;
	int fd;

	(void)state;
	data_path(path, sizeof(path), "compare-before.json");
	root = json_load_file(path, 0, NULL);
	assert_non_null(root);
	fd = mkstemp(tmp);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(json_dump_file(root, tmp, JSON_SORT_KEYS), 0);
	json_decref(root);
	load(&a, "compare-before.json", NULL);
	assert_int_equal(rfile_load(&b, tmp, NULL, err, sizeof(err)), 0);
	unlink(tmp);
	assert_int_equal(compare_files(&a, &b, &o, &r), 0);
	assert_int_equal(r.nrows, 4);
	assert_int_equal(r.nonly_before + r.nonly_after, 0);
	assert_int_equal(r.regressions, 0);
	assert_near(r.rows[1].v[M_P99].ratio, 1.0);
	compare_free(&r);
	rfile_free(&a);
	rfile_free(&b);
}

/* Unescaped '|' in a markdown table line. */
static unsigned pipes(const char *line, size_t len)
{
	unsigned n = 0;

	for (size_t i = 0; i < len; i++)
		n += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
	return n;
}

static void test_markdown(void **state)
{
	struct fixture *fx = *state;
	struct cmp_opts o = opts(10, ALL);
	struct cmp_result r;
	char *text = NULL, *line;
	size_t size = 0, rows = 0;
	FILE *f = open_memstream(&text, &size);
	bool in_table = true;

	assert_non_null(f);
	assert_int_equal(compare_files(&fx->before, &fx->after, &o, &r), 0);
	assert_int_equal(compare_print(f, &r, &o, "markdown"), 0);
	fclose(f);
	compare_free(&r);
	assert_true(!strncmp(text, "| cell | metric |", 17));
	for (line = text; *line; ) {
		size_t len = strcspn(line, "\n");

		if (in_table && line[0] == '|') {
			assert_int_equal(pipes(line, len), 10);	/* 9 columns */
			assert_int_equal(line[len - 1], '|');
			if (rows == 1)
				assert_non_null(strstr(line, "| --- |"));
			rows++;
		} else {
			in_table = false;	/* one table, no stray rows after it */
			assert_true(line[0] != '|');
		}
		line += len + (line[len] == '\n');
	}
	assert_int_equal(rows, 2 + 8 + 8 + 1);
	assert_non_null(strstr(text, "REGRESSION"));
	assert_non_null(strstr(text, "no spread data (use --repeat)"));
	assert_non_null(strstr(text, "posix-mq"));
	free(text);
}

static void test_bad_file(void **state)
{
	char path[4096], err[ERRLEN] = "";
	struct rfile rf;

	(void)state;
	assert_int_not_equal(rfile_load(&rf, "/nonexistent/x.json", NULL, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "/nonexistent/x.json"));
	data_path(path, sizeof(path), "../../README.md");
	assert_int_not_equal(rfile_load(&rf, path, NULL, err, sizeof(err)), 0);
}

/* Plot's percentile curves come from the rebuilt histogram: they must give
 * back the percentiles the run itself reported. */
static void test_hist_rebuild(void **state)
{
	struct rfile rf;
	struct hist *h = malloc(sizeof(*h));

	(void)state;
	assert_non_null(h);
	load(&rf, "plot-small.json", NULL);
	assert_true(rf.n >= 4);
	for (size_t i = 0; i < rf.n; i++) {
		const struct rcell *c = &rf.cells[i];

		assert_int_equal(rcell_hist(c, h), 0);
		assert_int_equal(h->count, (uint64_t)rcell_metric(c, "lat_samples"));
		assert_int_equal(hist_quantile(h, 0.5), (uint64_t)rcell_metric(c, "lat_p50_ns"));
		assert_int_equal(hist_quantile(h, 0.99), (uint64_t)rcell_metric(c, "lat_p99_ns"));
		assert_int_equal(hist_quantile(h, 0.9999),
				 (uint64_t)rcell_metric(c, "lat_p99_99_ns"));
	}
	rfile_free(&rf);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_matching, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ratios_and_spread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fail_above, setup, teardown),
		cmocka_unit_test(test_parse_metrics),
		cmocka_unit_test(test_ignore),
		cmocka_unit_test(test_key_order),
		cmocka_unit_test_setup_teardown(test_markdown, setup, teardown),
		cmocka_unit_test(test_bad_file),
		cmocka_unit_test(test_hist_rebuild),
	};

	return cmocka_run_group_tests_name("compare, result files", tests, NULL, NULL) ? 1 : 0;
}
