// SPDX-License-Identifier: MIT
/* The cause split of a traced cell (ipclab/trace.h, struct trace_cause):
 * the headline figure's time split into named shares that add up to it. */
#include <stddef.h>

#include "ipclab/trace.h"

static const char *const cause_names[TC_NKINDS] = {
	[TC_USER] = "user work",
	[TC_KERNEL] = "kernel work",
	[TC_WAKEUP] = "wakeup latency",
	[TC_WAKEUP_IDLE] = "wakeup from idle",
	[TC_CPU_WAIT] = "waiting for a CPU",
	[TC_PREEMPTED] = "preempted",
	[TC_PEER] = "waiting for the peer",
	[TC_TIMER] = "timer lateness",
	[TC_UNATTRIBUTED] = "unattributed",
};

const char *trace_cause_name(enum trace_cause_kind k)
{
	return (unsigned)k < TC_NKINDS ? cause_names[k] : "?";
}

const struct trace_cause *trace_cause(const struct trace_result *tr)
{
	return tr && tr->on && tr->cause.on ? &tr->cause : NULL;
}
