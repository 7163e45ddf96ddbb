// SPDX-License-Identifier: MIT
/* The human reporters and the environment probe: the text table has its
 * columns, units and reasons; the ranked table sorts as documented; the
 * markdown table is well-formed whatever a reason holds; env_collect fills
 * every field. */
#include <math.h>
#include <regex.h>
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
#include "report_fixture.h"

static void test_table(void **state)
{
	char *text = capture(report_table, *state), line[1024], want[512];

	assert_non_null(line_of(text, 0, line, sizeof(line)));
	for (size_t i = 0; i < n_result_fields; i++)
		if (result_fields[i].table && !strstr(line, result_fields[i].label))
			fail_msg("header lacks column %s: %s", result_fields[i].label, line);
	assert_non_null(line_of(text, 1, line, sizeof(line)));
	assert_int_equal(strspn(line, "-"), strlen(line));
	assert_non_null(line_of(text, 2, line, sizeof(line)));
	assert_non_null(strstr(line, "pipe"));
	assert_non_null(strstr(line, "64B"));
	assert_non_null(strstr(line, "RTT"));
	assert_non_null(strstr(line, "300ns"));
	assert_non_null(line_of(text, 3, line, sizeof(line)));
	assert_non_null(strstr(line, "4KiB"));
	snprintf(want, sizeof(want), "skipped: %s", skip_reason);
	assert_non_null(strstr(line, want));
	assert_non_null(line_of(text, 4, line, sizeof(line)));
	assert_non_null(strstr(line, "RTT"));
	assert_non_null(strstr(line, "200"));
	assert_null(line_of(text, 5, line, sizeof(line)));
	free(text);
}

/* busy/CPU beside cs/s: "80/71" from the fixture's 80 and 71.25; a CPU
 * whose window held no clock tick (NAN) makes the cell "-", a null in JSON
 * and an empty item in CSV, never a 0. */
static void test_busy_column(void **state)
{
	struct report *rep = *state;
	char *text = capture(report_table, rep), line[1024], err[ERRLEN] = "";
	json_t *root, *busy;
	const char *hdr_busy, *hdr_cs;
	FILE *f;

	assert_non_null(line_of(text, 0, line, sizeof(line)));
	hdr_cs = strstr(line, "cs/s");
	hdr_busy = strstr(line, "busy/CPU");
	assert_true(hdr_cs && hdr_busy && hdr_cs < hdr_busy);
	assert_non_null(line_of(text, 2, line, sizeof(line)));
	assert_non_null(strstr(line, " 80/71"));
	free(text);

	rep->results[0].cpu_busy_pct[0] = NAN;
	text = capture(report_table, rep);
	assert_non_null(line_of(text, 2, line, sizeof(line)));
	assert_null(strstr(line, "80/71"));
	assert_null(strstr(line, "/71"));
	assert_true(line[strlen(line) - 1] == '-');
	free(text);
	text = capture(report_csv, rep);
	assert_non_null(strstr(text, ",;71.25,"));
	free(text);
	f = tmpfile();
	assert_non_null(f);
	assert_int_equal(report_json(f, rep, err, sizeof(err)), 0);
	rewind(f);
	root = json_loadf(f, 0, NULL);
	fclose(f);
	assert_non_null(root);
	busy = json_object_get(json_object_get(json_array_get(json_object_get(root, "results"), 0),
					       "metrics"), "cpu_busy_pct");
	assert_int_equal(json_array_size(busy), 2);
	assert_true(json_is_null(json_array_get(busy, 0)));
	assert_true(json_real_value(json_array_get(busy, 1)) == 71.25);
	json_decref(root);
}

static void add_ranked(struct result *r, const char *tp, const char *pat, uint64_t size,
		       uint64_t p50, double rate)
{
	snprintf(r->transport, sizeof(r->transport), "%s", tp);
	snprintf(r->pattern, sizeof(r->pattern), "%s", pat);
	r->cell.size = size;
	r->cell.clients = 1;
	r->status = RES_OK;
	r->lat_kind = strcmp(pat, "pingpong") ? LAT_ONE_WAY : LAT_RTT;
	r->lat_samples = 10;
	r->lat_p50_ns = p50;
	r->msgs_per_s = rate;
	hist_init(&r->hist);
}

/* Position of a transport's row in the text (its name is unique). */
static ptrdiff_t pos_of(const char *text, const char *tp)
{
	const char *p = strstr(text, tp);

	if (!p)
		fail_msg("row %s missing", tp);
	return p - text;
}

static void test_table_ranked(void **state)
{
	struct result *res = calloc(7, sizeof(*res));
	struct report rep = { .cmdline = "x", .results = res, .n = 7 };
	char *text;

	assert_non_null(res);
	add_ranked(&res[0], "tp-slow", "pingpong", 64, 500, 1e3);
	add_ranked(&res[1], "st-slow", "stream", 64, 900, 1e5);
	add_ranked(&res[2], "tp-fast", "pingpong", 64, 200, 9e3);
	fill_skipped(&res[3]);
	snprintf(res[3].transport, sizeof(res[3].transport), "tp-skip");
	res[3].cell.size = 64;
	add_ranked(&res[4], "tp-mid", "pingpong", 64, 300, 5e3);
	add_ranked(&res[5], "st-fast", "stream", 64, 999, 3e5);
	add_ranked(&res[6], "tp-big", "pingpong", 4096, 100, 1e3);
	text = capture(report_table_ranked, &rep);
	/* pingpong/64 by p50 ascending, the skipped row last; then stream/64 by
	 * rate descending; then pingpong/4096 */
	assert_true(pos_of(text, "tp-fast") < pos_of(text, "tp-mid"));
	assert_true(pos_of(text, "tp-mid") < pos_of(text, "tp-slow"));
	assert_true(pos_of(text, "tp-slow") < pos_of(text, "tp-skip"));
	assert_true(pos_of(text, "tp-skip") < pos_of(text, "st-fast"));
	assert_true(pos_of(text, "st-fast") < pos_of(text, "st-slow"));
	assert_true(pos_of(text, "st-slow") < pos_of(text, "tp-big"));
	assert_non_null(strstr(text, "2.50x"));	/* 500 ns vs the best 200 ns */
	assert_non_null(strstr(text, "3.00x"));	/* 1e5/s vs the best 3e5/s */
	free(text);
	free(res);
}

/* Unescaped '|' in a markdown row. */
static size_t pipes(const char *s)
{
	size_t n = 0;

	for (; *s; s++) {
		if (*s == '\\' && s[1])
			s++;
		else if (*s == '|')
			n++;
	}
	return n;
}

static void test_markdown(void **state)
{
	struct report *rep = *state;
	char *text, line[1024];
	size_t rows = 0, want;
	regex_t sep;

	/* a '|' in a reason must not break the table */
	snprintf(rep->results[1].reason, sizeof(rep->results[1].reason), "a|b \\ c");
	text = capture(report_markdown, rep);
	snprintf(rep->results[1].reason, sizeof(rep->results[1].reason), "%s", skip_reason);
	assert_int_equal(regcomp(&sep, "^\\|( :?-{3,}:? \\|)+$", REG_EXTENDED | REG_NOSUB), 0);
	assert_non_null(line_of(text, 0, line, sizeof(line)));
	want = pipes(line);
	assert_true(want >= 3);
	for (size_t i = 0; line_of(text, i, line, sizeof(line)) && line[0] == '|'; i++, rows++)
		assert_int_equal(pipes(line), want);
	assert_int_equal(rows, 2 + rep->n);
	assert_non_null(line_of(text, 1, line, sizeof(line)));
	assert_int_equal(regexec(&sep, line, 0, NULL, 0), 0);
	assert_int_equal(pipes(line), want);
	assert_non_null(strstr(text, "a\\|b \\\\ c"));
	regfree(&sep);
	free(text);
}

/* ---- environment ------------------------------------------------------- */

static void test_env(void **state)
{
	struct env_info e;

	memset(&e, 0xff, sizeof(e));
	env_collect(&e);
	assert_true(e.kernel[0] && strlen(e.kernel) < sizeof(e.kernel));
	assert_true(e.cpu_model[0] && strlen(e.cpu_model) < sizeof(e.cpu_model));
	assert_true(e.clocksource[0] && strlen(e.clocksource) < sizeof(e.clocksource));
	assert_true(e.virtualization[0] && strlen(e.virtualization) < sizeof(e.virtualization));
	assert_true(e.governor[0] && strlen(e.governor) < sizeof(e.governor));
	assert_true(e.hostname[0] && strlen(e.hostname) < sizeof(e.hostname));
	assert_true(e.cpus_online >= 1);
	assert_true(e.clock.cost_ns > 0);
	assert_true(e.clock.resolution_ns >= 1);
	assert_null(strchr(e.cpu_model, '\n'));
	assert_null(strstr(e.cpu_model, "  "));
}


int run_table_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_busy_column, setup, teardown),
		cmocka_unit_test(test_table_ranked),
		cmocka_unit_test_setup_teardown(test_markdown, setup, teardown),
		cmocka_unit_test(test_env),
	};

	return cmocka_run_group_tests_name("tables, env", tests, NULL, NULL);
}
