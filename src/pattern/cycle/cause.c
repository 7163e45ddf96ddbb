// SPDX-License-Identifier: MIT
/* The cycle pattern's xrun causes (cycle.h, enum cycle_xrun_cause):
 * one cause for every xrun, counted by the driver as the graph's end comes
 * back. A cycle's time, intended start to the graph's end, is made of
 * parts the sides time themselves: its start after the intended one (the
 * timer's lateness when the driver slept to it, else the previous cycle's
 * overrun), each stage's wait (the hop: sent to received) and work
 * (received to sent on), and the hop back to the driver. The cause is the
 * largest part, and the stage it belongs to is blamed; a cycle whose
 * deadline passed before it could start is a late start.
 *
 * What the clock reads cannot tell is why a part was long: a stage whose
 * work ran long may have been preempted in it. With --trace the sides
 * read, at each cycle, the time other tasks ran on the CPU they waited
 * for (the tracer's machine share, live); an xrun whose cycle lost more to
 * them than it overran by (a chain's stages one after another: summed; a
 * fan's at once: the most of any stage) would have kept time without
 * them, and is counted as preempted, blaming the side that lost the most.
 * Without --trace that is not known, and said so (causes_traced). */
#include <stdatomic.h>

#include "int.h"

static const char *const cause_names[XC_N] = {
	[XC_LATE_START] = "late_start",
	[XC_BEHIND] = "behind_schedule",
	[XC_TIMER_LATE] = "timer_late",
	[XC_STAGE_WAIT] = "stage_wait",
	[XC_STAGE_BUSY] = "stage_busy",
	[XC_DRIVER_WAIT] = "driver_wait",
	[XC_PREEMPTED] = "preempted",
	[XC_UNKNOWN] = "unknown",
};

const char *cycle_cause_name(enum cycle_xrun_cause k)
{
	return (unsigned)k < XC_N ? cause_names[k] : "?";
}

/* The largest part so far: its cause, the stage (-1: the driver's), and
 * --trace's time that side lost to other tasks in the cycle. */
struct part {
	enum cycle_xrun_cause cause;
	int stage;
	uint64_t ns, lost;
};

static void bigger(struct part *p, enum cycle_xrun_cause cause, int stage, uint64_t ns,
		   uint64_t lost)
{
	if (ns > p->ns)
		*p = (struct part){ .cause = cause, .stage = stage, .ns = ns, .lost = lost };
}

/* What the stages published for buffer m: their parts into big, their
 * time lost to other tasks into *lost (and the stage that lost the most),
 * their latest send into *last_out. False when a stage's figures are not
 * there (it runs elsewhere, or has not published this buffer's). */
static bool stage_parts(const struct participant *p, uint32_t m, struct part *big,
			uint64_t *lost, struct part *most_lost, uint64_t *last_out)
{
	const struct cell *c = p->cell;
	const unsigned n = c->clients ? c->clients : 1;
	uint64_t fan_max = 0;

	for (unsigned i = 0; i < n && i < CYCLE_MAX_STAGES; i++) {
		const struct cycle_side *sg = pat_side_own(p, i + 1);
		uint64_t t_out, l;

		if (!sg || atomic_load_explicit(&sg->pub.m, memory_order_acquire) != (uint64_t)m + 1)
			return false;
		l = atomic_load_explicit(&sg->pub.lost_ns, memory_order_relaxed);
		bigger(big, XC_STAGE_WAIT, (int)i,
		       atomic_load_explicit(&sg->pub.wait_ns, memory_order_relaxed), l);
		bigger(big, XC_STAGE_BUSY, (int)i,
		       atomic_load_explicit(&sg->pub.busy_ns, memory_order_relaxed), l);
		t_out = atomic_load_explicit(&sg->pub.t_out, memory_order_relaxed);
		*last_out = t_out > *last_out ? t_out : *last_out;
		if (cycle_is_chain(c))
			*lost += l;
		else if (l > fan_max)
			fan_max = l;
		bigger(most_lost, XC_PREEMPTED, (int)i, l, l);
	}
	*lost += fan_max;
	return true;
}

static void count(struct cycle_side *cs, enum cycle_xrun_cause cause, int stage)
{
	struct cycle_blame *b = stage >= 0 && stage < CYCLE_MAX_STAGES ? &cs->blame[stage] : NULL;

	cs->causes[cause]++;
	if (cause == XC_PREEMPTED && !b)
		cs->driver_preempted++;
	if (!b)
		return;
	if (cause == XC_STAGE_WAIT)
		b->wait++;
	else if (cause == XC_STAGE_BUSY)
		b->busy++;
	else if (cause == XC_PREEMPTED)
		b->preempted++;
}

void cycle_cause_count(const struct participant *p, struct cycle_side *cs, uint32_t m,
		       const struct cycle_parts *cp)
{
	/* behind schedule, the driver's lost time is no part of its start */
	struct part big = { .cause = cp->slept ? XC_TIMER_LATE : XC_BEHIND, .stage = -1,
			    .ns = cp->start_late_ns, .lost = cp->slept ? cp->driver_lost_ns : 0 };
	struct part most_lost = { .cause = XC_PREEMPTED, .stage = -1, .ns = cp->driver_lost_ns };
	uint64_t lost = cp->driver_lost_ns, last_out = 0;
	uint64_t over = cp->completion_ns - cp->deadline_ns;

	if (!stage_parts(p, m, &big, &lost, &most_lost, &last_out)) {
		count(cs, XC_UNKNOWN, -1);
		return;
	}
	bigger(&big, XC_DRIVER_WAIT, -1, cp->done_ns > last_out ? cp->done_ns - last_out : 0,
	       cp->driver_lost_ns);
	/* preempted: without the others it would have kept time, or they
	 * took most of its largest part (blaming that part's side) */
	if (cs->traced && 2 * big.lost >= big.ns && big.ns)
		big = (struct part){ .cause = XC_PREEMPTED, .stage = big.stage };
	else if (cs->traced && lost >= over)
		big = most_lost;
	count(cs, big.cause, big.stage);
}

void cycle_cause_publish(struct participant *p, struct cycle_side *cs, uint32_t m,
			 uint64_t wait_ns, uint64_t t_in, uint64_t t_out)
{
	uint64_t lost = 0, lost_prev = cs->pub_lost0;

	if (pat_lost_ns(p, &lost))
		cs->pub_lost0 = lost;
	atomic_store_explicit(&cs->pub.wait_ns, wait_ns, memory_order_relaxed);
	atomic_store_explicit(&cs->pub.busy_ns, t_out - t_in, memory_order_relaxed);
	atomic_store_explicit(&cs->pub.t_out, t_out, memory_order_relaxed);
	atomic_store_explicit(&cs->pub.lost_ns, lost > lost_prev ? lost - lost_prev : 0,
			      memory_order_relaxed);
	atomic_store_explicit(&cs->pub.m, (uint64_t)m + 1, memory_order_release);
}
