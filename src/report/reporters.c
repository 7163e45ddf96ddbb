// SPDX-License-Identifier: MIT
/* The reporter table: one line per output format. */
#include <string.h>

#include "ipclab/reporter.h"

static int w_table(FILE *f, const struct report *rep, const struct reporter_args *ra, char *err,
		   size_t errlen)
{
	(void)ra, (void)err, (void)errlen;
	return report_table(f, rep);
}

static int w_ranked(FILE *f, const struct report *rep, const struct reporter_args *ra, char *err,
		    size_t errlen)
{
	(void)ra, (void)err, (void)errlen;
	return report_table_ranked(f, rep);
}

static int w_json(FILE *f, const struct report *rep, const struct reporter_args *ra, char *err,
		  size_t errlen)
{
	(void)ra;
	return report_json(f, rep, err, errlen);
}

static int w_csv(FILE *f, const struct report *rep, const struct reporter_args *ra, char *err,
		 size_t errlen)
{
	(void)ra, (void)err, (void)errlen;
	return report_csv(f, rep);
}

static int w_markdown(FILE *f, const struct report *rep, const struct reporter_args *ra,
		      char *err, size_t errlen)
{
	(void)ra, (void)err, (void)errlen;
	return report_markdown(f, rep);
}

static int w_pivot(FILE *f, const struct report *rep, const struct reporter_args *ra, char *err,
		   size_t errlen)
{
	(void)err, (void)errlen;
	return report_pivot(f, rep, ra->pivot, ra->format);
}

const struct reporter reporters[] = {
	{ "table", w_table },
	{ "ranked", w_ranked },
	{ "json", w_json },
	{ "csv", w_csv },
	{ "markdown", w_markdown },
	{ "pivot", w_pivot },
	{ NULL, NULL },
};

const struct reporter *reporter_find(const char *name)
{
	for (const struct reporter *r = reporters; name && r->name; r++)
		if (strcmp(r->name, name) == 0)
			return r;
	return NULL;
}
