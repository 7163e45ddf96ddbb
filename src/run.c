// SPDX-License-Identifier: MIT
/* Running a plan: repetitions interleaved, idle knobs held, progress,
 * warnings, and writing the report (atomically) with failures listed. */
#include <fnmatch.h>
#include <getopt.h>
#include <sys/stat.h>
#include <sched.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_internal.h"
#include "ipclab/cleanup.h"
#include "ipclab/idle.h"
#include "ipclab/msg.h"
#include "ipclab/placement.h"
#include "ipclab/runner.h"
#include "pattern/common.h"

/* ---- running and reporting --------------------------------------------------- */

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
}

static void progress(const struct run_args *a, size_t k, size_t n, uint64_t t0)
{
	double el;

	if (a->quiet || !isatty(STDERR_FILENO))
		return;
	el = (double)(now_ns() - t0) / 1e9;
	fprintf(stderr, "\r\033[Kcell %zu/%zu  %.0fs elapsed, ~%.0fs left", k, n, el,
		k ? el / (double)k * (double)(n - k) : 0.0);
	if (k == n)
		fprintf(stderr, "\r\033[K");
}

/* Run every cell, repeat times, interleaved (all cells once, then again) so
 * that drift spreads evenly; fold repetitions into res[0..n). Returns 0, or
 * 128+signal when interrupted (*ndone = cells complete). */
static int run_plan(const struct run_args *a, const struct plan *pl, struct result *res,
		    size_t *ndone)
{
	unsigned reps = a->repeat ? a->repeat : 1;
	size_t total = pl->n * reps, k = 0;
	uint64_t t0 = now_ns();
	int sig = 0;

	*ndone = 0;
	for (unsigned r = 0; r < reps && !sig; r++) {
		for (size_t i = 0; i < pl->n && !sig; i++, k++) {
			const struct cell *c = &pl->cells[i];
			struct result *out = &res[i * reps + r];

			progress(a, k, total, t0);
			fill_result_config(out, c);
			snprintf(out->section, sizeof(out->section), "%s", c->section);
			if (c->skip[0] || a->dry_run) {
				out->status = RES_SKIPPED;
				snprintf(out->reason, sizeof(out->reason), "%s",
					 c->skip[0] ? c->skip : "dry run");
				continue;
			}
			if (run_cell(c, out) == -EINTR || runner_interrupted)
				sig = 128 + (runner_interrupted ? runner_interrupted : SIGINT);
			fill_result_config(out, c);
			snprintf(out->section, sizeof(out->section), "%s", c->section);
		}
	}
	progress(a, total, total, t0);
	/* a cell is complete when all its repetitions ran */
	size_t last = pl->n * (reps - 1);
	size_t complete = !sig ? pl->n : k > last ? k - last - 1 : 0;

	for (size_t i = 0; reps > 1 && i < pl->n; i++) {
		repeat_fold(&res[i * reps], reps);
		if (i)
			memcpy(&res[i], &res[i * reps], sizeof(*res));
	}
	*ndone = complete;
	return sig;
}

int write_report(const struct run_args *a, const struct report *rep)
{
	int tmp_handle = -1;
	char tmp[PATH_MAX], err[ERRLEN] = "";
	FILE *f = stdout;
	int ret;

	if (a->output) {
		/* never shortened: a cut name could be the user's own file */
		if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp-%d", a->output, (int)getpid()) >= sizeof(tmp)) {
			fprintf(stderr, "ipclab: -o %.64s...: the path is too long; use a shorter one\n",
				a->output);
			return 2;
		}
		/* registered first: a signal while writing must not leave it */
		tmp_handle = cleanup_add(CL_PATH, tmp);
		if (tmp_handle < 0) {
			fprintf(stderr, "ipclab: cannot write %s: %s\n", tmp, strerror(-tmp_handle));
			return 1;
		}
		f = fopen(tmp, "wx");
		if (!f) {
			cleanup_forget(tmp_handle);
			fprintf(stderr, "ipclab: cannot write %s: %s\n", tmp, strerror(errno));
			return 1;
		}
	}
	if (a->pivot)
		ret = report_pivot(f, rep, a->pivot_spec, a->format);
	else if (strcmp(a->format, "json") == 0)
		ret = report_json(f, rep, err, sizeof(err));
	else if (strcmp(a->format, "csv") == 0)
		ret = report_csv(f, rep);
	else if (strcmp(a->format, "markdown") == 0)
		ret = report_markdown(f, rep);
	else if (strcmp(a->format, "ranked") == 0)
		ret = report_table_ranked(f, rep);
	else
		ret = report_table(f, rep);
	if (f != stdout) {
		if (fclose(f) || ret) {
			cleanup_run_one(tmp_handle);
			fprintf(stderr, "ipclab: writing %s failed%s%s\n", a->output, err[0] ? ": " : "", err);
			return 1;
		}
		if (rename(tmp, a->output)) {
			fprintf(stderr, "ipclab: cannot rename %s to %s: %s\n", tmp, a->output, strerror(errno));
			cleanup_run_one(tmp_handle);
			return 1;
		}
		cleanup_forget(tmp_handle);
	} else {
		fflush(stdout);
	}
	return ret ? 1 : 0;
}

static int report_failures(const struct result *res, size_t n)
{
	int failed = 0;

	for (size_t i = 0; i < n; i++) {
		if (res[i].status != RES_FAILED)
			continue;
		fprintf(stderr, "ipclab: %s/%s %llu B %s: %s\n", res[i].transport, res[i].pattern,
			(unsigned long long)res[i].cell.size, res[i].cell.threads ? "thread" : "process",
			res[i].reason);
		failed = 1;
	}
	return failed;
}

/* --pm-qos and --keep-awake around the whole plan. Returns the pm-qos fd
 * (or 0), or -1 after printing why it failed. */
static int idle_knobs_start(const struct run_args *a, const struct plan *pl)
{
	char err[ERRLEN];
	int cpus[64], n = 0, fd = 0;

	if (a->pm_qos_us >= 0 && (fd = pm_qos_hold(a->pm_qos_us, err, sizeof(err))) < 0) {
		fprintf(stderr, "ipclab: %s\n", err);
		return -1;
	}
	if (!a->keep_awake)
		return fd;
	for (size_t i = 0; i < pl->n; i++) {
		const struct pin_spec *p = &pl->cells[i].pin;
		int want[2] = { p->server_cpu, p->client_cpu };

		for (int k = 0; k < 2; k++) {
			bool have = want[k] < 0;

			for (int j = 0; j < n && !have; j++)
				have = cpus[j] == want[k];
			if (!have && n < 64)
				cpus[n++] = want[k];
		}
		if (p->mode == PIN_NONE) {	/* unpinned: every online CPU */
			n = 0;
			for (long c = 0; c < sysconf(_SC_NPROCESSORS_ONLN) && c < 64; c++)
				cpus[n++] = (int)c;
			break;
		}
	}
	if (keep_awake_start(cpus, (unsigned)n, err, sizeof(err))) {
		keep_awake_stop();
		if (fd > 0)
			close(fd);
		fprintf(stderr, "ipclab: %s\n", err);
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

/* Things that distort or endanger a run, said once before it starts. */
static void plan_warnings(const struct run_args *a, const struct plan *pl)
{
	bool rt = false, spin_same = false;
	const char *spinner = "";
	char buf[32];

	if (a->quiet && a->dry_run)
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
		fprintf(stderr, "ipclab: warning: RT throttling is off (kernel.sched_rt_runtime_us = -1): a runaway realtime endpoint can hold a CPU for ever\n");
	if (spin_same)
		fprintf(stderr, "ipclab: warning: %s spins while it waits and both endpoints share one CPU: every wait burns the peer's time slice (use --pin split)\n",
			spinner);
}

int plan_and_run(struct run_args *args, unsigned nargs, struct report *rep, struct result **resp)
{
	struct plan pl = { 0 };
	struct run_args *a = &args[0];
	struct result *res = NULL;
	int ret = 0, fd;
	size_t ndone = 0;

	*resp = NULL;
	rep->cmdline = a->cmdline;
	for (unsigned i = 0; i < nargs && !ret; i++)
		ret = build_plan(&args[i], &pl);
	if (ret)
		goto out;
	res = calloc(pl.n ? pl.n * (a->repeat ? a->repeat : 1) : 1, sizeof(*res));
	if (!res) {
		ret = usage_error("out of memory for %zu results", pl.n);
		goto out;
	}
	plan_warnings(a, &pl);
	env_collect(&rep->env);
	fd = idle_knobs_start(a, &pl);
	if (fd < 0) {
		ret = 1;
		goto out;
	}
	ret = run_plan(a, &pl, res, &ndone);
	idle_knobs_stop(fd);
	rep->results = res;
	rep->n = ndone;	/* complete cells only */
	*resp = res;
	res = NULL;
out:
	free(res);
	for (unsigned i = 0; i < pl.nblocks; i++)
		free(pl.opt_blocks[i]);
	free(pl.cells);
	return ret;
}

/* --plot DIR: the JSON result beside its figures. */
static int plot_after_run(const struct run_args *a, const struct report *rep)
{
	struct run_args j = *a;
	char path[1024], err[ERRLEN];

	if (mkdir(a->plot_dir, 0777) && errno != EEXIST) {
		fprintf(stderr, "ipclab: --plot %s: %s\n", a->plot_dir, strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/results.json", a->plot_dir);
	j.format = "json";
	j.output = path;
	j.pivot = NULL;
	if (write_report(&j, rep))
		return 1;
	if (plot_report_file(path, a->plot_dir, err, sizeof(err))) {
		fprintf(stderr, "ipclab: --plot: %s\n", err);
		return 1;
	}
	return 0;
}

int do_run(struct run_args *args, unsigned nargs)
{
	struct report rep = { 0 };
	struct result *res;
	int ret = plan_and_run(args, nargs, &rep, &res), wret;

	if (!res)
		return ret;
	wret = write_report(&args[0], &rep);
	if (args[0].plot_dir && !wret)
		wret = plot_after_run(&args[0], &rep);
	wret = report_failures(res, rep.n) ? 1 : wret;
	if (ret > 128)
		fprintf(stderr, "ipclab: interrupted by signal %d\n", ret - 128);
	free(res);
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

