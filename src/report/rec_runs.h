/* SPDX-License-Identifier: MIT */
/* A record of run --runs N read back (src/report/rec_runs.c): its runs,
 * and each run as a record of its own, for compare's test over runs. */
#ifndef IPCLAB_REPORT_REC_RUNS_H
#define IPCLAB_REPORT_REC_RUNS_H

#include <stddef.h>

#include "rfile.h"

/* The separate runs rf holds (run --runs N: N, from 2), 0 when it holds
 * one run (no "runs", or a cell without its runs). */
size_t rfile_nruns(const struct rfile *rf);

/* Run j (0-based) of rf as a record of its own, into out: every cell's
 * status, reason and metrics those of the run, without the fold's
 * repeat section, env.canary the run's; its path "PATH#run<j+1>". 0 or
 * -errno with err filled (out then empty). */
int rfile_run(const struct rfile *rf, size_t j, const char *const *ignore, struct rfile *out,
	      char *err, size_t errlen);

#endif
