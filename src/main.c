// SPDX-License-Identifier: MIT
/* ipclab: a laboratory for Linux inter-process communication. */
#include "cli.h"

int main(int argc, char **argv)
{
	return cli_main(argc, argv);
}
