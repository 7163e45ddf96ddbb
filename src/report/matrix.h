/* SPDX-License-Identifier: MIT */
/* --pin matrix's report (matrix.c): the CPU x CPU table ordered and
 * annotated by the topology, the figure per topology class, the time per
 * cell; and the "topology" and "matrix" objects of a result file (read
 * back by rec_matrix.h). */
#ifndef IPCLAB_REPORT_MATRIX_H
#define IPCLAB_REPORT_MATRIX_H

#include <stdio.h>

#include <jansson.h>

#include "ipclab/result.h"

/* The table and the summary of rep (rep->matrix set): 0 or -EIO. */
int report_matrix(FILE *f, const struct report *rep);
/* Add "topology" and "matrix" to a result file's root: 0 or -ENOMEM. */
int matrix_json_put(json_t *root, const struct report *rep);

#endif
