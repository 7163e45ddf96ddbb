// SPDX-License-Identifier: MIT
/* CPU topology from sysfs and the CPU x CPU matrix (--pin matrix): the
 * online CPUs with their SMT siblings, last-level cache group, NUMA node
 * and package; the class of a pair of CPUs; the pairs as pins. The sysfs
 * root is a parameter so that a fake tree stands in for a machine. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/placement.h"
#include "ipclab/topology.h"

int cpulist_parse(const char *s, bool *set, unsigned max)
{
	const char *p = s;

	memset(set, 0, max * sizeof(*set));
	while (*p && *p != '\n') {
		char *end;
		unsigned long a = strtoul(p, &end, 10), b = a;

		if (end == p || a >= max)
			return -EINVAL;
		p = end;
		if (*p == '-') {
			b = strtoul(p + 1, &end, 10);
			if (end == p + 1 || b >= max || b < a)
				return -EINVAL;
			p = end;
		}
		for (unsigned long c = a; c <= b; c++)
			set[c] = true;
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
	}
	return 0;
}

static int read_int(const char *path, int *v)
{
	char buf[32], *end;
	long l;

	if (read_text_file(path, buf, sizeof(buf)) <= 0)
		return -ENOENT;
	l = strtol(buf, &end, 10);
	if (end == buf)
		return -EINVAL;
	*v = (int)l;
	return 0;
}

/* Index of text in groups (added when new). */
static int group_of(char (*groups)[48], unsigned *n, const char *text)
{
	for (unsigned i = 0; i < *n; i++)
		if (!strcmp(groups[i], text))
			return (int)i;
	if (*n >= TOPO_MAX_CPUS)
		return -1;
	snprintf(groups[*n], sizeof(groups[0]), "%s", text);
	return (int)(*n)++;
}

/* The highest-level data or unified cache of a CPU: its level and
 * shared_cpu_list; 0 when the CPU has no cache directory. */
static unsigned cpu_llc(const char *root, int cpu, char *shared, size_t len)
{
	unsigned best = 0;

	for (int k = 0; k < 16; k++) {
		char path[256], type[32] = "", list[64];
		int level;

		snprintf(path, sizeof(path), "%s/cpu/cpu%d/cache/index%d/level", root, cpu, k);
		if (read_int(path, &level))
			continue;
		snprintf(path, sizeof(path), "%s/cpu/cpu%d/cache/index%d/type", root, cpu, k);
		if (read_text_file(path, type, sizeof(type)) > 0 && !strcmp(type, "Instruction"))
			continue;
		snprintf(path, sizeof(path), "%s/cpu/cpu%d/cache/index%d/shared_cpu_list", root,
			 cpu, k);
		if (read_text_file(path, list, sizeof(list)) <= 0 || level <= (int)best)
			continue;
		best = (unsigned)level;
		snprintf(shared, len, "%s", list);
	}
	return best;
}

/* node/nodeN/cpulist: the node of each CPU (-1 where none says). */
static void read_nodes(const char *root, int *node_of, unsigned *nnode)
{
	bool *set = calloc(TOPO_MAX_CPUS, sizeof(*set));

	for (unsigned c = 0; c < TOPO_MAX_CPUS; c++)
		node_of[c] = -1;
	*nnode = 0;
	for (int n = 0; set && n < TOPO_MAX_CPUS; n++) {
		char path[256], list[512];

		snprintf(path, sizeof(path), "%s/node/node%d/cpulist", root, n);
		if (read_text_file(path, list, sizeof(list)) < 0)
			continue;
		(*nnode)++;
		if (cpulist_parse(list, set, TOPO_MAX_CPUS))
			continue;
		for (unsigned c = 0; c < TOPO_MAX_CPUS; c++)
			if (set[c])
				node_of[c] = n;
	}
	free(set);
}

int topology_read(const char *root, struct topology *t, char *err, size_t errlen)
{
	bool online[TOPO_MAX_CPUS];
	int node_of[TOPO_MAX_CPUS];
	char path[256], list[1024];
	int pkgs[TOPO_MAX_CPUS];

	memset(t, 0, sizeof(*t));
	snprintf(t->root, sizeof(t->root), "%s", root);
	snprintf(path, sizeof(path), "%s/cpu/online", root);
	if (read_text_file(path, list, sizeof(list)) <= 0)
		return errf(err, errlen, ENOENT, "%s: cannot read the online CPUs", path);
	if (cpulist_parse(list, online, TOPO_MAX_CPUS))
		return errf(err, errlen, EINVAL, "%s: '%s' is not a CPU list (or names a CPU above %d)",
			    path, list, TOPO_MAX_CPUS - 1);
	read_nodes(root, node_of, &t->nnode);
	for (int c = 0; c < TOPO_MAX_CPUS; c++) {
		struct topo_cpu *tc;
		char sib[64], shared[64];
		unsigned lvl;

		if (!online[c])
			continue;
		tc = &t->cpu[t->ncpu++];
		*tc = (struct topo_cpu){ .cpu = c, .core = c, .package = 0, .node = node_of[c],
					 .llc = -1 };
		snprintf(path, sizeof(path), "%s/cpu/cpu%d/topology/core_id", root, c);
		read_int(path, &tc->core);
		snprintf(path, sizeof(path), "%s/cpu/cpu%d/topology/physical_package_id", root, c);
		read_int(path, &tc->package);
		snprintf(path, sizeof(path), "%s/cpu/cpu%d/topology/thread_siblings_list", root, c);
		if (read_text_file(path, sib, sizeof(sib)) <= 0)
			snprintf(sib, sizeof(sib), "%d", c);
		tc->smt = group_of(t->smt_groups, &t->nsmt, sib);
		lvl = cpu_llc(root, c, shared, sizeof(shared));
		if (lvl > t->llc_level) {	/* a deeper level: the groups so far were not the last */
			t->llc_level = lvl;
			t->nllc = 0;
			for (unsigned i = 0; i + 1 < t->ncpu; i++)
				t->cpu[i].llc = -1;
		}
		if (lvl && lvl == t->llc_level)
			tc->llc = group_of(t->llc_groups, &t->nllc, shared);
	}
	if (!t->ncpu)
		return errf(err, errlen, ENOENT, "%s/cpu/online: no CPU online", root);
	for (unsigned i = 0; i < t->ncpu; i++) {
		unsigned k = 0;

		while (k < t->npkg && pkgs[k] != t->cpu[i].package)
			k++;
		if (k == t->npkg)
			pkgs[t->npkg++] = t->cpu[i].package;
	}
	return 0;
}

const struct topo_cpu *topology_cpu(const struct topology *t, int cpu)
{
	for (unsigned i = 0; i < t->ncpu; i++)
		if (t->cpu[i].cpu == cpu)
			return &t->cpu[i];
	return NULL;
}

enum topo_class topology_class(const struct topology *t, int a, int b)
{
	const struct topo_cpu *x = topology_cpu(t, a), *y = topology_cpu(t, b);

	if (a == b)
		return TC_SAME_CPU;
	if (!x || !y)
		return TC_OTHER_NODE;
	/* without NUMA information the package stands for the node */
	if (x->node != y->node || x->package != y->package)
		return TC_OTHER_NODE;
	if (x->smt == y->smt || x->core == y->core)
		return TC_SMT;
	if (x->llc >= 0 && x->llc == y->llc)
		return TC_SAME_LLC;
	return TC_OTHER_LLC;
}

const char *topo_class_name(enum topo_class c)
{
	static const char *const n[TC_N] = { "same CPU", "SMT sibling", "same LLC", "other LLC",
					     "other node" };

	return c < TC_N ? n[c] : "?";
}

const char *topo_class_key(enum topo_class c)
{
	static const char *const n[TC_N] = { "same_cpu", "smt", "same_llc", "other_llc",
					     "other_node" };

	return c < TC_N ? n[c] : "?";
}

static const struct topology *sort_topo;

static int cmp_cpu(const void *pa, const void *pb)
{
	const struct topo_cpu *a = topology_cpu(sort_topo, *(const int *)pa),
			      *b = topology_cpu(sort_topo, *(const int *)pb);
	int ka[5] = { a->node, a->package, a->llc, a->core, a->cpu };
	int kb[5] = { b->node, b->package, b->llc, b->core, b->cpu };

	for (int i = 0; i < 5; i++)
		if (ka[i] != kb[i])
			return ka[i] < kb[i] ? -1 : 1;
	return 0;
}

/* Sort cpus (each in t) into topology order. */
static void order_cpus(const struct topology *t, int *cpus, unsigned n)
{
	sort_topo = t;
	qsort(cpus, n, sizeof(*cpus), cmp_cpu);
	sort_topo = NULL;
}

unsigned topology_order(const struct topology *t, int *cpus, unsigned max)
{
	unsigned n = 0;

	for (unsigned i = 0; i < t->ncpu && n < max; i++)
		cpus[n++] = t->cpu[i].cpu;
	order_cpus(t, cpus, n);
	return n;
}

bool matrix_word(const char *s)
{
	return !strcmp(s, "matrix") || !strncmp(s, "matrix:", 7);
}

int matrix_parse(const char *s, const struct topology *t, struct matrix_info *m, char *err,
		 size_t errlen)
{
	bool *set;
	int last = t->cpu[t->ncpu - 1].cpu;

	m->ncpu = 0;
	if (!strcmp(s, "matrix")) {
		if (t->ncpu > MATRIX_MAX_CPUS)
			return errf(err, errlen, EINVAL, "--pin matrix: %u CPUs online, a matrix takes %d; name them, e.g. --pin matrix:0-%d",
				    t->ncpu, MATRIX_MAX_CPUS, t->cpu[MATRIX_MAX_CPUS - 1].cpu);
		m->ncpu = topology_order(t, m->cpus, MATRIX_MAX_CPUS);
		return 0;
	}
	set = calloc(TOPO_MAX_CPUS, sizeof(*set));
	if (!set)
		return errf(err, errlen, ENOMEM, "out of memory");
	if (cpulist_parse(s + 7, set, TOPO_MAX_CPUS) || !s[7]) {
		free(set);
		return errf(err, errlen, EINVAL, "--pin %s: expected matrix or matrix:CPULIST, e.g. matrix:0-%d or matrix:0,2",
			    s, last);
	}
	for (int c = 0; c < TOPO_MAX_CPUS; c++) {
		if (!set[c])
			continue;
		if (!topology_cpu(t, c)) {
			free(set);
			return errf(err, errlen, EINVAL, "--pin %s: CPU %d is not online here; use CPUs of %s/cpu/online, e.g. --pin matrix:0-%d",
				    s, c, t->root, last);
		}
		if (m->ncpu == MATRIX_MAX_CPUS) {
			free(set);
			return errf(err, errlen, EINVAL, "--pin %s: more than %d CPUs; a matrix takes %d, name fewer",
				    s, MATRIX_MAX_CPUS, MATRIX_MAX_CPUS);
		}
		m->cpus[m->ncpu++] = c;
	}
	free(set);
	order_cpus(t, m->cpus, m->ncpu);
	return 0;
}

void matrix_pins(const struct matrix_info *m, struct pin_spec *out)
{
	for (unsigned i = 0; i < m->ncpu; i++)
		for (unsigned j = 0; j < m->ncpu; j++) {
			struct pin_spec *p = &out[i * m->ncpu + j];

			*p = (struct pin_spec){ .mode = PIN_CPUS, .server_cpu = m->cpus[i],
						.client_cpu = m->cpus[j] };
			snprintf(p->text, sizeof(p->text), "%d:%d", m->cpus[i], m->cpus[j]);
		}
}
