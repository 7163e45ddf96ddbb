/* SPDX-License-Identifier: MIT */
/* Part of ipclab's in-kernel tracer (sched.bpf.c, which includes it after
 * close_iv): the one-client round trip's critical path as the client's
 * events move it between its modes (enum tr_cp_mode, trace_shared.h). */
#ifndef IPCLAB_CPATH_BPF_H
#define IPCLAB_CPATH_BPF_H

/* The critical path's owner's interval ended at now (its phase kept), so
 * that what follows is charged in the path's new mode. */
static __always_inline void cp_split(__u64 now)
{
	__u64 o = G.cp_owner;

	if (!G.cp_on || o < 1 || o > 2 || sides[o - 1].phase == TR_PH_UNKNOWN)
		return;
	close_iv((int)o - 1, now, sides[o - 1].phase, sides[o - 1].in_sys);
}

/* The held time between exchanges: kept (the client's own work before
 * its next send), or left out (it was waiting for its pacing timer). */
static __always_inline void cp_settle(int keep)
{
	for (int k = 0; k < 2; k++)
		for (int s = 0; s < TR_CP_SLOTS; s++) {
			if (keep)
				G.cp_acc[k][s] += G.cp_tent[k][s];
			else if (s < TR_NSLOTS)
				G.cp_gap += G.cp_tent[k][s];
			G.cp_tent[k][s] = 0;
		}
}

static __always_inline __u64 take(__u64 *from, __u64 d)
{
	if (d > *from)
		d = *from;
	*from -= d;
	return d;
}

/* The time between two paced exchanges was left out: the client's own
 * timing of the round trip just done (its mark) starts before its send is
 * seen (the write's entry) and ends after it runs with the reply (the
 * read's return); those two runs go back into the path, as kernel time. A
 * send not seen at all (the server was not asleep to be woken) left the
 * whole round trip out: it goes back as on the path, not placed. */
static __always_inline void cp_mark_fix(void)
{
	__u64 seq = *(volatile __u64 *)&G.mk_seq, t0 = G.mk_t0, t1 = G.mk_t1;
	__u64 st = G.cp_send_t, rt = G.cp_reply_t;

	if (seq == G.mk_used || !t0 || t1 <= t0)
		return;
	G.mk_used = seq;
	if (st < t0) {
		G.cp_acc[1][TR_SLEEP] += take(&G.cp_gap, t1 - t0);
		return;
	}
	if (st > t1)
		return;
	if (G.cp_send_paced)
		G.cp_acc[1][TR_SYS] += take(&G.cp_gap, st - t0);
	if (rt >= st && rt <= t1)
		G.cp_acc[1][TR_SYS] += take(&G.cp_gap, t1 - rt);
}

/* The client, asleep, is woken: by a timer between exchanges (its pacing:
 * what was held is left out, what follows until it runs is the timer's
 * lateness), or by anything else (what it slept on was an exchange, sent
 * through something the trace does not see: kept). */
static __always_inline void cp_client_woken(__u64 now, int timer)
{
	__u64 m = G.cp_mode;

	if (!G.cp_on || (m != TR_CP_TENT && m != TR_CP_GAP))
		return;
	cp_split(now);
	if (m == TR_CP_TENT)
		cp_settle(!timer);
	if (m == TR_CP_TENT && timer)
		cp_mark_fix();
	G.cp_mode = timer ? TR_CP_TIMER : TR_CP_IN;
}

/* The exchange before this send is over (its round trip, the client's
 * work held after it, the mark's fix): what cp_acc gained since the last
 * send goes into its bin, with the client's own timing of it (its mark,
 * made before this send). A function of its own (verified once). */
__noinline int cp_close_exchange(void)
{
	__u64 b = G.cp_nx & (TR_CP_BINS - 1), any = 0;
	__u64 seq = *(volatile __u64 *)&G.mk_seq, t0 = G.mk_t0, t1 = G.mk_t1;

	for (int k = 0; k < 2; k++)
		for (int s = 0; s < TR_CP_SLOTS; s++)
			any |= G.cp_acc[k][s] - G.cp_snap[k][s];
	if (!any)
		return 0;
	for (int k = 0; k < 2; k++)
		for (int s = 0; s < TR_CP_SLOTS; s++) {
			G.cp_bin[b][k][s] += G.cp_acc[k][s] - G.cp_snap[k][s];
			G.cp_snap[k][s] = G.cp_acc[k][s];
		}
	G.cp_bin_n[b]++;
	G.cp_nx++;
	if (seq != G.cp_mk_seen && t1 > t0) {
		G.cp_bin_meas[b] += t1 - t0;
		G.cp_bin_nmeas[b]++;
	}
	G.cp_mk_seen = seq;
	return 0;
}

/* The client sends (wakes the server): a round trip starts. A paced
 * client that was behind its schedule sends without sleeping on its timer
 * first: what it did since the last reply (preempted there, on a busy
 * machine) is its pacing all the same, left out as the timer's case is. */
static __always_inline void cp_client_sends(__u64 now)
{
	__u64 m = G.cp_mode;
	int late = m == TR_CP_TENT && G.cp_paced;

	if (!G.cp_on || (m != TR_CP_TENT && m != TR_CP_GAP))
		return;
	cp_split(now);
	if (m == TR_CP_TENT)
		cp_settle(!late);
	if (late)
		cp_mark_fix();
	cp_close_exchange();
	G.cp_mode = TR_CP_IN;
	G.cp_send_t = now;
	G.cp_send_paced = m == TR_CP_GAP || late;
}

/* The path moved to the client (it has the reply): if it is running (it
 * found the reply without sleeping for it), the round trip ends here. */
static __always_inline void cp_to_client(__u64 now)
{
	if (!G.cp_on || G.cp_mode != TR_CP_IN || sides[1].phase != TR_PH_RUN)
		return;
	cp_split(now);
	G.cp_mode = TR_CP_TENT;
	G.cp_reply_t = now;
}

/* The client switched in: with the reply (the path is with it: the round
 * trip ends, whether the reply woke it or found it preempted), or after
 * its timer (on to its send: pacing, left out). */
static __always_inline void cp_client_runs(__u64 now)
{
	__u64 m = G.cp_mode;

	if (!G.cp_on)
		return;
	if (m == TR_CP_TIMER) {
		G.cp_mode = TR_CP_GAP;
	} else if (m == TR_CP_IN && G.cp_owner == 2) {
		G.cp_mode = TR_CP_TENT;
		G.cp_reply_t = now;
	}
}

#endif
