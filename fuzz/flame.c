// SPDX-License-Identifier: MIT
/*
 * flame.c - libFuzzer harness: the HTML report's flame graph of a hostile
 * folded stacks file (src/report/html_flame.c, through html_flame_text:
 * the input is the file's content). Besides never crashing or leaking,
 * what it writes must be well-formed markup that nothing in the file
 * chose: valid UTF-8 with no control byte but newline and tab; every '<'
 * one of the tags the graph writes (figure, figcaption, svg, title, g,
 * rect, text, p class="note"), with only ipclab's own attributes, every
 * element closed in order; every '&' one of the five entities html_esc
 * writes; every frame inside the graph (0 <= x, x + width <= FL_W, width
 * at least FL_MIN_W, within the viewBox's height, no more than
 * FL_MAX_DEPTH + 1 rows); at most FL_MAX_DRAWN frames; and an output
 * bounded whatever the input's size. Aborts otherwise, naming the check.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/html_flame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* a frame: <g ...><title>, its text, two numbers, rect, text: well below this */
#define FRAME_MAX (FL_TITLE_NAME * 6 + 80 + (FL_W / 7) * 6 + 400)

static void bad(const char *why, const char *out, size_t at, size_t len)
{
	size_t from = at > 60 ? at - 60 : 0;

	fprintf(stderr, "flame: %s at byte %zu: %.*s\n", why, at,
		(int)(len - from > 160 ? 160 : len - from), out + from);
	abort();
}

/* The bytes after a UTF-8 sequence's first byte c; -1 if c starts none. */
static int continuation(unsigned c)
{
	if (c < 0x80)
		return 0;
	if (c >= 0xc2 && c <= 0xdf)
		return 1;
	if (c >= 0xe0 && c <= 0xef)
		return 2;
	return c >= 0xf0 && c <= 0xf4 ? 3 : -1;
}

/* Valid UTF-8 (no overlong form, surrogate or value past U+10FFFF), no
 * control byte but \n and \t. */
static void check_bytes(const char *out, size_t len)
{
	const unsigned char *p = (const unsigned char *)out;

	for (size_t i = 0; i < len;) {
		int n = continuation(p[i]);
		unsigned cp = n ? p[i] & (0x3fu >> n) : p[i];

		if (n < 0 || i + (size_t)n >= len + !n)
			bad("a byte that starts no UTF-8 sequence", out, i, len);
		if (!n && ((cp < 0x20 && cp != '\n' && cp != '\t') || cp == 0x7f))
			bad("a control byte", out, i, len);
		for (int k = 1; k <= n; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				bad("a cut UTF-8 sequence", out, i, len);
			cp = cp << 6 | (p[i + k] & 0x3f);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			bad("an overlong form or a surrogate", out, i, len);
		i += (size_t)n + 1;
	}
}

/* The tags the graph writes: their start, up to where an attribute list
 * of ipclab's own begins (checked by check_attrs). */
static const char *const tags[] = {
	"<figure class=\"flame\" id=\"flame-", "<figcaption class=\"ft\">",
	"<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 ", "<title>", "<g class=\"fr h",
	"<rect x=\"", "<text x=\"", "<p class=\"note\">", "</figure>", "</figcaption>", "</svg>",
	"</title>", "</g>", "</rect>", "</text>", "</p>",
};

/* After a tag's fixed start: digits and . - % / " = and space, and the
 * attribute names ipclab writes, to the '>'; returns what follows it. */
static size_t check_attrs(const char *out, size_t at, size_t len)
{
	static const char *const words[] = { "width", "height", "class", "flame", "data-w", "y", "d",
					      "x" };
	size_t i = at;

	while (i < len && out[i] != '>') {
		size_t w = 0;

		if (strchr("0123456789. \"=/-%", out[i])) {
			i++;
			continue;
		}
		for (size_t k = 0; k < sizeof(words) / sizeof(words[0]) && !w; k++)
			if (!strncmp(out + i, words[k], strlen(words[k])))
				w = strlen(words[k]);
		if (!w)
			bad("an attribute ipclab does not write", out, i, len);
		i += w;
	}
	if (i >= len)
		bad("a tag that does not end", out, at, len);
	return i + 1;
}

static const char *const entities[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&#39;" };

struct walk {
	const char *open[8];	/* the elements open, innermost last */
	unsigned nopen, frames;
	double height;		/* the viewBox's */
};

static void check_frame(const char *out, size_t at, size_t len, const struct walk *w)
{
	double x, y, wd;
	int h;

	if (sscanf(out + at, "<rect x=\"%lf\" y=\"%lf\" width=\"%lf\" height=\"%d\"/>", &x, &y, &wd,
		   &h) != 4)
		bad("a frame's rect unread", out, at, len);
	/* printed with one decimal: each may be 0.05 off */
	if (x < 0 || x + wd > FL_W + 0.1 || wd < FL_MIN_W - 0.05 || y < 0 ||
	    y + FL_ROW > w->height + 0.5 || h != FL_ROW - 1)
		bad("a frame outside the graph", out, at, len);
}

/* An element opened (a name) or closed ("/name"), in order. */
static void nest(struct walk *w, const char *tag, const char *out, size_t at, size_t len)
{
	char name[16];

	sscanf(tag + 1, "%15[a-z/]", name);
	if (name[0] == '/') {
		if (!w->nopen || strcmp(w->open[w->nopen - 1], name + 1))
			bad("an element closed out of order", out, at, len);
		free((char *)w->open[--w->nopen]);
	} else if (strcmp(name, "rect")) {
		if (w->nopen == 8)
			bad("elements nested too deep", out, at, len);
		w->open[w->nopen++] = strdup(name);
	}
}

static void check_markup(const char *out, size_t len)
{
	struct walk w = { .height = 0 };

	for (size_t i = 0; i < len;) {
		size_t k = 0;

		if (out[i] == '&') {
			for (; k < 5 && strncmp(out + i, entities[k], strlen(entities[k])); k++)
				;
			if (k == 5)
				bad("an & that is no entity html_esc writes", out, i, len);
			i += strlen(entities[k]);
			continue;
		}
		if (out[i] == '>' || out[i] == '"')
			bad("a bare > or \" in text", out, i, len);
		if (out[i] != '<') {
			i++;
			continue;
		}
		for (; k < sizeof(tags) / sizeof(tags[0]) && strncmp(out + i, tags[k], strlen(tags[k])); k++)
			;
		if (k == sizeof(tags) / sizeof(tags[0]))
			bad("a tag the graph does not write", out, i, len);
		nest(&w, tags[k], out, i, len);
		if (k == 2 && (sscanf(out + i + strlen(tags[k]), "%*d %lf", &w.height) != 1 ||
			       w.height > (FL_MAX_DEPTH + 1) * FL_ROW))
			bad("a graph higher than its rows", out, i, len);
		if (k == 5) {
			check_frame(out, i, len, &w);
			if (++w.frames > FL_MAX_DRAWN)
				bad("more frames than FL_MAX_DRAWN", out, i, len);
		}
		i += strlen(tags[k]);
		if (out[i - 1] != '>')
			i = check_attrs(out, i, len);
	}
	if (w.nopen)
		bad("an element left open", out, len, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct html_opts o = { 0 };
	char *text = malloc(size + 1), *out = NULL;
	size_t len = 0;
	struct html h = { .o = &o };
	int ret;

	if (!text || !(h.f = open_memstream(&out, &len)))
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	ret = html_flame_text(&h, "in<put>.folded", text, size);
	fclose(h.f);
	if (ret && ret != -ENOMEM)
		abort();
	if (len > 4096 + (size_t)(FL_MAX_DRAWN + 1) * FRAME_MAX)
		bad("an output past the bound", out, 0, len);
	check_bytes(out, len);
	check_markup(out, len);
	free(out);
	free(text);
	return 0;
}
