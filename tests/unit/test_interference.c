// SPDX-License-Identifier: MIT
/* Unit tests of the interference arithmetic (src/core/interference.c) on
 * made-up /proc/stat snapshots: per-CPU foreign time when every endpoint is
 * pinned, the pool when one is not, ipclab's helpers not counted, clamping,
 * steal, the resolution floor, a window without a tick, folding repetitions,
 * the schedstat parser, and the record in JSON, CSV and the table. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "ipclab/interference.h"
#include "ipclab/reporter.h"
#include "ipclab/result.h"
#include "report_fixture.h"

#define MS 1000000ull

/* ticks per second here (USER_HZ), as /proc/stat counts */
static uint64_t hz(void)
{
	long v = sysconf(_SC_CLK_TCK);

	return v > 0 ? (uint64_t)v : 100;
}

/* Two snapshots one second apart over 2 CPUs: CPU c had task[c] ticks of
 * user time, irq[c] of irq and steal[c] of steal in that second (of hz). */
struct two {
	struct sys_snap a, b;
};

static void window(struct two *w, uint64_t secs_ms, const uint64_t task[2], const uint64_t irq[2],
		   const uint64_t steal[2])
{
	uint64_t ticks = hz() * secs_ms / 1000;

	memset(w, 0, sizeof(*w));
	w->a.ncpu = w->b.ncpu = 2;
	w->a.t_ns = 5000 * MS;
	w->b.t_ns = w->a.t_ns + secs_ms * MS;
	for (unsigned c = 0; c < 2; c++) {
		unsigned i = c + 1;

		w->a.total[i] = w->a.busy[i] = 1000;
		w->b.irq[i] = irq[c];
		w->b.steal[i] = steal[c];
		w->b.user[i] = task[c];
		w->b.busy[i] = w->a.busy[i] + task[c] + irq[c] + steal[c];
		w->b.total[i] = w->a.total[i] + ticks;
	}
}

/* In ticks of a second: a share s of 100. */
static uint64_t pct_ticks(double s)
{
	return (uint64_t)(s * (double)hz() / 100.0 + 0.5);
}

static struct intf_task pinned(unsigned cpu, uint64_t run_ms)
{
	return (struct intf_task){ .cpus = 1ull << cpu, .run_ns = run_ms * MS, .known = true,
				   .window_ns = 1000 * MS };
}

/* CPU 0: 40 % task time, the server ran 38 % of it; CPU 1: 85 % task, 5 %
 * irq, the client ran 30 %: others took 2 % and 55 %. */
static void test_per_cpu(void **state)
{
	uint64_t task[2] = { pct_ticks(40), pct_ticks(85) }, irq[2] = { 0, pct_ticks(5) };
	uint64_t steal[2] = { 0, 0 }, foreign[INTF_MAX_CPUS], pool, cpus;
	struct intf_task ep[2] = { pinned(0, 380), pinned(1, 300) };
	struct two t;
	struct intf_window w = { .a = &t.a, .b = &t.b, .ep = ep, .nep = 2 };
	struct interference in;

	window(&t, 1000, task, irq, steal);
	assert_int_equal(intf_foreign_ns(&w, foreign, &pool, &cpus), INTF_PER_CPU);
	assert_int_equal(cpus, 3);
	assert_true(llabs((long long)foreign[0] - (long long)(20 * MS)) < (long long)MS);
	assert_true(llabs((long long)foreign[1] - (long long)(550 * MS)) < (long long)MS);
	assert_true(foreign[2] == UINT64_MAX);
	intf_compute(&w, 0.5, &in);
	assert_int_equal(in.method, INTF_PER_CPU);
	assert_int_equal(in.foreign_cpu, 1);
	assert_true(fabs(in.foreign_pct - 55) < 0.1);
	assert_true(fabs(in.irq_pct - 5) < 0.1);
	assert_true(in.steal_pct == 0);
	assert_int_equal(in.ncpus, 2);
	assert_true(fabs(in.cpu[0].foreign_pct - 2) < 0.1);
	assert_true(fabs(in.cpu[1].endpoint_pct - 30) < 0.1);
	assert_true(fabs(in.cpu[1].busy_pct - 90) < 0.1);
	assert_true(in.noisy);
	assert_true(in.loadavg_1min == 0.5);

	char text[64];

	intf_summary(&in, text, sizeof(text));
	assert_string_equal(text, "cpu1:55%");
}

/* --keep-awake's spinner on CPU 1 ran 500 ms: ipclab's, not another task's. */
static void test_helpers(void **state)
{
	uint64_t task[2] = { pct_ticks(40), pct_ticks(85) }, zero[2] = { 0, 0 };
	struct intf_task ep[2] = { pinned(0, 380), pinned(1, 300) }, help = pinned(1, 500);
	struct two t;
	struct intf_window w = { .a = &t.a, .b = &t.b, .ep = ep, .nep = 2, .help = &help, .nhelp = 1 };
	struct interference in;

	window(&t, 1000, task, zero, zero);
	intf_compute(&w, NAN, &in);
	assert_true(fabs(in.cpu[1].foreign_pct - 5) < 0.1);
	assert_true(fabs(in.cpu[1].endpoint_pct - 30) < 0.1);
	assert_true(fabs(in.cpu[1].helper_pct - 50) < 0.1);
	assert_true(in.cpu[0].helper_pct == 0);
	assert_true(fabs(in.foreign_pct - 5) < 0.1);
	assert_false(in.noisy);		/* 5 % is not over 5 % */
	char text[64];

	intf_summary(&in, text, sizeof(text));
	assert_string_equal(text, "");
}

/* An endpoint that ran longer than the CPU's task ticks say: 0, not less. */
static void test_clamped(void **state)
{
	uint64_t task[2] = { pct_ticks(30), pct_ticks(30) }, zero[2] = { 0, 0 };
	struct intf_task ep[2] = { pinned(0, 350), pinned(1, 290) };
	struct two t;
	struct intf_window w = { .a = &t.a, .b = &t.b, .ep = ep, .nep = 2 };
	struct interference in;

	window(&t, 1000, task, zero, zero);
	intf_compute(&w, NAN, &in);
	assert_true(in.cpu[0].foreign_pct == 0);
	assert_true(fabs(in.cpu[1].foreign_pct - 1) < 0.1);
	assert_false(in.noisy);
}

/* Unpinned endpoints (both may use both CPUs): the pool only. */
static void test_pooled(void **state)
{
	uint64_t task[2] = { pct_ticks(40), pct_ticks(85) }, zero[2] = { 0, 0 };
	uint64_t foreign[INTF_MAX_CPUS], pool, cpus;
	struct intf_task ep[2] = { pinned(0, 380), pinned(1, 300) };
	struct two t;
	struct intf_window w = { .a = &t.a, .b = &t.b, .ep = ep, .nep = 2 };
	struct interference in;

	ep[0].cpus = ep[1].cpus = 3;
	window(&t, 1000, task, zero, zero);
	assert_int_equal(intf_foreign_ns(&w, foreign, &pool, &cpus), INTF_POOLED);
	assert_true(foreign[0] == UINT64_MAX && foreign[1] == UINT64_MAX);
	assert_true(llabs((long long)pool - (long long)(570 * MS)) < (long long)MS);
	intf_compute(&w, NAN, &in);
	assert_int_equal(in.method, INTF_POOLED);
	assert_int_equal(in.foreign_cpu, -1);
	assert_true(fabs(in.foreign_pct - 28.5) < 0.1);
	assert_true(isnan(in.cpu[0].foreign_pct) && isnan(in.cpu[1].endpoint_pct));
	assert_true(in.noisy);
	char text[64];

	intf_summary(&in, text, sizeof(text));
	assert_string_equal(text, "pool:28%");
	/* an endpoint whose CPUs were not read counts as anywhere */
	ep[0].cpus = 1;
	ep[1].cpus = 0;
	assert_int_equal(intf_foreign_ns(&w, foreign, &pool, &cpus), INTF_POOLED);
	assert_int_equal(cpus, 3);
}

/* Steal on an endpoint CPU is noise even with no other task. */
static void test_steal(void **state)
{
	uint64_t task[2] = { pct_ticks(30), pct_ticks(30) }, zero[2] = { 0, 0 };
	uint64_t steal[2] = { pct_ticks(4), 0 };
	struct intf_task ep[2] = { pinned(0, 300), pinned(1, 300) };
	struct two t;
	struct intf_window w = { .a = &t.a, .b = &t.b, .ep = ep, .nep = 2 };
	struct interference in;

	window(&t, 1000, task, zero, steal);
	intf_compute(&w, NAN, &in);
	assert_true(fabs(in.steal_pct - 4) < 0.1);
	assert_true(in.foreign_pct < 1);
	assert_true(in.noisy);
	char text[64];

	intf_summary(&in, text, sizeof(text));
	assert_string_equal(text, "steal:4%");
}

/* A 100 ms window: a share under two ticks of it is not told apart from
 * the counters' rounding; a window without a tick is not measured. */
static void test_resolution(void **state)
{
	uint64_t task[2] = { hz() / 10, 2 * hz() / 100 }, zero[2] = { 0, 0 };
	struct intf_task ep[2] = { pinned(0, 100), pinned(1, 5) };
	struct two t;
	struct intf_window w = { .a = &t.a, .b = &t.b, .ep = ep, .nep = 2 };
	struct interference in;

	window(&t, 100, task, zero, zero);
	intf_compute(&w, NAN, &in);
	assert_true(fabs(in.resolution_pct - 200.0 * (1000.0 / (double)hz()) / 100.0) < 0.01);
	assert_true(in.foreign_pct > INTF_FOREIGN_NOISY_PCT && in.foreign_pct <= in.resolution_pct);
	assert_false(in.noisy);
	t.b.total[1] = t.a.total[1];	/* CPU 0 saw no tick */
	intf_compute(&w, NAN, &in);
	assert_int_equal(in.method, INTF_NONE);
	assert_true(isnan(in.foreign_pct));
	assert_false(in.noisy);
}

static void test_wait_and_fold(void **state)
{
	uint64_t task[2] = { pct_ticks(40), pct_ticks(85) }, zero[2] = { 0, 0 };
	struct intf_task ep[2] = { pinned(0, 380), pinned(1, 300) };
	struct two t;
	struct intf_window w = { .a = &t.a, .b = &t.b, .ep = ep, .nep = 2 };
	struct interference noisy, quiet, none;

	ep[1].wait_ns = 120 * MS;
	window(&t, 1000, task, zero, zero);
	intf_compute(&w, NAN, &noisy);
	assert_true(fabs(noisy.endpoint_wait_pct - 12) < 0.01);
	task[1] = pct_ticks(31);
	ep[1].wait_ns = 300 * MS;
	window(&t, 1000, task, zero, zero);
	intf_compute(&w, NAN, &quiet);
	assert_false(quiet.noisy);
	intf_clear(&none);
	intf_fold(&quiet, &noisy);	/* the worst is kept, the highest wait too */
	assert_true(quiet.noisy);
	assert_true(fabs(quiet.foreign_pct - 55) < 0.1);
	assert_true(fabs(quiet.endpoint_wait_pct - 30) < 0.01);
	intf_fold(&none, &quiet);
	assert_int_equal(none.method, INTF_PER_CPU);
	assert_true(none.noisy);
}

static void test_schedstat_parse(void **state)
{
	struct sched_snap s;

	assert_int_equal(sched_snap_parse("123 456 7", &s), 0);
	assert_true(s.run_ns == 123 && s.wait_ns == 456 && s.slices == 7);
	assert_int_equal(sched_snap_parse("1 2", &s), -EINVAL);
	assert_int_equal(sched_snap_parse("a b c", &s), -EINVAL);
	assert_int_equal(sched_snap_parse("1 2 3 junk", &s), -EINVAL);
	/* this thread's own, where the kernel keeps it */
	if (sched_snap_self(&s) == 0)
		assert_true(s.run_ns > 0);
}

static int json_of(FILE *f, const struct report *rep)
{
	char err[256];

	return report_json(f, rep, err, sizeof(err));
}

/* The record of test_per_cpu in a result: JSON's interference object, the
 * CSV's last columns, the table's noise column and legend. */
static void test_reports(void **state)
{
	uint64_t task[2] = { pct_ticks(40), pct_ticks(85) }, irq[2] = { 0, pct_ticks(5) };
	uint64_t steal[2] = { 0, 0 };
	struct intf_task ep[2] = { pinned(0, 380), pinned(1, 300) };
	struct two t;
	struct intf_window w = { .a = &t.a, .b = &t.b, .ep = ep, .nep = 2 };
	struct result *r = calloc(2, sizeof(*r));
	struct report rep = { .cmdline = "ipclab run", .results = r, .n = 2 };
	json_error_t jerr;
	json_t *root, *in;
	char *text;

	assert_non_null(r);
	window(&t, 1000, task, irq, steal);
	fill_ok(&r[0]);
	fill_ok(&r[1]);
	intf_compute(&w, 0.25, &r[0].intf);
	task[1] = pct_ticks(31);
	window(&t, 1000, task, irq, steal);
	intf_compute(&w, 0.25, &r[1].intf);

	text = capture(json_of, &rep);
	root = json_loads(text, 0, &jerr);
	assert_non_null(root);
	in = json_object_get(json_array_get(json_object_get(root, "results"), 0), "interference");
	assert_string_equal(json_string_value(json_object_get(in, "method")), "per_cpu");
	assert_true(fabs(json_real_value(json_object_get(in, "foreign_pct")) - 55) < 0.1);
	assert_int_equal(json_integer_value(json_object_get(in, "foreign_cpu")), 1);
	assert_true(json_is_true(json_object_get(in, "noisy")));
	assert_int_equal(json_array_size(json_object_get(in, "per_cpu")), 2);
	assert_int_equal(json_integer_value(json_object_get(
		json_array_get(json_object_get(in, "per_cpu"), 1), "cpu")), 1);
	in = json_object_get(json_array_get(json_object_get(root, "results"), 1), "interference");
	assert_true(json_is_false(json_object_get(in, "noisy")));
	json_decref(root);
	free(text);

	text = capture(report_csv, &rep);
	assert_non_null(strstr(text, ",interference_foreign_pct,interference_steal_pct,"
				     "interference_irq_pct,interference_endpoint_wait_pct,"
				     "interference_noisy\n"));
	assert_non_null(strstr(text, ",true\n"));
	assert_non_null(strstr(text, ",false\n"));
	free(text);

	text = capture(report_table, &rep);
	/* after CPU%, before cs/s: busy/CPU stays the last column */
	assert_non_null(strstr(text, "  CPU%  noise  "));
	assert_non_null(strstr(text, "  cs/s  busy/CPU\n"));
	assert_true(strstr(text, "noise") < strstr(text, "cs/s"));
	assert_non_null(strstr(text, "  cpu1:55%  "));
	assert_non_null(strstr(text, "  -         "));	/* the quiet row */
	assert_non_null(strstr(text, "\nnoise = other tasks took"));
	free(text);
	r[0].intf.noisy = false;	/* no noisy row: no column */
	text = capture(report_table, &rep);
	assert_null(strstr(text, "noise"));
	free(text);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_per_cpu),	   cmocka_unit_test(test_helpers),
		cmocka_unit_test(test_clamped),	   cmocka_unit_test(test_pooled),
		cmocka_unit_test(test_steal),	   cmocka_unit_test(test_resolution),
		cmocka_unit_test(test_wait_and_fold), cmocka_unit_test(test_schedstat_parse),
		cmocka_unit_test(test_reports),
	};

	return cmocka_run_group_tests_name("interference", tests, NULL, NULL);
}
