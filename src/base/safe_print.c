// SPDX-License-Identifier: MIT
/* The safe printer (include/ipclab/safe_print.h): text from a file, a
 * store, a peer or another process, shown on a terminal as the characters
 * it holds -- never as the cursor moves, colours, window titles or
 * reorderings its control bytes would ask for. One walk over the string
 * serves the buffer and the stream forms, so they cannot disagree. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ipclab/safe_print.h"

size_t utf8_seq_len(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len;
	uint32_t cp;

	if (!n)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

size_t utf8_cut(const char *s, size_t max)
{
	/* a sequence begun before max may end up to 3 bytes past it */
	size_t n = strnlen(s, max < SIZE_MAX - 3 ? max + 3 : SIZE_MAX), i = 0;

	while (i < n && i < max) {
		size_t l = utf8_seq_len(s + i, n - i);

		if (!l)
			l = 1;	/* a stray byte is a character of its own */
		if (i + l > max)
			break;
		i += l;
	}
	return i;
}

static uint32_t decode(const unsigned char *s, size_t l)
{
	static const unsigned char mask[5] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
	uint32_t cp = s[0] & mask[l];

	for (size_t i = 1; i < l; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	return cp;
}

/* C1 controls, the line and paragraph separators, and the marks,
 * embeddings, overrides and isolates that reorder what a line shows. */
static bool hidden_control(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || cp == 0x200e || cp == 0x200f ||
	       (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/* The next piece of s (n bytes): *used bytes of it, shown as the returned
 * text of *outlen bytes -- s itself, or esc filled with an escape. */
static const char *piece(const char *s, size_t n, size_t *used, size_t *outlen, char esc[8])
{
	const unsigned char *u = (const unsigned char *)s;
	size_t l = utf8_seq_len(s, n);

	*used = l ? l : 1;
	if (l == 1 && u[0] >= 0x20 && u[0] != 0x7f) {
		*outlen = 1;
		return s;
	}
	if (l > 1 && !hidden_control(decode(u, l))) {
		*outlen = l;
		return s;
	}
	if (l > 1)
		*outlen = (size_t)snprintf(esc, 8, "\\u%04x", (unsigned)decode(u, l));
	else
		*outlen = (size_t)snprintf(esc, 8, "\\x%02x", u[0]);
	return esc;
}

const char *safe_str(char *buf, size_t len, const char *s)
{
	size_t n = s ? strlen(s) : 0, o = 0;

	if (!len)
		return buf;
	for (size_t i = 0, used, l; i < n; i += used) {
		char esc[8];
		const char *p = piece(s + i, n - i, &used, &l, esc);

		if (o + l >= len)
			break;
		memcpy(buf + o, p, l);
		o += l;
	}
	buf[o] = '\0';
	return buf;
}

void safe_fputsn(FILE *f, const char *s, size_t n)
{
	n = s ? strnlen(s, n) : 0;
	for (size_t i = 0, used, l; i < n; i += used) {
		char esc[8];
		const char *p = piece(s + i, n - i, &used, &l, esc);

		fwrite(p, 1, l, f);
	}
}

void safe_fputs(FILE *f, const char *s)
{
	safe_fputsn(f, s, SIZE_MAX);
}
