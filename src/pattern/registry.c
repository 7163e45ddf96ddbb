// SPDX-License-Identifier: MIT
/* THE list of patterns. */
#include <string.h>

#include "ipclab/pattern.h"

extern const struct pattern pat_stream, pat_pingpong, pat_cycle;

const struct pattern *const patterns[] = {
	&pat_stream,
	&pat_pingpong,
	&pat_cycle,
};
const size_t n_patterns = ARRAY_SIZE(patterns);

const struct pattern *pattern_find(const char *name)
{
	for (size_t i = 0; i < n_patterns; i++)
		if (strcmp(patterns[i]->name, name) == 0)
			return patterns[i];
	return NULL;
}
