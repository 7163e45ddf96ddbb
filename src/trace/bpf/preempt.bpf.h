/* SPDX-License-Identifier: MIT */
/* ipclab's in-kernel tracer, the machine's share (included by sched.bpf.c,
 * one object): a side runnable on a CPU's run queue is marked waiting
 * there; every other task that runs on that CPU meanwhile is charged, at
 * its switch away, for the time it ran while the side waited, in the
 * takers table (user space: src/trace/preempt.c). And the interrupt
 * handlers and softirqs that ran while a side was on its CPU. */

/* ---- the machine's share: who ran on the CPU a side waited for ------------- */

static __always_inline __u32 task_cpu(struct task_struct *p)
{
	if (bpf_core_field_exists(p->thread_info.cpu))
		return BPF_CORE_READ(p, thread_info.cpu);
	return BPF_CORE_READ((struct task_struct___cpu *)p, cpu);
}

/* Side i is runnable on cpu's runqueue from t (now, or when it moved there). */
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

/* The woken side is on its CPU's runqueue now (the CPU is chosen). */
SEC("tp_btf/sched_wakeup")
int BPF_PROG(on_wakeup, struct task_struct *p)
{
	int j = side_of((__u32)p->pid);

	if (j >= 0 && !hidden() && sides[j].phase == TR_PH_WOKEN) {
		__u32 c = task_cpu(p);

		/* the CPU chosen runs a task now (its last switch seen put one
		 * in, not the idle task): a later switch-in from idle is no
		 * idle exit of this wakeup */
		if (c < TR_MAX_CPUS)
			sides[j].wake_cpu_busy = G.cpu_next[c] > 1;
		wait_on(j, c, bpf_ktime_get_ns());
	}
	return 0;
}

/* Interrupt handlers and softirqs that ran while a side was on its CPU
 * (a softirq's time includes the handlers that interrupted it). */
static __always_inline void irq_in(int soft)
{
	__u32 cpu = bpf_get_smp_processor_id();
	int i = side_of((__u32)bpf_get_current_pid_tgid());

	if (cpu >= TR_MAX_CPUS || hidden())
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

	if (i < 0 || hidden())
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

	if (i < 0 || hidden())
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
