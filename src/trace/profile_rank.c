// SPDX-License-Identifier: MIT
/* --profile, the counting half: each side's samples inside its window,
 * named (profile_sym.c), ranked by the function they were taken in (the
 * top table), and, when asked, written as folded stacks, one line per
 * distinct stack, root first: "main;run_side;...;leaf count". */
#ifdef HAVE_LIBDW

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/util.h"
#include "profile_int.h"

#define MAX_FRAMES 256

struct fn_count {
	const char *sym, *obj;		/* NULL sym: a free slot */
	uint64_t n;
};

struct fn_table {
	struct fn_count *v;
	size_t cap, used;
};

static uint64_t str_hash(const char *s, uint64_t h)
{
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

/* The slot of (sym, obj), taken if new; the table has room. */
static struct fn_count *fn_slot(struct fn_table *t, const char *sym, const char *obj)
{
	size_t i = (size_t)str_hash(obj, str_hash(sym, 14695981039346656037ull)) & (t->cap - 1);

	while (t->v[i].sym && (strcmp(t->v[i].sym, sym) || strcmp(t->v[i].obj, obj)))
		i = (i + 1) & (t->cap - 1);
	if (!t->v[i].sym) {
		t->v[i] = (struct fn_count){ sym, obj, 0 };
		t->used++;
	}
	return &t->v[i];
}

static int fn_add(struct fn_table *t, const char *sym, const char *obj)
{
	if ((t->used + 1) * 2 > t->cap) {
		struct fn_table nt = { .cap = t->cap ? t->cap * 2 : 1024 };

		if (!(nt.v = calloc(nt.cap, sizeof(*nt.v))))
			return -ENOMEM;
		for (size_t i = 0; i < t->cap; i++)
			if (t->v[i].sym)
				fn_slot(&nt, t->v[i].sym, t->v[i].obj)->n = t->v[i].n;
		free(t->v);
		*t = nt;
	}
	fn_slot(t, sym, obj)->n++;
	return 0;
}

static int fn_cmp(const void *a, const void *b)
{
	const struct fn_count *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(x->sym ? x->sym : "", y->sym ? y->sym : "");
}

bool profile_skid_symbol(const char *symbol)
{
	static const char *const points[] = {
		"_raw_spin_unlock_irqrestore", "_raw_spin_unlock_irq", "finish_task_switch",
		"finish_task_switch.isra.0", "__do_softirq", "handle_softirqs", "native_safe_halt",
		"pv_native_safe_halt", "default_idle", "arch_local_irq_restore", "__local_bh_enable_ip",
		"irqentry_exit", "irqentry_exit_to_user_mode", "exit_to_user_mode_prepare",
		"syscall_exit_to_user_mode", "local_bh_enable", "rcu_read_unlock_bh",
	};

	if (!symbol)
		return false;
	for (size_t i = 0; i < sizeof(points) / sizeof(points[0]); i++)
		if (!strcmp(symbol, points[i]))
			return true;
	/* a compiler's clone of one: finish_task_switch.isra.0, .constprop.0 */
	if (!strncmp(symbol, "finish_task_switch.", 19))
		return true;
	return false;
}

/* The side's top functions, from the table. */
static void fn_top(struct fn_table *t, struct profile_side *s)
{
	size_t n = 0;

	for (size_t i = 0; i < t->cap; i++)
		if (t->v[i].sym)
			t->v[n++] = t->v[i];
	if (n)	/* t->v is NULL when the side had no sample */
		qsort(t->v, n, sizeof(*t->v), fn_cmp);
	s->skid_samples = 0;
	for (size_t i = 0; i < n; i++)
		if (profile_skid_symbol(t->v[i].sym))
			s->skid_samples += t->v[i].n;
	for (size_t i = 0; i < n && s->ntop < PROFILE_TOP; i++) {
		struct profile_entry *e = &s->top[s->ntop++];

		snprintf(e->symbol, sizeof(e->symbol), "%s", t->v[i].sym);
		snprintf(e->object, sizeof(e->object), "%s", t->v[i].obj);
		e->samples = t->v[i].n;
		e->skid = profile_skid_symbol(e->symbol);
		e->pct = s->samples ? 100.0 * (double)t->v[i].n / (double)s->samples : 0;
	}
}

struct namer {
	const struct ksyms *k;
	struct usyms *u;
};

static const char *name_of(const struct namer *nm, uint64_t addr, bool kernel, const char **obj)
{
	const char *s = kernel ? ksyms_find(nm->k, addr, obj) : usyms_find(nm->u, addr, obj);

	if (!*obj)
		*obj = "[unknown]";
	return s ? s : "[unknown]";
}

/* A sample's frames, leaf first, as names; a user frame in no mapping
 * (a frame pointer that was not one) ends the walk. */
static size_t sample_frames(const struct namer *nm, const uint64_t *ips, uint64_t nr,
			    const char **out)
{
	bool kernel = false, first = true;
	size_t n = 0;

	for (uint64_t i = 0; i < nr && n < MAX_FRAMES; i++) {
		const char *obj;
		uint64_t a = ips[i];

		if (a >= (uint64_t)PERF_CONTEXT_MAX) {
			kernel = a == (uint64_t)PERF_CONTEXT_KERNEL;
			continue;
		}
		out[n] = name_of(nm, first ? a : a - 1, kernel, &obj);
		first = false;
		if (!kernel && !strcmp(obj, "[unknown]"))
			break;
		n++;
	}
	return n;
}

struct lines {
	char **v;
	size_t n, cap;
};

static int line_add(struct lines *l, const char **frames, size_t n)
{
	size_t len = 1;
	char *s, *at;

	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		len += strlen(frames[i]) + 1;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 1024;
		char **v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	if (!(s = malloc(len)))
		return -ENOMEM;
	at = s;
	for (size_t i = n; i-- > 0;) {	/* root first */
		size_t fl = strlen(frames[i]);

		memcpy(at, frames[i], fl);
		at += fl;
		*at++ = i ? ';' : '\0';
	}
	l->v[l->n++] = s;
	return 0;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Into --profile DIR by its descriptor, whole or not at all. */
static int write_folded(struct lines *l, const struct outdir *d, const char *name, char *err,
			size_t len)
{
	struct outfile of;
	int ret = outfile_open(&of, d, name, err, len);

	if (ret)
		return ret;
	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), str_cmp);
	for (size_t i = 0, j; i < l->n; i = j) {
		for (j = i + 1; j < l->n && !strcmp(l->v[i], l->v[j]); j++)
			;
		fprintf(of.f, "%s %zu\n", l->v[i], j - i);
	}
	return outfile_commit(&of, err, len);
}

static void lines_free(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

/* One side: its table row and, with lines, its stacks. */
static int rank_side(const struct prof_side *ps, const struct namer *nm, struct profile_side *s,
		     struct lines *l)
{
	struct fn_table t = { 0 };
	const char *frames[MAX_FRAMES];
	int ret = 0;

	for (size_t at = 0; !ret && at + 4 <= ps->store.len; at += 4 + ps->store.w[at + 3]) {
		const uint64_t *w = ps->store.w + at;
		bool kernel = (w[1] & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
		const char *obj, *sym;

		if (w[0] < ps->win0 || w[0] > ps->win1)
			continue;
		s->samples++;
		s->kernel_samples += kernel;
		sym = name_of(nm, w[2], kernel, &obj);
		ret = fn_add(&t, sym, obj);
		if (!ret && l)
			ret = line_add(l, frames, sample_frames(nm, w + 4, w[3], frames));
	}
	if (!ret)
		fn_top(&t, s);
	free(t.v);
	return ret;
}

static int collect_side(struct profile *p, unsigned i, struct namer *nm, const char *name,
			struct profile_result *r, char *err, size_t len)
{
	struct prof_side *ps = &p->sides[i];
	struct profile_side *s = &r->sides[i];
	struct lines l = { 0 };
	char file[256];
	int ret;

	s->server = i == 0;
	s->id = i ? i - 1 : 0;
	ret = rank_side(ps, nm, s, p->dir[0] ? &l : NULL);
	if (ret)
		ret = errf(err, len, -ret, "--profile: out of memory ranking the samples");
	else if (p->dir[0]) {
		if (i)
			snprintf(file, sizeof(file), "%s-client%u.folded", name, i - 1);
		else
			snprintf(file, sizeof(file), "%s-server.folded", name);
		ret = write_folded(&l, &p->od, file, err, len);
	}
	lines_free(&l);
	return ret;
}

int profile_collect(struct profile *p, const char *name, struct profile_result *r,
		    char *err, size_t len)
{
	struct namer nm = { 0 };
	int ret = 0, upid = 0;

	memset(r, 0, sizeof(*r));
	if (!p)
		return 0;
	profile_stop(p);
	r->on = true;
	r->nsides = p->nsides;
	r->hz = PROFILE_HZ;
	nm.k = ksyms_load(r->kernel_symbols_why, sizeof(r->kernel_symbols_why));
	r->kernel_symbols = nm.k != NULL;
	for (unsigned i = 0; !ret && i < p->nsides; i++) {
		if (!nm.u || upid != p->sides[i].pid) {	/* thread sides share one process */
			usyms_close(nm.u);
			upid = p->sides[i].pid;
			nm.u = usyms_open(upid, p->sides[i].maps, p->sides[i].maps_len);
		}
		ret = collect_side(p, i, &nm, name, r, err, len);
	}
	usyms_close(nm.u);
	ksyms_free((struct ksyms *)nm.k);
	r->lost_samples = p->lost;
	r->folded = !ret && p->dir[0];
	snprintf(r->folded_dir, sizeof(r->folded_dir), "%s", p->dir);
	snprintf(r->folded_name, sizeof(r->folded_name), "%s", r->folded ? name : "");
	return ret;
}

#endif /* HAVE_LIBDW */
