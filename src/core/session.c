// SPDX-License-Identifier: MIT
/* A session: every cell of a plan run `repeat` times (with --repeat auto,
 * until every headline's interval converges), interleaved, with the idle
 * knobs (--pm-qos, --keep-awake) held around the whole of it and the
 * repetitions folded into one result per cell. Prints nothing. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipclab/engine.h"
#include "ipclab/floors.h"
#include "ipclab/idle.h"
#include "ipclab/runner.h"
#include "ipclab/stats.h"
#include "ipclab/trace.h"
#include "ipclab/interference.h"
#include "traced.h"

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
static int run_reference(const struct reference_ops *ref, const struct cell *c,
			 struct result *out, uint32_t *step)
{
	struct ref_result *x = &out->ref;
	int ret = ref->run(c, out, x);

	x->pairs = 1;
	x->order[0][0] = *step;
	x->order[0][1] = ++*step;
	if (ret == -EINTR || runner_interrupted)
		return 128 + (runner_interrupted ? runner_interrupted : SIGINT);
	return 0;
}

/* What a session's rounds share: the plan, where results go (cell i's
 * round r at res[i * cap + r]), the order and the progress count. */
struct rounds {
	const struct plan *pl;
	const struct session_opts *o;
	const struct session_observer *obs;
	struct result *res;
	unsigned cap;			/* rounds res has room for */
	size_t *ord;
	size_t k, total;		/* runs so far, and expected */
	uint64_t seed;
	uint32_t step;			/* runs so far, references included */
	int sig;			/* 128+signal once interrupted */
};

/* One cell's run of round r; sets rs->sig when interrupted. */
static void run_one(struct rounds *rs, size_t i, unsigned r)
{
	const struct session_opts *o = rs->o;
	const struct cell *c = &rs->pl->cells[i];
	struct result *out = &rs->res[i * rs->cap + r];

	observe(rs->obs, rs->k, rs->total);
	if (o->order)
		o->order[rs->k] = (uint32_t)i;
	rs->k++;
	fill_result_config(out, c);
	if (c->skip[0] || o->dry_run) {
		out->status = RES_SKIPPED;
		snprintf(out->reason, sizeof(out->reason), "%s", c->skip[0] ? c->skip : "dry run");
		if (o->reference) {
			out->ref.on = true;
			snprintf(out->ref.reason, sizeof(out->ref.reason), "the cell did not run");
		}
		return;
	}
	if (run_cell(c, out) == -EINTR || runner_interrupted)
		rs->sig = 128 + (runner_interrupted ? runner_interrupted : SIGINT);
	fill_result_config(out, c);
	if (o->reference && !rs->sig) /* B right after A */
		rs->sig = run_reference(o->reference, c, out, &rs->step);
	rs->step++;
}

/* Round r over every cell; returns the cells it completed (all of them
 * unless interrupted). */
static size_t run_round(struct rounds *rs, unsigned r)
{
	size_t j;

	round_order(rs->ord, rs->pl->n, &rs->seed);
	for (j = 0; j < rs->pl->n && !rs->sig; j++)
		run_one(rs, rs->ord[j], r);
	return rs->sig ? j - 1 : j;
}

/* --repeat auto: has every cell that ran its rounds' headline within the
 * target? A cell that failed or was skipped does not hold the others up. */
static bool all_converged(const struct rounds *rs, unsigned rounds)
{
	for (size_t i = 0; i < rs->pl->n; i++) {
		const struct result *reps = &rs->res[i * rs->cap];
		bool ok = true;

		for (unsigned r = 0; r < rounds; r++)
			ok &= reps[r].status == RES_OK;
		if (ok && !(repeat_headline_ci_pct(reps, rounds) <= rs->o->auto_pct))
			return false;
	}
	return true;
}

/* Should --repeat auto start round r (elapsed so far in the rounds)? Why
 * not, in *why. */
static bool another_round(const struct rounds *rs, unsigned r, uint64_t elapsed,
			  const char **why)
{
	const struct session_opts *o = rs->o;

	if (o->dry_run)
		return r == 0;
	if (r >= STATS_CI_MIN_N && all_converged(rs, r)) {
		*why = "converged";
		return false;
	}
	if (r >= rs->cap) {
		*why = "cap";
		return false;
	}
	if (o->budget_ns && r && elapsed + elapsed / r > o->budget_ns) {
		*why = "budget";
		return false;
	}
	return true;
}

/* Fold each of the first ncells cells' rounds into res[i]; --repeat auto
 * marks each with its target, whether it converged, and why the rounds
 * ended. */
static void fold_cells(struct rounds *rs, size_t ncells, unsigned rounds, const char *why)
{
	const struct session_opts *o = rs->o;

	for (size_t i = 0; i < ncells; i++) {
		struct result *reps = &rs->res[i * rs->cap];
		struct ref_result ref;
		/* before the fold rewrites reps[0] */
		bool conv = rounds > 1 && repeat_headline_ci_pct(reps, rounds) <= o->auto_pct;

		if (rounds > 1) {
			struct interference worst = reps[0].intf;
			double cost[TRACE_COST_MAX];
			unsigned ncost = 0;

			/* the machine's share: the worst repetition's, noisy if any was */
			for (unsigned r = 1; r < rounds; r++)
				intf_fold(&worst, &reps[r].intf);
			/* tracing's cost: one pair per repetition (trace_set_pairs) */
			for (unsigned r = 0; r < rounds && ncost < TRACE_COST_MAX; r++)
				if (reps[r].status == RES_OK && reps[r].trace.perturbation_pairs)
					cost[ncost++] = reps[r].trace.perturbation;
			if (o->reference)
				o->reference->fold(reps, rounds, &ref);
			repeat_fold(reps, rounds);
			if (o->reference)
				reps[0].ref = ref;
			reps[0].intf = worst;
			if (ncost > 1 && reps[0].trace.on)
				trace_perturbation(&reps[0].trace, cost, ncost);
			if (ncost > 1 && reps[0].profile.on)
				profile_cost_from(&reps[0].profile, cost, ncost);
		}
		if (o->repeat_auto) {
			reps[0].repeat_auto = true;
			reps[0].target_pct = o->auto_pct;
			reps[0].stopped_by = why;
			reps[0].converged = conv;
		}
		if (i)
			memcpy(&rs->res[i], reps, sizeof(*reps));
	}
	for (size_t i = 0; o->reference && i < ncells; i++)
		o->reference->ratio(&rs->res[i]);
}

/* The runs a progress line expects: every round so far and the next, at
 * least the STATS_CI_MIN_N rounds --repeat auto starts with. */
static size_t runs_expected(const struct rounds *rs, unsigned rounds)
{
	unsigned least = rs->cap < STATS_CI_MIN_N ? rs->cap : STATS_CI_MIN_N;

	if (!rs->o->repeat_auto)
		return rs->pl->n * rs->cap;
	return rs->pl->n * (rounds + 1 > least ? rounds + 1 : least);
}

/* Run every cell in rounds, interleaved (all cells once, then again) so
 * that drift spreads evenly: o->repeat rounds, or with --repeat auto until
 * converged, the cap or the budget. Fold the rounds into res[0..n).
 * Returns 0, or 128+signal when interrupted (*ndone = cells complete). */
static int run_cells(const struct plan *pl, const struct session_opts *o,
		     const struct session_observer *obs, struct result *res, unsigned cap,
		     size_t *ndone)
{
	struct rounds rs = { .pl = pl, .o = o, .obs = obs, .res = res, .cap = cap,
			     .seed = o->shuffle_seed };
	const char *why = o->repeat_auto ? "cap" : NULL;
	unsigned rounds = 0;
	size_t partial = 0;
	uint64_t t0 = now_ns();

	rs.ord = malloc((pl->n ? pl->n : 1) * sizeof(*rs.ord));
	if (!rs.ord)
		return -ENOMEM;
	/* repeated cells measure the cost of tracing across their rounds: one
	 * untraced/traced pair each instead of TRACE_PAIRS */
	trace_set_pairs(o->repeat_auto || cap >= TRACE_PAIRS ? 1 : TRACE_PAIRS);
	while (o->repeat_auto ? another_round(&rs, rounds, now_ns() - t0, &why) : rounds < cap) {
		rs.total = runs_expected(&rs, rounds);
		partial = run_round(&rs, rounds);
		if (rs.sig)
			break;
		rounds++;
	}
	observe(obs, rs.k, rs.k);
	free(rs.ord);
	if (o->rounds)
		*o->rounds = rounds;
	/* a cell is complete when all its repetitions ran (a shuffled round
	 * cut short keeps none: its complete cells are not the first ones);
	 * --repeat auto keeps the rounds complete when it was interrupted */
	if (!rs.sig || (o->repeat_auto && rounds))
		*ndone = pl->n;
	else
		*ndone = (o->repeat_auto || rounds + 1 == cap) && !o->shuffle_seed ? partial : 0;
	if (rs.sig && o->repeat_auto)
		why = "signal";
	if (rs.sig && (!o->repeat_auto || !rounds))
		rounds++;	/* the cut round is the last of the cells kept */
	fold_cells(&rs, *ndone, rounds, why);
	return rs.sig;
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

/* The canary on the plan's CPUs (the first two its cells use, or the
 * first two this process may use), at the start (k 0, with the floors
 * when asked) or at the end (k 1); a state change from start to end is
 * said among the env's warnings, where the record's reader sees it. */
static void session_canary(const struct plan *pl, const struct session_opts *o,
			   struct env_info *env, int k)
{
	int want[64], cpus[2];
	unsigned n = awake_cpus(pl, want, 64);
	const char *what;
	double r;

	if (o->dry_run)
		return;
	floors_pick_cpus(want, n, cpus);
	canary_measure(cpus, &env->canary[k]);
	if (!k && o->floors)
		floors_measure(cpus, &env->floors);
	r = k ? canary_ratio(env->canary[0].cacheline_rtt_ns, env->canary[0].pipe_rtt_ns,
			     env->canary[1].cacheline_rtt_ns, env->canary[1].pipe_rtt_ns, &what) : 0;
	if (r > CANARY_RATIO_MAX && env->nwarnings < ENV_MAX_WARNINGS)
		snprintf(env->warnings[env->nwarnings++], sizeof(env->warnings[0]),
			 "the machine changed state during the run (%s %.1fx from start to end, env.canary): its cells were not all measured alike",
			 what, r);
}

int session_run(const struct plan *pl, const struct session_opts *o,
		const struct session_observer *obs, struct report *rep, char *err, size_t errlen)
{
	unsigned reps = o->repeat ? o->repeat : 1;
	size_t ndone = 0;
	struct result *res = calloc(pl->n ? pl->n * reps : 1, sizeof(*res));
	int ret, fd;

	rep->results = NULL;
	rep->n = 0;
	if (!res) {
		snprintf(err, errlen, "out of memory for %zu results", pl->n);
		return -ENOMEM;
	}
	env_collect(&rep->env);
	session_canary(pl, o, &rep->env, 0);
	fd = idle_knobs_start(o, pl, err, errlen);
	if (fd < 0) {
		free(res);
		return -EIO;
	}
	ret = run_cells(pl, o, obs, res, reps, &ndone);
	if (!runner_interrupted)	/* stopped: end now, no end canary */
		session_canary(pl, o, &rep->env, 1);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory for the order of %zu cells", pl->n);
	idle_knobs_stop(fd);
	rep->results = res;
	rep->n = ndone;		/* complete cells only */
	return ret;
}
