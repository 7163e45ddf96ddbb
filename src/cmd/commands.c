// SPDX-License-Identifier: MIT
/* The command line: argv[1] names the command. One table serves dispatch
 * and `ipclab --help`; run and list are listed first by the help text. */
#include <stdlib.h>
#include <string.h>

#include "cli_opt.h"
#include "cmd.h"
#include "dbcmd.h"
#include "ipclab/cleanup.h"
#include "ipclab/runner.h"

const struct subcommand subcommands[] = {
	{ "plot", cmd_plot, "figures (PNG, SVG, data, gnuplot script) from a result file" },
	{ "report", cmd_report, "one self-contained HTML page from result files: tables, figures, traces" },
	{ "compare", cmd_compare, "two result files side by side: ratios, spread, regressions" },
	{ "env", cmd_env, "the machine as result files record it, and what distorts measurements" },
	{ "clean", cmd_clean, "remove what runs killed by SIGKILL left behind (see the run registry)" },
	{ "serve", cmd_serve, "run the server side of cells for `ipclab run --peer` on other hosts" },
	{ "db", cmd_db, "the results store: import result files, export them back, list runs" },
	{ "history", cmd_history, "a cell's metric across stored runs, with the change points found" },
	{ "suite", cmd_suite, "the seeds' experiments, one section each: ipclab suite seeds [--quick]" },
	{ NULL, NULL, NULL },
};

const struct subcommand *subcommand_find(const char *name)
{
	for (const struct subcommand *s = subcommands; s->name; s++)
		if (strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

int cmd_main(int argc, char **argv)
{
	const struct subcommand *sc = argc > 1 ? subcommand_find(argv[1]) : NULL;
	char err[ERRLEN];

	/* before anything: a store's password out of what others can read */
	db_url_hide_argv(argc, argv);
	if (transports_validate(err, sizeof(err)))
		return say_error(NULL, "internal: %s", err);
	if (cli_check(err, sizeof(err)))
		return say_error(NULL, "internal: option table: %s", err);
	runner_init();
	atexit(cleanup_all);
	/* hidden, for the tests and `make completion` (cli_opt.h) */
	if (argc == 2 && !strcmp(argv[1], "--dump-options"))
		return cli_dump_options(stdout), 0;
	if (argc == 2 && !strcmp(argv[1], "--dump-completion"))
		return cli_dump_completion(stdout), 0;
	if (argc > 1 && strcmp(argv[1], "list") == 0)
		return cmd_list(argc - 1, argv + 1);
	if (sc)
		return sc->main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "run") && argv[1][0] != '-')
		return usage_error("unknown command '%s'; expected run or list (see ipclab --help)", argv[1]);
	return cmd_run(argc, argv);
}
