// SPDX-License-Identifier: MIT
/* cycle: an audio server's period (cycle.h). The driver (the server
 * side) wakes on an absolute periodic timer, as an audio interrupt would,
 * and starts the graph: in a chain it passes a buffer of S bytes to
 * stage 1, which processes it (--think) and passes it to stage 2 ... the
 * last hands it back to the driver; in a fan it wakes every stage at once
 * and waits for all of them. A cycle that completes after its deadline is
 * an xrun. Every hop is a channel of its own; every message is checked.
 *
 * The schedule is absolute: cycle k is due at T0 + k x period, whatever
 * happened before. A cycle the driver cannot start before its deadline has
 * passed is counted as a late start (and an xrun), not run and never
 * silently dropped: the next one due is started instead, as an audio
 * server skips to the next period after an xrun. Warm-up cycles are always
 * run, so that every stage knows which message opens the window.
 *
 * The pattern owns its knobs and its results: its plan hook (here) parses
 * --period and derives the warm-up and the watchdog from it; each side
 * counts into a record of its own (struct cycle_side, side_stats.pat),
 * folded into the result by collect.c; its fields and sections of
 * the result record are report/out.c's (cycle_report, listed
 * in src/report/pat_reports.c). */
#include <errno.h>
#include <stdatomic.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "int.h"

static const struct opt_desc cycle_options[] = {
	{ .name = "shape", .type = OPT_CHOICE, .offset = offsetof(struct cycle_opts, shape),
	  .def = "chain", .choices = "chain|fan",
	  .help = "chain: driver -> stage 1 -> ... -> driver; fan: the driver wakes every stage at once and waits for all" },
	{ .name = "deadline", .type = OPT_DURATION,
	  .offset = offsetof(struct cycle_opts, deadline_ns), .def = "0", .max = CYCLE_MAX_PERIOD_NS,
	  .help = "a cycle completing later than this after its intended start is an xrun (0 = the period)" },
	{ .name = "timer_slack", .type = OPT_DURATION,
	  .offset = offsetof(struct cycle_opts, timer_slack_ns), .def = "1ns", .min = 1,
	  .max = 1000000000ull,
	  .help = "the driver's timer slack (PR_SET_TIMERSLACK): 1ns as for a realtime thread; 50us is the kernel's default for others" },
	{ .name = "think_stage", .type = OPT_UINT,
	  .offset = offsetof(struct cycle_opts, think_stage), .def = "0", .max = CYCLE_MAX_STAGES,
	  .help = "only this stage (1 = the first) does the --think work, the others pass the buffer on at once (0 = every stage): which stage makes the xruns" },
	{ 0 },
};

/* ---- the period, at plan time ------------------------------------------- */

int cycle_period_parse(const char *s, uint64_t *ns, char *err, size_t errlen)
{
	const char *at = s ? strchr(s, '@') : NULL;
	uint64_t v;

	if (!s || !*s) {
		snprintf(err, errlen, "--period: expected a time (1.333ms) or FRAMES@RATE (64@48000)");
		return -EINVAL;
	}
	if (at) {
		char frames[32];
		uint64_t f, rate;
		size_t n = (size_t)(at - s);

		if (n == 0 || n >= sizeof(frames)) {
			snprintf(err, errlen, "--period %s: expected FRAMES@RATE, e.g. 64@48000", s);
			return -EINVAL;
		}
		memcpy(frames, s, n);
		frames[n] = '\0';
		if (parse_u64(frames, &f) || parse_u64(at + 1, &rate) || !f || !rate ||
		    f > 1000000000ull || rate > 10000000ull) {
			snprintf(err, errlen, "--period %s: expected FRAMES@RATE with whole numbers, e.g. 64@48000 or 256@44100", s);
			return -EINVAL;
		}
		v = (uint64_t)llround((double)f * 1e9 / (double)rate);
	} else if (parse_duration(s, &v)) {
		snprintf(err, errlen, "--period %s: expected a time (1.333ms, 500us) or FRAMES@RATE (64@48000)", s);
		return -EINVAL;
	}
	if (v < CYCLE_MIN_PERIOD_NS || v > CYCLE_MAX_PERIOD_NS) {
		snprintf(err, errlen, "--period %s (%llu ns): a period must be %llu us to %llu s; use a longer or shorter one",
			 s, (unsigned long long)v, CYCLE_MIN_PERIOD_NS / 1000,
			 CYCLE_MAX_PERIOD_NS / 1000000000ull);
		return -ERANGE;
	}
	*ns = v;
	return 0;
}

const struct cycle_cell *cycle_cell_of(const struct cell *c)
{
	return c && c->pat == &pat_cycle ? cycle_cell(c) : NULL;
}

const struct cycle_result *cycle_result_of(const struct result *r)
{
	return r && r->cell.pat == &pat_cycle ? (const struct cycle_result *)r->pat_result : NULL;
}

/* The knobs: a period, long enough for the timer and for every hop, and
 * no --rate (the period paces it). -EINVAL with why. */
static int check_knobs(const struct cell *c, const struct cycle_cell *cc, char *err, size_t errlen)
{
	const struct cycle_opts *o = c->pat_opts;
	const unsigned nst = c->clients ? c->clients : 1;
	const char *name = c->pat->name;
	struct timespec res;
	uint64_t hops = (uint64_t)c->clients + 1, res_ns;

	if (c->rate > 0) {
		snprintf(err, errlen, "-p %s is paced by --period; drop --rate", name);
		return -EINVAL;
	}
	res_ns = clock_getres(CLOCK_MONOTONIC, &res) == 0 ?
		 (uint64_t)res.tv_sec * NSEC_PER_SEC + (uint64_t)res.tv_nsec : 1;
	if (cc->period_ns <= 2 * res_ns) {
		snprintf(err, errlen, "--period %s is not longer than twice the timer's resolution here (%llu ns); use a longer period",
			 cc->period_text, (unsigned long long)res_ns);
		return -EINVAL;
	}
	if (o->think_stage > nst) {
		snprintf(err, errlen, "-O think_stage=%llu: the cell has %u stages; use 1 to %u, or 0 for every stage",
			 (unsigned long long)o->think_stage, nst, nst);
		return -EINVAL;
	}
	if (cc->period_ns < hops * CYCLE_MIN_HOP_NS) {
		snprintf(err, errlen, "--period %s is too short for %u stages: %llu hops need at least %llu us (%llu us each); use a longer period or fewer --clients",
			 cc->period_text, c->clients, (unsigned long long)hops,
			 (unsigned long long)(hops * CYCLE_MIN_HOP_NS / 1000),
			 (unsigned long long)(CYCLE_MIN_HOP_NS / 1000));
		return -EINVAL;
	}
	return 0;
}

int cycle_plan(struct cell *c, struct pat_plan *pp, char *err, size_t errlen)
{
	struct cycle_cell *cc = (struct cycle_cell *)c->pat_cell;
	const struct cycle_opts *o = c->pat_opts;
	int ret;

	if (!pp->period || !pp->period[0]) {
		snprintf(err, errlen, "-p %s needs --period: a time (1.333ms) or FRAMES@RATE (64@48000)",
			 c->pat->name);
		return -EINVAL;
	}
	if (cycle_period_parse(pp->period, &cc->period_ns, err, errlen))
		return -EINVAL;
	snprintf(cc->period_text, sizeof(cc->period_text), "%s", pp->period);
	cc->deadline_ns = o->deadline_ns ? o->deadline_ns : cc->period_ns;
	if ((ret = check_knobs(c, cc, err, errlen)))
		return ret;
	/* it warms up for 100 ms of periods (at least one) */
	if (!pp->warmup_set) {
		uint64_t w = 100 * NSEC_PER_MSEC / cc->period_ns;

		c->warmup = w < 1 ? 1 : w < c->warmup ? w : c->warmup;
	}
	/* it moves a message once a period: the no-progress watchdog waits
	 * two periods and the deadline, and a second, at least */
	if (c->timeout_ns) {
		uint64_t need = 2 * (cc->period_ns + cc->deadline_ns) + NSEC_PER_SEC;

		if (c->timeout_ns < need)
			c->timeout_ns = need;
	}
	if (!c->duration_ns)	/* one graph pass a period */
		pp->expect_ns = (double)(c->count + c->warmup) * (double)cc->period_ns;
	return 0;
}

/* ---- channels and endpoints -------------------------------------------- */

static unsigned stages(const struct cell *c)
{
	return c->clients ? c->clients : 1;
}

static bool is_chain(const struct cell *c)
{
	return cycle_is_chain(c);
}

/* chain: hop h goes from stage h-1 (the driver for h = 0) to stage h (the
 * driver for h = N), on channel h, always server -> client; fan: channel i
 * joins the driver (server) and stage i (client), both ways. */
static unsigned cycle_channels(const struct cell *c)
{
	return stages(c) + (is_chain(c) ? 1 : 0);
}

static int open_one(struct participant *p, unsigned ch, enum tp_role role,
		    struct tp_endpoint **ep)
{
	char err[ERRLEN];
	int ret;

	if (ch >= p->nch)
		return pat_fail(p, EINVAL, "no channel %u (%u made)", ch, p->nch);
	ret = p->cell->tp->open(&p->chs[ch], role, 0, ep, err, sizeof(err));
	return ret ? pat_fail(p, -ret, "%s", err) : 0;
}

/* The driver opens its server ends first, then its client end; a stage its
 * client end first, then its server end: then a transport whose open waits
 * for the peer's (a FIFO, an accept) meets every peer in turn around the
 * ring, and one whose open does not wait is not affected. */
static int cycle_open(struct participant *p)
{
	const struct cell *c = p->cell;
	unsigned n = stages(c);
	int ret = 0;

	if (p->role == TP_SERVER) {
		if (is_chain(c)) {
			ret = open_one(p, 0, TP_SERVER, &p->eps[0]);
			if (!ret && (ret = open_one(p, n, TP_CLIENT, &p->eps[1]))) {
				c->tp->close(p->eps[0]);
				p->eps[0] = NULL;
			}
		} else {
			for (unsigned i = 0; i < n && !ret; i++)
				ret = open_one(p, i, TP_SERVER, &p->eps[i]);
			for (unsigned i = 0; ret && i < n; i++)
				if (p->eps[i]) {
					c->tp->close(p->eps[i]);
					p->eps[i] = NULL;
				}
		}
		p->ep = p->eps[0];
		return ret;
	}
	ret = open_one(p, p->id, TP_CLIENT, &p->ep);
	if (ret)
		return ret;
	if (!is_chain(c)) {
		p->next = p->ep;
		return 0;
	}
	ret = open_one(p, p->id + 1, TP_SERVER, &p->next);
	if (ret) {
		c->tp->close(p->ep);
		p->ep = NULL;
	}
	return ret;
}

/* Closed in the order they were opened: a transport whose close waits for
 * its peer's (an end handshake) then meets every peer in turn around the
 * ring too, where any other order would leave each side waiting on the
 * next. */
static void cycle_close(struct participant *p)
{
	const struct transport *tp = p->cell->tp;

	if (p->role == TP_SERVER) {
		for (unsigned i = 0; i < MAX_CLIENTS; i++)
			if (p->eps[i])
				tp->close(p->eps[i]);
		return;
	}
	if (p->ep)
		tp->close(p->ep);
	if (p->next && p->next != p->ep)
		tp->close(p->next);
}

/* ---- the driver ---------------------------------------------------------- */

/* One pass of buffer m through the graph; 0, or an error. */
static int run_graph(struct participant *p, uint32_t m, uint32_t flags)
{
	const struct cell *c = p->cell;
	const struct msg_hdr *h;
	int ret;

	if (is_chain(c)) {
		ret = pat_send(p, p->eps[0], m, flags, now_ns());
		if (!ret)
			ret = pat_recv(p, p->eps[1], m, &h, false);
		return ret;
	}
	for (unsigned i = 0; i < stages(c); i++)
		if ((ret = pat_send(p, p->eps[i], m, flags, now_ns())))
			return ret;
	for (unsigned i = 0; i < stages(c); i++)
		if ((ret = pat_recv(p, p->eps[i], m, &h, false)))
			return ret;
	return 0;
}

/* A cycle in the window whose deadline passed before it could start. */
static void late_start(struct participant *p, struct cycle_side *cs)
{
	cs->cycles++;
	cs->xruns++;
	cs->late_starts++;
	cs->causes[XC_LATE_START]++;
	cycle_series_add(&cs->series, UINT64_MAX, true);
	atomic_store_explicit(&cs->cycles_live, cs->cycles, memory_order_relaxed);
	atomic_store_explicit(&cs->xruns_live, cs->xruns, memory_order_relaxed);
}

/* A cycle in the window that ran (buffer m): its completion, and an
 * xrun's cause; cp holds its start, *lost0 --trace's lost time at the
 * previous cycle's end. */
static void count_cycle(struct participant *p, struct cycle_side *cs, uint32_t m, uint64_t due,
			struct cycle_parts *cp, uint64_t *lost0)
{
	uint64_t lost = 0;
	bool xrun;

	cp->completion_ns = cp->done_ns - due;
	cp->deadline_ns = cycle_cell(p->cell)->deadline_ns;
	xrun = cp->completion_ns > cp->deadline_ns;
	if (cs->traced && pat_lost_ns(p, &lost)) {
		cp->driver_lost_ns = lost > *lost0 ? lost - *lost0 : 0;
		*lost0 = lost;
	}
	hist_add(p->st->hist, cp->completion_ns);
	pat_mark(p, due, cp->done_ns);
	cs->cycles++;
	cs->xruns += xrun;
	if (xrun)
		cycle_cause_count(p, cs, m, cp);
	cycle_series_add(&cs->series, cp->completion_ns, xrun);
	atomic_store_explicit(&cs->cycles_live, cs->cycles, memory_order_relaxed);
	atomic_store_explicit(&cs->xruns_live, cs->xruns, memory_order_relaxed);
}

/* The end of the window: what moved (a chain's buffer crosses every hop
 * once, a fan's goes out to each stage and back; a late start moved
 * nothing). */
static void window_done(struct participant *p, struct cycle_side *cs)
{
	const struct cell *c = p->cell;

	p->st->msgs = cs->cycles;
	p->st->bytes = (cs->cycles - cs->late_starts) * c->size *
		       (is_chain(c) ? stages(c) + 1 : 2 * stages(c));
	pat_window_end(p);
}

/* The driver: the absolute schedule, late starts, the timer's lateness,
 * one pass of the graph and its completion per cycle (one loop; the
 * branches are the cases of the schedule the header comment names). */
static int cycle_driver(struct participant *p)
{
	const struct cell *c = p->cell;
	const uint64_t period = cycle_cell(c)->period_ns, deadline = cycle_cell(c)->deadline_ns;
	struct cycle_side *cs = p->st->pat;
	uint64_t measured = c->duration_ns ? (c->duration_ns + period / 2) / period : c->count;
	uint64_t total = c->warmup + (measured ? measured : 1);
	uint64_t t0, k, lost0 = 0;
	uint32_t m = 0;		/* buffers sent through the graph so far */
	int ret;

	if (!period || !cs)
		return pat_fail(p, EINVAL, "no period (the cell was planned without --period)");
	if ((ret = pat_hist_open(p)))
		return ret;
	/* an audio driver's wake is exact; a non-realtime thread's timers
	 * are otherwise deferred by up to its slack (50 us by default) */
	if (prctl(PR_SET_TIMERSLACK, ((const struct cycle_opts *)c->pat_opts)->timer_slack_ns, 0, 0,
		  0) < 0)
		return pat_fail(p, errno, "prctl(PR_SET_TIMERSLACK): %s", strerror(errno));
	cycle_series_init(&cs->series);
	hist_init(&cs->b);
	cs->traced = pat_lost_ns(p, &lost0);
	/* the first period starts one period from now: every side is past the
	 * start barrier and asleep in its receive by then */
	t0 = now_ns() + period;
	for (k = 0; k < total; k++) {
		const uint64_t due = t0 + k * period;
		const bool in_window = k >= c->warmup;
		uint64_t now = now_ns();
		struct cycle_parts cp = { 0 };

		if (k == c->warmup) {
			pat_window_begin(p);
			if (cs->traced)
				pat_lost_ns(p, &lost0);
		}
		if (in_window && now > due + deadline) {
			/* its deadline passed before it could start */
			late_start(p, cs);
			pat_progress(p, k + 1);
			continue;
		}
		if (now < due) {
			pat_wait_until(p, due);
			if (pat_stopping(p))
				return -EINTR;
			/* the timer's lateness; behind schedule, a cycle starts at
			 * once and there is no wake to time */
			now = now_ns();
			cp.slept = true;
			if (in_window)
				hist_add(&cs->b, now - due);
		}
		cp.start_late_ns = now > due ? now - due : 0;
		ret = run_graph(p, m++, 0);
		if (ret)
			return ret;
		cp.done_ns = now_ns();
		if (in_window)
			count_cycle(p, cs, m - 1, due, &cp, &lost0);
		pat_progress(p, k + 1);
		if (pat_stopping(p))
			return -EINTR;
	}
	window_done(p, cs);
	/* the end marker: every stage forwards it and leaves */
	return run_graph(p, m, MSG_F_END);
}

/* ---- a stage ------------------------------------------------------------- */

static int cycle_stage(struct participant *p)
{
	const struct cell *c = p->cell;
	const struct cycle_opts *opts = c->pat_opts;
	struct cycle_side *cs = p->st->pat;
	const struct msg_hdr *h;
	uint64_t got = 0;
	int ret;

	if (!cs)
		return pat_fail(p, EINVAL, "no record of the cycle's own (the runner made none)");
	if (!p->st->hist)
		return pat_fail(p, EINVAL, "no latency histogram (the runner mapped none)");
	hist_init(&cs->b);
	for (uint32_t m = 0;; m++) {
		uint64_t t_in, t_out, sent_at;
		uint32_t end;

		if (m == c->warmup)
			pat_window_begin(p);
		ret = pat_recv(p, p->ep, m, &h, false);
		if (ret)
			return ret;
		t_in = now_ns();
		sent_at = h->ts_ns;
		end = h->len & MSG_F_END;
		if (!end && (!opts->think_stage || opts->think_stage == p->id + 1))
			pat_think(p);
		t_out = now_ns();
		if (!end)
			cycle_cause_publish(p, cs, m, t_in > sent_at ? t_in - sent_at : 0, t_in, t_out);
		ret = pat_send(p, p->next, m, end, t_out);
		if (ret)
			return ret;
		if (end)
			break;
		if (m >= c->warmup) {
			/* a clock read on the same machine: CLOCK_MONOTONIC is one clock */
			hist_add(p->st->hist, t_in > sent_at ? t_in - sent_at : 0);
			hist_add(&cs->b, t_out - t_in);
			pat_mark(p, t_in, t_out);
			got++;
		}
		pat_progress(p, m + 1);
		if (pat_stopping(p))
			return -EINTR;
	}
	p->st->msgs = got;
	p->st->bytes = got * c->size;
	pat_window_end(p);
	return 0;
}

/* For --trace's cause split (struct pattern.cycles_of). */
static bool cycle_cycles_of(const struct result *r, uint64_t *cycles, bool *chain)
{
	const struct cycle_result *cy = cycle_result_of(r);

	if (!cy || !cy->on)
		return false;
	*cycles = cy->cycles;
	*chain = strcmp(cy->shape, "fan") != 0;
	return true;
}

const struct pattern pat_cycle = {
	.name = "cycle",
	.summary = "a periodic graph with a deadline, as an audio server runs it (xruns, completion time, per-stage wait and busy)",
	.lat_kind = LAT_PERIOD,
	.reference = PAT_REF_NONE,
	.options = cycle_options,
	.opts_size = sizeof(struct cycle_opts),
	.server = cycle_driver,
	.client = cycle_stage,
	.channels = cycle_channels,
	.open = cycle_open,
	.close = cycle_close,
	.periodic = true,
	.period_parse = cycle_period_parse,
	.plan = cycle_plan,
	.reliable_why = "passes one buffer through every stage each period",
	.mark_name = "cycle (driver: completion, stage: busy)",
	.side_size = sizeof(struct cycle_side),
	.collect = cycle_collect,
	.collect_trace = cycle_collect_trace,
	.live = cycle_live,
	.cycles_of = cycle_cycles_of,
	.period_name = "cycle",
	.period_figure = "cycle_ns",
};
