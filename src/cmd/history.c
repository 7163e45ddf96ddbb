// SPDX-License-Identifier: MIT
/* `ipclab history`: for every cell configuration (on every machine) that
 * the filters select, one metric across the stored runs, in time order or
 * in the order of a label, with the change points E-Divisive finds
 * (src/report/changepoint.c); --against: the runs of one label value
 * against those of another, cell by cell, so that `git bisect run` can ask
 * "did the figure change at this commit?". */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_opt.h"
#include "cmd.h"
#include "history.h"

static int history_usage(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	(void)o, (void)arg, (void)args, (void)ctx;
	fputs("usage: ipclab history [--db URL] [filters] [-m METRIC] [options]\n"
	      "One metric of every stored cell across runs, and where it changed (docs/history.md).\n",
	      stdout);
	cli_help(stdout, history_options, FMT_HISTORY);
	fputs("Exit status: 0 ok, 1 the store could not be read, 2 bad input, 3 a change found\n"
	      "with --fail-on-change (for git bisect run: 0 good, 3 bad).\n", stdout);
	return -1;
}

static int number(const char *arg, const char *what, double lo, double hi, double *out)
{
	char *end;
	double v = strtod(arg, &end);

	if (end == arg || (*end && strcmp(end, "%")) || !(v >= lo && v <= hi))
		return cmd_usage_error("history", "%s %s: expected a number from %g to %g", what, arg, lo, hi);
	*out = v;
	return 0;
}

static int h_metric(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	(void)o, (void)ctx;
	((struct history *)args)->metric = rf_metric_alias(arg);
	return 0;
}

static int h_threshold(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	(void)o, (void)ctx;
	return number(arg, "--threshold", 0, 1e6, &((struct history *)args)->threshold_pct);
}

static int h_alpha(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	(void)o, (void)ctx;
	return number(arg, "--alpha", 1e-6, 0.5, &((struct history *)args)->cp.alpha);
}

static int h_min_change(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	(void)o, (void)ctx;
	return number(arg, "--min-change", 0, 1e6, &((struct history *)args)->cp.min_change_pct);
}

static int h_min_segment(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	double v = 0;

	(void)o, (void)ctx;
	if (number(arg, "--min-segment", 2, 1000, &v))
		return 2;
	((struct history *)args)->cp.min_segment = (unsigned)v;
	return 0;
}

#define HA(f) offsetof(struct history, f)
#define H_CALL(l, s, mv, h, fn, v) { .name = l, .short_name = s, .has_arg = required_argument, \
				      .metavar = mv, .help = h, .kind = CLI_CALL, .call = fn, .values = v }
const size_t history_args_size = sizeof(struct history);

const struct cli_opt history_options[] = {
	FILTER_CLI_OPTIONS(HA(fa)),
	H_CALL("metric", 'm', "M",
	       "msgs_per_s, lat_p50_ns (p50), lat_p99_ns (p99), cpu_ns_per_msg,\n"
	       "... (docs/output.md); default each cell's headline: p50 for\n"
	       "a round-trip pattern, else msgs_per_s", h_metric,
	       "msgs_per_s bytes_per_s lat_p50_ns lat_p99_ns lat_max_ns cpu_ns_per_msg cpu_pct_total p50 p99"),
	{ .name = "by", .has_arg = required_argument, .metavar = "LABEL", .kind = CLI_TEXT,
	  .offset = HA(by), .help = "points in the order of that label's values (kernel, commit),\n"
				    "not in time order; machine: each cell on every machine side\n"
				    "by side (median, interval, ratio to the first machine)" },
	{ .name = "against", .has_arg = required_argument, .metavar = "V|K=V", .kind = CLI_TEXT,
	  .offset = HA(against),
	  .help = "the runs of --label K=C against those of K=V (the first\n"
		  "--label's key when only V): each cell's median, ratio, test" },
	H_CALL("threshold", 0, "PCT", "--against: a smaller change is no change; default 5",
	       h_threshold, NULL),
	H_CALL("alpha", 0, "A", "significance of a change point; default 0.01", h_alpha, NULL),
	H_CALL("min-segment", 0, "N", "fewest points on either side of a change; default 3",
	       h_min_segment, NULL),
	H_CALL("min-change", 0, "PCT", "report only steps larger than PCT %; default 0", h_min_change,
	       NULL),
	{ .name = "fail-on-change", .has_arg = no_argument, .kind = CLI_FLAG,
	  .offset = HA(fail_on_change),
	  .help = "exit 3 when a change point (or, with --against, a change) is found" },
	{ .name = "figure", .has_arg = required_argument, .metavar = "FILE", .kind = CLI_CALL,
	  .call = cli_opt_output, .offset = HA(figure), .values = "@file",
	  .help = "also write the figure (SVG) there" },
	{ .name = "format", .short_name = 'f', .has_arg = required_argument, .metavar = "FMT",
	  .help = "{formats} (svg: the figure; html: figures and tables)", .kind = CLI_CALL,
	  .call = cli_opt_format, .id = FMT_HISTORY, .offset = HA(format), .def = "table",
	  .values = "@formats" },
	{ .name = "output", .short_name = 'o', .has_arg = required_argument, .metavar = "FILE",
	  .help = "write there (atomically) instead of stdout", .kind = CLI_CALL,
	  .call = cli_opt_output, .offset = HA(output), .values = "@file" },
	{ .name = "help", .short_name = 'h', .has_arg = no_argument, .help = "this text",
	  .kind = CLI_CALL, .call = history_usage },
	{ 0 },
};

/* --against V or K=V against the first --label: the two label filters. */
static int against_labels(struct history *h)
{
	struct db_label one[DB_MAX_LABELS];
	char kv[512], err[ERRLEN];
	size_t n = 0;

	if (!h->fa.f.nlabels)
		return cmd_usage_error("history", "--against needs the candidate as --label K=V, e.g. --label commit=abc123 --against main");
	h->cand_label = h->fa.f.labels[0];
	if (strchr(h->against, '='))
		snprintf(kv, sizeof(kv), "%s", h->against);
	else
		snprintf(kv, sizeof(kv), "%s=%s", h->cand_label.key, h->against);
	if (db_labels_parse(kv, one, &n, err, sizeof(err)) || n != 1 || !one[0].value[0])
		return cmd_usage_error("history", "--against %s: expected a label value, or one K=V (e.g. --against main or --against branch=main)",
				       h->against);
	h->base_label = one[0];
	return 0;
}

static int history_args(int argc, char **argv, struct history *h)
{
	int ret = cli_parse(history_options, argc, argv, h, "history", true);

	if (ret)
		return ret;
	if (optind < argc)
		return cmd_usage_error("history", "unexpected argument '%s'; see ipclab history --help",
				       argv[optind]);
	if (h->against && (!strcmp(h->format, "svg") || h->figure))
		return cmd_usage_error("history", "--against compares two sets of runs and draws no figure; use -f table, json or html");
	if (h->against && !strcmp(h->format, "csv"))
		return cmd_usage_error("history", "--against gives a row per cell, not per run: use -f table, json or html, or -f csv without --against");
	return h->against ? against_labels(h) : 0;
}

/* ---- the series ---- */

/* The metric of a result: -m's, or the cell's headline. */
static const char *metric_of(const struct history *h, const json_t *body)
{
	if (h->metric)
		return h->metric;
	return rec_headline(body);
}

static struct hseries *series_of(struct history *h, const struct db_row *row, json_t *body)
{
	char key[sizeof(h->s[0].key)];

	snprintf(key, sizeof(key), "%s\x1f%s", row->machine, row->cell_key);
	for (size_t i = 0; i < h->n; i++)
		if (!strcmp(h->s[i].key, key))
			return &h->s[i];
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 16;
		struct hseries *s = realloc(h->s, cap * sizeof(*s));

		if (!s)
			return NULL;
		h->s = s;
		h->cap = cap;
	}
	struct hseries *s = &h->s[h->n++];

	memset(s, 0, sizeof(*s));
	snprintf(s->key, sizeof(s->key), "%s", key);
	snprintf(s->machine, sizeof(s->machine), "%s", row->machine);
	s->cell = json_incref(body);
	s->metric = metric_of(h, body);
	h->machines |= h->n > 1 && strcmp(h->s[0].machine, s->machine);
	return s;
}

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	size_t c = *cap ? *cap * 2 : 32;
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*v, c * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}

/* The value and 95 % interval of one result (false: it has none). */
static bool value_of(const json_t *body, const char *metric, double *v, double *lo, double *hi)
{
	*v = rec_metric(body, metric);
	if (!rec_ci95(body, metric, lo, hi))
		*lo = *hi = NAN;
	return isfinite(*v);
}

struct collect {
	struct history *h;
	int side;		/* 0: history; 1: --against's baseline, 2: its candidate */
};

static int add_side(struct hside *sd, double v, double lo, double hi)
{
	if (grow((void **)&sd->v, &sd->cap, sd->n, sizeof(double)))
		return -ENOMEM;
	sd->v[sd->n++] = v;
	sd->lo = lo;
	sd->hi = hi;
	return 0;
}

static int collect_row(void *arg, const struct db_row *row)
{
	struct collect *c = arg;
	json_t *body = json_loads(row->body, 0, NULL);
	const char *tp = rec_transport(body);
	struct hseries *s;
	struct hpoint *p;
	double v, lo, hi;
	int ret = 0;

	if (!body || !tp || !filter_transport_ok(&c->h->fa, tp) ||
	    !value_of(body, metric_of(c->h, body), &v, &lo, &hi))
		goto out;
	s = series_of(c->h, row, body);
	if (!s || (!c->side && grow((void **)&s->pts, &s->cap, s->n, sizeof(*s->pts)))) {
		ret = -ENOMEM;
		goto out;
	}
	if (c->side) {
		ret = add_side(c->side == 1 ? &s->base : &s->cand, v, lo, hi);
		goto out;
	}
	p = &s->pts[s->n++];
	*p = (struct hpoint){ .run = row->run_id, .labels = json_loads(row->labels_json, 0, NULL),
			      .value = v, .lo = lo, .hi = hi,
			      .metrics = rec_metrics_part(body) };
	snprintf(p->at, sizeof(p->at), "%s", row->created_utc);
out:
	json_decref(body);
	return ret;
}

/* ---- order, change points, --against ---- */

static const char *by_label;

static int cmp_by_label(const void *a, const void *b)
{
	const struct hpoint *x = a, *y = b;
	const char *u = rec_label(x->labels, by_label), *v = rec_label(y->labels, by_label);
	int c = u && v ? strverscmp(u, v) : !u - !v;

	if (c)
		return c;
	c = strcmp(x->at, y->at);
	return c ? c : (x->run > y->run) - (x->run < y->run);
}

static int analyse(struct history *h, struct hseries *s)
{
	double *v = malloc((s->n + 1) * sizeof(double)), *hw = malloc((s->n + 1) * sizeof(double));
	int n = 0;

	if (!v || !hw) {
		free(v);
		free(hw);
		return -ENOMEM;
	}
	if (h->by) {
		by_label = h->by;
		qsort(s->pts, s->n, sizeof(*s->pts), cmp_by_label);
	}
	for (size_t i = 0; i < s->n; i++) {
		v[i] = s->pts[i].value;
		hw[i] = (s->pts[i].hi - s->pts[i].lo) / 2;
	}
	n = cp_detect(v, hw, s->n, &h->cp, s->cp, HIST_MAX_CP);
	s->ncp = n > 0 ? n : 0;
	free(v);
	free(hw);
	return n < 0 ? n : 0;
}

static double median(double *v, size_t n)
{
	for (size_t i = 1; i < n; i++)	/* few values: insertion sort */
		for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A change: larger than --threshold, and beyond chance: by the
 * permutation test where the runs on both sides allow it to reach
 * --alpha; else, with one run a side, their own intervals apart; else every
 * candidate value outside the baseline's range. */
static void against_one(struct history *h, struct hseries *s)
{
	struct hside *b = &s->base, *c = &s->cand;
	double step, blo = INFINITY, bhi = -INFINITY;
	bool outside = true;

	s->p_value = NAN;
	if (b->n >= 2 && c->n >= 2 && 1 / cp_two_sample_count(b->n, c->n) <= h->cp.alpha)
		s->p_value = cp_two_sample_p(b->v, b->n, c->v, c->n, &h->cp);
	for (size_t i = 0; i < b->n; i++) {
		blo = fmin(blo, b->v[i]);
		bhi = fmax(bhi, b->v[i]);
	}
	for (size_t i = 0; i < c->n; i++)
		outside &= c->v[i] < blo || c->v[i] > bhi;
	b->median = median(b->v, b->n);
	c->median = median(c->v, c->n);
	s->ratio = b->median ? c->median / b->median : NAN;
	step = s->ratio > 0 ? fmax(s->ratio, 1 / s->ratio) - 1 : INFINITY;
	s->changed = step * 100 > h->threshold_pct;
	if (!isnan(s->p_value))
		s->changed &= s->p_value <= h->cp.alpha;
	else if (b->n == 1 && c->n == 1 && isfinite(b->lo) && isfinite(c->lo))
		s->changed &= c->lo > b->hi || c->hi < b->lo;
	else
		s->changed &= outside;
}

/* The series' names: the parameters that tell them apart (as compare). */
static int name_series(struct history *h)
{
	struct rcell *cells = calloc(h->n + 1, sizeof(*cells));
	struct rfile rf = { .cells = cells, .n = h->n };
	const struct rfile *files[] = { &rf };
	const char *names[64];
	size_t nn;

	if (!cells)
		return -ENOMEM;
	for (size_t i = 0; i < h->n; i++)
		cells[i].obj = h->s[i].cell;
	nn = rf_varying(files, 1, true, names, 64);
	for (size_t i = 0; i < h->n; i++) {
		size_t l;

		rcell_label(&cells[i], names, nn, NULL, h->s[i].label, sizeof(h->s[i].label));
		l = strlen(h->s[i].label);
		if (h->machines)
			snprintf(h->s[i].label + l, sizeof(h->s[i].label) - l, " @%s", h->s[i].machine);
	}
	free(cells);
	return 0;
}

static int query(struct history *h, struct db *db, const struct db_filter *f, int side)
{
	struct collect c = { h, side };
	char err[ERRLEN];
	int ret = db_query_results(db, f, collect_row, &c, err, sizeof(err));

	if (ret == -ENOMEM)
		return cmd_usage_error(h->cmd, "out of memory");
	return ret ? say_error(h->cmd, "%s", err) : 0;
}

static int gather(struct history *h, struct db *db)
{
	struct db_filter f = h->fa.f;
	int ret;

	f.ok_only = true;
	if (!h->against)
		return query(h, db, &f, 0);
	ret = query(h, db, &f, 2);
	f.labels[0] = h->base_label;
	if (!ret)
		ret = query(h, db, &f, 1);
	/* a cell measured on one side only cannot be compared */
	for (size_t i = 0; !ret && i < h->n;) {
		if (h->s[i].base.n && h->s[i].cand.n) {
			against_one(h, &h->s[i++]);
			continue;
		}
		json_decref(h->s[i].cell);
		free(h->s[i].base.v);
		free(h->s[i].cand.v);
		h->s[i] = h->s[--h->n];
	}
	return ret;
}

void history_free(struct history *h)
{
	for (size_t i = 0; i < h->n; i++) {
		for (size_t k = 0; k < h->s[i].n; k++) {
			json_decref(h->s[i].pts[k].labels);
			json_decref(h->s[i].pts[k].metrics);
		}
		free(h->s[i].pts);
		free(h->s[i].base.v);
		free(h->s[i].cand.v);
		json_decref(h->s[i].cell);
	}
	free(h->s);
}

static bool any_change(const struct history *h)
{
	for (size_t i = 0; i < h->n; i++)
		if (h->against ? h->s[i].changed : h->s[i].ncp > 0)
			return true;
	return false;
}

/* The series of h's filters from db, analysed, folded by machine with
 * --by machine, named: 0 or an exit status (said). */
int history_load(struct history *h, struct db *db)
{
	int ret = gather(h, db);

	if (!ret && !h->against)
		ret = history_canary(h, db);
	if (!ret && !h->n && !h->allow_empty)
		ret = cmd_usage_error(h->cmd, "no stored result matches%s%s%s; see ipclab db ls",
				      h->against ? " on both sides of --against" : "",
				      h->metric ? " with a metric " : "", h->metric ? h->metric : "");
	for (size_t i = 0; !ret && !h->against && i < h->n; i++)
		if (analyse(h, &h->s[i]))
			ret = cmd_usage_error(h->cmd, "out of memory");
	/* -f csv keeps a row per run: its cells are not folded by machine */
	if (!ret && !h->against && h->by && !strcmp(h->by, "machine") &&
	    (!h->format || strcmp(h->format, "csv")) && history_hosts(h))
		ret = cmd_usage_error(h->cmd, "out of memory");
	if (!ret && name_series(h))
		ret = cmd_usage_error(h->cmd, "out of memory");
	return ret;
}

int cmd_history(int argc, char **argv)
{
	struct history h = { .threshold_pct = 5, .cmd = "history" };
	struct db *db = NULL;
	int ret;

	cp_opts_defaults(&h.cp);
	ret = cli_defaults(history_options, &h) ? 2 : history_args(argc, argv, &h);
	if (ret)
		return ret < 0 ? 0 : ret;
	ret = db_cmd_open(h.fa.url, db_open_flags(false, h.fa.shared), "history", &db);
	if (!ret)
		ret = history_load(&h, db);
	db_close(db);
	if (!ret)
		ret = history_write(&h);
	if (!ret && h.fail_on_change && any_change(&h))
		ret = 3;
	history_free(&h);
	return ret;
}
