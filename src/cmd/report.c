// SPDX-License-Identifier: MIT
/* `ipclab report FILE.json [MORE.json...] -o report.html`: one
 * self-contained HTML page from result files (src/report/html.c), written
 * through the one output writer; and the same page beside a run's or a
 * suite's own output (run --html, suite --html). */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_opt.h"
#include "cmd.h"
#include "db_filter.h"
#include "ipclab/reporter.h"
#include "../report/html.h"
#include "../report/rec_trace.h"

#define RESULT_FILE_MAX (512ull << 20)

struct report_args {
	const char *output, *folded, *title;
	bool quiet;
	struct filter_args fa;		/* --db: a page of stored runs, hosts side by side */
};

/* report_fleet.c */
int report_fleet(const struct filter_args *fa, const char *output, const char *title);

#define RP(f) offsetof(struct report_args, f)
const size_t report_args_size = sizeof(struct report_args);

static int report_usage(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	(void)o, (void)arg, (void)args, (void)ctx;
	fputs("usage: ipclab report FILE.json [MORE.json ...] [-o report.html] [options]\n"
	      "       ipclab report --db URL [--label K=V] [-o fleet.html]\n"
	      "One HTML page from result files (ipclab run -f json, ipclab suite -f json), with\n"
	      "everything inline: it opens from a mail attachment, with the network off.\n"
	      "Per file: the machine, per pattern and size the ranked table, the latency, throughput\n"
	      "and CPU figures, with --trace each side's time budget and critical path, with\n"
	      "--profile the top functions and flame graphs, -p cycle the completion timeline,\n"
	      "--pin matrix the CPU x CPU heatmap; a suite file a section per seed; two files\n"
	      "also a compare view.\n"
	      "With --db: the stored runs the filters select (a fleet run: --label fleet_run=ID)\n"
	      "as one page, hosts side by side: the runs drawn (machine, kernel, revision,\n"
	      "canary; a run out of line with the fleet's canary marked), a host x cell table of\n"
	      "the headline metric with each machine's ratio to the first, a figure per metric.\n",
	      stdout);
	cli_help(stdout, report_options, 0);
	fputs("Exit status: 0 ok, 1 writing failed, 2 bad input.\n", stdout);
	return -1;
}

const struct cli_opt report_options[] = {
	{ .name = "output", .short_name = 'o', .has_arg = required_argument, .metavar = "FILE",
	  .help = "write the page to FILE (atomically); default stdout", .kind = CLI_CALL,
	  .call = cli_opt_output, .offset = RP(output), .values = "@file" },
	{ .name = "folded", .has_arg = required_argument, .metavar = "DIR",
	  .help = "flame graphs from the folded stacks in DIR (run --profile DIR)",
	  .kind = CLI_TEXT, .offset = RP(folded), .values = "@dir" },
	{ .name = "title", .has_arg = required_argument, .metavar = "TEXT",
	  .help = "the page's title", .kind = CLI_TEXT, .offset = RP(title) },
	{ .name = "quiet", .short_name = 'q', .has_arg = no_argument, .help = "no notes on stderr",
	  .kind = CLI_FLAG, .offset = RP(quiet) },
	FILTER_ROW(RP(fa), "db", 0, FO_DB, "URL", "a page of the stored runs the filters select, hosts side\n"
		   "by side, instead of result files", "@file"),
	DB_SHARED_ROW(.kind = CLI_FLAG, .offset = RP(fa) + offsetof(struct filter_args, shared)),
	FILTER_ROW(RP(fa), "label", 0, FO_LABEL, "K=V[,K=V]",
		   "--db: runs with these labels (fleet_run=ID; repeatable)", NULL),
	FILTER_ROW(RP(fa), "since", 0, FO_SINCE, "WHEN", "--db: runs from WHEN on (2025-06-30, 7d)", NULL),
	FILTER_ROW(RP(fa), "machine", 0, FO_MACHINE, "NAME", "--db: runs on this machine", NULL),
	FILTER_ROW(RP(fa), "run", 0, FO_RUN, "ID[,ID]", "--db: these stored runs", NULL),
	{ .name = "help", .short_name = 'h', .has_arg = no_argument, .help = "this text",
	  .kind = CLI_CALL, .call = report_usage },
	{ 0 },
};

static int report_args(int argc, char **argv, struct report_args *a)
{
	struct stat st;
	int ret = cli_parse(report_options, argc, argv, a, "report", true);

	if (ret)
		return ret;
	if (a->fa.url && optind < argc)
		return cmd_usage_error("report", "%s: --db draws the stored runs; give result files or --db, not both",
				       argv[optind]);
	if (a->fa.url && a->folded)
		return cmd_usage_error("report", "--folded: the flame graphs are of result files, not of --db");
	if (!a->fa.url && (a->fa.f.nlabels || a->fa.f.since || a->fa.f.machine || a->fa.f.nrun_ids))
		return cmd_usage_error("report", "--label, --since, --machine and --run choose stored runs: add --db URL");
	if (a->fa.url)
		return 0;
	if (optind >= argc)
		return cmd_usage_error("report", "no result file: ipclab report FILE.json [MORE.json ...] -o report.html");
	if (argc - optind > HTML_MAX_FILES)
		return cmd_usage_error("report", "%d result files: at most %d on one page", argc - optind,
				       HTML_MAX_FILES);
	if (a->folded && (stat(a->folded, &st) || !S_ISDIR(st.st_mode)))
		return cmd_usage_error("report", "--folded %s: not a directory; name the one given to run --profile",
				       a->folded);
	return 0;
}

/* A result file: a regular file of a sane size, then the reader's checks. */
static int load_one(const char *path, struct rfile *rf)
{
	char err[ERRLEN];
	struct stat st;

	if (stat(path, &st))
		return cmd_usage_error("report", "%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return cmd_usage_error("report", "%s: not a regular file; give a result file of ipclab run -f json",
				       path);
	if ((uint64_t)st.st_size > RESULT_FILE_MAX)
		return cmd_usage_error("report", "%s: %lld bytes, more than a result file holds (512 MiB)",
				       path, (long long)st.st_size);
	if (rfile_load(rf, path, NULL, err, sizeof(err)))
		return cmd_usage_error("report", "%s", err);
	return 0;
}

/* The profile's stacks are elsewhere: say where, once. */
static void folded_note(const struct rfile *const *files, size_t n, const struct report_args *a)
{
	for (size_t f = 0; !a->folded && !a->quiet && f < n; f++)
		for (size_t i = 0; i < files[f]->n; i++) {
			struct rprof_run pr;

			if (rcell_profile_run(&files[f]->cells[i], &pr) && pr.folded_dir) {
				say("report", "note: %s has folded stacks in %s; add --folded %s for flame graphs",
				    files[f]->path, pr.folded_dir, pr.folded_dir);
				return;
			}
		}
}

static int write_page(const char *path, const struct rfile *const *files, size_t n,
		      const struct html_opts *ho, const char *cmd)
{
	char err[ERRLEN] = "";
	struct output o;
	int ret = output_open(&o, path, cmd);

	if (ret)
		return ret;
	ret = html_report(o.f, files, n, ho, err, sizeof(err));
	return output_commit(&o, ret, err);
}

int cmd_report(int argc, char **argv)
{
	struct report_args a = { 0 };
	struct rfile rf[HTML_MAX_FILES];
	const struct rfile *files[HTML_MAX_FILES];
	size_t n = 0;
	int ret = report_args(argc, argv, &a);

	if (ret)
		return ret < 0 ? 0 : ret;
	if (a.fa.url)
		return report_fleet(&a.fa, a.output, a.title);
	for (int i = optind; i < argc && !ret; i++) {
		ret = load_one(argv[i], &rf[n]);
		if (!ret) {
			files[n] = &rf[n];
			n++;
		}
	}
	if (!ret) {
		struct html_opts ho = { .title = a.title, .folded_dir = a.folded };

		folded_note(files, n, &a);
		ret = write_page(a.output, files, n, &ho, "report");
	}
	for (size_t i = 0; i < n; i++)
		rfile_free(&rf[i]);
	return ret;
}

int report_html_of(const char *path, const char *name, const struct report *rep,
		   const char *folded_dir, const char *cmd)
{
	struct reporter_args ra = { .format = "json" };
	const struct rfile *files[1];
	char *text = NULL, err[ERRLEN] = "";
	size_t len = 0;
	struct rfile rf;
	json_t *root;
	FILE *mem = open_memstream(&text, &len);
	int ret;

	if (!mem)
		return say_error(cmd, "--html: out of memory");
	ret = reporter_find("json")->write(mem, rep, &ra, err, sizeof(err));
	if (fclose(mem) || ret) {
		free(text);
		return say_error(cmd, "--html: %s", err[0] ? err : "out of memory");
	}
	root = json_loadb(text, len, 0, NULL);
	free(text);
	if (!root || rfile_from_tree(&rf, root, name, NULL, err, sizeof(err)))
		return say_error(cmd, "--html: %s", root ? err : "cannot read the run's own report");
	struct html_opts ho = { .folded_dir = folded_dir };

	files[0] = &rf;
	ret = write_page(path, files, 1, &ho, cmd);
	rfile_free(&rf);
	return ret;
}
