// SPDX-License-Identifier: MIT
/* Unit tests of `ipclab env --check` (src/core/envcheck*.c) against fake
 * sysfs and procfs trees: a 4-CPU machine with SMT pairs, a powersave
 * governor, turbo on, CPUs 2-3 isolated, a deep C-state, THP always, RT
 * throttling off, the default timer slack and irqbalance running; then a
 * machine with none of that; /proc/PID/stat lines, hostile names among
 * them; the text and the JSON. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "ipclab/envcheck.h"
#include "../../src/core/envcheck_int.h"
#include "../../src/report/envcheck_out.h"

static char root[256], sys_root[300], proc_root[300];

static void put(const char *base, const char *rel, const char *text)
{
	char path[512], *p;

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	for (p = path + strlen(base) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fprintf(f, "%s\n", text);
	fclose(f);
}

static void putf(const char *base, const char *text, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void putf(const char *base, const char *text, const char *fmt, ...)
{
	char rel[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	put(base, rel, text);
}

static const char stat_line[] = "cpu  100 0 50 1000 0 0 0 0 0 0\n"
				"cpu0 25 0 12 250 0 0 0 0 0 0\ncpu1 25 0 12 250 0 0 0 0 0 0\n"
				"cpu2 25 0 13 250 0 0 0 0 0 0\ncpu3 25 0 13 250 0 0 0 0 0 0\n"
				"intr 0\nctxt 0";
static const char task_tail[] = " S 1 1 1 0 -1 4194560 100 0 0 0 50 20 0 0 20 0 1 0 12345 0 0";

static void noisy_machine(void)
{
	static const char *const sib[] = { "0-1", "0-1", "2-3", "2-3" };
	char buf[256];

	put(sys_root, "devices/system/cpu/online", "0-3");
	for (unsigned c = 0; c < 4; c++) {
		putf(sys_root, c == 1 ? "powersave" : "performance", "devices/system/cpu/cpu%u/cpufreq/scaling_governor", c);
		putf(sys_root, sib[c], "devices/system/cpu/cpu%u/topology/thread_siblings_list", c);
		putf(sys_root, "POLL", "devices/system/cpu/cpu%u/cpuidle/state0/name", c);
		putf(sys_root, "0", "devices/system/cpu/cpu%u/cpuidle/state0/latency", c);
		putf(sys_root, "0", "devices/system/cpu/cpu%u/cpuidle/state0/disable", c);
		putf(sys_root, "C6", "devices/system/cpu/cpu%u/cpuidle/state1/name", c);
		putf(sys_root, "133", "devices/system/cpu/cpu%u/cpuidle/state1/latency", c);
		putf(sys_root, "0", "devices/system/cpu/cpu%u/cpuidle/state1/disable", c);
	}
	put(sys_root, "devices/system/cpu/intel_pstate/no_turbo", "0");
	put(sys_root, "devices/system/cpu/isolated", "2-3");
	put(sys_root, "devices/system/cpu/nohz_full", "2-3");
	put(sys_root, "devices/system/cpu/cpuidle/current_driver", "intel_idle");
	put(sys_root, "kernel/mm/transparent_hugepage/enabled", "[always] madvise never");
	put(proc_root, "sys/kernel/sched_rt_runtime_us", "-1");
	put(proc_root, "sys/kernel/sched_rt_period_us", "1000000");
	put(proc_root, "self/timerslack_ns", "50000");
	put(proc_root, "stat", stat_line);
	snprintf(buf, sizeof(buf), "812 (irqbalance)%s", task_tail);
	put(proc_root, "812/stat", buf);
	/* a name with a newline, a parenthesis and a control byte */
	snprintf(buf, sizeof(buf), "900 (a)b\n\001)%s", task_tail);
	put(proc_root, "900/stat", buf);
}

static int setup(void **state)
{
	snprintf(root, sizeof(root), "%s/envcheck.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(root));
	snprintf(sys_root, sizeof(sys_root), "%s/sys", root);
	snprintf(proc_root, sizeof(proc_root), "%s/proc", root);
	mkdir(sys_root, 0755);
	mkdir(proc_root, 0755);
	return 0;
}

static int teardown(void **state)
{
	char cmd[400];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static const struct env_check *find(const struct env_checks *ck, const char *name)
{
	for (unsigned i = 0; i < ck->n; i++)
		if (!strcmp(ck->c[i].name, name))
			return &ck->c[i];
	fail_msg("no check %s", name);
	return NULL;
}

static void expect(const struct env_checks *ck, const char *name, enum check_status s,
		   const char *found_part, bool has_fix)
{
	const struct env_check *c = find(ck, name);

	if (c->status != s || !strstr(c->found, found_part) || (c->fix[0] != 0) != has_fix)
		fail_msg("%s: %s '%s' fix '%s'; expected %s with '%s'", name,
			 check_status_name(c->status), c->found, c->fix, check_status_name(s),
			 found_part);
}

static void run(struct env_checks *ck, int a, int b)
{
	struct envc_opts o = { .sys_root = sys_root, .proc_root = proc_root,
			       .sample_ns = 1000000, .cpus = { a, b }, .pin_text = "test" };

	env_check_run(&o, ck);
}

static void test_noisy(void **state)
{
	struct env_checks ck;

	noisy_machine();
	run(&ck, 0, 1);
	assert_int_equal(ck.ncpu, 4);
	expect(&ck, "governor", CHECK_WARN, "'powersave' on CPU 1", true);
	expect(&ck, "boost", CHECK_WARN, "turbo on", true);
	expect(&ck, "smt", CHECK_WARN, "CPUs 0 and 1 are SMT siblings", true);
	expect(&ck, "isolation", CHECK_WARN, "CPU 2-3 isolated, but not all of CPUs 0 and 1", true);
	expect(&ck, "cstates", CHECK_WARN, "C6 (exit latency 133 us) is enabled on CPU 0", true);
	expect(&ck, "thp", CHECK_WARN, "always", true);
	expect(&ck, "rt_throttling", CHECK_WARN, "RT throttling off", true);
	expect(&ck, "timer_slack", CHECK_WARN, "50000 ns", true);
	expect(&ck, "irqbalance", CHECK_WARN, "pid 812", true);
	/* the same tree read twice: no tick passed, nobody ran */
	expect(&ck, "steal", CHECK_NA, "no clock tick", false);
	expect(&ck, "busy_tasks", CHECK_OK, "no other task", false);
	assert_string_equal(find(&ck, "isolation")->fix, "ipclab run --pin 2:3 (isolated CPUs)");

	/* the isolated pair: isolation ok; their siblings are each other */
	run(&ck, 2, 3);
	expect(&ck, "isolation", CHECK_OK, "CPUs 2 and 3 isolated (isolcpus) and tickless", false);
	expect(&ck, "governor", CHECK_OK, "performance on CPUs 2 and 3", false);
	/* one per core: the siblings run others */
	run(&ck, 0, 2);
	expect(&ck, "smt", CHECK_WARN, "siblings of CPUs 0 and 2 (CPU 1,3)", true);
	/* unpinned: every CPU */
	run(&ck, -1, -1);
	expect(&ck, "governor", CHECK_WARN, "'powersave' on CPU 1", true);
	expect(&ck, "isolation", CHECK_WARN, "not all of CPUs 0-3", true);
}

/* Nothing to fix, or nothing to look at. */
static void test_quiet(void **state)
{
	struct env_checks ck;

	put(sys_root, "devices/system/cpu/online", "0-1");
	for (unsigned c = 0; c < 2; c++)
		putf(sys_root, c ? "1" : "0", "devices/system/cpu/cpu%u/topology/thread_siblings_list", c);
	put(sys_root, "kernel/mm/transparent_hugepage/enabled", "always [madvise] never");
	put(proc_root, "sys/kernel/sched_rt_runtime_us", "950000");
	put(proc_root, "sys/kernel/sched_rt_period_us", "1000000");
	put(proc_root, "self/timerslack_ns", "1");
	run(&ck, 0, 1);
	expect(&ck, "governor", CHECK_NA, "no cpufreq on CPUs 0 and 1", false);
	expect(&ck, "boost", CHECK_NA, "no boost control", false);
	expect(&ck, "smt", CHECK_OK, "each have a core of their own", false);
	expect(&ck, "isolation", CHECK_WARN, "no CPU is isolated", true);
	assert_true(strstr(find(&ck, "isolation")->fix, "isolcpus=1 ") != NULL);
	expect(&ck, "cstates", CHECK_NA, "no idle states", false);
	expect(&ck, "thp", CHECK_OK, "madvise", false);
	expect(&ck, "rt_throttling", CHECK_OK, "950000 of every 1000000", false);
	expect(&ck, "timer_slack", CHECK_OK, "1 ns", false);
	expect(&ck, "irqbalance", CHECK_OK, "not running", false);
	expect(&ck, "steal", CHECK_NA, "no clock tick", false);
}

/* The text has one line per check; JSON every check, with hostile names
 * kept printable (jansson refuses invalid UTF-8). */
static void test_output(void **state)
{
	struct env_checks ck;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	json_t *j;

	noisy_machine();
	run(&ck, 0, 1);
	for (unsigned i = 0; i < ck.n; i++)
		for (const char *p = ck.c[i].found; *p; p++)
			assert_true(*p >= 0x20 && *p <= 0x7e);
	f = open_memstream(&text, &len);
	assert_int_equal(env_check_text(f, &ck), 0);
	fclose(f);
	assert_non_null(strstr(text, "\nwarn  smt           CPUs 0 and 1 are SMT siblings"));
	assert_non_null(strstr(text, "; fix: echo madvise | sudo tee"));
	unsigned lines = 0, ok, warn, bad, na;
	const char *last = strrchr(text, '\n');

	while (last > text && last[-1] != '\n')
		last--;
	assert_int_equal(sscanf(last, "%u ok, %u warn, %u bad, %u n/a", &ok, &warn, &bad, &na), 4);
	assert_int_equal(ok + warn + bad + na, ck.n);
	assert_int_equal(warn, 9);

	for (const char *p = text; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, ck.n + 2);	/* heading, checks, counts */
	free(text);
	j = env_check_json(&ck);
	assert_non_null(j);
	assert_int_equal(json_array_size(json_object_get(j, "checks")), ck.n);
	assert_int_equal(json_array_size(json_object_get(j, "cpus")), 2);
	json_t *c0 = json_array_get(json_object_get(j, "checks"), 0);

	assert_string_equal(json_string_value(json_object_get(c0, "name")), "governor");
	assert_string_equal(json_string_value(json_object_get(c0, "status")), "warn");
	assert_non_null(json_string_value(json_object_get(c0, "fix")));
	json_decref(j);
}

static void test_parse_stat(void **state)
{
	struct envc_task t;
	char buf[256];

	snprintf(buf, sizeof(buf), "42 (cc1)%s", task_tail);
	assert_int_equal(envc_parse_stat(buf, &t), 0);
	assert_string_equal(t.comm, "cc1");
	assert_true(t.ticks == 70 && t.start == 12345);
	/* a name may hold blanks, parentheses and any byte but NUL */
	snprintf(buf, sizeof(buf), "43 (a) (b\n\001\377)%s", task_tail);
	assert_int_equal(envc_parse_stat(buf, &t), 0);
	assert_string_equal(t.comm, "a) (b???");
	assert_true(t.ticks == 70);
	/* longer than a kernel name: cut */
	snprintf(buf, sizeof(buf), "44 (%s)%s", "0123456789012345678901234567890", task_tail);
	assert_int_equal(envc_parse_stat(buf, &t), 0);
	assert_int_equal(strlen(t.comm), sizeof(t.comm) - 1);
	assert_int_equal(envc_parse_stat("45 (x", &t), -EINVAL);
	assert_int_equal(envc_parse_stat("46 (x) S 1 2", &t), -EINVAL);
	assert_int_equal(envc_parse_stat("47 x) S", &t), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_noisy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_quiet, setup, teardown),
		cmocka_unit_test_setup_teardown(test_output, setup, teardown),
		cmocka_unit_test(test_parse_stat),
	};

	return cmocka_run_group_tests_name("env --check", tests, NULL, NULL);
}
