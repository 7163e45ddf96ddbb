// SPDX-License-Identifier: MIT
/* run --runs N: a cell's N separate runs folded into the one result the
 * record keeps for it. The fold is --repeat's (src/core/repeat.c): every
 * metric the median of the runs, repeat[] their min, max, spread,
 * interval, clusters and values; marked over_runs, so that a reader says
 * runs, not repetitions. The runs' own figures stay in the report
 * (report.run_results) for the record's "runs" sections. */
#include <stdlib.h>
#include <string.h>

#include "ipclab/result.h"

void runs_fold(const struct result *runs, unsigned n, struct result *out)
{
	struct result *tmp = n > 1 ? malloc(n * sizeof(*tmp)) : NULL;

	if (!tmp) {	/* one run, or no memory for the fold: the first run as is */
		*out = runs[0];
		return;
	}
	memcpy(tmp, runs, n * sizeof(*tmp));
	repeat_fold(tmp, n);
	*out = tmp[0];
	out->over_runs = out->status == RES_OK;
	free(tmp);
}
