/* SPDX-License-Identifier: MIT */
/* Shared by the reporter tests: a report with one result that ran and one
 * that was skipped, and helpers to capture what a reporter writes. */
#ifndef IPCLAB_TEST_REPORT_FIXTURE_H
#define IPCLAB_TEST_REPORT_FIXTURE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ipclab/result.h"

extern const char skip_reason[];
extern const uint64_t lat_values[];
extern const size_t n_lat_values;

void fill_ok(struct result *r);
void fill_skipped(struct result *r);
void fill_env(struct env_info *e);
/* cmocka group fixtures: *state becomes a struct report of two results. */
int setup(void **state);
int teardown(void **state);
/* Run a reporter into a tmpfile and return what it wrote (free it). */
char *capture(int (*fn)(FILE *, const struct report *), const struct report *rep);
/* The n-th line (0-based) of text, copied into buf; NULL past the end. */
const char *line_of(const char *text, size_t n, char *buf, size_t len);

/* The table, markdown and environment tests (test_report_tables.c). */
int run_table_tests(void);

#endif
