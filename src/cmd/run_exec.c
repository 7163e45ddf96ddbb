// SPDX-License-Identifier: MIT
/* Running a plan for the run command and the suite: warnings said once,
 * progress on a terminal, the session (src/core/session.c), then the
 * report written atomically, --plot's figures, and failures listed. */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "run.h"
#include "ipclab/outdir.h"
#include "ipclab/remote.h"
#include "ipclab/reporter.h"
#include "ipclab/runner.h"
#include "ipclab/topology.h"

struct progress {
	bool quiet;
	uint64_t t0;
	size_t k, n;		/* the cell running, of n */
};

/* One progress line, on a terminal only: which cell, the time, and (once
 * a second while a cell runs) what it has done so far. The runner's hook
 * takes no argument: the line it extends is this one. */
static struct progress *live_progress;

/* running: a cell is under way (cell k+1 of n), else k are done */
static void progress_head(const struct progress *p, bool running)
{
	double el = (double)(now_ns() - p->t0) / 1e9;

	fprintf(stderr, "\r\033[Kcell %zu/%zu  %.0fs elapsed, ~%.0fs left",
		running && p->k < p->n ? p->k + 1 : p->k, p->n, el,
		p->k ? el / (double)p->k * (double)(p->n - p->k) : 0.0);
}

static void progress(void *arg, size_t k, size_t n)
{
	struct progress *p = arg;

	p->k = k;
	p->n = n;
	if (p->quiet || !isatty(STDERR_FILENO))
		return;
	progress_head(p, false);
	if (k == n)
		fprintf(stderr, "\r\033[K");
}

/* Messages so far, or the pattern's own figures (its live hook). */
static void progress_live(const struct cell *c, const struct side_stats *sides, unsigned nsides,
			  uint64_t ran_ns)
{
	const struct progress *p = live_progress;
	uint64_t msgs = 0;

	if (!p || p->quiet || !nsides || !isatty(STDERR_FILENO))
		return;
	progress_head(p, true);
	if (c->pat && c->pat->live) {
		char figs[96];

		c->pat->live(sides, nsides, figs, sizeof(figs));
		fprintf(stderr, "  [%s %s: %s, %.0fs]", c->tp->name, c->pat->name, figs,
			(double)ran_ns / 1e9);
		return;
	}
	for (unsigned i = 0; i < nsides; i++)
		msgs += atomic_load_explicit(&sides[i].progress, memory_order_relaxed);
	fprintf(stderr, "  [%s %s: %llu messages, %.0fs]", c->tp->name, c->pat ? c->pat->name : "",
		(unsigned long long)msgs, (double)ran_ns / 1e9);
}

static int report_failures(const struct result *res, size_t n)
{
	int failed = 0;

	for (size_t i = 0; i < n; i++) {
		if (res[i].status != RES_FAILED)
			continue;
		say(NULL, "%s/%s %llu B %s: %s", res[i].transport, res[i].pattern,
		    (unsigned long long)res[i].cell.size, res[i].cell.threads ? "thread" : "process",
		    res[i].reason);
		failed = 1;
	}
	for (size_t i = 0; i < n; i++) {	/* --reference: a failed reference is a failed run */
		if (!res[i].ref.on || res[i].ref.status != REF_FAILED)
			continue;
		say(NULL, "%s/%s %llu B %s: %s", res[i].transport, res[i].pattern,
		    (unsigned long long)res[i].cell.size, res[i].cell.threads ? "thread" : "process",
		    res[i].ref.reason);
		failed = 1;
	}
	return failed;
}

/* Things that distort or endanger a run, said once before it starts. */
static void plan_warnings(const struct plan *pl, bool quiet_dry_run)
{
	bool rt = false, spin_same = false;
	const char *spinner = "";
	char buf[32];

	if (quiet_dry_run)
		return;
	for (size_t i = 0; i < pl->n; i++) {
		const struct cell *c = &pl->cells[i];

		rt |= c->sched.policy == SCHED_FIFO || c->sched.policy == SCHED_RR;
		if ((c->tp->caps & TP_SPINS) && c->pin.server_cpu >= 0 &&
		    c->pin.server_cpu == c->pin.client_cpu && !c->skip[0]) {
			spin_same = true;
			spinner = c->tp->name;
		}
	}
	if (rt && read_text_file("/proc/sys/kernel/sched_rt_runtime_us", buf, sizeof(buf)) > 0 &&
	    !strcmp(buf, "-1"))
		say(NULL, "warning: RT throttling is off (kernel.sched_rt_runtime_us = -1): a runaway realtime endpoint can hold a CPU for ever");
	if (spin_same)
		say(NULL, "warning: %s spins while it waits and both endpoints share one CPU: every wait burns the peer's time slice (use --pin split)",
		    spinner);
}

/* Other tasks or the hypervisor took the endpoints' CPUs (interference):
 * said once, after the run, with the worst cell; the rows are marked. */
static void noise_warning(const struct report *rep)
{
	const struct result *worst = NULL;
	size_t n = 0, ran = 0;
	char what[64];

	for (size_t i = 0; rep->results && i < rep->n; i++) {
		const struct result *r = &rep->results[i];

		if (r->status != RES_OK)
			continue;
		ran++;
		if (!r->intf.noisy)
			continue;
		n++;
		if (!worst || r->intf.foreign_pct > worst->intf.foreign_pct ||
		    (isnan(worst->intf.foreign_pct) && !isnan(r->intf.foreign_pct)))
			worst = r;
	}
	if (!worst)
		return;
	intf_summary(&worst->intf, what, sizeof(what));
	say(NULL, "warning: %zu of %zu cells shared their endpoints' CPUs with other tasks or lost time to the hypervisor (worst: %s/%s %lluB, %s); those rows are marked noise; see ipclab env --check",
	    n, ran, worst->transport, worst->pattern, (unsigned long long)worst->cell.size, what);
}

int run_session(const struct plan *pl, const struct session_opts *so, bool quiet,
		struct report *rep)
{
	struct progress p = { .quiet = quiet, .t0 = now_ns() };
	struct session_observer obs = { progress, &p };
	char err[ERRLEN];
	int ret;

	plan_warnings(pl, quiet && so->dry_run);
	live_progress = &p;
	runner_set_live(progress_live);
	ret = session_run(pl, so, &obs, rep, err, sizeof(err));
	runner_set_live(NULL);
	live_progress = NULL;
	if (ret == -ENOMEM)
		return usage_error("%s", err);
	if (ret < 0)
		return say_error(NULL, "%s", err);
	if (!quiet)
		noise_warning(rep);	/* the rows say noise either way */
	return ret;
}

/* --plot DIR: the JSON result beside its figures, both in a directory of
 * the user's own (ipclab/outdir.h). */
static int plot_after_run(const struct run_args *a, const struct report *rep)
{
	const struct reporter *json = reporter_find("json");
	struct reporter_args ra = { .format = "json" };
	char path[PATH_MAX + 16], err[ERRLEN] = "";
	struct outfile of;
	struct outdir od;
	int ret;

	if (outdir_open(&od, "--plot", a->plot_dir, err, sizeof(err)))
		return usage_error("%s", err);
	snprintf(path, sizeof(path), "%s/results.json", od.path);
	ret = outfile_open(&of, &od, "results.json", err, sizeof(err));
	if (!ret && json->write(of.f, rep, &ra, err, sizeof(err))) {
		outfile_abort(&of);
		ret = errf(err, sizeof(err), EIO, "cannot write %s", path);
	} else if (!ret) {
		ret = outfile_commit(&of, err, sizeof(err));
	}
	outdir_close(&od);
	if (ret)
		return say_error(NULL, "--plot: %s", err);
	if (plot_report_file(path, a->plot_dir, err, sizeof(err)))
		return say_error(NULL, "--plot: %s", err);
	return 0;
}

/* The report, then --plot's figures and --html's page beside it. */
static int write_outputs(const struct run_args *a, const struct reporter_args *ra,
			 const struct report *rep)
{
	int ret = output_report(a->output, ra, rep);

	if (a->plot_dir && !ret)
		ret = plot_after_run(a, rep);
	if (a->html && !ret)
		ret = report_html_of(a->html, a->output ? a->output : "this run", rep, a->profile_dir,
				     NULL);
	return ret;
}

/* --pin matrix: the cells shuffled each round, the order kept; 0 or 2. */
static int matrix_setup(const struct run_args *a, struct matrix_info *mx, struct session_opts *so,
			const struct plan *pl)
{
	mx->rounds = so->repeat ? so->repeat : 1;
	mx->ncells = pl->n;
	mx->seed = so->shuffle_seed = (now_ns() & INT64_MAX) | 1;
	mx->metric = a->matrix_metric;
	if (!(mx->order = so->order = calloc(pl->n * mx->rounds + 1, sizeof(*mx->order))))
		return usage_error("out of memory");
	return 0;
}

/* --trace=events FILE: the timeline opened (atomically, as -o) once the
 * plan is good, every cell writing into it; 0, 1 or 2. */
static int timeline_open(const struct run_args *a, struct plan *pl, struct output *o,
			 struct trace_events **ev)
{
	int ret = output_open(o, a->trace_events_path, NULL);

	if (ret)
		return ret;
	if (trace_events_begin(o->f, &a->trace_span, ev)) {
		output_commit(o, 1, "out of memory");
		return 1;
	}
	for (size_t i = 0; i < pl->n; i++)
		pl->cells[i].trace_events = *ev;
	return 0;
}

static int timeline_close(struct trace_events *ev, struct output *o)
{
	int ret = trace_events_end(ev);

	return output_commit(o, ret, ret ? "cannot write the timeline" : NULL);
}

/* Is name one of the words of the list (as typed, not through all or a glob)? */
static bool named_in(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p;) {
		const char *e = strchrnul(p, ',');

		if ((size_t)(e - p) == n && !strncmp(p, name, n))
			return true;
		p = *e ? e + 1 : e;
	}
	return false;
}

/* --peer: connect and hang the peer on every cell; 0, 1 or 2 (printed).
 * Transports that cannot cross hosts: refused when named, skipped when
 * they came from -t all or a glob. */
static int attach_peer(const struct run_args *a, struct plan *pl, struct peer **out)
{
	char err[ERRLEN], token[REMOTE_TOKEN_MAX + 1];
	int ret;

	for (size_t i = 0; i < pl->n; i++) {
		struct cell *c = &pl->cells[i];

		if (c->tp->caps & TP_REMOTE)
			continue;
		peer_refusal(c->tp, err, sizeof(err));
		/* named: bad input; from all or a glob: skipped, as -t all
		 * skips what cannot run here */
		if (named_in(a->transports, c->tp->name))
			return usage_error("%s", err);
		if (!c->skip[0])
			snprintf(c->skip, sizeof(c->skip), "%s", err + strlen("--peer: transport "));
	}
	if (a->dry_run)
		return 0;
	ret = remote_token_pick(a->token_file, a->token, token, sizeof(token), err, sizeof(err));
	if (ret)
		return usage_error("%s", ret < 0 ? err : "--peer needs the server's token: --token-file FILE (mode 0600), IPCLAB_TOKEN or --token T");
	if (a->token && !a->token_file)
		say(NULL, REMOTE_TOKEN_ARGV_WARNING);
	ret = peer_open(a->peer, token, out, err, sizeof(err));
	explicit_bzero(token, sizeof(token));
	if (ret)
		return ret == -EINVAL || ret == -EACCES ? usage_error("%s", err) : say_error(NULL, "%s", err);
	for (size_t i = 0; i < pl->n; i++)
		if (!pl->cells[i].skip[0] && peer_attach(*out, &pl->cells[i], err, sizeof(err)))
			return usage_error("%s", err);
	return 0;
}

/* How the run's options run the session; the rounds run land in *rounds. */
static struct session_opts session_opts_of(const struct run_args *a, unsigned *rounds)
{
	return (struct session_opts){ .repeat = a->repeat, .dry_run = a->dry_run,
				      .pm_qos_us = a->pm_qos_us, .keep_awake = a->keep_awake,
				      .floors = a->floors,
				      .reference = a->reference ? &reference_ops : NULL, .repeat_auto = a->repeat_auto,
				      .auto_pct = a->auto_pct, .budget_ns = a->budget_ns,
				      .rounds = rounds };
}

/* After the report is written: the failed cells said, the run stored
 * (--db). The exit status so far. */
static int after_report(const struct run_args *a, const struct report *rep, int ret, int wret)
{
	wret = report_failures(rep->results, rep->n) ? 1 : wret;
	return db_store_report(&a->db, rep, ret ? ret : wret, a->quiet, NULL);
}

int do_run(struct run_args *args, unsigned nargs)
{
	const struct run_args *a = &args[0];
	unsigned rounds = 0;
	struct session_opts so = session_opts_of(a, &rounds);
	struct reporter_args ra = { .format = a->format };
	struct report rep = { .cmdline = a->cmdline };
	struct plan pl = { 0 };
	struct matrix_info *mx = NULL;
	struct output evo;
	struct trace_events *ev = NULL;
	uint64_t t0;
	int ret = 0, wret, tret = 0;

	if (a->pins && matrix_word(a->pins) && !(mx = args[0].matrix = calloc(1, sizeof(*mx))))
		return usage_error("out of memory");
	for (unsigned i = 0; i < nargs && !ret; i++)
		ret = build_plan(&args[i], &pl);
	if (!ret && mx)
		ret = matrix_setup(a, mx, &so, &pl);
	struct peer *peer = NULL;

	if (!ret && a->peer)
		ret = attach_peer(a, &pl, &peer);
	if (!ret && a->trace_events_path)
		ret = timeline_open(a, &pl, &evo, &ev);
	if (!ret && a->runs)
		ret = run_runs_check(&pl);
	t0 = now_ns();
	if (!ret && a->runs)
		ret = run_runs(&pl, &so, a->quiet, a->runs, &rep);
	else if (!ret)
		ret = run_session(&pl, &so, a->quiet, &rep);
	if (ev)
		tret = timeline_close(ev, &evo);
	rep.remote_env_json = peer_env_json(peer);
	if (mx)
		mx->wall_s = (double)(now_ns() - t0) / 1e9;
	if (mx && a->repeat_auto)	/* the order array has room for the cap */
		mx->rounds = rounds ? rounds : 1;
	rep.matrix = mx;
	plan_free(&pl);
	if (!rep.results) {
		run_runs_free(&rep);
		peer_close(peer);
		if (mx)
			free(mx->order);
		free(mx);
		return ret;
	}
	if (a->pivot)
		memcpy(ra.pivot, a->pivot_spec, sizeof(ra.pivot));
	rep.created = time(NULL);	/* the same in -o's file and the store */
	wret = write_outputs(a, &ra, &rep);
	wret = after_report(a, &rep, ret, wret ? wret : tret);
	peer_close(peer);
	if (ret > 128)
		say(NULL, "interrupted by signal %d", ret - 128);
	free(rep.results);
	run_runs_free(&rep);
	if (mx)
		free(mx->order);
	free(mx);
	return ret ? ret : wret;
}

/* --vmstat: one line a second on stderr, what vmstat and top showed seed 000. */
void vmstat_line(const struct cell *c, const struct sys_snap *a, const struct sys_snap *b)
{
	double secs = (double)(b->t_ns - a->t_ns) / 1e9;
	char line[1024];
	size_t off;

	if (secs <= 0)
		return;
	off = (size_t)snprintf(line, sizeof(line), "vmstat %s/%s %lluB: cs/s %.0f intr/s %.0f",
			       c->tp->name, c->pat->name, (unsigned long long)c->size,
			       (double)(b->ctxt - a->ctxt) / secs, (double)(b->intr - a->intr) / secs);
	for (unsigned i = 0; i <= a->ncpu && i <= SYS_MAX_CPUS && off < sizeof(line); i++) {
		double tot = (double)(b->total[i] - a->total[i]);
		char who[16];

		if (tot <= 0)
			continue;
		if (i)
			snprintf(who, sizeof(who), "cpu%u", i - 1);
		else
			snprintf(who, sizeof(who), "all");
		off += (size_t)snprintf(line + off, sizeof(line) - off, " | %s us %.0f sy %.0f id %.0f", who,
					100 * (double)(b->user[i] - a->user[i]) / tot,
					100 * (double)(b->sys[i] - a->sys[i]) / tot,
					100 * (tot - (double)(b->busy[i] - a->busy[i])) / tot);
	}
	fprintf(stderr, "%s\n", line);
}
