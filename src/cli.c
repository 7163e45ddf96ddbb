// SPDX-License-Identifier: MIT
/* The command line: subcommands, global options, the plan (the cartesian
 * product of what the user listed) and the top-level error reporting. Only
 * this file and main.c print errors and choose exit codes:
 * 0 ok, 1 the run failed, 2 bad input, 128+N interrupted by signal N. */
#include <fnmatch.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ipclab/cleanup.h"
#include "ipclab/msg.h"
#include "ipclab/placement.h"
#include "ipclab/runner.h"

#define MAX_LIST 64

struct run_args {
	char *transports, *patterns, *sizes, *endpoints, *pins, *scheds, *clients;
	uint64_t count, warmup, duration_ns, timeout_ns;
	bool count_set, warmup_set, verify, quiet, default_run;
	const char *format, *output;
	unsigned repeat;
	char *kv[MAX_LIST];
	unsigned nkv;
	char cmdline[1024];
};

struct plan {
	struct cell *cells;
	size_t n, cap;
	void *opt_blocks[2 * MAX_LIST];
	unsigned nblocks;
};

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
	unsigned ntp, npat, nsize, nep, npin, nsched, nclients;
};

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
		uint64_t v;

		if (parse_size(w[i], &v))
			return usage_error("-s %s: not a size; use e.g. 64, 4k, 1M", w[i]);
		if (v < MSG_HDR_SIZE)
			return usage_error("-s %s: a message holds at least the %zu-byte header; use -s %zu or more",
					   w[i], MSG_HDR_SIZE, MSG_HDR_SIZE);
		if (v > (1u << 30))
			return usage_error("-s %s: larger than 1 GiB; use a smaller size", w[i]);
		d->size[d->nsize++] = v;
	}
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
	else if (c->clients > 1 && strcmp(c->pat->name, "stream") == 0)
		snprintf(why, sizeof(why), "stream with several clients is not supported yet");
	if (!why[0])
		return 0;
	if (named)
		return usage_error("%s", why);
	snprintf(c->skip, sizeof(c->skip), "%s", why);
	return 0;
}

static int add_cells(struct plan *pl, struct run_args *a, struct dims *d)
{
	for (unsigned ip = 0; ip < d->npat; ip++)
	for (unsigned is = 0; is < d->nsize; is++)
	for (unsigned it = 0; it < d->ntp; it++)
	for (unsigned ie = 0; ie < d->nep; ie++)
	for (unsigned ipn = 0; ipn < d->npin; ipn++)
	for (unsigned isc = 0; isc < d->nsched; isc++)
	for (unsigned ic = 0; ic < d->nclients; ic++) {
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
		if (cell_check(c, d->tp_explicit[it]))
			return 2;
		if ((c->tp->caps & TP_SPINS) && c->sched.policy != SCHED_OTHER &&
		    c->pin.server_cpu >= 0 && c->pin.server_cpu == c->pin.client_cpu)
			return usage_error("%s spins while waiting: under --sched %s on one CPU the spinner never lets its peer run; use --pin split or --sched other",
					   c->tp->name, c->sched.text);
	}
	return 0;
}

static int build_plan(struct run_args *a, struct plan *pl)
{
	struct dims *d = calloc(1, sizeof(*d));
	int ret;

	if (!d)
		return usage_error("out of memory");
	ret = parse_dims_names(a, d);
	if (!ret)
		ret = parse_dims_numbers(a, d);
	if (!ret)
		ret = parse_dims_placement(a, d);
	if (!ret)
		ret = parse_dims_options(pl, a, d);
	if (!ret)
		ret = add_cells(pl, a, d);
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

/* Run every cell; returns 0, or 128+signal when interrupted. */
static int run_plan(const struct run_args *a, const struct plan *pl, struct result *res,
		    size_t *ndone)
{
	uint64_t t0 = now_ns();

	for (size_t i = 0; i < pl->n; i++) {
		*ndone = i;
		const struct cell *c = &pl->cells[i];

		progress(a, i, pl->n, t0);
		fill_result_config(&res[i], c);
		if (c->skip[0]) {
			res[i].status = RES_SKIPPED;
			snprintf(res[i].reason, sizeof(res[i].reason), "%s", c->skip);
			continue;
		}
		if (run_cell(c, &res[i]) == -EINTR || runner_interrupted) {
			progress(a, pl->n, pl->n, t0);
			return 128 + (runner_interrupted ? runner_interrupted : SIGINT);
		}
		fill_result_config(&res[i], c);
	}
	progress(a, pl->n, pl->n, t0);
	*ndone = pl->n;
	return 0;
}

static int write_report(const struct run_args *a, const struct report *rep)
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
	if (strcmp(a->format, "json") == 0)
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

static int do_run(struct run_args *args, unsigned nargs)
{
	struct plan pl = { 0 };
	struct run_args *a = &args[0];
	struct report rep = { .cmdline = a->cmdline };
	struct result *res = NULL;
	int ret = 0, sig = 0;
	size_t ndone = 0;

	for (unsigned i = 0; i < nargs && !ret; i++)
		ret = build_plan(&args[i], &pl);
	if (ret)
		goto out;
	res = calloc(pl.n ? pl.n : 1, sizeof(*res));
	if (!res) {
		ret = usage_error("out of memory for %zu results", pl.n);
		goto out;
	}
	env_collect(&rep.env);
	sig = run_plan(a, &pl, res, &ndone);
	rep.results = res;
	rep.n = ndone;	/* complete cells only */
	ret = write_report(a, &rep);
	ret = report_failures(res, rep.n) ? 1 : ret;
	if (sig) {
		fprintf(stderr, "ipclab: interrupted by signal %d\n", sig - 128);
		ret = sig;
	}
out:
	free(res);
	for (unsigned i = 0; i < pl.nblocks; i++)
		free(pl.opt_blocks[i]);
	free(pl.cells);
	return ret;
}

/* ---- options ------------------------------------------------------------------- */

enum { OPT_VERIFY = 256, OPT_TIMEOUT, OPT_PIN, OPT_SCHED, OPT_CLIENTS, OPT_VERSION,
       OPT_WARMUP, OPT_REPEAT };

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
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ 0 },
};

static void usage(FILE *f)
{
	fputs("usage: ipclab [run] [options]     run experiments (no arguments: the default comparison)\n"
	      "       ipclab list                 transports and patterns, with capabilities and options\n"
	      "\n"
	      "Lists (a,b,c) run the cartesian product of every listed value.\n"
	      "  -t, --transport LIST   transports, 'all' or globs ('shm-*'); default all\n"
	      "  -p, --pattern LIST     stream, pingpong; default pingpong\n"
	      "  -s, --size LIST        message size in bytes, header (16 B) included: 64, 4k, 1M; default 64\n"
	      "  -n, --count N          measured messages (200k, 1M); default 100k\n"
	      "  -d, --duration D       measure for D (5s, 500ms) instead of a count\n"
	      "      --warmup N         messages before the measured window; default count/20, at most 10k\n"
	      "  -e, --endpoints LIST   process, thread; default process\n"
	      "      --pin LIST         none, same, split, or SERVER_CPU:CLIENT_CPU; default none\n"
	      "      --sched LIST       other, fifo:PRIO, rr:PRIO, batch, idle; default other\n"
	      "      --clients LIST     clients served by one server; default 1\n"
	      "  -O, --option KEY=VAL   a transport's or pattern's own option (see ipclab list)\n"
	      "      --verify           fill every payload with a checked pattern\n"
	      "      --timeout D        fail a cell when no message moves for D; default 10s\n"
	      "  -f, --format FMT       table, ranked (best first per pattern and size), json, csv,\n"
	      "                         markdown; default table\n"
	      "  -o, --output FILE      write the report to FILE (atomically) instead of stdout\n"
	      "  -q, --quiet            no progress line\n"
	      "  -h, --help, --version\n"
	      "Exit status: 0 ok, 1 a cell failed, 2 bad input, 128+N interrupted by signal N.\n", f);
}

static void args_defaults(struct run_args *a)
{
	static char t[] = "all", p[] = "pingpong", s[] = "64", e[] = "process", pin[] = "none",
		    sc[] = "other", c[] = "1";

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
