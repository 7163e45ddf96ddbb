/* SPDX-License-Identifier: MIT */
/* Inside src/trace/: the critical path and the wakeup split from the BPF
 * object's sums (path.c), for trace.c. */
#ifndef IPCLAB_TRACE_PATH_INT_H
#define IPCLAB_TRACE_PATH_INT_H

#include <stdbool.h>

#include "ipclab/trace.h"
#include "trace_shared.h"

/* Running time split in getrusage's proportion of user to system time. */
void trace_split_run(uint64_t run, const struct trace_rusage *ru, uint64_t *user, uint64_t *sys);
/* The one-client round trip's critical path over n exchanges into r->cpath. */
void trace_path_collect(const struct tr_globals *g, bool syscalls, uint64_t n, double measured,
			const struct trace_rusage *ru, struct trace_result *r);
/* The sides' bins by slice of their window into r->slices (after the
 * sides are collected into r->sides). */
void trace_slices_collect(const struct tr_globals *g, unsigned nsides, bool syscalls,
			  struct trace_result *r);
/* Side s's runnable time by how its wakeups ended, into ts. */
void trace_side_wakeups(const struct tr_side *s, struct trace_side *ts);

#endif
