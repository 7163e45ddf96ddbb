// SPDX-License-Identifier: MIT
/* The planner: a typed plan_spec becomes cells, the cartesian product of
 * its lists, each checked against its transport (a cell a named transport
 * cannot run is bad input; one picked by "all" or a glob is a skip). */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/engine.h"
#include "ipclab/placement.h"
#include "ipclab/runner.h"

void plan_spec_defaults(struct plan_spec *s)
{
	char err[ERRLEN];

	memset(s, 0, sizeof(*s));
	s->size[s->nsize++] = 64;
	s->threads[s->nep++] = false;
	if (pin_make(PIN_NONE, &s->pin[s->npin], err, sizeof(err)) == 0)
		s->npin++;
	sched_make(SCHED_OTHER, 0, &s->sched[s->nsched++]);
	s->clients[s->nclients++] = 1;
	s->nthink = 1;
	snprintf(s->rate_text[s->nrate++], sizeof(s->rate_text[0]), "max");
	s->count = 100000;
	s->timeout_ns = 10 * NSEC_PER_SEC;
	s->pm_qos_us = -1;
}

static struct cell *plan_add(struct plan *pl)
{
	if (pl->n == pl->cap) {
		size_t cap = pl->cap ? 2 * pl->cap : 64;
		struct cell *c = realloc(pl->cells, cap * sizeof(*c));

		if (!c)
			return NULL;
		pl->cells = c;
		pl->cap = cap;
	}
	memset(&pl->cells[pl->n], 0, sizeof(struct cell));
	return &pl->cells[pl->n++];
}

void plan_free(struct plan *pl)
{
	for (unsigned i = 0; i < pl->nblocks; i++)
		free(pl->opt_blocks[i]);
	free(pl->cells);
	memset(pl, 0, sizeof(*pl));
}

/* Why a cell cannot run: -EINVAL (why in err) if its transport was named,
 * else the cell is skipped with the reason; 0 if it can run. */
static int cell_check(struct cell *c, bool named, char *err, size_t errlen)
{
	const struct transport *tp = c->tp;
	size_t max = tp->max_msg ? tp->max_msg(c->tp_opts) : 0;
	char why[256] = "";

	if (max && c->size > max)
		snprintf(why, sizeof(why), "%s carries at most %zu bytes per message here, -s %llu is larger; use -s %zu or less%s%s",
			 tp->name, max, (unsigned long long)c->size, max,
			 tp->max_msg_limit ? ", or raise " : "",
			 tp->max_msg_limit ? tp->max_msg_limit : "");
	else if ((tp->caps & TP_THREAD_ONLY) && !c->threads)
		snprintf(why, sizeof(why), "%s works between threads only; use --endpoints thread",
			 tp->name);
	else if (c->pat->reliable_why && (tp->caps & TP_LOSSY))
		snprintf(why, sizeof(why), "%s may drop or reorder messages; -p %s %s and needs a reliable transport",
			 tp->name, c->pat->name, c->pat->reliable_why);
	else if (c->clients > 1 && !(tp->caps & TP_MULTI_CLIENT) && !c->pat->channels)
		snprintf(why, sizeof(why), "%s serves one client; --clients %u needs a multi-client transport",
			 tp->name, c->clients);
	if (!why[0])
		return 0;
	if (named) {
		snprintf(err, errlen, "%s", why);
		return -EINVAL;
	}
	snprintf(c->skip, sizeof(c->skip), "%s", why);
	return 0;
}

/* The first periodic pattern of the registry: the one --period is for. */
static const struct pattern *periodic_pattern(void)
{
	for (size_t i = 0; i < n_patterns; i++)
		if (patterns[i]->periodic)
			return patterns[i];
	return NULL;
}

static const char *periodic_name(void)
{
	return periodic_pattern() ? periodic_pattern()->name : "?";
}

/* --period checked once, before any cell, as the user's other values are. */
static int period_check(const char *text, char *err, size_t errlen)
{
	const struct pattern *p = periodic_pattern();
	uint64_t ns;

	if (!text[0] || !p || !p->period_parse)
		return 0;
	return p->period_parse(text, &ns, err, errlen) ? -EINVAL : 0;
}

/* The pattern's own knobs: --period belongs to a periodic pattern; a
 * pattern with a plan hook checks its cell and derives what it needs
 * (expect_ns: what its schedule adds to the cell's time). -EINVAL with why. */
static int cell_pattern_plan(struct cell *c, const struct plan_spec *s, double *expect_ns,
			     char *err, size_t errlen)
{
	const struct pattern *pat = c->pat;
	struct pat_plan pp = { .period = s->period_text, .warmup_set = s->warmup_set };
	int ret;

	if (!pat->periodic && s->period_text[0]) {
		snprintf(err, errlen, "--period applies to a periodic pattern (-p %s), not -p %s; drop --period or use -p %s",
			 periodic_name(), pat->name, periodic_name());
		return -EINVAL;
	}
	if (pat->plan && (ret = pat->plan(c, &pp, err, errlen)))
		return ret;
	*expect_ns = pp.expect_ns;
	return 0;
}

/*
 * --max-time when not given: 60 s plus four times what the cell should take
 * at worst-case speeds (100 us and 50 ns a byte per message, think time
 * twice, a paced client's schedule, the pattern's (pat_expect), or -d).
 * Generous on purpose: it ends a run that crawls, which the no-progress
 * --timeout cannot see.
 */
static uint64_t derive_max_time(const struct cell *c, double pat_expect)
{
	double msgs = (double)(c->count + c->warmup) * (c->clients ? c->clients : 1);
	double per_msg = 100e3 + 50.0 * (double)c->size + 2.0 * (double)c->think_ns +
			 2.0 * (double)c->think * (double)c->size;
	double expect = c->duration_ns ? (double)c->duration_ns + (double)c->warmup * per_msg
				       : msgs * per_msg;
	double limit;

	if (c->rate > 0 && !c->duration_ns)
		expect += msgs / c->rate * 1e9;
	expect += pat_expect;
	limit = 60e9 + 4 * expect;
	return limit >= 1.8e19 ? UINT64_MAX : (uint64_t)limit;
}

static int cell_fill(struct cell *c, const struct plan_spec *s, const struct plan_pick *k, char *err,
		     size_t errlen)
{
	double pat_expect = 0;
	int ret;

	*c = (struct cell){ .tp = s->tp[k->tp], .tp_opts = s->tp_opts[k->tp],
			    .pat = s->pat[k->pat], .pat_opts = s->pat_opts[k->pat],
			    .size = s->size[k->size], .count = s->count,
			    .duration_ns = s->duration_ns, .threads = s->threads[k->ep],
			    .pin = s->pins_ext ? s->pins_ext[k->pin] : s->pin[k->pin],
			    .sched = s->sched[k->sched],
			    .clients = s->clients[k->clients], .verify = s->verify,
			    .timeout_ns = s->timeout_ns };
	c->warmup = s->warmup_set ? s->warmup : runner_default_warmup(s->count);
	c->think = s->think[k->think];
	c->think_ns = s->think_ns[k->think];
	if (c->think_ns)
		c->think_iters = (uint64_t)((double)c->think_ns *
					    (s->think_per_ns ? s->think_per_ns(s->think_arg) :
							       think_calibrate()));
	c->rate = s->rate[k->rate];
	c->pm_qos_us = s->pm_qos_us;
	snprintf(c->section, sizeof(c->section), "%s", s->section ? s->section : "");
	c->keep_awake = s->keep_awake;
	c->trace = s->trace;
	c->trace_syscalls = s->trace_syscalls;
	c->explain = s->explain;
	c->trace_events = s->trace_events;
	c->profile = s->profile;
	c->profile_dir = s->profile_dir;
	snprintf(c->rate_text, sizeof(c->rate_text), "%s", s->rate_text[k->rate]);
	/* a paced run warms up with one message unless told otherwise */
	if (c->rate > 0 && !s->warmup_set)
		c->warmup = 1;
	if ((ret = cell_pattern_plan(c, s, &pat_expect, err, errlen)))
		return ret;
	c->max_time_ns = s->max_time_set ? s->max_time_ns : derive_max_time(c, pat_expect);
	return 0;
}

/* One cell: filled, checked against its transport and its placement. */
static int cell_add(struct plan *pl, const struct plan_spec *s, const struct plan_pick *k, char *err,
		    size_t errlen)
{
	struct cell *c = plan_add(pl);
	int ret;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if ((ret = cell_fill(c, s, k, err, errlen)))
		return ret;
	ret = cell_check(c, s->tp_named[k->tp] && !s->lenient, err, errlen);
	if (ret)
		return ret;
	/* only a realtime policy starves the peer: batch and idle share */
	if ((c->tp->caps & TP_SPINS) &&
	    (c->sched.policy == SCHED_FIFO || c->sched.policy == SCHED_RR) &&
	    c->pin.server_cpu >= 0 && c->pin.server_cpu == c->pin.client_cpu) {
		snprintf(err, errlen, "%s spins while waiting: under --sched %s on one CPU the spinner never lets its peer run; use --pin split or --sched other",
			 c->tp->name, c->sched.text);
		return -EINVAL;
	}
	return 0;
}

int plan_build(const struct plan_spec *s, struct plan *pl, char *err, size_t errlen)
{
	unsigned npin = s->pins_ext ? s->npins_ext : s->npin;
	unsigned long long n = (unsigned long long)s->npat * s->nsize * s->ntp * s->nep *
			       npin * s->nsched * s->nclients * s->nthink * s->nrate;
	struct plan_pick k;
	int ret = 0;

	if (n + pl->n > PLAN_MAX_CELLS) {
		snprintf(err, errlen, "the plan has %llu cells (every combination of the lists), more than %u; shorten the lists or split the run",
			 n + pl->n, PLAN_MAX_CELLS);
		return -EINVAL;
	}
	if ((ret = period_check(s->period_text, err, errlen)))
		return ret;
	/* the order of the loops is the order of the results: pattern first
	 * (plan_cell_index says where a pick's cell is) */
	for (k.pat = 0; k.pat < s->npat; k.pat++)
	for (k.size = 0; k.size < s->nsize; k.size++)
	for (k.tp = 0; k.tp < s->ntp; k.tp++)
	for (k.ep = 0; k.ep < s->nep; k.ep++)
	for (k.pin = 0; k.pin < npin; k.pin++)
	for (k.sched = 0; k.sched < s->nsched; k.sched++)
	for (k.clients = 0; k.clients < s->nclients; k.clients++)
	for (k.think = 0; k.think < s->nthink; k.think++)
	for (k.rate = 0; k.rate < s->nrate; k.rate++)
		if ((ret = cell_add(pl, s, &k, err, errlen)))
			return ret;
	return 0;
}

/* Where plan_build put k's cell among spec s's cells: the loops' order. */
long plan_cell_index(const struct plan_spec *s, const struct plan_pick *k)
{
	const unsigned n[] = { s->npat, s->nsize, s->ntp, s->nep,
			       s->pins_ext ? s->npins_ext : s->npin, s->nsched, s->nclients,
			       s->nthink, s->nrate };
	const unsigned at[] = { k->pat, k->size, k->tp, k->ep, k->pin, k->sched, k->clients,
				k->think, k->rate };
	long i = 0;

	for (size_t d = 0; d < ARRAY_SIZE(n); d++) {
		if (at[d] >= n[d])
			return -1;
		i = i * n[d] + at[d];
	}
	return i;
}
