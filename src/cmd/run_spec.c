// SPDX-License-Identifier: MIT
/* The run command's text into a typed plan_spec: comma lists split, ranges
 * doubled, names looked up (with "did you mean"), -O key=value parsed into
 * each transport's and pattern's option block. Bad input is one line and
 * exit 2; the cells themselves are the planner's (src/core/plan.c). */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "run.h"
#include "ipclab/msg.h"
#include "ipclab/placement.h"
#include "ipclab/topology.h"
#include "../pattern/common.h"

/* How many words split_list would find (it keeps at most max). */
static size_t list_words(const char *s)
{
	size_t n = 0;

	for (const char *p = s + strspn(s, ","); *p; p += strspn(p, ",")) {
		n++;
		p += strcspn(p, ",");
	}
	return n;
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

/* -O's scope: "ring:batch=64" applies to the transport or pattern named
 * before a colon that comes before the '=' (its length, 0 when unscoped);
 * the key follows it. */
static size_t kv_scope_len(const char *kv)
{
	size_t eq = strcspn(kv, "="), colon = strcspn(kv, ":");

	return colon < eq ? colon : 0;
}

/* The key of -O entry @kv (after its scope, up to '=') into key[64]. */
static void kv_key(const char *kv, char *key, size_t keylen)
{
	size_t sc = kv_scope_len(kv), off = sc ? sc + 1 : 0;

	snprintf(key, keylen, "%.*s", (int)strcspn(kv + off, "="), kv + off);
}

/* Parse an options block for the transport or pattern @name from the -O
 * list: the unscoped entries first, then those scoped to @name, so that a
 * scoped value wins over an unscoped one whatever their order. */
static int make_opts(struct plan *pl, const char *name, const struct opt_desc *d, size_t size,
		     struct run_args *a, bool *used, const void **out)
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
	for (int scoped = 0; scoped < 2; scoped++)
		for (unsigned i = 0; i < a->nkv; i++) {
			size_t sc = kv_scope_len(a->kv[i]);
			const struct opt_desc *od;
			char key[64];

			if ((sc != 0) != scoped ||
			    (sc && (strlen(name) != sc || strncmp(a->kv[i], name, sc))))
				continue;
			kv_key(a->kv[i], key, sizeof(key));
			od = opt_find(d, key);
			if (!od)
				continue;
			used[i] = true;
			if (opt_set(od, blk, strchr(a->kv[i], '=') + 1, err, sizeof(err)))
				return usage_error("%s", err);
		}
	*out = blk;
	return 0;
}

/* Transports selected by one -t word: a name, "all", or a glob. */
static int select_transports(const char *word, const struct transport **out, unsigned *n,
			     bool *named)
{
	bool glob = strpbrk(word, "*?[") != NULL, all = strcmp(word, "all") == 0;
	unsigned before = *n;

	for (size_t i = 0; i < n_transports && *n < MAX_LIST; i++) {
		const struct transport *tp = transports[i];

		if (all ? (tp->caps & TP_IN_PROCESS) != 0 :
			  glob ? fnmatch(word, tp->name, 0) != 0 : strcmp(word, tp->name) != 0)
			continue;
		named[*n] = !all && !glob;
		out[(*n)++] = tp;
	}
	if (*n == before)
		return glob ? usage_error("-t %s matches no transport; run 'ipclab list'", word) :
			      unknown_name("transport", word, true);
	return 0;
}

/* "1k..512k": every doubling from the first to the last; else one value. */
static int expand_range(const char *w, int (*parse)(const char *, uint64_t *), uint64_t *out,
			unsigned *n)
{
	const char *dots = strstr(w, "..");
	char lo_s[32];
	uint64_t lo, hi;

	if (!dots)
		return *n >= MAX_LIST ? -E2BIG : parse(w, &out[(*n)++]) ? -EINVAL : 0;
	snprintf(lo_s, sizeof(lo_s), "%.*s", (int)(dots - w), w);
	if (parse(lo_s, &lo) || parse(dots + 2, &hi) || lo == 0 || hi < lo)
		return -EINVAL;
	/* every doubling up to hi, never past UINT64_MAX; too many is an error */
	for (uint64_t v = lo;; v *= 2) {
		if (*n >= MAX_LIST)
			return -E2BIG;
		out[(*n)++] = v;
		if (v > hi / 2)
			break;
	}
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

static int parse_dims_names(struct run_args *a, struct plan_spec *d)
{
	char *w[MAX_LIST];
	unsigned n = split_list(a->transports, w, MAX_LIST);

	if (!n)
		return usage_error("-t: no transport named; e.g. -t pipe,unix-stream or -t all");
	for (unsigned i = 0; i < n; i++)
		if (select_transports(w[i], d->tp, &d->ntp, d->tp_named))
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

static int too_many(const char *opt, const char *w)
{
	return usage_error("%s %s: more than %d values in all; use a shorter list or range",
			   opt, w, MAX_LIST);
}

/* --think (iterations per byte) or --think-ns (a duration): one list of
 * think values, each bounded so that think x size and the derived time
 * limits cannot overflow. */
static int parse_thinks(struct run_args *a, struct plan_spec *d)
{
	char *w[MAX_LIST];
	unsigned n = a->thinks ? split_list(a->thinks, w, MAX_LIST) : 0;
	int ret;

	for (unsigned i = 0; i < n; i++) {
		ret = expand_range(w[i], parse_count, d->think, &d->nthink);
		if (ret == -E2BIG)
			return too_many("--think", w[i]);
		if (ret)
			return usage_error("--think %s: expected iterations per byte, e.g. 1,2,4 or 1..2048", w[i]);
	}
	for (unsigned k = 0; k < d->nthink; k++)
		if (d->think[k] > PLAN_THINK_MAX)
			return usage_error("--think %s: at most %llu iterations per byte; use a smaller value",
					   a->thinks, (unsigned long long)PLAN_THINK_MAX);
	n = a->think_nss ? split_list(a->think_nss, w, MAX_LIST) : 0;
	if (n && d->nthink)
		return usage_error("--think and --think-ns exclude each other; use one");
	for (unsigned i = 0; i < n; i++) {
		ret = expand_range(w[i], parse_duration, d->think_ns, &d->nthink);
		if (ret == -E2BIG)
			return too_many("--think-ns", w[i]);
		if (ret)
			return usage_error("--think-ns %s: expected a duration, e.g. 10us or 1us..1ms", w[i]);
	}
	for (unsigned k = 0; k < d->nthink; k++)
		if (d->think_ns[k] > PLAN_THINK_NS_MAX)
			return usage_error("--think-ns %s: at most 1h per message; use a shorter time",
					   a->think_nss);
	if (!d->nthink)
		d->nthink = 1;
	return 0;
}

static int parse_dims_numbers(struct run_args *a, struct plan_spec *d)
{
	char *w[MAX_LIST];
	unsigned n = split_list(a->sizes, w, MAX_LIST);
	int ret;

	for (unsigned i = 0; i < n; i++) {
		unsigned first = d->nsize;

		ret = expand_range(w[i], parse_size, d->size, &d->nsize);
		if (ret == -E2BIG)
			return too_many("-s", w[i]);
		if (ret)
			return usage_error("-s %s: not a size or range; use e.g. 64, 4k, 1M or 1k..512k", w[i]);
		for (unsigned k = first; k < d->nsize; k++) {
			if (d->size[k] < MSG_HDR_SIZE)
				return usage_error("-s %s: a message holds at least the %zu-byte header; use -s %zu or more",
						   w[i], MSG_HDR_SIZE, MSG_HDR_SIZE);
			if (d->size[k] > (1u << 30))
				return usage_error("-s %s: larger than 1 GiB; use a smaller size", w[i]);
		}
	}
	ret = parse_thinks(a, d);
	if (ret)
		return ret;
	n = a->rates ? split_list(a->rates, w, MAX_LIST) : 0;
	for (unsigned i = 0; i < n; i++) {
		if (parse_rate(w[i], &d->rate[d->nrate]))
			return usage_error("--rate %s: expected messages per second, e.g. 1/s, 10k/s or max", w[i]);
		snprintf(d->rate_text[d->nrate++], sizeof(d->rate_text[0]), "%s", w[i]);
	}
	if (!d->nrate)
		snprintf(d->rate_text[d->nrate++], sizeof(d->rate_text[0]), "max");
	/* the periodic pattern's plan hook parses it (plan_build) */
	if (a->period)
		snprintf(d->period_text, sizeof(d->period_text), "%s", a->period);
	n = split_list(a->clients, w, MAX_LIST);
	for (unsigned i = 0; i < n; i++) {
		uint64_t v;

		if (parse_u64(w[i], &v) || v < 1 || v > MAX_CLIENTS)
			return usage_error("--clients %s: expected a number from 1 to %d", w[i], MAX_CLIENTS);
		d->clients[d->nclients++] = (unsigned)v;
	}
	return 0;
}

/* --pin matrix[:CPUS]: every ordered pair of the CPUs as a pin (the pins
 * owned by pl), the CPUs and topology into a->matrix. */
static int parse_matrix(struct run_args *a, struct plan_spec *d, struct plan *pl)
{
	struct matrix_info *m = a->matrix;
	struct pin_spec *pins, check;
	char err[ERRLEN];

	if (topology_read(TOPO_SYSFS, &m->topo, err, sizeof(err)))
		return usage_error("--pin %s: %s", a->pins, err);
	if (matrix_parse(a->pins, &m->topo, m, err, sizeof(err)))
		return usage_error("%s", err);
	for (unsigned i = 0; i < m->ncpu; i++) {
		char one[32];

		snprintf(one, sizeof(one), "%d:%d", m->cpus[i], m->cpus[i]);
		if (pin_parse(one, &check, err, sizeof(err)))
			return usage_error("--pin %s: CPU %d is not allowed here (taskset or cgroup); name the CPUs this process may use",
					   a->pins, m->cpus[i]);
	}
	pins = calloc((size_t)m->ncpu * m->ncpu, sizeof(*pins));
	if (!pins || pl->nblocks >= ARRAY_SIZE(pl->opt_blocks))
		return free(pins), usage_error("out of memory");
	pl->opt_blocks[pl->nblocks++] = pins;
	matrix_pins(m, pins);
	d->pins_ext = pins;
	d->npins_ext = m->ncpu * m->ncpu;
	return 0;
}

/* A matrix is n x n cells: unless -n, -d or --warmup says otherwise, each
 * measures for MATRIX_CELL_NS after MATRIX_WARMUP messages. The default
 * count would give a same-CPU cell of a spinning transport (a round trip
 * of a time slice, ~100 us here) 10 s, and the warm-up another 0.5 s. A
 * paced or periodic run keeps its own warm-up. */
#define MATRIX_CELL_NS (100 * NSEC_PER_MSEC)
#define MATRIX_WARMUP 1000

static void matrix_cell_defaults(const struct run_args *a, struct plan_spec *d)
{
	if (a->count_set || a->duration_ns)
		return;
	d->duration_ns = MATRIX_CELL_NS;
	if (!a->warmup_set && !a->rates && !a->period) {
		d->warmup = MATRIX_WARMUP;
		d->warmup_set = true;
	}
}

static int parse_dims_placement(struct run_args *a, struct plan_spec *d)
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

static void collect_option_names(const struct plan_spec *d, const char **names, size_t *n)
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

/* A scoped -O entry that set nothing: its scope is no selected transport
 * or pattern, or that one has no such option; 2. */
static int unused_scoped(const struct plan_spec *d, const char *kv, const char *key)
{
	const char *names[128], *hint;
	const struct opt_desc *opts = NULL;
	size_t sc = kv_scope_len(kv), n = 0;
	char scope[64];
	bool found = false;

	snprintf(scope, sizeof(scope), "%.*s", (int)sc, kv);
	for (unsigned i = 0; i < d->ntp && !found; i++)
		if (!strcmp(d->tp[i]->name, scope))
			found = true, opts = d->tp[i]->options;
	for (unsigned i = 0; i < d->npat && !found; i++)
		if (!strcmp(d->pat[i]->name, scope))
			found = true, opts = d->pat[i]->options;
	if (!found) {
		for (unsigned i = 0; i < d->ntp && n < 128; i++)
			names[n++] = d->tp[i]->name;
		for (unsigned i = 0; i < d->npat && n < 128; i++)
			names[n++] = d->pat[i]->name;
		hint = nearest(scope, names, n);
		if (hint)
			return usage_error("-O %s: '%s' is not a selected transport or pattern; did you mean '%s'?",
					   kv, scope, hint);
		return usage_error("-O %s: '%s' is not a selected transport or pattern: select it with -t or -p, "
				   "or scope the option to one that is", kv, scope);
	}
	for (const struct opt_desc *o = opts; o && o->name && n < 128; o++)
		names[n++] = o->name;
	if (!n)
		return usage_error("-O %s: %s has no options of its own", kv, scope);
	hint = nearest(key, names, n);
	if (hint)
		return usage_error("-O %s: %s has no option '%s'; did you mean '%s'?", kv, scope, key, hint);
	return usage_error("-O %s: %s has no option '%s'; 'ipclab list' shows each one's options",
			   kv, scope, key);
}

static int parse_dims_options(struct plan *pl, struct run_args *a, struct plan_spec *d)
{
	bool used[MAX_LIST] = { false };
	const char *names[128];
	size_t nn = 0;

	for (unsigned i = 0; i < a->nkv; i++)
		if (!strchr(a->kv[i], '=') || a->kv[i][0] == '=' || a->kv[i][0] == ':' ||
		    (kv_scope_len(a->kv[i]) && a->kv[i][kv_scope_len(a->kv[i]) + 1] == '='))
			return usage_error("-O %s: expected [NAME:]key=value (NAME: a transport or pattern), e.g. -O pipe-size=1M "
					   "or -O ring:batch=64", a->kv[i]);
	for (unsigned i = 0; i < d->ntp; i++) {
		char err[ERRLEN];

		if (make_opts(pl, d->tp[i]->name, d->tp[i]->options, d->tp[i]->opts_size, a, used,
			      &d->tp_opts[i]))
			return 2;
		if (d->tp[i]->check_opts && d->tp_opts[i] &&
		    d->tp[i]->check_opts(d->tp_opts[i], err, sizeof(err)))
			return usage_error("%s", err);
	}
	for (unsigned i = 0; i < d->npat; i++)
		if (make_opts(pl, d->pat[i]->name, d->pat[i]->options, d->pat[i]->opts_size, a,
			      used, &d->pat_opts[i]))
			return 2;
	collect_option_names(d, names, &nn);
	for (unsigned i = 0; i < a->nkv; i++) {
		char key[64];
		const char *hint;

		if (used[i])
			continue;
		kv_key(a->kv[i], key, sizeof(key));
		if (kv_scope_len(a->kv[i]))
			return unused_scoped(d, a->kv[i], key);
		hint = nearest(key, names, nn);
		if (hint)
			return usage_error("-O %s: no selected transport or pattern has option '%s'; did you mean '%s'?",
					   a->kv[i], key, hint);
		return usage_error("-O %s: no selected transport or pattern has option '%s'; 'ipclab list' shows each one's options",
				   a->kv[i], key);
	}
	return 0;
}

int run_spec_default_options(struct plan_spec *d, struct plan *pl)
{
	struct run_args none = { 0 };

	return parse_dims_options(pl, &none, d);
}

/* Iterations of the think loop per ns, measured once and said. */
double run_think_per_ns(void *quiet)
{
	static double per_ns;

	if (!per_ns) {
		per_ns = think_calibrate();
		if (!*(bool *)quiet)
			fprintf(stderr, "ipclab: think loop calibrated: %.3f iterations/ns (%.2f ns each)\n",
				per_ns, 1 / per_ns);
	}
	return per_ns;
}

/* The scalar knobs: typed already, copied across. */
static void spec_knobs(const struct run_args *a, struct plan_spec *d)
{
	d->count = a->count;
	d->duration_ns = a->duration_ns;
	d->timeout_ns = a->timeout_ns;
	d->warmup = a->warmup;
	d->warmup_set = a->warmup_set;
	d->max_time_ns = a->max_time_ns;
	d->max_time_set = a->max_time_set;
	d->verify = a->verify;
	d->keep_awake = a->keep_awake;
	d->trace = a->trace;
	d->trace_syscalls = a->trace_syscalls;
	d->explain = a->explain;
	d->profile = a->profile;
	d->profile_dir = a->profile_dir;
	d->lenient = a->lenient;
	d->pm_qos_us = a->pm_qos_us;
	d->think_per_ns = run_think_per_ns;
	d->think_arg = (void *)&a->quiet;
}

int run_spec_parse(struct run_args *orig, struct plan_spec *d, struct plan *pl)
{
	/* the lists are split in place: work on copies, so that run_args can
	 * share strings (the default run does) */
	struct run_args copy = *orig, *a = &copy;
	int ret = 0;

	memset(d, 0, sizeof(*d));
	spec_knobs(orig, d);
	for (const struct cli_opt *o = run_options; o->name; o++) {
		char **l = (char **)((char *)a + o->offset);

		if (!(o->flags & CLI_LIST))
			continue;
		if (!ret && *l && list_words(*l) > MAX_LIST)
			ret = usage_error("%s: more than %d values in one list; use fewer",
					  cli_shown(o), MAX_LIST);
		if (*l && !(*l = strdup(*l)))
			ret = usage_error("out of memory");
	}
	if (!ret)
		ret = parse_dims_names(a, d);
	if (!ret)
		ret = parse_dims_numbers(a, d);
	if (!ret && a->pins && matrix_word(a->pins)) {
		/* the fuzz harness and the suite keep no matrix: a scratch one */
		struct matrix_info *own = orig->matrix ? NULL : calloc(1, sizeof(*own));

		if (!orig->matrix && !own)
			ret = usage_error("out of memory");
		a->matrix = orig->matrix ? orig->matrix : own;
		if (!ret)
			ret = parse_matrix(a, d, pl);
		if (!ret)
			matrix_cell_defaults(a, d);
		free(own);
		free(a->pins);
		/* the list beside it, unused: pins_ext takes its place */
		if (!(a->pins = strdup("none")) && !ret)
			ret = usage_error("out of memory");
	}
	if (!ret)
		ret = parse_dims_placement(a, d);
	if (!ret)
		ret = parse_dims_options(pl, a, d);
	for (const struct cli_opt *o = run_options; o->name; o++)
		if (o->flags & CLI_LIST)
			free(*(char **)((char *)a + o->offset));
	return ret;
}

int build_plan(struct run_args *a, struct plan *pl)
{
	struct plan_spec *spec = calloc(1, sizeof(*spec));
	char err[ERRLEN];
	int ret;

	if (!spec)
		return usage_error("out of memory");
	ret = run_spec_parse(a, spec, pl);
	if (!ret && plan_build(spec, pl, err, sizeof(err)))
		ret = usage_error("%s", err);
	free(spec);
	return ret;
}
