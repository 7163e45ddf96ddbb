// SPDX-License-Identifier: MIT
/* A result read by what it holds (rec_cell.c): a record as run writes it
 * read back value by value (aliases, the headline, intervals, status,
 * configuration apart from metrics, a series point's part, a stored
 * calibration, a suite's section, labels; the short names of metrics,
 * one table for all commands); hostile values (wrong types,
 * too long, a ci95 of strings, a metrics that is no object) read as absent. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ipclab/reporter.h"
#include "ipclab/result.h"
#include "rec_cell.h"
#include "rfile.h"

static json_t *load(const char *text)
{
	json_error_t jerr;
	json_t *v = json_loads(text, 0, &jerr);

	if (!v)
		fail_msg("%s: %s", text, jerr.text);
	return v;
}

static const char *const good =
	"{\"transport\": \"pipe\", \"pattern\": \"pingpong\", \"size_bytes\": 64, \"status\": \"ok\","
	" \"section\": \"seed-001\", \"verify\": true,"
	" \"metrics\": {\"lat_kind\": \"rtt\", \"lat_p50_ns\": 1500, \"msgs_per_s\": 2.5e5,"
	"  \"cpu_ns_per_msg\": 800.5, \"noisy\": true, \"bimodal\": false, \"serve\": \"ready\"},"
	" \"sides\": [], \"histogram\": {}, \"trace\": {}, \"interference\": {},"
	" \"repeat\": {\"n\": 5, \"lat_p50_ns\": {\"min\": 1400, \"max\": 1600, \"ci95\": [1450, 1550]}}}";

static void test_as_written(void **state)
{
	json_t *r = load(good), *part, *cfg;
	double lo = 0, hi = 0;

	(void)state;
	assert_true(rec_metric(r, "p50") == 1500);	/* the alias */
	assert_true(rec_metric(r, "cpu_per_msg") == 800.5);
	assert_true(isnan(rec_metric(r, "lat_p99_ns")));
	assert_true(isnan(rec_metric(r, "noisy")));	/* a boolean is no number */
	assert_int_equal(rec_lat_kind(r), LAT_RTT);
	assert_string_equal(rec_headline(r), "lat_p50_ns");
	assert_true(rec_flag(r, "noisy"));
	assert_false(rec_flag(r, "bimodal"));
	assert_true(rec_field_num(r, "size_bytes", true) == 64);
	assert_true(rec_field_num(r, "verify", true) == 1);
	assert_true(rec_field_num(r, "bimodal", false) == 0);
	assert_true(isnan(rec_field_num(r, "size_bytes", false)));
	assert_string_equal(rec_field_text(r, "serve", false), "ready");
	assert_true(rec_ci95(r, "lat_p50_ns", &lo, &hi) && lo == 1450 && hi == 1550);
	assert_false(rec_ci95(r, "msgs_per_s", &lo, &hi));
	assert_string_equal(rec_transport(r), "pipe");
	assert_string_equal(rec_pattern(r), "pingpong");
	assert_string_equal(rec_status(r), "ok");
	assert_null(rec_reason(r));
	assert_string_equal(rec_section(r), "seed-001");
	assert_true(rec_same_size(r, r));

	part = rec_metrics_part(r);	/* a series point keeps this much */
	assert_int_equal(json_object_size(part), 1);
	assert_true(rec_metric(part, "p50") == 1500);
	cfg = rec_config_copy(r);
	assert_true(rec_field_num(cfg, "size_bytes", true) == 64);
	assert_true(isnan(rec_metric(cfg, "p50")));
	assert_null(json_object_get(cfg, "sides"));
	assert_null(json_object_get(cfg, "repeat"));
	assert_null(json_object_get(cfg, "trace"));
	json_decref(part);
	json_decref(cfg);
	json_decref(r);
}

static void test_hostile(void **state)
{
	json_t *r = load("{\"transport\": 7, \"pattern\": [\"x\"], \"status\": null, \"size_bytes\": \"64\","
			 " \"metrics\": [1, 2], \"repeat\": {\"p\": {\"ci95\": [\"a\", \"b\"]},"
			 " \"q\": {\"ci95\": [1, 2, 3]}}}");
	json_t *m = load("{\"metrics\": {\"lat_kind\": 5, \"lat_p50_ns\": \"1500\", \"noisy\": 1},"
			 " \"size_bytes\": 64}");
	char *big = malloc(REC_STR_MAX + 2);
	double lo, hi;

	(void)state;
	assert_null(rec_transport(r));
	assert_null(rec_pattern(r));
	assert_null(rec_status(r));
	assert_true(isnan(rec_metric(r, "p50")));
	assert_null(rec_metrics_part(r));	/* metrics is no object */
	assert_false(rec_ci95(r, "p", &lo, &hi));
	assert_false(rec_ci95(r, "q", &lo, &hi));
	assert_false(rec_same_size(r, m));	/* "64" is not 64 */
	assert_true(isnan(rec_metric(m, "p50")));
	assert_int_equal(rec_lat_kind(m), LAT_NONE);
	assert_false(rec_flag(m, "noisy"));
	assert_true(rec_field_num(m, "noisy", false) == 1);	/* 1: a number, not true */
	assert_string_equal(rec_headline(m), "msgs_per_s");

	assert_non_null(big);
	memset(big, 'x', REC_STR_MAX + 1);
	big[REC_STR_MAX + 1] = '\0';
	json_object_set_new(m, "transport", json_string(big));
	assert_null(rec_transport(m));			/* over REC_STR_MAX */
	big[REC_STR_MAX] = '\0';
	json_object_set_new(m, "transport", json_string(big));
	assert_non_null(rec_transport(m));		/* at it */
	free(big);
	json_decref(r);
	json_decref(m);
}

static void test_calibration(void **state)
{
	json_t *root = load("{\"calibration\": {\"cells\": ["
			    "{\"transport\": \"pipe\", \"pattern\": \"pingpong\", \"what\": \"w\", \"lo\": 0.8, \"hi\": 1.2},"
			    "{\"transport\": \"tcp\", \"pattern\": \"pingpong\", \"lo\": 1.2, \"hi\": 0.8},"
			    "{\"transport\": \"x\", \"lo\": 1, \"hi\": 2}, 17,"
			    "{\"transport\": \"unix\", \"pattern\": \"stream\", \"lo\": \"1\", \"hi\": 2},"
			    "{\"transport\": \"udp\", \"pattern\": \"pingpong\", \"lo\": 0.5, \"hi\": 2}]}}");
	struct rec_drift d[4];

	(void)state;
	assert_int_equal(rec_drift_cells(rec_calibration(root), d, 4), 2);
	assert_string_equal(d[0].transport, "pipe");
	assert_string_equal(d[0].what, "w");
	assert_true(d[0].lo == 0.8 && d[0].hi == 1.2);
	assert_string_equal(d[1].transport, "udp");
	assert_string_equal(d[1].what, "");
	assert_int_equal(rec_drift_cells(rec_calibration(root), d, 1), 1);
	assert_int_equal(rec_drift_cells(NULL, d, 4), 0);
	json_decref(root);
}

static void test_section_and_labels(void **state)
{
	json_t *root = load("{\"sections\": [{\"name\": \"s1\", \"title\": \"One\", \"text\": \"Reading: x\","
			    " \"why\": {\"question\": \"q?\", \"hypotheses\": [{\"claim\": \"c\","
			    " \"reproduced\": true}, 5, {}, {}, {}, {}, {}, {}, {}, {}]}},"
			    " {\"name\": \"s2\", \"why\": \"not an object\"}]}");
	json_t *labels = load("{\"machine\": \"hostA\", \"n\": 3}");
	struct rec_sect s;

	(void)state;
	rec_file_section(root, "s1", &s);
	assert_string_equal(s.title, "One");
	assert_string_equal(s.text, "Reading: x");
	assert_true(s.why);
	assert_string_equal(s.question, "q?");
	assert_string_equal(s.answer, "");
	assert_int_equal(s.nhyp, REC_HYP_MAX);	/* 10 given: the first 8 */
	assert_string_equal(s.hyp[0].claim, "c");
	assert_true(s.hyp[0].reproduced);
	assert_string_equal(s.hyp[1].claim, "");	/* 5: all absent */
	rec_file_section(root, "s2", &s);
	assert_false(s.why);
	assert_null(s.title);
	rec_file_section(root, "none", &s);
	assert_null(s.text);
	assert_string_equal(rec_label(labels, "machine"), "hostA");
	assert_null(rec_label(labels, "n"));
	assert_null(rec_label(NULL, "machine"));
	json_decref(root);
	json_decref(labels);
}

/* One table of short names: run --pivot takes what plot, compare and
 * history take, and each names a field of the field table. */
static void test_aliases(void **state)
{
	static const char *const names[] = { "size", "cpu_pct", "rate", "p50", "p99", "cs",
					     "cpu_per_msg" };
	const struct field *f[3];
	char spec[64], err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(spec, sizeof(spec), "size,think,%s", names[i]);
		if (pivot_parse(spec, f, err, sizeof(err)))
			fail_msg("--pivot %s: %s", spec, err);
		assert_string_equal(f[2]->key, rf_metric_alias(names[i]));
		assert_string_not_equal(f[2]->key, names[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_as_written),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_calibration),
		cmocka_unit_test(test_section_and_labels),
		cmocka_unit_test(test_aliases),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
