/* SPDX-License-Identifier: MIT */
/* run --peer's parts of a result file (src/report/remote_json.c). */
#ifndef IPCLAB_REPORT_REMOTE_JSON_H
#define IPCLAB_REPORT_REMOTE_JSON_H

#include <jansson.h>

#include "ipclab/result.h"

json_t *remote_result_json(const struct remote_result *r);
/* The server's env object from its text (NULL when none). */
json_t *remote_env_json(const char *text);

#endif
