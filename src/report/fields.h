/* SPDX-License-Identifier: MIT */
/* Private to the reporters: how a field of the one field table becomes text,
 * and the few things every output format names the same way. */
#ifndef IPCLAB_REPORT_FIELDS_H
#define IPCLAB_REPORT_FIELDS_H

#include <stdbool.h>
#include <stddef.h>

#include "ipclab/result.h"

/* A field has no value for this result: a metric of a result that is not
 * "ok", or a getter's NAN ("not applicable", e.g. latency without samples). */
bool field_missing(const struct field *fd, const struct result *r);

/* Machine text (CSV): exact integers, doubles that read back to the same
 * value, true/false; "" when missing. */
void field_text(const struct field *fd, const struct result *r, char *buf, size_t len);

/* Human text (table, markdown): scaled units; "-" when missing. */
void field_human(const struct field *fd, const struct result *r, char *buf, size_t len);

/* A number in fd's unit as the tables show it (the headline's modes). */
void field_human_value(const struct field *fd, double v, char *buf, size_t len);
/* A number in the field's unit as the human table shows it (4KiB, 1.25us). */
void field_human_num(const struct field *fd, double v, char *buf, size_t len);

/* Shortest "%.Ng" that reads back as v. */
void fmt_double_exact(char *buf, size_t len, double v);

const char *result_status_name(enum result_status s);
const char *tp_role_name(enum tp_role role);

/* CSV columns after the field table's: lists the table cannot hold. */
extern const char *const csv_extra_keys[];
extern const size_t n_csv_extra_keys;

/* JSON keys of a side record (sides[]), in order. */
extern const char *const side_keys[];
extern const size_t n_side_keys;

#endif
