/* SPDX-License-Identifier: MIT */
/* The "env" object of a result file, also what `ipclab env -f json` prints:
 * one builder, so both carry the same keys (src/report/envcmd.c). */
#ifndef IPCLAB_REPORT_ENV_JSON_H
#define IPCLAB_REPORT_ENV_JSON_H

#include <stdio.h>

#include <jansson.h>

#include "ipclab/report.h"

/* A new object, or NULL when out of memory. */
json_t *env_json_object(const struct env_info *e);
/* The same keys as text, one a line, with the warnings: 0 or -1. */
int env_text(FILE *f, const struct env_info *e);

#endif
