/* SPDX-License-Identifier: MIT */
/* ipclab report: one self-contained HTML page from result files (html.c),
 * its escaping (html_esc.c), its SVG charts (html_svg.c), figures
 * (html_fig.c), tables (html_table.c), traces and profiles (html_trace.c,
 * html_flame.c), matrices (html_matrix.c), and each pattern's own section
 * (its struct pat_report's html hook). Everything a result
 * file holds is hostile input: every string is written through html_esc,
 * the data block through html_json_script. */
#ifndef IPCLAB_REPORT_HTML_H
#define IPCLAB_REPORT_HTML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "ipclab/result.h"
#include "rfile.h"

#define HTML_MAX_FILES 16
#define HTML_LABEL 192

/* What to draw, from the command line. */
struct html_opts {
	const char *title;		/* NULL: from the files */
	const char *folded_dir;		/* flame graphs from DIR/<cell>-<side>.folded, or NULL */
};

/* The page being written. */
struct html {
	FILE *f;
	const struct html_opts *o;
	json_t *data;			/* the data block: {"figs": {id: {...}}} */
	json_t *figs;			/* its "figs" (borrowed) */
	unsigned next_id;		/* figures, tables, flame graphs */
	char *err;
	size_t errlen;
};

/* A set of cells drawn together: a file, or one section of a suite file. */
struct html_view {
	const struct rfile *rf;
	const struct rcell **cells;
	size_t n;
	const char *names[64];		/* parameters that tell these cells apart */
	size_t nnames;
	char idp[24];			/* id prefix, "f1" or "f1s2" */
};

/* The page: every file in order; 0 or -errno (err filled). */
int html_report(FILE *f, const struct rfile *const *files, size_t n, const struct html_opts *o,
		char *err, size_t errlen);

/* ---- escaping (html_esc.c) ---- */
/* Text or a double-quoted attribute value: & < > " ' escaped, control
 * bytes, invalid UTF-8 and the non-characters U+FFFE, U+FFFF shown as
 * U+FFFD: the text is well-formed XML too (inline SVG, history's figure). */
void html_esc(FILE *f, const char *s);
void html_escn(FILE *f, const char *s, size_t n);
/* <tag class="cls">escaped text</tag> */
void html_elem(FILE *f, const char *tag, const char *cls, const char *text);
/* printf into a buffer, then escaped. */
void html_escf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* <script type="application/json" id="id">: JSON whose <, >, & are
 * written \u003c, \u003e, \u0026, so no string in it can end the element. */
int html_json_script(FILE *f, const char *id, const json_t *v);
/* A JSON value as short text (strings as is, others compact, cut at max). */
void html_json_text(const json_t *v, char *buf, size_t len);

/* ---- values (html_table.c) ---- */
/* A metric or configuration value of a cell as the text table shows it
 * (field table units), "-" when absent. */
void html_value_text(const struct field *fd, double v, char *buf, size_t len);
double html_cell_value(const struct rcell *c, const struct field *fd);
/* The cell's label for this view. */
void html_label(const struct html_view *v, const struct rcell *c, const char *skip, char *buf,
		size_t len);

/* ---- sections of a view ---- */
void html_env(struct html *h, const struct rfile *const *files, size_t n);
void html_tables(struct html *h, const struct html_view *v);
void html_compare(struct html *h, const struct rfile *a, const struct rfile *b);
int html_figures(struct html *h, const struct html_view *v);
void html_traces(struct html *h, const struct html_view *v);
/* --trace's reading (html_cause.c): the view's cause splits as stacked
 * bars; a traced cell's sentence, takers table and --explain verdict. */
void html_cause_split(struct html *h, const struct html_view *v);
void html_cause_text(struct html *h, const struct rcell *c);
void html_preempted_by(struct html *h, const struct rcell *c);
void html_explain(struct html *h, const struct rcell *c);
void html_profiles(struct html *h, const struct html_view *v);
int html_flame(struct html *h, const struct html_view *v, const struct rcell *c, unsigned side);
void html_matrix(struct html *h, const struct rfile *rf);

/* The embedded style sheet and script (html_assets.c). */
void html_write_css(FILE *f);
void html_write_js(FILE *f);

/* A fresh element id: PREFIX-N. */
void html_new_id(struct html *h, const char *prefix, char *buf, size_t len);

#endif
