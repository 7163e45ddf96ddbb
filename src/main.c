// SPDX-License-Identifier: MIT
/* ipclab: a laboratory for Linux inter-process communication. */
#include "cmd/cmd.h"

int main(int argc, char **argv)
{
	return cmd_main(argc, argv);
}
