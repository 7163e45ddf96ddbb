// SPDX-License-Identifier: MIT
/* ipclab clean: remove what runs that are no longer alive left behind (a run
 * killed by SIGKILL cannot clean up itself), from the run registry
 * (include/ipclab/registry.h). Never a live run's objects, never another
 * user's. */
#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli_opt.h"
#include "cmd.h"
#include "ipclab/registry.h"

struct clean_args {
	bool dry, quiet;
};

const size_t clean_args_size = sizeof(struct clean_args);

static int clean_usage(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	(void)o, (void)arg, (void)args, (void)ctx;
	fputs("usage: ipclab clean [-n|--dry-run] [-q|--quiet]\n"
	      "Remove what ipclab runs that are no longer alive left behind: processes,\n"
	      "POSIX and SysV IPC objects, FIFOs, sockets and private directories, as\n"
	      "recorded in the run registry of this user (IPCLAB_STATE_DIR, else\n"
	      "$TMPDIR/.ipclab-runs-UID). Live runs and other users' objects are never\n"
	      "touched. Every line says what was removed; -n only says what would be.\n", stdout);
	cli_help(stdout, clean_options, 0);
	return -1;
}

const struct cli_opt clean_options[] = {
	{ .name = "dry-run", .short_name = 'n', .has_arg = no_argument, .kind = CLI_FLAG,
	  .offset = offsetof(struct clean_args, dry), .help = "only say what would be removed" },
	{ .name = "quiet", .short_name = 'q', .has_arg = no_argument, .kind = CLI_FLAG,
	  .offset = offsetof(struct clean_args, quiet), .help = "say nothing" },
	{ .name = "help", .short_name = 'h', .has_arg = no_argument, .help = "this text",
	  .kind = CLI_CALL, .call = clean_usage },
	{ 0 },
};

int cmd_clean(int argc, char **argv)
{
	static const struct cli_how how = { .cmd = "clean", .operands = true, .posix = true };
	struct clean_args a = { 0 };
	struct sweep_report rep;
	char err[512] = "";
	int ret = cli_parse_how(clean_options, argc, argv, &a, &how);

	if (ret)
		return ret < 0 ? 0 : ret;
	if (optind < argc)
		return cmd_usage_error("clean", "takes no arguments ('%s'); see ipclab clean --help",
				       argv[optind]);
	if (registry_sweep(a.quiet ? NULL : stdout, a.dry, &rep, err, sizeof(err)))
		return say_error("clean", "%s", err);
	if (!a.quiet)
		printf("ipclab clean: %s %u object%s of %u run%s no longer alive; %u live run%s left "
		       "alone; %u skipped\n", a.dry ? "would remove" : "removed", rep.removed,
		       rep.removed == 1 ? "" : "s", rep.dead_runs, rep.dead_runs == 1 ? "" : "s",
		       rep.live_runs, rep.live_runs == 1 ? "" : "s", rep.skipped);
	return 0;
}
