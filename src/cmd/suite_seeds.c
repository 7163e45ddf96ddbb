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
#include "suite_why.h"
#include "ipclab/placement.h"
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

static unsigned plan_000(const struct suite_opts *o, struct plan_spec *s, char *err, size_t errlen)
{
	(void)err, (void)errlen;
	kernel_stream_4k(o, s, "seed-000");
	return 1;
}

/* Seed 000 laid out as its author printed it: one table, a reading, and
 * the trace's reading when traced (one printf after another). */
static void print_000(const struct suite_opts *o, const struct result *r, size_t n)
{
	static const char *const tps[] = { "pipe", "posix-mq", "unix-stream" };
	static const char *const scheds[] = { "other", "fifo:90" };
	const struct result *best[2] = { NULL, NULL }, *worst = NULL;
	char b1[32], b2[32], b3[32], b4[32], w[WHY_LEN];

	printf("Sending a 4096 byte message %llu times (per side: time from its first to its last measured message)\n",
	       (unsigned long long)(o->quick ? 20000 : 100000));
	printf("  %-8s %-12s %10s %10s %10s %10s\n", "sched", "transport", "send time", "recv time",
	       "msgs/s", "cs/s");
	for (int k = 0; k < 2; k++) {
		if (k && !o->fifo_ok) {
			printf("  %s\n", o->fifo_why);
			break;
		}
		for (size_t i = 0; i < ARRAY_SIZE(tps); i++) {
			const struct result *x = seed_find(r, n, &(struct want){ .tp = tps[i], .sched = scheds[k] });

			if (seed_ok(x) && (!best[k] || x->msgs_per_s > best[k]->msgs_per_s))
				best[k] = x;
			if (seed_ok(x) && !k && (!worst || x->msgs_per_s < worst->msgs_per_s))
				worst = x;
			snprintf(b1, sizeof(b1), "%.3fs", seed_ok(x) ? seed_side_secs(x, TP_CLIENT) : 0);
			snprintf(b2, sizeof(b2), "%.3fs", seed_ok(x) ? seed_side_secs(x, TP_SERVER) : 0);
			printf("  %-8s %-12s %10s %10s %10s %10s\n", scheds[k], tps[i],
			       seed_ok(x) ? b1 : seed_val(b1, 0, x, 0, NULL), seed_ok(x) ? b2 : "",
			       seed_ok(x) ? fmt_count(b3, sizeof(b3), x->msgs_per_s) : "",
			       seed_ok(x) ? fmt_count(b4, sizeof(b4), x->sys_ctx_switches_per_s) : "");
		}
	}
	if (!best[0]) {
		printf("Reading: no transport completed here.\n");
		return;
	}
	const struct result *pipe0 = seed_find(r, n, &(struct want){ .tp = "pipe", .sched = "other" });
	const struct result *pipe1 = seed_find(r, n, &(struct want){ .tp = "pipe", .sched = "fifo:90" });

	printf("Reading: under normal scheduling %s moved 4 KiB messages fastest, %.2fx the slowest (%s)",
	       best[0]->transport, best[0]->msgs_per_s / worst->msgs_per_s, worst->transport);
	if (seed_ok(pipe0) && seed_ok(pipe1))
		printf("; SCHED_FIFO made pipe %.2fx as fast and its context switches/s %.2gx",
		       pipe1->msgs_per_s / pipe0->msgs_per_s,
		       pipe1->sys_ctx_switches_per_s / (pipe0->sys_ctx_switches_per_s ? pipe0->sys_ctx_switches_per_s : 1));
	printf(".\n");
	if (!seed_any_traced(r, n))
		return;
	unsigned shown = 0;

	printf("Trace, per message:");
	for (size_t i = 0; i < ARRAY_SIZE(tps); i++) {
		bool first = true;

		for (int k = 0; k < 2; k++) {
			const struct result *x = seed_find(r, n, &(struct want){ .tp = tps[i], .sched = scheds[k] });

			if (!seed_traced(x))
				continue;
			if (first)
				printf("%s %s %.2f cs and %.2f wakeups under %s", shown++ ? ";" : "", tps[i],
				       x->trace.per_msg.ctx_switches, x->trace.per_msg.wakeups, scheds[k]);
			else
				printf(", %.2f/%.2f under %s", x->trace.per_msg.ctx_switches,
				       x->trace.per_msg.wakeups, scheds[k]);
			first = false;
		}
	}
	if (seed_traced(best[0]) && seed_traced(worst) && worst->trace.per_msg.ctx_switches > 0)
		printf("; under other the fastest (%s) switched %.2fx as often per message as the slowest (%s)",
		       best[0]->transport,
		       best[0]->trace.per_msg.ctx_switches / worst->trace.per_msg.ctx_switches,
		       worst->transport);
	seed_trace_cost(r, n);
	why_print(why_000(w, sizeof(w), best[0], worst), w);
}

/* ---- seed 001: CPU % over write size x think, pipe --------------------------------- */

static unsigned plan_001(const struct suite_opts *o, struct plan_spec *s, char *err, size_t errlen)
{
	static const uint64_t think[] = { 1, 2, 4, 16, 32, 64, 128, 256, 1024, 2048 };
	static const uint64_t think_quick[] = { 1, 16, 256 };
	static const char *const pins[] = { "none", NULL };

	seed_spec(o, s, "seed-001");
	spec_pattern(s, "stream");
	spec_sizes(s, 1024, o->quick ? 16384 : 131072);
	if (o->quick)
		spec_thinks(s, think_quick, ARRAY_SIZE(think_quick));
	else
		spec_thinks(s, think, ARRAY_SIZE(think));
	s->duration_ns = (o->quick ? 60 : 150) * NSEC_PER_MSEC;
	s->warmup = 2;
	s->warmup_set = true;
	return spec_pins(s, pins, err, errlen) ? 0 : 1;
}


static void print_001(const struct suite_opts *o, const struct result *r, size_t n)
{
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
	seed_trace_cost(r, n);
	why_print(why_001(why, sizeof(why), low, high), why);
}

/* ---- seed 002: same CPU vs different CPUs, realtime or not ---------------------------- */

static unsigned plan_002(const struct suite_opts *o, struct plan_spec *s, char *err, size_t errlen)
{
	static const char *const pins[] = { "same", "split", NULL };
	static const char *const pins_traced[] = { "same", "split", "none", NULL };

	kernel_stream_4k(o, s, "seed-002");
	if (o->trace)	/* unpinned too: migrations per message against pinned */
		return spec_pins(s, pins_traced, err, errlen) ? 0 : 1;
	return spec_pins(s, pins, err, errlen) ? 0 : 1;
}


/* Seed 002: placements x policies per transport, laid out as the seed
 * did, a reading, and the trace's migrations when traced. */
static void print_002(const struct suite_opts *o, const struct result *r, size_t n)
{
	static const char *const tps[] = { "pipe", "unix-stream", "posix-mq" };
	static const char *const cols[][2] = {
		{ "other", "same" }, { "other", "split" }, { "fifo:90", "same" }, { "fifo:90", "split" },
	};
	const struct result *best_same = NULL, *best_split = NULL;
	const char *sched = o->fifo_ok ? "fifo:90" : "other";
	char b[32], w[WHY_LEN];

	printf("4 KiB messages/s, both processes on one CPU (same) or on different CPUs (split)\n");
	printf("  %-12s %14s %14s %14s %14s\n", "transport", "other/same", "other/split",
	       "fifo/same", "fifo/split");
	for (size_t i = 0; i < ARRAY_SIZE(tps); i++) {
		printf("  %-12s", tps[i]);
		for (size_t c = 0; c < ARRAY_SIZE(cols); c++) {
			const struct result *x = seed_find(r, n, &(struct want){ .tp = tps[i],
						      .pin = cols[c][1], .sched = cols[c][0] });

			printf(" %14s", x ? seed_val(b, sizeof(b), x, x->msgs_per_s, fmt_count) :
					    (c >= 2 && !o->fifo_ok ? "not permitted" : "-"));
			if (seed_ok(x) && !strcmp(x->cell.sched.text, sched)) {
				const struct result **bp = !strcmp(cols[c][1], "same") ? &best_same : &best_split;

				if (!*bp || x->msgs_per_s > (*bp)->msgs_per_s)
					*bp = x;
			}
		}
		printf("\n");
	}
	if (!o->fifo_ok)
		printf("  %s\n", o->fifo_why);
	if (best_same && best_split)
		printf("Reading: under %s, %s was fastest on one CPU and %s across two; the best across two CPUs moved %.2fx the best on one.\n",
		       sched, best_same->transport, best_split->transport,
		       best_split->msgs_per_s / best_same->msgs_per_s);
	if (!seed_any_traced(r, n))
		return;
	static const char *const pl[] = { "none", "same", "split" };

	printf("Trace, migrations per message unpinned / same CPU / two CPUs (and the unpinned rate against two CPUs'):");
	for (int k = 0; k < (o->fifo_ok ? 2 : 1); k++) {
		const char *sc = k ? "fifo:90" : "other";

		printf("%s under %s", k ? ";" : "", sc);
		for (size_t i = 0; i < ARRAY_SIZE(tps); i++) {
			const struct result *none = seed_find(r, n, &(struct want){ .tp = tps[i], .pin = "none", .sched = sc });
			const struct result *split = seed_find(r, n, &(struct want){ .tp = tps[i], .pin = "split", .sched = sc });

			printf("%s %s", i ? "," : "", tps[i]);
			for (size_t j = 0; j < ARRAY_SIZE(pl); j++) {
				const struct result *x = seed_find(r, n, &(struct want){ .tp = tps[i], .pin = pl[j],
							      .sched = sc });

				if (seed_traced(x))
					printf("%s%.2g", j ? "/" : " ", x->trace.per_msg.migrations);
				else
					printf("%s-", j ? "/" : " ");
			}
			if (seed_ok(none) && seed_ok(split))
				printf(" (%.2fx)", none->msgs_per_s / split->msgs_per_s);
		}
	}
	seed_trace_cost(r, n);
	why_print(why_002(w, sizeof(w), best_same, best_split), w);
}

/* ---- seed 003: shared-memory ring latency, 1 msg/s vs flood, 1 vs 4 clients -------- */

/* Two specs, one plan: paced (a rate, a duration) and flood (a count). */
static unsigned plan_003(const struct suite_opts *o, struct plan_spec *s, char *err, size_t errlen)
{
	static const char *const pins[] = { "none", NULL };

	for (int i = 0; i < 2; i++) {
		seed_spec(o, &s[i], "seed-003");
		spec_pattern(&s[i], "pingpong");
		spec_sizes(&s[i], 64, 64);
		s[i].nclients = 2;
		s[i].clients[0] = 1;
		s[i].clients[1] = 4;
		if (spec_pins(&s[i], pins, err, errlen))
			return 0;
	}
	s[0].rate[0] = o->quick ? 20 : 1;
	snprintf(s[0].rate_text[0], sizeof(s[0].rate_text[0]), "%s", o->quick ? "20/s" : "1/s");
	s[0].duration_ns = (o->quick ? 1 : 6) * NSEC_PER_SEC;
	s[0].warmup = 1;
	s[0].warmup_set = true;
	s[1].count = o->quick ? 5000 : 20000;
	return 2;
}


/* The reader (the server, which waits for each request): its profile
 * grouped, when there is one, and its sleeps, flood (f) vs paced (p). */
static void print_003_trace(const struct result *r, size_t n, const struct result *f,
			    const struct result *p)
{
	const struct result *x[2] = { f, p };
	double g[2][PG_N];
	char w[WHY_LEN];
	uint64_t samples[2] = { seed_prof_groups(f, true, g[0]), seed_prof_groups(p, true, g[1]) };

	if (!seed_tside(f, true))
		return;
	if (samples[0] >= PROF_MIN_SAMPLES) {
		printf("Profile of %s's reader (server), copy / wait / syscall entry / wake path / other %% of its samples:",
		       f->transport);
		for (int k = 0; k < 2; k++)
			if (samples[k] >= PROF_MIN_SAMPLES || !k)
				printf("%s %s %.0f/%.0f/%.0f/%.0f/%.0f (%llu samples)", k ? ";" : "",
				       k ? "paced" : "flood", g[k][PG_COPY], g[k][PG_WAIT], g[k][PG_SYSCALL],
				       g[k][PG_WAKE], g[k][PG_OTHER], (unsigned long long)samples[k]);
		printf(".\n");
	}
	printf("Trace of %s's reader (server)", f->transport);
	if (!f->profile.on)
		printf(" (no --profile: copy vs wait vs syscall not split; its sleeps instead)");
	else if (samples[0] < PROF_MIN_SAMPLES)
		printf(" (its flood profile has %llu samples, too few to split copy vs wait vs syscall; its sleeps instead)",
		       (unsigned long long)samples[0]);
	printf(":");
	for (int k = 0; k < 2; k++) {
		const struct trace_side *t = seed_tside(x[k], true);

		if (!t || !x[k]->msgs)
			continue;
		printf("%s %s %.2f sleeps and %.2f wakeups per exchange, asleep %.0f %% and running %.0f %% of its window, woken to running p50 %s",
		       k ? ";" : "", k ? "paced" : "flood", (double)t->vol_cs / (double)x[k]->msgs,
		       (double)t->wakeups / (double)x[k]->msgs, seed_pct_of(t->sleep_ns, t->wall_ns),
		       seed_pct_of(t->user_ns + t->sys_ns, t->wall_ns),
		       t->lat_count ? fmt_ns((char[32]){ 0 }, 32, (double)t->lat_p50_ns) : "-");
	}
	seed_trace_cost(r, n);
	why_print(why_003(w, sizeof(w), f, p), w);
}

static void print_003(const struct suite_opts *o, const struct result *r, size_t n)
{
	static const char *const tps[] = { "ring-ipc", "libqb-ipc", "ring", "libqb-rb", "shm-futex",
					   "shm-eventfd", "shm-sem", "unix-stream" };
	const double rate = o->quick ? 20 : 1;
	const struct result *fast = NULL;
	char b[5][32];

	printf("64 B ping-pong round trip: paced at %.0f msg/s (the reader sleeps between messages) vs flood\n",
	       rate);
	printf("  %-12s %7s %12s %12s %12s %12s %12s\n", "transport", "clients", "paced p50",
	       "paced p99", "timer late", "flood p50", "flood exch/s");
	for (size_t i = 0; i < ARRAY_SIZE(tps); i++) {
		for (unsigned c = 1; c <= 4; c += 3) {
			const struct result *p = seed_find(r, n, &(struct want){ .tp = tps[i], .clients = c,
						      .by_rate = true, .rate = rate });
			const struct result *f = seed_find(r, n, &(struct want){ .tp = tps[i], .clients = c,
						      .by_rate = true, .rate = 0 });

			if (!p && !f)
				continue;
			if (p && p->status == RES_SKIPPED && c == 1) {
				printf("  %-12s %7u  skipped: %s\n", tps[i], c, p->reason);
				continue;
			}
			if (p && p->status == RES_SKIPPED)
				continue;
			printf("  %-12s %7u %12s %12s %12s %12s %12s\n", tps[i], c,
			       seed_val(b[0], 32, p, seed_ok(p) ? (double)p->lat_p50_ns : 0, fmt_ns),
			       seed_val(b[1], 32, p, seed_ok(p) ? (double)p->lat_p99_ns : 0, fmt_ns),
			       seed_val(b[4], 32, p, seed_ok(p) ? (double)p->send_late_p50_ns : 0,
					fmt_ns),
			       seed_val(b[2], 32, f, seed_ok(f) ? (double)f->lat_p50_ns : 0, fmt_ns),
			       seed_val(b[3], 32, f, seed_ok(f) ? f->msgs_per_s : 0, fmt_count));
			if (seed_ok(f) && c == 1 && (!fast || f->lat_p50_ns < fast->lat_p50_ns))
				fast = f;
		}
	}
	if (!fast)
		return;
	const struct result *fp = seed_find(r, n, &(struct want){ .tp = fast->transport, .clients = 1,
					.by_rate = true, .rate = rate });
	const struct result *f4 = seed_find(r, n, &(struct want){ .tp = fast->transport, .clients = 4,
					.by_rate = true, .rate = rate });

	printf("Reading: %s had the lowest flood round trip (%s)", fast->transport,
	       fmt_ns(b[0], 32, (double)fast->lat_p50_ns));
	if (seed_ok(fp)) {
		printf("; paced at %.0f/s its round trip, timed from the actual send, was %.1fx "
		       "the flood one", rate, (double)fp->lat_p50_ns / (double)fast->lat_p50_ns);
		if (fp->paced_samples)
			printf(" (timed from the intended send, %.1fx: the sender's timer woke %s "
			       "late at the median)",
			       (double)fp->lat_intended_p50_ns / (double)fast->lat_p50_ns,
			       fmt_ns(b[4], 32, (double)fp->send_late_p50_ns));
	}
	if (seed_ok(fp) && seed_ok(f4))
		printf(", and 4 paced clients gave %.2fx the p50 of 1", (double)f4->lat_p50_ns /
								       (double)fp->lat_p50_ns);
	printf(".\n");
	print_003_trace(r, n, fast, fp);
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
static void print_004_trace(const struct result *r, size_t n, const struct result *pp,
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
	seed_trace_cost(r, n);
}

static void print_004(const struct suite_opts *o, const struct result *r, size_t n)
{
	static const struct { const char *tp, *label; enum want_ep ep; } rows[] = {
		{ "pipe", "processes synchronised by a pipe", EP_PROCESS },
		{ "pipe", "threads synchronised by a pipe", EP_THREAD },
		{ "barrier", "threads synchronised by a pthread_barrier", EP_THREAD },
	};
	static const char *const pins[] = { "none", "same", "split" };
	const struct result *pp = seed_find(r, n, &(struct want){ .tp = "pipe", .pin = "none", .ep = EP_PROCESS });
	const struct result *pt = seed_find(r, n, &(struct want){ .tp = "pipe", .pin = "none", .ep = EP_THREAD });
	const struct result *ps = seed_find(r, n, &(struct want){ .tp = "pipe", .pin = "same", .ep = EP_PROCESS });
	char b[32], w[WHY_LEN];

	(void)o;
	printf("Exchanges/second (a 16 B request answered by a 16 B reply)\n");
	printf("  %-44s %12s %12s %12s\n", "", "unpinned", "same CPU", "two CPUs");
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		printf("  %-44s", rows[i].label);
		for (size_t k = 0; k < ARRAY_SIZE(pins); k++) {
			const struct result *x = seed_find(r, n, &(struct want){ .tp = rows[i].tp,
						      .pin = pins[k], .ep = rows[i].ep });

			printf(" %12s", seed_val(b, sizeof(b), x, seed_ok(x) ? x->msgs_per_s : 0, fmt_count));
		}
		printf("\n");
	}
	if (seed_ok(pp) && seed_ok(pt))
		printf("Reading: unpinned, threads exchanged %.2fx as often as processes over a pipe",
		       pt->msgs_per_s / pp->msgs_per_s);
	if (seed_ok(pp) && seed_ok(ps))
		printf("; pinning both processes to one CPU gave %.2fx the unpinned rate",
		       ps->msgs_per_s / pp->msgs_per_s);
	if (seed_ok(pp))
		printf(".\n");
	print_004_trace(r, n, pp, pt);
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

/* Repetitions: 5 (3 with --quick); the seed-001 grid 3 (1); seed-003's
 * paced cells take seconds each: one long run instead. */
const struct seed seeds[] = {
	{ "seed-000", "pipes vs POSIX message queues vs unix sockets, 4 KiB, normal vs SCHED_FIFO",
	  plan_000, tp_000, 5, 3, print_000, pick_000 },
	{ "seed-000-cycle", "what seed 000 asked for: a JACK-like graph of wakeups against a deadline (xruns)",
	  plan_000_cycle, tp_000_cycle, 1, 1, print_000_cycle, NULL },
	{ "seed-001", "two processes piping data with compute between writes: CPU % over size x think",
	  plan_001, tp_001, 3, 1, print_001, pick_001 },
	{ "seed-002", "pipe / socket / queue, same CPU vs different CPUs, realtime and not",
	  plan_002, tp_002, 5, 3, print_002, pick_002 },
	{ "seed-003", "shared-memory ring latency: 1 msg/s vs flood, 1 vs 4 clients, wakeup kinds",
	  plan_003, tp_003, 1, 1, print_003, pick_003 },
	{ "seed-004", "ping-pong exchanges: processes vs threads, pipe vs barrier, placement",
	  plan_004, tp_004, 5, 3, print_004, pick_004 },
};
const size_t n_seeds = ARRAY_SIZE(seeds);
