// SPDX-License-Identifier: MIT
/* Subcommands besides run and list: one table serves dispatch and help. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "report/commands.h"

const struct subcommand subcommands[] = {
	{ "plot", cmd_plot, "figures (PNG, SVG, data, gnuplot script) from a result file" },
	{ "compare", cmd_compare, "two result files side by side: ratios, spread, regressions" },
	{ "env", cmd_env, "the machine as result files record it, and what distorts measurements" },
	{ "clean", cmd_clean, "remove what runs killed by SIGKILL left behind (see the run registry)" },
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
