/* SPDX-License-Identifier: MIT */
/* Interference in the reports (src/report/intf_out.c): the result's
 * `interference` object, its CSV columns, and the table's noise cell. */
#ifndef IPCLAB_REPORT_INTF_OUT_H
#define IPCLAB_REPORT_INTF_OUT_H

#include <jansson.h>
#include <stddef.h>

#include "ipclab/interference.h"

json_t *interference_json(const struct interference *in);

/* CSV: the last INTF_CSV_COLUMNS of csv_extra_keys (fields.c), in that
 * order; column k's value ("" when unknown). */
#define INTF_CSV_COLUMNS 5
void intf_csv_value(const struct interference *in, size_t k, char *buf, size_t len);

#endif
