/* SPDX-License-Identifier: MIT */
/* The command line (cli.c) and the list subcommand (list.c). */
#ifndef IPCLAB_CLI_H
#define IPCLAB_CLI_H

int cli_main(int argc, char **argv);
int cli_list(void);

/* Subcommands besides run and list (src/commands.c): argv[0] is the
 * subcommand's name. Each returns the exit status (2 for bad input). */
struct subcommand {
	const char *name;
	int (*main)(int argc, char **argv);
	const char *summary;
};
extern const struct subcommand subcommands[];
const struct subcommand *subcommand_find(const char *name);

int cmd_suite(int argc, char **argv);
int cmd_clean(int argc, char **argv);

#endif
