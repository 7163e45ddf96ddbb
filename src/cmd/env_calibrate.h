/* SPDX-License-Identifier: MIT */
/* env --calibrate (env_calibrate.c). */
#ifndef IPCLAB_CMD_ENV_CALIBRATE_H
#define IPCLAB_CMD_ENV_CALIBRATE_H

#include <stdbool.h>

#define CAL_RUNS_DEFAULT 6

/* runs separate runs of each reference cell, the drift stored at url (NULL:
 * $IPCLAB_DB or the default file) labelled kind=calibration; the exit status. */
int env_calibrate(const char *url, bool shared, unsigned runs);

#endif
