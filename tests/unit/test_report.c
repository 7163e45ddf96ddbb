// SPDX-License-Identifier: MIT
/* Reporters: the JSON record parses back with the keys, types and values the
 * field table promises; CSV reads back to the same header and values; every
 * key carries a unit and is documented in docs/output.md. The tables and the
 * environment probe are tested in test_report_tables.c, run from here. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "ipclab/reporter.h"
#include "ipclab/result.h"
#include "ipclab/util.h"
#include "../../src/report/fields.h"
#include "report_fixture.h"

#ifndef SRCDIR
#define SRCDIR "."
#endif

static const char *srcdir = SRCDIR;

static json_t *json_of(const struct report *rep)
{
	FILE *f = tmpfile();
	json_error_t jerr;
	char err[ERRLEN] = "";
	json_t *root;

	assert_non_null(f);
	assert_int_equal(report_json(f, rep, err, sizeof(err)), 0);
	rewind(f);
	root = json_loadf(f, 0, &jerr);
	if (!root)
		fail_msg("JSON does not parse: %s at line %d", jerr.text, jerr.line);
	fclose(f);
	return root;
}

/* ---- JSON -------------------------------------------------------------- */

static void check_json_field(const struct field *fd, const struct result *r, json_t *v)
{
	double want;

	if (field_missing(fd, r)) {
		assert_true(json_is_null(v));
		return;
	}
	if (fd->kind == F_STR) {
		assert_true(json_is_string(v));
		assert_string_equal(json_string_value(v), fd->get_str(r));
		return;
	}
	want = fd->get_num(r);
	if (fd->kind == F_BOOL) {
		assert_true(json_is_boolean(v));
		assert_int_equal(json_is_true(v), want != 0);
	} else if (fd->kind == F_U64) {
		assert_true(json_is_integer(v));
		assert_int_equal(json_integer_value(v), (json_int_t)want);
	} else {
		assert_true(json_is_real(v));
		assert_true(fabs(json_real_value(v) - want) <= fabs(want) * 1e-12);
	}
}

static void test_json_header(void **state)
{
	const struct report *rep = *state;
	json_t *root = json_of(rep), *env = json_object_get(root, "env");

	assert_int_equal(json_integer_value(json_object_get(root, "schema_version")),
			 SCHEMA_VERSION);
	assert_true(json_is_string(json_object_get(root, "ipclab_version")));
	assert_true(json_is_string(json_object_get(root, "ipclab_git_rev")));
	assert_string_equal(json_string_value(json_object_get(root, "cmdline")), rep->cmdline);
	assert_true(json_is_object(env));
	assert_string_equal(json_string_value(json_object_get(env, "kernel")), rep->env.kernel);
	assert_string_equal(json_string_value(json_object_get(env, "virtualization")), "kvm");
	assert_int_equal(json_integer_value(json_object_get(env, "cpus_online")), 2);
	assert_true(json_is_real(json_object_get(env, "clock_cost_ns")));
	assert_true(json_is_integer(json_object_get(env, "clock_resolution_ns")));
	assert_int_equal(json_array_size(json_object_get(root, "results")), 2);
	json_decref(root);
}

static void test_json_fields(void **state)
{
	const struct report *rep = *state;
	json_t *root = json_of(rep), *res = json_array_get(json_object_get(root, "results"), 0);
	json_t *metrics = json_object_get(res, "metrics");
	const struct result *r = &rep->results[0];

	assert_true(json_is_object(metrics));
	for (size_t i = 0; i < n_result_fields; i++) {
		const struct field *fd = &result_fields[i];
		json_t *v = json_object_get(fd->config ? res : metrics, fd->key);

		if (fd->config && fd->kind == F_STR && !fd->get_str(r)[0]) {
			assert_null(v);	/* reason and section: absent when empty */
			continue;
		}
		if (fd->optional) {
			/* another pattern's (-p cycle): absent from this record */
			if (v)
				fail_msg("key %s of another pattern in the JSON record", fd->key);
			continue;
		}
		if (!v)
			fail_msg("key %s missing from the JSON record", fd->key);
		check_json_field(fd, r, v);
	}
	assert_int_equal(json_array_size(json_object_get(metrics, "cpu_busy_pct")), 2);
	assert_true(json_real_value(json_array_get(json_object_get(metrics, "cpu_busy_pct"), 1)) ==
		    71.25);
	json_decref(root);
}

static void test_json_settings_options(void **state)
{
	json_t *root = json_of(*state), *res = json_array_get(json_object_get(root, "results"), 0);
	json_t *set = json_object_get(res, "settings"), *opt = json_object_get(res, "options");
	json_t *tp = json_object_get(opt, "transport");

	assert_int_equal(json_integer_value(json_object_get(set, "pipe_size_bytes")), 65536);
	assert_string_equal(json_string_value(json_object_get(set, "mode")), "0600");
	assert_int_equal(json_integer_value(json_object_get(tp, "nonblock")), 1);
	assert_string_equal(json_string_value(json_object_get(tp, "label")), "a b");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(opt, "pattern"),
							    "think")), 0);
	json_decref(root);
}

static void test_json_sides(void **state)
{
	json_t *root = json_of(*state), *res = json_array_get(json_object_get(root, "results"), 0);
	json_t *sides = json_object_get(res, "sides");

	assert_int_equal(json_array_size(sides), 2);
	for (size_t s = 0; s < 2; s++) {
		json_t *side = json_array_get(sides, s);
		size_t k = 0;

		for (void *it = json_object_iter(side); it; it = json_object_iter_next(side, it))
			assert_string_equal(json_object_iter_key(it), side_keys[k++]);
		assert_int_equal(k, n_side_keys);
		assert_string_equal(json_string_value(json_object_get(side, "role")),
				    s ? "client" : "server");
		assert_true(json_is_real(json_object_get(side, "cpu_pct")));
		assert_int_equal(json_integer_value(json_object_get(side, "msgs")), 1000);
	}
	json_decref(root);
}

static void test_json_histogram(void **state)
{
	const struct report *rep = *state;
	const struct hist *h = &rep->results[0].hist;
	json_t *root = json_of(rep), *res = json_array_get(json_object_get(root, "results"), 0);
	json_t *hj = json_object_get(res, "histogram"), *b = json_object_get(hj, "buckets");
	size_t k = 0;
	json_int_t total = 0;

	assert_string_equal(json_string_value(json_object_get(hj, "unit")), "ns");
	assert_int_equal(json_integer_value(json_object_get(hj, "count")), n_lat_values);
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		json_t *pair = json_array_get(b, k);

		if (!h->buckets[i])
			continue;
		assert_int_equal(json_array_size(pair), 2);
		assert_int_equal(json_integer_value(json_array_get(pair, 0)), hist_bucket_lower(i));
		assert_int_equal(json_integer_value(json_array_get(pair, 1)), h->buckets[i]);
		total += json_integer_value(json_array_get(pair, 1));
		k++;
	}
	assert_int_equal(json_array_size(b), k);	/* non-empty buckets only */
	assert_int_equal(k, 4);	/* 100 twice, 300, 5000, 123456 and 123457 share one */
	assert_int_equal(total, n_lat_values);
	json_decref(root);
}

static void test_json_skipped(void **state)
{
	const struct report *rep = *state;
	json_t *root = json_of(rep), *res = json_array_get(json_object_get(root, "results"), 1);

	assert_string_equal(json_string_value(json_object_get(res, "status")), "skipped");
	assert_string_equal(json_string_value(json_object_get(res, "reason")), skip_reason);
	assert_string_equal(json_string_value(json_object_get(res, "section")), "seed-000");
	assert_string_equal(json_string_value(json_object_get(res, "endpoints")), "thread");
	assert_string_equal(json_string_value(json_object_get(res, "sched")), "fifo:50");
	assert_true(json_is_true(json_object_get(res, "verify")));
	assert_null(json_object_get(res, "metrics"));
	assert_null(json_object_get(res, "sides"));
	assert_null(json_object_get(res, "histogram"));
	json_decref(root);
}

/* Bytes that are not UTF-8 must not make the file unreadable. */
static void test_json_bad_utf8(void **state)
{
	struct report *rep = *state;
	const char *saved = rep->cmdline;
	json_t *root;

	rep->cmdline = "ipclab run -t \xff\xfe";
	root = json_of(rep);
	rep->cmdline = saved;
	assert_string_equal(json_string_value(json_object_get(root, "cmdline")),
			    "ipclab run -t ??");
	json_decref(root);
}

/* ---- CSV --------------------------------------------------------------- */

#define CSV_ROWS 8
#define CSV_COLS 128

struct csv {
	char *cell[CSV_ROWS][CSV_COLS];
	size_t ncols[CSV_ROWS];
	size_t nrows;
};

static void csv_push(struct csv *c, const char *s)
{
	assert_true(c->nrows < CSV_ROWS && c->ncols[c->nrows] < CSV_COLS);
	c->cell[c->nrows][c->ncols[c->nrows]++] = strdup(s);
}

/* RFC 4180, as a spreadsheet reads it: quotes group, "" is one quote. */
static void csv_parse(const char *s, struct csv *c)
{
	char field[4096];
	size_t n = 0;
	bool quoted = false;

	memset(c, 0, sizeof(*c));
	for (; *s; s++) {
		assert_true(n + 1 < sizeof(field));
		if (quoted) {
			if (*s == '"' && s[1] == '"')
				field[n++] = *s++;
			else if (*s == '"')
				quoted = false;
			else
				field[n++] = *s;
		} else if (*s == '"') {
			quoted = true;
		} else if (*s == ',' || *s == '\n') {
			field[n] = '\0';
			csv_push(c, field);
			n = 0;
			if (*s == '\n')
				c->nrows++;
		} else {
			field[n++] = *s;
		}
	}
	assert_false(quoted);
	assert_int_equal(n, 0);	/* the last row ends with a newline */
}

static void csv_free(struct csv *c)
{
	for (size_t r = 0; r < CSV_ROWS; r++)
		for (size_t k = 0; k < c->ncols[r]; k++)
			free(c->cell[r][k]);
}

static void test_csv_header(void **state)
{
	char *text = capture(report_csv, *state);
	struct csv c;

	csv_parse(text, &c);
	assert_int_equal(c.nrows, 3);
	assert_int_equal(c.ncols[0], n_result_fields + n_csv_extra_keys);
	for (size_t i = 0; i < n_result_fields; i++)
		assert_string_equal(c.cell[0][i], result_fields[i].key);
	for (size_t i = 0; i < n_csv_extra_keys; i++)
		assert_string_equal(c.cell[0][n_result_fields + i], csv_extra_keys[i]);
	for (size_t r = 1; r < c.nrows; r++)
		assert_int_equal(c.ncols[r], c.ncols[0]);
	csv_free(&c);
	free(text);
}

/* What a cell must read back as: the getter's value, exactly. */
static void check_csv_cell(const struct field *fd, const struct result *r, const char *cell)
{
	char *end;
	double v;

	if (field_missing(fd, r)) {
		assert_string_equal(cell, "");
	} else if (fd->kind == F_STR) {
		assert_string_equal(cell, fd->get_str(r));
	} else if (fd->kind == F_BOOL) {
		assert_string_equal(cell, fd->get_num(r) != 0 ? "true" : "false");
	} else {
		v = strtod(cell, &end);
		assert_true(*cell && !*end);
		if (v != fd->get_num(r))
			fail_msg("%s: CSV %s reads back as %.17g, not %.17g", fd->key, cell, v,
				 fd->get_num(r));
	}
}

static void test_csv_values(void **state)
{
	const struct report *rep = *state;
	char *text = capture(report_csv, rep);
	struct csv c;
	size_t x = n_result_fields;

	csv_parse(text, &c);
	for (size_t r = 0; r < rep->n; r++)
		for (size_t i = 0; i < n_result_fields; i++)
			check_csv_cell(&result_fields[i], &rep->results[r], c.cell[r + 1][i]);
	assert_string_equal(c.cell[1][x], "80;71.25");
	assert_string_equal(c.cell[1][x + 1], "pipe_size_bytes=65536,mode=0600");
	assert_string_equal(c.cell[1][x + 2], "nonblock=1,label=a b");
	assert_string_equal(c.cell[1][x + 3], "think=0");
	assert_string_equal(c.cell[2][x], "");
	assert_non_null(strstr(text, "\"mq_open: \"\"mqueue\"\" missing, mount it; see docs\""));
	csv_free(&c);
	free(text);
}

/* ---- the field table --------------------------------------------------- */

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* Keys whose value has no unit, or whose unit is in the name another way. */
static const char *const unitless[] = {
	"transport", "pattern", "count", "endpoints", "pin", "sched", "clients", "status",
	"reason", "section", "warmup", "verify", "msgs", "lat_kind", "lat_samples",
	"sample_every", "cpu_pct_total", "lost", "dups", "reorders", "zerocopy", "serve",
	"think", "repeat_n", "keep_awake", "noisy", "bimodal", "converged", "period", "cycles", "xruns", "late_starts",
	"xruns_per_million",
};

static bool has_unit(const char *key)
{
	static const char *const suffixes[] = { "_ns", "_us", "_bytes", "_per_s", "_pct", "_per_msg" };

	for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++)
		if (ends_with(key, suffixes[i]))
			return true;
	for (size_t i = 0; i < ARRAY_SIZE(unitless); i++)
		if (!strcmp(key, unitless[i]))
			return true;
	return !strcmp(key, "bytes");
}

static void test_field_table(void **state)
{
	for (size_t i = 0; i < n_result_fields; i++) {
		const struct field *fd = &result_fields[i];

		if (!has_unit(fd->key))
			fail_msg("field %s: key has no unit suffix and is not a known unitless key",
				 fd->key);
		assert_non_null(fd->label);
		assert_true(fd->doc && fd->doc[0]);
		assert_true(fd->kind == F_STR ? fd->get_str != NULL : fd->get_num != NULL);
		if (fd->unit == U_NS)
			assert_true(ends_with(fd->key, "_ns") || ends_with(fd->key, "_ns_per_msg"));
		if (fd->unit == U_PER_S || fd->unit == U_BYTES_PER_S)
			assert_true(ends_with(fd->key, "_per_s"));
		for (size_t j = 0; j < i; j++)
			if (!strcmp(fd->key, result_fields[j].key))
				fail_msg("field %s appears twice", fd->key);
	}
	for (size_t i = 0; i < n_side_keys; i++)
		assert_true(has_unit(side_keys[i]) || !strcmp(side_keys[i], "role") ||
			    !strcmp(side_keys[i], "id") || ends_with(side_keys[i], "_switches"));
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		fail_msg("cannot open %s (pass the source directory as argv[1])", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

static void assert_documented(const char *doc, const char *key)
{
	char quoted[80];

	snprintf(quoted, sizeof(quoted), "`%s`", key);
	if (!strstr(doc, quoted))
		fail_msg("%s is not documented in docs/output.md", quoted);
}

static void test_docs(void **state)
{
	static const char *const others[] = {
		"schema_version", "ipclab_version", "ipclab_git_rev", "created_utc", "cmdline",
		"kernel", "cpu_model", "cpus_online", "clocksource", "virtualization",
		"governor", "hostname", "clock_cost_ns", "clock_resolution_ns", "settings",
		"options", "metrics", "sides", "histogram", "unit", "sub_buckets", "buckets",
	};
	char path[4096], *doc;

	snprintf(path, sizeof(path), "%s/docs/output.md", srcdir);
	doc = read_file(path);
	for (size_t i = 0; i < n_result_fields; i++)
		assert_documented(doc, result_fields[i].key);
	for (size_t i = 0; i < n_csv_extra_keys; i++)
		assert_documented(doc, csv_extra_keys[i]);
	for (size_t i = 0; i < n_side_keys; i++)
		assert_documented(doc, side_keys[i]);
	for (size_t i = 0; i < ARRAY_SIZE(others); i++)
		assert_documented(doc, others[i]);
	free(doc);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_json_header, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_settings_options, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_sides, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_histogram, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_skipped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_bad_utf8, setup, teardown),
		cmocka_unit_test_setup_teardown(test_csv_header, setup, teardown),
		cmocka_unit_test_setup_teardown(test_csv_values, setup, teardown),
		cmocka_unit_test(test_field_table),
		cmocka_unit_test(test_docs),
	};
	int failed;

	if (argc > 1)
		srcdir = argv[1];
	failed = cmocka_run_group_tests_name("json, csv, fields", tests, NULL, NULL);
	failed += run_table_tests();
	return failed ? 1 : 0;
}

