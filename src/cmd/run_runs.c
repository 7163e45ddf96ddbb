// SPDX-License-Identifier: MIT
/* run --runs N: the plan run N times as separate runs. What differs
 * between two invocations of ipclab is the run: the state the machine is
 * in, where an unpinned pair lands, the canary at its start. A run here is
 * a whole session (run_session): the canary at its start and end, fresh
 * endpoint processes or threads for every cell, the idle knobs held around
 * it; the cells of the plan run once in each, so the cells are interleaved
 * run by run (run 1 of every cell, then run 2, ...) and two cells of one
 * invocation meet the same runs. Each cell's runs are folded into its
 * result (src/core/runs.c); the runs' own figures and marks stay in the
 * report for the record's "runs" sections. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "run.h"
#include "ipclab/runner.h"

int run_runs_check(const struct plan *pl)
{
	/* a pattern with record sections of its own (pat_reports.c): the fold
	 * over runs knows only the common result */
	for (size_t i = 0; i < pl->n; i++)
		if (pl->cells[i].pat && pat_report_of(pl->cells[i].pat))
			return usage_error("--runs with -p %s: not supported (its record sections are not folded over runs); drop -p %s or --runs",
					   pl->cells[i].pat->name, pl->cells[i].pat->name);
	return 0;
}

/* A warning of run j's env not yet among env's, added. */
static void merge_warnings(struct env_info *env, const struct env_info *run)
{
	for (unsigned w = 0; w < run->nwarnings; w++) {
		bool have = false;

		for (unsigned k = 0; k < env->nwarnings && !have; k++)
			have = !strcmp(env->warnings[k], run->warnings[w]);
		if (!have && env->nwarnings < ENV_MAX_WARNINGS)
			memcpy(env->warnings[env->nwarnings++], run->warnings[w], sizeof(env->warnings[0]));
	}
}

static void mark_of(const struct report *one, time_t started, uint64_t t0, struct run_mark *m)
{
	const struct canary *c = one->env.canary;
	const char *what;

	m->started = started;
	m->start_ns = t0;
	m->elapsed_ns = now_ns() - t0;
	m->canary[0] = c[0];
	m->canary[1] = c[1];
	m->canary_change = c[0].on && c[1].on ?
				   canary_ratio(c[0].cacheline_rtt_ns, c[0].pipe_rtt_ns,
						c[1].cacheline_rtt_ns, c[1].pipe_rtt_ns, &what) : 0;
}

void run_runs_free(struct report *rep)
{
	free((void *)rep->runs);
	free((void *)rep->run_results);
	rep->runs = NULL;
	rep->run_results = NULL;
	rep->nruns = 0;
}

/* The complete runs (done of them, each of n cells) folded into rep. */
static int fold_runs(struct report *rep, struct result *all, size_t n, unsigned done)
{
	struct result *res = calloc(n ? n : 1, sizeof(*res));

	if (!res)
		return usage_error("out of memory folding %u runs of %zu cells", done, n);
	for (size_t i = 0; i < n; i++)
		runs_fold(&all[i * done], done, &res[i]);
	rep->results = res;
	rep->n = n;
	return 0;
}

int run_runs(const struct plan *pl, const struct session_opts *so, bool quiet, unsigned nruns,
	     struct report *rep)
{
	struct run_mark *marks = calloc(nruns, sizeof(*marks));
	struct result *all = calloc(pl->n ? pl->n * nruns : 1, sizeof(*all));
	unsigned done = 0;
	int ret = 0;

	if (!marks || !all) {
		free(marks);
		free(all);
		return usage_error("out of memory for %u runs of %zu cells", nruns, pl->n);
	}
	for (unsigned j = 0; j < nruns && !ret; j++) {
		struct session_opts o = *so;
		struct report one = { .cmdline = rep->cmdline };
		time_t started = time(NULL);
		uint64_t t0 = now_ns();

		o.floors = so->floors && !j;	/* the machine's floors once, before run 1 */
		if (!quiet)
			say(NULL, "run %u of %u", j + 1, nruns);
		ret = run_session(pl, &o, quiet, &one);
		if (!ret && one.n == pl->n) {	/* complete: cell i's run j */
			for (size_t i = 0; i < pl->n; i++)
				all[i * nruns + j] = one.results[i];
			mark_of(&one, started, t0, &marks[done++]);
		}
		if (!j)
			rep->env = one.env;
		else
			merge_warnings(&rep->env, &one.env);
		if (done && marks[done - 1].canary[1].on)
			rep->env.canary[1] = marks[done - 1].canary[1];
		free(one.results);
	}
	/* cell i's runs side by side: run_results[i * done + j] */
	for (size_t i = 0; done < nruns && i < pl->n; i++)
		memmove(&all[i * done], &all[i * nruns], done * sizeof(*all));
	if (done && fold_runs(rep, all, pl->n, done)) {
		free(marks);
		free(all);
		return 2;
	}
	rep->nruns = done;
	rep->runs = marks;
	rep->run_results = all;
	if (!done)
		run_runs_free(rep);
	return ret;
}
