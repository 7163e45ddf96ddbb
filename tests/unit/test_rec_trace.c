// SPDX-License-Identifier: MIT
/* The trace and profile parts of a result read back (src/report/rec_trace.c):
 * a record as run writes it reads back whole; a hostile one reads as
 * finite numbers or NAN, bounded strings or NULL and bounded arrays,
 * whatever its types, lengths and counts. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ipclab/util.h"
#include "rec_trace.h"

/* A file of one result: this trace, profile and profile_run (JSON text). */
static void load(struct rfile *rf, const char *trace, const char *profile, const char *run)
{
	char *text, err[256];

	assert_true(asprintf(&text,
			     "{\"schema_version\": 1, \"results\": [{\"transport\": \"pipe\", \"pattern\": \"pingpong\","
			     " \"status\": \"ok\", \"options\": {}, \"metrics\": {}, \"trace\": %s, \"profile\": %s, \"profile_run\": %s}]}",
			     trace, profile, run) > 0);
	if (rfile_load_text(rf, "test", text, strlen(text), NULL, err, sizeof(err)))
		fail_msg("%s", err);
	free(text);
}

static const char *const good_trace =
	"{\"sides\": [{\"role\": \"server\", \"id\": 0, \"wall_ns\": 1000, \"user_ns\": 100,"
	"  \"sys_ns\": 200, \"runnable_ns\": 300, \"preempted_ns\": 150, \"sleep_ns\": 250,"
	"  \"wakeups\": 9, \"migrations\": 1, \"vol_ctx_switches\": 8, \"invol_ctx_switches\": 2,"
	"  \"wakeup_lat_ns\": {\"count\": 9, \"p50\": 700, \"p99\": 900},"
	"  \"top_syscalls\": [{\"name\": \"read\", \"count\": 5, \"cpu_ns\": 50, \"wall_ns\": 60}],"
	"  \"preempted_by\": [{\"comm\": \"cc1\", \"pid\": 77, \"tid\": 78, \"ns\": 40, \"count\": 2}],"
	"  \"preempted_by_ns\": 45, \"runnable_split\": {\"from_idle_ns\": 3}},"
	" {\"role\": \"client\", \"id\": 0, \"wakeup_lat_ns\": null}],"
	" \"per_msg\": {\"ctx_switches\": 2, \"syscalls\": null},"
	" \"critical_path_ns\": {\"client_user\": 1, \"unattributed\": 7, \"total\": 8, \"measured\": 9},"
	" \"cause\": {\"of\": \"rtt_mean_ns\", \"total_ns\": 100, \"whose\": \"round trip\","
	"  \"shares\": [{\"name\": \"kernel work\", \"ns\": 60, \"pct\": 60},"
	"   {\"name\": \"polling\", \"ns\": 40, \"pct\": 40}],"
	"  \"largest\": \"kernel work\", \"largest_pct\": 60, \"sentence\": \"kernel work is 60 %\"},"
	" \"explain\": {\"cause\": \"idle exits\", \"knob\": \"--keep-awake\", \"ratio\": 0.5,"
	"  \"confirmed\": false, \"note\": null},"
	" \"lost_events\": 3, \"complete\": false, \"perturbation\": 1.2,"
	" \"perturbation_of\": \"lat_p50_ns\", \"lost_by\": {\"recursion\": 3}, \"events\": null}";

static void test_as_written(void **state)
{
	struct rfile rf;
	struct rtrace_side s;
	struct rtrace_taker t[4];
	struct rtrace_syscall sc[4];
	struct rtrace_extra x[8];
	struct rtrace_num pm[8];
	struct rtrace_cause cs;
	struct rtrace_cpath cp;
	struct rtrace_explain e;
	struct rtrace_summary sum;

	(void)state;
	load(&rf, good_trace, "null", "null");
	assert_true(rcell_has_trace(&rf.cells[0]));
	assert_int_equal(rcell_trace_sides(&rf.cells[0]), 2);
	assert_true(rcell_trace_side(&rf.cells[0], 0, &s));
	assert_string_equal(s.role, "server");
	assert_true(s.wall_ns == 1000 && s.budget_ns[RT_USER] == 100 && s.budget_ns[RT_SLEEP] == 250);
	assert_true(s.wakeup_p50_ns == 700 && s.wakeup_p99_ns == 900);
	assert_true(s.ntakers == 1 && s.nsyscalls == 1 && s.preempted_by_ns == 45);
	assert_int_equal(rcell_trace_takers(&rf.cells[0], 0, t, 4), 1);
	assert_true(!strcmp(t[0].comm, "cc1") && t[0].pid == 77 && t[0].tid == 78 && t[0].count == 2);
	assert_int_equal(rcell_trace_syscalls(&rf.cells[0], 0, sc, 4), 1);
	assert_true(!strcmp(sc[0].name, "read") && sc[0].cpu_ns == 50);
	assert_int_equal(rcell_trace_side_more(&rf.cells[0], 0, x, 8), 1);
	assert_string_equal(x[0].key, "runnable_split");
	/* a side never woken: wakeup_lat_ns null, its numbers absent */
	assert_true(rcell_trace_side(&rf.cells[0], 1, &s));
	assert_true(isnan(s.wakeup_p50_ns) && isnan(s.wakeup_p99_ns) && isnan(s.wall_ns));
	assert_false(rcell_trace_side(&rf.cells[0], 2, &s));
	assert_int_equal(rcell_trace_per_msg(&rf.cells[0], pm, 8), 2);
	assert_true(!strcmp(pm[0].key, "ctx_switches") && pm[0].v == 2 && isnan(pm[1].v));
	assert_true(rcell_trace_cpath(&rf.cells[0], &cp));
	assert_true(cp.part_ns[0] == 1 && cp.part_ns[RT_CPATH_PARTS - 1] == 7 && isnan(cp.part_ns[1]));
	assert_true(cp.total_ns == 8 && cp.measured_ns == 9);
	assert_true(rcell_trace_cause(&rf.cells[0], &cs));
	assert_true(cs.nshares == 2 && cs.total_ns == 100 && cs.shares[1].ns == 40);
	assert_string_equal(cs.shares[1].name, "polling");
	assert_string_equal(cs.whose, "round trip");
	assert_string_equal(cs.sentence, "kernel work is 60 %");
	/* a file from before the intervals: none, and the largest leads */
	assert_true(cs.decided && !cs.leading && isnan(cs.ci_exchanges) && isnan(cs.ci_slices));
	assert_true(isnan(cs.shares[0].ci_lo) && isnan(cs.shares[0].ci_hi));
	assert_true(rcell_trace_explain(&rf.cells[0], &e));
	assert_true(e.verdict == RT_NOT_CONFIRMED && e.ratio == 0.5 && !e.note && isnan(e.before));
	assert_string_equal(e.knob, "--keep-awake");
	assert_true(rcell_trace_summary(&rf.cells[0], &sum));
	assert_true(sum.incomplete && sum.lost_events == 3 && sum.perturbation == 1.2);
	/* the rest of trace: lost_by, not the null events nor what is read above */
	assert_int_equal(rcell_trace_more(&rf.cells[0], x, 8), 1);
	assert_string_equal(x[0].key, "lost_by");
	assert_false(rcell_has_profile(&rf.cells[0]));
	rfile_free(&rf);
}

/* A stream's split with intervals over the window's slices, and no
 * leading cause: read as written. */
static void test_slices(void **state)
{
	struct rfile rf;
	struct rtrace_cause cs;

	(void)state;
	load(&rf,
	     "{\"cause\": {\"of\": \"ns_per_msg\", \"total_ns\": 900, \"whose\": \"sender\","
	     " \"shares\": [{\"name\": \"kernel work\", \"ns\": 450, \"pct\": 50, \"pct_ci95\": [41, 59]},"
	     "  {\"name\": \"user work\", \"ns\": 360, \"pct\": 40, \"pct_ci95\": [33, 47]}],"
	     " \"largest\": \"kernel work\", \"largest_pct\": 50, \"leading\": null,"
	     " \"ci_exchanges\": null, \"ci_slices\": 60, \"sentence\": \"no single leading cause\"}}",
	     "null", "null");
	assert_true(rcell_trace_cause(&rf.cells[0], &cs));
	assert_true(!cs.decided && !cs.leading);
	assert_true(cs.ci_slices == 60 && isnan(cs.ci_exchanges));
	assert_true(cs.shares[0].ci_lo == 41 && cs.shares[0].ci_hi == 59);
	assert_true(cs.shares[1].ci_lo == 33 && cs.shares[1].ci_hi == 47);
	rfile_free(&rf);
}

static void test_profile(void **state)
{
	struct rfile rf;
	struct rprof_side s;
	struct rprof_top top[4];
	struct rprof_run run;

	(void)state;
	load(&rf, "null",
	     "[{\"role\": \"server\", \"id\": 0, \"samples\": 10, \"kernel_samples\": 4,"
	     "  \"top\": [{\"symbol\": \"f\", \"object\": \"ipclab\", \"samples\": 6, \"pct\": 60}],"
	     "  \"folded_file\": \"x-server.folded\"}, 7]",
	     "{\"hz\": 999, \"complete\": true, \"kernel_symbols_why\": null, \"folded_dir\": \"/d\"}");
	assert_false(rcell_has_trace(&rf.cells[0]));
	assert_int_equal(rcell_trace_sides(&rf.cells[0]), 0);
	assert_true(rcell_has_profile(&rf.cells[0]));
	assert_int_equal(rcell_profile_sides(&rf.cells[0]), 2);
	assert_true(rcell_profile_side(&rf.cells[0], 0, &s));
	assert_true(s.samples == 10 && s.kernel_samples == 4 && s.ntop == 1);
	assert_string_equal(s.folded_file, "x-server.folded");
	assert_int_equal(rcell_profile_top(&rf.cells[0], 0, top, 4), 1);
	assert_true(!strcmp(top[0].symbol, "f") && !strcmp(top[0].object, "ipclab") && top[0].pct == 60);
	/* an entry that is not an object reads as all absent */
	assert_true(rcell_profile_side(&rf.cells[0], 1, &s));
	assert_true(!s.role && isnan(s.samples) && !s.folded_file && !s.ntop);
	assert_false(rcell_profile_side(&rf.cells[0], 2, &s));
	assert_true(rcell_profile_run(&rf.cells[0], &run));
	assert_true(run.hz == 999 && !run.incomplete && !run.kernel_symbols_why);
	assert_string_equal(run.folded_dir, "/d");
	rfile_free(&rf);
}

/* n copies of item, comma-separated, into buf */
static char *repeat(const char *item, size_t n)
{
	size_t len = strlen(item) + 1;
	char *buf = malloc(n * len + 1);

	assert_non_null(buf);
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++)
		strcat(strcat(buf, i ? "," : ""), item);
	return buf;
}

static void test_hostile(void **state)
{
	char *sides = repeat("{\"role\": 5, \"wall_ns\": \"1\", \"preempted_by\": [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]}", 100);
	char *shares = repeat("{\"name\": [], \"ns\": true}", 40);
	char *top = repeat("{}", 100);
	char *longs = malloc(RTRACE_STR_MAX + 2);
	char *trace = malloc(strlen(sides) + strlen(shares) + 4 * RTRACE_STR_MAX);
	char *prof = malloc(strlen(top) + 64);
	struct rtrace_taker t[RTRACE_MAX_TAKERS];
	struct rprof_top pt[RPROF_MAX_TOP];
	struct rtrace_explain e;
	struct rtrace_cause cs;
	struct rtrace_side s;
	struct rprof_run run;
	struct rfile rf;

	(void)state;
	assert_true(longs && trace && prof);
	memset(longs, 'a', RTRACE_STR_MAX + 1);
	longs[RTRACE_STR_MAX + 1] = '\0';
	sprintf(trace, "{\"sides\": [%s], \"cause\": {\"shares\": [%s], \"sentence\": \"%s\", \"whose\": 3},"
		" \"explain\": {\"confirmed\": \"yes\", \"knob\": \"%s\", \"before\": \"1\"}}",
		sides, shares, longs, longs + 1);
	sprintf(prof, "[{\"top\": [%s]}]", top);
	load(&rf, trace, prof, "[1]");
	assert_int_equal(rcell_trace_sides(&rf.cells[0]), RTRACE_MAX_SIDES);
	assert_false(rcell_trace_side(&rf.cells[0], RTRACE_MAX_SIDES, &s));
	assert_true(rcell_trace_side(&rf.cells[0], RTRACE_MAX_SIDES - 1, &s));
	assert_true(!s.role && isnan(s.wall_ns) && s.ntakers == RTRACE_MAX_TAKERS);
	assert_int_equal(rcell_trace_takers(&rf.cells[0], 0, t, ARRAY_SIZE(t)), RTRACE_MAX_TAKERS);
	assert_true(!t[0].comm && isnan(t[0].ns));
	assert_int_equal(rcell_trace_takers(&rf.cells[0], 0, t, 3), 3);
	assert_true(rcell_trace_cause(&rf.cells[0], &cs));
	assert_int_equal(cs.nshares, RTRACE_MAX_SHARES);
	assert_true(!cs.shares[0].name && isnan(cs.shares[0].ns) && !cs.whose);
	assert_null(cs.sentence);	/* one byte too long */
	assert_true(rcell_trace_explain(&rf.cells[0], &e));
	assert_true(e.verdict == RT_NOT_TESTED && isnan(e.before));
	assert_non_null(e.knob);	/* RTRACE_STR_MAX bytes: kept */
	assert_int_equal(strlen(e.knob), RTRACE_STR_MAX);
	assert_int_equal(rcell_profile_top(&rf.cells[0], 0, pt, ARRAY_SIZE(pt)), RPROF_MAX_TOP);
	assert_false(rcell_profile_run(&rf.cells[0], &run));
	assert_true(isnan(run.hz) && !run.incomplete && !run.folded_dir);
	rfile_free(&rf);
	free(sides);
	free(shares);
	free(top);
	free(longs);
	free(trace);
	free(prof);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_as_written),
		cmocka_unit_test(test_slices),
		cmocka_unit_test(test_profile),
		cmocka_unit_test(test_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
