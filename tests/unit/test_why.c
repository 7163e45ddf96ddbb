// SPDX-License-Identifier: MIT
/* Unit tests for the seeds' readings from the trace (src/cmd/suite_why.c)
 * on made-up result records: the sentence names the shares that differ
 * between the cells the seed compared, who took the CPUs (comm, pid) when
 * the machine's share is large, that the noise was too large to tell when
 * the repetitions spread wider than the difference, and what --explain
 * measured. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/cmd/suite_why.h"

static struct result *cell(const char *tp, double msgs_per_s)
{
	struct result *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	snprintf(r->transport, sizeof(r->transport), "%s", tp);
	r->status = RES_OK;
	r->msgs_per_s = msgs_per_s;
	r->trace.on = true;
	r->trace.nsides = 2;
	r->trace.sides[0].server = true;
	r->trace.sides[1].id = 0;
	for (unsigned i = 0; i < 2; i++)
		r->trace.sides[i].wall_ns = 1000000000;
	return r;
}

/* The cause split: of, whose, then (kind, ns) pairs, largest first. */
static void split(struct result *r, const char *of, const char *whose, unsigned n, ...)
{
	struct trace_cause *c = &r->trace.cause;
	va_list ap;

	c->on = true;
	c->of = of;
	snprintf(c->whose, sizeof(c->whose), "%s", whose);
	va_start(ap, n);
	for (unsigned k = 0; k < n; k++) {
		enum trace_cause_kind kind = va_arg(ap, enum trace_cause_kind);
		double ns = va_arg(ap, double);

		c->shares[c->nshares++] = (struct trace_share){ kind, trace_cause_name(kind), ns, 0 };
		c->total_ns += ns;
	}
	va_end(ap);
	for (unsigned k = 0; k < c->nshares; k++)
		c->shares[k].pct = 100 * c->shares[k].ns / c->total_ns;
	c->largest = c->shares[0].kind;
	c->largest_pct = c->shares[0].pct;
}

/* --repeat's statistics of msgs_per_s: n repetitions spread pct. */
static void spread(struct result *r, double pct)
{
	r->repeat_n = 5;
	r->n_repeat_stats = 1;
	r->repeat[0] = (struct repeat_stat){ .key = "msgs_per_s", .spread_pct = pct, .ci_lo = NAN,
					     .ci_hi = NAN };
}

/* Seed 002: the one-CPU cell waited for its CPU (held by its peer), the
 * two-CPU one for its wakeups: those are the shares named, not the work. */
static void test_002_shares(void **state)
{
	struct result *same = cell("pipe", 200000), *sp = cell("unix-stream", 333333);
	char buf[WHY_LEN];

	(void)state;
	split(same, "ns_per_msg", "receiver", 3, TC_CPU_WAIT, 2500.0, TC_KERNEL, 1500.0, TC_USER, 1000.0);
	split(sp, "ns_per_msg", "receiver", 3, TC_WAKEUP, 1200.0, TC_KERNEL, 1000.0, TC_USER, 800.0);
	same->trace.sides[0].runnable_ns = same->trace.sides[0].woken_side_ns = 500000000;
	sp->trace.cause.cross_cpu_frac = 0.9;
	assert_true(why_002(buf, sizeof(buf), same, sp) > 0);
	assert_non_null(strstr(buf, "Why (trace): in the pipe one-CPU cell the receiver took 5.00us per message: waiting for a CPU 50 %, kernel work 30 %, user work 20 %"));
	assert_non_null(strstr(buf, "against 3.00us per message in the unix-stream two-CPU cell, the shares that differ most are waiting for a CPU held by its peer (2.50us vs 0ns) and wakeup latency, cross-CPU (0ns vs 1.20us)"));
	/* its peer held the CPU, not another task: not the machine's */
	assert_null(strstr(buf, "machine"));
	assert_null(strstr(buf, "too large"));
	assert_int_equal(buf[strlen(buf) - 1], '.');
	/* the faster one-CPU cell: the two-CPU cell is the one explained */
	same->msgs_per_s = 400000;
	why_002(buf, sizeof(buf), same, sp);
	assert_non_null(strstr(buf, "in the unix-stream two-CPU cell the receiver took 3.00us per message: wakeup latency 40 %"));
	free(same);
	free(sp);
}

/* Others held the CPUs: named, with their pids, once each (cc1's time
 * on both sides summed). */
static void test_machine(void **state)
{
	struct result *a = cell("pipe", 1000), *b = cell("pipe", 2000);
	struct trace_side *s = a->trace.sides;
	char buf[WHY_LEN];

	(void)state;
	split(a, "rtt_mean_ns", "round trip", 3, TC_PREEMPTED, 4000.0, TC_CPU_WAIT, 2000.0, TC_KERNEL, 4000.0);
	split(b, "rtt_mean_ns", "round trip", 2, TC_KERNEL, 3000.0, TC_USER, 2000.0);
	s[0].preempted_ns = 300000000;
	s[0].woken_other_ns = 100000000;
	s[0].taken_ns = 400000000;
	s[0].taken_woken_ns = 100000000;
	s[0].ntakers = 1;
	s[0].takers[0] = (struct trace_taker){ "cc1", 4242, 4243, 300000000, 30 };
	s[1].taken_ns = 150000000;
	s[1].ntakers = 2;
	s[1].takers[0] = (struct trace_taker){ "make", 77, 77, 100000000, 5 };
	s[1].takers[1] = (struct trace_taker){ "cc1", 4242, 4250, 50000000, 5 };
	why_004(buf, sizeof(buf), a, b);
	assert_non_null(strstr(buf, "other tasks held the CPUs for 60 % of the round trip in the process pair (preempted, waiting for a CPU), by cc1 (pid 4242) 64 %, make (pid 77) 18 % of the time others took: that figure is the machine's, not the IPC's"));
	assert_null(strstr(strstr(buf, "cc1") + 1, "cc1"));	/* once */
	assert_non_null(strstr(buf, "differ most are preempted by other tasks (4.00us vs 0ns)"));
	/* the same shares, but its peer's: nobody else to name */
	s[0].taken_ns = s[0].taken_woken_ns = s[1].taken_ns = 0;
	s[0].woken_other_ns = 0;
	s[0].woken_side_ns = 100000000;
	why_004(buf, sizeof(buf), a, b);
	assert_null(strstr(buf, "machine's"));
	assert_null(strstr(buf, "cc1"));
	assert_non_null(strstr(buf, "differ most are preempted by its peer (4.00us vs 0ns)"));
	free(a);
	free(b);
}

/* A taker's comm with control characters, or filling its array with no
 * terminator: '?' for each of those bytes, at most TRACE_COMM_MAX of them. */
static void test_hostile_comm(void **state)
{
	struct result *a = cell("pipe", 1000), *b = cell("pipe", 2000);
	struct trace_side *s = a->trace.sides;
	char buf[WHY_LEN];

	(void)state;
	split(a, "rtt_mean_ns", "round trip", 2, TC_PREEMPTED, 6000.0, TC_KERNEL, 4000.0);
	split(b, "rtt_mean_ns", "round trip", 1, TC_KERNEL, 3000.0);
	s[0].preempted_ns = s[0].taken_ns = 400000000;
	s[0].ntakers = 2;
	s[0].takers[0] = (struct trace_taker){ "\x1b[2Jx\n\r", 9, 9, 300000000, 3 };
	s[0].takers[1].pid = 10;
	s[0].takers[1].ns = 100000000;
	memset(s[0].takers[1].comm, 'A', sizeof(s[0].takers[1].comm));	/* no terminator */
	why_004(buf, sizeof(buf), a, b);
	assert_non_null(strstr(buf, "by ?[2Jx?? (pid 9) 75 %, AAAAAAAAAAAAAAA (pid 10) 25 %"));
	for (const char *c = buf; *c; c++)
		assert_true(*c >= 0x20 && *c < 0x7f);
	free(a);
	free(b);
}

/* Repetitions spread wider than the difference: the noise is said, and
 * no share is named as the difference's cause. */
static void test_noise(void **state)
{
	struct result *a = cell("pipe", 100000), *b = cell("posix-mq", 105000);
	char buf[WHY_LEN];

	(void)state;
	split(a, "ns_per_msg", "receiver", 2, TC_KERNEL, 6000.0, TC_PEER, 4000.0);
	split(b, "ns_per_msg", "receiver", 2, TC_KERNEL, 5000.0, TC_WAKEUP, 4500.0);
	spread(a, 12);
	spread(b, 3);
	why_000(buf, sizeof(buf), b, a);
	assert_non_null(strstr(buf, "Why (trace): the repetitions of msgs_per_s spread 12 % and 3 %, wider than the 5 % difference: the machine's noise was too large to tell."));
	assert_null(strstr(buf, "differ most"));
	/* tight repetitions: the difference is the shares' */
	spread(a, 2);
	spread(b, 1);
	why_000(buf, sizeof(buf), b, a);
	assert_null(strstr(buf, "too large"));
	assert_non_null(strstr(buf, "in the pipe cell (the slowest) the receiver took"));
	assert_non_null(strstr(buf, "differ most are wakeup latency, on its own CPU (0ns vs 4.50us) and waiting for the peer (4.00us vs 0ns)"));
	/* two clusters are said beside the noise */
	spread(a, 30);
	a->repeat[0].bimodal = true;
	why_000(buf, sizeof(buf), b, a);
	assert_non_null(strstr(buf, "(and fell in two clusters): the machine's noise was too large to tell"));
	free(a);
	free(b);
}

/* Seed 003: the paced cell's own split, its timer's lateness outside it. */
static void test_003_paced(void **state)
{
	struct result *f = cell("ring", 0), *p = cell("ring", 0);
	char buf[WHY_LEN];

	(void)state;
	f->lat_p50_ns = 5000;
	p->lat_p50_ns = 40000;
	split(f, "rtt_mean_ns", "round trip", 2, TC_USER, 3000.0, TC_KERNEL, 2000.0);
	split(p, "rtt_mean_ns", "round trip", 3, TC_WAKEUP_IDLE, 25000.0, TC_WAKEUP, 10000.0, TC_USER, 5000.0);
	p->trace.has_cpath = true;
	p->trace.cause.cross_cpu_frac = 1;
	p->trace.cpath.timer_late_ns = 230000;
	why_003(buf, sizeof(buf), f, p);
	assert_non_null(strstr(buf, "in the paced cell the round trip took 40.0us per exchange: wakeup from idle 62 %, wakeup latency 25 %, user work 12 % (from the actual send: the client's timer woke 230us late, outside it); against 5.00us per exchange in the flood cell, the shares that differ most are wakeup from idle (25.0us vs 0ns) and wakeup latency, cross-CPU (10.0us vs 0ns)"));
	assert_null(strstr(buf, "timer lateness"));
	free(f);
	free(p);
}

/* Seed 001: the grid's cells did different work: shares as % of each. */
static void test_001_pct(void **state)
{
	struct result *lo = cell("pipe", 0), *hi = cell("pipe", 0);
	char buf[WHY_LEN];

	(void)state;
	lo->cell.size = 1024;
	lo->cell.think = 16;
	hi->cell.size = 1024;
	hi->cell.think = 1;
	split(lo, "ns_per_msg", "writer", 2, TC_PEER, 7300.0, TC_USER, 2700.0);
	split(hi, "ns_per_msg", "reader", 3, TC_USER, 600.0, TC_KERNEL, 240.0, TC_PEER, 160.0);
	why_001(buf, sizeof(buf), lo, hi);
	assert_non_null(strstr(buf, "in the worst cell (1024 B, think 16) the writer took 10.0us per message: waiting for the peer 73 %, user work 27 %; against the best (1024 B, think 1) (its reader), the shares that differ most are waiting for the peer (73 % vs 16 %) and user work (27 % vs 60 %)"));
	free(lo);
	free(hi);
}

static void test_explain(void **state)
{
	struct result *a = cell("pipe", 1000), *b = cell("pipe", 2000);
	struct trace_explain *e = &a->trace.explain;
	char buf[WHY_LEN];

	(void)state;
	split(a, "rtt_mean_ns", "round trip", 1, TC_WAKEUP, 1000.0);
	split(b, "rtt_mean_ns", "round trip", 1, TC_WAKEUP, 500.0);
	*e = (struct trace_explain){ .on = true, .cause = "cross-CPU wakeups", .knob = "--pin same",
				     .share_pct = 41, .applied = true, .of = "lat_p50_ns", .ratio = 0.52,
				     .ratio_lo = 0.5, .ratio_hi = 0.6, .pairs = 3, .confirmed = true };
	why_004(buf, sizeof(buf), a, b);
	assert_non_null(strstr(buf, "; --explain on the process pair tested cross-CPU wakeups (41 %) with --pin same: lat_p50_ns 0.52x over 3 pairs (0.5-0.6x), which confirmed it."));
	e->confirmed = false;
	why_004(buf, sizeof(buf), a, b);
	assert_non_null(strstr(buf, "which did not confirm it."));
	*e = (struct trace_explain){ .on = true, .cause = "cross-CPU wakeups", .knob = "--pin same" };
	snprintf(e->note, sizeof(e->note), "the endpoints share one CPU already");
	why_004(buf, sizeof(buf), a, b);
	assert_non_null(strstr(buf, "--explain on the process pair did not test cross-CPU wakeups: the endpoints share one CPU already."));
	e->cause = "none";
	snprintf(e->note, sizeof(e->note), "no scheduling cause took 1 %% of the windows");
	why_004(buf, sizeof(buf), a, b);
	assert_non_null(strstr(buf, "--explain on the process pair found no cause to test: no scheduling cause took 1 % of the windows."));
	free(a);
	free(b);
}

/* Untraced (or failed) cells: no sentence, as without --trace; a small
 * buffer is cut, never overrun. */
static void test_none_and_bounds(void **state)
{
	struct result *a = cell("pipe", 1000), *b = cell("pipe", 2000);
	char buf[WHY_LEN], small[24];

	(void)state;
	a->trace.on = b->trace.on = false;
	assert_int_equal(why_004(buf, sizeof(buf), a, b), 0);
	assert_string_equal(buf, "");
	a->trace.on = b->trace.on = true;
	assert_int_equal(why_004(buf, sizeof(buf), a, b), 0);	/* no cause split */
	split(a, "rtt_mean_ns", "round trip", 1, TC_WAKEUP, 1000.0);
	split(b, "rtt_mean_ns", "round trip", 1, TC_USER, 500.0);
	b->status = RES_FAILED;
	assert_int_equal(why_004(buf, sizeof(buf), a, b), 0);
	b->status = RES_OK;
	assert_int_equal(why_004(small, sizeof(small), a, b), sizeof(small) - 1);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_002_shares),
		cmocka_unit_test(test_machine),
		cmocka_unit_test(test_hostile_comm),
		cmocka_unit_test(test_noise),
		cmocka_unit_test(test_003_paced),
		cmocka_unit_test(test_001_pct),
		cmocka_unit_test(test_explain),
		cmocka_unit_test(test_none_and_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
