// SPDX-License-Identifier: MIT
/* Unit tests for the cause split's labels on made-up records: a receiver's
 * polling is `polling`, not user work; steal is the hypervisor's share; a
 * wakeup onto a CPU that ran a task is no idle exit; the one table from a
 * cause to its knobs leaves out what the cell has already; the advice
 * never offers a cell what it is; ipclab's keep-awake loop is named. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ipclab/placement.h"
#include "ipclab/profile.h"
#include "ipclab/result.h"
#include "ipclab/trace.h"
#include "ipclab/transport.h"
#include "../../src/report/profile_out.h"
#include "../../src/trace/trace_shared.h"

static const struct transport ring_ipc = { .name = "ring-ipc",
					   .caps = TP_DGRAM | TP_MULTI_CLIENT | TP_ZEROCOPY };
static const struct transport pipe_tp = { .name = "pipe", .caps = TP_STREAM | TP_POLLABLE };

/* A one-client ping-pong of 86 us a round trip: the server's 60 us of user
 * time on the path, the client's 5, 10 of kernel, 11 of wakeup. */
static struct result *pingpong(const struct transport *tp)
{
	struct result *r = calloc(1, sizeof(*r));
	struct trace_cpath *p;

	assert_non_null(r);
	strcpy(r->pattern, "pingpong");
	r->cell.tp = tp;
	r->cell.pm_qos_us = -1;
	r->lat_kind = LAT_RTT;
	r->trace.on = r->trace.has_cpath = true;
	r->trace.nsides = r->nsides = 2;
	for (unsigned i = 0; i < 2; i++) {
		r->trace.sides[i].wall_ns = 1000000000;
		r->trace.sides[i].user_ns = 400000000;
		r->trace.sides[i].cpus = 1u << i;
	}
	p = &r->trace.cpath;
	*p = (struct trace_cpath){ .server_user_ns = 60000, .client_user_ns = 5000,
				   .server_kernel_ns = 5000, .client_kernel_ns = 5000,
				   .server_wakeup_ns = 6000, .client_wakeup_ns = 5000,
				   .total_ns = 86000, .measured_ns = 86000 };
	return r;
}

static const struct trace_share *share(const struct trace_cause *c, enum trace_cause_kind k)
{
	for (unsigned i = 0; i < c->nshares; i++)
		if (c->shares[i].kind == k)
			return &c->shares[i];
	return NULL;
}

/* The server spun for 90 % of its user time: that part of its user time on
 * the path is polling; the rest, and the client's, user work. */
static void test_polling(void **state)
{
	struct result *r = pingpong(&ring_ipc);
	const struct trace_cause *c;

	/* syscall probes: the kernel's 5 us exact, the spin from user time */
	r->trace.syscalls_traced = true;
	r->trace.sides[0].poll_ns = 360000000;
	trace_cause_fill(r);
	c = trace_cause(&r->trace);
	assert_non_null(c);
	assert_non_null(share(c, TC_POLLING));
	assert_string_equal(share(c, TC_POLLING)->name, "polling");
	assert_true(share(c, TC_POLLING)->ns > 53999 && share(c, TC_POLLING)->ns < 54001);
	assert_true(share(c, TC_USER)->ns > 10999 && share(c, TC_USER)->ns < 11001);
	assert_true(share(c, TC_KERNEL)->ns > 9999 && share(c, TC_KERNEL)->ns < 10001);
	assert_int_equal(c->largest, TC_POLLING);
	assert_true(share(c, TC_USER)->pct < 30);
	/* without them the user/kernel split is getrusage's estimate: the
	 * spin (90 % of the server's running) comes from all of its running
	 * time on the path, 0.9 x 65 us */
	r->trace.syscalls_traced = false;
	trace_cause_fill(r);
	c = trace_cause(&r->trace);
	assert_true(share(c, TC_POLLING)->ns > 58499 && share(c, TC_POLLING)->ns < 58501);
	assert_true(share(c, TC_USER)->ns > 10999 && share(c, TC_USER)->ns < 11001);
	assert_true(share(c, TC_KERNEL)->ns > 5499 && share(c, TC_KERNEL)->ns < 5501);
	/* a paced server that ran 4 ms of its 1 s window, the ticks all
	 * sampled in the kernel (user 0), 3.6 ms of it spinning: polling,
	 * not kernel work (seen here on a 20/s ring-ipc ping-pong) */
	r->trace.sides[0].user_ns = 0;
	r->trace.sides[0].sys_ns = 4000000;
	r->trace.sides[0].poll_ns = 3600000;
	r->trace.cpath.server_user_ns = 0;
	r->trace.cpath.server_kernel_ns = 65000;
	trace_cause_fill(r);
	c = trace_cause(&r->trace);
	assert_non_null(share(c, TC_POLLING));
	assert_int_equal(c->largest, TC_POLLING);
	assert_true(share(c, TC_POLLING)->ns > 58499 && share(c, TC_POLLING)->ns < 58501);
	r->trace.sides[0].user_ns = 400000000;
	r->trace.sides[0].sys_ns = 0;
	r->trace.cpath.server_user_ns = 60000;
	r->trace.cpath.server_kernel_ns = 5000;
	/* no spin counted: all of it user work, as before */
	r->trace.sides[0].poll_ns = 0;
	trace_cause_fill(r);
	assert_null(share(trace_cause(&r->trace), TC_POLLING));
	assert_int_equal(trace_cause(&r->trace)->largest, TC_USER);
	free(r);
}

/* Steal on the server's CPU, a quarter of its busy time: a quarter of the
 * server's running on the path is the hypervisor's, not user work. */
static void test_steal(void **state)
{
	struct result *r = pingpong(&pipe_tp);
	const struct trace_cause *c;
	double total = 0;

	r->intf.ncpus = 2;
	r->intf.cpu[0] = (struct intf_cpu){ .cpu = 0, .busy_pct = 80, .steal_pct = 20 };
	r->intf.cpu[1] = (struct intf_cpu){ .cpu = 1, .busy_pct = 50, .steal_pct = 0 };
	trace_cause_fill(r);
	c = trace_cause(&r->trace);
	assert_non_null(c);
	assert_non_null(share(c, TC_STEAL));
	assert_string_equal(share(c, TC_STEAL)->name, "the hypervisor (steal)");
	assert_true(share(c, TC_STEAL)->ns > 16249 && share(c, TC_STEAL)->ns < 16251);	/* (60+5)/4 */
	assert_true(share(c, TC_USER)->ns > 49999 && share(c, TC_USER)->ns < 50001);	/* 45 + 5 */
	for (unsigned i = 0; i < c->nshares; i++)
		total += c->shares[i].pct;
	assert_true(total > 99.99 && total < 100.01);
	free(r);
}

/* A wakeup ends on a CPU switched in from idle: an idle exit only where the
 * CPU was idle when the wakeup chose it. */
static void test_idle_exit(void **state)
{
	assert_int_equal(tr_wk_kind(0, -1, 0), TR_WK_IDLE);
	assert_int_not_equal(tr_wk_kind(0, -1, 1), TR_WK_IDLE);	/* it ran a task then */
	assert_int_equal(tr_wk_kind(0, -1, 1), TR_NWK);		/* plain wakeup latency */
	assert_int_equal(tr_wk_kind(4242, -1, 1), TR_WK_OTHER);
	assert_int_equal(tr_wk_kind(4242, 1, 1), TR_WK_SIDE);
}

static unsigned knobs(enum explain_cause cause, const struct cell *c, enum trace_knob *k)
{
	return trace_knobs_for(cause, c, k, 3);
}

/* Each cause, its knobs; a knob the cell has is left out. */
static void test_knob_table(void **state)
{
	struct cell c = { .tp = &pipe_tp, .pm_qos_us = -1 };
	enum trace_knob k[3];
	char err[256];

	assert_int_equal(knobs(EX_CROSS_CPU, &c, k), 1);
	assert_int_equal(k[0], TK_PIN_SAME);
	assert_string_equal(trace_knob_info(k[0])->arg, "--pin same");
	assert_int_equal(knobs(EX_OTHERS, &c, k), 2);
	assert_int_equal(k[0], TK_SCHED_FIFO);
	assert_int_equal(knobs(EX_IDLE_EXIT, &c, k), 2);
	assert_int_equal(k[0], TK_KEEP_AWAKE);
	assert_int_equal(k[1], TK_PM_QOS);
	assert_int_equal(knobs(EX_PEER_CPU, &c, k), 1);
	assert_int_equal(k[0], TK_PIN_SPLIT);
	assert_int_equal(knobs(EX_TIMER_LATE, &c, k), 2);
	assert_int_equal(k[0], TK_SCHED_FIFO);
	assert_int_equal(k[1], TK_TIMER_SLACK);
	assert_int_equal(knobs(EX_POLLING, &c, k), 1);
	assert_int_equal(k[0], TK_SLEEPING_WAIT);
	assert_null(trace_knob_info(k[0])->arg);	/* the transport's own option */
	assert_int_equal(knobs(EX_STEAL, &c, k), 1);
	assert_int_equal(k[0], TK_OTHER_HOST);
	assert_null(trace_knob_info(k[0])->arg);
	assert_non_null(strstr(trace_knob_info(k[0])->says, "not a knob ipclab can turn"));
	assert_int_equal(knobs(EX_NONE, &c, k), 0);
	/* what the cell has already */
	assert_int_equal(pin_parse("same", &c.pin, err, sizeof(err)), 0);
	assert_int_equal(knobs(EX_CROSS_CPU, &c, k), 0);
	assert_int_equal(knobs(EX_PEER_CPU, &c, k), 1);
	assert_int_equal(pin_parse("split", &c.pin, err, sizeof(err)), 0);
	assert_int_equal(knobs(EX_PEER_CPU, &c, k), 0);
	c.keep_awake = true;
	assert_int_equal(knobs(EX_IDLE_EXIT, &c, k), 1);
	assert_int_equal(k[0], TK_PM_QOS);
	c.pm_qos_us = 0;
	assert_int_equal(knobs(EX_IDLE_EXIT, &c, k), 0);
	assert_int_equal(sched_parse("fifo:5", &c.sched, err, sizeof(err)), 0);
	assert_int_equal(knobs(EX_OTHERS, &c, k), 1);
	assert_int_equal(k[0], TK_FREE_CPU);
	assert_int_equal(trace_knob_parse("--pin same"), TK_PIN_SAME);
	assert_int_equal(trace_knob_parse("--keep-awake"), TK_KEEP_AWAKE);
	assert_int_equal(trace_knob_parse("--frobnicate"), TK_NONE);
	assert_int_equal(trace_knob_parse(NULL), TK_NONE);
}

/* The advice never offers the cell what it is: kernel work on a ring is
 * not told to use a shared-memory transport (a pipe is); cross-CPU
 * wakeups of a cell pinned to one CPU are not told --pin same. */
static void test_advice(void **state)
{
	struct result *r = pingpong(&ring_ipc);
	char err[256];

	r->trace.cpath.server_kernel_ns = 70000;
	r->trace.cpath.server_user_ns = 0;
	trace_cause_fill(r);
	assert_int_equal(trace_cause(&r->trace)->largest, TC_KERNEL);
	assert_null(strstr(trace_cause(&r->trace)->sentence, "shared-memory transport"));
	r->cell.tp = &pipe_tp;
	trace_cause_fill(r);
	assert_non_null(strstr(trace_cause(&r->trace)->sentence, "shared-memory transport"));
	free(r);

	r = pingpong(&pipe_tp);
	r->trace.cpath.server_user_ns = 0;
	r->trace.cpath.server_wakeup_ns = 70000;
	r->trace.sides[0].lat_count = 1000;	/* every wakeup from the other CPU */
	trace_cause_fill(r);
	assert_int_equal(trace_cause(&r->trace)->largest, TC_WAKEUP);
	assert_non_null(strstr(trace_cause(&r->trace)->sentence, "--pin same"));
	assert_int_equal(pin_parse("same", &r->cell.pin, err, sizeof(err)), 0);
	r->trace.sides[0].wakeups_same_cpu = 1000;	/* on one CPU: the peer's */
	trace_cause_fill(r);
	assert_null(strstr(trace_cause(&r->trace)->sentence, "--pin same"));
	assert_non_null(strstr(trace_cause(&r->trace)->sentence, "--pin split"));
	/* idle exits of a cell kept awake: the other knob, not --keep-awake */
	free(r);
	r = pingpong(&pipe_tp);
	r->trace.cpath.server_user_ns = 0;
	r->trace.cpath.server_wakeup_ns = 70000;
	r->trace.cpath.wakeup_idle_ns = 70000;
	r->cell.keep_awake = true;
	trace_cause_fill(r);
	assert_int_equal(trace_cause(&r->trace)->largest, TC_WAKEUP_IDLE);
	assert_null(strstr(trace_cause(&r->trace)->sentence, "--keep-awake"));
	assert_non_null(strstr(trace_cause(&r->trace)->sentence, "--pm-qos"));
	free(r);
}

/* Who took the CPU: ipclab's own keep-awake loop by its name. */
static void test_taker_label(void **state)
{
	struct trace_taker t = { .comm = TRACE_AWAKE_COMM, .pid = 31699 };
	char buf[96];

	trace_taker_label(&t, buf, sizeof(buf));
	assert_string_equal(buf, "ipclab's keep-awake loop (pid 31699)");
	strcpy(t.comm, "ld");
	trace_taker_label(&t, buf, sizeof(buf));
	assert_string_equal(buf, "ld (pid 31699)");
}

/* A timer-sampled profile piled up where interrupts come back on: the
 * table says so and marks that entry skid, not a hot function. */
static void test_profile_skid(void **state)
{
	struct profile_result *pr = calloc(1, sizeof(*pr));
	struct profile_side *s;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	assert_non_null(pr);
	assert_true(profile_skid_symbol("_raw_spin_unlock_irqrestore"));
	assert_true(profile_skid_symbol("finish_task_switch.isra.0"));
	assert_true(profile_skid_symbol("native_safe_halt"));
	assert_false(profile_skid_symbol("copy_user_generic"));
	assert_false(profile_skid_symbol("pp_client"));
	pr->on = true;
	pr->hz = 999;
	pr->nsides = 1;
	s = &pr->sides[0];
	s->server = true;
	s->samples = 100;
	s->skid_samples = 60;
	s->ntop = 2;
	s->top[0] = (struct profile_entry){ .symbol = "_raw_spin_unlock_irqrestore",
					    .object = "[kernel.kallsyms]", .samples = 60, .pct = 60,
					    .skid = true };
	s->top[1] = (struct profile_entry){ .symbol = "pipe_read", .object = "[kernel.kallsyms]",
					    .samples = 40, .pct = 40 };
	f = open_memstream(&text, &len);
	assert_non_null(f);
	profile_table(f, pr);
	fclose(f);
	assert_non_null(strstr(text, "60% of its samples at interrupt-enable points (skid)"));
	assert_non_null(strstr(text, "_raw_spin_unlock_irqrestore"));
	assert_non_null(strstr(strstr(text, "_raw_spin_unlock_irqrestore"), "(skid)"));
	assert_null(strstr(strstr(text, "pipe_read"), "(skid)"));
	free(text);
	free(pr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_polling),
		cmocka_unit_test(test_steal),
		cmocka_unit_test(test_idle_exit),
		cmocka_unit_test(test_knob_table),
		cmocka_unit_test(test_advice),
		cmocka_unit_test(test_taker_label),
		cmocka_unit_test(test_profile_skid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
