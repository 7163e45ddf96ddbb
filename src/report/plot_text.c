// SPDX-License-Identifier: MIT
/* Text from a result file on its way into a gnuplot script. A result file
 * is someone else's input (results are passed around), and gnuplot runs
 * commands: a newline ends a command and starts the next, backquotes run a
 * shell even inside double quotes, and a comment ending in a backslash
 * swallows the next line. So every text that is not ipclab's own goes in
 * single quotes, where only '' is special, with its control characters
 * replaced; comments and data files get the same treatment (a data file's
 * double quote would join its columns); file names are made of letters,
 * digits, '_' and '-' only. gnuplot's SVG figures carry the texts of
 * scripts and data files as they are, '<' and '&' escaped only: so a text
 * is also made XML text -- an invalid UTF-8 byte, U+FFFE and U+FFFF shown
 * as '?', the '>' of "]]>" as a blank -- and every SVG figure is
 * well-formed. */
#include <string.h>

#include "ipclab/safe_print.h"
#include "plot.h"

static bool is_ctrl(char c)
{
	return (unsigned char)c < 0x20 || c == 0x7f;
}

/* s as XML text into f: quote doubled (a gnuplot string's ''), or swapped
 * for a single one (a data file's column), control bytes as blanks. */
static void xml_text(FILE *f, const char *s, char quote)
{
	size_t n = strlen(s);

	for (size_t i = 0; i < n;) {
		size_t l = utf8_seq_len(s + i, n - i);
		const unsigned char *u = (const unsigned char *)s + i;

		if (!l || (l == 3 && u[0] == 0xef && u[1] == 0xbf && u[2] >= 0xbe)) {
			fputc('?', f);
			i += l ? l : 1;
			continue;
		}
		if (l > 1) {
			fwrite(u, 1, l, f);
			i += l;
			continue;
		}
		if (is_ctrl(s[i]) || (s[i] == '>' && i >= 2 && s[i - 1] == ']' && s[i - 2] == ']'))
			fputc(' ', f);
		else if (s[i] == '\'' && quote == '\'')
			fputs("''", f);
		else if (s[i] == '"' && quote == '"')
			fputc('\'', f);
		else
			fputc(s[i], f);
		i++;
	}
}

void gp_quote(FILE *gp, const char *s)
{
	fputc('\'', gp);
	xml_text(gp, s, '\'');
	fputc('\'', gp);
}

void gp_comment(FILE *gp, const char *s)
{
	for (; *s; s++)
		fputc(is_ctrl(*s) || *s == '\\' ? '?' : *s, gp);
}

void dat_text(FILE *dat, const char *s)
{
	xml_text(dat, s, '"');
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
