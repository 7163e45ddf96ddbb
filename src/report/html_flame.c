// SPDX-License-Identifier: MIT
/* Flame graphs of the HTML report, from the folded stacks --profile DIR
 * wrote (one line per distinct stack, root first, and its sample count):
 * a tree of frames, each drawn as wide as its share of the side's samples,
 * root at the bottom. A click on a frame zooms to it (the page's script);
 * without script each frame still has its <title>. The stacks are read
 * only from the directory the user named (report --folded DIR, run
 * --profile DIR), under the file name the result records, checked to be a
 * plain name; a file's content is bounded and escaped as any other. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipclab/util.h"
#include "html.h"

#define FL_MAX_BYTES (64u << 20)
#define FL_MAX_NODES 200000
#define FL_MAX_DEPTH 96
#define FL_W 1200
#define FL_ROW 16
#define FL_MIN_W 1.2		/* narrower frames (0.1 %) are left out (their parent shows them) */
#define FL_HUES 12		/* colour classes h0 .. h11 (report.css) */
#define NO_NODE ((size_t)-1)

struct node {
	char *name;
	uint64_t count;
	unsigned depth;
	size_t child, next;	/* 0 = none (node 0 is the root) */
};

struct tree {
	struct node *v;
	size_t n, cap;
	unsigned depth;
};

/* A file name from a result file: plain characters, ending .folded. */
static bool plain_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 250 || s[0] == '.' || n < 7 || strcmp(s + n - 7, ".folded"))
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

/* The whole file, NUL-terminated; never through a link, only a regular file. */
static char *read_folded(const char *dir, const char *name, size_t *len)
{
	char path[4096];
	struct stat st;
	char *buf = NULL;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return NULL;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size <= FL_MAX_BYTES && (buf = malloc((size_t)st.st_size + 1))) {
		ssize_t got = full_read(fd, buf, (size_t)st.st_size);

		if (got <= 0) {
			free(buf);
			buf = NULL;
		} else {
			buf[got] = '\0';
			*len = (size_t)got;
		}
	}
	close(fd);
	return buf;
}

static size_t node_new(struct tree *t, const char *name, size_t nlen, unsigned depth)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct node *v = cap <= FL_MAX_NODES ? realloc(t->v, cap * sizeof(*v)) : NULL;

		if (!v)
			return NO_NODE;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n] = (struct node){ .name = strndup(name, nlen), .depth = depth };
	if (!t->v[t->n].name)
		return NO_NODE;
	if (depth > t->depth)
		t->depth = depth;
	return t->n++;
}

static size_t child_of(struct tree *t, size_t parent, const char *name, size_t nlen)
{
	size_t *link = &t->v[parent].child, c;

	for (c = *link; c; c = t->v[c].next) {
		if (strlen(t->v[c].name) == nlen && !memcmp(t->v[c].name, name, nlen))
			return c;
		link = &t->v[c].next;
	}
	c = node_new(t, name, nlen, t->v[parent].depth + 1);
	if (c != NO_NODE)
		*link = c;
	return c;
}

/* "a;b;c 12": the frames and the count; a malformed line is skipped. */
static void add_line(struct tree *t, char *line)
{
	char *sp = strrchr(line, ' '), *end;
	unsigned long long n;
	size_t at = 0;

	if (!sp)
		return;
	n = strtoull(sp + 1, &end, 10);
	if (end == sp + 1 || *end || !n || n > (1ull << 40))
		return;
	*sp = '\0';
	t->v[0].count += n;
	for (char *f = line; *f;) {
		char *semi = strchr(f, ';');
		size_t l = semi ? (size_t)(semi - f) : strlen(f);

		if (t->v[at].depth >= FL_MAX_DEPTH)
			break;
		at = child_of(t, at, f, l);
		if (at == NO_NODE)
			return;
		t->v[at].count += n;
		f += l + (semi != NULL);
	}
}

static int build(struct tree *t, char *text)
{
	if (node_new(t, "all", 3, 0) == NO_NODE)
		return -ENOMEM;
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		add_line(t, l);
	return t->v[0].count ? 0 : -ENOENT;
}

static void tree_free(struct tree *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].name);
	free(t->v);
}

/* ---- drawing ------------------------------------------------------------------- */

static unsigned hash(const char *s)
{
	unsigned h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static void frame(struct html *h, const struct tree *t, size_t i, double x, double w)
{
	const struct node *nd = &t->v[i];
	double y = (double)(t->depth - nd->depth) * FL_ROW;
	unsigned hv = hash(nd->name);
	size_t chars = (size_t)(w / 7);

	/* the script reads x, width and depth back from the rect and the class */
	fprintf(h->f, "<g class=\"fr h%u d%u\"><title>", hv % FL_HUES, nd->depth);
	html_escf(h->f, "%s: %llu samples, %.2f %%", nd->name, (unsigned long long)nd->count,
		  100.0 * (double)nd->count / (double)t->v[0].count);
	fprintf(h->f, "</title><rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%d\"/>", x, y, w,
		FL_ROW - 1);
	if (chars >= 3) {
		fprintf(h->f, "<text x=\"%.1f\" y=\"%.0f\">", x + 3, y + FL_ROW - 4);
		if (strlen(nd->name) > chars) {
			html_escn(h->f, nd->name, chars - 2);
			fputs("..", h->f);
		} else {
			html_esc(h->f, nd->name);
		}
		fputs("</text>", h->f);
	}
	fputs("</g>\n", h->f);
}

static void draw(struct html *h, const struct tree *t, size_t i, double x, double w)
{
	frame(h, t, i, x, w);
	for (size_t c = t->v[i].child; c; c = t->v[c].next) {
		double cw = w * (double)t->v[c].count / (double)t->v[i].count;

		if (cw >= FL_MIN_W)
			draw(h, t, c, x, cw);
		x += cw;
	}
}

static const char *side_file(const struct rcell *c, unsigned side)
{
	const json_t *s = json_array_get(json_object_get(c->obj, "profile"), side);

	return json_string_value(json_object_get(s, "folded_file"));
}

int html_flame(struct html *h, const struct html_view *v, const struct rcell *c, unsigned side)
{
	const char *name = side_file(c, side);
	struct tree t = { 0 };
	size_t len = 0;
	char *text, id[32];
	int ret;

	(void)v;
	if (!name || !h->o->folded_dir) {
		if (name)
			fputs("<p class=\"note\">flame graph: give the stacks' directory, ipclab report --folded DIR</p>\n", h->f);
		return 0;
	}
	if (!plain_name(name) || !(text = read_folded(h->o->folded_dir, name, &len))) {
		fputs("<p class=\"note\">flame graph: no readable ", h->f);
		html_esc(h->f, name);
		fputs(" in the stacks' directory</p>\n", h->f);
		return 0;
	}
	ret = build(&t, text);
	free(text);
	if (!ret) {
		html_new_id(h, "flame", id, sizeof(id));
		fprintf(h->f, "<figure class=\"flame\" id=\"%s\"><figcaption class=\"ft\">flame graph of ",
			id);
		html_esc(h->f, name);
		fprintf(h->f, " (click a frame to zoom, the bottom one to zoom out)</figcaption>\n"
			"<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %u\" width=\"100%%\" "
			"class=\"flame\" data-w=\"%d\"><title>flame graph</title>\n", FL_W,
			(t.depth + 1) * FL_ROW, FL_W);
		draw(h, &t, 0, 0, FL_W);
		fputs("</svg></figure>\n", h->f);
	}
	tree_free(&t);
	return ret == -ENOMEM ? ret : 0;
}
