// SPDX-License-Identifier: MIT
/* The seed-000-cycle section of `ipclab suite seeds`: what seed 000 asked
 * for instead of 4 KiB floods, a JACK-like graph of wakeups against a
 * deadline (the cycle pattern, docs/patterns.md); listed in
 * src/suite/suite_seeds.c's seeds[] (suite.h). */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "../../../suite/suite_int.h"
#include "../../../suite/suite_why.h"
#include "ipclab/stats.h"
#include "../cycle.h"
#include "suite.h"

/* ---- seed 000, what it asked for: the JACK-like cycle ------------------------------- */

/* A 3-stage chain woken every 64 frames at 48 kHz, each stage thinking a
 * little, through the mechanisms an audio server wakes its clients with. */
#define CYCLE_000_PERIOD "64@48000"
#define CYCLE_000_THINK_NS 20000

unsigned plan_000_cycle(const struct suite_opts *o, struct plan_spec *s, char *err,
			       size_t errlen)
{
	static const struct sched_spec fifo80 = { SCHED_FIFO, 80, "fifo:80" };

	seed_spec(o, s, "seed-000-cycle");
	spec_pattern(s, "cycle");
	spec_sizes(s, 64, 64);
	s->nclients = 1;
	s->clients[0] = 3;
	s->nsched = 0;
	s->sched[s->nsched++] = seed_sched_other;
	if (o->fifo_ok)
		s->sched[s->nsched++] = fifo80;
	s->think_ns[0] = CYCLE_000_THINK_NS;
	s->nthink = 1;
	s->duration_ns = (o->quick ? 2 : 10) * NSEC_PER_SEC;
	(void)err;
	(void)errlen;
	/* parsed once, by the pattern's plan hook (plan_build) */
	snprintf(s->period_text, sizeof(s->period_text), "%s", CYCLE_000_PERIOD);
	return 1;
}

/* The cycle's figures of a result of this section (all of them are -p cycle's). */
static const struct cycle_result *cyc(const struct result *r)
{
	static const struct cycle_result none;
	const struct cycle_result *cr = cycle_result_of(r);

	return cr ? cr : &none;
}

static uint64_t worst_wait_p99(const struct result *x)
{
	uint64_t w = 0;

	for (unsigned i = 0; i < cyc(x)->nstages; i++)
		if (cyc(x)->stages[i].wait_p99_ns > w)
			w = cyc(x)->stages[i].wait_p99_ns;
	return w;
}

/* Fewer xruns first, then the lower p99 completion. */
static bool cycle_better(const struct result *a, const struct result *b)
{
	return !b || cyc(a)->xruns < cyc(b)->xruns ||
	       (cyc(a)->xruns == cyc(b)->xruns && cyc(a)->cycle_p99_ns < cyc(b)->cycle_p99_ns);
}

/* The best and the worst of the cells that ran (NULL when none did). */
static void best_worst(const struct suite_opts *o, const struct seed_cells *c, const struct result **best,
		       const struct result **worst)
{
	*best = *worst = NULL;
	for (unsigned k = 0; k < 2 && (!k || o->fifo_ok); k++)
		for (unsigned t = 0; t < c->spec[0].ntp; t++) {
			const struct result *x = seed_cell(c, 0, &(struct plan_pick){ .tp = t, .sched = k });

			if (!seed_ok(x))
				continue;
			if (cycle_better(x, *best))
				*best = x;
			if (!*worst || cycle_better(*worst, x))
				*worst = x;
		}
}

/* --explain's cell: the worst, the one the Why line explains (traced). */
const struct result *pick_000_cycle(const struct suite_opts *o, const struct seed_cells *c)
{
	const struct result *best, *worst;

	best_worst(o, c, &best, &worst);
	return worst != best && seed_traced(worst) ? worst : NULL;
}

static double get_wait(const struct result *r)
{
	return (double)worst_wait_p99(r);
}

/* The worst stage's p99 wait: this section's own column. */
static const struct field stage_wait = { .key = "stage_wait_p99_ns", .label = "stage wait",
					 .kind = F_U64, .unit = U_NS, .get_num = get_wait };

static const struct rows_col cols[] = {
	{ .key = "sched", .width = -8 }, { .key = "transport", .width = -12 },
	{ .key = "xruns", .width = 7 }, { .key = "xruns_per_million", .width = 9 },
	{ .key = "cycle_p50_ns", .width = 10 }, { .key = "cycle_p99_ns", .width = 10 },
	{ .key = "cycle_max_ns", .width = 10 }, { .own = &stage_wait, .width = 11 },
	{ .key = "timer_late_p99_ns", .width = 10 },
};
static const struct rows table = { .cols = cols, .ncols = ARRAY_SIZE(cols) };

void print_000_cycle(const struct suite_opts *o, const struct seed_cells *c)
{
	const struct result *best, *worst;
	char b[6][32], rest[ERRLEN + 16], why[WHY_LEN];

	printf("A 3-stage chain at %s (period %s = the deadline), %s of processing per stage, %d s each: "
	       "the driver's timer wakes stage 1, which wakes stage 2 ... back to the driver\n",
	       CYCLE_000_PERIOD, fmt_ns(b[0], 32, 1e9 * 64 / 48000),
	       fmt_ns(b[1], 32, CYCLE_000_THINK_NS), o->quick ? 2 : 10);
	rows_head(stdout, &table);
	for (unsigned k = 0; k < 2; k++) {
		if (k && !o->fifo_ok) {
			printf("  %s\n", o->fifo_why);
			break;
		}
		for (unsigned t = 0; t < c->spec[0].ntp; t++) {
			const struct result *x = seed_cell(c, 0, &(struct plan_pick){ .tp = t, .sched = k });
			struct rows_row row = { .r = { x, x }, .rest = rest, .rest_at = 2 };

			if (!x)
				continue;
			if (!seed_ok(x)) {
				snprintf(rest, sizeof(rest), "%s: %s", x->status == RES_SKIPPED ? "skipped" :
					 "failed", x->reason);
				rows_line(stdout, &table, &row);
				continue;
			}
			rows_line_of(stdout, &table, x, NULL);
		}
	}
	printf("  (stage wait: the worst stage's p99 from the previous hop's send to its receive)\n");
	best_worst(o, c, &best, &worst);
	if (!best) {
		printf("Reading: no cycle cell completed here.\n");
		return;
	}
	printf("Reading: %s under %s kept the deadline best: %llu xruns in %llu cycles, p99 completion %s, %.0f %% of the period",
	       best->transport, best->cell.sched.text, (unsigned long long)cyc(best)->xruns,
	       (unsigned long long)cyc(best)->cycles, fmt_ns(b[0], 32, (double)cyc(best)->cycle_p99_ns),
	       100.0 * (double)cyc(best)->cycle_p99_ns / (double)cyc(best)->period_ns);
	if (worst && worst != best)
		printf("; the worst, %s under %s, had %llu xruns and p99 %s (%.2fx)", worst->transport,
		       worst->cell.sched.text, (unsigned long long)cyc(worst)->xruns,
		       fmt_ns(b[1], 32, (double)cyc(worst)->cycle_p99_ns),
		       cyc(best)->cycle_p99_ns ? (double)cyc(worst)->cycle_p99_ns /
							(double)cyc(best)->cycle_p99_ns : 0);
	if (worst && worst != best && cyc(worst)->xruns > cyc(best)->xruns &&
	    !(why_xruns_p(worst, best) < STATS_ALPHA))
		printf(" (its xruns are no difference by an exact test of their rates, p = %.2g)",
		       why_xruns_p(worst, best));
	printf(".\n");
	why_print(why_000_cycle(why, sizeof(why), best, worst), why);
}

