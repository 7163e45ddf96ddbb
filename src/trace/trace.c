// SPDX-License-Identifier: MIT
/* --trace, the user-space half: loads ipclab's BPF object (built from
 * src/trace/bpf/sched.bpf.c and linked into the binary), attaches it to the
 * scheduler and syscall tracepoints, hands the sides a shared mapping to mark
 * their windows in, and turns the in-kernel sums into a struct trace_result.
 * docs/trace.md says why in-kernel sums and not a per-event ring buffer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipclab/trace.h"
#include "ipclab/util.h"

#ifndef HAVE_LIBBPF

int trace_check(char *err, size_t len)
{
	snprintf(err, len, "--trace needs libbpf, which this ipclab was built without: "
		 "install libbpf-dev and clang (make deps) and rebuild");
	return -ENOTSUP;
}

int trace_open(const struct trace_target *tt, struct trace **out, char *err, size_t len)
{
	*out = NULL;
	return trace_check(err, len);
}

int trace_add_tid(struct trace *t, unsigned side, int tid)
{
	return -ENOTSUP;
}

void trace_mark(struct trace *t, unsigned side, bool end, uint64_t ns)
{
}

void trace_collect(struct trace *t, uint64_t msgs, double rtt_mean_ns,
		   const struct trace_rusage *ru, struct trace_result *out)
{
	memset(out, 0, sizeof(*out));
}

void trace_close(struct trace *t)
{
}

void trace_msg_mark(struct trace *t, unsigned side, uint64_t t0, uint64_t t1)
{
}

bool trace_marks_on(const struct trace *t)
{
	return false;
}

bool trace_lost_ns(const struct trace *t, unsigned side, uint64_t *ns)
{
	return false;
}

#else /* HAVE_LIBBPF */

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <sys/mman.h>

#include "ipclab/metrics.h"
#include "events_int.h"
#include "preempt.h"
#include "path_int.h"
#include "trace_shared.h"

_Static_assert(TR_HIST_BUCKETS == HIST_BUCKETS && TR_HIST_SUB == HIST_SUB,
	       "the BPF histogram must have struct hist's layout");
_Static_assert(TR_MAX_SIDES == TRACE_MAX_SIDES, "one side limit");

static const char *const sys_names[] = {
#include "sysnames.h"
};

/* The object file, linked in by src/trace/embed.c. */
extern const char trace_bpf_obj[], trace_bpf_obj_end[];

#define TRACE_MAX_LINKS 32
#define EVBUF_BYTES (8u << 20)	/* --trace=events: the ring buffer between two drains */
#define EV_KEEP (2u << 20)	/* records kept: the window's last ones */

struct trace {
	struct bpf_object *obj;
	struct bpf_link *links[TRACE_MAX_LINKS];
	unsigned nlinks, nsides;
	struct tr_globals *g;		/* the object's .bss, shared with the kernel */
	uint64_t *hist;			/* whist, mapped read-only */
	size_t hist_len;
	int tids_fd, sys_fd;
	bool ipis, syscalls, irqs;
	bool rtt_marks;			/* the client's round trips bound the critical path */
	uint64_t misses0;		/* programs' recursion misses at open */
	/* --trace=events */
	struct trace_events *events;
	char name[192];
	const char *mark_name;
	struct tev_recorder *rec;
	struct tev_marks *marks;	/* per side, shared with the sides */
	size_t marks_len;
	int tids[TR_MAX_SIDES];
};

static int quiet_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

int trace_check(char *err, size_t len)
{
	enum { CAP_SYS_ADMIN_ = 21, CAP_PERFMON_ = 38, CAP_BPF_ = 39 };

	if (access("/sys/kernel/btf/vmlinux", R_OK) && errno == ENOENT) {
		snprintf(err, len, "--trace needs the kernel's BTF (/sys/kernel/btf/vmlinux is missing): "
			 "use a kernel built with CONFIG_DEBUG_INFO_BTF=y");
		return -ENOTSUP;
	}
	if (!cap_effective(CAP_SYS_ADMIN_) && !(cap_effective(CAP_BPF_) && cap_effective(CAP_PERFMON_))) {
		snprintf(err, len, "--trace needs CAP_BPF and CAP_PERFMON to load its scheduler probes, "
			 "which this process lacks: run ipclab as root (sudo)");
		return -EPERM;
	}
	return 0;
}

static uint64_t prog_misses(struct bpf_object *obj)
{
	struct bpf_program *p;
	uint64_t n = 0;

	bpf_object__for_each_program(p, obj) {
		struct bpf_prog_info info = {};
		__u32 ilen = sizeof(info);

		if (bpf_program__fd(p) >= 0 &&
		    !bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &ilen))
			n += info.recursion_misses;
	}
	return n;
}

/* Leave out the IPI probes where the kernel has no such tracepoints. */
static bool kernel_has(const struct btf *vm, const char *tp)
{
	char name[64];

	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	return vm && btf__find_by_name_kind(vm, name, BTF_KIND_TYPEDEF) >= 0;
}

/* --trace=events: its ring buffer and programs; the default mode loads
 * neither (not a byte, not an instruction of it). */
static void events_load(struct bpf_object *obj, bool on)
{
	static const char *const progs[] = { "ev_switch", "ev_waking", "ev_migrate" };

	if (on) {
		bpf_map__set_max_entries(bpf_object__find_map_by_name(obj, "evbuf"), EVBUF_BYTES);
		return;
	}
	bpf_map__set_autocreate(bpf_object__find_map_by_name(obj, "evbuf"), false);
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++)
		bpf_program__set_autoload(bpf_object__find_program_by_name(obj, progs[i]), false);
}

static int trace_load(struct trace *t, const struct trace_target *tt, char *err, size_t len)
{
	struct btf *vm = btf__load_vmlinux_btf();
	struct bpf_map *m;
	int ret;

	t->obj = bpf_object__open_mem(trace_bpf_obj, (size_t)(trace_bpf_obj_end - trace_bpf_obj),
				      NULL);
	if (!t->obj) {
		ret = -errno;
		btf__free(vm);
		return errf(err, len, -ret, "--trace: cannot open its BPF object: %s", strerror(-ret));
	}
	t->ipis = kernel_has(vm, "ipi_send_cpu") && kernel_has(vm, "ipi_send_cpumask");
	if (!kernel_has(vm, "hrtimer_expire_entry") || !kernel_has(vm, "hrtimer_expire_exit")) {
		bpf_program__set_autoload(bpf_object__find_program_by_name(t->obj, "on_timer_in"), false);
		bpf_program__set_autoload(bpf_object__find_program_by_name(t->obj, "on_timer_out"), false);
	}
	if (!t->ipis) {
		bpf_program__set_autoload(bpf_object__find_program_by_name(t->obj, "on_ipi_cpu"), false);
		bpf_program__set_autoload(bpf_object__find_program_by_name(t->obj, "on_ipi_mask"), false);
	}
	t->irqs = preempt_load(t->obj, vm);
	btf__free(vm);
	t->syscalls = tt->syscalls;
	if (!t->syscalls) {
		bpf_program__set_autoload(bpf_object__find_program_by_name(t->obj, "on_sys_enter"), false);
		bpf_program__set_autoload(bpf_object__find_program_by_name(t->obj, "on_sys_exit"), false);
	}
	events_load(t->obj, tt->events != NULL);
	bpf_map__set_max_entries(bpf_object__find_map_by_name(t->obj, "sysmap"),
				 tt->syscall_slots ? tt->syscall_slots : 4096);
	bpf_map__set_max_entries(bpf_object__find_map_by_name(t->obj, "whist"),
				 tt->nsides * TR_HIST_BUCKETS);
	ret = bpf_object__load(t->obj);
	if (ret)
		return errf(err, len, -ret, "--trace: the kernel refused its BPF programs: %s%s",
			    strerror(-ret), ret == -EPERM ? " (run ipclab as root)" : "");
	/* map .bss ourselves: one MAP_SHARED mapping that forked sides inherit */
	bpf_object__for_each_map(m, t->obj)
		if (bpf_map__is_internal(m) && strstr(bpf_map__name(m), ".bss")) {
			void *g = mmap(NULL, sizeof(*t->g), PROT_READ | PROT_WRITE, MAP_SHARED,
				       bpf_map__fd(m), 0);

			t->g = g == MAP_FAILED ? NULL : g;
		}
	t->tids_fd = bpf_map__fd(bpf_object__find_map_by_name(t->obj, "tids"));
	t->sys_fd = bpf_map__fd(bpf_object__find_map_by_name(t->obj, "sysmap"));
	t->hist_len = (size_t)tt->nsides * TR_HIST_BUCKETS * sizeof(uint64_t);
	t->hist = mmap(NULL, t->hist_len, PROT_READ, MAP_SHARED,
		       bpf_map__fd(bpf_object__find_map_by_name(t->obj, "whist")), 0);
	if (t->hist == MAP_FAILED) {
		t->hist = NULL;
		return errf(err, len, errno, "--trace: cannot map its histogram: %s", strerror(errno));
	}
	if (!t->g)
		return errf(err, len, EINVAL, "--trace: cannot map the BPF object's globals");
	return 0;
}

static int trace_attach(struct trace *t, char *err, size_t len)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, t->obj) {
		struct bpf_link *l;

		if (!bpf_program__autoload(p))
			continue;
		l = bpf_program__attach(p);
		if (!l || t->nlinks == TRACE_MAX_LINKS) {
			int e = l ? E2BIG : errno;

			bpf_link__destroy(l);
			return errf(err, len, e, "--trace: cannot attach %s: %s",
				    bpf_program__section_name(p), strerror(e));
		}
		t->links[t->nlinks++] = l;
	}
	return 0;
}

/* --trace=events: the sides' marks and the recorder, once attached. */
static int events_open(struct trace *t, const struct trace_target *tt, char *err, size_t len)
{
	const struct trace_events_opts *o = tev_opts(tt->events);
	size_t keep = o->max_events ? (size_t)o->max_events : EV_KEEP;
	void *m;
	int ret;

	t->events = tt->events;
	snprintf(t->name, sizeof(t->name), "%s", tt->name ? tt->name : "cell");
	t->mark_name = tt->mark_name;
	t->marks_len = (size_t)t->nsides * sizeof(struct tev_marks);
	m = mmap(NULL, t->marks_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return errf(err, len, errno, "--trace=events: cannot map the marks: %s", strerror(errno));
	t->marks = m;
	ret = tev_recorder_start(bpf_map__fd(bpf_object__find_map_by_name(t->obj, "evbuf")), keep,
				 &t->rec);
	if (ret)
		return errf(err, len, -ret, "--trace=events: cannot read its ring buffer: %s",
			    strerror(-ret));
	return 0;
}

int trace_open(const struct trace_target *tt, struct trace **out, char *err, size_t len)
{
	struct trace *t;
	int ret;

	*out = NULL;
	if ((ret = trace_check(err, len)))
		return ret;
	if (!tt->nsides || tt->nsides > TR_MAX_SIDES)
		return errf(err, len, EINVAL, "--trace: %u endpoints, at most %u can be traced",
			    tt->nsides, TR_MAX_SIDES);
	t = calloc(1, sizeof(*t));
	if (!t)
		return errf(err, len, ENOMEM, "--trace: out of memory");
	t->nsides = tt->nsides;
	libbpf_set_print(quiet_libbpf);
	ret = trace_load(t, tt, err, len);
	if (!ret)
		ret = trace_attach(t, err, len);
	if (!ret && tt->events)
		ret = events_open(t, tt, err, len);
	if (ret) {
		trace_close(t);
		return ret;
	}
	t->g->cp_on = tt->nsides == 2;
	t->g->nsides = tt->nsides;
	t->g->hide_tid = tt->hide_tid > 0 ? (__u64)tt->hide_tid : 0;
	t->rtt_marks = t->g->cp_on && tt->round_trips;
	t->g->cp_paced = t->rtt_marks && tt->paced;
	t->misses0 = prog_misses(t->obj);
	*out = t;
	return 0;
}

int trace_add_tid(struct trace *t, unsigned side, int tid)
{
	__u32 k = (__u32)tid, v = side;

	if (!t || side >= t->nsides)
		return -EINVAL;
	t->tids[side] = tid;
	return bpf_map_update_elem(t->tids_fd, &k, &v, BPF_ANY) ? -errno : 0;
}

bool trace_marks_on(const struct trace *t)
{
	return t && (t->marks || t->rtt_marks);
}

bool trace_lost_ns(const struct trace *t, unsigned side, uint64_t *ns)
{
	if (!t || side >= t->nsides)
		return false;
	/* charged in the kernel at each other task's switch away: by the time
	 * the side runs again, the wait it just had is in */
	*ns = __atomic_load_n(&t->g->sides[side].taken_ns, __ATOMIC_RELAXED);
	return true;
}

void trace_msg_mark(struct trace *t, unsigned side, uint64_t t0, uint64_t t1)
{
	struct tev_marks *m;
	uint64_t k;

	if (t && t->rtt_marks && side == 1) {
		/* the critical path's bounds for a paced round trip */
		t->g->mk_t0 = t0;
		t->g->mk_t1 = t1;
		__atomic_store_n(&t->g->mk_seq, t->g->mk_seq + 1, __ATOMIC_RELEASE);
	}
	if (!t || !t->marks || side >= t->nsides)
		return;
	m = &t->marks[side];
	k = atomic_load_explicit(&m->n, memory_order_relaxed);
	m->m[k % TEV_MARKS] = (struct tev_mark){ t0, t1 };
	atomic_store_explicit(&m->n, k + 1, memory_order_release);
}

void trace_mark(struct trace *t, unsigned side, bool end, uint64_t ns)
{
	if (!t || side >= t->nsides)
		return;
	if (end)
		__atomic_store_n(&t->g->wins[side].end, ns, __ATOMIC_RELEASE);
	else
		__atomic_store_n(&t->g->wins[side].start, ns, __ATOMIC_RELEASE);
}

static unsigned slot_of(const struct tr_side *s)
{
	switch (s->phase) {
	case TR_PH_RUN: return s->in_sys ? TR_SYS : TR_USER;
	case TR_PH_WOKEN: return TR_WOKEN;
	case TR_PH_PREEMPTED: return TR_PREEMPTED;
	default: return TR_SLEEP;
	}
}

static void syscall_name(unsigned nr, char *buf, size_t len)
{
	if (nr < sizeof(sys_names) / sizeof(sys_names[0]) && sys_names[nr])
		snprintf(buf, len, "%s", sys_names[nr]);
	else
		snprintf(buf, len, "sys_%u", nr);
}

/* The three syscalls that took side i the most CPU time. */
static void collect_syscalls(struct trace *t, unsigned i, struct trace_side *ts)
{
	__u32 key, next, *prev = NULL;
	struct tr_sys v;

	while (!bpf_map_get_next_key(t->sys_fd, prev, &next)) {
		key = next;
		prev = &key;
		if (key >> TR_SYS_NR_BITS != i || bpf_map_lookup_elem(t->sys_fd, &key, &v))
			continue;
		unsigned at = ts->ntop;

		while (at > 0 && ts->top[at - 1].cpu_ns < v.cpu_ns)
			at--;
		if (at >= TRACE_TOP_SYSCALLS)
			continue;
		memmove(&ts->top[at + 1], &ts->top[at],
			(TRACE_TOP_SYSCALLS - 1 - at) * sizeof(ts->top[0]));
		ts->top[at] = (struct trace_syscall){ .count = v.count, .cpu_ns = v.cpu_ns,
						      .wall_ns = v.wall_ns };
		syscall_name(key & ((1u << TR_SYS_NR_BITS) - 1), ts->top[at].name,
			     sizeof(ts->top[at].name));
		if (ts->ntop < TRACE_TOP_SYSCALLS)
			ts->ntop++;
	}
}

static void collect_latency(struct trace *t, unsigned i, const struct tr_side *s,
			    struct trace_side *ts)
{
	struct hist *h = malloc(sizeof(*h));

	ts->lat_count = s->lat_count;
	if (!h || !s->lat_count) {
		free(h);
		return;
	}
	hist_init(h);
	memcpy(h->buckets, t->hist + (size_t)i * TR_HIST_BUCKETS, sizeof(h->buckets));
	h->count = s->lat_count;
	h->sum = (double)s->lat_sum;
	h->min = s->lat_min;
	h->max = s->lat_max;
	ts->lat_min_ns = s->lat_min;
	ts->lat_max_ns = s->lat_max;
	ts->lat_p50_ns = hist_quantile(h, 0.50);
	ts->lat_p99_ns = hist_quantile(h, 0.99);
	free(h);
}

static void collect_side(struct trace *t, unsigned i, struct trace_side *ts, uint64_t *lost,
			 uint64_t *unseen)
{
	const struct tr_side *s = &t->g->sides[i];
	const struct tr_win *w = &t->g->wins[i];
	uint64_t acc[TR_NSLOTS];

	memcpy(acc, s->acc, sizeof(acc));
	/* the interval still open at the window's end (no event after it) */
	if (w->end && s->t_last && s->t_last < w->end && s->phase != TR_PH_UNKNOWN)
		acc[slot_of(s)] += w->end - (s->t_last > w->start ? s->t_last : w->start);
	/* no event at all since its thread id was added: it was on its CPU
	 * then (it went on to mark its window) and never left it, since a
	 * switch out or a wakeup would have been seen: the whole window ran.
	 * (A spinner whose id is added while it runs, before it ever sleeps.) */
	if (w->end > w->start && w->start && !s->t_last && s->phase == TR_PH_UNKNOWN &&
	    !s->vol_cs && !s->invol_cs && !s->wakeups)
		acc[TR_USER] += w->end - w->start;
	*ts = (struct trace_side){
		.server = i == 0, .id = i ? i - 1 : 0,
		.wall_ns = w->end > w->start && w->start ? w->end - w->start : 0,
		.user_ns = acc[TR_USER], .sys_ns = acc[TR_SYS], .runnable_ns = acc[TR_WOKEN],
		.preempted_ns = acc[TR_PREEMPTED], .sleep_ns = acc[TR_SLEEP],
		.vol_cs = s->vol_cs, .invol_cs = s->invol_cs, .wakeups = s->wakeups,
		.wakeups_same_cpu = s->wakeups_same_cpu, .wakes_sent = s->wakes_sent,
		.wakeups_raced = s->raced_wakeups,
		.migrations = s->migrations, .syscalls = s->syscalls, .cpus = s->cpus_seen,
	};
	trace_side_wakeups(s, ts);
	collect_latency(t, i, s, ts);
	collect_syscalls(t, i, ts);
	*lost += s->missed_wakeups;
	*unseen += s->unseen_wakeups;
}

/* --trace=events: the recorder stopped, the cell's timeline written. */
static void events_collect(struct trace *t, struct trace_result *r)
{
	const struct tev_marks *marks[TR_MAX_SIDES];
	uint64_t ws[TR_MAX_SIDES], we[TR_MAX_SIDES];
	struct tev_cell c = { .name = t->name, .mark_name = t->mark_name, .nsides = t->nsides,
			      .tids = t->tids, .win_start = ws, .win_end = we, .marks = marks };
	struct tev_stats st;
	uint64_t dropped;

	tev_recorder_stop(t->rec, &c.ev, &c.nev, &dropped, &r->events.recorded);
	for (unsigned i = 0; i < t->nsides; i++) {
		ws[i] = t->g->wins[i].start;
		we[i] = t->g->wins[i].end;
		marks[i] = &t->marks[i];
	}
	r->events.lost = t->g->ev_lost;
	r->events.on = !tev_write_cell(t->events, &c, &r->events.pid, &st);
	r->events.written = st.written;
	r->events.span_ns = st.span_ns;
	/* records of the span itself missing: the buffer overflowed, or the
	 * store's oldest kept record is inside the span */
	r->events.truncated = t->g->ev_lost || (dropped && c.nev && c.ev[0].t > we[0] - st.span_ns);
	tev_recorder_free(t->rec);
	t->rec = NULL;
}

void trace_collect(struct trace *t, uint64_t msgs, double rtt_mean_ns,
		   const struct trace_rusage *ru, struct trace_result *r)
{
	uint64_t cs = 0, wk = 0, mig = 0, sc = 0, ipi = 0, idle = 0, cpus = 0, lost = 0, unseen = 0;

	memset(r, 0, sizeof(*r));
	if (!t)
		return;
	r->on = true;
	r->nsides = t->nsides;
	for (unsigned i = 0; i < t->nsides; i++) {
		struct trace_side *ts = &r->sides[i];

		collect_side(t, i, ts, &lost, &unseen);
		if (!t->syscalls)
			trace_split_run(ts->user_ns + ts->sys_ns, ru ? &ru[i] : NULL, &ts->user_ns, &ts->sys_ns);
		cs += ts->vol_cs + ts->invol_cs;
		wk += ts->wakeups;
		mig += ts->migrations;
		sc += ts->syscalls;
		cpus |= ts->cpus;
	}
	for (unsigned c = 0; c < TR_MAX_CPUS; c++)
		if (cpus >> c & 1) {
			ipi += t->g->ipis[c];
			idle += t->g->idle_exits[c];
		}
	r->ipis_known = t->ipis;
	preempt_collect(t->obj, t->g, t->irqs, r);
	r->syscalls_traced = t->syscalls;
	if (msgs) {
		double n = (double)msgs;

		r->per_msg.ctx_switches = (double)cs / n;
		r->per_msg.wakeups = (double)wk / n;
		r->per_msg.migrations = (double)mig / n;
		r->per_msg.syscalls = (double)sc / n;
		r->per_msg.ipis = (double)ipi / n;
		r->per_msg.idle_exits = (double)idle / n;
	}
	trace_slices_collect(t->g, t->nsides, t->syscalls, r);
	if (t->g->cp_on && msgs && rtt_mean_ns > 0)
		trace_path_collect(t->g, t->syscalls, msgs, rtt_mean_ns, ru, r);
	r->lost_missed_wakeups = lost;
	r->lost_unseen_wakeups = unseen;
	r->unseen_spans = t->g->unseen_spans;
	r->lost_syscalls = t->g->lost_syscalls;
	r->lost_recursion = prog_misses(t->obj) - t->misses0;
	lost += r->lost_syscalls + r->lost_recursion + unseen;
	r->lost_events = lost;
	r->complete = !lost;
	if (t->rec)
		events_collect(t, r);
}

void trace_close(struct trace *t)
{
	if (!t)
		return;
	tev_recorder_free(t->rec);
	if (t->marks)
		munmap(t->marks, t->marks_len);
	for (unsigned i = 0; i < t->nlinks; i++)
		bpf_link__destroy(t->links[i]);
	if (t->hist)
		munmap(t->hist, t->hist_len);
	if (t->g)
		munmap(t->g, sizeof(*t->g));
	bpf_object__close(t->obj);
	free(t);
}

#endif /* HAVE_LIBBPF */
