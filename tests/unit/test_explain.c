// SPDX-License-Identifier: MIT
/* Unit tests for --explain's choice of cause (explain_pick) on made-up
 * traces, and for trace_comm_clean, which makes a task's name from the
 * kernel safe to print. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ipclab/trace.h"

/* Two sides of 1 s each, asleep but for what the test adds. */
static void two_sides(struct trace_result *tr)
{
	memset(tr, 0, sizeof(*tr));
	tr->on = true;
	tr->nsides = 2;
	for (unsigned i = 0; i < 2; i++) {
		tr->sides[i].wall_ns = 1000000000;
		tr->sides[i].sleep_ns = 1000000000;
		tr->sides[i].wakeups = 1000;
	}
	tr->per_msg.wakeups = 2;
}

static void test_others(void **state)
{
	struct trace_result tr;
	struct trace_pick p;

	two_sides(&tr);
	tr.sides[1].preempted_ns = 300000000;	/* a hog took 30 % of the client */
	tr.sides[1].taken_ns = 300000000;
	tr.sides[0].runnable_ns = 20000000;	/* and 20 ms of cross-CPU wakeups */
	p = explain_pick(&tr);
	assert_int_equal(p.cause, EX_OTHERS);
	assert_true(p.pct > 14.9 && p.pct < 15.1);	/* of both windows */
	assert_string_equal(explain_cause_name(p.cause), "preempted by other tasks");
}

static void test_cross_and_idle(void **state)
{
	struct trace_result tr;

	two_sides(&tr);
	tr.sides[0].runnable_ns = tr.sides[1].runnable_ns = 100000000;
	/* woken from the other CPU, which was busy: cross-CPU wakeups */
	tr.per_msg.idle_exits = 0.2;
	assert_int_equal(explain_pick(&tr).cause, EX_CROSS_CPU);
	/* ... onto a CPU that was idle nearly every time: its idle exit */
	tr.per_msg.idle_exits = 1.9;
	assert_int_equal(explain_pick(&tr).cause, EX_IDLE_EXIT);
	/* others' part of the wakeup latency is theirs, not the wakeup's */
	tr.sides[0].taken_ns = tr.sides[0].taken_woken_ns = 100000000;
	tr.sides[1].taken_ns = tr.sides[1].taken_woken_ns = 100000000;
	assert_int_equal(explain_pick(&tr).cause, EX_OTHERS);
}

static void test_peer(void **state)
{
	struct trace_result tr;

	two_sides(&tr);
	/* woken by the peer on its own CPU: waiting for the peer to leave it */
	for (unsigned i = 0; i < 2; i++) {
		tr.sides[i].runnable_ns = 100000000;
		tr.sides[i].wakeups_same_cpu = 1000;
	}
	assert_int_equal(explain_pick(&tr).cause, EX_PEER_CPU);
	/* preempted, by nobody else: by the peer */
	two_sides(&tr);
	tr.sides[0].preempted_ns = 50000000;
	assert_int_equal(explain_pick(&tr).cause, EX_PEER_CPU);
}

/* Endpoints on CPUs of their own cannot wait for each other's CPU: what
 * test_peer blames on the peer is someone else's, or a cross-CPU wakeup. */
static void test_own_cpus(void **state)
{
	struct trace_result tr;

	two_sides(&tr);
	for (unsigned i = 0; i < 2; i++) {
		tr.sides[i].runnable_ns = 100000000;
		tr.sides[i].wakeups_same_cpu = 1000;
	}
	assert_int_equal(explain_pick_placed(&tr, false).cause, EX_PEER_CPU);
	assert_int_equal(explain_pick_placed(&tr, true).cause, EX_CROSS_CPU);
	two_sides(&tr);
	tr.sides[0].preempted_ns = 50000000;
	assert_int_equal(explain_pick_placed(&tr, true).cause, EX_OTHERS);
	/* from the cause split: the CPU wait and the wakeup shares */
	two_sides(&tr);
	tr.sides[0].runnable_ns = 300000000;	/* lost > 2 x taken */
	tr.cause.on = true;
	tr.cause.nshares = 1;
	tr.cause.shares[0] = (struct trace_share){ .kind = TC_CPU_WAIT, .ns = 3000, .pct = 65 };
	assert_int_equal(explain_pick_placed(&tr, false).cause, EX_PEER_CPU);
	assert_int_equal(explain_pick_placed(&tr, true).cause, EX_OTHERS);
	tr.cause.shares[0].kind = TC_WAKEUP;
	tr.cause.cross_cpu_frac = 0.2;
	assert_int_equal(explain_pick_placed(&tr, false).cause, EX_PEER_CPU);
	assert_int_equal(explain_pick_placed(&tr, true).cause, EX_CROSS_CPU);
	assert_true(explain_pick_placed(&tr, true).pct > 64.9);
}

static void test_none(void **state)
{
	struct trace_result tr;

	two_sides(&tr);
	tr.sides[0].runnable_ns = 5000000;	/* 0.25 % of the windows */
	assert_int_equal(explain_pick(&tr).cause, EX_NONE);
	assert_string_equal(explain_cause_name(EX_NONE), "none");
	memset(&tr, 0, sizeof(tr));
	assert_int_equal(explain_pick(&tr).cause, EX_NONE);
}

static void test_comm_clean(void **state)
{
	char out[TRACE_COMM_MAX + 1], small[4];
	const char evil[16] = "a\"<b>\001\\\n\xff\x7fz";

	trace_comm_clean(out, sizeof(out), evil, sizeof(evil));
	assert_string_equal(out, "a\"<b>?\\???z");
	/* unterminated 16 bytes: cut to the kernel's 15 */
	trace_comm_clean(out, sizeof(out), "0123456789abcdefXYZ", 16);
	assert_string_equal(out, "0123456789abcde");
	trace_comm_clean(small, sizeof(small), "cc1plus", 7);
	assert_string_equal(small, "cc1");
	trace_comm_clean(out, sizeof(out), "", 16);
	assert_string_equal(out, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_others),
		cmocka_unit_test(test_cross_and_idle),
		cmocka_unit_test(test_peer),
		cmocka_unit_test(test_own_cpus),
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_comm_clean),
	};

	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
