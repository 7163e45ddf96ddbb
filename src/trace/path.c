// SPDX-License-Identifier: MIT
/* --trace: the one-client round trip's critical path, and each side's
 * wakeup latency by how it ended, from the in-kernel sums
 * (src/trace/bpf/sched.bpf.c). */
#include <string.h>

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

/* One set of path slots, [0] server, [1] client, as the parts of
 * enum trace_cp_part (running split as getrusage split it, without the
 * syscall probes). */
static void path_parts(const uint64_t acc[2][TR_CP_SLOTS], bool syscalls,
		       const struct trace_rusage *ru, double v[TCP_NPARTS])
{
	uint64_t a[2][TR_CP_SLOTS];

	memcpy(a, acc, sizeof(a));
	for (unsigned k = 0; k < 2 && !syscalls; k++)
		trace_split_run(a[k][TR_USER] + a[k][TR_SYS], ru ? &ru[k] : NULL, &a[k][TR_USER],
				&a[k][TR_SYS]);
	v[TCP_CLIENT_USER] = (double)a[1][TR_USER];
	v[TCP_CLIENT_KERNEL] = (double)a[1][TR_SYS];
	v[TCP_CLIENT_WAKEUP] = (double)a[1][TR_WOKEN];
	v[TCP_SERVER_USER] = (double)a[0][TR_USER];
	v[TCP_SERVER_KERNEL] = (double)a[0][TR_SYS];
	v[TCP_SERVER_WAKEUP] = (double)a[0][TR_WOKEN];
	v[TCP_CLIENT_IDLE] = (double)a[1][TR_NSLOTS + TR_WK_IDLE];
	v[TCP_CLIENT_CPU_WAIT] = (double)a[1][TR_NSLOTS + TR_WK_OTHER];
	v[TCP_SERVER_IDLE] = (double)a[0][TR_NSLOTS + TR_WK_IDLE];
	v[TCP_SERVER_CPU_WAIT] = (double)a[0][TR_NSLOTS + TR_WK_OTHER];
	v[TCP_PREEMPTED] = (double)(a[0][TR_PREEMPTED] + a[1][TR_PREEMPTED]);
	v[TCP_ASLEEP] = (double)(a[0][TR_SLEEP] + a[1][TR_SLEEP]);
}

/* The exchanges' bins: the in-kernel ones, and the last exchange (from the
 * client's last send to the window's end) in the next. */
static void path_bins(const struct tr_globals *g, bool syscalls, const struct trace_rusage *ru,
		      struct trace_cpath *c)
{
	uint64_t a[2][TR_CP_SLOTS], last = 0;
	double v[TCP_NPARTS];

	c->exchanges = 0;
	c->nbins = 0;
	for (unsigned k = 0; k < 2; k++)
		for (unsigned s = 0; s < TR_CP_SLOTS; s++) {
			a[k][s] = g->cp_acc[k][s] - g->cp_snap[k][s];
			last |= a[k][s];
		}
	for (unsigned b = 0; b < TR_CP_BINS && b < TRACE_CP_BINS; b++) {
		uint64_t n = g->cp_bin_n[b];

		for (unsigned k = 0; k < 2; k++)
			for (unsigned s = 0; s < TR_CP_SLOTS; s++)
				a[k][s] = g->cp_bin[b][k][s] +
					  (last && b == (g->cp_nx & (TR_CP_BINS - 1)) ?
						   g->cp_acc[k][s] - g->cp_snap[k][s] : 0);
		if (last && b == (g->cp_nx & (TR_CP_BINS - 1)))
			n++;
		c->bin_n[b] = (uint32_t)n;
		c->bin_nmeas[b] = (uint32_t)g->cp_bin_nmeas[b];
		c->bin_meas[b] = (float)g->cp_bin_meas[b];
		if (!n)
			continue;
		path_parts((const uint64_t(*)[TR_CP_SLOTS])a, syscalls, ru, v);
		for (unsigned p = 0; p < TCP_NPARTS; p++)
			c->bin[b][p] = (float)v[p];
		c->exchanges += n;
		c->nbins++;
	}
}

void trace_path_collect(const struct tr_globals *g, bool syscalls, uint64_t n, double measured,
			const struct trace_rusage *ru, struct trace_result *r)
{
	struct trace_cpath *c = &r->cpath;
	double dn = (double)n, v[TCP_NPARTS], idle, other;

	path_parts((const uint64_t(*)[TR_CP_SLOTS])g->cp_acc, syscalls, ru, v);
	trace_cp_bound(v, &idle, &other);
	c->client_user_ns = v[TCP_CLIENT_USER] / dn;
	c->client_kernel_ns = v[TCP_CLIENT_KERNEL] / dn;
	c->client_wakeup_ns = v[TCP_CLIENT_WAKEUP] / dn;
	c->server_user_ns = v[TCP_SERVER_USER] / dn;
	c->server_kernel_ns = v[TCP_SERVER_KERNEL] / dn;
	c->server_wakeup_ns = v[TCP_SERVER_WAKEUP] / dn;
	c->wakeup_idle_ns = idle / dn;
	c->wakeup_cpu_wait_ns = other / dn;
	c->preempted_ns = v[TCP_PREEMPTED] / dn;
	/* on the path but neither running nor woken: preempted, or asleep */
	c->unattributed_ns = c->preempted_ns + v[TCP_ASLEEP] / dn;
	c->total_ns = c->client_user_ns + c->client_kernel_ns + c->client_wakeup_ns +
		      c->server_user_ns + c->server_kernel_ns + c->server_wakeup_ns +
		      c->unattributed_ns;
	c->pacing_gap_ns = (double)g->cp_gap / dn;
	c->timer_late_ns = (double)g->cp_late / dn;
	c->measured_ns = measured;
	path_bins(g, syscalls, ru, c);
	r->has_cpath = true;
}
