// SPDX-License-Identifier: MIT
/* Unit tests for the seeds' readings from the trace (src/suite/suite_why.c)
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

#include "../../src/suite/suite_why.h"
#include "../../src/pattern/cycle/cycle.h"
#include "../../src/pattern/cycle/suite/suite.h"
#include "ipclab/pattern.h"

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

/* Kept repetitions: the interval of the cells' ratio decides. Equal
 * within +-3 % is "no difference" (a finding, not noise); an interval that
 * holds 1 and reaches past +-10 % is "too noisy"; one that excludes 1 lets
 * the shares explain the difference. */
static void reps(struct result *r, double mid, const double *dev, unsigned n)
{
	r->repeat_n = n;
	r->n_repeat_stats = 1;
	r->repeat[0] = (struct repeat_stat){ .key = "msgs_per_s", .spread_pct = 1, .ci_lo = NAN, .ci_hi = NAN };
	r->repeat[0].n_values = n;
	for (unsigned i = 0; i < n; i++)
		r->repeat[0].values[i] = mid * (1 + dev[i]);
}

static void test_verdicts(void **state)
{
	static const double tight[8] = { -0.02, -0.01, 0, 0.01, 0.02, -0.015, 0.015, 0.005 };
	static const double wide[8] = { -0.4, -0.2, 0, 0.2, 0.4, -0.3, 0.3, 0.1 };
	struct result *a = cell("pipe", 100000), *b = cell("posix-mq", 101000);
	char buf[WHY_LEN];

	(void)state;
	split(a, "ns_per_msg", "receiver", 2, TC_KERNEL, 6000.0, TC_PEER, 4000.0);
	split(b, "ns_per_msg", "receiver", 2, TC_KERNEL, 5000.0, TC_WAKEUP, 4500.0);
	reps(a, 100000, tight, 8);
	reps(b, 101000, tight, 8);
	why_000(buf, sizeof(buf), b, a);
	/* said as the larger over the smaller, each cell named */
	assert_non_null(strstr(buf, "Why (trace): no difference: msgs_per_s of the "));
	assert_non_null(strstr(buf, " is 1.01x, 95 % interval "));
	assert_non_null(strstr(buf, "over 8 and 8 repetitions, within +-10 %"));
	assert_null(strstr(buf, "noise"));
	assert_null(strstr(buf, "differ most"));
	/* wide: too noisy, said as such */
	reps(a, 100000, wide, 8);
	why_000(buf, sizeof(buf), b, a);
	assert_non_null(strstr(buf, "too noisy to tell: msgs_per_s of the "));
	assert_non_null(strstr(buf, "holds 1 and reaches past +-10 %"));
	/* a real difference (1.5x, tight): the shares explain it */
	reps(a, 100000, tight, 8);
	reps(b, 150000, tight, 8);
	b->msgs_per_s = 150000;
	why_000(buf, sizeof(buf), b, a);
	assert_null(strstr(buf, "no difference"));
	assert_null(strstr(buf, "too noisy"));
	assert_non_null(strstr(buf, "differ most"));
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
	/* a run of the pairs failed: no ratio to give */
	e->pairs = 0;
	snprintf(e->note, sizeof(e->note), "a run with the knob did not complete: timed out");
	why_004(buf, sizeof(buf), a, b);
	assert_non_null(strstr(buf, "; --explain on the process pair could not test cross-CPU wakeups with --pin same: a run with the knob did not complete: timed out."));
	assert_null(strstr(buf, "0x over 0 pairs"));
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

/* ---- seed 000's cycle section ---------------------------------------------------- */

/* A cycle cell: tp under sched, cycles of which xruns missed, its p99
 * completion; 3 stages. */
static struct result *cyc_cell(const char *tp, const char *sched, uint64_t xruns, uint64_t p99)
{
	struct result *r = cell(tp, 0);
	struct cycle_result *c = (struct cycle_result *)r->pat_result;

	r->cell.pat = pattern_find("cycle");
	assert_non_null(r->cell.pat);
	r->trace.on = false;
	r->lat_samples = 1000;	/* the cycle's completion times */
	snprintf(r->cell.sched.text, sizeof(r->cell.sched.text), "%s", sched);
	c->on = true;
	c->period_ns = c->deadline_ns = 1333333;
	c->cycles = 1000;
	c->xruns = xruns;
	c->cycle_p99_ns = p99;
	c->cycle_max_ns = 2 * p99;
	c->nstages = 3;
	return r;
}

static struct cycle_result *cr(struct result *r)
{
	return (struct cycle_result *)r->pat_result;
}

/* The counts said after "by cause", summed. */
static uint64_t causes_said(const char *buf)
{
	const char *c = strstr(buf, "by cause");
	uint64_t sum = 0;

	assert_non_null(c);
	for (c += 8; *c && *c != ':'; c++)
		if (*c == ' ' && c[1] >= '0' && c[1] <= '9')
			sum += strtoull(c + 1, NULL, 10);
	return sum;
}

/* More xruns in the worst: its causes (adding up to its xruns), the one
 * that dominates, and the stage that made most of them by its wait or its
 * work; untraced, preempted is said to be unknown and --trace offered. */
static void test_cycle_xruns(void **state)
{
	struct result *b = cyc_cell("pipe", "fifo:80", 1, 900000), *w = cyc_cell("posix-mq", "other", 10, 2000000);
	struct cycle_result *c = cr(w);
	char buf[WHY_LEN];

	(void)state;
	c->causes[XC_STAGE_WAIT] = 7;
	c->causes[XC_STAGE_BUSY] = 2;
	c->causes[XC_TIMER_LATE] = 1;
	c->stages[1].xruns = 8;
	c->stages[1].blame = (struct cycle_blame){ .wait = 7, .busy = 1 };
	c->stages[1].wait_p99_ns = 900000;
	c->stages[2].xruns = 2;
	cr(b)->stages[1].wait_p99_ns = 100000;
	assert_true(why_000_cycle(buf, sizeof(buf), b, w) > 0);
	assert_string_equal(buf, "Why: the worst cell (posix-mq, other) missed 10 of 1000 deadlines against 1 of 1000 in the best cell (pipe, fifo:80), by cause stage_wait 7, stage_busy 2, timer_late 1: mostly stage_wait (a stage got the buffer late); stage 2 made 8 of them (its wait 7, its work 1), its wait p99 900us against 100us in the best; whether other tasks took the CPUs is not known without --trace; --trace would split the cycle's time by cause and name who took the CPUs.");
	assert_int_equal(causes_said(buf), c->xruns);
	/* its work this time, in stage 3 */
	c->causes[XC_STAGE_WAIT] = 1;
	c->causes[XC_STAGE_BUSY] = 8;
	c->stages[1].xruns = 1;
	c->stages[2].xruns = 8;
	c->stages[2].blame = (struct cycle_blame){ .wait = 0, .busy = 8 };
	c->stages[2].busy_p99_ns = 1200000;
	cr(b)->stages[2].busy_p99_ns = 30000;
	why_000_cycle(buf, sizeof(buf), b, w);
	assert_non_null(strstr(buf, "by cause stage_busy 8, timer_late 1, stage_wait 1: mostly stage_busy (a stage's work ran long); stage 3 made 8 of them (its wait 0, its work 8), its work p99 1.20ms against 30.0us in the best;"));
	assert_int_equal(causes_said(buf), c->xruns);
	/* late starts: the cycle that ran long before them */
	memset(c->causes, 0, sizeof(c->causes));
	c->causes[XC_LATE_START] = 9;
	c->causes[XC_BEHIND] = 1;
	why_000_cycle(buf, sizeof(buf), b, w);
	assert_non_null(strstr(buf, "by cause late_start 9, behind_schedule 1: mostly late_start (its deadline passed before it could start), its longest cycle 4.00ms against 1.80ms in the best;"));
	/* the best is the worst (one cell): nothing to compare */
	assert_int_equal(why_000_cycle(buf, sizeof(buf), w, w), 0);
	assert_string_equal(buf, "");
	/* a failed cell, a cell of another pattern */
	b->status = RES_FAILED;
	assert_int_equal(why_000_cycle(buf, sizeof(buf), b, w), 0);
	b->status = RES_OK;
	b->cell.pat = NULL;
	assert_int_equal(why_000_cycle(buf, sizeof(buf), b, w), 0);
	free(b);
	free(w);
}

/* No xruns on either: the p99 completion compared, and the part of the
 * cycle whose p99 grew most named. */
static void test_cycle_no_xruns(void **state)
{
	struct result *b = cyc_cell("ring", "fifo:80", 0, 800000), *w = cyc_cell("pipe", "other", 0, 1200000);
	char buf[WHY_LEN];

	(void)state;
	cr(w)->timer_late_p99_ns = 300000;
	cr(b)->timer_late_p99_ns = 100000;
	cr(w)->stages[0].busy_p99_ns = 500000;
	cr(b)->stages[0].busy_p99_ns = 100000;
	cr(w)->stages[2].wait_p99_ns = 150000;
	why_000_cycle(buf, sizeof(buf), b, w);
	assert_string_equal(buf, "Why: neither cell missed a deadline, but the worst cell (pipe, other) completed later: p99 1.20ms against 800us in the best cell (ring, fifo:80); the part that grew most is stage 1's work, p99 500us against 100us in the best; --trace would split the cycle's time by cause and name who took the CPUs.");
	assert_null(strstr(buf, "mostly"));
	/* the timer's lateness grew more */
	cr(w)->timer_late_p99_ns = 900000;
	why_000_cycle(buf, sizeof(buf), b, w);
	assert_non_null(strstr(buf, "the part that grew most is the driver's timer lateness, p99 900us against 100us in the best;"));
	/* as many xruns on both */
	cr(w)->xruns = cr(b)->xruns = 3;
	cr(w)->causes[XC_STAGE_BUSY] = 3;
	why_000_cycle(buf, sizeof(buf), b, w);
	assert_non_null(strstr(buf, "Why: both cells missed 3 deadlines, but the worst cell (pipe, other) completed later"));
	/* nothing grew */
	memset(cr(w)->stages, 0, sizeof(cr(w)->stages));
	cr(w)->timer_late_p99_ns = 0;
	why_000_cycle(buf, sizeof(buf), b, w);
	assert_non_null(strstr(buf, "; no part of its cycle (the timer, a stage's wait or work) has a longer p99;"));
	/* figures at their type's end: compared, not wrapped */
	cr(w)->stages[1].busy_p99_ns = UINT64_MAX;
	cr(b)->timer_late_p99_ns = UINT64_MAX;
	why_000_cycle(buf, sizeof(buf), b, w);
	assert_non_null(strstr(buf, "the part that grew most is stage 2's work"));
	free(b);
	free(w);
}

/* Traced: preempted counted and named as the cause, the stage's woken
 * to running, the cycle's cause split against the best's, who took the
 * CPUs and what --explain measured; no offer of --trace. */
static void test_cycle_traced(void **state)
{
	struct result *b = cyc_cell("pipe", "fifo:80", 0, 900000), *w = cyc_cell("unix-stream", "other", 6, 3000000);
	struct cycle_result *c = cr(w);
	struct trace_side *s = w->trace.sides;
	char buf[WHY_LEN];

	(void)state;
	w->trace.on = b->trace.on = true;
	c->causes_traced = true;
	c->causes[XC_PREEMPTED] = 5;
	c->driver_preempted = 2;
	c->causes[XC_STAGE_WAIT] = 1;
	c->stages[0].xruns = 6;
	c->stages[0].blame = (struct cycle_blame){ .wait = 1, .busy = 0, .preempted = 5 };
	c->stages[0].wait_p99_ns = 2000000;
	c->stages[0].traced = cr(b)->stages[0].traced = true;
	c->stages[0].woken_p99_ns = 1500000;
	cr(b)->stages[0].woken_p99_ns = 20000;
	split(w, "cycle_ns", "cycle", 3, TC_PREEMPTED, 60000.0, TC_USER, 30000.0, TC_KERNEL, 10000.0);
	split(b, "cycle_ns", "cycle", 2, TC_USER, 30000.0, TC_KERNEL, 10000.0);
	s[0].preempted_ns = s[0].taken_ns = 500000000;
	s[0].ntakers = 1;
	s[0].takers[0] = (struct trace_taker){ "cc1", 4242, 4242, 500000000, 50 };
	w->trace.explain = (struct trace_explain){ .on = true, .cause = "preempted", .knob = "--sched fifo:80",
						   .share_pct = 60, .applied = true, .of = "cycle_p99_ns",
						   .ratio = 0.3, .ratio_lo = 0.25, .ratio_hi = 0.35, .pairs = 3,
						   .confirmed = true };
	why_000_cycle(buf, sizeof(buf), b, w);
	assert_true(!strncmp(buf, "Why (trace): the worst cell (unix-stream, other) missed 6 of 1000", 64));
	assert_non_null(strstr(buf, "by cause preempted 5, stage_wait 1: mostly preempted (other tasks took the graph's CPUs for longer than it overran), 2 of the preempted on the driver's own CPU; stage 1 made 6 of them (its wait 1, its work 0, preempted 5), its wait p99 2.00ms against 0ns in the best, woken to running p99 1.50ms against 20.0us in the best;"));
	assert_null(strstr(buf, "not known without --trace"));
	assert_non_null(strstr(buf, "; in the worst cell (unix-stream, other) the cycle took 100us per cycle: preempted 60 %, user work 30 %, kernel work 10 %; against 40.0us per cycle in the best cell (pipe, fifo:80), the shares that differ most are preempted by other tasks (60.0us vs 0ns)"));
	assert_non_null(strstr(buf, "by cc1 (pid 4242) 100 % of the time others took: that figure is the machine's, not the IPC's"));
	assert_non_null(strstr(buf, "; --explain on the worst cell (unix-stream, other) tested preempted (60 %) with --sched fifo:80: cycle_p99_ns 0.3x over 3 pairs (0.25-0.35x), which confirmed it."));
	assert_null(strstr(buf, "--trace would"));
	assert_int_equal(causes_said(buf), c->xruns);
	free(b);
	free(w);
}

/* --repeat's spread of the compared figure wider than the gap: the noise
 * is said and nothing is blamed. */
static void test_cycle_noise(void **state)
{
	struct result *b = cyc_cell("pipe", "other", 0, 1000000), *w = cyc_cell("ring", "other", 0, 1200000);
	char buf[WHY_LEN];

	(void)state;
	cr(w)->stages[0].busy_p99_ns = 500000;
	for (unsigned i = 0; i < 2; i++) {
		struct result *r = i ? w : b;

		r->repeat_n = 5;
		r->n_repeat_stats = 1;
		r->repeat[0] = (struct repeat_stat){ .key = "cycle_p99_ns", .spread_pct = 30 + 10.0 * i,
						     .ci_lo = NAN, .ci_hi = NAN };
	}
	why_000_cycle(buf, sizeof(buf), b, w);
	assert_string_equal(buf, "Why: the repetitions of cycle_p99_ns spread 40 % and 30 %, wider than the 20 % difference: the machine's noise was too large to tell; --trace would split the cycle's time by cause and name who took the CPUs.");
	/* tight: the part is named */
	w->repeat[0].spread_pct = b->repeat[0].spread_pct = 5;
	why_000_cycle(buf, sizeof(buf), b, w);
	assert_null(strstr(buf, "too large"));
	assert_non_null(strstr(buf, "the part that grew most is stage 1's work"));
	/* more xruns by an exact test of their rates (120 vs 80 in 1000,
	 * p ~ 0.005), but their repetitions spread wider than that */
	cr(w)->xruns = 120;
	cr(b)->xruns = 80;
	cr(w)->causes[XC_STAGE_BUSY] = 120;
	w->repeat[0] = (struct repeat_stat){ .key = "xruns", .spread_pct = 60, .ci_lo = NAN, .ci_hi = NAN };
	b->repeat[0] = (struct repeat_stat){ .key = "xruns", .spread_pct = 10, .ci_lo = NAN, .ci_hi = NAN };
	why_000_cycle(buf, sizeof(buf), b, w);
	assert_non_null(strstr(buf, "Why: the repetitions of xruns spread 60 % and 10 %, wider than the 50 % difference"));
	assert_null(strstr(buf, "mostly"));
	/* 12 vs 10 in 1000: no difference by the exact test, and no cell is
	 * called the worst by its xruns */
	cr(w)->xruns = 12;
	cr(b)->xruns = 10;
	cr(w)->causes[XC_STAGE_BUSY] = 12;
	w->repeat[0].spread_pct = b->repeat[0].spread_pct = 5;
	why_000_cycle(buf, sizeof(buf), b, w);
	assert_non_null(strstr(buf, "Why: the one cell (ring, other) missed 12 of 1000 deadlines against 10 of 1000 in the other cell (pipe, other): no difference by an exact test of their rates (p = 0.83), so neither is worse by its xruns"));
	assert_null(strstr(buf, "worst"));
	assert_null(strstr(buf, "mostly"));
	free(b);
	free(w);
}

/* Names from the record with control bytes or no terminator: '?' for
 * each, 31 at most; any buffer length is cut, never overrun. */
static void test_cycle_hostile(void **state)
{
	struct result *b = cyc_cell("pipe", "fifo:80", 0, 900000), *w = cyc_cell("x", "other", 12, 2000000);
	char buf[WHY_LEN], small[96];

	(void)state;
	memset(w->transport, 'T', sizeof(w->transport));	/* no terminator */
	w->transport[2] = '\033';
	snprintf(w->cell.sched.text, sizeof(w->cell.sched.text), "o\nt\x7f");
	cr(w)->causes[XC_UNKNOWN] = 12;
	why_000_cycle(buf, sizeof(buf), b, w);
	assert_non_null(strstr(buf, "the worst cell (TT?TTTTTTTTTTTTTTTTTTTTTTTTTTTT, o?t?) missed 12 of 1000"));
	for (const char *c = buf; *c; c++)
		assert_true(*c >= 0x20 && *c < 0x7f);
	/* too many stages recorded: only the array's are read */
	cr(w)->nstages = 1000;
	cr(w)->stages[CYCLE_MAX_STAGES - 1].xruns = 4;
	why_000_cycle(buf, sizeof(buf), b, w);
	assert_non_null(strstr(buf, "stage 64 made 4 of them"));
	for (size_t len = 0; len < sizeof(small); len++) {
		size_t n;

		memset(small, '#', sizeof(small));
		n = why_000_cycle(small, len, b, w);
		if (len) {
			assert_int_equal(n, len - 1);	/* every sentence here is longer */
			assert_int_equal(strlen(small), len - 1);
		}
		for (size_t k = len; k < sizeof(small); k++)
			assert_int_equal(small[k], '#');
	}
	free(b);
	free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_002_shares),
		cmocka_unit_test(test_machine),
		cmocka_unit_test(test_hostile_comm),
		cmocka_unit_test(test_noise),
		cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_003_paced),
		cmocka_unit_test(test_001_pct),
		cmocka_unit_test(test_explain),
		cmocka_unit_test(test_none_and_bounds),
		cmocka_unit_test(test_cycle_xruns),
		cmocka_unit_test(test_cycle_no_xruns),
		cmocka_unit_test(test_cycle_traced),
		cmocka_unit_test(test_cycle_noise),
		cmocka_unit_test(test_cycle_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
