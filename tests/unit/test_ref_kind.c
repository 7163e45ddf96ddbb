// SPDX-License-Identifier: MIT
/* --reference picks its bare loop by the pattern's own word for it
 * (struct pattern's reference), never by the pattern's name: a pattern
 * named otherwise that asks for the ping-pong or the stream loop gets
 * that loop, and one named "stream" that asks for none has no reference. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ipclab/engine.h"
#include "ipclab/pattern.h"
#include "ipclab/reference.h"
#include "ipclab/result.h"

static _Alignas(16) unsigned char opts_block[512];

/* One pipe cell of pattern like (its options at their defaults), 64 B,
 * 200 messages, processes. */
static void cell_of(struct plan *pl, const char *like)
{
	struct plan_spec s;
	char err[ERRLEN] = "";

	plan_spec_defaults(&s);
	s.tp[0] = transport_find("pipe");
	s.tp_named[0] = true;
	s.ntp = 1;
	s.pat[0] = pattern_find(like);
	assert_non_null(s.pat[0]);
	assert_true(s.pat[0]->opts_size <= sizeof(opts_block));
	memset(opts_block, 0, sizeof(opts_block));
	assert_int_equal(opt_defaults(s.pat[0]->options, opts_block, err, sizeof(err)), 0);
	s.pat_opts[0] = opts_block;
	s.npat = 1;
	s.count = 200;
	if (plan_build(&s, pl, err, sizeof(err)))
		fail_msg("plan_build: %s", err);
	assert_int_equal(pl->n, 1);
}

/* ping-pong's loop for a pattern named "ask": round trips, timed */
static void test_pingpong_by_kind(void **state)
{
	struct pattern ask = *pattern_find("pingpong");
	struct plan pl = { 0 };
	struct ref_result r = { 0 };
	char why[ERRLEN] = "";

	(void)state;
	ask.name = "ask";
	cell_of(&pl, "pingpong");
	pl.cells[0].pat = &ask;
	if (!reference_exists(&pl.cells[0], why, sizeof(why)))
		fail_msg("-p ask (the ping-pong loop): no reference: %s", why);
	assert_int_equal(reference_run(&pl.cells[0], NULL, &r), 0);
	if (r.status != REF_OK)
		fail_msg("-p ask: %s", r.reason);
	assert_true(r.msgs_per_s > 0 && isfinite(r.lat_mean_ns) && r.lat_p50_ns > 0);
	plan_free(&pl);
}

/* the stream loop for a pattern named "flood": a rate, no round trip */
static void test_stream_by_kind(void **state)
{
	struct pattern flood = *pattern_find("stream");
	struct plan pl = { 0 };
	struct ref_result r = { 0 };

	(void)state;
	flood.name = "flood";
	cell_of(&pl, "stream");
	pl.cells[0].pat = &flood;
	assert_int_equal(reference_run(&pl.cells[0], NULL, &r), 0);
	if (r.status != REF_OK)
		fail_msg("-p flood: %s", r.reason);
	assert_true(r.msgs_per_s > 0 && isnan(r.lat_mean_ns));
	plan_free(&pl);
}

/* a pattern named "stream" that asks for no loop has none, and says so */
static void test_none_by_kind(void **state)
{
	struct pattern plain = *pattern_find("stream");
	struct plan pl = { 0 };
	char why[ERRLEN] = "";

	(void)state;
	plain.reference = PAT_REF_NONE;
	cell_of(&pl, "stream");
	pl.cells[0].pat = &plain;
	assert_false(reference_exists(&pl.cells[0], why, sizeof(why)));
	assert_string_equal(why, "no reference loop for the stream pattern");
	plan_free(&pl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pingpong_by_kind),
		cmocka_unit_test(test_stream_by_kind),
		cmocka_unit_test(test_none_by_kind),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
