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

#include "run.h"
#include "suite_int.h"

static const struct result *slower(const struct result *a, const struct result *b)
{
	if (!seed_traced(a) || !seed_traced(b))
		return NULL;
	return a->msgs_per_s < b->msgs_per_s ? a : b;
}

/* Seed 000: the slowest transport under normal scheduling. */
const struct result *pick_000(const struct suite_opts *o, const struct result *r, size_t n)
{
	const struct result *worst = NULL;

	(void)o;
	for (size_t i = 0; i < n; i++)
		if (seed_ok(&r[i]) && !strcmp(r[i].cell.sched.text, "other") &&
		    (!worst || r[i].msgs_per_s < worst->msgs_per_s))
			worst = &r[i];
	return seed_traced(worst) ? worst : NULL;
}

/* Seed 001: the grid's cell that parallelised worst. */
const struct result *pick_001(const struct suite_opts *o, const struct result *r, size_t n)
{
	const struct result *low = NULL;

	(void)o;
	for (size_t i = 0; i < n; i++)
		if (seed_ok(&r[i]) && (!low || r[i].cpu_pct_total < low->cpu_pct_total))
			low = &r[i];
	return seed_traced(low) ? low : NULL;
}

/* Seed 002: the slower of the best on one CPU and the best on two, under
 * the policy its reading compares. */
const struct result *pick_002(const struct suite_opts *o, const struct result *r, size_t n)
{
	const char *sched = o->fifo_ok ? "fifo:90" : "other";
	const struct result *best[2] = { NULL, NULL };

	for (size_t i = 0; i < n; i++) {
		int k = !strcmp(r[i].cell.pin.text, "split") ? 1 : !strcmp(r[i].cell.pin.text, "same") ? 0 : -1;

		if (k >= 0 && seed_ok(&r[i]) && !strcmp(r[i].cell.sched.text, sched) &&
		    (!best[k] || r[i].msgs_per_s > best[k]->msgs_per_s))
			best[k] = &r[i];
	}
	return slower(best[0], best[1]);
}

/* Seed 003: the paced cell of the transport with the lowest flood round
 * trip, one client. */
const struct result *pick_003(const struct suite_opts *o, const struct result *r, size_t n)
{
	const struct result *fast = NULL;

	for (size_t i = 0; i < n; i++)
		if (seed_ok(&r[i]) && r[i].cell.clients == 1 && r[i].cell.rate == 0 &&
		    (!fast || r[i].lat_p50_ns < fast->lat_p50_ns))
			fast = &r[i];
	if (!fast)
		return NULL;
	const struct result *p = seed_find(r, n, &(struct want){ .tp = fast->transport, .clients = 1,
				      .by_rate = true, .rate = o->quick ? 20 : 1 });

	return seed_traced(p) ? p : NULL;
}

/* Seed 004: unpinned, the slower of processes and threads over a pipe. */
const struct result *pick_004(const struct suite_opts *o, const struct result *r, size_t n)
{
	(void)o;
	return slower(seed_find(r, n, &(struct want){ .tp = "pipe", .pin = "none", .ep = EP_PROCESS }),
		      seed_find(r, n, &(struct want){ .tp = "pipe", .pin = "none", .ep = EP_THREAD }));
}

int seed_explain(const struct suite_opts *o, const struct seed *sd, struct result *r, size_t n)
{
	const struct result *k = sd->pick ? sd->pick(o, r, n) : NULL;
	struct session_opts so = { .repeat = 1, .pm_qos_us = -1 };
	struct report rep = { .cmdline = o->cmdline };
	struct plan one = { 0 };
	struct cell c;
	int ret;

	if (!k)
		return 0;
	c = k->cell;		/* its option blocks: the seed's plan's, still held */
	c.trace = c.explain = true;
	one.cells = &c;
	one.n = one.cap = 1;
	if (!o->quiet)
		printf("  (--explain: %s %s, pin %s, sched %s, once more with its cause tested)\n",
		       k->transport, k->pattern, k->cell.pin.text, k->cell.sched.text);
	fflush(stdout);
	ret = run_session(&one, &so, o->quiet, &rep);
	if (rep.results && rep.n == 1 && rep.results[0].status == RES_OK)
		r[k - r].trace.explain = rep.results[0].trace.explain;
	free(rep.results);
	return ret;
}
