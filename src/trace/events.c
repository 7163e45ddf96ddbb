// SPDX-License-Identifier: MIT
/* --trace=events: the scheduler's view of each traced cell as Chrome
 * trace-event JSON, the format ui.perfetto.dev and chrome://tracing load
 * ({"traceEvents": [...]}, times in microseconds). A cell is a process;
 * each endpoint thread a thread of it, cut into complete slices ("X") of
 * its state -- running (on which CPU), runnable after a wakeup, runnable
 * after a preemption, sleeping -- that do not overlap and cover the span;
 * a wakeup of one endpoint by another is a flow arrow ("s" on the waker
 * when it wakes, "f" on the wakee when it runs); a migration an instant
 * event; the pattern's timed messages async slices ("b"/"e") beside.
 *
 * The state machine is the in-kernel one's (src/trace/bpf/sched.bpf.c),
 * replayed on the records: a switch out is preempted when the task was
 * still runnable, else asleep -- or woken, when a waking came while it was
 * still on its CPU. Before a thread's first record its state is what that
 * record implies (running before a switch out, asleep before a waking). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "events_int.h"

struct trace_events {
	FILE *f;
	struct trace_events_opts o;
	bool first;			/* no event written yet */
	bool have_origin;
	uint64_t origin;		/* the first span's start: ts 0 */
	unsigned next_pid;
};

enum tev_state { ST_UNKNOWN, ST_RUN, ST_WOKEN, ST_PREEMPTED, ST_SLEEP };

static const char *const state_name[] = {
	[ST_UNKNOWN] = "no event", [ST_RUN] = "running", [ST_WOKEN] = "runnable (woken)",
	[ST_PREEMPTED] = "runnable (preempted)", [ST_SLEEP] = "sleeping",
};

struct tside {
	enum tev_state st;
	uint64_t since;
	uint32_t cpu;
	bool wake_pending;		/* woken while still on its CPU */
	bool seen;			/* a record of it came */
	int flow_from;			/* a wakeup by side flow_from waits for the switch in */
	uint64_t flow_t;
};

/* The cell being written. */
struct tw {
	struct trace_events *ev;
	const struct tev_cell *c;
	unsigned pid;
	uint64_t s, e;			/* the span */
	uint64_t flows;
	struct tev_stats *st;
	struct tside *sd;
};

const struct trace_events_opts *tev_opts(const struct trace_events *ev)
{
	return &ev->o;
}

int trace_events_begin(FILE *f, const struct trace_events_opts *o, struct trace_events **out)
{
	struct trace_events *ev = calloc(1, sizeof(*ev));

	*out = NULL;
	if (!ev)
		return -ENOMEM;
	ev->f = f;
	ev->o = *o;
	if (!ev->o.span_ns && !ev->o.max_events)
		ev->o.span_ns = TRACE_EVENTS_SPAN_NS;
	ev->first = true;
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", f);
	*out = ev;
	return 0;
}

int trace_events_end(struct trace_events *ev)
{
	int ret;

	if (!ev)
		return 0;
	fputs("\n],\"otherData\":{\"generator\":\"ipclab --trace=events\",\"clock\":\"CLOCK_MONOTONIC\"}}\n",
	      ev->f);
	ret = fflush(ev->f) || ferror(ev->f) ? -EIO : 0;
	free(ev);
	return ret;
}

/* ---- writing ---------------------------------------------------------------- */

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20 || ch >= 0x7f)
			fprintf(f, "\\u%04x", ch < 0x20 ? ch : '?');
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

/* "ts":12.345 -- microseconds from the origin, to the nanosecond */
static void put_ts(struct tw *w, const char *key, uint64_t ns)
{
	uint64_t d = ns > w->ev->origin ? ns - w->ev->origin : 0;

	fprintf(w->ev->f, "\"%s\":%" PRIu64 ".%03" PRIu64, key, d / 1000, d % 1000);
}

static void head(struct tw *w, const char *ph, const char *name, unsigned tid)
{
	fputs(w->ev->first ? "\n{" : ",\n{", w->ev->f);
	w->ev->first = false;
	fprintf(w->ev->f, "\"ph\":\"%s\",\"pid\":%u,\"tid\":%u,\"name\":", ph, w->pid, tid);
	json_str(w->ev->f, name);
	w->st->written++;
}

static unsigned tid_of(const struct tw *w, unsigned side)
{
	return (unsigned)w->c->tids[side];
}

static void slice(struct tw *w, unsigned side, enum tev_state st, uint64_t t0, uint64_t t1)
{
	uint64_t a = t0 > w->s ? t0 : w->s, b = t1 < w->e ? t1 : w->e;

	if (b <= a)
		return;
	head(w, "X", state_name[st], tid_of(w, side));
	fputs(",\"cat\":\"sched\",", w->ev->f);
	put_ts(w, "ts", a);
	fprintf(w->ev->f, ",\"dur\":%" PRIu64 ".%03" PRIu64, (b - a) / 1000, (b - a) % 1000);
	if (st == ST_RUN)
		fprintf(w->ev->f, ",\"args\":{\"cpu\":%u}}", w->sd[side].cpu);
	else
		fputc('}', w->ev->f);
}

/* Side i leaves its state at t for st. */
static void enter(struct tw *w, unsigned i, enum tev_state st, uint64_t t)
{
	slice(w, i, w->sd[i].st, w->sd[i].since, t);
	w->sd[i].st = st;
	w->sd[i].since = t;
}

static int side_of(const struct tw *w, uint32_t tid)
{
	for (unsigned i = 0; i < w->c->nsides; i++)
		if (w->c->tids[i] > 0 && (uint32_t)w->c->tids[i] == tid)
			return (int)i;
	return -1;
}

static bool in_span(const struct tw *w, uint64_t t)
{
	return t >= w->s && t <= w->e;
}

/* The arrow of a wakeup, once the wakee runs: waker at the waking, wakee
 * just inside its running slice. */
static void flow(struct tw *w, unsigned j, uint64_t t_run)
{
	struct tside *s = &w->sd[j];

	if (s->flow_from < 0 || !in_span(w, s->flow_t) || !in_span(w, t_run + 1)) {
		s->flow_from = -1;
		return;
	}
	w->flows++;
	head(w, "s", "wakeup", tid_of(w, (unsigned)s->flow_from));
	fprintf(w->ev->f, ",\"cat\":\"wakeup\",\"id\":%" PRIu64 ",", w->flows);
	put_ts(w, "ts", s->flow_t);
	fputc('}', w->ev->f);
	head(w, "f", "wakeup", tid_of(w, j));
	fprintf(w->ev->f, ",\"cat\":\"wakeup\",\"bp\":\"e\",\"id\":%" PRIu64 ",", w->flows);
	put_ts(w, "ts", t_run + 1);
	fputc('}', w->ev->f);
	s->flow_from = -1;
}

static void on_switch(struct tw *w, const struct tev_rec *r)
{
	int i = side_of(w, r->a), j = side_of(w, r->b);

	if (i >= 0) {
		struct tside *s = &w->sd[i];
		bool vol = !r->d && r->c != 0;	/* not preempted, not TASK_RUNNING */

		if (s->st == ST_UNKNOWN || !s->seen) {	/* it ran before this */
			s->st = ST_RUN;
			s->cpu = r->cpu;
		}
		s->seen = true;
		enter(w, (unsigned)i, !vol ? ST_PREEMPTED : s->wake_pending ? ST_WOKEN : ST_SLEEP, r->t);
		s->wake_pending = false;
	}
	if (j >= 0) {
		struct tside *s = &w->sd[j];

		if (!s->seen)		/* waiting for a CPU before this */
			s->st = ST_PREEMPTED;
		s->seen = true;
		enter(w, (unsigned)j, ST_RUN, r->t);
		s->cpu = r->cpu;
		flow(w, (unsigned)j, r->t);
	}
}

static void on_waking(struct tw *w, const struct tev_rec *r)
{
	int j = side_of(w, r->b), k = side_of(w, r->a);
	struct tside *s;

	if (j < 0)
		return;
	s = &w->sd[j];
	if (!s->seen)
		s->st = ST_SLEEP;
	s->seen = true;
	if (s->st == ST_RUN) {
		s->wake_pending = true;
		return;
	}
	if (s->st == ST_SLEEP)
		enter(w, (unsigned)j, ST_WOKEN, r->t);
	if (k >= 0 && k != j) {
		s->flow_from = k;
		s->flow_t = r->t;
	}
}

static void on_migrate(struct tw *w, const struct tev_rec *r)
{
	int j = side_of(w, r->a);
	char name[48];

	if (j < 0 || !in_span(w, r->t))
		return;
	snprintf(name, sizeof(name), "migrate to CPU %u", r->b);
	head(w, "i", name, tid_of(w, (unsigned)j));
	fputs(",\"cat\":\"sched\",\"s\":\"t\",", w->ev->f);
	put_ts(w, "ts", r->t);
	fputc('}', w->ev->f);
}

/* ---- the span, the marks, the metadata -------------------------------------------- */

static void span_of(struct tw *w)
{
	const struct tev_cell *c = w->c;
	const struct trace_events_opts *o = &w->ev->o;
	uint64_t ws = UINT64_MAX, we = 0;

	for (unsigned i = 0; i < c->nsides; i++) {
		if (c->win_start[i] && c->win_start[i] < ws)
			ws = c->win_start[i];
		if (c->win_end[i] > we)
			we = c->win_end[i];
	}
	if (!we && c->nev)
		we = c->ev[c->nev - 1].t;
	if (ws == UINT64_MAX)
		ws = c->nev ? c->ev[0].t : we;
	w->e = we;
	if (o->max_events)
		w->s = c->nev > o->max_events ? c->ev[c->nev - o->max_events].t : ws;
	else
		w->s = we > ws + o->span_ns ? we - o->span_ns : ws;
	if (w->s < ws)
		w->s = ws;
}

static void marks(struct tw *w, unsigned i)
{
	const struct tev_marks *m = w->c->marks ? w->c->marks[i] : NULL;
	uint64_t n = m ? atomic_load(&m->n) : 0, k = n > TEV_MARKS ? n - TEV_MARKS : 0;

	for (; k < n; k++) {
		const struct tev_mark *x = &m->m[k % TEV_MARKS];
		uint64_t a = x->t0 > w->s ? x->t0 : w->s, b = x->t1 < w->e ? x->t1 : w->e;

		if (x->t1 < x->t0 || b < a)
			continue;
		for (int end = 0; end < 2; end++) {
			head(w, end ? "e" : "b", w->c->mark_name ? w->c->mark_name : "message", tid_of(w, i));
			fprintf(w->ev->f, ",\"cat\":\"msg\",\"id2\":{\"local\":\"0x%x%08" PRIx64 "\"},", i, k);
			put_ts(w, "ts", end ? b : a);
			if (!end)
				fprintf(w->ev->f, ",\"args\":{\"ns\":%" PRIu64 "}", x->t1 - x->t0);
			fputc('}', w->ev->f);
		}
	}
}

static void metadata(struct tw *w)
{
	head(w, "M", "process_name", 0);
	fputs(",\"args\":{\"name\":", w->ev->f);
	json_str(w->ev->f, w->c->name);
	fprintf(w->ev->f, ",\"span_ns\":%" PRIu64 ",", w->e - w->s);
	put_ts(w, "span_start_us", w->s);
	fputs("}}", w->ev->f);
	head(w, "M", "process_sort_index", 0);
	fprintf(w->ev->f, ",\"args\":{\"sort_index\":%u}}", w->pid);
	for (unsigned i = 0; i < w->c->nsides; i++) {
		char name[32];

		if (i)
			snprintf(name, sizeof(name), "client %u", i - 1);
		else
			snprintf(name, sizeof(name), "server");
		head(w, "M", "thread_name", tid_of(w, i));
		fputs(",\"args\":{\"name\":", w->ev->f);
		json_str(w->ev->f, name);
		fputs("}}", w->ev->f);
	}
}

int tev_write_cell(struct trace_events *ev, const struct tev_cell *c, unsigned *pid,
		   struct tev_stats *st)
{
	struct tw w = { .ev = ev, .c = c, .pid = ++ev->next_pid, .st = st };

	memset(st, 0, sizeof(*st));
	*pid = w.pid;
	w.sd = calloc(c->nsides ? c->nsides : 1, sizeof(*w.sd));
	if (!w.sd)
		return -ENOMEM;
	span_of(&w);
	if (!ev->have_origin) {
		ev->origin = w.s;
		ev->have_origin = true;
	}
	st->span_ns = w.e - w.s;
	metadata(&w);
	for (unsigned i = 0; i < c->nsides; i++)
		w.sd[i] = (struct tside){ .st = ST_UNKNOWN, .since = w.s, .flow_from = -1 };
	for (size_t k = 0; k < c->nev && c->ev[k].t <= w.e; k++) {
		const struct tev_rec *r = &c->ev[k];

		if (r->kind == TEV_SWITCH)
			on_switch(&w, r);
		else if (r->kind == TEV_WAKING)
			on_waking(&w, r);
		else if (r->kind == TEV_MIGRATE)
			on_migrate(&w, r);
	}
	for (unsigned i = 0; i < c->nsides; i++) {
		if (c->tids[i] <= 0)
			continue;
		slice(&w, i, w.sd[i].st, w.sd[i].since, w.e);
		marks(&w, i);
	}
	free(w.sd);
	return ferror(ev->f) ? -EIO : 0;
}
