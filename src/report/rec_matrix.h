/* SPDX-License-Identifier: MIT */
/* A --pin matrix result file's "matrix" object read back (docs/output.md:
 * metric, cpus, pairs) into a plain struct, for ipclab report's heatmap
 * and plot's; matrix.c writes it, this is the one place that reads it. */
#ifndef IPCLAB_REPORT_REC_MATRIX_H
#define IPCLAB_REPORT_REC_MATRIX_H

#include <stdbool.h>
#include <stddef.h>

#include "rfile.h"

/* CPUs read of a matrix (a heatmap's rows and columns). */
#define RMATRIX_MAX_CPUS 64

struct rmatrix {
	const char *metric;		/* NULL when not a string; borrowed from the tree */
	long cpus[RMATRIX_MAX_CPUS];	/* in topology order */
	size_t ncpus;
	/* the topology class of pair cpus[i]:cpus[j], 1 + enum topo_class
	 * (0: not in the file, or no class ipclab writes) */
	unsigned char cls[RMATRIX_MAX_CPUS][RMATRIX_MAX_CPUS];
};

/* The file's "matrix": false without one. Else true, with metric (a
 * string, else NULL), cpus (its whole numbers in their order, the first
 * RMATRIX_MAX_CPUS; other elements skipped, none when it is no array)
 * and pairs ({"S:C": class key}, a pair's class read only when it is one
 * of topo_class_key's). Whether that makes a matrix is the caller's. */
bool rfile_matrix(const struct rfile *rf, struct rmatrix *m);

/* The index in m->cpus of CPU text ("3", as rcell_param gives a pin's
 * server_cpu or client_cpu), or -1 when it is not a listed number. */
int rmatrix_cpu_at(const struct rmatrix *m, const char *text);

/* The one-letter mark of pair i, j: "=" same CPU, "s" SMT sibling, "l"
 * same LLC, "o" other LLC, "n" other node; "" when unknown. */
const char *rmatrix_mark(const struct rmatrix *m, size_t i, size_t j);

#endif
