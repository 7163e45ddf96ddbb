// SPDX-License-Identifier: MIT
/* A section's own table (ipclab/rows.h): the columns a command chose, each
 * cell a field of the one field table read from the result its row names,
 * as the human table writes it (fields.c). */
#include <stdio.h>
#include <string.h>

#include "ipclab/rows.h"
#include "fields.h"

#define ROWS_CELL 64

static const struct field *col_field(const struct rows_col *c)
{
	return c->own ? c->own : c->key ? field_find(c->key) : NULL;
}

void rows_cell(const struct field *fd, const struct result *r, char *buf, size_t len)
{
	if (!r)
		snprintf(buf, len, "-");
	else if (!fd->config && r->status != RES_OK)
		snprintf(buf, len, "%s", result_status_name(r->status));
	else
		field_human(fd, r, buf, len);
}

/* Before column i: its gap, or one space between columns. */
static const char *gap(const struct rows_col *c, unsigned i)
{
	return c->gap ? c->gap : i ? " " : "";
}

void rows_head(FILE *f, const struct rows *t)
{
	fputs(t->indent ? t->indent : "  ", f);
	for (unsigned i = 0; i < t->ncols && i < ROWS_MAX_COLS; i++) {
		const struct field *fd = col_field(&t->cols[i]);
		const char *label = t->cols[i].label ? t->cols[i].label : fd ? fd->label : "";

		fprintf(f, "%s%*s", gap(&t->cols[i], i), t->cols[i].width, label);
	}
	fputc('\n', f);
}

void rows_line(FILE *f, const struct rows *t, const struct rows_row *row)
{
	char buf[ROWS_CELL];

	fputs(t->indent ? t->indent : "  ", f);
	for (unsigned i = 0; i < t->ncols && i < ROWS_MAX_COLS; i++) {
		const struct field *fd = col_field(&t->cols[i]);
		const char *text = row->text[i] ? row->text[i] : "";

		if (row->rest && i >= row->rest_at) {
			fprintf(f, "%s%s", gap(&t->cols[i], i), row->rest);
			break;
		}
		if (fd && (row->r[i] || !row->text[i])) {
			rows_cell(fd, row->r[i], buf, sizeof(buf));
			text = buf;
		}
		fprintf(f, "%s%*s", gap(&t->cols[i], i), t->cols[i].width, text);
	}
	fputc('\n', f);
}

void rows_line_of(FILE *f, const struct rows *t, const struct result *r, const char *const *text)
{
	struct rows_row row = { 0 };

	for (unsigned i = 0; i < t->ncols && i < ROWS_MAX_COLS; i++) {
		row.r[i] = r;
		row.text[i] = text ? text[i] : NULL;
	}
	rows_line(f, t, &row);
}
