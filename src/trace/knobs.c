// SPDX-License-Identifier: MIT
/* The one table from a cause to the knobs that act on it (trace.h,
 * trace_knobs_for; docs/trace.md, "The right knob"): the cause split's
 * advice and --explain's runs both read it, and a knob the cell already has
 * is never offered. Also which cause each share of the split stands for,
 * and how a task that took an endpoint's CPU is named. */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "ipclab/experiment.h"
#include "ipclab/placement.h"
#include "ipclab/trace.h"
#include "ipclab/transport.h"

static const struct trace_knob_info knobs[TK_NKNOBS] = {
	[TK_NONE] = { TK_NONE, NULL, "nothing ipclab can turn" },
	[TK_PIN_SAME] = { TK_PIN_SAME, "--pin same", "both ends on one CPU (--pin same)" },
	[TK_PIN_SPLIT] = { TK_PIN_SPLIT, "--pin split", "a CPU for each end (--pin split)" },
	[TK_SCHED_FIFO] = { TK_SCHED_FIFO, "--sched fifo:10", "a real-time class (--sched fifo:N)" },
	[TK_KEEP_AWAKE] = { TK_KEEP_AWAKE, "--keep-awake", "keeping the CPUs out of idle (--keep-awake)" },
	[TK_PM_QOS] = { TK_PM_QOS, "--pm-qos 0", "no deep idle states (--pm-qos 0)" },
	[TK_SLEEPING_WAIT] = { TK_SLEEPING_WAIT, NULL,
			       "a wait that sleeps instead of polling (the transport's own option, -O spin-ns=0 on a ring)" },
	[TK_TIMER_SLACK] = { TK_TIMER_SLACK, NULL, "a tighter timer (timer slack, -O timer_slack on a cycle)" },
	[TK_FREE_CPU] = { TK_FREE_CPU, NULL, "a CPU no other task uses" },
	[TK_OTHER_HOST] = { TK_OTHER_HOST, NULL,
			    "another host or a dedicated vCPU (not a knob ipclab can turn)" },
};

/* Per cause, its knobs, best first (TK_NONE ends a row). */
static const enum trace_knob table[EX_NCAUSES][3] = {
	[EX_NONE] = { TK_NONE },
	[EX_OTHERS] = { TK_SCHED_FIFO, TK_FREE_CPU, TK_NONE },
	[EX_CROSS_CPU] = { TK_PIN_SAME, TK_NONE },
	[EX_IDLE_EXIT] = { TK_KEEP_AWAKE, TK_PM_QOS, TK_NONE },
	[EX_PEER_CPU] = { TK_PIN_SPLIT, TK_NONE },
	[EX_TIMER_LATE] = { TK_SCHED_FIFO, TK_TIMER_SLACK, TK_NONE },
	[EX_POLLING] = { TK_SLEEPING_WAIT, TK_NONE },
	[EX_STEAL] = { TK_OTHER_HOST, TK_NONE },
};

const struct trace_knob_info *trace_knob_info(enum trace_knob k)
{
	return &knobs[(unsigned)k < TK_NKNOBS ? k : TK_NONE];
}

enum trace_knob trace_knob_parse(const char *arg)
{
	if (!arg)
		return TK_NONE;
	for (unsigned k = 1; k < TK_NKNOBS; k++)
		if (knobs[k].arg && !strcmp(knobs[k].arg, arg))
			return (enum trace_knob)k;
	return TK_NONE;
}

static bool one_cpu(const struct pin_spec *p)
{
	return p->mode == PIN_SAME || (p->mode == PIN_CPUS && p->server_cpu == p->client_cpu);
}

/* The cell has the knob already (or the knob cannot be its: a spinning
 * transport has no sleeping wait to turn on but its own spin budget). */
static bool has_knob(const struct cell *c, enum trace_knob k)
{
	switch (k) {
	case TK_PIN_SAME: return one_cpu(&c->pin);
	case TK_PIN_SPLIT: return c->pin.mode != PIN_NONE && !one_cpu(&c->pin);
	case TK_SCHED_FIFO: return c->sched.policy == SCHED_FIFO || c->sched.policy == SCHED_RR;
	case TK_KEEP_AWAKE: return c->keep_awake;
	case TK_PM_QOS: return c->pm_qos_us == 0;
	default: return false;
	}
}

unsigned trace_knobs_for(enum explain_cause cause, const struct cell *c, enum trace_knob *out,
			 unsigned max)
{
	unsigned n = 0;

	if ((unsigned)cause >= EX_NCAUSES)
		return 0;
	for (unsigned k = 0; k < 3 && table[cause][k] != TK_NONE && n < max; k++)
		if (!c || !has_knob(c, table[cause][k]))
			out[n++] = table[cause][k];
	return n;
}

enum explain_cause trace_share_cause(const struct trace_share *sh, const struct trace_cause *c,
				     const struct trace_result *tr, bool own_cpus)
{
	uint64_t taken = 0, lost = 0;

	for (unsigned i = 0; i < tr->nsides && i < TRACE_MAX_SIDES; i++) {
		taken += tr->sides[i].taken_ns;
		lost += tr->sides[i].preempted_ns + tr->sides[i].runnable_ns;
	}
	switch (sh->kind) {
	case TC_PREEMPTED:
	case TC_CPU_WAIT:	/* by other tasks, or by its peer on one CPU */
		return own_cpus || 2 * taken >= lost ? EX_OTHERS : EX_PEER_CPU;
	case TC_WAKEUP:
		return own_cpus || c->cross_cpu_frac >= 0.5 ? EX_CROSS_CPU : EX_PEER_CPU;
	case TC_WAKEUP_IDLE: return EX_IDLE_EXIT;
	case TC_TIMER: return EX_TIMER_LATE;
	case TC_POLLING: return EX_POLLING;
	case TC_STEAL: return EX_STEAL;
	default: return EX_NONE;
	}
}

void trace_taker_label(const struct trace_taker *t, char *buf, size_t len)
{
	if (!strcmp(t->comm, TRACE_AWAKE_COMM))
		snprintf(buf, len, "ipclab's keep-awake loop (pid %u)", t->pid);
	else
		snprintf(buf, len, "%s (pid %u)", t->comm, t->pid);
}
