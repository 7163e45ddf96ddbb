// SPDX-License-Identifier: MIT
/* ipclab clean: remove what runs that are no longer alive left behind (a run
 * killed by SIGKILL cannot clean up itself), from the run registry
 * (include/ipclab/registry.h). Never a live run's objects, never another
 * user's. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "ipclab/registry.h"

static int clean_usage(FILE *f)
{
	fputs("usage: ipclab clean [-n|--dry-run] [-q|--quiet]\n"
	      "Remove what ipclab runs that are no longer alive left behind: processes,\n"
	      "POSIX and SysV IPC objects, FIFOs, sockets and private directories, as\n"
	      "recorded in the run registry of this user (IPCLAB_STATE_DIR, else\n"
	      "$TMPDIR/.ipclab-runs-UID). Live runs and other users' objects are never\n"
	      "touched. Every line says what was removed; -n only says what would be.\n", f);
	return f == stdout ? 0 : 2;
}

int cmd_clean(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sweep_report rep;
	bool dry = false, quiet = false;
	char err[512] = "";
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+nqh", longs, NULL)) != -1) {
		switch (c) {
		case 'n': dry = true; break;
		case 'q': quiet = true; break;
		case 'h': return clean_usage(stdout);
		default:
			return cmd_usage_error("clean", "unknown option '%s'; see ipclab clean --help",
					       argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cmd_usage_error("clean", "takes no arguments ('%s'); see ipclab clean --help",
				       argv[optind]);
	if (registry_sweep(quiet ? NULL : stdout, dry, &rep, err, sizeof(err)))
		return say_error("clean", "%s", err);
	if (!quiet)
		printf("ipclab clean: %s %u object%s of %u run%s no longer alive; %u live run%s left "
		       "alone; %u skipped\n", dry ? "would remove" : "removed", rep.removed,
		       rep.removed == 1 ? "" : "s", rep.dead_runs, rep.dead_runs == 1 ? "" : "s",
		       rep.live_runs, rep.live_runs == 1 ? "" : "s", rep.skipped);
	return 0;
}
