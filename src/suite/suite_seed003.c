// SPDX-License-Identifier: MIT
/* Seed 003 of `ipclab suite seeds`: a 64 B ping-pong round trip paced at
 * 1 msg/s (the reader sleeps between messages) against a flood, 1 and 4
 * clients, over the shared-memory rings and the wakeups they use; a row a
 * transport and client count, read from the trace and profile when there. */
#include <stdio.h>
#include <string.h>

#include "suite_int.h"
#include "suite_question.h"
#include "suite_why.h"

/* ---- seed 003: shared-memory ring latency, 1 msg/s vs flood, 1 vs 4 clients -------- */

/* Two specs, one plan: paced (a rate, a duration) and flood (a count). */
unsigned plan_003(const struct suite_opts *o, struct plan_spec *s, char *err, size_t errlen)
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
	/* the paced cells' kernel time exact (syscall probes: a few hundred
	 * calls in the window); getrusage's tick-sampled user/kernel split
	 * of a side that ran a few ms calls any of it user work */
	s[0].trace_syscalls = o->trace;
	s[0].warmup = 1;
	s[0].warmup_set = true;
	s[1].count = o->quick ? 5000 : 20000;
	return 2;
}


/* The reader (the server, which waits for each request): its profile
 * grouped, when there is one, and its sleeps, flood (f) vs paced (p). */
static void print_003_trace(const struct seed_cells *c, const struct result *f,
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
	seed_trace_cost(c);
	why_print(why_003(w, sizeof(w), f, p), w);
}

/* Seed 003's table: a row a transport and client count, its paced cell's
 * round trip and timer, its flood cell's round trip and rate. */
static const struct rows_col cols_003[] = {
	{ .key = "transport", .width = -12 }, { .key = "clients", .width = 7 },
	{ .label = "paced p50", .key = "lat_p50_ns", .width = 12 },
	{ .label = "paced p99", .key = "lat_p99_ns", .width = 12 },
	{ .label = "timer late", .key = "send_late_p50_ns", .width = 12 },
	{ .label = "flood p50", .key = "lat_p50_ns", .width = 12 },
	{ .label = "flood exch/s", .key = "msgs_per_s", .width = 12 },
};
static const struct rows table_003 = { .cols = cols_003, .ncols = ARRAY_SIZE(cols_003) };

/* One row: 0 printed, 1 not (neither cell, or a paced cell skipped). */
static int row_003(const struct result *p, const struct result *f, unsigned ci)
{
	const struct result *x = p ? p : f;
	struct rows_row row = { .r = { x, x, p, p, p, f, f } };
	char rest[ERRLEN + 16];

	if (!x || (p && p->status == RES_SKIPPED && ci != C003_ONE))
		return 1;
	if (p && p->status == RES_SKIPPED) {
		snprintf(rest, sizeof(rest), " skipped: %s", p->reason);
		row.rest = rest;
		row.rest_at = 2;
	}
	rows_line(stdout, &table_003, &row);
	return !!row.rest;
}

static void print_003_reading(const struct seed_cells *c, const struct result *fast, unsigned t,
			      double rate)
{
	const struct result *fp = seed_cell(c, SPEC003_PACED, &(struct plan_pick){ .tp = t,
					    .clients = C003_ONE });
	const struct result *f4 = seed_cell(c, SPEC003_PACED, &(struct plan_pick){ .tp = t,
					    .clients = C003_FOUR });
	char b[2][32];

	printf("Reading: %s had the lowest flood round trip (%s)", fast->transport,
	       fmt_ns(b[0], 32, (double)fast->lat_p50_ns));
	if (seed_ok(fp)) {
		printf("; paced at %.0f/s its round trip, timed from the actual send, was %.1fx "
		       "the flood one", rate, (double)fp->lat_p50_ns / (double)fast->lat_p50_ns);
		if (fp->paced_samples)
			printf(" (timed from the intended send, %.1fx: the sender's timer woke %s "
			       "late at the median)",
			       (double)fp->lat_intended_p50_ns / (double)fast->lat_p50_ns,
			       fmt_ns(b[1], 32, (double)fp->send_late_p50_ns));
	}
	if (seed_ok(fp) && seed_ok(f4))
		printf(", and 4 paced clients gave %.2fx the p50 of 1", (double)f4->lat_p50_ns /
								       (double)fp->lat_p50_ns);
	printf(".\n");
	print_003_trace(c, fast, fp);
}

void print_003(const struct suite_opts *o, const struct seed_cells *c)
{
	const double rate = o->quick ? 20 : 1;
	const struct result *fast = NULL;
	unsigned fast_tp = 0;

	printf("64 B ping-pong round trip: paced at %.0f msg/s (the reader sleeps between messages) vs flood\n",
	       rate);
	rows_head(stdout, &table_003);
	for (unsigned t = 0; t < c->spec[SPEC003_PACED].ntp; t++) {
		for (unsigned ci = C003_ONE; ci <= C003_FOUR; ci++) {
			struct plan_pick k = { .tp = t, .clients = ci };
			const struct result *p = seed_cell(c, SPEC003_PACED, &k);
			const struct result *f = seed_cell(c, SPEC003_FLOOD, &k);

			if (row_003(p, f, ci))
				continue;
			if (seed_ok(f) && ci == C003_ONE && (!fast || f->lat_p50_ns < fast->lat_p50_ns)) {
				fast = f;
				fast_tp = t;
			}
		}
	}
	if (fast)
		print_003_reading(c, fast, fast_tp, rate);
	if (c->why) {	/* the client/server ring the thread measured: the list's first */
		const char *tp = c->spec[SPEC003_PACED].ntp ? c->spec[SPEC003_PACED].tp[0]->name : "ring-ipc";
		const struct result *f1 = seed_cell(c, SPEC003_FLOOD, &(struct plan_pick){ .clients = C003_ONE });
		const struct result *p1 = seed_cell(c, SPEC003_PACED, &(struct plan_pick){ .clients = C003_ONE });
		const struct result *p4 = seed_cell(c, SPEC003_PACED, &(struct plan_pick){ .clients = C003_FOUR });

		sq_003(c->why, tp, f1, p1, p4, rate);
		sq_print(stdout, c->why);
	}
}
