// SPDX-License-Identifier: MIT
/* A --pin matrix file's "matrix" object read back (rec_matrix.h): CPUs as
 * whole numbers, at most RMATRIX_MAX_CPUS of them, and each pair's class
 * kept only when it is a class ipclab writes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/topology.h"
#include "rec_matrix.h"

static unsigned char class_of(const char *key)
{
	for (unsigned k = 0; key && k < TC_N; k++)
		if (!strcmp(key, topo_class_key((enum topo_class)k)))
			return (unsigned char)(k + 1);
	return 0;
}

bool rfile_matrix(const struct rfile *rf, struct rmatrix *m)
{
	const json_t *mx = json_object_get(rf->root, "matrix"), *x;
	const json_t *pairs = json_object_get(mx, "pairs");
	size_t i;

	memset(m, 0, sizeof(*m));
	if (!mx)
		return false;
	m->metric = json_string_value(json_object_get(mx, "metric"));
	json_array_foreach(json_object_get(mx, "cpus"), i, x)
		if (json_is_integer(x) && m->ncpus < RMATRIX_MAX_CPUS)
			m->cpus[m->ncpus++] = (long)json_integer_value(x);
	for (size_t a = 0; json_is_object(pairs) && a < m->ncpus; a++)
		for (size_t b = 0; b < m->ncpus; b++) {
			char pin[48];

			snprintf(pin, sizeof(pin), "%ld:%ld", m->cpus[a], m->cpus[b]);
			m->cls[a][b] = class_of(json_string_value(json_object_get(pairs, pin)));
		}
	return true;
}

int rmatrix_cpu_at(const struct rmatrix *m, const char *text)
{
	char *end;
	long v = strtol(text, &end, 10);

	for (size_t i = 0; *text && !*end && i < m->ncpus; i++)
		if (m->cpus[i] == v)
			return (int)i;
	return -1;
}

_Static_assert(TC_N == 5, "a mark for each class of enum topo_class");

const char *rmatrix_mark(const struct rmatrix *m, size_t i, size_t j)
{
	static const char *const mark[TC_N + 1] = { "", "=", "s", "l", "o", "n" };

	return i < m->ncpus && j < m->ncpus ? mark[m->cls[i][j]] : "";
}
