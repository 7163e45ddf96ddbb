// SPDX-License-Identifier: MIT
/* The command line: subcommands, global options, the plan (the cartesian
 * product of what the user listed) and the top-level error reporting. Only
 * this file and main.c print errors and choose exit codes:
 * 0 ok, 1 the run failed, 2 bad input, 128+N interrupted by signal N. */
#include <fnmatch.h>
#include <getopt.h>
#include <sys/stat.h>
#include <sched.h>
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

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("ipclab: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 2;
}

/* Split a comma list in place. */
static unsigned split_list(char *s, char **out, unsigned max)
{
	unsigned n = 0;
	char *save = NULL;

	for (char *t = strtok_r(s, ",", &save); t && n < max; t = strtok_r(NULL, ",", &save))
		out[n++] = t;
	return n;
}

static const char *nearest(const char *word, const char *const *names, size_t n)
{
	const char *best = NULL;
	unsigned bd = 3;

	for (size_t i = 0; i < n; i++) {
		unsigned d = edit_distance(word, names[i]);

		if (d < bd) {
			bd = d;
			best = names[i];
		}
	}
	return best;
}

static int unknown_name(const char *what, const char *word, bool transport)
{
	const char *names[128];
	size_t n = 0;
	const char *hint;

	if (transport)
		for (size_t i = 0; i < n_transports && n < 128; i++)
			names[n++] = transports[i]->name;
	else
		for (size_t i = 0; i < n_patterns && n < 128; i++)
			names[n++] = patterns[i]->name;
	hint = nearest(word, names, n);
	if (hint)
		return usage_error("unknown %s '%s'; did you mean '%s'? (ipclab list shows them all)",
				   what, word, hint);
	return usage_error("unknown %s '%s'; run 'ipclab list' to see them all", what, word);
}

/* ---- plan ------------------------------------------------------------------ */

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

/* Parse an options block for a transport or pattern from the -O list. */
static int make_opts(struct plan *pl, const struct opt_desc *d, size_t size, struct run_args *a,
		     bool *used, void **out)
{
	char err[ERRLEN];
	void *blk;

	*out = NULL;
	if (!d || !size)
		return 0;
	blk = calloc(1, size);
	if (!blk || pl->nblocks >= ARRAY_SIZE(pl->opt_blocks))
		return free(blk), usage_error("too many transports and patterns in one run");
	pl->opt_blocks[pl->nblocks++] = blk;
	if (opt_defaults(d, blk, err, sizeof(err)))
		return usage_error("internal: bad default: %s", err);
	for (unsigned i = 0; i < a->nkv; i++) {
		char key[64];
		const char *eq = strchr(a->kv[i], '=');
		const struct opt_desc *od;

		snprintf(key, sizeof(key), "%.*s", (int)(eq - a->kv[i]), a->kv[i]);
		od = opt_find(d, key);
		if (!od)
			continue;
		used[i] = true;
		if (opt_set(od, blk, eq + 1, err, sizeof(err)))
			return usage_error("%s", err);
	}
	*out = blk;
	return 0;
}

/* Transports selected by one -t word: a name, "all", or a glob. */
static int select_transports(const char *word, const struct transport **out, unsigned *n,
			     bool *explicit_)
{
	bool glob = strpbrk(word, "*?[") != NULL, all = strcmp(word, "all") == 0;
	unsigned before = *n;

	for (size_t i = 0; i < n_transports && *n < MAX_LIST; i++) {
		const struct transport *tp = transports[i];

		if (all ? (tp->caps & TP_IN_PROCESS) != 0 :
			  glob ? fnmatch(word, tp->name, 0) != 0 : strcmp(word, tp->name) != 0)
			continue;
		explicit_[*n] = !all && !glob;
		out[(*n)++] = tp;
	}
	if (*n == before)
		return glob ? usage_error("-t %s matches no transport; run 'ipclab list'", word) :
			      unknown_name("transport", word, true);
	return 0;
}

struct dims {
	const struct transport *tp[MAX_LIST];
	bool tp_explicit[MAX_LIST];
	void *tp_opts[MAX_LIST];
	const struct pattern *pat[MAX_LIST];
	void *pat_opts[MAX_LIST];
	uint64_t size[MAX_LIST];
	bool threads[2];
	struct pin_spec pin[MAX_LIST];
	struct sched_spec sched[MAX_LIST];
	unsigned clients[MAX_LIST];
	uint64_t think[MAX_LIST], think_ns[MAX_LIST];
	double rate[MAX_LIST];
	char rate_text[MAX_LIST][24];
	unsigned ntp, npat, nsize, nep, npin, nsched, nclients, nthink, nrate;
};

/* "1k..512k": every doubling from the first to the last; else one value. */
static int expand_range(const char *w, int (*parse)(const char *, uint64_t *), uint64_t *out,
			unsigned *n)
{
	const char *dots = strstr(w, "..");
	char lo_s[32];
	uint64_t lo, hi;

	if (!dots)
		return *n < MAX_LIST && !parse(w, &out[(*n)++]) ? 0 : -EINVAL;
	snprintf(lo_s, sizeof(lo_s), "%.*s", (int)(dots - w), w);
	if (parse(lo_s, &lo) || parse(dots + 2, &hi) || lo == 0 || hi < lo)
		return -EINVAL;
	for (uint64_t v = lo; v <= hi && *n < MAX_LIST; v *= 2)
		out[(*n)++] = v;
	return 0;
}

/* "1/s", "10k/s", "500", "max" (0 = as fast as it can). */
static int parse_rate(const char *w, double *out)
{
	char num[32];
	size_t l = strcspn(w, "/");
	uint64_t v;

	if (strcmp(w, "max") == 0)
		return *out = 0, 0;
	if (l >= sizeof(num) || (w[l] && strcmp(w + l, "/s")))
		return -EINVAL;
	snprintf(num, sizeof(num), "%.*s", (int)l, w);
	if (parse_count(num, &v) || v == 0 || v > 1000000000)
		return -EINVAL;
	*out = (double)v;
	return 0;
}

static int parse_dims_names(struct run_args *a, struct dims *d)
{
	char *w[MAX_LIST];
	unsigned n = split_list(a->transports, w, MAX_LIST);

	if (!n)
		return usage_error("-t: no transport named; e.g. -t pipe,unix-stream or -t all");
	for (unsigned i = 0; i < n; i++)
		if (select_transports(w[i], d->tp, &d->ntp, d->tp_explicit))
			return 2;
	n = split_list(a->patterns, w, MAX_LIST);
	for (unsigned i = 0; i < n; i++) {
		d->pat[d->npat] = pattern_find(w[i]);
		if (!d->pat[d->npat++])
			return unknown_name("pattern", w[i], false);
	}
	if (!d->npat)
		return usage_error("-p: no pattern named; e.g. -p stream or -p pingpong");
	return 0;
}

static int parse_dims_numbers(struct run_args *a, struct dims *d)
{
	char *w[MAX_LIST];
	unsigned n = split_list(a->sizes, w, MAX_LIST);

	for (unsigned i = 0; i < n; i++) {
		unsigned first = d->nsize;

		if (expand_range(w[i], parse_size, d->size, &d->nsize))
			return usage_error("-s %s: not a size or range; use e.g. 64, 4k, 1M or 1k..512k", w[i]);
		for (unsigned k = first; k < d->nsize; k++) {
			if (d->size[k] < MSG_HDR_SIZE)
				return usage_error("-s %s: a message holds at least the %zu-byte header; use -s %zu or more",
						   w[i], MSG_HDR_SIZE, MSG_HDR_SIZE);
			if (d->size[k] > (1u << 30))
				return usage_error("-s %s: larger than 1 GiB; use a smaller size", w[i]);
		}
	}
	n = a->thinks ? split_list(a->thinks, w, MAX_LIST) : 0;
	for (unsigned i = 0; i < n; i++)
		if (expand_range(w[i], parse_count, d->think, &d->nthink))
			return usage_error("--think %s: expected iterations per byte, e.g. 1,2,4 or 1..2048", w[i]);
	n = a->think_nss ? split_list(a->think_nss, w, MAX_LIST) : 0;
	if (n && d->nthink)
		return usage_error("--think and --think-ns exclude each other; use one");
	for (unsigned i = 0; i < n; i++)
		if (expand_range(w[i], parse_duration, d->think_ns, &d->nthink))
			return usage_error("--think-ns %s: expected a duration, e.g. 10us or 1us..1ms", w[i]);
	if (n)
		for (unsigned i = 0; i < d->nthink; i++)
			d->think_ns[i] = d->think[i], d->think[i] = 0;
	if (!d->nthink)
		d->nthink = 1;
	n = a->rates ? split_list(a->rates, w, MAX_LIST) : 0;
	for (unsigned i = 0; i < n; i++) {
		if (parse_rate(w[i], &d->rate[d->nrate]))
			return usage_error("--rate %s: expected messages per second, e.g. 1/s, 10k/s or max", w[i]);
		snprintf(d->rate_text[d->nrate++], sizeof(d->rate_text[0]), "%s", w[i]);
	}
	if (!d->nrate)
		snprintf(d->rate_text[d->nrate++], sizeof(d->rate_text[0]), "max");
	n = split_list(a->clients, w, MAX_LIST);
	for (unsigned i = 0; i < n; i++) {
		uint64_t v;

		if (parse_u64(w[i], &v) || v < 1 || v > MAX_CLIENTS)
			return usage_error("--clients %s: expected a number from 1 to %d", w[i], MAX_CLIENTS);
		d->clients[d->nclients++] = (unsigned)v;
	}
	return 0;
}

static int parse_dims_placement(struct run_args *a, struct dims *d)
{
	char *w[MAX_LIST], err[ERRLEN];
	unsigned n = split_list(a->endpoints, w, MAX_LIST);

	for (unsigned i = 0; i < n; i++) {
		if (strcmp(w[i], "process") && strcmp(w[i], "thread"))
			return usage_error("--endpoints %s: expected process or thread (or both: process,thread)", w[i]);
		d->threads[d->nep++ % 2] = strcmp(w[i], "thread") == 0;
	}
	if (d->nep > 2)
		d->nep = 2;
	n = split_list(a->pins, w, MAX_LIST);
	for (unsigned i = 0; i < n; i++)
		if (pin_parse(w[i], &d->pin[d->npin++], err, sizeof(err)))
			return usage_error("%s", err);
	n = split_list(a->scheds, w, MAX_LIST);
	for (unsigned i = 0; i < n; i++)
		if (sched_parse(w[i], &d->sched[d->nsched++], err, sizeof(err)))
			return usage_error("%s", err);
	return 0;
}

static void collect_option_names(const struct dims *d, const char **names, size_t *n)
{
	for (unsigned i = 0; i < d->ntp; i++)
		for (const struct opt_desc *o = d->tp[i]->options; o && o->name; o++)
			if (*n < 128)
				names[(*n)++] = o->name;
	for (unsigned i = 0; i < d->npat; i++)
		for (const struct opt_desc *o = d->pat[i]->options; o && o->name; o++)
			if (*n < 128)
				names[(*n)++] = o->name;
}

static int parse_dims_options(struct plan *pl, struct run_args *a, struct dims *d)
{
	bool used[MAX_LIST] = { false };
	const char *names[128];
	size_t nn = 0;

	for (unsigned i = 0; i < a->nkv; i++)
		if (!strchr(a->kv[i], '=') || a->kv[i][0] == '=')
			return usage_error("-O %s: expected key=value, e.g. -O pipe-size=1M", a->kv[i]);
	for (unsigned i = 0; i < d->ntp; i++)
		if (make_opts(pl, d->tp[i]->options, d->tp[i]->opts_size, a, used, &d->tp_opts[i]))
			return 2;
	for (unsigned i = 0; i < d->npat; i++)
		if (make_opts(pl, d->pat[i]->options, d->pat[i]->opts_size, a, used, &d->pat_opts[i]))
			return 2;
	collect_option_names(d, names, &nn);
	for (unsigned i = 0; i < a->nkv; i++) {
		char key[64];
		const char *hint;

		if (used[i])
			continue;
		snprintf(key, sizeof(key), "%.*s", (int)strcspn(a->kv[i], "="), a->kv[i]);
		hint = nearest(key, names, nn);
		if (hint)
			return usage_error("-O %s: no selected transport or pattern has option '%s'; did you mean '%s'?",
					   a->kv[i], key, hint);
		return usage_error("-O %s: no selected transport or pattern has option '%s'; 'ipclab list' shows each one's options",
				   a->kv[i], key);
	}
	return 0;
}

/* Why a cell cannot run (input error if the transport was named, else a
 * skip); "" if it can. Returns 2 for an input error already printed. */
static int cell_check(struct cell *c, bool named)
{
	const struct transport *tp = c->tp;
	size_t max = tp->max_msg ? tp->max_msg(c->tp_opts) : 0;
	char why[sizeof(c->skip)] = "";

	if (max && c->size > max)
		snprintf(why, sizeof(why), "%s carries at most %zu bytes per message here, -s %llu is larger",
			 tp->name, max, (unsigned long long)c->size);
	else if ((tp->caps & TP_THREAD_ONLY) && !c->threads)
		snprintf(why, sizeof(why), "%s works between threads only; use --endpoints thread",
			 tp->name);
	else if (c->clients > 1 && !(tp->caps & TP_MULTI_CLIENT))
		snprintf(why, sizeof(why), "%s serves one client; --clients %u needs a multi-client transport",
			 tp->name, c->clients);
	if (!why[0])
		return 0;
	if (named)
		return usage_error("%s", why);
	snprintf(c->skip, sizeof(c->skip), "%s", why);
	return 0;
}

/* Iterations of the think loop per ns, measured once and printed. */
static double think_per_ns(const struct run_args *a)
{
	static double per_ns;

	if (!per_ns) {
		per_ns = think_calibrate();
		if (!a->quiet)
			fprintf(stderr, "ipclab: think loop calibrated: %.3f iterations/ns (%.2f ns each)\n",
				per_ns, 1 / per_ns);
	}
	return per_ns;
}

static int add_cells(struct plan *pl, struct run_args *a, struct dims *d)
{
	for (unsigned ip = 0; ip < d->npat; ip++)
	for (unsigned is = 0; is < d->nsize; is++)
	for (unsigned it = 0; it < d->ntp; it++)
	for (unsigned ie = 0; ie < d->nep; ie++)
	for (unsigned ipn = 0; ipn < d->npin; ipn++)
	for (unsigned isc = 0; isc < d->nsched; isc++)
	for (unsigned ic = 0; ic < d->nclients; ic++)
	for (unsigned ik = 0; ik < d->nthink; ik++)
	for (unsigned ir = 0; ir < d->nrate; ir++) {
		struct cell *c = plan_add(pl);

		if (!c)
			return usage_error("out of memory");
		*c = (struct cell){ .tp = d->tp[it], .tp_opts = d->tp_opts[it],
				    .pat = d->pat[ip], .pat_opts = d->pat_opts[ip],
				    .size = d->size[is], .count = a->count,
				    .duration_ns = a->duration_ns, .threads = d->threads[ie],
				    .pin = d->pin[ipn], .sched = d->sched[isc],
				    .clients = d->clients[ic], .verify = a->verify,
				    .timeout_ns = a->timeout_ns };
		c->warmup = a->warmup_set ? a->warmup : runner_default_warmup(a->count);
		c->think = d->think[ik];
		c->think_ns = d->think_ns[ik];
		if (c->think_ns)
			c->think_iters = (uint64_t)((double)c->think_ns * think_per_ns(a));
		c->rate = d->rate[ir];
		c->pm_qos_us = a->pm_qos_us;
		snprintf(c->section, sizeof(c->section), "%s", a->section ? a->section : "");
		c->keep_awake = a->keep_awake;
		snprintf(c->rate_text, sizeof(c->rate_text), "%s", d->rate_text[ir]);
		/* a paced run warms up with one message unless told otherwise */
		if (c->rate > 0 && !a->warmup_set)
			c->warmup = 1;
		if (cell_check(c, d->tp_explicit[it] && !a->lenient))
			return 2;
		if ((c->tp->caps & TP_SPINS) && c->sched.policy != SCHED_OTHER &&
		    c->pin.server_cpu >= 0 && c->pin.server_cpu == c->pin.client_cpu)
			return usage_error("%s spins while waiting: under --sched %s on one CPU the spinner never lets its peer run; use --pin split or --sched other",
					   c->tp->name, c->sched.text);
	}
	return 0;
}

static int build_plan(struct run_args *orig, struct plan *pl)
{
	/* the lists are split in place: work on copies, so that run_args can
	 * share strings (the default run and the suite do) */
	struct run_args copy = *orig, *a = &copy;
	char **lists[] = { &a->transports, &a->patterns, &a->sizes, &a->endpoints, &a->pins,
			   &a->scheds, &a->clients, &a->thinks, &a->think_nss, &a->rates };
	struct dims *d = calloc(1, sizeof(*d));
	int ret = 0;

	for (size_t i = 0; i < ARRAY_SIZE(lists); i++)
		if (*lists[i] && !(*lists[i] = strdup(*lists[i])))
			ret = usage_error("out of memory");
	if (!d)
		ret = usage_error("out of memory");
	if (!ret)
		ret = parse_dims_names(a, d);
	if (!ret)
		ret = parse_dims_numbers(a, d);
	if (!ret)
		ret = parse_dims_placement(a, d);
	if (!ret)
		ret = parse_dims_options(pl, a, d);
	if (!ret)
		ret = add_cells(pl, a, d);
	for (size_t i = 0; i < ARRAY_SIZE(lists); i++)
		free(*lists[i]);
	free(d);
	return ret;
}

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
	char tmp[1100], err[ERRLEN] = "";
	FILE *f = stdout;
	int ret;

	if (a->output) {
		snprintf(tmp, sizeof(tmp), "%s.tmp-%d", a->output, (int)getpid());
		f = fopen(tmp, "wx");
		if (!f) {
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
			unlink(tmp);
			fprintf(stderr, "ipclab: writing %s failed%s%s\n", a->output, err[0] ? ": " : "", err);
			return 1;
		}
		if (rename(tmp, a->output)) {
			fprintf(stderr, "ipclab: cannot rename %s to %s: %s\n", tmp, a->output, strerror(errno));
			unlink(tmp);
			return 1;
		}
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

static int do_run(struct run_args *args, unsigned nargs)
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
static void vmstat_line(const struct cell *c, const struct sys_snap *a, const struct sys_snap *b)
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

/* ---- options ------------------------------------------------------------------- */

enum { OPT_VERIFY = 256, OPT_TIMEOUT, OPT_PIN, OPT_SCHED, OPT_CLIENTS, OPT_VERSION,
       OPT_WARMUP, OPT_REPEAT, OPT_THINK, OPT_THINK_NS, OPT_RATE, OPT_PIVOT, OPT_PM_QOS,
       OPT_KEEP_AWAKE, OPT_DRY_RUN, OPT_VMSTAT, OPT_PLOT };

static const struct option long_opts[] = {
	{ "transport", required_argument, NULL, 't' },
	{ "pattern", required_argument, NULL, 'p' },
	{ "size", required_argument, NULL, 's' },
	{ "count", required_argument, NULL, 'n' },
	{ "duration", required_argument, NULL, 'd' },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "endpoints", required_argument, NULL, 'e' },
	{ "pin", required_argument, NULL, OPT_PIN },
	{ "sched", required_argument, NULL, OPT_SCHED },
	{ "clients", required_argument, NULL, OPT_CLIENTS },
	{ "format", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' },
	{ "option", required_argument, NULL, 'O' },
	{ "verify", no_argument, NULL, OPT_VERIFY },
	{ "think", required_argument, NULL, OPT_THINK },
	{ "think-ns", required_argument, NULL, OPT_THINK_NS },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "repeat", required_argument, NULL, OPT_REPEAT },
	{ "pivot", required_argument, NULL, OPT_PIVOT },
	{ "pm-qos", required_argument, NULL, OPT_PM_QOS },
	{ "keep-awake", no_argument, NULL, OPT_KEEP_AWAKE },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "vmstat", no_argument, NULL, OPT_VMSTAT },
	{ "plot", required_argument, NULL, OPT_PLOT },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ 0 },
};

static void usage(FILE *f)
{
	fputs("usage: ipclab [run] [options]     run experiments (no arguments: the default comparison)\n"
	      "       ipclab list                 transports and patterns, with capabilities and options\n", f);
	for (const struct subcommand *sc = subcommands; sc->name; sc++)
		fprintf(f, "       ipclab %-20s %s\n", sc->name, sc->summary);
	fputs("\n"
	      "Lists (a,b,c) run the cartesian product of every listed value.\n"
	      "  -t, --transport LIST   transports, 'all' or globs ('shm-*'); default all\n"
	      "  -p, --pattern LIST     stream, pingpong; default pingpong\n"
	      "  -s, --size LIST        message size in bytes, header (16 B) included: 64, 4k, 1M, 1k..512k\n"
	      "                         (ranges double); default 64\n"
	      "  -n, --count N          measured messages (200k, 1M); default 100k\n"
	      "  -d, --duration D       measure for D (5s, 500ms) instead of a count\n"
	      "      --warmup N         messages before the measured window; default count/20, at most 10k\n"
	      "  -e, --endpoints LIST   process, thread; default process\n"
	      "      --pin LIST         none, same, split, or SERVER_CPU:CLIENT_CPU; default none\n"
	      "      --sched LIST       other, fifo:PRIO, rr:PRIO, batch, idle; default other\n"
	      "      --clients LIST     clients served by one server; default 1\n"
	      "  -O, --option KEY=VAL   a transport's or pattern's own option (see ipclab list)\n"
	      "      --verify           fill every payload with a checked pattern\n"
	      "      --think LIST       busy loop of N iterations per message byte after each message, both\n"
	      "                         sides (seed 001); ranges double: 1..2048\n"
	      "      --think-ns LIST    calibrated busy time after each message instead: 10us, 1us..1ms\n"
	      "      --rate LIST        client sends on a schedule: 1/s, 10k/s, max; latency counts from\n"
	      "                         each message's intended send time\n"
	      "      --repeat N         run every cell N times, interleaved; report medians and spread\n"
	      "      --pivot ROW,COL,METRIC  print METRIC as a ROW x COL table (e.g. size,think,cpu_pct)\n"
	      "      --pm-qos US        hold /dev/cpu_dma_latency at US microseconds during the run\n"
	      "      --keep-awake       a SCHED_IDLE busy loop on each endpoint CPU: no idle-exit latency\n"
	      "      --dry-run          list the cells the plan holds without running them\n"
	      "      --vmstat           print a line a second while cells run (stderr): context switches,\n"
	      "                         interrupts, and us/sy/id per CPU and in total (/proc/stat)\n"
	      "      --timeout D        fail a cell when no message moves for D; default 10s\n"
	      "  -f, --format FMT       table, ranked (best first per pattern and size), json, csv,\n"
	      "                         markdown; default table\n"
	      "  -o, --output FILE      write the report to FILE (atomically) instead of stdout\n"
	      "      --plot DIR         also write DIR/results.json and its figures (gnuplot)\n"
	      "  -q, --quiet            no progress line\n"
	      "  -h, --help, --version\n"
	      "Exit status: 0 ok, 1 a cell failed, 2 bad input, 128+N interrupted by signal N.\n", f);
}

void args_defaults(struct run_args *a)
{
	static char t[] = "all", p[] = "pingpong", s[] = "64", e[] = "process", pin[] = "none",
		    sc[] = "other", c[] = "1";

	memset(a, 0, sizeof(*a));
	a->transports = t;
	a->patterns = p;
	a->sizes = s;
	a->endpoints = e;
	a->pins = pin;
	a->scheds = sc;
	a->clients = c;
	a->count = 100000;
	a->timeout_ns = 10 * NSEC_PER_SEC;
	a->format = "table";
	a->repeat = 1;
	a->pm_qos_us = -1;
}

static int parse_number_arg(int opt, const char *arg, struct run_args *a)
{
	uint64_t v;

	switch (opt) {
	case 'n':
		if (parse_count(arg, &v) || v == 0 || v > UINT32_MAX / 2)
			return usage_error("-n %s: expected a count from 1 to 2G, e.g. 200k or 1M", arg);
		a->count = v;
		a->count_set = true;
		return 0;
	case OPT_WARMUP:
		if (parse_count(arg, &v) || v > UINT32_MAX / 2)
			return usage_error("--warmup %s: expected a count, e.g. 1000 or 10k", arg);
		a->warmup = v;
		a->warmup_set = true;
		return 0;
	case 'd':
		if (parse_duration(arg, &v) || v == 0)
			return usage_error("-d %s: expected a duration above zero, e.g. 5s or 500ms", arg);
		a->duration_ns = v;
		return 0;
	case OPT_PM_QOS:
		if (parse_u64(arg, &v) || v > 100000000)
			return usage_error("--pm-qos %s: expected microseconds, e.g. 0 (no deep idle) or 10", arg);
		a->pm_qos_us = (int)v;
		return 0;
	case OPT_REPEAT:
		if (parse_u64(arg, &v) || v < 1 || v > 1000)
			return usage_error("--repeat %s: expected a number of repetitions from 1 to 1000", arg);
		a->repeat = (unsigned)v;
		return 0;
	case OPT_TIMEOUT:
		if (parse_duration(arg, &v))
			return usage_error("--timeout %s: expected a duration, e.g. 30s (0 = none)", arg);
		a->timeout_ns = v;
		return 0;
	}
	return 0;
}

static int parse_one(int opt, char *arg, struct run_args *a)
{
	switch (opt) {
	case 't': a->transports = arg; break;
	case 'p': a->patterns = arg; break;
	case 's': a->sizes = arg; break;
	case 'e': a->endpoints = arg; break;
	case OPT_PIN: a->pins = arg; break;
	case OPT_SCHED: a->scheds = arg; break;
	case OPT_CLIENTS: a->clients = arg; break;
	case OPT_VERIFY: a->verify = true; break;
	case OPT_THINK: a->thinks = arg; break;
	case OPT_KEEP_AWAKE: a->keep_awake = true; break;
	case OPT_DRY_RUN: a->dry_run = true; break;
	case OPT_VMSTAT: runner_set_tick(vmstat_line); break;
	case OPT_PLOT: a->plot_dir = arg; break;
	case OPT_THINK_NS: a->think_nss = arg; break;
	case OPT_RATE: a->rates = arg; break;
	case OPT_PIVOT: {
		char err[ERRLEN];

		if (pivot_parse(arg, a->pivot_spec, err, sizeof(err)))
			return usage_error("%s", err);
		if (a->pivot_spec[2]->kind == F_STR)
			return usage_error("--pivot %s: the metric must be a number, e.g. cpu_pct_total or msgs_per_s", arg);
		a->pivot = arg;
		break;
	}
	case 'q': a->quiet = true; break;
	case 'o': a->output = arg; break;
	case 'f':
		if (strcmp(arg, "table") && strcmp(arg, "json") && strcmp(arg, "csv") &&
		    strcmp(arg, "markdown") && strcmp(arg, "ranked"))
			return usage_error("-f %s: expected table, ranked, json, csv or markdown", arg);
		a->format = arg;
		break;
	case 'O':
		if (a->nkv >= MAX_LIST)
			return usage_error("-O: at most %d options", MAX_LIST);
		a->kv[a->nkv++] = arg;
		break;
	default:
		return parse_number_arg(opt, arg, a);
	}
	return 0;
}

static void save_cmdline(struct run_args *a, int argc, char **argv)
{
	size_t off = 0;

	for (int i = 0; i < argc && off < sizeof(a->cmdline); i++)
		off += (size_t)snprintf(a->cmdline + off, sizeof(a->cmdline) - off, "%s%s",
					i ? " " : "", argv[i]);
}

static int parse_args(int argc, char **argv, struct run_args *a)
{
	int opt, ret;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":t:p:s:n:d:e:f:o:O:qh", long_opts, NULL)) != -1) {
		if (opt == 'h') {
			usage(stdout);
			return -1;
		}
		if (opt == OPT_VERSION) {
			printf("ipclab %s (%s)\n", IPCLAB_VERSION, IPCLAB_GIT_REV);
			return -1;
		}
		if (opt == '?')
			return usage_error("unknown option '%s'; see ipclab --help", argv[optind - 1]);
		if (opt == ':')
			return usage_error("option '%s' needs a value; see ipclab --help", argv[optind - 1]);
		ret = parse_one(opt, optarg, a);
		if (ret)
			return ret;
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'; see ipclab --help", argv[optind]);
	return 0;
}

/* The default comparison: every transport, stream 4 KiB and ping-pong 64 B,
 * endpoints on different CPUs, about 30 s on two cores. */
static int default_run(struct run_args *base)
{
	static char s4k[] = "4k", s64[] = "64", stream[] = "stream", pp[] = "pingpong";
	static char t1[] = "all", t2[] = "all", split[] = "split", split2[] = "split";
	struct run_args two[2] = { *base, *base };

	two[0].format = "ranked";

	two[0].patterns = stream;
	two[0].sizes = s4k;
	two[0].transports = t1;
	two[1].patterns = pp;
	two[1].sizes = s64;
	two[1].transports = t2;
	two[0].pins = split;
	two[1].pins = split2;
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		two[0].pins = two[1].pins = base->pins;
	for (int i = 0; i < 2; i++)
		if (!two[i].duration_ns && !two[i].count_set)
			two[i].duration_ns = 400 * NSEC_PER_MSEC;
	return do_run(two, 2);
}

int cli_main(int argc, char **argv)
{
	struct run_args a = { 0 };
	int ret;

	args_defaults(&a);
	save_cmdline(&a, argc, argv);
	runner_init();
	atexit(cleanup_all);
	if (argc > 1 && strcmp(argv[1], "list") == 0) {
		if (argc > 2)
			return usage_error("list takes no arguments");
		return cli_list();
	}
	if (argc > 1 && subcommand_find(argv[1]))
		return subcommand_find(argv[1])->main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "run") == 0) {
		argv++;
		argc--;
	} else if (argc > 1 && argv[1][0] != '-') {
		return usage_error("unknown command '%s'; expected run or list (see ipclab --help)", argv[1]);
	}
	ret = parse_args(argc, argv, &a);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (argc == 1)
		return default_run(&a);
	return do_run(&a, 1);
}
