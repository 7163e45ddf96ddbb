// SPDX-License-Identifier: MIT
/* A pattern's own knobs and results reach the engine and the reporters
 * through its hooks alone: -p cycle's --period is checked and derived by
 * its plan hook, its fields sit in THE field table where they always were,
 * they read only a cycle result, and a side's record carries nothing of
 * any pattern's. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../src/pattern/cycle/cycle.h"
#include "ipclab/engine.h"
#include "ipclab/result.h"

static _Alignas(16) unsigned char opts_block[512];

/* One transport, one pattern with its default options, --period as typed. */
static void spec_of(struct plan_spec *s, const char *pat, const char *period)
{
	char err[ERRLEN];

	plan_spec_defaults(s);
	s->tp[0] = transport_find("pipe");
	s->tp_named[0] = true;
	s->ntp = 1;
	s->pat[0] = pattern_find(pat);
	assert_non_null(s->pat[0]);
	assert_true(s->pat[0]->opts_size <= sizeof(opts_block));
	memset(opts_block, 0, sizeof(opts_block));
	assert_int_equal(opt_defaults(s->pat[0]->options, opts_block, err, sizeof(err)), 0);
	s->pat_opts[0] = opts_block;
	s->npat = 1;
	snprintf(s->period_text, sizeof(s->period_text), "%s", period);
}

static void test_cycle_plan_hook(void **state)
{
	struct plan_spec s;
	struct plan pl = { 0 };
	const struct cycle_cell *cc;
	char err[ERRLEN] = "";

	(void)state;
	spec_of(&s, "cycle", "64@48000");
	s.timeout_ns = 1;	/* raised to what the period needs */
	assert_int_equal(plan_build(&s, &pl, err, sizeof(err)), 0);
	assert_int_equal(pl.n, 1);
	cc = cycle_cell_of(&pl.cells[0]);
	assert_non_null(cc);
	assert_int_equal(cc->period_ns, 1333333);
	assert_int_equal(cc->deadline_ns, 1333333);
	assert_string_equal(cc->period_text, "64@48000");
	/* 100 ms of periods, fewer than the count's default warm-up */
	assert_int_equal(pl.cells[0].warmup, 75);
	assert_int_equal(pl.cells[0].timeout_ns, 2 * (1333333 + 1333333) + 1000000000ull);
	/* --max-time counts one graph pass a period */
	assert_true((double)pl.cells[0].max_time_ns >= 4.0 * (100000 + 75) * 1333333);
	plan_free(&pl);
}

static void expect_refused(const char *pat, const char *period, const char *want)
{
	struct plan_spec s;
	struct plan pl = { 0 };
	char err[ERRLEN] = "";

	spec_of(&s, pat, period);
	assert_int_equal(plan_build(&s, &pl, err, sizeof(err)), -EINVAL);
	if (!strstr(err, want))
		fail_msg("-p %s --period '%s': \"%s\" lacks \"%s\"", pat, period, err, want);
	plan_free(&pl);
}

static void test_period_refused(void **state)
{
	(void)state;
	expect_refused("stream", "1ms",
		       "--period applies to a periodic pattern (-p cycle), not -p stream");
	expect_refused("pingpong", "soon", "--period soon: expected a time");
	expect_refused("cycle", "soon", "--period soon: expected a time");
	expect_refused("cycle", "", "-p cycle needs --period");
	expect_refused("cycle", "64@0", "expected FRAMES@RATE with whole numbers");
	/* the plan's other cells are not the cycle's: none names it */
	assert_null(cycle_cell_of(NULL));
}

static size_t at(const char *key)
{
	const struct field *fd = field_find(key);

	if (!fd)
		fail_msg("no field %s", key);
	return (size_t)(fd - result_fields);
}

static void test_field_table(void **state)
{
	(void)state;
	/* the engine's configuration, the pattern's, the engine's metrics, the pattern's */
	assert_int_equal(at("period"), at("keep_awake") + 1);
	assert_int_equal(at("period_ns"), at("period") + 1);
	assert_int_equal(at("repeat_n"), at("period_ns") + 1);
	assert_int_equal(at("deadline_ns"), at("converged") + 1);
	assert_int_equal(at("timer_late_max_ns"), n_result_fields - 1);
	for (size_t i = 0; i < n_result_fields; i++)
		for (size_t j = i + 1; j < n_result_fields; j++)
			if (!strcmp(result_fields[i].key, result_fields[j].key))
				fail_msg("field %s twice", result_fields[i].key);
}

static void test_fields_read_their_pattern(void **state)
{
	static struct result cyc, other;
	struct cycle_result *cr = (struct cycle_result *)cyc.pat_result;

	(void)state;
	cyc.cell.pat = pattern_find("cycle");
	cyc.status = RES_OK;
	cr->on = true;
	cr->cycles = 7;
	cr->deadline_ns = 1000;
	other.cell.pat = pattern_find("stream");
	other.status = RES_OK;
	memcpy(other.pat_result, cyc.pat_result, sizeof(other.pat_result));
	assert_true(cycle_result_of(&cyc) == cr);
	assert_null(cycle_result_of(&other));
	assert_true(field_find("cycles")->get_num(&cyc) == 7);
	assert_true(field_find("deadline_ns")->get_num(&cyc) == 1000);
	/* another pattern's result: the cycle's fields do not apply */
	assert_true(isnan(field_find("cycles")->get_num(&other)));
	assert_string_equal(field_find("period")->get_str(&other), "");
}

static void test_side_record(void **state)
{
	(void)state;
	/* a few KB: no pattern's figures, and its histogram beside it */
	assert_true(sizeof(struct side_stats) <= sizeof(struct hist) + 4096);
	assert_true(sizeof(struct side_stats) <= 4096);
	assert_true(pattern_find("cycle")->side_size >= sizeof(struct cycle_side));
	assert_int_equal(pattern_find("stream")->side_size, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cycle_plan_hook),
		cmocka_unit_test(test_period_refused),
		cmocka_unit_test(test_field_table),
		cmocka_unit_test(test_fields_read_their_pattern),
		cmocka_unit_test(test_side_record),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
