// SPDX-License-Identifier: MIT
/* Unit tests for the cause split's intervals on made-up exchanges: each
 * share's 95 % interval holds its point share and narrows with more
 * exchanges; a clear leader is named with its knob, two shares whose
 * intervals overlap are not (the sentence says so, and gives no knob);
 * the same exchanges give the same intervals; --explain's pick follows
 * the same rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ipclab/result.h"
#include "ipclab/trace.h"
#include "ipclab/transport.h"

static const struct transport pipe_tp = { .name = "pipe", .caps = TP_STREAM | TP_POLLABLE };

static uint64_t rnd_x;

/* uniform in [0, 1): the test's own numbers, the same each run */
static double rnd(void)
{
	rnd_x = rnd_x * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(rnd_x >> 11) / 9007199254740992.0;
}

/* A one-client ping-pong of n exchanges, each binned as the tracer bins
 * them (exchange i into bin i mod TRACE_CP_BINS): per exchange, the
 * server's user time uniform in [u - du, u + du], its kernel time in
 * [k - dk, k + dk], and 4 us of wakeup latency; the whole is their mean. */
/* A traced one-client pipe ping-pong with no exchanges yet, the draws
 * started at seed. */
static struct result *traced_pingpong(uint64_t seed)
{
	struct result *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	strcpy(r->pattern, "pingpong");
	r->cell.tp = &pipe_tp;
	r->cell.pm_qos_us = -1;
	r->lat_kind = LAT_RTT;
	r->trace.on = r->trace.has_cpath = true;
	r->trace.nsides = r->nsides = 2;
	rnd_x = seed;
	return r;
}

static struct result *exchanges(unsigned n, double u, double du, double k, double dk)
{
	struct result *r = traced_pingpong(42);
	struct trace_cpath *p = &r->trace.cpath;
	double su = 0, sk = 0;

	for (unsigned i = 0; i < n; i++) {
		double a = u + du * (2 * rnd() - 1), b = k + dk * (2 * rnd() - 1);
		float *bin = p->bin[i % TRACE_CP_BINS];

		bin[TCP_SERVER_USER] += (float)a;
		bin[TCP_SERVER_KERNEL] += (float)b;
		bin[TCP_CLIENT_WAKEUP] += 4000;
		p->bin_n[i % TRACE_CP_BINS]++;
		su += a;
		sk += b;
	}
	p->exchanges = n;
	p->nbins = n < TRACE_CP_BINS ? n : TRACE_CP_BINS;
	p->server_user_ns = su / n;
	p->server_kernel_ns = sk / n;
	p->client_wakeup_ns = 4000;
	p->total_ns = p->measured_ns = p->server_user_ns + p->server_kernel_ns + 4000;
	trace_cause_fill(r);
	return r;
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

/* Each share's interval holds its point share, and the bootstrap's own
 * percentiles do too (not only after widening). */
static void test_contains(void **state)
{
	struct result *r = exchanges(60, 50000, 40000, 40000, 30000);
	const struct trace_cause *c = trace_cause(&r->trace);
	int group[TC_NKINDS];
	double lo[TC_NKINDS], hi[TC_NKINDS];

	(void)state;
	assert_non_null(c);
	assert_true(c->ci_on);
	assert_int_equal(c->ci_exchanges, 60);
	for (unsigned k = 0; k < TC_NKINDS; k++)
		group[k] = (int)k;
	assert_int_equal(trace_cause_boot(r, group, TC_NKINDS, lo, hi), 0);
	for (unsigned i = 0; i < c->nshares; i++) {
		const struct trace_share *s = &c->shares[i];

		assert_true(c->ci[i].lo <= s->pct && s->pct <= c->ci[i].hi);
		assert_true(lo[s->kind] <= s->pct + 1e-9 && s->pct <= hi[s->kind] + 1e-9);
		assert_true(c->ci[i].hi > c->ci[i].lo);	/* the exchanges differ: an interval */
	}
	free(r);
}

/* More exchanges of the same kind: narrower intervals, past the bins too
 * (2000 exchanges, about 8 a bin). */
static void test_narrows(void **state)
{
	unsigned n[3] = { 20, 200, 2000 };
	double w[3];

	(void)state;
	for (unsigned j = 0; j < 3; j++) {
		struct result *r = exchanges(n[j], 50000, 40000, 40000, 30000);
		const struct trace_share_ci *ci = NULL;
		const struct trace_share *s = share(&r->trace.cause, TC_USER, &ci);

		assert_non_null(s);
		w[j] = ci->hi - ci->lo;
		assert_int_equal(r->trace.cause.ci_exchanges, n[j]);
		free(r);
	}
	assert_true(w[1] < w[0] * 0.6);
	assert_true(w[2] < w[1] * 0.6);
}

/* User work 70 %, kernel 26 %, exchanges alike: named, with its knob. */
static void test_clear_leader(void **state)
{
	struct result *r = exchanges(60, 70000, 5000, 26000, 5000);
	const struct trace_cause *c = trace_cause(&r->trace);

	(void)state;
	assert_true(c->decided);
	assert_int_equal(c->largest, TC_USER);
	assert_true(c->ci[0].lo > c->ci[1].hi);
	assert_non_null(strstr(c->sentence, "user work is 70 % of the round trip"));
	assert_non_null(strstr(c->sentence, "change it most"));
	assert_null(strstr(c->sentence, "no single leading cause"));
	free(r);
}

/* The client measured 70 us a round trip, the trace placed 19: what it
 * did not place (unattributed, 73 %) is the largest share, its interval
 * above the others', and still no cause: no leader, no knob; the
 * sentence names the largest share it did place. */
static void test_unattributed(void **state)
{
	struct result *r = exchanges(60, 10000, 2000, 5000, 1000);
	const struct trace_cause *c;

	(void)state;
	r->trace.cpath.measured_ns = 70000;
	memset(&r->trace.cause, 0, sizeof(r->trace.cause));
	trace_cause_fill(r);
	c = trace_cause(&r->trace);
	assert_non_null(c);
	assert_int_equal(c->shares[0].kind, TC_UNATTRIBUTED);
	assert_true(c->shares[0].pct > 70);
	assert_true(c->ci[0].lo > c->ci[1].hi);
	assert_false(c->decided);
	assert_non_null(strstr(c->sentence, "no single leading cause: unattributed 73 % ("));
	assert_non_null(strstr(c->sentence, "is time the trace did not place; the largest it placed, user work 14 % ("));
	assert_non_null(strstr(c->sentence, "over 60 exchanges; run longer (-d)"));
	assert_null(strstr(c->sentence, "change it most"));
	free(r);
}

/* User work 50 %, kernel 46 %, each exchange far from the mean: the two
 * overlap over 60 exchanges: no leader, no knob; run longer decides. */
static void test_overlap(void **state)
{
	struct result *r = exchanges(60, 50000, 45000, 46000, 40000), *more;
	const struct trace_cause *c = trace_cause(&r->trace);
	const struct trace_share_ci *uc = NULL, *kc = NULL;
	const struct trace_share *u = share(c, TC_USER, &uc), *k = share(c, TC_KERNEL, &kc);
	char a[64], b[64];

	(void)state;
	assert_false(c->decided);
	assert_true(uc->lo <= kc->hi);
	assert_non_null(strstr(c->sentence, "no single leading cause: "));
	snprintf(a, sizeof(a), "user work %.0f %% (%.0f-%.0f)", u->pct, uc->lo, uc->hi);
	snprintf(b, sizeof(b), "kernel work %.0f %% (%.0f-%.0f)", k->pct, kc->lo, kc->hi);
	assert_non_null(strstr(c->sentence, a));
	assert_non_null(strstr(c->sentence, b));
	assert_non_null(strstr(c->sentence, "overlap over 60 exchanges; run longer (-d)"));
	assert_null(strstr(c->sentence, "change it most"));
	assert_null(strstr(c->sentence, " would"));
	/* the same cell run long enough (user 55 %, kernel 41 %) decides */
	more = exchanges(20000, 55000, 45000, 41000, 40000);
	assert_true(more->trace.cause.decided);
	assert_int_equal(more->trace.cause.largest, TC_USER);
	free(more);
	free(r);
}

/* The same exchanges twice: the same intervals (a fixed seed). */
static void test_reproducible(void **state)
{
	struct result *a = exchanges(60, 50000, 45000, 46000, 40000);
	struct result *b = exchanges(60, 50000, 45000, 46000, 40000);

	(void)state;
	assert_int_equal(a->trace.cause.nshares, b->trace.cause.nshares);
	for (unsigned i = 0; i < a->trace.cause.nshares; i++) {
		assert_true(a->trace.cause.ci[i].lo == b->trace.cause.ci[i].lo);
		assert_true(a->trace.cause.ci[i].hi == b->trace.cause.ci[i].hi);
	}
	assert_string_equal(a->trace.cause.sentence, b->trace.cause.sentence);
	free(a);
	free(b);
}

/* What the path left of the figure (unattributed) moves with the
 * client's own timing of each exchange (its marks): each round trip 50 us
 * of user work, timed 60 or 140 us by the client: the unattributed half
 * has an interval of its own; without the marks it would have none. */
static void test_marks(void **state)
{
	struct result *r = exchanges(60, 50000, 0, 0, 0);
	struct trace_cpath *p = &r->trace.cpath;
	const struct trace_share_ci *ci = NULL;
	const struct trace_share *u;

	(void)state;
	u = share(&r->trace.cause, TC_USER, &ci);
	assert_true(ci->hi - ci->lo < 1);	/* no marks: the gap in proportion */
	for (unsigned i = 0; i < 60; i++) {
		p->bin[i][TCP_SERVER_KERNEL] = 0;
		p->bin[i][TCP_CLIENT_WAKEUP] = 0;
		p->bin_meas[i] = i % 2 ? 60000 : 140000;
		p->bin_nmeas[i] = 1;
	}
	p->server_kernel_ns = p->client_wakeup_ns = 0;
	p->server_user_ns = p->total_ns = 50000;
	p->measured_ns = 100000;
	trace_cause_fill(r);
	u = share(&r->trace.cause, TC_USER, &ci);
	assert_non_null(u);
	assert_true(u->pct > 49 && u->pct < 51);
	assert_true(ci->lo < 47 && ci->hi > 53 && ci->lo <= u->pct && u->pct <= ci->hi);
	free(r);
}

/* Fewer than TRACE_CI_MIN_EXCHANGES exchanges: nothing is decided. */
static void test_too_few(void **state)
{
	struct result *r = exchanges(3, 70000, 1000, 26000, 1000);

	(void)state;
	assert_false(r->trace.cause.decided);
	assert_true(r->trace.cause.ci[0].lo <= 0 && r->trace.cause.ci[0].hi >= 100);
	free(r);
}

/* --explain: the largest share a knob acts on is tested only where its
 * interval lies above that of every other such share. Wakeups from idle
 * against waiting for a CPU, close and noisy: no pick; far apart: picked. */
static struct result *two_waits(unsigned n, double idle, double didle, double cpu, double dcpu)
{
	struct result *r = traced_pingpong(7);
	struct trace_cpath *p = &r->trace.cpath;
	double si = 0, sc = 0;

	for (unsigned i = 0; i < n; i++) {
		double a = idle + didle * (2 * rnd() - 1), b = cpu + dcpu * (2 * rnd() - 1);
		float *bin = p->bin[i % TRACE_CP_BINS];

		bin[TCP_CLIENT_WAKEUP] += (float)(a + b);
		bin[TCP_CLIENT_IDLE] += (float)a;
		bin[TCP_CLIENT_CPU_WAIT] += (float)b;
		bin[TCP_SERVER_USER] += 2000;
		p->bin_n[i % TRACE_CP_BINS]++;
		si += a;
		sc += b;
	}
	p->exchanges = n;
	p->client_wakeup_ns = (si + sc) / n;
	p->wakeup_idle_ns = si / n;
	p->wakeup_cpu_wait_ns = sc / n;
	p->server_user_ns = 2000;
	p->total_ns = p->measured_ns = p->client_wakeup_ns + 2000;
	trace_cause_fill(r);
	return r;
}

static void test_explain_pick(void **state)
{
	struct result *r = two_waits(40, 30000, 28000, 27000, 25000);
	struct trace_pick p = explain_pick(&r->trace);

	(void)state;
	assert_int_equal(p.cause, EX_NONE);
	assert_non_null(p.rival);
	assert_int_equal(p.exchanges, 40);
	free(r);
	r = two_waits(40, 40000, 2000, 10000, 2000);
	p = explain_pick(&r->trace);
	assert_int_equal(p.cause, EX_IDLE_EXIT);
	assert_null(p.rival);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_contains),
		cmocka_unit_test(test_narrows),
		cmocka_unit_test(test_clear_leader),
		cmocka_unit_test(test_unattributed),
		cmocka_unit_test(test_overlap),
		cmocka_unit_test(test_reproducible),
		cmocka_unit_test(test_marks),
		cmocka_unit_test(test_too_few),
		cmocka_unit_test(test_explain_pick),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
