// SPDX-License-Identifier: MIT
/* Flame graphs of the HTML report, from the folded stacks --profile DIR
 * wrote (one line per distinct stack, root first, and its sample count):
 * a tree of frames, each drawn as wide as its share of the side's samples,
 * root at the bottom. A click on a frame zooms to it (the page's script);
 * without script each frame still has its <title>. The stacks are read
 * only from the directory the user named (report --folded DIR, run
 * --profile DIR), under the file name the result records, checked to be a
 * plain name; a file's content is hostile input, bounded by the limits of
 * html_flame.h (what they cut is said under the graph) and escaped as any
 * other.
 *
 * The tree is an array of nodes linked by index (the array grows), the
 * names pointing into the file's text; a frame's child of a given name is
 * found through a hash table keyed by (parent, name), seeded at random per
 * file so that names written in advance cannot aim at its collisions: a
 * file is read in time linear in its size. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ipclab/util.h"
#include "html_flame.h"
#include "rec_trace.h"

#define FL_HUES 12		/* colour classes h0 .. h11 (report.css) */
#define NO_NODE UINT32_MAX

struct node {
	const char *name;	/* in the tree's text, NUL-terminated */
	uint64_t count;
	uint64_t key;		/* hash of (parent, name) */
	uint32_t len, depth;
	uint32_t parent, child, last, next;	/* 0 = none (node 0 is the root) */
};

/* What the limits cut or skipped, for the note under the graph. */
struct cuts {
	size_t malformed, long_lines, overflow, deep, full, undrawn;
};

struct tree {
	struct node *v;
	uint32_t n, cap;
	uint32_t *slot;		/* the hash table: node indices, 0 = empty */
	size_t mask;		/* its size - 1 (a power of two) */
	uint64_t seed;
	unsigned depth;
	bool nomem;
	struct cuts cut;
	size_t drawn;
};

/* A file name from a result file: plain characters, ending .folded. */
static bool plain_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 250 || s[0] == '.' || n < 7 || strcmp(s + n - 7, ".folded"))
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

/* The whole file, NUL-terminated; never through a link, only a regular
 * file of at most FL_MAX_BYTES. 0, or -errno (-EFBIG: too large). */
static int read_folded(const char *dir, const char *name, char **out, size_t *len)
{
	char path[4096];
	struct stat st;
	int fd, ret = -EINVAL;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0)
		ret = -EINVAL;
	else if ((uint64_t)st.st_size > FL_MAX_BYTES)
		ret = -EFBIG;
	else if (!(*out = malloc((size_t)st.st_size + 1)))
		ret = -ENOMEM;
	else {
		ssize_t got = full_read(fd, *out, (size_t)st.st_size);

		ret = got > 0 ? 0 : -EIO;
		if (!ret) {
			(*out)[got] = '\0';
			*len = (size_t)got;
		} else {
			free(*out);
		}
	}
	close(fd);
	return ret;
}

/* ---- the tree ------------------------------------------------------------------ */

static inline uint64_t mix(uint64_t h)
{
	h ^= h >> 32;
	h *= 0xd6e8feb86659fd93ull;
	return h ^ (h >> 32);
}

/* (parent, name) under the tree's seed, eight bytes a step. */
static uint64_t key_of(const struct tree *t, uint32_t parent, const char *s, size_t n)
{
	uint64_t h = mix(t->seed ^ ((uint64_t)parent << 32 | (uint32_t)n)), w;

	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = mix(h ^ w) + t->seed;
	}
	w = 0;
	memcpy(&w, s, n);
	return mix(h ^ w ^ 0x8000000000000000ull);
}

static void table_put(struct tree *t, uint32_t i)
{
	size_t at = t->v[i].key & t->mask;

	while (t->slot[at])
		at = (at + 1) & t->mask;
	t->slot[at] = i;
}

/* Twice the slots, every node put again; false when out of memory. */
static bool table_grow(struct tree *t)
{
	size_t size = t->slot ? (t->mask + 1) * 2 : 1024;
	uint32_t *slot = calloc(size, sizeof(*slot));

	if (!slot)
		return false;
	free(t->slot);
	t->slot = slot;
	t->mask = size - 1;
	for (uint32_t i = 1; i < t->n; i++)
		table_put(t, i);
	return true;
}

/* A new node, its links set by the caller; NO_NODE at the limit (or out
 * of memory: nomem). The array may move: hold indices, not pointers. */
static uint32_t node_new(struct tree *t, const char *s, size_t len, uint32_t parent, uint64_t key)
{
	if (t->n >= FL_MAX_NODES)
		return NO_NODE;
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 256;
		struct node *v = realloc(t->v, cap * sizeof(*v));

		if (!v) {
			t->nomem = true;
			return NO_NODE;
		}
		t->v = v;
		t->cap = cap;
	}
	if (2 * ((size_t)t->n + 1) > t->mask && !table_grow(t)) {
		t->nomem = true;
		return NO_NODE;
	}
	t->v[t->n] = (struct node){ .name = s, .len = (uint32_t)len, .key = key, .parent = parent,
				    .depth = t->n ? t->v[parent].depth + 1 : 0 };
	if (t->n)
		table_put(t, t->n);
	if (t->v[t->n].depth > t->depth)
		t->depth = t->v[t->n].depth;
	return t->n++;
}

/* parent's child named name (len bytes), made if new; NO_NODE at the limit. */
static uint32_t child_of(struct tree *t, uint32_t parent, const char *name, size_t len)
{
	uint64_t key = key_of(t, parent, name, len);
	uint32_t c;

	for (size_t at = key & t->mask; (c = t->slot[at]); at = (at + 1) & t->mask) {
		const struct node *nd = &t->v[c];

		if (nd->key == key && nd->parent == parent && nd->len == len &&
		    !memcmp(nd->name, name, len))
			return c;
	}
	c = node_new(t, name, len, parent, key);
	if (c == NO_NODE)
		return c;
	/* linked after node_new: the array may have moved */
	if (t->v[parent].last)
		t->v[t->v[parent].last].next = c;
	else
		t->v[parent].child = c;
	t->v[parent].last = c;
	return c;
}

/* The count at the end of a line, digits only, 1 .. FL_MAX_COUNT; 0 if none. */
static uint64_t line_count(const char *s, size_t n)
{
	uint64_t v = 0;

	if (!n || n > 13)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	return v <= FL_MAX_COUNT ? v : 0;
}

/* "a;b;c 12" (n bytes, no newline): the frames and the count. Frames are
 * cut to NUL-terminated names in place. A line that is not frames
 * (non-empty, no NUL) and a count is skipped and counted. */
static void add_line(struct tree *t, char *line, size_t n)
{
	char *sp, *end;
	uint32_t at = 0;
	uint64_t count;

	if (n && line[n - 1] == '\r')
		n--;
	if (!n)
		return;
	if (n > FL_MAX_LINE) {
		t->cut.long_lines++;
		return;
	}
	sp = memrchr(line, ' ', n);
	count = sp ? line_count(sp + 1, (size_t)(line + n - sp - 1)) : 0;
	if (!count || sp == line || line[0] == ';' || sp[-1] == ';' || memchr(line, '\0', n) ||
	    memmem(line, (size_t)(sp - line), ";;", 2)) {
		t->cut.malformed++;
		return;
	}
	if (t->v[0].count + count > FL_MAX_TOTAL) {
		t->cut.overflow++;
		return;
	}
	*sp = '\0';
	t->v[0].count += count;
	for (char *f = line; f < sp; f = end + 1) {
		end = memchr(f, ';', (size_t)(sp - f));
		if (!end)
			end = sp;
		*end = '\0';
		if (t->v[at].depth >= FL_MAX_DEPTH) {
			t->cut.deep++;
			return;
		}
		at = child_of(t, at, f, (size_t)(end - f));
		if (at == NO_NODE) {
			t->cut.full++;
			return;
		}
		t->v[at].count += count;
	}
}

static int build(struct tree *t, char *text, size_t len)
{
	uint64_t seed;

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
		seed = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)t;
	t->seed = seed;
	if (node_new(t, "all", 3, 0, 0) == NO_NODE)
		return -ENOMEM;
	for (char *l = text, *end = text + len; l < end && !t->nomem;) {
		char *nl = memchr(l, '\n', (size_t)(end - l));
		size_t n = nl ? (size_t)(nl - l) : (size_t)(end - l);

		add_line(t, l, n);
		l += n + 1;
	}
	if (t->nomem)
		return -ENOMEM;
	return t->v[0].count ? 0 : -ENOENT;
}

static void tree_free(struct tree *t)
{
	free(t->v);
	free(t->slot);
}

/* ---- drawing ------------------------------------------------------------------- */

static unsigned hue(const struct node *nd)
{
	unsigned h = 2166136261u;

	for (uint32_t i = 0; i < nd->len; i++)
		h = (h ^ (unsigned char)nd->name[i]) * 16777619u;
	return h % FL_HUES;
}

static void frame(struct html *h, const struct tree *t, uint32_t i, double x, double w)
{
	const struct node *nd = &t->v[i];
	double y = (double)(t->depth - nd->depth) * FL_ROW;
	size_t chars = (size_t)(w / 7);

	/* the script reads x, width and depth back from the rect and the class */
	fprintf(h->f, "<g class=\"fr h%u d%u\"><title>", hue(nd), nd->depth);
	html_escn(h->f, nd->name, nd->len > FL_TITLE_NAME ? FL_TITLE_NAME : nd->len);
	html_escf(h->f, "%s: %llu samples, %.2f %%", nd->len > FL_TITLE_NAME ? "..." : "",
		  (unsigned long long)nd->count, 100.0 * (double)nd->count / (double)t->v[0].count);
	fprintf(h->f, "</title><rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%d\"/>", x, y, w,
		FL_ROW - 1);
	if (chars >= 3) {
		fprintf(h->f, "<text x=\"%.1f\" y=\"%.0f\">", x + 3, y + FL_ROW - 4);
		if (nd->len > chars) {
			html_escn(h->f, nd->name, chars - 2);
			fputs("..", h->f);
		} else {
			html_escn(h->f, nd->name, nd->len);
		}
		fputs("</text>", h->f);
	}
	fputs("</g>\n", h->f);
}

static void draw(struct html *h, struct tree *t, uint32_t i, double x, double w)
{
	if (t->drawn >= FL_MAX_DRAWN) {
		t->cut.undrawn++;
		return;
	}
	t->drawn++;
	frame(h, t, i, x, w);
	for (uint32_t c = t->v[i].child; c; c = t->v[c].next) {
		double cw = w * (double)t->v[c].count / (double)t->v[i].count;

		if (cw >= FL_MIN_W)
			draw(h, t, c, x, cw);
		x += cw;
	}
}

/* One clause of the note: "N WHATs BEFORE LIMIT AFTER" ("; " before all but the first). */
static void note_part(struct html *h, bool *first, size_t n, const char *what, const char *before,
		      unsigned long long limit, const char *after)
{
	if (!n)
		return;
	fprintf(h->f, "%s%zu %s%s %s%llu%s", *first ? "" : "; ", n, what, n == 1 ? "" : "s", before,
		limit, after);
	*first = false;
}

/* What the limits cut or skipped, under the graph (nothing if none). */
static void note_cuts(struct html *h, const char *name, const struct cuts *c)
{
	bool first = true;

	if (!(c->malformed | c->long_lines | c->overflow | c->deep | c->full | c->undrawn))
		return;
	fputs("<p class=\"note\">flame graph of ", h->f);
	html_esc(h->f, name);
	fputs(": ", h->f);
	note_part(h, &first, c->malformed, "line", "skipped, not FRAME;...;FRAME COUNT (1 to ",
		  FL_MAX_COUNT, ")");
	note_part(h, &first, c->long_lines, "line", "skipped, longer than ", FL_MAX_LINE, " bytes");
	note_part(h, &first, c->overflow, "line", "skipped, the samples would pass ", FL_MAX_TOTAL, "");
	note_part(h, &first, c->deep, "stack", "cut at ", FL_MAX_DEPTH, " frames");
	note_part(h, &first, c->full, "stack", "cut short, past ", FL_MAX_NODES, " distinct frames");
	note_part(h, &first, c->undrawn, "frame", "left out with what is above it, past ",
		  FL_MAX_DRAWN, " drawn");
	fputs("</p>\n", h->f);
}

int html_flame_text(struct html *h, const char *name, char *text, size_t len)
{
	struct tree t = { 0 };
	char id[32];
	int ret = build(&t, text, len);

	if (ret) {
		fputs("<p class=\"note\">flame graph: ", h->f);
		html_esc(h->f, name);
		fputs(ret == -ENOMEM ? " is too large for the memory there is</p>\n" :
				       " holds no stack with samples</p>\n",
		      h->f);
		tree_free(&t);
		return ret == -ENOMEM ? ret : 0;
	}
	html_new_id(h, "flame", id, sizeof(id));
	fprintf(h->f, "<figure class=\"flame\" id=\"%s\"><figcaption class=\"ft\">flame graph of ", id);
	html_esc(h->f, name);
	fprintf(h->f, " (click a frame to zoom, the bottom one to zoom out)</figcaption>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %u\" width=\"100%%\" "
		"class=\"flame\" data-w=\"%d\"><title>flame graph</title>\n", FL_W,
		(t.depth + 1) * FL_ROW, FL_W);
	draw(h, &t, 0, 0, FL_W);
	fputs("</svg></figure>\n", h->f);
	note_cuts(h, name, &t.cut);
	tree_free(&t);
	return 0;
}

static const char *side_file(const struct rcell *c, unsigned side)
{
	struct rprof_side s;

	return rcell_profile_side(c, side, &s) ? s.folded_file : NULL;
}

int html_flame(struct html *h, const struct html_view *v, const struct rcell *c, unsigned side)
{
	const char *name = side_file(c, side);
	char *text = NULL;
	size_t len = 0;
	int ret;

	(void)v;
	if (!name || !h->o->folded_dir) {
		if (name)
			fputs("<p class=\"note\">flame graph: give the stacks' directory, ipclab report --folded DIR</p>\n", h->f);
		return 0;
	}
	ret = plain_name(name) ? read_folded(h->o->folded_dir, name, &text, &len) : -EINVAL;
	if (ret) {
		fputs("<p class=\"note\">flame graph: ", h->f);
		if (ret == -EFBIG)
			fputs("not drawn, ", h->f);
		else
			fputs("no readable ", h->f);
		html_esc(h->f, name);
		fputs(ret == -EFBIG ? " is larger than 64 MiB</p>\n" : " in the stacks' directory</p>\n",
		      h->f);
		return ret == -ENOMEM ? ret : 0;
	}
	ret = html_flame_text(h, name, text, len);
	free(text);
	return ret;
}
