/* SPDX-License-Identifier: MIT */
/* The reporter table (src/report/reporters.c): every output format by
 * name, one write function each, over the one field table (fields.c). A
 * new format is a file in src/report/ and one line in the table. */
#ifndef IPCLAB_REPORTER_H
#define IPCLAB_REPORTER_H

#include <stdio.h>

#include "ipclab/report.h"

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

#endif
