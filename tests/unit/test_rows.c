// SPDX-License-Identifier: MIT
/* A section's rows: plan_cell_index says where plan_build put each cell
 * (so a result is found by its cell's indices, not by its names), the
 * suite's seed_cell finds it across two specs of one plan, and rows_line
 * writes each cell as the one field table formats it. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ipclab/engine.h"
#include "ipclab/opt.h"
#include "ipclab/placement.h"
#include "ipclab/rows.h"
#include "../../src/suite/suite_int.h"

static _Alignas(16) unsigned char opts_block[512];

/* Two values in every list a seed sweeps but the pattern's: 2^8 = 256 cells. */
static void spec_of(struct plan_spec *s)
{
	static const char *const tps[] = { "pipe", "unix-stream" };
	char err[ERRLEN];

	plan_spec_defaults(s);
	s->lenient = true;
	s->pat[0] = pattern_find("stream");
	assert_non_null(s->pat[0]);
	assert_true(s->pat[0]->opts_size <= sizeof(opts_block));
	assert_int_equal(opt_defaults(s->pat[0]->options, opts_block, err, sizeof(err)), 0);
	s->pat_opts[0] = opts_block;
	s->npat = 1;
	for (s->ntp = 0; s->ntp < 2; s->ntp++) {
		s->tp[s->ntp] = transport_find(tps[s->ntp]);
		assert_non_null(s->tp[s->ntp]);
	}
	s->size[s->nsize++] = 4096;
	s->threads[s->nep++] = true;
	assert_int_equal(pin_parse("same", &s->pin[s->npin++], err, sizeof(err)), 0);
	assert_int_equal(sched_parse("batch", &s->sched[s->nsched++], err, sizeof(err)), 0);
	s->clients[s->nclients++] = 4;
	s->think[1] = 16;
	s->nthink = 2;
	s->rate[1] = 20;
	snprintf(s->rate_text[s->nrate++], sizeof(s->rate_text[0]), "20/s");
	s->count = 1000;
}

static bool cell_is(const struct plan_spec *s, const struct plan_pick *k, const struct cell *c)
{
	return c->tp == s->tp[k->tp] && c->pat == s->pat[k->pat] && c->size == s->size[k->size] &&
	       c->threads == s->threads[k->ep] && !strcmp(c->pin.text, s->pin[k->pin].text) &&
	       c->sched.policy == s->sched[k->sched].policy &&
	       c->clients == s->clients[k->clients] && c->think == s->think[k->think] &&
	       c->rate == s->rate[k->rate];
}

static void test_cell_index(void **state)
{
	struct plan_spec *s = calloc(1, sizeof(*s));
	struct plan pl = { 0 };
	struct plan_pick k = { 0 };
	char err[ERRLEN];
	bool seen[256] = { false };

	(void)state;
	assert_non_null(s);
	spec_of(s);
	assert_int_equal(plan_build(s, &pl, err, sizeof(err)), 0);
	assert_int_equal(pl.n, 256);
	for (k.size = 0; k.size < 2; k.size++)
	for (k.tp = 0; k.tp < 2; k.tp++)
	for (k.ep = 0; k.ep < 2; k.ep++)
	for (k.pin = 0; k.pin < 2; k.pin++)
	for (k.sched = 0; k.sched < 2; k.sched++)
	for (k.clients = 0; k.clients < 2; k.clients++)
	for (k.think = 0; k.think < 2; k.think++)
	for (k.rate = 0; k.rate < 2; k.rate++) {
		long i = plan_cell_index(s, &k);

		assert_true(i >= 0 && i < 256);
		assert_false(seen[i]);
		seen[i] = true;
		if (!cell_is(s, &k, &pl.cells[i]))
			fail_msg("cell %ld is not the pick's", i);
	}
	k = (struct plan_pick){ .sched = 2 };	/* past the list's end */
	assert_int_equal(plan_cell_index(s, &k), -1);
	k = (struct plan_pick){ .pat = 1 };
	assert_int_equal(plan_cell_index(s, &k), -1);
	plan_free(&pl);
	free(s);
}

/* Two specs in one plan (seed 003's paced and flood): the second's cells
 * after the first's; a result past those that ran is not there. */
static void test_seed_cell(void **state)
{
	struct plan_spec *s = calloc(2, sizeof(*s));
	struct result *r = calloc(512, sizeof(*r));
	struct seed_cells c = { .spec = s, .nspec = 2, .first = { 0, 256 }, .r = r, .n = 512 };
	struct plan_pick k = { .tp = 1, .clients = 1, .rate = 1 };

	(void)state;
	assert_true(s && r);
	spec_of(&s[0]);
	spec_of(&s[1]);
	assert_ptr_equal(seed_cell(&c, 0, &k), &r[plan_cell_index(&s[0], &k)]);
	assert_ptr_equal(seed_cell(&c, 1, &k), &r[256 + plan_cell_index(&s[1], &k)]);
	assert_null(seed_cell(&c, 2, &k));
	c.n = 260;			/* interrupted: only the first cells ran */
	assert_null(seed_cell(&c, 1, &k));
	assert_int_equal(seed_tp(&s[0], "unix-stream"), 1);
	assert_int_equal(seed_tp(&s[0], "posix-mq"), -1);
	free(r);
	free(s);
}

static char *rows_text(const struct rows *t, const struct rows_row *rows, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	rows_head(f, t);
	for (size_t i = 0; i < n; i++)
		rows_line(f, t, &rows[i]);
	fclose(f);
	return buf;
}

static double twice(const struct result *r)
{
	return 2 * r->msgs_per_s;
}

/* The fields' own text (units scaled as the run table scales them); a
 * caller's own field formatted the same way; "-" for a cell not there,
 * the caller's text instead where given; "skipped" for a metric of a cell
 * that did not run, its configuration still shown; rest for the rest. */
static void test_rows_line(void **state)
{
	static const struct field own = { .key = "twice", .label = "2x", .kind = F_DBL,
					  .unit = U_PER_S, .get_num = twice };
	static const struct rows_col cols[] = {
		{ .key = "transport", .width = -8 }, { .label = "rate", .key = "msgs_per_s", .width = 6 },
		{ .key = "lat_p50_ns", .width = 7 }, { .own = &own, .width = 5, .gap = " | " },
		{ .label = "note", .width = -4 },
	};
	static const struct rows t = { .cols = cols, .ncols = 5 };
	struct result a = { .status = RES_OK, .msgs_per_s = 123456, .lat_p50_ns = 1500,
			    .lat_samples = 1 }, b = { .status = RES_SKIPPED };
	const struct rows_row rows[] = {
		{ .r = { &a, &a, &a, &a }, .text = { [4] = "x" } },
		{ .r = { &b, &b, &b, &b } },
		{ .r = { &a, NULL, NULL }, .text = { [2] = "n/a" } },
		{ .r = { &b }, .rest = "skipped: why", .rest_at = 1 },
	};
	char *text;

	(void)state;
	snprintf(a.transport, sizeof(a.transport), "pipe");
	snprintf(b.transport, sizeof(b.transport), "ring");
	text = rows_text(&t, rows, ARRAY_SIZE(rows));
	assert_string_equal(text,
			    "  transport   rate     p50 |    2x note\n"
			    "  pipe       123k  1.50us |  247k x   \n"
			    "  ring     skipped skipped | skipped     \n"
			    "  pipe          -     n/a |     -     \n"
			    "  ring     skipped: why\n");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cell_index),
		cmocka_unit_test(test_seed_cell),
		cmocka_unit_test(test_rows_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
