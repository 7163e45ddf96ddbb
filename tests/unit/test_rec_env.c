// SPDX-License-Identifier: MIT
/* A result file's run-level keys and its "env" read back (rec_env.c): the
 * env of this machine written (env_json_object) and read back gives the
 * same object, key for key, through the one key table; so does a made-up
 * one holding every kind's odd values (unknown, unlimited, NAN, no
 * caches); hostile values (too long, a NUL inside, wrong types, out of
 * range, too many) read as absent; the keys two machines differ in. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ipclab/util.h"
#include "env_json.h"
#include "rec_env.h"

/* e written, read back and written again: the same JSON. */
static void assert_round_trip(const struct env_info *e)
{
	struct env_info *back = calloc(1, sizeof(*back));
	json_t *a = env_json_object(e), *b;

	assert_non_null(back);
	assert_non_null(a);
	assert_true(rec_env(a, back));
	b = env_json_object(back);
	assert_non_null(b);
	if (!json_equal(a, b)) {
		char *sa = json_dumps(a, JSON_SORT_KEYS), *sb = json_dumps(b, JSON_SORT_KEYS);

		fail_msg("written %s\nread back %s", sa, sb);
	}
	json_decref(a);
	json_decref(b);
	free(back);
}

static void test_this_machine(void **state)
{
	struct env_info *e = calloc(1, sizeof(*e));

	(void)state;
	assert_non_null(e);
	env_collect(e);
	/* what a run adds: the canary at its start and end (to the 1/100 ns
	 * it is written with) */
	e->canary[0] = (struct canary){ true, { 0, 1 }, 81.25, 2500.5 };
	e->canary[1] = (struct canary){ true, { 0, -1 }, NAN, 2600.75 };
	assert_round_trip(e);
	free(e);
}

static void test_odd_values(void **state)
{
	struct env_info *e = calloc(1, sizeof(*e));

	(void)state;
	assert_non_null(e);
	snprintf(e->hostname, sizeof(e->hostname), "%63s", "h\xc3\xa9");	/* full, UTF-8 */
	e->preempt_dynamic = ENV_UNKNOWN;
	e->smt_active = 0;
	e->hz = -1;
	e->cpus_configured = ENV_UNKNOWN;
	e->threads_per_core = ENV_UNKNOWN;
	e->cpu_mhz = e->cpu_min_mhz = NAN;
	e->cpu_max_mhz = 3600.5;
	e->loadavg_1min = 0;
	e->sched_rt_runtime_us = -1;
	e->rlimit_rtprio = ENV_UNLIMITED;
	e->rlimit_nofile = ENV_UNKNOWN;
	e->rlimit_msgqueue_bytes = 819200;
	e->clock.resolution_ns = 1;
	e->clock.cost_ns = NAN;
	e->cpus_online = 4096;
	e->ncaches = 2;
	e->caches[0] = (struct env_cache){ 1, 64, "Data", 49152, "0-1" };
	e->caches[1] = (struct env_cache){ 3, 64, "Unified", -1, "0-63" };
	e->nwarnings = ENV_MAX_WARNINGS;
	for (unsigned i = 0; i < ENV_MAX_WARNINGS; i++)
		memset(e->warnings[i], 'a' + (int)i, sizeof(e->warnings[0]) - 1);
	assert_round_trip(e);
	free(e);
}

static void load(struct rfile *rf, const char *text)
{
	char err[ERRLEN] = "";

	if (rfile_load_text(rf, "test.json", text, strlen(text), NULL, err, sizeof(err)))
		fail_msg("%s", err);
}

static void test_hostile(void **state)
{
	static const char text[] =
		"{\"schema_version\": 1, \"results\": [], \"created_utc\": 7,"
		" \"cmdline\": \"ipclab run\", \"ipclab_version\": \"%s\","
		" \"remote_env\": \"not an object\","
		" \"env\": {\"hostname\": \"%s\", \"kernel\": [1], \"cpus_online\": -5,"
		" \"hz\": \"250\", \"smt_active\": 1, \"rlimit_rtprio\": \"unlimited\","
		" \"rlimit_nofile\": \"lots\", \"cpu_mhz\": \"fast\", \"clock_resolution_ns\": -1,"
		" \"caches\": [5, {\"level\": 2, \"type\": \"Unified\", \"size_bytes\": \"1M\","
		"   \"line_bytes\": 64, \"shared_cpus\": \"0\"}, {\"type\": 3}],"
		" \"warnings\": [\"one\", 2, \"%s\", \"three\", \"4\", \"5\", \"6\", \"7\", \"8\"],"
		" \"canary\": {\"start\": {\"cacheline_rtt_ns\": \"x\", \"pipe_rtt_ns\": 900,"
		"   \"cpus\": [1e3, 99999999999]}, \"end\": [1]}}}";
	char *big = malloc(4096), *file = malloc(16384);
	struct env_info *e = calloc(1, sizeof(*e));
	struct canary c[2];
	struct rfile rf;

	(void)state;
	assert_true(big && file && e);
	memset(big, 'x', 300);
	big[300] = '\0';
	snprintf(file, 16384, text, big, big, big);
	load(&rf, file);
	assert_string_equal(rfile_cmdline(&rf), "ipclab run");
	/* a tree made otherwise than by parsing may hold a NUL */
	json_object_set_new(rf.root, "cmdline", json_stringn("ipclab run\0 --evil", 18));
	assert_null(rfile_created(&rf));	/* a number */
	assert_null(rfile_cmdline(&rf));	/* a NUL inside */
	assert_null(rfile_version(&rf));	/* 300 bytes */
	assert_null(rfile_git_rev(&rf));	/* absent */
	assert_null(rfile_remote_env_json(&rf));
	assert_non_null(rfile_env_json(&rf));
	assert_null(rfile_hostname(&rf));	/* 300 bytes */
	assert_true(rfile_env(&rf, e));
	assert_string_equal(e->hostname, "");
	assert_string_equal(e->kernel, "");
	assert_int_equal(e->cpus_online, 0);
	assert_true(e->hz == ENV_UNKNOWN);
	assert_true(e->smt_active == ENV_UNKNOWN);	/* 1 is not a boolean */
	assert_true(e->rlimit_rtprio == ENV_UNLIMITED);
	assert_true(e->rlimit_nofile == ENV_UNKNOWN);
	assert_true(isnan(e->cpu_mhz));
	assert_int_equal(e->clock.resolution_ns, 0);
	assert_int_equal(e->ncaches, 1);
	assert_int_equal(e->caches[0].level, 2);
	assert_true(e->caches[0].size_bytes == -1);
	assert_string_equal(e->caches[0].type, "Unified");
	assert_int_equal(e->nwarnings, ENV_MAX_WARNINGS);	/* 2 and the long one left out */
	assert_string_equal(e->warnings[0], "one");
	assert_string_equal(e->warnings[1], "three");
	assert_string_equal(e->warnings[5], "7");
	assert_int_equal(rfile_canary(&rf, c), 1);
	assert_true(c[0].on && !c[1].on);
	assert_true(isnan(c[0].cacheline_rtt_ns) && c[0].pipe_rtt_ns == 900);
	assert_int_equal(c[0].cpus[0], -1);	/* 1e3 is a real, not a CPU */
	assert_int_equal(c[0].cpus[1], -1);	/* past INT_MAX */
	assert_int_equal(rec_canary(rf.root, c), 1);
	assert_false(rfile_interleaved(&rf));	/* no cells */
	rfile_free(&rf);
	free(big);
	free(file);
	free(e);
}

static void test_no_env(void **state)
{
	struct env_info *e = calloc(1, sizeof(*e));
	struct canary c[2];
	struct rfile rf;

	(void)state;
	assert_non_null(e);
	load(&rf, "{\"schema_version\": 1, \"env\": [], \"created_utc\": \"2026-01-01T00:00:00Z\","
		  " \"results\": [{\"transport\": \"pipe\", \"pattern\": \"pingpong\","
		  " \"status\": \"ok\", \"options\": {}, \"repeat\": {\"rounds\": 3}},"
		  " {\"transport\": \"pipe\", \"pattern\": \"flood\", \"status\": \"ok\", \"options\": {},"
		  " \"repeat\": {\"rounds\": 2}}]}");
	assert_string_equal(rfile_created(&rf), "2026-01-01T00:00:00Z");
	assert_null(rfile_env_json(&rf));
	assert_null(rfile_hostname(&rf));
	assert_false(rfile_env(&rf, e));
	assert_true(e->hz == ENV_UNKNOWN && e->nwarnings == 0 && !e->canary[0].on);
	assert_int_equal(rfile_canary(&rf, c), 0);
	assert_true(c[0].cpus[0] == -1 && !c[1].on);
	assert_true(rfile_interleaved(&rf));
	json_object_set_new(json_object_get(rf.cells[1].obj, "repeat"), "rounds", json_integer(1));
	assert_false(rfile_interleaved(&rf));
	rfile_free(&rf);
	free(e);
}

static void test_diff(void **state)
{
	json_t *a = json_pack("{s:s, s:s, s:f, s:[s], s:i, s:s}", "zeta", "1", "kernel", "6.1",
			      "loadavg_1min", 0.5, "warnings", "w", "cpus_online", 4, "only_a", "x");
	json_t *b = json_pack("{s:s, s:s, s:f, s:[], s:i, s:s}", "zeta", "2", "kernel", "6.12",
			      "loadavg_1min", 9.0, "warnings", "cpus_online", 4, "hostname", "b");
	const char *key[8];
	const json_t *va[8], *vb[8];
	size_t n;

	(void)state;
	assert_true(a && b);
	n = rec_env_diff(a, b, key, va, vb, 8);
	/* what a reader looks for first, then a's keys, then b's; the load
	 * and warnings are no difference of machines; cpus_online is equal */
	assert_int_equal(n, 4);
	assert_string_equal(key[0], "hostname");
	assert_null(va[0]);
	assert_string_equal(json_string_value(vb[0]), "b");
	assert_string_equal(key[1], "kernel");
	assert_string_equal(key[2], "zeta");
	assert_string_equal(key[3], "only_a");
	assert_null(vb[3]);
	assert_int_equal(rec_env_diff(a, b, key, va, vb, 2), 2);
	json_decref(a);
	json_decref(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_this_machine), cmocka_unit_test(test_odd_values),
		cmocka_unit_test(test_hostile),	     cmocka_unit_test(test_no_env),
		cmocka_unit_test(test_diff),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
