// SPDX-License-Identifier: MIT
/* A session: every cell of a plan run `repeat` times, interleaved, with the
 * idle knobs (--pm-qos, --keep-awake) held around the whole of it and the
 * repetitions folded into one result per cell. Prints nothing. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipclab/engine.h"
#include "ipclab/idle.h"
#include "ipclab/runner.h"

/* The configuration half of a result: what the cell was. */
static void fill_result_config(struct result *r, const struct cell *c)
{
	r->cell = *c;
	snprintf(r->transport, sizeof(r->transport), "%s", c->tp->name);
	snprintf(r->pattern, sizeof(r->pattern), "%s", c->pat->name);
	r->lat_kind = c->pat->lat_kind;
	r->tp_opts[0] = r->pat_opts[0] = '\0';
	for (const struct opt_desc *o = c->tp->options; o && o->name; o++) {
		char v[OPT_STR_MAX];
		size_t l = strlen(r->tp_opts);

		opt_format(o, c->tp_opts, v, sizeof(v));
		snprintf(r->tp_opts + l, sizeof(r->tp_opts) - l, "%s%s=%s", l ? "," : "", o->name, v);
	}
	for (const struct opt_desc *o = c->pat->options; o && o->name; o++) {
		char v[OPT_STR_MAX];
		size_t l = strlen(r->pat_opts);

		opt_format(o, c->pat_opts, v, sizeof(v));
		snprintf(r->pat_opts + l, sizeof(r->pat_opts) - l, "%s%s=%s", l ? "," : "", o->name, v);
	}
	snprintf(r->section, sizeof(r->section), "%s", c->section);
}

static void observe(const struct session_observer *obs, size_t k, size_t total)
{
	if (obs && obs->cell_start)
		obs->cell_start(obs->arg, k, total);
}

/* The order of one round: plan order, or shuffled (Fisher-Yates over a
 * splitmix64 stream) when a seed is given. */
static void round_order(size_t *ord, size_t n, uint64_t *seed)
{
	for (size_t i = 0; i < n; i++)
		ord[i] = i;
	for (size_t i = n; *seed && i > 1; i--) {
		uint64_t z = (*seed += 0x9e3779b97f4a7c15ull);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		z ^= z >> 31;
		size_t j = (size_t)(z % i), t = ord[i - 1];

		ord[i - 1] = ord[j];
		ord[j] = t;
	}
}

/* --reference: the cell's bare loop, run right after it (step + 1);
 * 0 or 128+signal. */
static int run_reference(const struct cell *c, struct result *out, uint32_t *step)
{
	struct ref_result *x = &out->ref;
	int ret = reference_run(c, out, x);

	x->pairs = 1;
	x->order[0][0] = *step;
	x->order[0][1] = ++*step;
	if (ret == -EINTR || runner_interrupted)
		return 128 + (runner_interrupted ? runner_interrupted : SIGINT);
	return 0;
}

/* Run every cell, reps times, interleaved (all cells once, then again) so
 * that drift spreads evenly; fold repetitions into res[0..n). Returns 0, or
 * 128+signal when interrupted (*ndone = cells complete). */
static int run_cells(const struct plan *pl, const struct session_opts *o,
		     const struct session_observer *obs, struct result *res, size_t *ndone)
{
	unsigned reps = o->repeat ? o->repeat : 1;
	size_t total = pl->n * reps, k = 0;
	size_t *ord = malloc((pl->n ? pl->n : 1) * sizeof(*ord));
	uint64_t seed = o->shuffle_seed;
	int sig = 0;
	uint32_t step = 0; /* runs so far, references included */

	if (!ord)
		return -ENOMEM;
	for (unsigned r = 0; r < reps && !sig; r++) {
		round_order(ord, pl->n, &seed);
		for (size_t j = 0; j < pl->n && !sig; j++, k++) {
			size_t i = ord[j];
			const struct cell *c = &pl->cells[i];
			struct result *out = &res[i * reps + r];

			observe(obs, k, total);
			if (o->order)
				o->order[k] = (uint32_t)i;
			fill_result_config(out, c);
			if (c->skip[0] || o->dry_run) {
				out->status = RES_SKIPPED;
				snprintf(out->reason, sizeof(out->reason), "%s",
					 c->skip[0] ? c->skip : "dry run");
				if (o->reference) {
					out->ref.on = true;
					snprintf(out->ref.reason, sizeof(out->ref.reason),
						 "the cell did not run");
				}
				continue;
			}
			if (run_cell(c, out) == -EINTR || runner_interrupted)
				sig = 128 + (runner_interrupted ? runner_interrupted : SIGINT);
			fill_result_config(out, c);
			if (o->reference && !sig) /* B right after A */
				sig = run_reference(c, out, &step);
			step++;
		}
	}
	observe(obs, total, total);
	free(ord);
	/* a cell is complete when all its repetitions ran (a shuffled round
	 * cut short keeps none: its complete cells are not the first ones) */
	size_t last = pl->n * (reps - 1);
	size_t complete = !sig ? pl->n : k > last && !o->shuffle_seed ? k - last - 1 : 0;

	for (size_t i = 0; reps > 1 && i < pl->n; i++) {
		struct ref_result ref;

		if (o->reference)
			reference_fold(&res[i * reps], reps, &ref);
		repeat_fold(&res[i * reps], reps);
		if (o->reference)
			res[i * reps].ref = ref;
		if (i)
			memcpy(&res[i], &res[i * reps], sizeof(*res));
	}
	for (size_t i = 0; o->reference && i < complete; i++)
		reference_ratio(&res[i]);
	*ndone = complete;
	return sig;
}

/* The CPUs --keep-awake holds awake: every endpoint's, or all online CPUs
 * when a cell is not pinned. */
static unsigned awake_cpus(const struct plan *pl, int *cpus, unsigned max)
{
	unsigned n = 0;

	for (size_t i = 0; i < pl->n; i++) {
		const struct pin_spec *p = &pl->cells[i].pin;
		int want[2] = { p->server_cpu, p->client_cpu };

		for (int k = 0; k < 2; k++) {
			bool have = want[k] < 0;

			for (unsigned j = 0; j < n && !have; j++)
				have = cpus[j] == want[k];
			if (!have && n < max)
				cpus[n++] = want[k];
		}
		if (p->mode == PIN_NONE) {	/* unpinned: every online CPU */
			n = 0;
			for (long c = 0; c < sysconf(_SC_NPROCESSORS_ONLN) && c < (long)max; c++)
				cpus[n++] = (int)c;
			break;
		}
	}
	return n;
}

/* --pm-qos and --keep-awake around the whole plan. Returns the pm-qos fd
 * (or 0), or -1 with why in err. */
static int idle_knobs_start(const struct session_opts *o, const struct plan *pl, char *err,
			    size_t errlen)
{
	int cpus[64], fd = 0;
	unsigned n;

	if (o->pm_qos_us >= 0 && (fd = pm_qos_hold(o->pm_qos_us, err, errlen)) < 0)
		return -1;
	if (!o->keep_awake)
		return fd;
	n = awake_cpus(pl, cpus, 64);
	if (keep_awake_start(cpus, n, err, errlen)) {
		keep_awake_stop();
		if (fd > 0)
			close(fd);
		return -1;
	}
	return fd;
}

static void idle_knobs_stop(int fd)
{
	keep_awake_stop();
	if (fd > 0)
		close(fd);
}

int session_run(const struct plan *pl, const struct session_opts *o,
		const struct session_observer *obs, struct report *rep, char *err, size_t errlen)
{
	size_t reps = o->repeat ? o->repeat : 1, ndone = 0;
	struct result *res = calloc(pl->n ? pl->n * reps : 1, sizeof(*res));
	int ret, fd;

	rep->results = NULL;
	rep->n = 0;
	if (!res) {
		snprintf(err, errlen, "out of memory for %zu results", pl->n);
		return -ENOMEM;
	}
	env_collect(&rep->env);
	fd = idle_knobs_start(o, pl, err, errlen);
	if (fd < 0) {
		free(res);
		return -EIO;
	}
	ret = run_cells(pl, o, obs, res, &ndone);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory for the order of %zu cells", pl->n);
	idle_knobs_stop(fd);
	rep->results = res;
	rep->n = ndone;		/* complete cells only */
	return ret;
}
