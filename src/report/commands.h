/* SPDX-License-Identifier: MIT */
/* Subcommands of the reporting side, registered in src/commands.c. argv[0]
 * is the subcommand's name; each returns the exit status (0 ok, 2 bad input;
 * compare also 3: a regression past --fail-above). */
#ifndef IPCLAB_REPORT_COMMANDS_H
#define IPCLAB_REPORT_COMMANDS_H

int cmd_plot(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_env(int argc, char **argv);

#endif
