/* SPDX-License-Identifier: MIT */
/* CPU topology read from sysfs (SMT siblings, last-level cache groups,
 * NUMA nodes, packages) and the CPU x CPU matrix of `--pin matrix`: which
 * CPUs, every ordered pair as a pin, each pair's topology class, and what
 * the run recorded (shuffle seed, order, time). src/core/topology.c. */
#ifndef IPCLAB_TOPOLOGY_H
#define IPCLAB_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipclab/experiment.h"

struct field;

#define TOPO_MAX_CPUS 256	/* CPUs a topology holds (a matrix: 65536 pairs at most) */
#define TOPO_SYSFS "/sys/devices/system"

struct topo_cpu {
	int cpu;
	int core, package, node;	/* core_id, physical_package_id, NUMA node (-1 = none) */
	int smt;			/* index into smt_groups */
	int llc;			/* index into llc_groups (-1 = no cache information) */
};

struct topology {
	char root[128];			/* the sysfs root it was read from */
	unsigned ncpu;			/* online CPUs read, ascending */
	struct topo_cpu cpu[TOPO_MAX_CPUS];
	unsigned llc_level;		/* the last level seen (0 = none) */
	unsigned nsmt, nllc, nnode, npkg;
	char smt_groups[TOPO_MAX_CPUS][48];	/* thread_siblings_list, distinct */
	char llc_groups[TOPO_MAX_CPUS][48];	/* shared_cpu_list of the LLC, distinct */
};

/* The relation of two CPUs, nearest first. */
enum topo_class { TC_SAME_CPU, TC_SMT, TC_SAME_LLC, TC_OTHER_LLC, TC_OTHER_NODE, TC_N };

/* Read the online CPUs under root (TOPO_SYSFS normally; a tree with
 * cpu/online, cpu/cpuN/topology/{thread_siblings_list,core_id,
 * physical_package_id}, cpu/cpuN/cache/indexK/{level,type,shared_cpu_list}
 * and node/nodeN/cpulist). 0 or -errno with why in err. */
int topology_read(const char *root, struct topology *t, char *err, size_t errlen);
/* The entry of a CPU, or NULL when it is not in t. */
const struct topo_cpu *topology_cpu(const struct topology *t, int cpu);
enum topo_class topology_class(const struct topology *t, int a, int b);
const char *topo_class_name(enum topo_class c);	/* "same CPU", "SMT sibling", ... */
const char *topo_class_key(enum topo_class c);	/* "same_cpu", "smt", ... (JSON) */
/* The CPUs of t in matrix order: node, package, LLC group, core, CPU. */
unsigned topology_order(const struct topology *t, int *cpus, unsigned max);

/* "0-3,8,10-11" into set[0..max); 0 or -EINVAL. */
int cpulist_parse(const char *s, bool *set, unsigned max);

/* --pin matrix or matrix:LIST. */
#define MATRIX_MAX_CPUS 64
struct matrix_info {
	struct topology topo;
	int cpus[MATRIX_MAX_CPUS];	/* the matrix's CPUs in topology order */
	unsigned ncpu;
	const struct field *metric;	/* the figure of the table (lat_p50_ns by default) */
	uint64_t seed;			/* the shuffle's */
	unsigned rounds;		/* --repeat */
	uint32_t *order;		/* rounds x cells: the cell run at each step */
	size_t ncells;
	double wall_s;			/* the whole session */
};

/* Is this --pin word a matrix ("matrix" or "matrix:...")? */
bool matrix_word(const char *s);
/* Parse a matrix word against t into m->cpus (topology order). 0 or
 * -EINVAL with one line in err (a CPU that is not online and allowed). */
int matrix_parse(const char *s, const struct topology *t, struct matrix_info *m, char *err,
		 size_t errlen);
/* Every ordered pair of m->cpus as a pin (server:client), ncpu^2 of them
 * into out (ncpu^2 entries). */
void matrix_pins(const struct matrix_info *m, struct pin_spec *out);

#endif
