/* SPDX-License-Identifier: MIT */
/* --repeat in the human tables (src/report/repeat_out.c). */
#ifndef IPCLAB_REPORT_REPEAT_OUT_H
#define IPCLAB_REPORT_REPEAT_OUT_H

#include <stdbool.h>
#include <stdio.h>

#include "ipclab/result.h"

/* The headline's cell of a repeated result: "13.4us ±1.2%", or both modes
 * "10.6us/21.9us" when bimodal. false (buf untouched) for any other cell. */
bool repeat_headline_cell(const struct field *fd, const struct result *r, char *buf, size_t len);

/* Lines under a table: what ± and a/b mean, cells with too few rounds for
 * an interval, and under --repeat auto the cells that did not converge. */
void repeat_notes(FILE *f, const struct result *res, size_t n);

#endif
