// SPDX-License-Identifier: MIT
/* `ipclab suite fidelity`: every cell of the fidelity table (stream 64 B
 * and 4 KiB, ping-pong 64 B; split and same CPU; processes and threads)
 * run with its reference right after it, the whole plan N rounds over so
 * that the pairs interleave (A B, all cells, then again), and printed
 * ranked by how far the median of each cell's pair ratios is from 1, with
 * the pairs' spread. -f json or csv writes every round's results. */
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cmd/cli_opt.h"
#include "../cmd/cmd.h"
#include "../cmd/run.h"
#include "suite.h"
#include "ipclab/rows.h"
#include "ipclab/placement.h"
#include "ipclab/stats.h"

#define FID_MAX_ROUNDS 50

static const char *const fid_default_tp[] = {
	"pipe", "unix-stream", "posix-mq", "shm-futex", "libqb-rb", "cacheline", "ring", NULL,
};

struct fid_opts {
	struct suite_opts so;
	unsigned repeat;
	bool repeat_set;
	const char *tp_arg;	/* -t as typed */
	char tp_list[256];
};

#define FO(f) offsetof(struct fid_opts, f)
const size_t fidelity_args_size = sizeof(struct fid_opts);

static int fid_usage(const struct cli_opt *r, char *arg, void *args, struct cli_ctx *ctx)
{
	(void)r, (void)arg, (void)args, (void)ctx;
	fputs("usage: ipclab suite fidelity [--quick] [--repeat N] [-t LIST] [-f table|json|csv] [-o FILE] [-q]\n"
	      "  each cell of the fidelity table (stream 64 B and 4 KiB, ping-pong 64 B; pipe,\n"
	      "  unix-stream, posix-mq, shm-futex, libqb-rb, cacheline, ring, or -t LIST; split and\n"
	      "  same CPU; processes and threads) run with --reference, N rounds interleaved\n"
	      "  (default 5; --quick: 1 round and short cells), printed ranked by |1 - ratio|:\n"
	      "  the median of the cell's pair ratios, with their min, max and spread; cacheline's\n"
	      "  ping-pong also at 32 B (the size its line holds). -f json|csv writes every round.\n",
	      stdout);
	cli_help(stdout, fidelity_options, FMT_SUITE);
	return -1;
}

/* --repeat N: a plain number of rounds within the row's range. */
static int fid_repeat(const struct cli_opt *r, char *arg, void *args, struct cli_ctx *ctx)
{
	struct fid_opts *o = args;
	char *end;
	unsigned long v = strtoul(arg, &end, 10);

	(void)ctx;
	o->repeat = (unsigned)v;
	if (*end || o->repeat < r->min || o->repeat > r->max)
		return usage_error("suite fidelity --repeat %s: expected %llu to %llu rounds", arg,
				   (unsigned long long)r->min, (unsigned long long)r->max);
	o->repeat_set = true;
	return 0;
}

const struct cli_opt fidelity_options[] = {
	{ .name = "quick", .has_arg = no_argument, .kind = CLI_FLAG, .offset = FO(so.quick),
	  .help = "1 round and short cells" },
	{ .name = "repeat", .has_arg = required_argument, .metavar = "N", .kind = CLI_CALL,
	  .call = fid_repeat, .min = 1, .max = FID_MAX_ROUNDS, .values = "1 3 5 10",
	  .help = "rounds, each cell and its reference in turn (default 5;\n--quick: 1)" },
	{ .name = "transports", .short_name = 't', .has_arg = required_argument, .metavar = "LIST",
	  .kind = CLI_TEXT, .offset = FO(tp_arg), .values = "@transport-names",
	  .help = "these transports instead of the table's (each must exist)" },
	{ .name = "format", .short_name = 'f', .has_arg = required_argument, .metavar = "FMT",
	  .help = "{formats}: json and csv write every round's results",
	  .kind = CLI_CALL, .call = cli_opt_format, .id = FMT_SUITE, .offset = FO(so.format),
	  .def = "table", .values = "@formats" },
	{ .name = "output", .short_name = 'o', .has_arg = required_argument, .metavar = "FILE",
	  .kind = CLI_TEXT, .offset = FO(so.output), .values = "@file",
	  .help = "with -f json or csv: the report into FILE, the table\non stdout" },
	{ .name = "quiet", .short_name = 'q', .has_arg = no_argument, .kind = CLI_FLAG,
	  .offset = FO(so.quiet), .help = "no progress line" },
	{ .name = "help", .short_name = 'h', .has_arg = no_argument, .help = "this text",
	  .kind = CLI_CALL, .call = fid_usage },
	{ 0 },
};

static int fid_bad(const char *word)
{
	return usage_error("suite fidelity: bad option '%s'; see ipclab suite fidelity --help", word);
}

static int fid_args(int argc, char **argv, struct fid_opts *o)
{
	static const struct cli_how how = { .cmd = "suite fidelity", .operands = true,
					    .bad = fid_bad };
	int ret = cli_defaults(fidelity_options, o) ? 2 :
		  cli_parse_how(fidelity_options, argc, argv, o, &how);

	if (ret)
		return ret;
	if (optind != argc - 1 || strcmp(argv[optind], "fidelity"))
		return usage_error("suite: expected 'ipclab suite fidelity [options]'; see ipclab suite fidelity --help");
	if (o->tp_arg)
		snprintf(o->tp_list, sizeof(o->tp_list), "%s", o->tp_arg);
	if (!o->repeat_set)
		o->repeat = o->so.quick ? 1 : 5;
	return 0;
}

/* The transports: -t's (each must exist: bad input otherwise), or the
 * table's that are built here. */
static int fid_transports(const struct fid_opts *o, struct plan_spec *s)
{
	char list[256], *save = NULL;

	s->ntp = 0;
	if (!o->tp_list[0]) {
		for (const char *const *t = fid_default_tp; *t && s->ntp < PLAN_MAX_LIST; t++) {
			const struct transport *tp = transport_find(*t);

			if (tp) {
				s->tp_named[s->ntp] = true;
				s->tp[s->ntp++] = tp;
			}
		}
		return 0;
	}
	snprintf(list, sizeof(list), "%s", o->tp_list);
	for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		const struct transport *tp = transport_find(t);

		if (!tp)
			return usage_error("suite fidelity -t %s: no transport '%s'; see ipclab list",
					   o->tp_list, t);
		if (s->ntp == PLAN_MAX_LIST)
			return usage_error("suite fidelity -t: at most %d transports", PLAN_MAX_LIST);
		s->tp_named[s->ntp] = true;
		s->tp[s->ntp++] = tp;
	}
	return s->ntp ? 0 : usage_error("suite fidelity -t: no transport named; e.g. -t pipe,ring");
}

/* Keep the transports of s that spin (spin = true) or the others. */
static void fid_keep(struct plan_spec *s, bool spin)
{
	unsigned k = 0;

	for (unsigned i = 0; i < s->ntp; i++)
		if (!!(s->tp[i]->caps & TP_SPINS) == spin)
			s->tp[k++] = s->tp[i];
	s->ntp = k;
}

/* Stream at 64 B and 4 KiB, ping-pong at 64 B; the spinning transports in
 * specs of their own, a tenth of the count (on one CPU each message costs
 * them a time slice's yield); 0 or 2. */
static int fid_plan(const struct fid_opts *o, struct plan *pl)
{
	static const char *const pins[] = { "split", "same" };
	struct plan_spec *s = calloc(1, sizeof(*s));
	char err[ERRLEN];
	int ret = 0;

	if (!s)
		return usage_error("out of memory");
	for (int i = 0; i < 4 && !ret; i++) {
		bool pp = i & 1, spin = i >= 2;

		memset(s, 0, sizeof(*s));
		seed_spec(&o->so, s, "fidelity");
		s->pat[0] = pattern_find(pp ? "pingpong" : "stream");
		s->npat = 1;
		s->nsize = 0;
		s->size[s->nsize++] = 64;
		if (!pp)
			s->size[s->nsize++] = 4096;
		s->nep = 2;
		s->threads[0] = false;
		s->threads[1] = true;
		s->npin = 0;
		for (int k = 0; k < 2 && !ret; k++)
			if (pin_parse(pins[k], &s->pin[s->npin++], err, sizeof(err)))
				ret = usage_error("%s", err);
		if (pp && spin) /* cacheline's line holds 56 bytes: 64 B goes to its slot */
			s->size[s->nsize++] = 32;
		s->count = pp ? (o->so.quick ? 2000 : 20000) : (o->so.quick ? 20000 : 200000);
		if (spin)
			s->count /= 10;
		if (!ret)
			ret = fid_transports(o, s);
		fid_keep(s, spin);
		if (ret || !s->ntp)
			continue;
		if (run_spec_default_options(s, pl))
			ret = 2;
		else if (plan_build(s, pl, err, sizeof(err)))
			ret = usage_error("%s", err);
	}
	free(s);
	return ret;
}


/* One cell over the rounds: the medians, the pair ratios' range. */
struct fid_row {
	const struct result *r; /* the first round's */
	unsigned pairs;
	double ipclab, ref, ratio, lo, hi;
	const char *why; /* no ratio: why */
};

static void fid_row(struct result *const *rounds, unsigned nr, size_t i, struct fid_row *row)
{
	double a[FID_MAX_ROUNDS], b[FID_MAX_ROUNDS], q[FID_MAX_ROUNDS];
	bool rtt = rounds[0][i].cell.pat->lat_kind == LAT_RTT;

	*row = (struct fid_row){ .r = &rounds[0][i], .ratio = NAN };
	for (unsigned k = 0; k < nr; k++) {
		const struct result *r = &rounds[k][i];

		if (r->status != RES_OK || r->ref.status != REF_OK || !isfinite(r->ref.ratio)) {
			row->why = r->status != RES_OK ? r->reason : r->ref.reason;
			if (!row->why[0])
				row->why = "no ratio";
			return;
		}
		a[row->pairs] = rtt ? r->lat_mean_ns : r->msgs_per_s;
		b[row->pairs] = rtt ? r->ref.lat_mean_ns : r->ref.msgs_per_s;
		q[row->pairs++] = r->ref.ratio;
	}
	row->ipclab = stats_median(a, row->pairs);
	row->ref = stats_median(b, row->pairs);
	row->ratio = stats_median(q, row->pairs);
	row->lo = q[0];
	row->hi = q[row->pairs - 1];
}

static int cmp_rows(const void *x, const void *y)
{
	const struct fid_row *a = x, *b = y;
	double da = a->why ? -1 : fabs(1 - a->ratio), db = b->why ? -1 : fabs(1 - b->ratio);

	return da < db ? 1 : da > db ? -1 : 0;
}

/* The ranked table: the cell's configuration from the one field table,
 * then what its rounds measured (each row's own figures, as text). */
static const struct rows_col fid_cols[] = {
	{ .label = "rank", .width = 4 }, { .key = "transport", .width = -12, .gap = "  " },
	{ .key = "pattern", .width = -9 }, { .label = "size", .width = 5 },
	{ .label = "endpts", .key = "endpoints", .width = -8, .gap = "  " },
	{ .key = "pin", .width = -5 }, { .label = "ipclab", .width = 12 },
	{ .label = "reference", .width = 12 }, { .label = "ratio", .width = 7 },
	{ .label = "pairs min-max", .width = 14 }, { .label = "spread", .width = 7 },
};
static const struct rows fid_table = { .indent = "", .cols = fid_cols, .ncols = ARRAY_SIZE(fid_cols) };

/* One row: its rank (0: no ratio, why instead of the figures). */
static void fid_line(const struct fid_row *w, size_t rank)
{
	const struct result *r = w->r;
	bool rtt = r->cell.pat->lat_kind == LAT_RTT;
	char t[6][24], why[ERRLEN + 16];
	const char *text[ARRAY_SIZE(fid_cols)] = { t[0], [3] = t[1], [6] = t[2], t[3], t[4], t[5], why };
	struct rows_row row = { .rest = rank ? NULL : why, .rest_at = 6 };

	snprintf(t[0], sizeof(t[0]), rank ? "%zu" : "-", rank);
	snprintf(t[1], sizeof(t[1]), "%lluB", (unsigned long long)r->cell.size);
	snprintf(t[2], sizeof(t[2]), rtt ? "%.0f ns" : "%.3gM/s", rtt ? w->ipclab : w->ipclab / 1e6);
	snprintf(t[3], sizeof(t[3]), rtt ? "%.0f ns" : "%.3gM/s", rtt ? w->ref : w->ref / 1e6);
	snprintf(t[4], sizeof(t[4]), "%.3f", w->ratio);
	snprintf(t[5], sizeof(t[5]), "%2u %5.2f-%-5.2f", w->pairs, w->lo, w->hi);
	if (rank)
		snprintf(why, sizeof(why), "%.1f%%", 100 * (w->hi - w->lo) / w->ratio);
	else
		snprintf(why, sizeof(why), "no ratio: %s", w->why);
	for (unsigned i = 0; i < ARRAY_SIZE(fid_cols); i++) {
		row.r[i] = r;
		row.text[i] = text[i];
	}
	rows_line(stdout, &fid_table, &row);
}

static void fid_print(struct fid_row *rows, size_t n, unsigned nr)
{
	qsort(rows, n, sizeof(*rows), cmp_rows);
	printf("\n");
	rows_head(stdout, &fid_table);
	for (size_t i = 0, rank = 1; i < n; i++)
		if (!rows[i].why)
			fid_line(&rows[i], rank++);
	for (size_t i = 0; i < n; i++)
		if (rows[i].why)
			fid_line(&rows[i], 0);
	printf("ratio: ipclab over its reference, the median of %u interleaved pair ratio%s: msgs/s for "
	       "stream (below 1 = ipclab slower), mean RTT for ping-pong (above 1 = ipclab slower); "
	       "spread = (max - min) / median of the pair ratios\n",
	       nr, nr == 1 ? "" : "s");
}

/* The rounds' results as one report (-f json|csv): every round's cells. */
static int fid_write(const struct fid_opts *o, struct result *const *rounds, unsigned nr, size_t n,
		     const struct env_info *env)
{
	struct reporter_args ra = { .format = o->so.format };
	struct report rep = { .cmdline = o->so.cmdline, .env = *env, .n = n * nr };
	int ret;

	rep.results = malloc((rep.n ? rep.n : 1) * sizeof(*rep.results));
	if (!rep.results)
		return usage_error("out of memory");
	for (unsigned k = 0; k < nr; k++)
		memcpy(rep.results + k * n, rounds[k], n * sizeof(*rep.results));
	ret = output_report(o->so.output, &ra, &rep);
	free(rep.results);
	return ret;
}

/* The plan run nr times, each cell with its reference right after it. */
static int fid_rounds(const struct fid_opts *o, const struct plan *pl, struct result **rounds,
		      unsigned *nr, size_t *n, struct env_info *env)
{
	struct session_opts so = { .repeat = 1, .pm_qos_us = -1, .reference = &reference_ops };
	int ret = 0;

	for (*nr = 0; *nr < o->repeat && !ret;) {
		struct report rep = { .cmdline = o->so.cmdline };

		if (!o->so.quiet)
			fprintf(stderr, "ipclab: fidelity round %u of %u (%zu cells)\n", *nr + 1, o->repeat,
				pl->n);
		ret = run_session(pl, &so, o->so.quiet, &rep);
		if (!rep.results)
			break;
		if (rep.n != pl->n) { /* interrupted: keep the complete rounds */
			free(rep.results);
			break;
		}
		*env = rep.env;
		*n = rep.n;
		rounds[(*nr)++] = rep.results;
	}
	return ret;
}

int cmd_suite_fidelity(int argc, char **argv)
{
	struct fid_opts o = { .so.format = "table" };
	struct result *rounds[FID_MAX_ROUNDS] = { NULL };
	struct env_info env = { 0 };
	struct plan pl = { 0 };
	unsigned nr = 0;
	size_t n = 0;
	int ret = fid_args(argc, argv, &o);

	if (ret)
		return ret < 0 ? 0 : ret;
	snprintf(o.so.cmdline, sizeof(o.so.cmdline), "ipclab suite fidelity%s --repeat %u%s%s",
		 o.so.quick ? " --quick" : "", o.repeat, o.tp_list[0] ? " -t " : "", o.tp_list);
	ret = fid_plan(&o, &pl);
	if (!ret)
		ret = fid_rounds(&o, &pl, rounds, &nr, &n, &env);
	if (nr) {
		struct fid_row *rows = calloc(n ? n : 1, sizeof(*rows));
		bool failed = false;

		for (size_t i = 0; rows && i < n; i++) {
			fid_row(rounds, nr, i, &rows[i]);
			for (unsigned k = 0; k < nr; k++)
				failed |= rounds[k][i].status == RES_FAILED ||
					  rounds[k][i].ref.status == REF_FAILED;
		}
		if (!strcmp(o.so.format, "table") || o.so.output) {
			printf("== fidelity: ipclab against each cell's bare reference loop (%u round%s)\n", nr,
			       nr == 1 ? "" : "s");
			if (rows)
				fid_print(rows, n, nr);
		}
		if (strcmp(o.so.format, "table")) {
			int w = fid_write(&o, rounds, nr, n, &env);

			ret = ret ? ret : w;
		}
		if (!ret && failed)
			ret = 1;
		free(rows);
	}
	for (unsigned k = 0; k < nr; k++)
		free(rounds[k]);
	plan_free(&pl);
	if (ret > 128)
		say(NULL, "interrupted by signal %d", ret - 128);
	return ret;
}
