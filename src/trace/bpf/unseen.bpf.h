/* SPDX-License-Identifier: MIT */
/* Part of ipclab's in-kernel tracer (sched.bpf.c, which includes it after
 * close_iv): what the probes cannot see. The kernel may keep a task out of
 * tracing (no probe runs in its context: its switches, and the interrupts
 * that hit it, timer wakeups among them); each CPU's chain of switches
 * shows where (trace_shared.h, cpu_next). A side switched in with no
 * wakeup seen is a missed wakeup, unless a span the probes did not see
 * overlaps its sleep: then it is an unseen one, counted as lost apart. */
#ifndef IPCLAB_UNSEEN_BPF_H
#define IPCLAB_UNSEEN_BPF_H

/* Tests only: events in the context of G.hide_tid are dropped by every
 * probe, as a kernel that keeps that task out of tracing does. */
static __always_inline int hidden(void)
{
	__u64 h = G.hide_tid;

	return h && (__u32)bpf_get_current_pid_tgid() == (__u32)h;
}

static __always_inline int overlaps(__u64 a0, __u64 a1, __u64 b0, __u64 b1)
{
	return a0 < b1 && b0 < a1;
}

/* An unseen span [t0, t1) has ended: the missed wakeup of a side whose
 * sleep it overlaps was unseen. Global: verified once. */
__noinline int unseen_claim(__u64 t0, __u64 t1)
{
	for (int j = 0; j < TR_MAX_SIDES; j++) {
		struct tr_side *s = &sides[j];

		if ((__u64)j >= G.nsides)
			break;
		if (s->miss_t1 && overlaps(s->miss_t0, s->miss_t1, t0, t1)) {
			s->miss_t1 = 0;
			__sync_fetch_and_add(&s->missed_wakeups, -1);
			__sync_fetch_and_add(&s->unseen_wakeups, 1);
		}
	}
	return 0;
}

/* A switch on cpu from prev to next: a prev that is not the last switch's
 * next ends an unseen span, from that switch until now. */
static __always_inline void chain(__u32 cpu, __u32 prev, __u32 next, __u64 now)
{
	__u64 c = cpu, last;

	asm volatile("" : "+r"(c));	/* keep the check on the register indexed */
	if (c >= TR_MAX_CPUS)
		return;
	last = G.cpu_next[c];
	if (last && last != (__u64)prev + 1) {
		__u64 t0 = G.cpu_next_t[c];

		G.unseen_t0[c] = t0;
		G.unseen_t1[c] = now;
		if (in_win(now, &wins[0]))
			__sync_fetch_and_add(&G.unseen_spans, 1);
		unseen_claim(t0, now);
	}
	G.cpu_next[c] = (__u64)next + 1;
	G.cpu_next_t[c] = now;
}

/* Side j switched in at now with no wakeup seen since it slept at t0:
 * unseen if a CPU's last unseen span overlaps that sleep, else missed
 * (until a span seen to end later overlaps it). */
__noinline int no_wakeup_seen(__u32 j, __u64 t0, __u64 now)
{
	__u64 k = j;
	struct tr_side *s;

	asm volatile("" : "+r"(k));
	if (k >= TR_MAX_SIDES)
		return 0;
	s = &sides[k];
	for (int c = 0; c < TR_MAX_CPUS; c++)
		if (G.unseen_t1[c] && overlaps(t0, now, G.unseen_t0[c], G.unseen_t1[c])) {
			__sync_fetch_and_add(&s->unseen_wakeups, 1);
			return 0;
		}
	s->miss_t0 = t0;
	s->miss_t1 = now;
	__sync_fetch_and_add(&s->missed_wakeups, 1);
	return 0;
}

#endif
