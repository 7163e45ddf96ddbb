// SPDX-License-Identifier: MIT
/* --trace or --profile around one cell, for the runner: the cell run plain just
 * before its traced run (what tracing costs, measured beside what it shows),
 * and the trace record filled from the result the runner collected. */
#include <stdlib.h>
#include <string.h>

#include "ipclab/report.h"
#include "ipclab/trace.h"

void trace_fill(struct trace *t, struct result *res)
{
	struct trace_rusage ru[TRACE_MAX_SIDES];
	bool rtt = res->lat_kind && !strcmp(res->lat_kind, "rtt");

	for (unsigned i = 0; i < res->nsides && i < TRACE_MAX_SIDES; i++)
		ru[i] = (struct trace_rusage){ res->sides[i].user_ns, res->sides[i].sys_ns };
	trace_collect(t, res->msgs, rtt ? res->lat_mean_ns : 0, ru, &res->trace);
}

int trace_run_pair(const struct cell *c, struct result *res,
		   int (*run_once)(const struct cell *c, struct result *res))
{
	struct cell plain_cell = *c;
	struct result *plain = malloc(sizeof(*plain));
	bool rtt;
	int ret;

	if (!plain) {
		res->status = RES_FAILED;
		strcpy(res->reason, "out of memory");
		return 0;
	}
	*plain = *res;
	plain_cell.trace = false;
	plain_cell.profile = false;
	ret = run_once(&plain_cell, plain);
	if (!ret)
		ret = run_once(c, res);
	rtt = res->lat_kind && !strcmp(res->lat_kind, "rtt");
	if (!ret && plain->status == RES_OK && res->status == RES_OK) {
		double untraced = rtt ? (double)plain->lat_p50_ns : plain->msgs_per_s,
		       traced = rtt ? (double)res->lat_p50_ns : res->msgs_per_s;

		trace_perturbation(&res->trace, rtt, untraced, traced);
		if (res->profile.on && untraced > 0 && traced > 0) {
			res->profile.perturbation = rtt ? traced / untraced : untraced / traced;
			res->profile.perturbation_of = rtt ? "lat_p50_ns" : "msgs_per_s";
		}
	}
	free(plain);
	return ret;
}
