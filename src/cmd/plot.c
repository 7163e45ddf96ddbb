// SPDX-License-Identifier: MIT
/* `ipclab plot RESULTS.json -o DIR`: its options, then the figures
 * (src/report/plot.c). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>

#include "cmd.h"
#include "../report/plot.h"

static int plot_usage(FILE *f)
{
	fputs("usage: ipclab plot RESULTS.json -o DIR [options]\n"
	      "Figures from a result file (ipclab run -f json): PNG and SVG, each with its data\n"
	      "(NAME.dat) and gnuplot script (NAME.gp) beside it. Needs gnuplot (" GNUPLOT_PKG ").\n"
	      "  -o, --output DIR          directory for the figures (made 0700 if missing; an\n"
	      "                            existing one must be yours, writable by no one else)\n"
	      "      --pivot ROW,COL,METRIC  also a heatmap of METRIC over two parameters,\n"
	      "                            e.g. size,think,cpu_pct_total or server_cpu,client_cpu,p50;\n"
	      "                            repeatable (default: the run's own --pivot)\n"
	      "      --size WxH            pixels of each figure; default 1000x600\n"
	      "  -q, --quiet               do not list the files written\n"
	      "  -h, --help\n"
	      "Exit status: 0 ok, 1 plotting failed, 2 bad input or no gnuplot.\n", f);
	return 0;
}

static int parse_size_arg(const char *arg, struct plot_opts *o)
{
	unsigned w, h;
	char end;

	if (sscanf(arg, "%ux%u%c", &w, &h, &end) != 2 || w < 100 || h < 100 || w > 10000 ||
	    h > 10000)
		return cmd_usage_error("plot", "--size %s: expected WIDTHxHEIGHT in pixels, 100 to 10000, e.g. 1200x700",
				  arg);
	o->width = w;
	o->height = h;
	return 0;
}

static int plot_args(int argc, char **argv, struct plot_opts *o, const char **dir)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "pivot", required_argument, NULL, 'P' },
		{ "size", required_argument, NULL, 'S' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char err[ERRLEN];
	int opt;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":o:qh", opts, NULL)) != -1) {
		if (opt == 'h')
			return plot_usage(stdout), -1;
		if (opt == ':')
			return cmd_usage_error("plot", "option '%s' needs a value; see ipclab plot --help", argv[optind - 1]);
		if (opt == '?')
			return cmd_usage_error("plot", "unknown option '%s'; see ipclab plot --help", argv[optind - 1]);
		if (opt == 'o')
			*dir = optarg;
		else if (opt == 'q')
			o->list = NULL;
		else if (opt == 'S' && parse_size_arg(optarg, o))
			return 2;
		else if (opt == 'P' && o->npivots >= PLOT_MAX_PIVOTS)
			return cmd_usage_error("plot", "--pivot: at most %d", PLOT_MAX_PIVOTS);
		else if (opt == 'P' && plot_parse_pivot(optarg, &o->pivots[o->npivots++], err, sizeof(err)))
			return cmd_usage_error("plot", "%s", err);
	}
	if (argc - optind != 1)
		return cmd_usage_error("plot", "expected one result file (got %d): ipclab plot RESULTS.json -o DIR",
				  argc - optind);
	if (!*dir)
		return cmd_usage_error("plot", "no output directory: ipclab plot %s -o DIR", argv[optind]);
	return 0;
}

int cmd_plot(int argc, char **argv)
{
	struct plot_opts o = { .width = 1000, .height = 600, .list = stdout };
	const char *dir = NULL;
	char err[ERRLEN];
	int ret = plot_args(argc, argv, &o, &dir);

	if (ret)
		return ret < 0 ? 0 : ret;
	ret = plot_file(argv[optind], dir, &o, err, sizeof(err));
	if (ret == -ENOENT || ret == -EINVAL)
		return cmd_usage_error("plot", "%s", err);
	if (ret)
		return say_error("plot", "%s", err);
	return 0;
}
