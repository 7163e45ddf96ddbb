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

/* End side i's current interval at now and add it to its slot. A phase
 * not yet known is what the event that ends it implies, from the window's
 * start when this is the side's first event (a spinner marks its window
 * and runs on until it is first preempted). */
static __always_inline void close_iv(int i, __u64 now, __u64 implied, __u64 implied_sys)
{
	struct tr_side *s = &sides[i];
	__u64 ph = s->phase, slot, d;

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
			if (slot == TR_SYS)
				s->sys_cpu += d;
			if (G.cp_on && G.cp_owner == (__u64)i + 1 && i < 2)
				G.cp_acc[i == 1][slot] += clip(s->t_last, now, &wins[1]);
		}
	}
	s->phase = ph;
	s->t_last = now;
}

/* ---- the machine's share: who ran on the CPU a side waited for ------------- */

static __always_inline __u32 task_cpu(struct task_struct *p)
{
	if (bpf_core_field_exists(p->thread_info.cpu))
		return BPF_CORE_READ(p, thread_info.cpu);
	return BPF_CORE_READ((struct task_struct___cpu *)p, cpu);
}

/* Side i is runnable on cpu's runqueue from now (or from t, moved). */
static __always_inline void wait_on(int i, __u32 cpu, __u64 t)
{
	__u64 c = cpu;

	asm volatile("" : "+r"(c));
	if (c >= TR_MAX_CPUS || sides[i].wait_cpu)
		return;
	sides[i].wait_cpu = c + 1;
	sides[i].wait_t = t;
	__sync_fetch_and_add(&G.nwait[c], 1);
}

static __always_inline void wait_off(int i)
{
	__u64 c = sides[i].wait_cpu;

	sides[i].wait_cpu = 0;
	c -= 1;
	asm volatile("" : "+r"(c));
	if (c < TR_MAX_CPUS)
		__sync_fetch_and_add(&G.nwait[c], -1);
}

/* The other task that ran (tid, process, name), as charge() takes it. */
struct tr_who {
	__u32 tid, tgid;
	char comm[16];
};

/* Side j lost d ns to who. A global function: the verifier checks it once,
 * not once per side of the loop that calls it. */
__attribute__((noinline)) int charge(__u32 side, const struct tr_who *who, __u64 d)
{
	__u64 key, j = side;
	struct tr_taker *v;
	struct tr_side *s;

	asm volatile("" : "+r"(j));	/* keep the check on the register indexed */
	if (!who || j >= TR_MAX_SIDES)
		return 0;
	s = &sides[j];
	key = j << 32 | who->tid;
	v = bpf_map_lookup_elem(&takers, &key);
	if (!v) {
		struct tr_taker z = {};

		bpf_map_update_elem(&takers, &key, &z, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&takers, &key);
	}
	if (v) {
		__sync_fetch_and_add(&v->ns, d);
		__sync_fetch_and_add(&v->count, 1);
		v->tgid = who->tgid;
		__builtin_memcpy(v->comm, who->comm, sizeof(v->comm));
	} else {
		__sync_fetch_and_add(&s->taken_unnamed_ns, d);
	}
	__sync_fetch_and_add(&s->taken_ns, d);
	if (s->phase == TR_PH_WOKEN)
		__sync_fetch_and_add(&s->taken_woken_ns, d);
	return 0;
}

/* Another task, who, ran on cpu from on_since until now: each side that
 * waited there meanwhile lost that time to it. Global too, so that the
 * loop's exits do not each verify the rest of on_switch again. */
__attribute__((noinline)) int charge_others(__u32 cpu, const struct tr_who *who, __u64 now)
{
	__u64 since = G.on_since[cpu & (TR_MAX_CPUS - 1)];

	if (!who)
		return 0;
	for (int j = 0; j < TR_MAX_SIDES; j++) {
		struct tr_side *s = &sides[j];
		__u64 d;

		if ((__u64)j >= G.nsides)
			break;
		if (s->wait_cpu != (__u64)cpu + 1)
			continue;
		d = clip(since > s->wait_t ? since : s->wait_t, now, &wins[j]);
		if (d)
			charge((__u32)j, who, d);
	}
	return 0;
}

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
		}
		sides[i].phase = !vol ? TR_PH_PREEMPTED : sides[i].wake_pending ? TR_PH_WOKEN : TR_PH_SLEEP;
		sides[i].wake_t = now;
		sides[i].wake_pending = 0;
		if (sides[i].phase != TR_PH_SLEEP)
			wait_on(i, cpu, now);	/* still runnable, on this CPU */
	}
	if (j >= 0) {
		struct tr_side *s = &sides[j];
		__u64 ph = s->phase;
		int w = in_win(now, &wins[j]);

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
		} else if (ph == TR_PH_SLEEP && w) {
			s->missed_wakeups++;
		}
		close_iv(j, now, TR_PH_PREEMPTED, 0);
		s->phase = TR_PH_RUN;
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

	if (i >= 0 && in_win(now, &wins[i]))
		sides[i].wakes_sent++;
	if (j < 0)
		return 0;
	if (i >= 0 && i != j)
		close_iv(i, now, TR_PH_RUN, 1);	/* split: the critical path leaves i here */
	sides[j].waker_cpu = bpf_get_smp_processor_id();
	if (in_win(now, &wins[j]))
		sides[j].wakeups++;
	/* j's interval ends here, before the critical path moves to it */
	close_iv(j, now, TR_PH_SLEEP, 0);
	if (G.cp_on && i >= 0 && i != j && j < 2)
		G.cp_owner = (__u64)j + 1;
	if (sides[j].phase == TR_PH_RUN) {
		/* still on its CPU, on its way to sleep (or back from it): the
		 * switch out, if it comes, ends in runnable, not asleep */
		sides[j].wake_pending = 1;
		return 0;
	}
	if (sides[j].phase == TR_PH_SLEEP) {
		sides[j].phase = TR_PH_WOKEN;
		sides[j].wake_t = now;
	}
	return 0;
}

/* The woken side is on its CPU's runqueue now (the CPU is chosen). */
SEC("tp_btf/sched_wakeup")
int BPF_PROG(on_wakeup, struct task_struct *p)
{
	int j = side_of((__u32)p->pid);

	if (j >= 0 && sides[j].phase == TR_PH_WOKEN)
		wait_on(j, task_cpu(p), bpf_ktime_get_ns());
	return 0;
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(on_migrate, struct task_struct *p, int dest_cpu)
{
	int j = side_of((__u32)p->pid);

	if (j >= 0 && in_win(bpf_ktime_get_ns(), &wins[j]))
		__sync_fetch_and_add(&sides[j].migrations, 1);
	if (j >= 0 && sides[j].wait_cpu) {	/* a runnable side moved: it waits there now */
		__u64 t = sides[j].wait_t;

		wait_off(j);
		wait_on(j, (__u32)dest_cpu, t);
	}
	return 0;
}

/* Interrupt handlers and softirqs that ran while a side was on its CPU
 * (a softirq's time includes the handlers that interrupted it). */
static __always_inline void irq_in(int soft)
{
	__u32 cpu = bpf_get_smp_processor_id();
	int i = side_of((__u32)bpf_get_current_pid_tgid());

	if (cpu >= TR_MAX_CPUS)
		return;
	if (soft) {
		G.sirq_side[cpu] = i >= 0 ? (__u64)i + 1 : 0;
		G.sirq_t0[cpu] = bpf_ktime_get_ns();
	} else {
		G.irq_side[cpu] = i >= 0 ? (__u64)i + 1 : 0;
		G.irq_t0[cpu] = bpf_ktime_get_ns();
	}
}

static __always_inline void irq_out(int soft)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u64 w, t0, i;

	if (cpu >= TR_MAX_CPUS)
		return;
	w = soft ? G.sirq_side[cpu] : G.irq_side[cpu];
	t0 = soft ? G.sirq_t0[cpu] : G.irq_t0[cpu];
	if (soft)
		G.sirq_side[cpu] = 0;
	else
		G.irq_side[cpu] = 0;
	i = w - 1;
	asm volatile("" : "+r"(i));
	if (!w || i >= TR_MAX_SIDES)
		return;
	if (soft)
		sides[i].softirq_ns += clip(t0, bpf_ktime_get_ns(), &wins[i]);
	else
		sides[i].irq_ns += clip(t0, bpf_ktime_get_ns(), &wins[i]);
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(on_irq_entry, int irq, struct irqaction *action)
{
	irq_in(0);
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(on_irq_exit, int irq, struct irqaction *action, int ret)
{
	irq_out(0);
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(on_softirq_entry, unsigned int vec_nr)
{
	irq_in(1);
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(on_softirq_exit, unsigned int vec_nr)
{
	irq_out(1);
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(on_sys_enter, struct pt_regs *regs, long id)
{
	int i = side_of((__u32)bpf_get_current_pid_tgid());
	__u64 now;

	if (i < 0)
		return 0;
	now = bpf_ktime_get_ns();
	close_iv(i, now, TR_PH_RUN, 0);
	sides[i].phase = TR_PH_RUN;
	sides[i].wake_pending = 0;
	sides[i].in_sys = 1;
	sides[i].sys_nr = (__u64)id;
	sides[i].sys_t0 = now;
	sides[i].sys_cpu = 0;
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs *regs, long ret)
{
	int i = side_of((__u32)bpf_get_current_pid_tgid());
	struct tr_side *s;
	__u64 now;

	if (i < 0)
		return 0;
	s = &sides[i];
	now = bpf_ktime_get_ns();
	close_iv(i, now, TR_PH_RUN, 1);
	if (s->in_sys && s->sys_t0 && in_win(now, &wins[i])) {
		__u32 key = (__u32)i << TR_SYS_NR_BITS | (__u32)(s->sys_nr & ((1u << TR_SYS_NR_BITS) - 1));
		struct tr_sys *v = bpf_map_lookup_elem(&sysmap, &key);

		s->syscalls++;
		if (!v) {
			struct tr_sys z = {};

			if (bpf_map_update_elem(&sysmap, &key, &z, BPF_NOEXIST) &&
			    !bpf_map_lookup_elem(&sysmap, &key))
				__sync_fetch_and_add(&G.lost_syscalls, 1);
			v = bpf_map_lookup_elem(&sysmap, &key);
		}
		if (v) {
			v->count++;
			v->cpu_ns += s->sys_cpu;
			v->wall_ns += clip(s->sys_t0, now, &wins[i]);
		}
	}
	s->in_sys = 0;
	s->phase = TR_PH_RUN;
	s->wake_pending = 0;
	return 0;
}

SEC("tp_btf/ipi_send_cpu")
int BPF_PROG(on_ipi_cpu, unsigned int cpu, unsigned long callsite, void *callback)
{
	__u64 c = cpu;

	asm volatile("" : "+r"(c));	/* keep the check on the register indexed */
	if (c < TR_MAX_CPUS && in_win(bpf_ktime_get_ns(), &wins[0]))
		__sync_fetch_and_add(&G.ipis[c], 1);
	return 0;
}

SEC("tp_btf/ipi_send_cpumask")
int BPF_PROG(on_ipi_mask, struct cpumask *mask, unsigned long callsite, void *callback)
{
	__u64 bits = 0;

	if (!in_win(bpf_ktime_get_ns(), &wins[0]))
		return 0;
	bpf_probe_read_kernel(&bits, sizeof(bits), mask);
	for (int c = 0; c < TR_MAX_CPUS; c++)
		if (bits & (1ull << c))
			__sync_fetch_and_add(&G.ipis[c], 1);
	return 0;
}

/* ---- --trace=events: a record per event of an endpoint, in its window -------- */
/* These programs are attached beside the ones above only in events mode:
 * the default mode loads neither them nor their ring buffer. A record does
 * not wake the reader (it drains the buffer on its own clock), so that the
 * endpoints pay the record's writing only. */

static __always_inline int ev_wanted(int i, __u64 now)
{
	return i >= 0 && wins[i].start && now >= wins[i].start && (!wins[i].end || now <= wins[i].end);
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
