// SPDX-License-Identifier: MIT
/* `ipclab suite seeds --explain`: after a seed's cells ran, the one cell
 * its reading explains (the slower of the two it compares: each seed's
 * pick below, the cells its printer compares) is run once more with
 * --explain: traced, its largest cause tested by the one knob that should
 * remove it, in interleaved pairs (src/trace/explain.c), and what that
 * measured goes into the cell's result (trace.explain), where the reading
 * says whether it confirmed the cause. One cell a seed: about twelve runs
 * of it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cmd/run.h"
#include "suite_int.h"

static const struct result *slower(const struct result *a, const struct result *b)
{
	if (!seed_traced(a) || !seed_traced(b))
		return NULL;
	return a->msgs_per_s < b->msgs_per_s ? a : b;
}

/* Seed 000: the slowest transport under normal scheduling. */
const struct result *pick_000(const struct suite_opts *o, const struct seed_cells *c)
{
	const struct result *worst = NULL;

	(void)o;
	for (unsigned t = 0; t < c->spec[0].ntp; t++) {
		const struct result *x = seed_cell(c, 0, &(struct plan_pick){ .tp = t, .sched = S_OTHER });

		if (seed_ok(x) && (!worst || x->msgs_per_s < worst->msgs_per_s))
			worst = x;
	}
	return seed_traced(worst) ? worst : NULL;
}

/* Seed 001: the grid's cell that parallelised worst. */
const struct result *pick_001(const struct suite_opts *o, const struct seed_cells *c)
{
	const struct result *low = NULL;

	(void)o;
	for (size_t i = 0; i < c->n; i++)
		if (seed_ok(&c->r[i]) && (!low || c->r[i].cpu_pct_total < low->cpu_pct_total))
			low = &c->r[i];
	return seed_traced(low) ? low : NULL;
}

/* Seed 002: the slower of the best on one CPU and the best on two, under
 * the policy its reading compares. */
const struct result *pick_002(const struct suite_opts *o, const struct seed_cells *c)
{
	const struct result *best[2] = { NULL, NULL };

	for (unsigned t = 0; t < c->spec[0].ntp; t++)
		for (unsigned k = 0; k < 2; k++) {
			const struct result *x = seed_cell(c, 0, &(struct plan_pick){ .tp = t,
						.pin = k ? P002_SPLIT : P002_SAME, .sched = o->fifo_ok ? S_FIFO : S_OTHER });

			if (seed_ok(x) && (!best[k] || x->msgs_per_s > best[k]->msgs_per_s))
				best[k] = x;
		}
	return slower(best[0], best[1]);
}

/* Seed 003: the paced cell of the transport with the lowest flood round
 * trip, one client. */
const struct result *pick_003(const struct suite_opts *o, const struct seed_cells *c)
{
	const struct result *fast = NULL, *p = NULL;

	(void)o;
	for (unsigned t = 0; t < c->spec[SPEC003_FLOOD].ntp; t++) {
		struct plan_pick k = { .tp = t, .clients = C003_ONE };
		const struct result *f = seed_cell(c, SPEC003_FLOOD, &k);

		if (seed_ok(f) && (!fast || f->lat_p50_ns < fast->lat_p50_ns)) {
			fast = f;
			p = seed_cell(c, SPEC003_PACED, &k);
		}
	}
	return seed_traced(p) ? p : NULL;
}

/* Seed 004: unpinned, the slower of processes and threads over a pipe. */
const struct result *pick_004(const struct suite_opts *o, const struct seed_cells *c)
{
	int pipe = seed_tp(&c->spec[0], "pipe");

	(void)o;
	if (pipe < 0)
		return NULL;
	return slower(seed_cell(c, 0, &(struct plan_pick){ .tp = (unsigned)pipe, .pin = P004_NONE,
							    .ep = EP_PROCESS }),
		      seed_cell(c, 0, &(struct plan_pick){ .tp = (unsigned)pipe, .pin = P004_NONE,
							    .ep = EP_THREAD }));
}

/* The knob a seed's own question names, tried before its cause's: seed
 * 004 asks about placement (the thread's own knob: both ends on one CPU). */
static const char *first_knob(const struct seed *sd)
{
	return !strcmp(sd->name, "seed-004") ? "--pin same" : NULL;
}

int seed_explain(const struct suite_opts *o, const struct seed *sd, const struct seed_cells *sc,
		 struct result *r)
{
	const struct result *k = sd->pick ? sd->pick(o, sc) : NULL;
	struct session_opts so = { .repeat = 1, .pm_qos_us = -1 };
	struct report rep = { .cmdline = o->cmdline };
	struct plan one = { 0 };
	struct cell c;
	int ret;

	if (!k)
		return 0;
	c = k->cell;		/* its option blocks: the seed's plan's, still held */
	c.trace = c.explain = true;
	/* the reading's own knob first, where it has one */
	c.explain_first = first_knob(sd);
	one.cells = &c;
	one.n = one.cap = 1;
	if (!o->quiet)
		printf("  (--explain: %s %s, pin %s, sched %s, once more with its cause tested)\n",
		       k->transport, k->pattern, k->cell.pin.text, k->cell.sched.text);
	fflush(stdout);
	ret = run_session(&one, &so, o->quiet, &rep);
	if (rep.results && rep.n == 1 && rep.results[0].status == RES_OK)
		r[k - sc->r].trace.explain = rep.results[0].trace.explain;
	free(rep.results);
	return ret;
}
