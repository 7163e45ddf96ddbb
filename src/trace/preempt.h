/* SPDX-License-Identifier: MIT */
/* --trace's machine share (src/trace/preempt.c): who took the endpoints'
 * CPUs while they waited for them, and the interrupts that ran on them. */
#ifndef IPCLAB_TRACE_PREEMPT_H
#define IPCLAB_TRACE_PREEMPT_H

#include <stdbool.h>

#include "ipclab/trace.h"
#include "trace_shared.h"

struct bpf_object;
struct btf;

/* Leave out the interrupt probes where the kernel lacks their
 * tracepoints; whether they are loaded. */
bool preempt_load(struct bpf_object *obj, const struct btf *vm);
/* Each side's takers (the top TRACE_TOP_TAKERS by time), its totals and
 * its interrupt time, into r's sides (already filled by the partition). */
void preempt_collect(struct bpf_object *obj, const struct tr_globals *g, bool irqs,
		     struct trace_result *r);

#endif
