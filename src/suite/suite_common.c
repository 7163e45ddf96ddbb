// SPDX-License-Identifier: MIT
/* What the seed sections share (suite_int.h): specs by name, the results a
 * printer wants, and the trace's and profile's readings. */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "suite_int.h"
#include "ipclab/placement.h"
#include "ipclab/runner.h"

/* ---- building specs ---------------------------------------------------------- */

void spec_pattern(struct plan_spec *s, const char *name)
{
	s->pat[0] = pattern_find(name);
	s->npat = s->pat[0] ? 1 : 0;
}

/* Every doubling from lo to hi. */
void spec_sizes(struct plan_spec *s, uint64_t lo, uint64_t hi)
{
	s->nsize = 0;
	for (uint64_t v = lo; v <= hi && s->nsize < PLAN_MAX_LIST; v *= 2)
		s->size[s->nsize++] = v;
}

void spec_thinks(struct plan_spec *s, const uint64_t *t, unsigned n)
{
	memcpy(s->think, t, n * sizeof(*t));
	s->nthink = n;
}

/* Placements by name (resolved to this machine's CPUs); 0 or -EINVAL. */
int spec_pins(struct plan_spec *s, const char *const *names, char *err, size_t errlen)
{
	s->npin = 0;
	for (; *names; names++)
		if (pin_parse(*names, &s->pin[s->npin++], err, errlen))
			return -EINVAL;
	return 0;
}

const struct sched_spec seed_sched_other = { SCHED_OTHER, 0, "other" };
const struct sched_spec seed_sched_fifo90 = { SCHED_FIFO, 90, "fifo:90" };

/* ---- finding results: by their cells --------------------------------------- */

const struct result *seed_cell(const struct seed_cells *c, unsigned spec, const struct plan_pick *k)
{
	long i = spec < c->nspec ? plan_cell_index(&c->spec[spec], k) : -1;

	if (i < 0 || c->first[spec] + (size_t)i >= c->n)
		return NULL;
	return &c->r[c->first[spec] + (size_t)i];
}

int seed_tp(const struct plan_spec *s, const char *name)
{
	const struct transport *tp = transport_find(name);

	for (unsigned i = 0; tp && i < s->ntp; i++)
		if (s->tp[i] == tp)
			return (int)i;
	return -1;
}

bool seed_ok(const struct result *r)
{
	return r && r->status == RES_OK;
}

const char *seed_val(char *buf, size_t len, const struct result *r, double v,
		       const char *(*fmt)(char *, size_t, double))
{
	if (!r)
		return "-";
	if (r->status == RES_SKIPPED)
		return "skipped";
	if (r->status == RES_FAILED)
		return "failed";
	return fmt(buf, len, v);
}

double seed_side_secs(const struct result *r, enum tp_role role)
{
	for (unsigned i = 0; i < r->nsides; i++)
		if (r->sides[i].role == role)
			return (double)r->sides[i].elapsed_ns / 1e9;
	return NAN;
}

/* ---- the trace's and profile's readings (--trace, --profile) ------------------- */

bool seed_traced(const struct result *r)
{
	return seed_ok(r) && r->trace.on;
}

bool seed_any_traced(const struct seed_cells *c)
{
	for (size_t i = 0; i < c->n; i++)
		if (seed_traced(&c->r[i]))
			return true;
	return false;
}

/* The server's (the reader's, in a c2s stream) or a client's trace. */
const struct trace_side *seed_tside(const struct result *r, bool server)
{
	for (unsigned i = 0; seed_traced(r) && i < r->trace.nsides; i++)
		if (r->trace.sides[i].server == server)
			return &r->trace.sides[i];
	return NULL;
}

double seed_pct_of(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* What tracing cost over the section's traced cells, and events lost. */
void seed_trace_cost(const struct seed_cells *c)
{
	const struct result *r = c->r;
	size_t n = c->n;
	double lo = 0, hi = 0;
	unsigned long long lost = 0;
	unsigned k = 0, noise = 0;

	for (size_t i = 0; i < n; i++) {
		double p = r[i].trace.perturbation;

		if (!seed_traced(&r[i]))
			continue;
		lost += r[i].trace.lost_events;
		if (p > 0 && r[i].trace.perturbation_pairs >= 2 && !r[i].trace.perturbation_separable) {
			noise++;
		} else if (p > 0) {
			lo = k && lo < p ? lo : p;
			hi = k && hi > p ? hi : p;
			k++;
		}
	}
	if (k)
		printf("; traced/untraced %.2f-%.2fx over %u cells", lo, hi, k);
	if (noise)
		printf("%s%u cell%s not separable from noise", k ? ", " : "; ", noise,
		       noise == 1 ? "" : "s");
	printf(", %llu events lost.\n", lost);
}

/* The profile's top functions of one side (server or every client)
 * grouped by name: copy, wait (futex, scheduler), syscall entry and the
 * system call's own layers, the wake path; pct of the side's samples. A
 * name starting with '=' matches exactly (libc's wrappers). The sampling
 * clock is a timer, so the wake path's samples land on the lock release
 * that ends it, _raw_spin_unlock_irqrestore (docs/trace.md, Limits). */
enum prof_group seed_prof_group(const char *sym)
{
	static const char *const pat[PG_N - 1][16] = {
		[PG_COPY] = { "memcpy", "memmove", "copy_user", "copy_to", "copy_from", "copy_page",
			      "_copy_", "rep_mov", NULL },
		[PG_WAKE] = { "try_to_wake_up", "ttwu", "wake_up", "select_task_rq", "futex_wake",
			      "_raw_spin_unlock_irqrestore", NULL },
		[PG_WAIT] = { "futex", "schedule", "switch", "sem_", "poll", "pause", "idle", NULL },
		[PG_SYSCALL] = { "entry_SYSCALL", "syscall", "_sys_", "el0_svc", "exit_to_user",
				 "ksys_", "vfs_", "fdget", "=read", "=write", "=__read", "=__write", NULL },
	};
	static const enum prof_group order[] = { PG_COPY, PG_WAKE, PG_WAIT, PG_SYSCALL };

	for (size_t g = 0; g < ARRAY_SIZE(order); g++)
		for (const char *const *p = pat[order[g]]; *p; p++)
			if (**p == '=' ? !strcmp(sym, *p + 1) : !!strstr(sym, *p))
				return order[g];
	return PG_OTHER;
}

/* pct[] of the samples of r's server (server) or clients; the samples. */
uint64_t seed_prof_groups(const struct result *r, bool server, double pct[PG_N])
{
	uint64_t all = 0, in[PG_N] = { 0 };

	memset(pct, 0, PG_N * sizeof(*pct));
	if (!seed_ok(r) || !r->profile.on)
		return 0;
	for (unsigned i = 0; i < r->profile.nsides; i++) {
		const struct profile_side *ps = &r->profile.sides[i];
		uint64_t top = 0;

		if (ps->server != server)
			continue;
		all += ps->samples;
		for (unsigned k = 0; k < ps->ntop; k++) {
			in[seed_prof_group(ps->top[k].symbol)] += ps->top[k].samples;
			top += ps->top[k].samples;
		}
		in[PG_OTHER] += ps->samples - top;	/* below the top 15 */
	}
	for (int g = 0; g < PG_N; g++)
		pct[g] = seed_pct_of(in[g], all);
	return all;
}

