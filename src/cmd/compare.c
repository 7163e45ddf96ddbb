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

struct cmp_args {
	struct cmp_opts o;
	const char *format, *output;
	const char *db, *baseline;	/* --db, --baseline: BEFORE from the store */
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
	      "Match the cells of two result files by configuration and compare their metrics:\n"
	      "with repetitions in both (run --repeat 6 or more), by a Mann-Whitney test over them\n"
	      "(p) and the 95 % interval of the ratio after/before (ratio ci95).\n", stdout);
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
	  .help = "with --baseline: the store (default: $IPCLAB_DB or the default file)",
	  .kind = CLI_TEXT, .offset = CA(db), .values = "@file" },
	DB_SHARED_ROW(.kind = CLI_FLAG, .offset = CA(db_shared)),
	{ .name = "baseline", .has_arg = required_argument, .metavar = "K=V",
	  .help = "BEFORE from the store: each cell's newest result with label\n"
		  "K=V on AFTER's machine (docs/history.md); then one file, AFTER.json",
	  .kind = CLI_TEXT, .offset = CA(baseline) },
	{ .name = "help", .short_name = 'h', .has_arg = no_argument, .help = "this text",
	  .kind = CLI_CALL, .call = cmp_usage },
	{ 0 },
};

static int cmp_args_parse(int argc, char **argv, struct cmp_args *a)
{
	int ret = cli_parse(compare_options, argc, argv, a, "compare", true);

	if (ret)
		return ret;
	if (a->baseline && argc - optind != 1)
		return cmd_usage_error("compare", "--baseline: expected one result file, AFTER.json (got %d)",
				       argc - optind);
	if ((a->db || a->db_shared) && !a->baseline)
		return cmd_usage_error("compare", "--db and --db-shared go with --baseline K=V: which stored runs are the baseline?");
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

int cmd_compare(int argc, char **argv)
{
	struct cmp_args a = { .o = { .fail_above_pct = NAN, .metric_mask = (1u << CMP_NMETRICS) - 1 } };
	struct rfile before, after;
	struct cmp_result r;
	char err[ERRLEN];
	int ret = cli_defaults(compare_options, &a) ? 2 : cmp_args_parse(argc, argv, &a);

	if (ret)
		return ret < 0 ? 0 : ret;
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
