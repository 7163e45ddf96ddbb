// SPDX-License-Identifier: MIT
/* `ipclab compare BEFORE.json AFTER.json`: its options, then the
 * comparison (src/report/compare.c) written through the atomic writer. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_opt.h"
#include "cmd.h"
#include "dbcmd.h"
#include "../report/compare.h"
#include "compare_store.h"
#include "../report/rec_env.h"
#include "../report/rec_runs.h"

struct cmp_args {
	struct cmp_opts o;
	const char *format, *output;
	const char *db, *baseline;	/* --db, --baseline: BEFORE from the store */
	const char *by, *label;		/* --by machine --label K=V: sides from the store */
	bool db_shared;			/* --db-shared */
	char *ignore_buf;
	const char *ignore[32];
};

#define CA(f) offsetof(struct cmp_args, f)
const size_t compare_args_size = sizeof(struct cmp_args);

static int cmp_usage(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	(void)o, (void)arg, (void)args, (void)ctx;
	fputs("usage: ipclab compare [options] BEFORE.json AFTER.json\n"
	      "       ipclab compare [options] BEFORE1.json BEFORE2.json... -- AFTER1.json AFTER2.json...\n"
	      "       ipclab compare --db URL --by machine [--label K=V] [--baseline machine=NAME]\n"
	      "Match the cells of result files by configuration and compare their metrics.\n"
	      "Several runs a side (separate runs of the plan): the verdict is over the runs, each\n"
	      "run's median per cell (a Mann-Whitney test with 4 runs a side or more, else every\n"
	      "after run against every before run), better or worse only beyond +-10 %.\n"
	      "One run a side: over its repetitions (run --repeat 6 or more), a Mann-Whitney test (p)\n"
	      "and the 95 % interval of the ratio after/before (ratio ci95); when the store holds\n"
	      "this machine's run-to-run drift (ipclab env --calibrate), a change within it is\n"
	      "within run-to-run noise. Each verdict says its basis.\n", stdout);
	cli_help(stdout, compare_options, FMT_COMPARE);
	fputs("Exit status: 0 ok, 2 bad input, 3 a regression past --fail-above.\n", stdout);
	return -1;
}

static int cmp_metrics(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	char err[ERRLEN];

	(void)o, (void)ctx;
	return cmp_parse_metrics(arg, &((struct cmp_args *)args)->o.metric_mask, err, sizeof(err)) ?
		       cmd_usage_error("compare", "%s", err) : 0;
}

static int cmp_fail_above(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	struct cmp_args *a = args;
	char *end;

	(void)o, (void)ctx;
	errno = 0;
	a->o.fail_above_pct = strtod(arg, &end);
	if (errno || end == arg || (*end && strcmp(end, "%")) || !(a->o.fail_above_pct >= 0))
		return cmd_usage_error("compare", "--fail-above %s: expected a percentage, e.g. 5 or 12.5", arg);
	return 0;
}

static int cmp_ignore(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	struct cmp_args *a = args;
	char *save = NULL;
	unsigned n = 0;

	(void)o, (void)ctx;
	for (char *w = strtok_r(arg, ",", &save); w && n < ARRAY_SIZE(a->ignore) - 1;
	     w = strtok_r(NULL, ",", &save))
		a->ignore[n++] = w;
	a->ignore[n] = NULL;
	return 0;
}

const struct cli_opt compare_options[] = {
	{ .name = "format", .short_name = 'f', .has_arg = required_argument, .metavar = "FMT",
	  .help = "{formats}", .kind = CLI_CALL, .call = cli_opt_format, .id = FMT_COMPARE,
	  .offset = CA(format), .def = "table", .values = "@formats" },
	{ .name = "metrics", .short_name = 'm', .has_arg = required_argument, .metavar = "LIST",
	  .help = "metrics to compare (default all): msgs_per_s, bytes_per_s,\n"
		  "lat_p50_ns, lat_p99_ns, lat_max_ns, cpu_ns_per_msg,\n"
		  "cpu_pct_total, sys_ctx_switches_per_s", .kind = CLI_CALL, .call = cmp_metrics,
	  .values = "list:msgs_per_s bytes_per_s lat_p50_ns lat_p99_ns lat_max_ns cpu_ns_per_msg "
		    "cpu_pct_total sys_ctx_switches_per_s" },
	{ .name = "fail-above", .has_arg = required_argument, .metavar = "PCT",
	  .help = "exit 3 when a metric got worse by more than PCT %: tested,\n"
		  "when the whole interval of the ratio is past PCT; else\n"
		  "when it is not within the run-to-run spread", .kind = CLI_CALL,
	  .call = cmp_fail_above },
	{ .name = "ignore", .has_arg = required_argument, .metavar = "LIST",
	  .help = "configuration keys not to match on, e.g. keep_awake", .kind = CLI_CALL,
	  .call = cmp_ignore },
	{ .name = "output", .short_name = 'o', .has_arg = required_argument, .metavar = "FILE",
	  .help = "write the comparison to FILE instead of stdout", .kind = CLI_CALL,
	  .call = cli_opt_output, .offset = CA(output), .values = "@file" },
	{ .name = "db", .has_arg = required_argument, .metavar = "URL",
	  .help = "the store of --baseline, --by and this machine's calibration\n"
		  "(default: $IPCLAB_DB or the default file)",
	  .kind = CLI_TEXT, .offset = CA(db), .values = "@file" },
	DB_SHARED_ROW(.kind = CLI_FLAG, .offset = CA(db_shared)),
	{ .name = "baseline", .has_arg = required_argument, .metavar = "K=V",
	  .help = "BEFORE from the store: each cell's newest result with label\n"
		  "K=V on AFTER's machine (docs/history.md); then one file, AFTER.json;\n"
		  "with --by machine, machine=NAME: the machine the others are\n"
		  "compared with (default the first by name)",
	  .kind = CLI_TEXT, .offset = CA(baseline) },
	{ .name = "by", .has_arg = required_argument, .metavar = "machine",
	  .help = "hosts side by side: each machine's stored runs (--label) are\n"
		  "a side, each compared with the baseline machine's",
	  .kind = CLI_TEXT, .offset = CA(by), .values = "list:machine" },
	{ .name = "label", .has_arg = required_argument, .metavar = "K=V[,K=V]",
	  .help = "with --by: the stored runs with these labels, e.g. fleet_run=42",
	  .kind = CLI_TEXT, .offset = CA(label) },
	{ .name = "help", .short_name = 'h', .has_arg = no_argument, .help = "this text",
	  .kind = CLI_CALL, .call = cmp_usage },
	{ 0 },
};

static int cmp_args_parse(int argc, char **argv, struct cmp_args *a)
{
	int ret = cli_parse(compare_options, argc, argv, a, "compare", true);

	if (ret)
		return ret;
	if (a->by && strcmp(a->by, "machine"))
		return cmd_usage_error("compare", "--by %s: expected --by machine", a->by);
	if (a->label && !a->by)
		return cmd_usage_error("compare", "--label goes with --by machine: ipclab compare --by machine --label %s",
				       a->label);
	if (a->by) {
		if (argc - optind)
			return cmd_usage_error("compare", "--by machine takes its sides from the store, not files ('%s')",
					       argv[optind]);
		if (a->baseline && strncmp(a->baseline, "machine=", 8))
			return cmd_usage_error("compare", "--by machine --baseline %s: expected machine=NAME",
					       a->baseline);
		return 0;
	}
	if (a->baseline && argc - optind != 1)
		return cmd_usage_error("compare", "--baseline: expected one result file, AFTER.json (got %d)",
				       argc - optind);
	if (!a->baseline && argc - optind != 2)
		return cmd_usage_error("compare", "expected two result files, BEFORE.json AFTER.json (got %d); see ipclab compare --help",
				 argc - optind);
	return 0;
}

/* Through the one atomic writer, as run -o: never half-written. */
static int cmp_write(const struct cmp_args *a, const struct cmp_result *r)
{
	struct output out;
	int ret = output_open(&out, a->output, "compare");

	if (ret)
		return ret;
	ret = compare_print(out.f, r, &a->o, a->format);
	return output_commit(&out, ret, strerror(errno ? errno : EIO));
}

/* One run a side: this machine's calibrated drift from the store. */
static void cmp_calibration(struct cmp_args *a, const struct rfile *after, struct cmp_drift *d,
			    char *source, size_t slen)
{
	const char *host = rfile_hostname(after);

	a->o.ndrift = cmp_store_drift(a->db, a->db_shared, host, d, CMP_DRIFT_MAX, source, slen);
	a->o.drift = d;
	a->o.drift_source = a->o.ndrift ? source : NULL;
}

/* --by machine: each other machine's runs against the baseline machine's. */
static int cmp_by_machine(struct cmp_args *a)
{
	struct cmp_machines m;
	const char *base = a->baseline ? a->baseline + 8 : NULL;
	size_t b = 0, regress = 0;
	struct output out;
	json_t *all = NULL, *comps = NULL;	/* comps: all's (borrowed) */
	int ret = cmp_store_by_machine(a->db, a->db_shared, a->label, a->ignore, &m);

	if (ret)
		return ret;
	while (base && b < m.n && strcmp(m.host[b].name, base))
		b++;
	if (b == m.n) {
		ret = cmd_usage_error("compare", "--baseline machine=%s: no run of that machine among the %zu selected; --by machine lists %s first",
				      base, m.n, m.host[0].name);
		cmp_machines_free(&m);
		return ret;
	}
	ret = output_open(&out, a->output, "compare");
	if (ret) {
		cmp_machines_free(&m);
		return ret;
	}
	if (!strcmp(a->format, "json")) {
		comps = json_array();
		all = json_pack("{s:s, s:s, s:o}", "by", "machine", "baseline", m.host[b].name,
				"comparisons", comps);
	}
	for (size_t i = 0; !ret && i < m.n; i++) {
		struct cmp_opts o = a->o;
		struct cmp_result r;
		char *buf = NULL;
		size_t len = 0;
		FILE *f;

		if (i == b)
			continue;
		o.runs[0] = m.host[b].ptr;
		o.nruns[0] = m.host[b].nruns;
		o.runs[1] = m.host[i].ptr;
		o.nruns[1] = m.host[i].nruns;
		if (compare_files(o.runs[0][0], o.runs[1][0], &o, &r)) {
			ret = cmd_usage_error("compare", "out of memory");
			break;
		}
		regress += r.regressions;
		f = all ? open_memstream(&buf, &len) : out.f;
		if (!all)
			fprintf(f, "%s== %s against %s (%zu and %zu runs) ==\n", i == (b == 0) ? "" : "\n",
				m.host[i].name, m.host[b].name, o.nruns[1], o.nruns[0]);
		ret = !f || compare_print(f, &r, &o, a->format) ? -EIO : 0;
		if (all && f) {
			json_t *one;

			fclose(f);
			one = buf ? json_loads(buf, 0, NULL) : NULL;
			if (one)
				json_object_set_new(one, "machine", json_string(m.host[i].name));
			ret = ret || !one ||
			      json_array_append_new(comps, one) ? -EIO : 0;
			free(buf);
		}
		compare_free(&r);
	}
	if (!ret && all && (json_dumpf(all, out.f, JSON_INDENT(2) | JSON_REAL_PRECISION(15)) ||
			    fputc('\n', out.f) == EOF))
		ret = -EIO;
	json_decref(all);
	ret = output_commit(&out, ret, strerror(errno ? errno : EIO));
	cmp_machines_free(&m);
	return !ret && regress ? 3 : ret;
}

/* A side's runs: each file one run, or a run --runs file its N runs. */
struct side {
	struct rfile *rf;
	size_t n, cap;
};

static void side_free(struct side *s)
{
	for (size_t i = 0; i < s->n; i++)
		rfile_free(&s->rf[i]);
	free(s->rf);
	*s = (struct side){ 0 };
}

static struct rfile *side_slot(struct side *s)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 8;
		struct rfile *p = realloc(s->rf, cap * sizeof(*p));

		if (!p)
			return NULL;
		s->rf = p;
		s->cap = cap;
	}
	return &s->rf[s->n];
}

/* A file into side s: itself, or (run --runs) each of its runs. */
static int side_add(struct side *s, const char *path, const char *const *ignore, char *err,
		    size_t elen)
{
	struct rfile one, *slot;
	size_t nr;
	int ret = rfile_load(&one, path, ignore, err, elen);

	if (ret)
		return ret;
	nr = rfile_nruns(&one);
	for (size_t j = 0; j < (nr ? nr : 1); j++) {
		if (!(slot = side_slot(s))) {
			rfile_free(&one);
			return errf(err, elen, ENOMEM, "out of memory");
		}
		if (!nr) {
			*slot = one;
			s->n++;
			return 0;
		}
		if ((ret = rfile_run(&one, j, ignore, slot, err, elen))) {
			rfile_free(&one);
			return ret;
		}
		s->n++;
	}
	rfile_free(&one);
	return 0;
}

/* The files of one side, loaded; 0 or 2 with the error said. */
static int cmp_load_side(char **paths, size_t n, const char *const *ignore, struct side *s)
{
	char err[ERRLEN];

	for (size_t i = 0; i < n; i++)
		if (side_add(s, paths[i], ignore, err, sizeof(err))) {
			side_free(s);
			return cmd_usage_error("compare", "%s", err);
		}
	return 0;
}

/* compare A1 A2 -- B1 B2: several runs a side (a run --runs file counts
 * as its runs). */
static int cmp_sides(struct cmp_args *a, char **argv, size_t na, size_t nb)
{
	struct side s[2] = { 0 };
	const struct rfile **ptr = NULL;
	struct cmp_drift d[CMP_DRIFT_MAX];
	char source[256];
	struct cmp_result r;
	int ret = cmp_load_side(argv, na, a->ignore, &s[0]);

	if (!ret && (ret = cmp_load_side(argv + na + 1, nb, a->ignore, &s[1])))
		side_free(&s[0]);
	if (ret)
		return ret;
	if (!(ptr = calloc(s[0].n + s[1].n, sizeof(*ptr)))) {
		ret = cmd_usage_error("compare", "out of memory");
		goto out;
	}
	for (size_t k = 0, p = 0; k < 2; k++)
		for (size_t i = 0; i < s[k].n; i++)
			ptr[p++] = &s[k].rf[i];
	a->o.runs[0] = ptr;
	a->o.nruns[0] = s[0].n;
	a->o.runs[1] = ptr + s[0].n;
	a->o.nruns[1] = s[1].n;
	if (s[0].n == 1 && s[1].n == 1)
		cmp_calibration(a, &s[1].rf[0], d, source, sizeof(source));
	if (compare_files(&s[0].rf[0], &s[1].rf[0], &a->o, &r)) {
		ret = cmd_usage_error("compare", "out of memory");
	} else {
		ret = cmp_write(a, &r);
		if (!ret && r.regressions)
			ret = 3;
		compare_free(&r);
	}
out:
	side_free(&s[0]);
	side_free(&s[1]);
	free(ptr);
	return ret;
}

/* The "--" between the sides, before getopt sees (and moves) it: 0 when none. */
static int cmp_separator(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--"))
			return i;
	return 0;
}

/* compare [options] A1 A2 -- B1 B2: the options are those before "--". */
static int cmp_separated(struct cmp_args *a, int argc, char **argv, int sep)
{
	int ret = cli_defaults(compare_options, a) ? 2 :
		  cli_parse(compare_options, sep, argv, a, "compare", true);

	if (ret)
		return ret < 0 ? 0 : ret;
	if (a->baseline || a->by)
		return cmd_usage_error("compare", "--baseline and --by take a side from the store; with '--' both sides are files");
	if (optind >= sep || sep + 1 >= argc)
		return cmd_usage_error("compare", "'--' goes between two sides of result files: ipclab compare A1.json A2.json -- B1.json B2.json");
	return cmp_sides(a, argv + optind, (size_t)(sep - optind), (size_t)(argc - sep - 1));
}

int cmd_compare(int argc, char **argv)
{
	struct cmp_args a = { .o = { .fail_above_pct = NAN, .metric_mask = (1u << CMP_NMETRICS) - 1 } };
	struct rfile before, after;
	struct cmp_result r;
	struct cmp_drift d[CMP_DRIFT_MAX];
	char err[ERRLEN], source[256];
	int sep = cmp_separator(argc, argv);
	int ret;

	if (sep)
		return cmp_separated(&a, argc, argv, sep);
	ret = cli_defaults(compare_options, &a) ? 2 : cmp_args_parse(argc, argv, &a);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (a.by)
		return cmp_by_machine(&a);
	if (a.baseline) {	/* BEFORE from the store */
		if (rfile_load(&after, argv[optind], a.ignore, err, sizeof(err)))
			return cmd_usage_error("compare", "%s", err);
		ret = db_baseline_load(a.db, a.db_shared, a.baseline, NULL, &after, a.ignore, &before);
		if (ret) {
			rfile_free(&after);
			return ret;
		}
	} else if (rfile_load(&before, argv[optind], a.ignore, err, sizeof(err))) {
		return cmd_usage_error("compare", "%s", err);
	} else if (rfile_load(&after, argv[optind + 1], a.ignore, err, sizeof(err))) {
		rfile_free(&before);
		return cmd_usage_error("compare", "%s", err);
	}
	if (!a.baseline && rfile_nruns(&before) && rfile_nruns(&after)) {
		/* two run --runs files: each side its runs, the test over them */
		char *two[3] = { argv[optind], (char *)"--", argv[optind + 1] };

		rfile_free(&before);
		rfile_free(&after);
		return cmp_sides(&a, two, 1, 1);
	}
	cmp_calibration(&a, &after, d, source, sizeof(source));
	if (compare_files(&before, &after, &a.o, &r)) {
		ret = cmd_usage_error("compare", "out of memory");
	} else {
		ret = cmp_write(&a, &r);
		if (!ret && r.regressions)
			ret = 3;
		compare_free(&r);
	}
	rfile_free(&before);
	rfile_free(&after);
	return ret;
}
