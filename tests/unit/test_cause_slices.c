// SPDX-License-Identifier: MIT
/* Unit tests for the intervals of the cause splits without exchanges
 * (stream, fan-in, cycle), on made-up slices of the window binned as the
 * tracer bins them (slice j into bin j mod TRACE_SL_BINS): each share's
 * 95 % interval holds its point share and narrows with more slices; a
 * clear leader is named with its knob, two shares whose intervals overlap
 * are not (the sentence says so over the slices, and gives no knob); the
 * same slices give the same intervals; too few slices give 0-100; a
 * record without slices (a tracer before them) names its largest share
 * with no interval, as before. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ipclab/pattern.h"
#include "ipclab/result.h"
#include "ipclab/trace.h"
#include "ipclab/transport.h"

static const struct transport pipe_tp = { .name = "pipe", .caps = TP_STREAM | TP_POLLABLE };

#define SLICE_NS 2000000.0	/* the made-up slices' length */

static uint64_t rnd_x;

/* uniform in [0, 1): the test's own numbers, the same each run */
static double rnd(void)
{
	rnd_x = rnd_x * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(rnd_x >> 11) / 9007199254740992.0;
}

/* Side i's n slices of the tracer into its row (and the clients' row for a
 * client), neighbours joined into at most TRACE_SL_BINS as the tracer joins
 * them, and into its sums: per slice, user time uniform in [u - du, u + du], kernel
 * time in [k - dk, k + dk], 5 % of the slice woken, the rest asleep. */
static void side_slices(struct result *r, unsigned i, unsigned n, double u, double du, double k,
			double dk)
{
	struct trace_side *s = &r->trace.sides[i];
	unsigned join = (n + TRACE_SL_BINS - 1) / TRACE_SL_BINS;

	for (unsigned j = 0; j < n; j++) {
		double a = (u + du * (2 * rnd() - 1)) * SLICE_NS, b = (k + dk * (2 * rnd() - 1)) * SLICE_NS,
		       w = 0.05 * SLICE_NS, z = SLICE_NS - a - b - w;

		for (unsigned row = 0; row <= TRACE_SL_SIDES; row++) {
			float *bin = r->trace.slices.bin[row][j / join];

			if (row != i && !(row == TRACE_SL_SIDES && i > 0))
				continue;
			bin[TSL_USER] += (float)a;
			bin[TSL_KERNEL] += (float)b;
			bin[TSL_WOKEN] += (float)w;
			bin[TSL_SLEEP] += (float)z;
		}
		s->user_ns += (uint64_t)a;
		s->sys_ns += (uint64_t)b;
		s->runnable_ns += (uint64_t)w;
		s->sleep_ns += (uint64_t)z;
	}
	s->server = i == 0;
	s->id = i ? i - 1 : 0;
	s->wall_ns = (uint64_t)(n * SLICE_NS);
}

/* A traced pipe cell of n slices, nsides sides, none filled yet. */
static struct result *traced(const char *pattern, enum lat_kind lk, unsigned nsides, unsigned n)
{
	struct result *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	strcpy(r->pattern, pattern);
	r->cell.tp = &pipe_tp;
	r->cell.pm_qos_us = -1;
	r->lat_kind = lk;
	r->trace.on = r->trace.has_slices = r->trace.syscalls_traced = true;
	r->trace.nsides = r->nsides = nsides;
	r->trace.slices.slices = n < TRACE_SL_BINS ? n : TRACE_SL_BINS;
	r->trace.slices.slice_ns = SLICE_NS * n / r->trace.slices.slices;
	r->elapsed_ns = (uint64_t)(n * SLICE_NS);
	rnd_x = 42;
	return r;
}

/* A stream of n slices: the sender (side 1, the client) busy with user work u and
 * kernel work k (fractions of each slice, +- du, dk), the receiver asleep
 * most of its window; 100 messages a slice. */
static struct result *stream(unsigned n, double u, double du, double k, double dk)
{
	struct result *r = traced("stream", LAT_ONE_WAY, 2, n);

	side_slices(r, 0, n, 0.02, 0, 0.02, 0);
	side_slices(r, 1, n, u, du, k, dk);
	r->msgs = 100ull * n;
	trace_cause_fill(r);
	return r;
}

/* The split made again after a change to the record. */
static void refill(struct result *r)
{
	memset(&r->trace.cause, 0, sizeof(r->trace.cause));
	trace_cause_fill(r);
}

/* The share of kind k, and its interval. */
static const struct trace_share *share(const struct trace_cause *c, enum trace_cause_kind k,
				       const struct trace_share_ci **ci)
{
	for (unsigned i = 0; i < c->nshares; i++)
		if (c->shares[i].kind == k) {
			*ci = &c->ci[i];
			return &c->shares[i];
		}
	return NULL;
}

/* Each share's interval holds its point share; the slices differ, so the
 * busy shares' intervals have a width; the count is the slices'. */
static void test_contains(void **state)
{
	struct result *r = stream(300, 0.40, 0.30, 0.30, 0.25);
	const struct trace_cause *c = trace_cause(&r->trace);
	const struct trace_share_ci *ci = NULL;

	(void)state;
	assert_non_null(c);
	assert_string_equal(c->of, "ns_per_msg");
	assert_true(c->ci_on);
	assert_int_equal(c->ci_slices, 60);	/* 300 joined 5 by 5 */
	assert_int_equal(c->ci_exchanges, 0);
	for (unsigned i = 0; i < c->nshares; i++)
		assert_true(c->ci[i].lo <= c->shares[i].pct && c->shares[i].pct <= c->ci[i].hi);
	assert_non_null(share(c, TC_USER, &ci));
	assert_true(ci->hi - ci->lo > 0.5);
	assert_non_null(share(c, TC_KERNEL, &ci));
	assert_true(ci->hi - ci->lo > 0.5);
	free(r);
}

/* More slices of the same kind: narrower intervals (16 and 64 of the
 * tracer's slices; 640, ten of them joined in each of 64). */
static void test_narrows(void **state)
{
	unsigned n[3] = { 16, 64, 640 }, k[3] = { 16, 64, 64 };
	double w[3];

	(void)state;
	for (unsigned j = 0; j < 3; j++) {
		struct result *r = stream(n[j], 0.40, 0.30, 0.30, 0.25);
		const struct trace_share_ci *ci = NULL;

		assert_non_null(share(&r->trace.cause, TC_USER, &ci));
		w[j] = ci->hi - ci->lo;
		assert_int_equal(r->trace.cause.ci_slices, k[j]);
		free(r);
	}
	assert_true(w[1] < w[0] * 0.6);
	assert_true(w[2] < w[1] * 0.6);
}

/* User work 70 % of the sender's slices, kernel 20 %, slices alike:
 * named, with its knob. */
static void test_clear_leader(void **state)
{
	struct result *r = stream(200, 0.70, 0.05, 0.20, 0.05);
	const struct trace_cause *c = trace_cause(&r->trace);

	(void)state;
	assert_true(c->ci_on);
	assert_true(c->decided);
	assert_int_equal(c->largest, TC_USER);
	assert_true(c->ci[0].lo > c->ci[1].hi);
	assert_non_null(strstr(c->sentence, "user work is 70 % of the sender"));
	assert_non_null(strstr(c->sentence, "change it most"));
	assert_null(strstr(c->sentence, "no single leading cause"));
	free(r);
}

/* The same cell without --trace=syscalls: its slices split running time
 * into user and kernel work in the window's proportion, so user work does
 * not lead kernel work however narrow their intervals; the sentence names
 * both and gives no knob. */
static void test_user_kernel_unseen(void **state)
{
	struct result *r = stream(200, 0.70, 0.05, 0.20, 0.05);
	const struct trace_cause *c;

	(void)state;
	r->trace.syscalls_traced = false;
	refill(r);
	c = trace_cause(&r->trace);
	assert_true(c->ci_on);
	assert_true(c->shares[0].kind == TC_USER && c->shares[1].kind == TC_KERNEL);
	assert_false(c->decided);
	assert_non_null(strstr(c->sentence, "no single leading cause: user work"));
	assert_non_null(strstr(c->sentence, " and kernel work"));
	assert_null(strstr(c->sentence, "change it most"));
	free(r);
}

/* User work 45 %, kernel 42 %, each slice far from the mean, over 20
 * slices: the two overlap, no leader and no knob; the sentence counts the
 * slices. The same cell over 6400 slices decides. */
static void test_overlap(void **state)
{
	struct result *r = stream(20, 0.45, 0.40, 0.42, 0.40), *more;
	const struct trace_cause *c = trace_cause(&r->trace);

	(void)state;
	assert_true(c->ci_on);
	assert_false(c->decided);
	assert_true(c->ci[0].lo <= c->ci[1].hi);
	assert_non_null(strstr(c->sentence, "no single leading cause: "));
	assert_non_null(strstr(c->sentence, "overlap over 20 slices of the window"));
	assert_null(strstr(c->sentence, "change it most"));
	more = stream(6400, 0.45, 0.40, 0.42, 0.40);
	assert_true(more->trace.cause.decided);
	assert_int_equal(more->trace.cause.largest, TC_USER);
	free(more);
	free(r);
}

/* The same slices, twice: the same intervals, to the bit. */
static void test_reproducible(void **state)
{
	struct result *a = stream(500, 0.45, 0.40, 0.42, 0.40), *b = stream(500, 0.45, 0.40, 0.42, 0.40);

	(void)state;
	assert_int_equal(a->trace.cause.nshares, b->trace.cause.nshares);
	assert_memory_equal(a->trace.cause.ci, b->trace.cause.ci, sizeof(a->trace.cause.ci));
	assert_int_equal(a->trace.cause.decided, b->trace.cause.decided);
	assert_string_equal(a->trace.cause.sentence, b->trace.cause.sentence);
	free(a);
	free(b);
}

/* Four slices: too few to draw from, 0-100 each, no leader. */
static void test_too_few(void **state)
{
	struct result *r = stream(4, 0.70, 0.05, 0.20, 0.05);
	const struct trace_cause *c = trace_cause(&r->trace);

	(void)state;
	assert_true(c->ci_on);
	assert_false(c->decided);
	for (unsigned i = 0; i < c->nshares; i++) {
		assert_true(c->ci[i].lo == 0);
		assert_true(c->ci[i].hi == 100);
	}
	free(r);
}

/* A record without slices (a tracer before them): the largest share is
 * named, with no interval, as before. */
static void test_no_slices(void **state)
{
	struct result *r = stream(200, 0.45, 0.40, 0.42, 0.40);

	(void)state;
	r->trace.has_slices = false;
	refill(r);
	assert_true(r->trace.cause.on);
	assert_false(r->trace.cause.ci_on);
	assert_true(r->trace.cause.decided);
	assert_non_null(strstr(r->trace.cause.sentence, "change it most"));
	free(r);
}

/* Slices kept but none holding time (a window the tracer saw nothing
 * of): no interval, and not "over 0 exchanges" or "0 slices". */
static void test_empty_slices(void **state)
{
	struct result *r = stream(200, 0.45, 0.40, 0.42, 0.40);

	(void)state;
	memset(r->trace.slices.bin, 0, sizeof(r->trace.slices.bin));
	refill(r);
	assert_true(r->trace.cause.on);
	assert_false(r->trace.cause.ci_on);
	assert_true(r->trace.cause.decided);
	assert_null(strstr(r->trace.cause.sentence, "over 0 "));
	free(r);
}

/* Fan-in, three clients: the clients' row; kernel work leads clearly. */
static void test_fanin(void **state)
{
	struct result *r = traced("fanin", LAT_RTT, 4, 300);
	const struct trace_cause *c;

	(void)state;
	side_slices(r, 0, 300, 0.30, 0.05, 0.50, 0.05);
	for (unsigned i = 1; i < 4; i++) {
		side_slices(r, i, 300, 0.10, 0.05, 0.60, 0.05);
		r->sides[i].msgs = 30000;
	}
	r->lat_mean_ns = SLICE_NS / 100;	/* each client's window per exchange */
	trace_cause_fill(r);
	c = trace_cause(&r->trace);
	assert_non_null(c);
	assert_string_equal(c->whose, "clients' round trip");
	assert_true(c->ci_on);
	assert_int_equal(c->ci_slices, 60);	/* 300 joined 5 by 5 */
	assert_true(c->decided);
	assert_int_equal(c->largest, TC_KERNEL);
	for (unsigned i = 0; i < c->nshares; i++)
		assert_true(c->ci[i].lo <= c->shares[i].pct && c->shares[i].pct <= c->ci[i].hi);
	free(r);
}

/* Cycle: a chain of a driver and two stages, 10 cycles a slice; the
 * stages' work overlaps the driver's timer lateness over few slices. */
static bool chain_cycles(const struct result *r, uint64_t *cycles, bool *chain)
{
	*cycles = r->msgs;
	*chain = true;
	return true;
}

static void test_cycle(void **state)
{
	static const struct pattern cyc = { .name = "cycle", .cycles_of = chain_cycles, .period_name = "cycle", .period_figure = "cycle_ns" };
	struct result *r[2];

	(void)state;
	for (unsigned k = 0; k < 2; k++) {
		const struct trace_cause *c;

		r[k] = traced("cycle", LAT_RTT, 3, 30);
		r[k]->cell.pat = &cyc;
		side_slices(r[k], 0, 30, 0.02, 0.01, 0.02, 0.01);
		side_slices(r[k], 1, 30, 0.10, 0.09, 0.05, 0.04);
		side_slices(r[k], 2, 30, 0.09, 0.08, 0.06, 0.05);
		r[k]->msgs = 300;
		r[k]->lat_mean_ns = 0.4 * SLICE_NS / 10;
		trace_cause_fill(r[k]);
		c = trace_cause(&r[k]->trace);
		assert_non_null(c);
		assert_string_equal(c->of, "cycle_ns");
		assert_true(c->ci_on);
		assert_int_equal(c->ci_slices, 30);
		for (unsigned i = 0; i < c->nshares; i++)
			assert_true(c->ci[i].lo <= c->shares[i].pct && c->shares[i].pct <= c->ci[i].hi);
		if (!c->decided)
			assert_non_null(strstr(c->sentence, "over 30 slices of the window"));
	}
	assert_memory_equal(r[0]->trace.cause.ci, r[1]->trace.cause.ci, sizeof(r[0]->trace.cause.ci));
	free(r[0]);
	free(r[1]);
}

/* A cycle whose driver's timer came late by its slack (the pattern's own
 * measure, no scheduler event of it): that time is timer lateness, not
 * unattributed; without it, as before. */
static void test_cycle_timer_late(void **state)
{
	static const struct pattern cyc = { .name = "cycle", .cycles_of = chain_cycles, .period_name = "cycle", .period_figure = "cycle_ns" };
	struct result *r = traced("cycle", LAT_RTT, 3, 30);
	const struct trace_share_ci *ci;
	const struct trace_share *t, *u;

	(void)state;
	r->cell.pat = &cyc;
	side_slices(r, 0, 30, 0.02, 0.01, 0.02, 0.01);
	side_slices(r, 1, 30, 0.10, 0.09, 0.05, 0.04);
	side_slices(r, 2, 30, 0.09, 0.08, 0.06, 0.05);
	r->msgs = 300;
	r->lat_mean_ns = 4 * SLICE_NS / 10;
	trace_cause_fill(r);
	u = share(&r->trace.cause, TC_UNATTRIBUTED, &ci);
	assert_non_null(u);
	assert_true(u->pct > 50);
	/* 70 % of each cycle its timer's lateness */
	r->timer_late_mean_ns = 0.7 * r->lat_mean_ns;
	refill(r);
	t = share(&r->trace.cause, TC_TIMER, &ci);
	assert_non_null(t);
	assert_true(t->pct > 69 && t->pct < 71);
	assert_true(ci->lo <= t->pct && t->pct <= ci->hi);
	assert_int_equal(r->trace.cause.shares[0].kind, TC_TIMER);
	u = share(&r->trace.cause, TC_UNATTRIBUTED, &ci);
	assert_true(!u || u->pct < 30);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_contains),
		cmocka_unit_test(test_narrows),
		cmocka_unit_test(test_clear_leader),
		cmocka_unit_test(test_user_kernel_unseen),
		cmocka_unit_test(test_overlap),
		cmocka_unit_test(test_reproducible),
		cmocka_unit_test(test_too_few),
		cmocka_unit_test(test_no_slices),
		cmocka_unit_test(test_empty_slices),
		cmocka_unit_test(test_fanin),
		cmocka_unit_test(test_cycle),
		cmocka_unit_test(test_cycle_timer_late),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
