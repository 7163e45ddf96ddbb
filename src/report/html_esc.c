// SPDX-License-Identifier: MIT
/* Escaping for the HTML report: the one helper every string from a result
 * file goes through, in text and in (double-quoted) attributes alike, and
 * the JSON data block whose content cannot end its <script> element. A
 * result file is hostile input: a transport named <script>alert(1)</script>
 * is shown as those characters, never run. `ipclab history` writes its
 * figure and page through it too, so the SVG of either is well-formed XML. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/safe_print.h"
#include "ipclab/util.h"
#include "html.h"

#define REPLACEMENT "\xef\xbf\xbd"	/* U+FFFD */

void html_escn(FILE *f, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < n && p[i];) {
		size_t l = utf8_seq_len(s + i, n - i);

		if (!l) {
			fputs(REPLACEMENT, f);
			i++;
			continue;
		}
		if (l == 3 && p[i] == 0xef && p[i + 1] == 0xbf && p[i + 2] >= 0xbe) {
			fputs(REPLACEMENT, f);	/* U+FFFE, U+FFFF: no XML character */
			i += l;
			continue;
		}
		if (l > 1) {
			fwrite(p + i, 1, l, f);
			i += l;
			continue;
		}
		switch (p[i]) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		case '\n': case '\t': fputc(p[i], f); break;
		default:
			if (p[i] < 0x20 || p[i] == 0x7f)
				fputs(REPLACEMENT, f);
			else
				fputc(p[i], f);
		}
		i++;
	}
}

void html_esc(FILE *f, const char *s)
{
	if (s)
		html_escn(f, s, strlen(s));
}

void html_elem(FILE *f, const char *tag, const char *cls, const char *text)
{
	if (cls)
		fprintf(f, "<%s class=\"%s\">", tag, cls);
	else
		fprintf(f, "<%s>", tag);
	html_esc(f, text);
	fprintf(f, "</%s>", tag);
}

void html_escf(FILE *f, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	html_esc(f, buf);
}

int html_json_script(FILE *f, const char *id, const json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(5));

	if (!s)
		return -ENOMEM;
	fprintf(f, "<script type=\"application/json\" id=\"%s\">", id);
	/* outside strings JSON has none of these: the escapes are always valid */
	for (const char *p = s; *p; p++) {
		if (*p == '<')
			fputs("\\u003c", f);
		else if (*p == '>')
			fputs("\\u003e", f);
		else if (*p == '&')
			fputs("\\u0026", f);
		else
			fputc(*p, f);
	}
	fputs("</script>\n", f);
	free(s);
	return 0;
}

void html_json_text(const json_t *v, char *buf, size_t len)
{
	char *s;

	if (!v) {
		snprintf(buf, len, "-");
		return;
	}
	if (!json_is_object(v) && !json_is_array(v)) {
		rf_scalar_text(v, buf, len);
		return;
	}
	s = json_dumps(v, JSON_COMPACT);
	snprintf(buf, len, "%s", s ? s : "?");
	if (s && strlen(s) >= len && len > 4)
		memcpy(buf + len - 4, "...", 4);
	free(s);
}
