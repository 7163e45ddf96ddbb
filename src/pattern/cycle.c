// SPDX-License-Identifier: MIT
/* cycle: an audio server's period (ipclab/cycle.h). The driver (the
 * server side) wakes on an absolute periodic timer, as an audio interrupt
 * would, and starts the graph: in a chain it passes a buffer of S bytes to
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
 * run, so that every stage knows which message opens the window. */
#include <errno.h>
#include <stdatomic.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "common.h"

enum { SHAPE_CHAIN, SHAPE_FAN };

struct cycle_opts {
	int shape;
	uint64_t deadline_ns;	/* 0 = the period */
	uint64_t timer_slack_ns;
};

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
	{ 0 },
};

/* ---- the period and the series ------------------------------------------ */

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

void cycle_series_init(struct cycle_series *s)
{
	memset(s, 0, sizeof(*s));
	s->per = 1;
}

void cycle_series_add(struct cycle_series *s, uint64_t completion_ns, bool xrun)
{
	if (s->n == 0 || s->in_last == s->per) {
		if (s->n == CYCLE_SERIES_MAX) {
			/* fold neighbours: half the points, each twice as many cycles */
			for (uint32_t i = 0; i < CYCLE_SERIES_MAX / 2; i++) {
				uint64_t a = s->max_ns[2 * i], b = s->max_ns[2 * i + 1];

				/* UINT64_MAX: no cycle of that point ran */
				s->max_ns[i] = a == UINT64_MAX ? b : b == UINT64_MAX ? a : a > b ? a : b;
				s->xruns[i] = s->xruns[2 * i] + s->xruns[2 * i + 1];
			}
			s->n = CYCLE_SERIES_MAX / 2;
			s->per *= 2;
			s->in_last = s->per;	/* the last merged point is full */
		}
		if (s->n == 0 || s->in_last == s->per) {
			s->max_ns[s->n] = UINT64_MAX;
			s->xruns[s->n] = 0;
			s->n++;
			s->in_last = 0;
		}
	}
	/* a late start (UINT64_MAX) counts as an xrun but has no completion */
	if (completion_ns != UINT64_MAX &&
	    (s->max_ns[s->n - 1] == UINT64_MAX || completion_ns > s->max_ns[s->n - 1]))
		s->max_ns[s->n - 1] = completion_ns;
	s->xruns[s->n - 1] += xrun;
	s->in_last++;
}

/* ---- channels and endpoints -------------------------------------------- */

static unsigned stages(const struct cell *c)
{
	return c->clients ? c->clients : 1;
}

static bool is_chain(const struct cell *c)
{
	return ((const struct cycle_opts *)c->pat_opts)->shape == SHAPE_CHAIN;
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

const char *cycle_shape_name(const struct cell *c)
{
	return is_chain(c) ? "chain" : "fan";
}

uint64_t cycle_deadline_ns(const struct cell *c)
{
	const struct cycle_opts *o = c->pat_opts;

	return o->deadline_ns ? o->deadline_ns : c->period_ns;
}

/* The driver: the absolute schedule, late starts, the timer's lateness,
 * one pass of the graph and its completion per cycle (one loop; the
 * branches are the cases of the schedule the header comment names). */
static int cycle_driver(struct participant *p)
{
	const struct cell *c = p->cell;
	const uint64_t period = c->period_ns, deadline = cycle_deadline_ns(c);
	struct cycle_side *cs = &p->st->cyc;
	uint64_t measured = c->duration_ns ? (c->duration_ns + period / 2) / period : c->count;
	uint64_t total = c->warmup + (measured ? measured : 1);
	uint64_t t0, k;
	uint32_t m = 0;		/* buffers sent through the graph so far */
	int ret;

	if (!period)
		return pat_fail(p, EINVAL, "no period (the cell was planned without --period)");
	p->st->has_hist = true;
	/* an audio driver's wake is exact; a non-realtime thread's timers
	 * are otherwise deferred by up to its slack (50 us by default) */
	if (prctl(PR_SET_TIMERSLACK, ((const struct cycle_opts *)c->pat_opts)->timer_slack_ns, 0, 0,
		  0) < 0)
		return pat_fail(p, errno, "prctl(PR_SET_TIMERSLACK): %s", strerror(errno));
	cycle_series_init(&cs->series);
	hist_init(&cs->b);
	/* the first period starts one period from now: every side is past the
	 * start barrier and asleep in its receive by then */
	t0 = now_ns() + period;
	for (k = 0; k < total; k++) {
		const uint64_t due = t0 + k * period;
		const bool in_window = k >= c->warmup;
		uint64_t now = now_ns(), done;

		if (k == c->warmup)
			pat_window_begin(p);
		if (in_window && now > due + deadline) {
			/* its deadline passed before it could start */
			cs->cycles++;
			cs->xruns++;
			cs->late_starts++;
			cycle_series_add(&cs->series, UINT64_MAX, true);
			atomic_store_explicit(&cs->cycles_live, cs->cycles, memory_order_relaxed);
			atomic_store_explicit(&cs->xruns_live, cs->xruns, memory_order_relaxed);
			pat_progress(p, k + 1);
			continue;
		}
		if (now < due) {
			pat_wait_until(p, due);
			if (pat_stopping(p))
				return -EINTR;
			/* the timer's lateness; behind schedule, a cycle starts at
			 * once and there is no wake to time */
			if (in_window)
				hist_add(&cs->b, now_ns() - due);
		}
		ret = run_graph(p, m++, 0);
		if (ret)
			return ret;
		done = now_ns();
		if (in_window) {
			bool xrun = done - due > deadline;

			hist_add(&p->st->hist, done - due);
			pat_mark(p, due, done);
			cs->cycles++;
			cs->xruns += xrun;
			cycle_series_add(&cs->series, done - due, xrun);
			atomic_store_explicit(&cs->cycles_live, cs->cycles, memory_order_relaxed);
			atomic_store_explicit(&cs->xruns_live, cs->xruns, memory_order_relaxed);
		}
		pat_progress(p, k + 1);
		if (pat_stopping(p))
			return -EINTR;
	}
	p->st->msgs = cs->cycles;
	/* what moved: a chain's buffer crosses every hop once, a fan's goes
	 * out to each stage and back; a late start moved nothing */
	p->st->bytes = (cs->cycles - cs->late_starts) * c->size *
		       (is_chain(c) ? stages(c) + 1 : 2 * stages(c));
	pat_window_end(p);
	/* the end marker: every stage forwards it and leaves */
	return run_graph(p, m, MSG_F_END);
}

/* ---- a stage ------------------------------------------------------------- */

static int cycle_stage(struct participant *p)
{
	const struct cell *c = p->cell;
	struct cycle_side *cs = &p->st->cyc;
	const struct msg_hdr *h;
	uint64_t got = 0;
	int ret;

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
		if (!end)
			pat_think(p);
		t_out = now_ns();
		ret = pat_send(p, p->next, m, end, t_out);
		if (ret)
			return ret;
		if (end)
			break;
		if (m >= c->warmup) {
			/* a clock read on the same machine: CLOCK_MONOTONIC is one clock */
			hist_add(&p->st->hist, t_in > sent_at ? t_in - sent_at : 0);
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

const struct pattern pat_cycle = {
	.name = "cycle",
	.summary = "a periodic graph with a deadline, as an audio server runs it (xruns, completion time, per-stage wait and busy)",
	.lat_kind = LAT_CYCLE,
	.options = cycle_options,
	.opts_size = sizeof(struct cycle_opts),
	.server = cycle_driver,
	.client = cycle_stage,
	.channels = cycle_channels,
	.open = cycle_open,
	.close = cycle_close,
	.periodic = true,
};
