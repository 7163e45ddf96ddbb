/* SPDX-License-Identifier: MIT */
/* A section's own table (src/report/rows.c): the columns a command lays
 * out itself (ipclab suite's seeds, fidelity), each cell a field of the
 * one field table (or a field of the caller's, formatted the same way)
 * read from the result that row and column name. The human table's cell
 * text: a field's scaled unit, "-" for a cell not there or a value that
 * does not apply, "skipped" or "failed" for a metric of a cell that did
 * not run. */
#ifndef IPCLAB_ROWS_H
#define IPCLAB_ROWS_H

#include <stdio.h>

#include "ipclab/result.h"

#define ROWS_MAX_COLS 12

struct rows_col {
	const char *label;	/* NULL: the field's own label */
	const char *key;	/* a field of the one field table (field_find), */
	const struct field *own;	/* or the caller's; neither: the row's text */
	int width;		/* as printf's: > 0 right-aligned, < 0 left */
	const char *gap;	/* before the column (NULL: one space) */
};

struct rows {
	const char *indent;	/* before each line (NULL: two spaces) */
	const struct rows_col *cols;
	unsigned ncols;
};

/* One line: each column's result (NULL: "-"), or its text where the
 * column has no field or the cell is not there (text set, result NULL). From column rest_at on, rest instead when set (a
 * cell that did not run: "skipped: why"). */
struct rows_row {
	const struct result *r[ROWS_MAX_COLS];
	const char *text[ROWS_MAX_COLS];
	const char *rest;
	unsigned rest_at;
};

/* The header line, and one row. */
void rows_head(FILE *f, const struct rows *t);
void rows_line(FILE *f, const struct rows *t, const struct rows_row *row);
/* A row whose every column reads r (text[] for the columns without a field). */
void rows_line_of(FILE *f, const struct rows *t, const struct result *r, const char *const *text);

/* One cell's text as rows_line writes it. */
void rows_cell(const struct field *fd, const struct result *r, char *buf, size_t len);

#endif
