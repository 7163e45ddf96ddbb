// SPDX-License-Identifier: MIT
/* The one format vocabulary: every name any command's -f takes, which
 * commands take it, and the one check and error message of them all. */
#include <stdio.h>
#include <string.h>

#include "cli_opt.h"
#include "cmd.h"

#define FMT_ALL (FMT_RUN | FMT_SUITE | FMT_COMPARE | FMT_ENV | FMT_HISTORY | FMT_DB | FMT_LIST)

const struct format_name format_names[] = {
	{ "table", "text", FMT_ALL, "aligned columns for a terminal" },
	{ "ranked", NULL, FMT_RUN, "best first per pattern and size" },
	{ "json", NULL, FMT_ALL, "the result record (docs/output.md)" },
	{ "csv", NULL, FMT_RUN | FMT_SUITE | FMT_HISTORY, "one row per cell" },
	{ "markdown", NULL, FMT_RUN | FMT_COMPARE, "a table for a document" },
	{ "svg", NULL, FMT_HISTORY, "a figure" },
	{ "html", NULL, FMT_HISTORY, "one self-contained page" },
	{ NULL, NULL, 0, NULL },
};

void format_list(unsigned cmds, const char *sep, const char *last, char *buf, size_t len)
{
	size_t n = 0, k = 0, off = 0;

	for (const struct format_name *f = format_names; f->name; f++)
		n += (f->cmds & cmds) != 0;
	buf[0] = '\0';
	for (const struct format_name *f = format_names; f->name && off < len; f++) {
		if (!(f->cmds & cmds))
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s%s", k == 0 ? "" :
					k + 1 == n ? last : sep, f->name);
		k++;
	}
}

const char *format_pick(unsigned cmds, const char *arg, const char *cmd)
{
	char names[160];

	for (const struct format_name *f = format_names; f->name; f++)
		if ((f->cmds & cmds) && (!strcmp(arg, f->name) || (f->alias && !strcmp(arg, f->alias))))
			return f->name;
	format_list(cmds, ", ", " or ", names, sizeof(names));
	if (cmd)
		cmd_usage_error(cmd, "-f %s: expected %s", arg, names);
	else
		usage_error("-f %s: expected %s", arg, names);
	return NULL;
}
