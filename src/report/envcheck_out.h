/* SPDX-License-Identifier: MIT */
/* `ipclab env --check` printed (src/report/envcheck_out.c): one line per
 * check as text, or one JSON object. */
#ifndef IPCLAB_REPORT_ENVCHECK_OUT_H
#define IPCLAB_REPORT_ENVCHECK_OUT_H

#include <stdio.h>

#include <jansson.h>

#include "ipclab/envcheck.h"

/* 0 or -EIO. */
int env_check_text(FILE *f, const struct env_checks *ck);
/* A new object, or NULL when out of memory. */
json_t *env_check_json(const struct env_checks *ck);

#endif
