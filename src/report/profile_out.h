/* SPDX-License-Identifier: MIT */
/* --profile in the reports (src/report/profile_out.c): the result's
 * `profile` list and `profile_run` object, and the top-15 table per side
 * the text table prints under a profiled row. */
#ifndef IPCLAB_REPORT_PROFILE_OUT_H
#define IPCLAB_REPORT_PROFILE_OUT_H

#include <jansson.h>
#include <stdio.h>

#include "ipclab/profile.h"

json_t *profile_json(const struct profile_result *pr);
json_t *profile_run_json(const struct profile_result *pr);
void profile_table(FILE *f, const struct profile_result *pr);

#endif
