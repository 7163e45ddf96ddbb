/* SPDX-License-Identifier: MIT */
/* The reporter table (src/report/reporters.c): every output format by
 * name, one write function each, over the one field table (fields.c). A
 * new format is a file in src/report/ and one line in the table. */
#ifndef IPCLAB_REPORTER_H
#define IPCLAB_REPORTER_H

#include <stddef.h>
#include <stdio.h>

#include "ipclab/result.h"

struct reporter_args {
	const char *format;		/* the reporter's name; the pivot's own layout */
	const struct field *pivot[3];	/* --pivot ROW,COL,METRIC (pivot only) */
};

struct reporter {
	const char *name;		/* what -f takes ("pivot": --pivot) */
	/* Write rep to f: 0, or -1 (why in err when there is more to say). */
	int (*write)(FILE *f, const struct report *rep, const struct reporter_args *ra, char *err,
		     size_t errlen);
};

extern const struct reporter reporters[];	/* NULL-name terminated */
const struct reporter *reporter_find(const char *name);

/* The formats' own writers (the table's entries call them). */
int report_table(FILE *f, const struct report *rep);
/* Rows sorted within each (pattern, size) by the headline metric. */
int report_table_ranked(FILE *f, const struct report *rep);
int report_markdown(FILE *f, const struct report *rep);
int report_json(FILE *f, const struct report *rep, char *err, size_t errlen);
int report_csv(FILE *f, const struct report *rep);
/* Figures of a result file into dir (src/report/plot.c); 0 or -errno. */
int plot_report_file(const char *json_path, const char *dir, char *err, size_t errlen);

/* --pivot ROW,COL,METRIC (src/report/pivot.c): parse into three fields, and
 * print the metric over rows x columns in format (table, markdown, csv, json). */
int pivot_parse(const char *spec, const struct field **f, char *err, size_t errlen);
int report_pivot(FILE *f, const struct report *rep, const struct field *const *spec,
		 const char *format);

#endif
