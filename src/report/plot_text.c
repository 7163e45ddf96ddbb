// SPDX-License-Identifier: MIT
/* Text from a result file on its way into a gnuplot script. A result file
 * is someone else's input (results are passed around), and gnuplot runs
 * commands: a newline ends a command and starts the next, backquotes run a
 * shell even inside double quotes, and a comment ending in a backslash
 * swallows the next line. So every text that is not ipclab's own goes in
 * single quotes, where only '' is special, with its control characters
 * replaced; comments and data files get the same treatment (a data file's
 * double quote would join its columns); file names are made of letters,
 * digits, '_' and '-' only. */
#include <string.h>

#include "plot.h"

static bool is_ctrl(char c)
{
	return (unsigned char)c < 0x20 || c == 0x7f;
}

void gp_quote(FILE *gp, const char *s)
{
	fputc('\'', gp);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', gp);
		fputc(is_ctrl(*s) ? ' ' : *s, gp);
	}
	fputc('\'', gp);
}

void gp_comment(FILE *gp, const char *s)
{
	for (; *s; s++)
		fputc(is_ctrl(*s) || *s == '\\' ? '?' : *s, gp);
}

void dat_text(FILE *dat, const char *s)
{
	for (; *s; s++)
		fputc(is_ctrl(*s) ? ' ' : *s == '"' ? '\'' : *s, dat);
}

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

void fig_name(char *dst, size_t len, const char *src)
{
	size_t n = 0;

	for (; *src && n + 1 < len; src++)
		dst[n++] = name_char(*src) ? *src : '_';
	dst[n] = '\0';
}

bool fig_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (!n || n > FIG_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!name_char(name[i]))
			return false;
	return true;
}

bool plot_ident_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 63 || (s[0] >= '0' && s[0] <= '9') || s[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!name_char(s[i]))
			return false;
	return true;
}
