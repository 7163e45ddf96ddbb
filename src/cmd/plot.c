// SPDX-License-Identifier: MIT
/* `ipclab plot RESULTS.json -o DIR`: its options, then the figures
 * (src/report/plot.c). */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

#include "cli_opt.h"
#include "cmd.h"
#include "../report/plot.h"

/* What the options fill: the figures' options and -o DIR. */
struct plot_cli {
	struct plot_opts o;
	const char *dir;
};

const size_t plot_args_size = sizeof(struct plot_cli);

static int plot_usage(const struct cli_opt *opt, char *arg, void *args, struct cli_ctx *ctx)
{
	(void)opt, (void)arg, (void)args, (void)ctx;
	fputs("usage: ipclab plot RESULTS.json -o DIR [options]\n"
	      "Figures from a result file (ipclab run -f json): PNG and SVG, each with its data\n"
	      "(NAME.dat) and gnuplot script (NAME.gp) beside it. Needs gnuplot (" GNUPLOT_PKG ").\n",
	      stdout);
	cli_help(stdout, plot_options, 0);
	fputs("Exit status: 0 ok, 1 plotting failed, 2 bad input or no gnuplot.\n", stdout);
	return -1;
}

static int plot_size(const struct cli_opt *opt, char *arg, void *args, struct cli_ctx *ctx)
{
	struct plot_opts *o = args;
	unsigned w, h;
	char end;

	(void)opt, (void)ctx;
	if (sscanf(arg, "%ux%u%c", &w, &h, &end) != 2 || w < 100 || h < 100 || w > 10000 ||
	    h > 10000)
		return cmd_usage_error("plot", "--size %s: expected WIDTHxHEIGHT in pixels, 100 to 10000, e.g. 1200x700",
				  arg);
	o->width = w;
	o->height = h;
	return 0;
}

static int plot_pivot(const struct cli_opt *opt, char *arg, void *args, struct cli_ctx *ctx)
{
	struct plot_opts *o = args;
	char err[ERRLEN];

	(void)opt, (void)ctx;
	if (o->npivots >= PLOT_MAX_PIVOTS)
		return cmd_usage_error("plot", "--pivot: at most %d", PLOT_MAX_PIVOTS);
	if (plot_parse_pivot(arg, &o->pivots[o->npivots++], err, sizeof(err)))
		return cmd_usage_error("plot", "%s", err);
	return 0;
}

static int plot_quiet(const struct cli_opt *opt, char *arg, void *args, struct cli_ctx *ctx)
{
	(void)opt, (void)arg, (void)ctx;
	((struct plot_opts *)args)->list = NULL;
	return 0;
}

const struct cli_opt plot_options[] = {
	{ .name = "output", .short_name = 'o', .has_arg = required_argument, .metavar = "DIR",
	  .help = "directory for the figures (made 0700 if missing; an\n"
		  "existing one must be yours, writable by no one else)", .kind = CLI_TEXT,
	  .offset = offsetof(struct plot_cli, dir), .values = "@dir" },
	{ .name = "pivot", .has_arg = required_argument, .metavar = "ROW,COL,METRIC",
	  .help = "also a heatmap of METRIC over two parameters,\n"
		  "e.g. size,think,cpu_pct_total or server_cpu,client_cpu,p50;\n"
		  "repeatable (default: the run's own --pivot)", .kind = CLI_CALL, .call = plot_pivot,
	  .values = "list:size think think_ns rate pin server_cpu client_cpu sched clients endpoints "
		    "transport pattern cpu_pct_total msgs_per_s bytes_per_s lat_p50_ns lat_p99_ns "
		    "cpu_ns_per_msg sys_ctx_switches_per_s" },
	{ .name = "size", .has_arg = required_argument, .metavar = "WxH",
	  .help = "pixels of each figure; default 1000x600", .kind = CLI_CALL, .call = plot_size,
	  .values = "1000x600 1200x700 1600x900" },
	{ .name = "quiet", .short_name = 'q', .has_arg = no_argument,
	  .help = "do not list the files written", .kind = CLI_CALL, .call = plot_quiet },
	{ .name = "help", .short_name = 'h', .has_arg = no_argument, .help = "this text",
	  .kind = CLI_CALL, .call = plot_usage },
	{ 0 },
};

static int plot_args(int argc, char **argv, struct plot_cli *c)
{
	int ret = cli_parse(plot_options, argc, argv, c, "plot", true);

	if (ret)
		return ret;
	if (argc - optind != 1)
		return cmd_usage_error("plot", "expected one result file (got %d): ipclab plot RESULTS.json -o DIR",
				  argc - optind);
	if (!c->dir)
		return cmd_usage_error("plot", "no output directory: ipclab plot %s -o DIR", argv[optind]);
	return 0;
}

int cmd_plot(int argc, char **argv)
{
	struct plot_cli c = { .o = { .width = 1000, .height = 600, .list = stdout } };
	char err[ERRLEN];
	int ret = plot_args(argc, argv, &c);

	if (ret)
		return ret < 0 ? 0 : ret;
	ret = plot_file(argv[optind], c.dir, &c.o, err, sizeof(err));
	if (ret == -ENOENT || ret == -EINVAL)
		return cmd_usage_error("plot", "%s", err);
	if (ret)
		return say_error("plot", "%s", err);
	return 0;
}
