// SPDX-License-Identifier: MIT
/* `ipclab compare BEFORE.json AFTER.json`: its options, then the
 * comparison (src/report/compare.c) written through the atomic writer. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "dbcmd.h"
#include "../report/compare.h"

static int cmp_usage(FILE *f)
{
	fputs("usage: ipclab compare [options] BEFORE.json AFTER.json\n"
	      "Match the cells of two result files by configuration and compare their metrics:\n"
	      "with repetitions in both (run --repeat 6 or more), by a Mann-Whitney test over them\n"
	      "(p) and the 95 % interval of the ratio after/before (ratio ci95).\n"
	      "  -f, --format FMT        text (default), markdown or json\n"
	      "  -m, --metrics LIST      metrics to compare (default all): msgs_per_s, bytes_per_s,\n"
	      "                          lat_p50_ns, lat_p99_ns, lat_max_ns, cpu_ns_per_msg,\n"
	      "                          cpu_pct_total, sys_ctx_switches_per_s\n"
	      "      --fail-above PCT    exit 3 when a metric got worse by more than PCT %: tested,\n"
	      "                          when the whole interval of the ratio is past PCT; else\n"
	      "                          when it is not within the run-to-run spread\n"
	      "      --ignore LIST       configuration keys not to match on, e.g. keep_awake\n"
	      "  -o, --output FILE       write the comparison to FILE instead of stdout\n"
	      "      --db URL --baseline K=V AFTER.json\n"
	      "                          BEFORE from the store: each cell's newest result with label\n"
	      "                          K=V on AFTER's machine (docs/history.md)\n"
	      "  -h, --help\n"
	      "Exit status: 0 ok, 2 bad input, 3 a regression past --fail-above.\n", f);
	return 0;
}

struct cmp_args {
	struct cmp_opts o;
	const char *format, *output;
	const char *db, *baseline;	/* --db, --baseline: BEFORE from the store */
	char *ignore_buf;
	const char *ignore[32];
};

static int cmp_option(int opt, char *arg, struct cmp_args *a)
{
	char err[ERRLEN], *end, *save = NULL;
	unsigned n = 0;

	switch (opt) {
	case 'f':
		if (strcmp(arg, "text") && strcmp(arg, "markdown") && strcmp(arg, "json"))
			return cmd_usage_error("compare", "-f %s: expected text, markdown or json", arg);
		a->format = arg;
		return 0;
	case 'm':
		return cmp_parse_metrics(arg, &a->o.metric_mask, err, sizeof(err)) ?
			       cmd_usage_error("compare", "%s", err) : 0;
	case 'F':
		errno = 0;
		a->o.fail_above_pct = strtod(arg, &end);
		if (errno || end == arg || (*end && strcmp(end, "%")) || !(a->o.fail_above_pct >= 0))
			return cmd_usage_error("compare", "--fail-above %s: expected a percentage, e.g. 5 or 12.5", arg);
		return 0;
	case 'I':
		for (char *w = strtok_r(arg, ",", &save); w && n < ARRAY_SIZE(a->ignore) - 1;
		     w = strtok_r(NULL, ",", &save))
			a->ignore[n++] = w;
		a->ignore[n] = NULL;
		return 0;
	case 'o':
		a->output = arg;
		return output_check(arg, "compare");
	case 'D':
		a->db = arg;
		return 0;
	case 'B':
		a->baseline = arg;
		return 0;
	}
	return 0;
}

static int cmp_args_parse(int argc, char **argv, struct cmp_args *a)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "metrics", required_argument, NULL, 'm' },
		{ "fail-above", required_argument, NULL, 'F' },
		{ "ignore", required_argument, NULL, 'I' },
		{ "output", required_argument, NULL, 'o' },
		{ "db", required_argument, NULL, 'D' },
		{ "baseline", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int opt, ret;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":f:m:o:h", opts, NULL)) != -1) {
		if (opt == 'h')
			return cmp_usage(stdout), -1;
		if (opt == ':')
			return cmd_usage_error("compare", "option '%s' needs a value; see ipclab compare --help",
					 argv[optind - 1]);
		if (opt == '?')
			return cmd_usage_error("compare", "unknown option '%s'; see ipclab compare --help",
					 argv[optind - 1]);
		ret = cmp_option(opt, optarg, a);
		if (ret)
			return ret;
	}
	if (a->baseline && argc - optind != 1)
		return cmd_usage_error("compare", "--baseline: expected one result file, AFTER.json (got %d)",
				       argc - optind);
	if (a->db && !a->baseline)
		return cmd_usage_error("compare", "--db goes with --baseline K=V: which stored runs are the baseline?");
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
	struct cmp_args a = { .o = { .fail_above_pct = NAN, .metric_mask = (1u << CMP_NMETRICS) - 1 },
			      .format = "text" };
	struct rfile before, after;
	struct cmp_result r;
	char err[ERRLEN];
	int ret = cmp_args_parse(argc, argv, &a);

	if (ret)
		return ret < 0 ? 0 : ret;
	if (a.baseline) {	/* BEFORE from the store */
		if (rfile_load(&after, argv[optind], a.ignore, err, sizeof(err)))
			return cmd_usage_error("compare", "%s", err);
		ret = db_baseline_load(a.db, a.baseline, NULL, &after, a.ignore, &before);
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
