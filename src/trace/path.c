// SPDX-License-Identifier: MIT
/* --trace: the one-client round trip's critical path, and each side's
 * wakeup latency by how it ended, from the in-kernel sums
 * (src/trace/bpf/sched.bpf.c). */
#include "path_int.h"

void trace_split_run(uint64_t run, const struct trace_rusage *ru, uint64_t *user, uint64_t *sys)
{
	uint64_t tot = ru ? ru->user_ns + ru->sys_ns : 0;

	*sys = tot ? (uint64_t)((double)run * (double)ru->sys_ns / (double)tot) : 0;
	*user = run - *sys;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

void trace_side_wakeups(const struct tr_side *s, struct trace_side *ts)
{
	uint64_t left = ts->runnable_ns;

	/* the parts are measured wakeup by wakeup, the whole interval by
	 * interval: bound each by what is left of the whole */
	ts->woken_idle_ns = min_u64(s->wk[TR_WK_IDLE], left);
	left -= ts->woken_idle_ns;
	ts->woken_other_ns = min_u64(s->wk[TR_WK_OTHER], left);
	left -= ts->woken_other_ns;
	ts->woken_side_ns = min_u64(s->wk[TR_WK_SIDE], left);
	left -= ts->woken_side_ns;
	ts->woken_timer_ns = min_u64(s->wk_timer, left);
	ts->timer_wakeups = s->timer_wakeups;
}

void trace_path_collect(const struct tr_globals *g, bool syscalls, uint64_t n, double measured,
			const struct trace_rusage *ru, struct trace_result *r)
{
	uint64_t a[2][TR_CP_SLOTS];	/* [0] server, [1] client */
	struct trace_cpath *c = &r->cpath;
	double dn = (double)n, idle = 0, other = 0;

	for (unsigned k = 0; k < 2; k++)
		for (unsigned s = 0; s < TR_CP_SLOTS; s++)
			a[k][s] = g->cp_acc[k][s];
	for (unsigned k = 0; k < 2 && !syscalls; k++)
		trace_split_run(a[k][TR_USER] + a[k][TR_SYS], ru ? &ru[k] : NULL, &a[k][TR_USER],
				&a[k][TR_SYS]);
	for (unsigned k = 0; k < 2; k++) {
		uint64_t i = min_u64(a[k][TR_NSLOTS + TR_WK_IDLE], a[k][TR_WOKEN]);

		idle += (double)i;
		other += (double)min_u64(a[k][TR_NSLOTS + TR_WK_OTHER], a[k][TR_WOKEN] - i);
	}
	c->client_user_ns = (double)a[1][TR_USER] / dn;
	c->client_kernel_ns = (double)a[1][TR_SYS] / dn;
	c->client_wakeup_ns = (double)a[1][TR_WOKEN] / dn;
	c->server_user_ns = (double)a[0][TR_USER] / dn;
	c->server_kernel_ns = (double)a[0][TR_SYS] / dn;
	c->server_wakeup_ns = (double)a[0][TR_WOKEN] / dn;
	c->wakeup_idle_ns = idle / dn;
	c->wakeup_cpu_wait_ns = other / dn;
	c->preempted_ns = (double)(a[0][TR_PREEMPTED] + a[1][TR_PREEMPTED]) / dn;
	/* on the path but neither running nor woken: preempted, or asleep */
	c->unattributed_ns = c->preempted_ns + (double)(a[0][TR_SLEEP] + a[1][TR_SLEEP]) / dn;
	c->total_ns = c->client_user_ns + c->client_kernel_ns + c->client_wakeup_ns +
		      c->server_user_ns + c->server_kernel_ns + c->server_wakeup_ns +
		      c->unattributed_ns;
	c->pacing_gap_ns = (double)g->cp_gap / dn;
	c->timer_late_ns = (double)g->cp_late / dn;
	c->measured_ns = measured;
	r->has_cpath = true;
}
