// SPDX-License-Identifier: MIT
/* The seeds' experiments, one row each in seeds[] at the end: the plan as
 * typed specs, the repetitions, and a printer that lays the results out
 * as the seed did, with a one-sentence reading from this machine's
 * numbers. */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "suite_int.h"
#include "suite_question.h"
#include "suite_why.h"
#include "../pattern/cycle/suite/suite.h"
#include "ipclab/placement.h"
#include "ipclab/reporter.h"
#include "ipclab/runner.h"

/* Seeds 000 and 002: a 4 KiB stream over kernel transports, normal
 * scheduling and SCHED_FIFO where permitted. */
static void kernel_stream_4k(const struct suite_opts *o, struct plan_spec *s, const char *section)
{
	seed_spec(o, s, section);
	spec_pattern(s, "stream");
	spec_sizes(s, 4096, 4096);
	s->nsched = 0;
	s->sched[s->nsched++] = seed_sched_other;
	if (o->fifo_ok)
		s->sched[s->nsched++] = seed_sched_fifo90;
	s->count = o->quick ? 20000 : 100000;
}

/* ---- seed 000: pipe vs posix-mq vs unix-stream, 4 KiB, normal vs FIFO ----------- */

/* Unpinned as the thread ran, and on one CPU and on two: a woken FIFO
 * reader can preempt its writer only on the writer's CPU. */
static const char *const pins_000[] = { "none", "same", "split", NULL };
enum { P000_NONE, P000_SAME, P000_SPLIT };

static unsigned plan_000(const struct suite_opts *o, struct plan_spec *s, char *err, size_t errlen)
{
	kernel_stream_4k(o, s, "seed-000");
	return spec_pins(s, pins_000, err, errlen) ? 0 : 1;
}

static double side_ns(const struct result *r, enum tp_role role)
{
	return seed_side_secs(r, role) * 1e9;
}
static double get_send(const struct result *r) { return side_ns(r, TP_CLIENT); }
static double get_recv(const struct result *r) { return side_ns(r, TP_SERVER); }

/* Each side's time from its first to its last measured message: seed
 * 000's own columns. */
static const struct field f_send = { .key = "send_time_ns", .label = "send time", .kind = F_DBL,
				     .unit = U_NS, .get_num = get_send };
static const struct field f_recv = { .key = "recv_time_ns", .label = "recv time", .kind = F_DBL,
				     .unit = U_NS, .get_num = get_recv };
static const struct rows_col cols_000[] = {
	{ .key = "sched", .width = -8 }, { .key = "transport", .width = -12 }, { .key = "pin", .width = -6 },
	{ .own = &f_send, .width = 10 }, { .own = &f_recv, .width = 10 },
	{ .key = "msgs_per_s", .width = 10 }, { .key = "sys_ctx_switches_per_s", .width = 10 },
};
static const struct rows table_000 = { .cols = cols_000, .ncols = ARRAY_SIZE(cols_000) };

/* The trace's line: per message, each transport under each policy. */
static void print_000_trace(const struct seed_cells *c, const struct result *best,
			    const struct result *worst)
{
	unsigned shown = 0;

	printf("Trace, per message:");
	for (unsigned t = 0; t < c->spec[0].ntp; t++) {
		bool first = true;

		for (unsigned k = 0; k < 2; k++) {
			const struct result *x = seed_cell(c, 0, &(struct plan_pick){ .tp = t, .sched = k });

			if (!seed_traced(x))
				continue;
			if (first)
				printf("%s %s %.2f cs and %.2f wakeups under %s", shown++ ? ";" : "",
				       x->transport, x->trace.per_msg.ctx_switches, x->trace.per_msg.wakeups,
				       x->cell.sched.text);
			else
				printf(", %.2f/%.2f under %s", x->trace.per_msg.ctx_switches,
				       x->trace.per_msg.wakeups, x->cell.sched.text);
			first = false;
		}
	}
	if (seed_traced(best) && seed_traced(worst) && worst->trace.per_msg.ctx_switches > 0)
		printf("; under other the fastest (%s) switched %.2fx as often per message as the slowest (%s)",
		       best->transport, best->trace.per_msg.ctx_switches / worst->trace.per_msg.ctx_switches,
		       worst->transport);
	seed_trace_cost(c);
}

/* Seed 000 laid out as its author printed it: one table (a row a cell),
 * a reading, and the trace's reading when traced. */
static void print_000(const struct suite_opts *o, const struct seed_cells *c)
{
	const struct result *best[2] = { NULL, NULL }, *worst = NULL;
	int pipe = seed_tp(&c->spec[0], "pipe");
	char w[WHY_LEN];

	printf("Sending a 4096 byte message %llu times (per side: time from its first to its last measured message)\n",
	       (unsigned long long)(o->quick ? 20000 : 100000));
	rows_head(stdout, &table_000);
	for (unsigned k = 0; k < 2; k++) {
		if (k && !o->fifo_ok) {
			printf("  %s\n", o->fifo_why);
			break;
		}
		for (unsigned t = 0; t < c->spec[0].ntp; t++)
			for (unsigned pin = P000_NONE; pin <= P000_SPLIT; pin++) {
				const struct result *x =
					seed_cell(c, 0, &(struct plan_pick){ .tp = t, .sched = k, .pin = pin });

				/* the reading's fastest and slowest: unpinned, as the thread ran */
				if (seed_ok(x) && pin == P000_NONE &&
				    (!best[k] || x->msgs_per_s > best[k]->msgs_per_s))
					best[k] = x;
				if (seed_ok(x) && pin == P000_NONE && !k &&
				    (!worst || x->msgs_per_s < worst->msgs_per_s))
					worst = x;
				if (x)
					rows_line_of(stdout, &table_000, x, NULL);
			}
	}
	if (!best[0]) {
		printf("Reading: no transport completed here.\n");
		return;
	}
	const struct result *pipe0 = pipe < 0 ? NULL :
		seed_cell(c, 0, &(struct plan_pick){ .tp = (unsigned)pipe, .sched = S_OTHER });
	const struct result *pipe1 = pipe < 0 ? NULL :
		seed_cell(c, 0, &(struct plan_pick){ .tp = (unsigned)pipe, .sched = S_FIFO });

	printf("Reading: under normal scheduling, unpinned, %s moved 4 KiB messages fastest, %.2fx the slowest (%s)",
	       best[0]->transport, best[0]->msgs_per_s / worst->msgs_per_s, worst->transport);
	if (seed_ok(pipe0) && seed_ok(pipe1))
		printf("; SCHED_FIFO made pipe %.2fx as fast and its context switches/s %.2gx",
		       pipe1->msgs_per_s / pipe0->msgs_per_s,
		       pipe1->sys_ctx_switches_per_s / (pipe0->sys_ctx_switches_per_s ? pipe0->sys_ctx_switches_per_s : 1));
	printf(".\n");
	if (c->why) {
		int mq = seed_tp(&c->spec[0], "posix-mq");
		const struct result *mq0 = mq < 0 ? NULL :
			seed_cell(c, 0, &(struct plan_pick){ .tp = (unsigned)mq, .sched = S_OTHER });
		const struct result *mq1 = mq < 0 ? NULL :
			seed_cell(c, 0, &(struct plan_pick){ .tp = (unsigned)mq, .sched = S_FIFO });

		const struct result *po[SQ_000_PLACES] = { NULL }, *pf[SQ_000_PLACES] = { NULL };

		for (unsigned pin = P000_NONE; pipe >= 0 && pin <= P000_SPLIT; pin++) {
			po[pin] = seed_cell(c, 0, &(struct plan_pick){ .tp = (unsigned)pipe, .sched = S_OTHER, .pin = pin });
			if (o->fifo_ok)
				pf[pin] = seed_cell(c, 0, &(struct plan_pick){ .tp = (unsigned)pipe, .sched = S_FIFO, .pin = pin });
		}
		sq_000(c->why, po, pf, mq0, o->fifo_ok ? mq1 : NULL, o->fifo_ok ? NULL : o->fifo_why);
		sq_print(stdout, c->why);
	}
	if (!seed_any_traced(c))
		return;
	print_000_trace(c, best[0], worst);
	why_print(why_000(w, sizeof(w), best[0], worst), w);
}

/* ---- seed 001: CPU % over write size x think, pipe --------------------------------- */

static unsigned plan_001(const struct suite_opts *o, struct plan_spec *s, char *err, size_t errlen)
{
	static const uint64_t think[] = { 1, 2, 4, 16, 32, 64, 128, 256, 1024, 2048 };
	static const uint64_t think_quick[] = { 1, 16, 256 };
	static const char *const pins[] = { "none", NULL };
	static const uint64_t size_quick[] = { 1024, 4096, 16384 };

	seed_spec(o, s, "seed-001");
	spec_pattern(s, "stream");
	if (o->quick) {
		/* 3 x 3 cells, 5 times each (their headline's interval) */
		memcpy(s->size, size_quick, sizeof(size_quick));
		s->nsize = ARRAY_SIZE(size_quick);
		spec_thinks(s, think_quick, ARRAY_SIZE(think_quick));
	} else {
		spec_sizes(s, 1024, 131072);
		spec_thinks(s, think, ARRAY_SIZE(think));
	}
	s->duration_ns = (o->quick ? 60 : 150) * NSEC_PER_MSEC;
	s->warmup = 2;
	s->warmup_set = true;
	return spec_pins(s, pins, err, errlen) ? 0 : 1;
}


static void print_001(const struct suite_opts *o, const struct seed_cells *c)
{
	const struct result *r = c->r;
	size_t n = c->n;
	const struct field *spec[3];
	struct report rep = { .results = (struct result *)r, .n = n };
	unsigned both = 0, cells = 0;
	const struct result *low = NULL, *high = NULL;
	char err[ERRLEN], why[WHY_LEN];

	(void)o;
	if (pivot_parse("size,think,cpu_pct", spec, err, sizeof(err)))
		return;
	printf("CPU %% of two processes piping data with think iterations per byte between writes (200 %% = both CPUs busy)\n");
	report_pivot(stdout, &rep, spec, "table");
	for (size_t i = 0; i < n; i++) {
		if (!seed_ok(&r[i]))
			continue;
		cells++;
		both += r[i].cpu_pct_total >= 180;
		if (!low || r[i].cpu_pct_total < low->cpu_pct_total)
			low = &r[i];
		if (!high || r[i].cpu_pct_total > high->cpu_pct_total)
			high = &r[i];
	}
	if (low)
		printf("Reading: both CPUs were busy (>= 180 %%) in %u of %u cells; the pipe parallelised worst at %llu B and think %llu (%.0f %%).\n",
		       both, cells, (unsigned long long)low->cell.size, (unsigned long long)low->cell.think,
		       low->cpu_pct_total);
	if (c->why) {
		sq_001(c->why, r, n);
		sq_print(stdout, c->why);
	}
	if (!seed_tside(low, true) || !seed_tside(low, false))
		return;
	printf("Trace, share of each side's window running / runnable / sleeping:");
	for (int k = 0; k < 2; k++) {
		const struct result *x = k ? high : low;
		const struct trace_side *w = seed_tside(x, false), *rd = seed_tside(x, true);

		if (!w || !rd)
			continue;
		printf("%s at %llu B think %llu (%.0f %%) the writer %.0f/%.0f/%.0f %%, the reader %.0f/%.0f/%.0f %%",
		       k ? "; the best" : " the worst", (unsigned long long)x->cell.size,
		       (unsigned long long)x->cell.think, x->cpu_pct_total,
		       seed_pct_of(w->user_ns + w->sys_ns, w->wall_ns),
		       seed_pct_of(w->runnable_ns + w->preempted_ns, w->wall_ns), seed_pct_of(w->sleep_ns, w->wall_ns),
		       seed_pct_of(rd->user_ns + rd->sys_ns, rd->wall_ns),
		       seed_pct_of(rd->runnable_ns + rd->preempted_ns, rd->wall_ns),
		       seed_pct_of(rd->sleep_ns, rd->wall_ns));
	}
	seed_trace_cost(c);
	why_print(why_001(why, sizeof(why), low, high), why);
}

/* ---- seed 002: same CPU vs different CPUs, realtime or not ---------------------------- */

static unsigned plan_002(const struct suite_opts *o, struct plan_spec *s, char *err, size_t errlen)
{
	/* unpinned too: the thread's "consistent only when pinned" (the
	 * repetitions' spread), and the trace's migrations against pinned */
	static const char *const pins[] = { "same", "split", "none", NULL };

	kernel_stream_4k(o, s, "seed-002");
	return spec_pins(s, pins, err, errlen) ? 0 : 1;
}


/* Seed 002's table: a row a transport, a column a (policy, placement). */
static const struct rows_col cols_002[] = {
	{ .key = "transport", .width = -12 },
	{ .label = "other/same", .key = "msgs_per_s", .width = 14 },
	{ .label = "other/split", .key = "msgs_per_s", .width = 14 },
	{ .label = "fifo/same", .key = "msgs_per_s", .width = 14 },
	{ .label = "fifo/split", .key = "msgs_per_s", .width = 14 },
};
static const struct rows table_002 = { .cols = cols_002, .ncols = ARRAY_SIZE(cols_002) };
static const struct { unsigned sched, pin; } at_002[] = {
	{ S_OTHER, P002_SAME }, { S_OTHER, P002_SPLIT }, { S_FIFO, P002_SAME }, { S_FIFO, P002_SPLIT },
};

static const struct result *cell_002(const struct seed_cells *c, unsigned t, unsigned sched,
				     unsigned pin)
{
	return seed_cell(c, 0, &(struct plan_pick){ .tp = t, .pin = pin, .sched = sched });
}

/* Migrations per message, unpinned / same CPU / two CPUs, under each policy. */
static void print_002_trace(const struct suite_opts *o, const struct seed_cells *c)
{
	static const unsigned pl[] = { P002_NONE, P002_SAME, P002_SPLIT };

	printf("Trace, migrations per message unpinned / same CPU / two CPUs (and the unpinned rate against two CPUs'):");
	for (unsigned k = 0; k < (o->fifo_ok ? 2u : 1u); k++) {
		printf("%s under %s", k ? ";" : "", k ? "fifo:90" : "other");
		for (unsigned t = 0; t < c->spec[0].ntp; t++) {
			const struct result *none = cell_002(c, t, k, P002_NONE);
			const struct result *split = cell_002(c, t, k, P002_SPLIT);

			printf("%s %s", t ? "," : "", c->spec[0].tp[t]->name);
			for (size_t j = 0; j < ARRAY_SIZE(pl); j++) {
				const struct result *x = cell_002(c, t, k, pl[j]);

				if (seed_traced(x))
					printf("%s%.2g", j ? "/" : " ", x->trace.per_msg.migrations);
				else
					printf("%s-", j ? "/" : " ");
			}
			if (seed_ok(none) && seed_ok(split))
				printf(" (%.2fx)", none->msgs_per_s / split->msgs_per_s);
		}
	}
	seed_trace_cost(c);
}

/* Seed 002: placements x policies per transport, laid out as the seed
 * did, a reading, and the trace's migrations when traced. */
static void print_002(const struct suite_opts *o, const struct seed_cells *c)
{
	const struct result *best_same = NULL, *best_split = NULL;
	const unsigned sched = o->fifo_ok ? S_FIFO : S_OTHER;
	char w[WHY_LEN];

	printf("4 KiB messages/s, both processes on one CPU (same) or on different CPUs (split)\n");
	rows_head(stdout, &table_002);
	for (unsigned t = 0; t < c->spec[0].ntp; t++) {
		struct rows_row row = { .r = { cell_002(c, t, S_OTHER, P002_SAME) },
					.text = { c->spec[0].tp[t]->name } };

		for (unsigned k = 0; k < ARRAY_SIZE(at_002); k++) {
			const struct result *x = cell_002(c, t, at_002[k].sched, at_002[k].pin);

			row.r[k + 1] = x;
			row.text[k + 1] = at_002[k].sched == S_FIFO && !o->fifo_ok ? "not permitted" : NULL;
			if (seed_ok(x) && at_002[k].sched == sched) {
				const struct result **bp = at_002[k].pin == P002_SAME ? &best_same : &best_split;

				if (!*bp || x->msgs_per_s > (*bp)->msgs_per_s)
					*bp = x;
			}
		}
		rows_line(stdout, &table_002, &row);
	}
	if (!o->fifo_ok)
		printf("  %s\n", o->fifo_why);
	if (best_same && best_split)
		printf("Reading: under %s, %s was fastest on one CPU and %s across two; the best across two CPUs moved %.2fx the best on one.\n",
		       o->fifo_ok ? "fifo:90" : "other", best_same->transport, best_split->transport,
		       best_split->msgs_per_s / best_same->msgs_per_s);
	if (c->why) {
		const int tp = seed_tp(&c->spec[0], "pipe"), ts = seed_tp(&c->spec[0], "unix-stream");
		static const unsigned pl[3] = { P002_NONE, P002_SAME, P002_SPLIT };
		const struct result *pipe[3] = { NULL }, *sock[3] = { NULL };

		for (unsigned k = 0; k < 3; k++) {
			pipe[k] = tp < 0 ? NULL : cell_002(c, (unsigned)tp, sched, pl[k]);
			sock[k] = ts < 0 ? NULL : cell_002(c, (unsigned)ts, sched, pl[k]);
		}
		sq_002(c->why, pipe, sock, o->fifo_ok ? "fifo:90" : "other");
		sq_print(stdout, c->why);
	}
	if (!seed_any_traced(c))
		return;
	print_002_trace(o, c);
	why_print(why_002(w, sizeof(w), best_same, best_split), w);
}

/* ---- seed 004: ping-pong exchanges, processes vs threads, pipe vs barrier -------- */

static unsigned plan_004(const struct suite_opts *o, struct plan_spec *s, char *err, size_t errlen)
{
	static const char *const pins[] = { "none", "same", "split", NULL };

	seed_spec(o, s, "seed-004");
	spec_pattern(s, "pingpong");
	spec_sizes(s, 16, 16);
	s->nep = 2;
	s->threads[0] = false;
	s->threads[1] = true;
	s->count = o->quick ? 10000 : 50000;
	return spec_pins(s, pins, err, errlen) ? 0 : 1;
}


/* Where the threads' extra time goes: wakeup latency on the round trip's
 * critical path, migrations, switches, and the wake path's profile share. */
static void print_004_trace(const struct seed_cells *c, const struct result *pp,
			    const struct result *pt)
{
	const struct result *x[2] = { pp, pt };
	double g[2][2][PG_N];
	uint64_t sp[2] = { 0, 0 };
	char b[4][32];

	if (!seed_traced(pp) || !seed_traced(pt))
		return;
	printf("Trace, unpinned pipe, processes vs threads: an exchange took %s vs %s",
	       fmt_ns(b[0], 32, 1e9 / pp->msgs_per_s), fmt_ns(b[1], 32, 1e9 / pt->msgs_per_s));
	if (pp->trace.has_cpath && pt->trace.has_cpath)
		printf(", of which waiting to run after a wakeup %s vs %s",
		       fmt_ns(b[2], 32, pp->trace.cpath.server_wakeup_ns + pp->trace.cpath.client_wakeup_ns),
		       fmt_ns(b[3], 32, pt->trace.cpath.server_wakeup_ns + pt->trace.cpath.client_wakeup_ns));
	printf("; %.3g vs %.3g migrations and %.2f vs %.2f context switches per exchange",
	       pp->trace.per_msg.migrations, pt->trace.per_msg.migrations,
	       pp->trace.per_msg.ctx_switches, pt->trace.per_msg.ctx_switches);
	for (int k = 0; k < 2; k++) {
		uint64_t s0 = seed_prof_groups(x[k], true, g[k][0]), s1 = seed_prof_groups(x[k], false, g[k][1]);

		sp[k] = s0 + s1;
		for (int j = 0; j < PG_N && sp[k]; j++)	/* both sides, by samples */
			g[k][0][j] = (g[k][0][j] * (double)s0 + g[k][1][j] * (double)s1) / (double)sp[k];
	}
	if (sp[0] >= PROF_MIN_SAMPLES && sp[1] >= PROF_MIN_SAMPLES)
		printf("; the wake path (try_to_wake_up and kin, its lock release included) took %.1f %% vs %.1f %% of the samples, futex and scheduler waits %.1f %% vs %.1f %%",
		       g[0][0][PG_WAKE], g[1][0][PG_WAKE], g[0][0][PG_WAIT], g[1][0][PG_WAIT]);
	seed_trace_cost(c);
}

/* Seed 004's table: a row a transport and kind of endpoint, a column a
 * placement (the plan's pin list, in its order). */
static const struct rows_col cols_004[] = {
	{ .label = "", .width = -44 },
	{ .label = "unpinned", .key = "msgs_per_s", .width = 12 },
	{ .label = "same CPU", .key = "msgs_per_s", .width = 12 },
	{ .label = "two CPUs", .key = "msgs_per_s", .width = 12 },
};
static const struct rows table_004 = { .cols = cols_004, .ncols = ARRAY_SIZE(cols_004) };

static const struct result *cell_004(const struct seed_cells *c, int tp, unsigned ep, unsigned pin)
{
	return tp < 0 ? NULL : seed_cell(c, 0, &(struct plan_pick){ .tp = (unsigned)tp, .ep = ep,
								     .pin = pin });
}

static void print_004(const struct suite_opts *o, const struct seed_cells *c)
{
	const int pipe = seed_tp(&c->spec[0], "pipe"), barrier = seed_tp(&c->spec[0], "barrier");
	const struct { int tp; const char *label; unsigned ep; } rows[] = {
		{ pipe, "processes synchronised by a pipe", EP_PROCESS },
		{ pipe, "threads synchronised by a pipe", EP_THREAD },
		{ barrier, "threads synchronised by a pthread_barrier", EP_THREAD },
	};
	const struct result *pp = cell_004(c, pipe, EP_PROCESS, P004_NONE);
	const struct result *pt = cell_004(c, pipe, EP_THREAD, P004_NONE);
	const struct result *ps = cell_004(c, pipe, EP_PROCESS, P004_SAME);
	char w[WHY_LEN];

	(void)o;
	printf("Exchanges/second (a 16 B request answered by a 16 B reply)\n");
	rows_head(stdout, &table_004);
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct rows_row row = { .text = { rows[i].label } };

		for (unsigned k = P004_NONE; k <= P004_SPLIT; k++)
			row.r[1 + k] = cell_004(c, rows[i].tp, rows[i].ep, k);
		rows_line(stdout, &table_004, &row);
	}
	if (seed_ok(pp) && seed_ok(pt))
		printf("Reading: unpinned, processes exchanged %.2fx as often as threads over a pipe",
		       pp->msgs_per_s / pt->msgs_per_s);
	if (seed_ok(pp) && seed_ok(ps))
		printf("; pinning both processes to one CPU gave %.2fx the unpinned rate",
		       ps->msgs_per_s / pp->msgs_per_s);
	if (seed_ok(pp))
		printf(".\n");
	if (c->why) {
		const struct result *procs[SQ_004_PLACES], *threads[SQ_004_PLACES];

		for (unsigned k = P004_NONE; k <= P004_SPLIT; k++) {
			procs[k] = cell_004(c, pipe, EP_PROCESS, k);
			threads[k] = cell_004(c, pipe, EP_THREAD, k);
		}
		sq_004(c->why, procs, threads);
		sq_print(stdout, c->why);
	}
	print_004_trace(c, pp, pt);
	why_print(why_004(w, sizeof(w), pp, pt), w);
}

/* ---- the table ------------------------------------------------------------------------ */

static const char *const tp_000[] = { "pipe", "posix-mq", "unix-stream", NULL };
static const char *const tp_000_cycle[] = { "shm-futex", "shm-eventfd", "pipe", "posix-mq",
					    "unix-stream", "ring", NULL };
static const char *const tp_001[] = { "pipe", NULL };
static const char *const tp_002[] = { "pipe", "unix-stream", "posix-mq", NULL };
/* ring-ipc and libqb-ipc first: the client/server path seed 003 measured
 * (corosync's qb_ipcc through qb_ipcs), then the bare rings and wakeups */
static const char *const tp_003[] = { "ring-ipc", "libqb-ipc", "ring", "libqb-rb", "shm-futex",
				      "shm-eventfd", "shm-sem", "unix-stream", NULL };
static const char *const tp_004[] = { "pipe", "barrier", NULL };

/* Repetitions: 5, --quick too, where a section's answer is a ratio that
 * needs its interval (4 and 4 give one, their extremes; 5 and 5 the third
 * from each end): seeds 000, 002, 004, and 001's headline (the busiest
 * cell over the least busy; its quick grid 3 x 3 cells of 60 ms). The
 * cycle 1; seed-003's paced cells take seconds each: one long run
 * instead. */
const struct seed seeds[] = {
	{ "seed-000", "pipes vs POSIX message queues vs unix sockets, 4 KiB, normal vs SCHED_FIFO",
	  plan_000, tp_000, 5, 5, print_000, pick_000 },
	{ "seed-000-cycle", "what seed 000 asked for: a JACK-like graph of wakeups against a deadline (xruns)",
	  plan_000_cycle, tp_000_cycle, 1, 1, print_000_cycle, pick_000_cycle },
	{ "seed-001", "two processes piping data with compute between writes: CPU % over size x think",
	  plan_001, tp_001, 5, 5, print_001, pick_001 },
	{ "seed-002", "pipe / socket / queue, same CPU vs different CPUs, realtime and not",
	  plan_002, tp_002, 5, 5, print_002, pick_002 },
	{ "seed-003", "shared-memory ring latency: 1 msg/s vs flood, 1 vs 4 clients, wakeup kinds",
	  plan_003, tp_003, 1, 1, print_003, pick_003 },
	{ "seed-004", "ping-pong exchanges: processes vs threads, pipe vs barrier, placement",
	  plan_004, tp_004, 5, 5, print_004, pick_004 },
};
const size_t n_seeds = ARRAY_SIZE(seeds);
