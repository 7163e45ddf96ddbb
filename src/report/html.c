// SPDX-License-Identifier: MIT
/* `ipclab report`: one HTML page from result files, with everything
 * inline (style, SVG figures, a little script, the numbers as a JSON data
 * block) so that it opens from a mail attachment with the network off; a
 * Content-Security-Policy forbids it to fetch anything. Tables and figures
 * are plain HTML and SVG: the script only adds sorting, hover values,
 * series toggling and flame-graph zoom. A file is one part of the page; a
 * suite file a part per section (seed), in the order they ran; two files
 * also a compare view. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/result.h"
#include "ipclab/util.h"
#include "html.h"

#define TEXT_MAX (256u << 10)	/* of a section's text shown (the suite keeps as much) */
#define CSP "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"

void html_new_id(struct html *h, const char *prefix, char *buf, size_t len)
{
	snprintf(buf, len, "%s-%u", prefix, ++h->next_id);
}

/* The parameters that tell these cells apart: the file's varying ones
 * that vary here, transport always. */
static void view_names(struct html_view *v)
{
	const struct rfile *files[1] = { v->rf };
	const char *cand[64];
	size_t nc = rf_varying(files, 1, true, cand, ARRAY_SIZE(cand));

	v->nnames = 0;
	for (size_t i = 0; i < nc; i++) {
		char first[HTML_LABEL] = "", val[HTML_LABEL];
		bool seen = false, differs = !strcmp(cand[i], "transport");

		for (size_t k = 0; k < v->n && !differs; k++) {
			int ret = rcell_param(v->cells[k], cand[i], val, sizeof(val));

			if (seen && (ret ? first[0] != '\0' : strcmp(val, first)))
				differs = true;
			snprintf(first, sizeof(first), "%s", ret ? "" : val);
			seen = true;
		}
		if (differs)
			v->names[v->nnames++] = cand[i];
	}
}

static const char *cell_section(const struct rcell *c)
{
	const char *s = rec_section(c->obj);

	return s ? s : "";
}

/* ---- a suite's section: its own layout and reading, as the suite printed them -- */

/* The section's question, tested (its "why"), as a box of its own: the
 * question, each hypothesis with its evidence, the answer and verdict. */
static void section_why(struct html *h, const struct rec_sect *s)
{
	if (!s->why)
		return;
	fputs("<div class=\"why\"><p><b>Question:</b> ", h->f);
	html_esc(h->f, s->question);
	fputs("</p>\n<ul>\n", h->f);
	for (size_t i = 0; i < s->nhyp; i++) {
		const struct rec_hyp *x = &s->hyp[i];

		fputs("<li>", h->f);
		html_esc(h->f, x->claim);
		fputs(" (", h->f);
		html_esc(h->f, x->conditions);
		fprintf(h->f, "): <b>%s</b> (", x->reproduced ? "reproduced here" : "not reproduced");
		html_esc(h->f, x->evidence);
		fputs(")</li>\n", h->f);
	}
	fputs("</ul>\n<p><b>Answer:</b> ", h->f);
	html_esc(h->f, s->answer);
	fputs("</p>\n<p><b>Verdict:</b> ", h->f);
	html_esc(h->f, s->verdict);
	fputs("</p></div>\n", h->f);
}

static void section_text(struct html *h, const struct rec_sect *s)
{
	const char *text = s->text;
	const char *p;

	section_why(h, s);
	if (!text || !*text)
		return;
	/* the reading first: the sentences the section was run for */
	for (p = text; p && *p && p < text + TEXT_MAX;) {
		const char *e = strchr(p, '\n');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		if (!strncmp(p, "Reading:", 8) || !strncmp(p, "Trace", 5) || !strncmp(p, "Profile", 7)) {
			fputs("<p class=\"reading\">", h->f);
			html_escn(h->f, p, l);
			fputs("</p>\n", h->f);
		}
		p = e ? e + 1 : NULL;
	}
	fputs("<pre class=\"seed\">", h->f);
	html_escn(h->f, text, TEXT_MAX);
	fputs("</pre>\n", h->f);
}

/* ---- one view -------------------------------------------------------------------- */

static int view_body(struct html *h, struct html_view *v)
{
	int ret;

	view_names(v);
	fprintf(h->f, "<h3 id=\"%s-tables\">Results</h3>\n", v->idp);
	html_tables(h, v);
	if (v->n == v->rf->n)		/* the file's only view */
		html_matrix(h, v->rf);
	fprintf(h->f, "<h3 id=\"%s-figures\">Figures</h3>\n", v->idp);
	ret = html_figures(h, v);
	if (ret)
		return errf(h->err, h->errlen, -ret, "out of memory drawing the figures");
	html_traces(h, v);
	html_profiles(h, v);
	for (size_t i = 0; i < n_patterns; i++) {	/* each pattern's own section */
		const struct pat_report *pr = pat_report_of(patterns[i]);

		if (pr && pr->html)
			pr->html(h, v);
	}
	return 0;
}

static int file_part(struct html *h, const struct rfile *rf, size_t fi)
{
	const struct rcell **cells = calloc(rf->n + 1, sizeof(*cells));
	const char **secs = calloc(rf->n + 1, sizeof(*secs));
	size_t nsec = 0;
	int ret = 0;

	if (!cells || !secs) {
		free(cells);
		free(secs);
		return errf(h->err, h->errlen, ENOMEM, "out of memory");
	}
	/* sections in the order their results appear: the order they ran */
	for (size_t i = 0; i < rf->n; i++) {
		size_t k = 0;

		while (k < nsec && strcmp(secs[k], cell_section(&rf->cells[i])))
			k++;
		if (k == nsec)
			secs[nsec++] = cell_section(&rf->cells[i]);
	}
	fprintf(h->f, "<section class=\"file\" id=\"f%zu\"><h2>", fi + 1);
	html_esc(h->f, rf->path);
	fputs("</h2>\n", h->f);
	if (!rf->n)
		fputs("<p>This file holds no result.</p>\n", h->f);
	for (size_t s = 0; !ret && s < nsec; s++) {
		struct html_view v = { .rf = rf, .cells = cells };

		for (size_t i = 0; i < rf->n; i++)
			if (!strcmp(cell_section(&rf->cells[i]), secs[s]))
				cells[v.n++] = &rf->cells[i];
		snprintf(v.idp, sizeof(v.idp), secs[s][0] ? "f%zus%zu" : "f%zu", fi + 1, s + 1);
		if (secs[s][0]) {
			struct rec_sect info;

			rec_file_section(rf->root, secs[s], &info);
			fprintf(h->f, "<section class=\"seed\" id=\"%s\"><h2>", v.idp);
			html_esc(h->f, secs[s]);
			if (info.title) {
				fputs(": ", h->f);
				html_esc(h->f, info.title);
			}
			fputs("</h2>\n", h->f);
			section_text(h, &info);
		}
		ret = view_body(h, &v);
		if (secs[s][0])
			fputs("</section>\n", h->f);
	}
	fputs("</section>\n", h->f);
	free(cells);
	free(secs);
	return ret;
}

/* ---- the page ---------------------------------------------------------------------- */

static void head(struct html *h, const struct rfile *const *files, size_t n)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"" CSP "\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta name=\"generator\" content=\"ipclab " IPCLAB_VERSION "\">\n<title>", h->f);
	if (h->o->title)
		html_esc(h->f, h->o->title);
	else
		html_escf(h->f, "ipclab report: %s%s", files[0]->path, n > 1 ? " ..." : "");
	fputs("</title>\n<style>\n", h->f);
	html_write_css(h->f);
	fputs("</style></head>\n<body>\n<header><h1>", h->f);
	html_esc(h->f, h->o->title ? h->o->title : "ipclab report");
	fputs("</h1></header>\n", h->f);
}

static void toc(struct html *h, const struct rfile *const *files, size_t n)
{
	fputs("<nav><ul><li><a href=\"#env\">Machine</a></li>", h->f);
	if (n == 2)
		fputs("<li><a href=\"#compare\">Compare</a></li>", h->f);
	for (size_t f = 0; f < n; f++) {
		const char *secs[64];
		size_t ns = 0;

		fprintf(h->f, "<li><a href=\"#f%zu\">", f + 1);
		html_esc(h->f, files[f]->path);
		fputs("</a></li>", h->f);
		for (size_t i = 0; i < files[f]->n && ns < ARRAY_SIZE(secs); i++) {
			const char *s = cell_section(&files[f]->cells[i]);
			size_t k = 0;

			while (k < ns && strcmp(secs[k], s))
				k++;
			if (k < ns)
				continue;
			secs[ns++] = s;
			if (!s[0])
				continue;
			fprintf(h->f, "<li><a href=\"#f%zus%zu\">", f + 1, k + 1);
			html_esc(h->f, s);
			fputs("</a></li>", h->f);
		}
	}
	fputs("</ul></nav>\n", h->f);
}

int html_report(FILE *f, const struct rfile *const *files, size_t n, const struct html_opts *o,
		char *err, size_t errlen)
{
	struct html h = { .f = f, .o = o, .err = err, .errlen = errlen };
	int ret = 0;

	h.figs = json_object();
	h.data = json_pack("{s:o, s:s}", "figs", h.figs, "generator", "ipclab " IPCLAB_VERSION);
	if (!h.data)
		return errf(err, errlen, ENOMEM, "out of memory");
	head(&h, files, n);
	toc(&h, files, n);
	html_env(&h, files, n);
	if (n == 2)
		html_compare(&h, files[0], files[1]);
	for (size_t i = 0; !ret && i < n; i++)
		ret = file_part(&h, files[i], i);
	if (!ret && html_json_script(f, "ipclab-data", h.data))
		ret = errf(err, errlen, ENOMEM, "out of memory writing the data block");
	if (!ret) {
		fputs("<script>\n", f);
		html_write_js(f);
		fputs("</script>\n</body></html>\n", f);
	}
	json_decref(h.data);
	if (!ret && (fflush(f) || ferror(f)))
		ret = errf(err, errlen, EIO, "cannot write the page: %s", strerror(errno ? errno : EIO));
	return ret;
}
