// SPDX-License-Identifier: MIT
/* Unit tests of the topology reader and the CPU x CPU matrix against fake
 * sysfs trees: a 16-CPU machine with two nodes, SMT pairs and four LLC
 * groups; a 2-CPU machine without SMT, NUMA or caches; CPU lists; matrix
 * words and their pins. */
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

#include "ipclab/topology.h"

static void put(const char *root, const char *rel, const char *text)
{
	char path[512], *p;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fprintf(f, "%s\n", text);
	fclose(f);
}

static void put_cpu(const char *root, int cpu, const char *file, const char *text)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "cpu/cpu%d/%s", cpu, file);
	put(root, rel, text);
}

/* 16 CPUs: node 0 = package 0 = CPUs 0-7, node 1 = package 1 = 8-15; SMT
 * pairs (2k, 2k+1); L3 shared by four CPUs: 0-3, 4-7, 8-11, 12-15. */
static void fake_16(char *root)
{
	put(root, "cpu/online", "0-15");
	put(root, "node/node0/cpulist", "0-7");
	put(root, "node/node1/cpulist", "8-15");
	for (int c = 0; c < 16; c++) {
		char v[64];
		int s = c & ~1, l = c & ~3;

		snprintf(v, sizeof(v), "%d-%d", s, s + 1);
		put_cpu(root, c, "topology/thread_siblings_list", v);
		snprintf(v, sizeof(v), "%d", (c % 8) / 2);
		put_cpu(root, c, "topology/core_id", v);
		put_cpu(root, c, "topology/physical_package_id", c < 8 ? "0" : "1");
		put_cpu(root, c, "cache/index0/level", "1");
		put_cpu(root, c, "cache/index0/type", "Data");
		snprintf(v, sizeof(v), "%d-%d", s, s + 1);
		put_cpu(root, c, "cache/index0/shared_cpu_list", v);
		put_cpu(root, c, "cache/index1/level", "1");
		put_cpu(root, c, "cache/index1/type", "Instruction");
		put_cpu(root, c, "cache/index1/shared_cpu_list", v);
		put_cpu(root, c, "cache/index2/level", "2");
		put_cpu(root, c, "cache/index2/type", "Unified");
		put_cpu(root, c, "cache/index2/shared_cpu_list", v);
		put_cpu(root, c, "cache/index3/level", "3");
		put_cpu(root, c, "cache/index3/type", "Unified");
		snprintf(v, sizeof(v), "%d-%d", l, l + 3);
		put_cpu(root, c, "cache/index3/shared_cpu_list", v);
	}
}

static int setup(void **state)
{
	char *root = malloc(128);

	snprintf(root, 128, "%s/topo.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root))
		return -1;
	*state = root;
	return 0;
}

static int teardown(void **state)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", (char *)*state);
	if (system(cmd))
		return -1;
	free(*state);
	return 0;
}

static void test_cpulist(void **state)
{
	bool set[32];

	(void)state;
	assert_int_equal(cpulist_parse("0-3,8,10-11\n", set, 32), 0);
	assert_true(set[0] && set[3] && set[8] && set[10] && set[11]);
	assert_false(set[4] || set[9] || set[12]);
	assert_int_equal(cpulist_parse("5", set, 32), 0);
	assert_true(set[5] && !set[4]);
	assert_int_equal(cpulist_parse("3-1", set, 32), -EINVAL);
	assert_int_equal(cpulist_parse("0-40", set, 32), -EINVAL);
	assert_int_equal(cpulist_parse("a", set, 32), -EINVAL);
	assert_int_equal(cpulist_parse("1,,2x", set, 32), -EINVAL);
}

static void test_sixteen(void **state)
{
	struct topology *t = malloc(sizeof(*t));
	char err[256];
	int order[16];

	fake_16(*state);
	assert_int_equal(topology_read(*state, t, err, sizeof(err)), 0);
	assert_int_equal(t->ncpu, 16);
	assert_int_equal(t->nnode, 2);
	assert_int_equal(t->npkg, 2);
	assert_int_equal(t->llc_level, 3);
	assert_int_equal(t->nllc, 4);
	assert_int_equal(t->nsmt, 8);
	assert_string_equal(t->llc_groups[topology_cpu(t, 13)->llc], "12-15");
	assert_int_equal(topology_cpu(t, 9)->node, 1);
	assert_int_equal(topology_cpu(t, 9)->core, 0);
	assert_int_equal(topology_class(t, 5, 5), TC_SAME_CPU);
	assert_int_equal(topology_class(t, 0, 1), TC_SMT);
	assert_int_equal(topology_class(t, 1, 0), TC_SMT);
	assert_int_equal(topology_class(t, 0, 2), TC_SAME_LLC);
	assert_int_equal(topology_class(t, 0, 4), TC_OTHER_LLC);
	assert_int_equal(topology_class(t, 0, 8), TC_OTHER_NODE);
	assert_int_equal(topology_class(t, 9, 8), TC_SMT);	/* core ids repeat per package */
	assert_int_equal(topology_class(t, 1, 9), TC_OTHER_NODE);
	assert_string_equal(topo_class_name(TC_SAME_LLC), "same LLC");
	assert_string_equal(topo_class_key(TC_OTHER_NODE), "other_node");
	assert_int_equal(topology_order(t, order, 16), 16);
	for (int i = 0; i < 16; i++)
		assert_int_equal(order[i], i);
	free(t);
}

static void test_matrix_words(void **state)
{
	struct topology *t = malloc(sizeof(*t));
	struct matrix_info *m = calloc(1, sizeof(*m));
	struct pin_spec pins[9];
	char err[256];

	fake_16(*state);
	assert_int_equal(topology_read(*state, t, err, sizeof(err)), 0);
	assert_true(matrix_word("matrix") && matrix_word("matrix:0-3"));
	assert_false(matrix_word("matrixx") || matrix_word("split") || matrix_word("0:1"));
	assert_int_equal(matrix_parse("matrix", t, m, err, sizeof(err)), 0);
	assert_int_equal(m->ncpu, 16);
	/* named in any order, kept in topology order */
	assert_int_equal(matrix_parse("matrix:8,0,1", t, m, err, sizeof(err)), 0);
	assert_int_equal(m->ncpu, 3);
	assert_int_equal(m->cpus[0], 0);
	assert_int_equal(m->cpus[1], 1);
	assert_int_equal(m->cpus[2], 8);
	matrix_pins(m, pins);
	assert_string_equal(pins[0].text, "0:0");
	assert_string_equal(pins[1].text, "0:1");
	assert_string_equal(pins[5].text, "1:8");
	assert_int_equal(pins[5].server_cpu, 1);
	assert_int_equal(pins[5].client_cpu, 8);
	assert_int_equal(pins[8].mode, PIN_CPUS);
	assert_int_equal(matrix_parse("matrix:0-16", t, m, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "CPU 16 is not online"));
	assert_non_null(strstr(err, "matrix:0-15"));
	assert_int_equal(matrix_parse("matrix:", t, m, err, sizeof(err)), -EINVAL);
	assert_int_equal(matrix_parse("matrix:x", t, m, err, sizeof(err)), -EINVAL);
	assert_null(strchr(err, '\n'));
	free(m);
	free(t);
}

/* No SMT, no NUMA, no cache directories: two CPUs of one package. */
static void test_bare(void **state)
{
	struct topology *t = malloc(sizeof(*t));
	char err[256];

	put(*state, "cpu/online", "0-1");
	put_cpu(*state, 0, "topology/core_id", "0");
	put_cpu(*state, 1, "topology/core_id", "1");
	assert_int_equal(topology_read(*state, t, err, sizeof(err)), 0);
	assert_int_equal(t->ncpu, 2);
	assert_int_equal(t->nnode, 0);
	assert_int_equal(t->nllc, 0);
	assert_int_equal(topology_cpu(t, 1)->llc, -1);
	assert_int_equal(topology_class(t, 0, 1), TC_OTHER_LLC);
	assert_int_equal(topology_class(t, 1, 1), TC_SAME_CPU);
	free(t);
}

static void test_missing(void **state)
{
	struct topology *t = malloc(sizeof(*t));
	char err[256], root[200];

	snprintf(root, sizeof(root), "%s/nothing", (char *)*state);
	assert_int_equal(topology_read(root, t, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "online"));
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpulist),
		cmocka_unit_test_setup_teardown(test_sixteen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_matrix_words, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bare, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
