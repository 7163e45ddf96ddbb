/* SPDX-License-Identifier: MIT */
/* The layout shared by ipclab's in-kernel tracer (src/trace/bpf/sched.bpf.c)
 * and its user-space half (src/trace/trace.c): the global variables of the
 * BPF object, which both sides see through one shared mapping. Plain __u64
 * fields only, so the BPF target and the host agree on every offset. */
#ifndef IPCLAB_TRACE_SHARED_H
#define IPCLAB_TRACE_SHARED_H

#include <linux/types.h>

#define TR_MAX_SIDES 65		/* MAX_SIDES of include/ipclab/pattern.h */
#define TR_MAX_CPUS 64
#define TR_SYS_NR_BITS 10	/* syscall numbers below 1024 */

/* Where a side's time goes; a side is always in exactly one. */
enum tr_slot { TR_USER, TR_SYS, TR_WOKEN, TR_PREEMPTED, TR_SLEEP, TR_NSLOTS };

/* How a wakeup's latency ended: the CPU it was switched in on had been
 * idle, ran another task, or ran another endpoint (the peer handing over). */
enum tr_wk { TR_WK_IDLE, TR_WK_OTHER, TR_WK_SIDE, TR_NWK };
/* How a wakeup's latency ended, from the task its CPU switched from
 * (prev_pid 0: the idle task; prev_side >= 0: an endpoint) and whether that
 * CPU ran a task when the wakeup chose it: an idle exit only where the CPU
 * was idle at the wakeup; one that ran a task then and is switched in from
 * idle later was not woken onto an idle CPU (TR_NWK: none of the three,
 * plain wakeup latency). */
static inline __u32 tr_wk_kind(int prev_pid, int prev_side, __u64 wake_cpu_busy)
{
	if (prev_pid == 0)
		return wake_cpu_busy ? TR_NWK : TR_WK_IDLE;
	return prev_side >= 0 ? TR_WK_SIDE : TR_WK_OTHER;
}
/* The critical path's slots: the side's own, then its woken time by how it
 * ended (a part of TR_WOKEN, not beside it). */
#define TR_CP_SLOTS (TR_NSLOTS + TR_NWK)
/* The critical path's mode, from the client's state. A round trip is in
 * flight from the client's send (it wakes the server) until it runs with
 * the reply; what follows is held until its next send, kept then (the
 * client's own work between exchanges), or left out if it sleeps until a
 * timer instead (the pacing gap, with its run after the timer up to the
 * send) and the time woken by the timer before it ran (its lateness). */
enum tr_cp_mode { TR_CP_IN, TR_CP_TENT, TR_CP_TIMER, TR_CP_GAP };
/* The path's time exchange by exchange, for the shares' intervals: each
 * exchange's slots (what cp_acc gained since the last send) go into bin
 * (exchange number mod TR_CP_BINS): one exchange a bin up to TR_CP_BINS
 * exchanges, then every TR_CP_BINS-th exchange summed in each. */
#define TR_CP_BINS 256		/* a power of two: the index is masked */
/* The sides' time by slice of their window, for the intervals of the
 * splits that have no exchanges to draw from (stream, fan-in, cycle): the
 * window cut into slices of 2^TR_SL_SHIFT ns, an interval's time into the
 * slices it covers, slice j into bin (j mod TR_SL_BINS): in order up to
 * TR_SL_BINS slices (4.3 s), user space joins neighbours into at most
 * TRACE_SL_BINS. Row i is side i (below TR_SL_SIDES), row TR_SL_SIDES all
 * clients (sides 1..) summed. Slots: the side's own (enum tr_slot), its
 * woken time by how it ended (enum tr_wk), then its woken time after a
 * timer's expiry. */
#define TR_SL_SHIFT 22		/* 4.2 ms */
#define TR_SL_BINS 1024		/* a power of two: the index is masked */
#define TR_SL_SIDES 4
#define TR_SL_ROWS (TR_SL_SIDES + 1)
#define TR_SL_SLOTS (TR_CP_SLOTS + 1)
#define TR_SL_TIMER TR_CP_SLOTS

/* What a side is doing now (TR_PH_RUN splits into user and sys by in_sys). */
enum tr_phase { TR_PH_UNKNOWN, TR_PH_RUN, TR_PH_WOKEN, TR_PH_PREEMPTED, TR_PH_SLEEP };

/* The side's measured window, written by the side itself (0 = not yet). */
struct tr_win {
	__u64 start, end;
};

/* One side's state machine and its sums over its window. */
struct tr_side {
	__u64 t_last;		/* start of the current interval */
	__u64 phase, in_sys, sys_nr, sys_t0, sys_cpu;
	__u64 wake_t, waker_cpu;
	__u64 acc[TR_NSLOTS];	/* ns per slot, clipped to the window */
	__u64 vol_cs, invol_cs;
	__u64 wakeups, wakeups_same_cpu, wakes_sent, migrations, syscalls;
	__u64 cpus_seen;	/* bit per CPU the side ran on in its window */
	__u64 lat_count, lat_sum, lat_min, lat_max;	/* wakeup latency */
	__u64 missed_wakeups;	/* switched in while we thought it slept */
	__u64 unseen_wakeups;	/* ... while a CPU ran what the probes do not see */
	__u64 miss_t0, miss_t1;	/* the last missed wakeup's sleep, not yet explained */
	__u64 wake_pending;	/* woken while still on CPU, about to sleep */
	__u64 run_t;		/* when it was last switched in */
	__u64 waking_t;		/* its last sched_waking, written whatever its phase */
	__u64 raced_wakeups;	/* woken on another CPU while it switched out (see on_switch) */
	/* the machine's share: other tasks that ran on the CPU the side was
	 * runnable on, while it waited (tr_taker per task), and interrupts
	 * that ran while it was on its CPU */
	__u64 wait_cpu;		/* 1 + the CPU whose runqueue it waits on; 0 none */
	__u64 wait_t;		/* since when */
	__u64 taken_ns, taken_woken_ns;	/* others ran while it waited (woken: after a wakeup) */
	__u64 taken_unnamed_ns;	/* of taken_ns, by tasks the takers table had no room for */
	__u64 irq_ns, softirq_ns;	/* in interrupt handlers, softirqs, while it ran */
	__u64 timer_woken;	/* its current wakeup came from a timer's expiry */
	__u64 wk[TR_NWK];	/* woken ns, by how the wakeup ended */
	__u64 wk_timer;		/* woken ns after a timer's expiry */
	__u64 timer_wakeups;	/* wakeups from a timer's expiry */
	__u64 cp_wpend;		/* woken ns on the critical path, its end not yet seen */
	__u64 wake_cpu_busy;	/* at its wakeup the CPU chosen ran a task (not idle) */
};

/* Every global of the BPF object, in its .bss: one struct, so that both
 * sides agree on where each member lies. */
struct tr_globals {
	struct tr_win wins[TR_MAX_SIDES];
	struct tr_side sides[TR_MAX_SIDES];
	__u64 cp_on;			/* one client: follow the critical path */
	__u64 cp_owner;			/* 1 + the side the round trip waits on; 0 none yet */
	__u64 cp_acc[2][TR_CP_SLOTS];	/* [server, client][slot], in the client's window */
	__u64 cp_mode;			/* enum tr_cp_mode */
	__u64 cp_tent[2][TR_CP_SLOTS];	/* ... between exchanges, held until the next send */
	__u64 cp_gap;			/* left out: the client's pacing (asleep until a timer,
					 * then on to its send) */
	__u64 cp_late;			/* left out: the client woken by a timer, not yet running */
	__u64 in_timer[TR_MAX_CPUS];	/* the CPU runs a timer's expiry now */
	__u64 cp_send_t, cp_reply_t;	/* the client's last send, and its run with the reply */
	__u64 cp_send_paced;		/* ... that send came after its pacing timer */
	__u64 cp_paced;			/* the client paces its sends (--rate, with marks) */
	__u64 mk_t0, mk_t1, mk_seq;	/* the client's last round trip as it timed it (a
					 * ping-pong's, stored by user space), and a count */
	__u64 mk_used;			/* mk_seq when last read */
	__u64 ipis[TR_MAX_CPUS];	/* IPIs sent to each CPU, in the server's window */
	__u64 idle_exits[TR_MAX_CPUS];	/* each CPU left its idle task, same window */
	__u64 lost_syscalls;		/* (side, syscall) pairs the table had no room for */
	__u64 ev_lost;			/* --trace=events: records the ring buffer had no room for */
	__u64 nsides;			/* the sides traced */
	__u64 on_since[TR_MAX_CPUS];	/* the running task of each CPU, since */
	__u64 nwait[TR_MAX_CPUS];	/* sides waiting on each CPU's runqueue */
	__u64 irq_t0[TR_MAX_CPUS], irq_side[TR_MAX_CPUS];	/* a handler's start; 1 + the side it interrupted */
	__u64 sirq_t0[TR_MAX_CPUS], sirq_side[TR_MAX_CPUS];	/* the same for softirqs */
	/* Each CPU's switches form a chain (a switch's prev is the last one's
	 * next) unless a task runs whose events the probes never get: the
	 * kernel can keep a task out of tracing. A broken chain marks the time
	 * since the CPU's last switch seen as unseen. */
	__u64 cpu_next[TR_MAX_CPUS];	/* 1 + the tid the last switch seen switched in */
	__u64 cpu_next_t[TR_MAX_CPUS];	/* ... when */
	__u64 unseen_t0[TR_MAX_CPUS], unseen_t1[TR_MAX_CPUS];	/* its last unseen span */
	__u64 unseen_spans;		/* unseen spans that ended in the server's window */
	__u64 hide_tid;			/* tests: drop every event in this task's context */
	__u64 cp_nx;			/* exchanges closed into cp_bin (a send each) */
	__u64 cp_snap[2][TR_CP_SLOTS];	/* cp_acc at the last send */
	__u64 cp_bin[TR_CP_BINS][2][TR_CP_SLOTS];	/* the exchanges' slots, by exchange mod TR_CP_BINS */
	__u64 cp_bin_n[TR_CP_BINS];	/* exchanges in each bin */
	__u64 cp_bin_meas[TR_CP_BINS];	/* the client's own timing of them (its marks) */
	__u64 cp_bin_nmeas[TR_CP_BINS];	/* ... how many marks */
	__u64 cp_mk_seen;		/* mk_seq at the last bin closed */
	__u64 sl_bin[TR_SL_ROWS][TR_SL_BINS][TR_SL_SLOTS];	/* the sides' slots by slice */
	__u64 sl_full[TR_SL_ROWS][TR_SL_BINS][TR_SL_SLOTS];	/* ... whole slices, as runs:
								 * +1 at a run's first, -1
								 * past its last */
};

/* Per (side << 32 | tid) of another task: the time it ran on the CPU the
 * side waited for, the slices, and its process id and name (the latest). */
#define TR_TAKERS 4096
struct tr_taker {
	__u64 ns, count;
	__u32 tgid, pad;
	char comm[16];
};

/* --trace=events: one record per scheduler event of an endpoint, through
 * the evbuf ring buffer (only in that mode: its programs and its map are
 * left out of the default sums mode). */
enum tr_ev_kind { TR_EV_SWITCH = 1, TR_EV_WAKING, TR_EV_MIGRATE };

struct tr_ev {
	__u64 t;			/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 kind, cpu;		/* the CPU it happened on */
	__u32 a, b, c, d;		/* switch: prev tid, next tid, prev_state, preempt;
					 * waking: waker tid, wakee tid; migrate: tid, dest CPU */
};

/* The wakeup-latency histogram has the layout of struct hist
 * (include/ipclab/metrics.h; trace.c checks that they agree). */
#define TR_HIST_SUB_BITS 7
#define TR_HIST_SUB (1u << TR_HIST_SUB_BITS)
#define TR_HIST_EXACT (2u * TR_HIST_SUB)
#define TR_HIST_MAX_EXP 48
#define TR_HIST_BUCKETS (TR_HIST_EXACT + (TR_HIST_MAX_EXP - TR_HIST_SUB_BITS - 1) * TR_HIST_SUB)

/* Per (side, syscall number): the hash map's value. */
struct tr_sys {
	__u64 count, cpu_ns, wall_ns;
};

#endif
