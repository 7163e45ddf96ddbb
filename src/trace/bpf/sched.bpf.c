// SPDX-License-Identifier: MIT
/* ipclab's in-kernel tracer: a state machine per endpoint thread, fed by the
 * scheduler's and the syscall layer's tracepoints, that sums where each
 * side's time goes (user, kernel, runnable after a wakeup, preempted,
 * sleeping) over the side's own measured window, counts switches, wakeups,
 * migrations and syscalls, and fills a wakeup-latency histogram. Nothing is
 * recorded per event: user space reads the sums once, after the cell.
 *
 * The window comes from the sides themselves (wins[], a shared mapping they
 * store into without a syscall); every interval is clipped to it, so a sleep
 * that began before the window counts only from the window's start. */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "../trace_shared.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Only the fields read here; CO-RE finds their offsets in the kernel's BTF. */
struct thread_info {
	unsigned int cpu;
} __attribute__((preserve_access_index));
struct task_struct {
	struct thread_info thread_info;
	int pid, tgid;
	char comm[16];
} __attribute__((preserve_access_index));
struct task_struct___cpu {	/* kernels before 5.16 keep the CPU in the task */
	unsigned int cpu;
} __attribute__((preserve_access_index));
struct cpumask;
struct pt_regs;
struct irqaction;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 2 * TR_MAX_SIDES);
	__type(key, __u32);	/* tid */
	__type(value, __u32);	/* side index */
} tids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);	/* resized before load */
	__type(key, __u32);	/* side << TR_SYS_NR_BITS | syscall number */
	__type(value, struct tr_sys);
} sysmap SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TR_MAX_SIDES * TR_HIST_BUCKETS);
	__type(key, __u32);
	__type(value, __u64);
} whist SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TR_TAKERS);
	__type(key, __u64);	/* side << 32 | tid of the other task */
	__type(value, struct tr_taker);
} takers SEC(".maps");

/* --trace=events only (user space leaves it out otherwise); resized before load */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 23);
} evbuf SEC(".maps");

/* Shared with user space through libbpf's mapping of .bss. */
struct tr_globals G;
#define wins G.wins
#define sides G.sides

static __always_inline __u64 clip(__u64 a, __u64 b, const struct tr_win *w)
{
	__u64 s = w->start, e = w->end ? w->end : ~0ull;

	if (!s)
		return 0;
	if (a < s)
		a = s;
	if (b > e)
		b = e;
	return b > a ? b - a : 0;
}

static __always_inline int in_win(__u64 t, const struct tr_win *w)
{
	return w->start && t >= w->start && (!w->end || t < w->end);
}

static __always_inline int side_of(__u32 tid)
{
	__u32 *v = bpf_map_lookup_elem(&tids, &tid);

	return v && *v < TR_MAX_SIDES ? (int)*v : -1;
}

static __always_inline __u32 ilog2(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1)
		r += 1;
	return r;
}

/* struct hist's bucket of v (include/ipclab/metrics.h, hist_index). */
static __always_inline __u32 hist_bucket(__u64 v)
{
	__u32 e;

	if (v < TR_HIST_EXACT)
		return (__u32)v;
	e = ilog2(v);
	if (e >= TR_HIST_MAX_EXP)
		return TR_HIST_BUCKETS - 1;
	return TR_HIST_EXACT + (e - TR_HIST_SUB_BITS - 1) * TR_HIST_SUB +
	       (__u32)((v >> (e - TR_HIST_SUB_BITS)) & (TR_HIST_SUB - 1));
}

/* Path time d of side k (0 server, 1 client) in slot: into the round trip,
 * or held while the client sleeps, or left out as the timer's lateness. */
static __always_inline void cp_add(int k, __u64 slot, __u64 d)
{
	__u64 m = G.cp_mode, *row;

	if (k < 0 || k > 1 || slot >= TR_NSLOTS)
		return;
	if (m == TR_CP_TIMER || m == TR_CP_GAP) {
		if (m == TR_CP_TIMER)
			G.cp_late += d;
		else
			G.cp_gap += d;
		return;
	}
	/* rows picked by a branch, not an index: the verifier keeps the bound */
	if (m == TR_CP_TENT)
		row = k ? G.cp_tent[1] : G.cp_tent[0];
	else
		row = k ? G.cp_acc[1] : G.cp_acc[0];
	row[slot] += d;
	if (slot == TR_WOKEN) {
		if (k)
			sides[1].cp_wpend += d;
		else
			sides[0].cp_wpend += d;
	}
}

/* d into cell (row, bin b, slot) of one of the slices' arrays (an index
 * the verifier can see bounded); several clients may add to the clients'
 * row at once. */
#define SL_CELLS (TR_SL_ROWS * TR_SL_BINS * TR_SL_SLOTS)
static __always_inline void sl_cell(__u64 *base, __u64 row, __u64 b, __u64 slot, __u64 d)
{
	__u64 off = (row * TR_SL_BINS + (b & (TR_SL_BINS - 1))) * TR_SL_SLOTS + slot;

	if (off >= SL_CELLS)
		return;
	if (row == TR_SL_SIDES)
		__sync_fetch_and_add(&base[off], d);
	else
		base[off] += d;
}

/* ... into side i's own row (below TR_SL_SIDES), and a client's into the
 * clients' row */
static __always_inline void sl_put(__u64 *base, __u64 i, __u64 slot, __u64 b, __u64 d)
{
	if (i < TR_SL_SIDES)
		sl_cell(base, i, b, slot, d);
	if (i > 0)
		sl_cell(base, TR_SL_SIDES, b, slot, d);
}

/* Side i's time in slot (TR_SL_SLOTS) over [from, now], clipped to its
 * window, into the slices it covers: the part of its first and last slice
 * into their bins (sl_bin), the whole slices between as a run (sl_full: +1
 * where it starts, -1 past its end, its bins' counts summed in user space;
 * a run of more slices than there are bins adds to all). A function of its
 * own, verified once. */
__noinline int sl_add(__u64 i, __u64 slot, __u64 from, __u64 now)
{
	__u64 *part = &G.sl_bin[0][0][0], *full = &G.sl_full[0][0][0];
	const struct tr_win *w;
	__u64 a, e, ja, je, n, at;

	if (i >= TR_MAX_SIDES || slot >= TR_SL_SLOTS)
		return 0;
	w = &wins[i];
	a = from > w->start ? from : w->start;
	e = w->end && now > w->end ? w->end : now;
	if (!w->start || e <= a)
		return 0;
	ja = (a - w->start) >> TR_SL_SHIFT;
	je = (e - w->start) >> TR_SL_SHIFT;
	if (ja == je) {
		sl_put(part, i, slot, je, e - a);
		return 0;
	}
	sl_put(part, i, slot, ja, w->start + ((ja + 1) << TR_SL_SHIFT) - a);
	sl_put(part, i, slot, je, e - (w->start + (je << TR_SL_SHIFT)));
	n = je - ja - 1;		/* whole slices between */
	if (n >= TR_SL_BINS)
		sl_put(full, i, slot, 0, n / TR_SL_BINS);
	n %= TR_SL_BINS;
	if (!n)
		return 0;
	at = (ja + 1) & (TR_SL_BINS - 1);
	sl_put(full, i, slot, at, 1);
	if (at + n < TR_SL_BINS) {
		sl_put(full, i, slot, at + n, (__u64)-1);
	} else if (at + n > TR_SL_BINS) {
		sl_put(full, i, slot, 0, 1);
		sl_put(full, i, slot, at + n - TR_SL_BINS, (__u64)-1);
	}
	return 0;
}

/* End side i's current interval at now and add it to its slot. A phase
 * not yet known is what the event that ends it implies, from the window's
 * start when this is the side's first event (a spinner marks its window
 * and runs on until it is first preempted). */
/* A function of its own (verified once, not at each of its callers: the
 * object loads in half the time) */
__noinline int close_iv(__u64 i, __u64 now, __u64 implied, __u64 implied_sys)
{
	struct tr_side *s;
	__u64 ph, slot, d;

	if (i >= TR_MAX_SIDES)
		return 0;
	s = &sides[i];
	ph = s->phase;

	if (ph == TR_PH_UNKNOWN) {
		ph = implied;
		s->in_sys = implied_sys;
	}
	{
		slot = ph == TR_PH_RUN ? (s->in_sys ? TR_SYS : TR_USER) :
		       ph == TR_PH_WOKEN ? TR_WOKEN : ph == TR_PH_PREEMPTED ? TR_PREEMPTED : TR_SLEEP;
		d = clip(s->t_last, now, &wins[i]);
		if (slot < TR_NSLOTS) {
			s->acc[slot] += d;
			sl_add(i, slot, s->t_last, now);
			if (slot == TR_SYS)
				s->sys_cpu += d;
			if (G.cp_on && G.cp_owner == i + 1 && i < 2)
				cp_add((int)i, slot, clip(s->t_last, now, &wins[1]));
		}
	}
	s->phase = ph;
	s->t_last = now;
	return 0;
}

#include "cpath.bpf.h"
#include "unseen.bpf.h"	/* what the probes cannot see */

/* Side j's wakeup latency (woken at wake_t, running at now) ended on a CPU
 * that had been idle, running another task, or another endpoint. */
static __always_inline void woken_end(int j, __u64 now, int prev_pid, int prev_side)
{
	struct tr_side *s = &sides[j];
	__u32 k = tr_wk_kind(prev_pid, prev_side, s->wake_cpu_busy);
	__u64 d = clip(s->wake_t, now, &wins[j]);

	if (s->timer_woken) {
		s->wk_timer += d;	/* its own part, not one of the three */
		sl_add((__u64)j, TR_SL_TIMER, s->wake_t, now);
	} else if (k < TR_NWK) {
		s->wk[k] += d;
		sl_add((__u64)j, TR_NSLOTS + k, s->wake_t, now);
	}
	if (k < TR_NWK) {
		if (j < 2 && G.cp_on) {
			if (G.cp_mode == TR_CP_TENT)
				G.cp_tent[j][TR_NSLOTS + k] += s->cp_wpend;
			else if (G.cp_mode == TR_CP_IN)
				G.cp_acc[j][TR_NSLOTS + k] += s->cp_wpend;
		}
	}
	s->cp_wpend = 0;
}

#include "preempt.bpf.h"	/* who took the CPU a side waited for; interrupts */

/* A context switch: the side leaving and the side arriving each change
 * phase (runnable, running, asleep), and a wakeup's latency ends here
 * (one case after another for prev and next). */
SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, _Bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 cpu = bpf_get_smp_processor_id();
	int i = side_of((__u32)prev->pid), j = side_of((__u32)next->pid);

	if (hidden())
		return 0;
	chain(cpu, (__u32)prev->pid, (__u32)next->pid, now);
	if (prev->pid == 0 && cpu < TR_MAX_CPUS && in_win(now, &wins[0]))
		__sync_fetch_and_add(&G.idle_exits[cpu], 1);
	if (cpu < TR_MAX_CPUS) {
		if (i < 0 && prev->pid && G.nwait[cpu]) {
			struct tr_who who = { .tid = (__u32)prev->pid, .tgid = (__u32)prev->tgid };

			bpf_probe_read_kernel(who.comm, sizeof(who.comm), prev->comm);
			charge_others(cpu, &who, now);
		}
		G.on_since[cpu] = now;
	}
	if (i >= 0) {
		int vol = !preempt && prev_state != 0;	/* 0: TASK_RUNNING */

		close_iv(i, now, TR_PH_RUN, 0);
		if (in_win(now, &wins[i])) {
			if (vol)
				sides[i].vol_cs++;
			else
				sides[i].invol_cs++;
		}
		if (vol && G.cp_on && i < 2 && G.cp_owner == (__u64)i + 1) {
			/* the side the round trip waited on blocks: the other one
			 * has what it sent, even if it was not asleep to be woken */
			int o = i == 0 ? 1 : 0;

			close_iv(o, now, TR_PH_PREEMPTED, 0);
			G.cp_owner = (__u64)o + 1;
			if (o == 1)
				cp_to_client(now);
		}
		sides[i].phase = !vol ? TR_PH_PREEMPTED : sides[i].wake_pending ? TR_PH_WOKEN : TR_PH_SLEEP;
		sides[i].wake_t = now;
		sides[i].wake_pending = 0;
		if (sides[i].phase != TR_PH_SLEEP)
			wait_on(i, cpu, now);	/* still runnable, on this CPU */
		sides[i].timer_woken = 0;
		if (i == 1 && G.cp_on && sides[i].phase == TR_PH_SLEEP &&
		    (G.cp_mode == TR_CP_GAP || G.cp_mode == TR_CP_IN)) {
			/* what it sleeps on is known when it is woken: held */
			cp_split(now);
			G.cp_mode = TR_CP_TENT;
		}
	}
	if (j >= 0) {
		struct tr_side *s = &sides[j];
		__u64 ph = s->phase;
		int w = in_win(now, &wins[j]);

		if (j == 1)	/* the path up to here, in its mode before the client runs */
			cp_split(now);
		if (ph == TR_PH_SLEEP && s->waking_t > s->run_t && s->run_t) {
			/* woken on another CPU while it switched out here: that
			 * CPU saw it running and left wake_pending for this
			 * switch out, which had already read it (the two run at
			 * once); its wait to run began when it left its CPU */
			s->phase = ph = TR_PH_WOKEN;
			s->wake_t = s->t_last;
			if (w)
				s->raced_wakeups++;
		}
		if (ph == TR_PH_WOKEN && w && s->wake_t && now >= s->wake_t) {
			__u64 lat = now - s->wake_t;
			__u32 k = (__u32)j * TR_HIST_BUCKETS + hist_bucket(lat);
			__u64 *b = bpf_map_lookup_elem(&whist, &k);

			if (b)
				*b += 1;
			s->lat_count++;
			s->lat_sum += lat;
			if (!s->lat_min || lat < s->lat_min)
				s->lat_min = lat;
			if (lat > s->lat_max)
				s->lat_max = lat;
			if (s->waker_cpu == cpu)
				s->wakeups_same_cpu++;
			woken_end(j, now, prev->pid, i);
		} else if (ph == TR_PH_SLEEP && w) {
			no_wakeup_seen((__u32)j, s->wake_t, now);	/* wake_t: its switch out */
		}
		if (j == 1)
			cp_client_runs(now);
		close_iv(j, now, TR_PH_PREEMPTED, 0);
		s->phase = TR_PH_RUN;
		s->run_t = now;
		wait_off(j);
		if (w && cpu < TR_MAX_CPUS)
			s->cpus_seen |= 1ull << cpu;
	}
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(on_waking, struct task_struct *p)
{
	__u64 now = bpf_ktime_get_ns();
	int i = side_of((__u32)bpf_get_current_pid_tgid()), j = side_of((__u32)p->pid);

	if (hidden())
		return 0;
	if (i >= 0 && in_win(now, &wins[i]))
		sides[i].wakes_sent++;
	__u32 cpu = bpf_get_smp_processor_id();
	int timer = cpu < TR_MAX_CPUS && G.in_timer[cpu & (TR_MAX_CPUS - 1)];

	if (j < 0)
		return 0;
	sides[j].waking_t = now;
	/* the kernel wakes only a task that sleeps: one thought woken (it was
	 * woken on its CPU, found what it waited for without switching out,
	 * and went on to sleep again) was asleep */
	if (sides[j].phase == TR_PH_WOKEN)
		sides[j].phase = TR_PH_SLEEP;
	/* (preempted on its way to sleep, its timer may expire before it runs) */
	if (j == 1 && (sides[j].phase == TR_PH_SLEEP || (timer && sides[j].phase == TR_PH_PREEMPTED)))
		cp_client_woken(now, timer);
	if (i == 1 && j == 0)
		cp_client_sends(now);
	if (i >= 0 && i != j)
		close_iv(i, now, TR_PH_RUN, 1);	/* split: the critical path leaves i here */
	sides[j].waker_cpu = cpu;
	if (in_win(now, &wins[j]))
		sides[j].wakeups++;
	/* j's interval ends here, before the critical path moves to it */
	close_iv(j, now, TR_PH_SLEEP, 0);
	if (G.cp_on && i >= 0 && i != j && j < 2) {
		G.cp_owner = (__u64)j + 1;
		if (j == 1)
			cp_to_client(now);
	}
	if (sides[j].phase == TR_PH_RUN) {
		/* still on its CPU, on its way to sleep (or back from it): the
		 * switch out, if it comes, ends in runnable, not asleep */
		sides[j].wake_pending = 1;
		return 0;
	}
	if (sides[j].phase == TR_PH_SLEEP) {
		sides[j].phase = TR_PH_WOKEN;
		sides[j].wake_t = now;
		sides[j].wake_cpu_busy = 0;	/* sched_wakeup says, once the CPU is chosen */
		sides[j].timer_woken = timer;
		if (timer && in_win(now, &wins[j]))
			sides[j].timer_wakeups++;
	}
	return 0;
}

/* A timer's expiry runs between these two: a wakeup inside it is the
 * timer's (a paced client's, a periodic driver's). */
SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(on_timer_in, void *timer, void *now)
{
	__u32 cpu = bpf_get_smp_processor_id();

	if (cpu < TR_MAX_CPUS && !hidden())
		G.in_timer[cpu & (TR_MAX_CPUS - 1)] = 1;
	return 0;
}

SEC("tp_btf/hrtimer_expire_exit")
int BPF_PROG(on_timer_out, void *timer)
{
	__u32 cpu = bpf_get_smp_processor_id();

	if (cpu < TR_MAX_CPUS && !hidden())
		G.in_timer[cpu & (TR_MAX_CPUS - 1)] = 0;
	return 0;
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(on_migrate, struct task_struct *p, int dest_cpu)
{
	int j = side_of((__u32)p->pid);

	if (hidden())
		return 0;
	if (j >= 0 && in_win(bpf_ktime_get_ns(), &wins[j]))
		__sync_fetch_and_add(&sides[j].migrations, 1);
	/* a runnable side moved: it waits there from now. Not from when it
	 * began to wait: the task running on the new CPU since before the move
	 * would be charged for time the side spent waiting elsewhere, and the
	 * side lose more than it waited. What ran on the old CPU since its
	 * last switch goes uncharged (its task is not known here): the
	 * charges stay within the time the side was runnable. */
	if (j >= 0 && sides[j].wait_cpu) {
		wait_off(j);
		wait_on(j, (__u32)dest_cpu, bpf_ktime_get_ns());
	}
	return 0;
}

/* ---- --trace=events: a record per event of an endpoint, in its window -------- */
/* These programs are attached beside the ones above only in events mode:
 * the default mode loads neither them nor their ring buffer. A record does
 * not wake the reader (it drains the buffer on its own clock), so that the
 * endpoints pay the record's writing only. */

static __always_inline int ev_wanted(int i, __u64 now)
{
	return i >= 0 && !hidden() && wins[i].start && now >= wins[i].start && (!wins[i].end || now <= wins[i].end);
}

static __always_inline void ev_put(__u64 now, __u32 kind, __u32 a, __u32 b, __u32 c, __u32 d)
{
	struct tr_ev *e = bpf_ringbuf_reserve(&evbuf, sizeof(*e), 0);

	if (!e) {
		__sync_fetch_and_add(&G.ev_lost, 1);
		return;
	}
	e->t = now;
	e->kind = kind;
	e->cpu = bpf_get_smp_processor_id();
	e->a = a;
	e->b = b;
	e->c = c;
	e->d = d;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(ev_switch, _Bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();
	int i = side_of((__u32)prev->pid), j = side_of((__u32)next->pid);

	if (ev_wanted(i, now) || ev_wanted(j, now))
		ev_put(now, TR_EV_SWITCH, (__u32)prev->pid, (__u32)next->pid, prev_state, preempt);
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(ev_waking, struct task_struct *p)
{
	__u64 now = bpf_ktime_get_ns();
	int j = side_of((__u32)p->pid);

	if (ev_wanted(j, now))
		ev_put(now, TR_EV_WAKING, (__u32)bpf_get_current_pid_tgid(), (__u32)p->pid, 0, 0);
	return 0;
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(ev_migrate, struct task_struct *p, int dest_cpu)
{
	__u64 now = bpf_ktime_get_ns();
	int j = side_of((__u32)p->pid);

	if (ev_wanted(j, now))
		ev_put(now, TR_EV_MIGRATE, (__u32)p->pid, (__u32)dest_cpu, 0, 0);
	return 0;
}
