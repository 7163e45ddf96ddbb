// SPDX-License-Identifier: MIT
/* --trace, the machine's share: the BPF side (sched.bpf.c, charge_others)
 * charges each other task that ran on the CPU a side was runnable on,
 * while the side waited for it, in a (side, task) table; here the table is
 * read into each side's top takers, with the task's name made safe to
 * print: a task's name is chosen by whoever runs it (prctl, the file it
 * executed), so it is cut to the kernel's 15 bytes and every byte that is
 * not printable ASCII becomes '?'. */
#include <string.h>

#include "ipclab/trace.h"

#ifdef HAVE_LIBBPF

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "preempt.h"

static bool tp_known(const struct btf *vm, const char *tp)
{
	char name[64];

	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	return vm && btf__find_by_name_kind(vm, name, BTF_KIND_TYPEDEF) >= 0;
}

bool preempt_load(struct bpf_object *obj, const struct btf *vm)
{
	static const char *const tps[] = { "irq_handler_entry", "irq_handler_exit",
					   "softirq_entry", "softirq_exit" };
	static const char *const progs[] = { "on_irq_entry", "on_irq_exit",
					     "on_softirq_entry", "on_softirq_exit" };
	bool all = true;

	for (size_t i = 0; i < sizeof(tps) / sizeof(tps[0]); i++)
		all &= tp_known(vm, tps[i]);
	for (size_t i = 0; !all && i < sizeof(progs) / sizeof(progs[0]); i++)
		bpf_program__set_autoload(bpf_object__find_program_by_name(obj, progs[i]), false);
	return all;
}

/* v into side ts's takers, kept in descending order of time. */
static void take_in(struct trace_side *ts, unsigned tid, const struct tr_taker *v)
{
	unsigned at = ts->ntakers;

	while (at > 0 && ts->takers[at - 1].ns < v->ns)
		at--;
	if (at >= TRACE_TOP_TAKERS)
		return;
	memmove(&ts->takers[at + 1], &ts->takers[at],
		(TRACE_TOP_TAKERS - 1 - at) * sizeof(ts->takers[0]));
	ts->takers[at] = (struct trace_taker){ .pid = v->tgid, .tid = tid, .ns = v->ns,
					       .count = v->count };
	trace_comm_clean(ts->takers[at].comm, sizeof(ts->takers[at].comm), v->comm,
			 sizeof(v->comm));
	if (ts->ntakers < TRACE_TOP_TAKERS)
		ts->ntakers++;
}

void preempt_collect(struct bpf_object *obj, const struct tr_globals *g, bool irqs,
		     struct trace_result *r)
{
	int fd = bpf_map__fd(bpf_object__find_map_by_name(obj, "takers"));
	__u64 key, next, *prev = NULL;
	struct tr_taker v;

	r->irqs_known = irqs;
	for (unsigned i = 0; i < r->nsides && i < TR_MAX_SIDES; i++) {
		struct trace_side *ts = &r->sides[i];

		ts->taken_ns = g->sides[i].taken_ns;
		ts->taken_woken_ns = g->sides[i].taken_woken_ns;
		ts->irq_ns = g->sides[i].irq_ns;
		ts->softirq_ns = g->sides[i].softirq_ns;
	}
	while (fd >= 0 && !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (key >> 32 < r->nsides && !bpf_map_lookup_elem(fd, &key, &v))
			take_in(&r->sides[key >> 32], (unsigned)key, &v);
	}
}

#endif /* HAVE_LIBBPF */

void trace_comm_clean(char *dst, size_t len, const char *src, size_t n)
{
	size_t k = 0;

	if (!len)
		return;
	for (; k < n && k + 1 < len && k < TRACE_COMM_MAX && src[k]; k++)
		dst[k] = src[k] >= 0x20 && src[k] < 0x7f ? src[k] : '?';
	dst[k] = '\0';
}
