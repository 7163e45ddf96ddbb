/* SPDX-License-Identifier: MIT */
/* The command line (cli.c) and the list subcommand (list.c). */
#ifndef IPCLAB_CLI_H
#define IPCLAB_CLI_H

int cli_main(int argc, char **argv);
int cli_list(void);

#endif
