/* SPDX-License-Identifier: MIT */
/* The fuzz harness's way into the run command's parser (fuzz/parse.c):
 * struct run_args, args_defaults and build_plan now live in src/cmd/. */
#ifndef IPCLAB_CLI_INTERNAL_H
#define IPCLAB_CLI_INTERNAL_H

#include "cmd/run.h"

#endif
