// SPDX-License-Identifier: MIT
/* The tables of the HTML report: per pattern and size, the cells ranked by
 * the headline metric (median round trip for RTT patterns, else messages
 * per second), with the field table's columns in its units, each figure's
 * run-to-run interval or spread beside it, noisy and incomplete cells
 * marked; and the machine (env) of each file with what differs between
 * them. Every value comes from the file through the field table. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/util.h"
#include "fields.h"
#include "compare.h"
#include "html.h"
#include "rec_trace.h"

#define MAX_ROWS 4096

void html_value_text(const struct field *fd, double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (fd->kind == F_BOOL)
		snprintf(buf, len, "%s", v != 0 ? "yes" : "no");
	else
		field_human_num(fd, v, buf, len);
}

double html_cell_value(const struct rcell *c, const struct field *fd)
{
	return rec_field_num(c->obj, fd->key, fd->config);
}

void html_label(const struct html_view *v, const struct rcell *c, const char *skip, char *buf,
		size_t len)
{
	rcell_label(c, v->names, v->nnames, skip, buf, len);
	if (!buf[0])
		snprintf(buf, len, "%s", c->transport);
}

/* ---- ranked tables ------------------------------------------------------- */

/* Smaller is better: ns per round trip, or ns per message; NAN: not ranked. */
static double headline(const struct rcell *c)
{
	double p50 = rcell_metric(c, "lat_p50_ns"), rate = rcell_metric(c, "msgs_per_s");

	if (!c->ok)
		return NAN;
	if (rcell_lat_kind(c) == LAT_RTT && !isnan(p50))
		return p50;
	return rate > 0 ? 1e9 / rate : NAN;
}

struct trow {
	const struct rcell *c;
	size_t pos;
	double key;
};

static int trow_cmp(const void *a, const void *b)
{
	const struct trow *x = a, *y = b;

	if (isnan(x->key) != isnan(y->key))
		return isnan(x->key) ? 1 : -1;
	if (!isnan(x->key) && x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static bool same_group(const struct rcell *a, const struct rcell *b)
{
	return !strcmp(a->pattern, b->pattern) && rec_same_size(a->obj, b->obj);
}

/* The interval (ci95, --repeat with enough rounds) or the spread (min..max)
 * of one metric, as a note after the value. */
static void spread_note(struct html *h, const struct rcell *c, const char *key, double med)
{
	double lo, hi, sp;

	if (med > 0 && rec_ci95(c->obj, key, &lo, &hi)) {
		fprintf(h->f, " <span class=\"ci\">&plusmn;%.1f%%</span>",
			100 * fmax(hi - med, med - lo) / med);
	} else if (rcell_spread(c, key, &lo, &hi, &sp) && isfinite(sp)) {
		fprintf(h->f, " <span class=\"sp\">&#8596;%.1f%%</span>", sp);
	}
}

static void badges(struct html *h, const struct rcell *c)
{
	struct rtrace_summary ts;
	struct rprof_run pr;

	if (rcell_flag(c, "noisy"))
		fputs(" <span class=\"badge noisy\" title=\"the headline metric spread over 10 % across repetitions\">noisy</span>", h->f);
	if (rcell_flag(c, "bimodal"))
		fputs(" <span class=\"badge noisy\" title=\"the repetitions fall in two clusters\">bimodal</span>", h->f);
	if (rcell_trace_summary(c, &ts) && ts.incomplete)
		fputs(" <span class=\"badge inc\" title=\"the tracer lost events\">trace incomplete</span>", h->f);
	if (rcell_profile_run(c, &pr) && pr.incomplete)
		fputs(" <span class=\"badge inc\" title=\"samples were lost\">profile incomplete</span>", h->f);
	if (rec_field_num(c->obj, "converged", false) == 0)
		fputs(" <span class=\"badge noisy\" title=\"--repeat auto: the interval did not reach its target\">not converged</span>", h->f);
}

static size_t table_cols(const struct html_view *v, const char **params, const struct field **mets)
{
	size_t np = 0, nm = 0;

	for (size_t i = 0; i < v->nnames && np < 16; i++)
		if (strcmp(v->names[i], "pattern") && strcmp(v->names[i], "size_bytes") &&
		    strcmp(v->names[i], "transport"))
			params[np++] = v->names[i];
	params[np] = NULL;
	for (size_t i = 0; i < n_result_fields && nm < 24; i++)
		if (!result_fields[i].config && result_fields[i].table)
			mets[nm++] = &result_fields[i];
	mets[nm] = NULL;
	return np;
}

static void table_head(struct html *h, const char **params, const struct field **mets)
{
	fputs("<thead><tr><th data-k=\"n\">#</th><th>transport</th>", h->f);
	for (size_t i = 0; params[i]; i++)
		html_elem(h->f, "th", NULL, params[i]);
	for (size_t i = 0; mets[i]; i++) {
		fprintf(h->f, "<th data-k=\"%s\">", mets[i]->kind == F_STR ? "s" : "n");
		html_esc(h->f, mets[i]->label);
		fputs("</th>", h->f);
	}
	fputs("<th data-k=\"n\">vs best</th></tr></thead>\n", h->f);
}

static void metric_td(struct html *h, const struct rcell *c, const struct field *fd)
{
	char t[64];

	if (fd->kind == F_STR) {
		const char *s = rec_field_text(c->obj, fd->key, false);

		html_elem(h->f, "td", NULL, s ? s : "-");
		return;
	}
	double v = html_cell_value(c, fd);

	html_value_text(fd, v, t, sizeof(t));
	if (isnan(v))
		fputs("<td class=\"num\" data-v=\"\">", h->f);
	else
		fprintf(h->f, "<td class=\"num\" data-v=\"%.9g\">", v);
	html_esc(h->f, t);
	spread_note(h, c, fd->key, v);
	fputs("</td>", h->f);
}

static void table_row(struct html *h, const struct trow *w, size_t rank, double best,
		      const char **params, const struct field **mets)
{
	const struct rcell *c = w->c;
	char val[256];
	size_t nm = 0;

	while (mets[nm])
		nm++;
	fprintf(h->f, "<tr class=\"%s\"><td class=\"num\" data-v=\"%zu\">", c->ok ? "ok" : "notok",
		rank ? rank : 99999);
	if (rank)
		fprintf(h->f, "%zu", rank);
	fputs("</td><td>", h->f);
	html_esc(h->f, c->transport);
	badges(h, c);
	fputs("</td>", h->f);
	for (size_t i = 0; params[i]; i++) {
		if (rcell_param(c, params[i], val, sizeof(val)))
			snprintf(val, sizeof(val), "-");
		html_elem(h->f, "td", NULL, val);
	}
	if (!c->ok) {
		const char *st = rec_status(c->obj), *why = rec_reason(c->obj);

		fprintf(h->f, "<td colspan=\"%zu\" class=\"why\">", nm + 1);
		html_escf(h->f, "%s%s%s", st ? st : "?", why ? ": " : "", why ? why : "");
		fputs("</td></tr>\n", h->f);
		return;
	}
	for (size_t i = 0; i < nm; i++)
		metric_td(h, c, mets[i]);
	if (isnan(w->key) || !(best > 0))
		fputs("<td class=\"num\" data-v=\"\">-</td></tr>\n", h->f);
	else
		fprintf(h->f, "<td class=\"num\" data-v=\"%.6g\">%.2fx</td></tr>\n", w->key / best,
			w->key / best);
}

static void group_table(struct html *h, const struct html_view *v, struct trow *rows, size_t n)
{
	const char *params[17];
	const struct field *mets[25];
	char title[256], size[32], id[32];

	table_cols(v, params, mets);
	qsort(rows, n, sizeof(*rows), trow_cmp);
	rcell_param(rows[0].c, "size_bytes", size, sizeof(size));
	snprintf(title, sizeof(title), "%s, %s B: %s", rows[0].c->pattern, size,
		 rcell_lat_kind(rows[0].c) == LAT_RTT ? "ranked by p50 round trip" :
							"ranked by msgs/s");
	html_new_id(h, "tbl", id, sizeof(id));
	fprintf(h->f, "<div class=\"tw\"><table class=\"rank sortable\" id=\"%s\"><caption>", id);
	html_esc(h->f, title);
	fputs("</caption>\n", h->f);
	table_head(h, params, mets);
	fputs("<tbody>\n", h->f);
	for (size_t i = 0, rank = 0; i < n; i++)
		table_row(h, &rows[i], isnan(rows[i].key) ? 0 : ++rank, rows[0].key, params, mets);
	fputs("</tbody></table></div>\n", h->f);
}

void html_tables(struct html *h, const struct html_view *v)
{
	struct trow *rows = calloc(v->n + 1, sizeof(*rows));
	bool *done = calloc(v->n + 1, sizeof(*done));

	if (!rows || !done) {
		free(rows);
		free(done);
		return;
	}
	fputs("<p class=\"legend-text\">lat: RTT = round trip, 1-way = send to receive, cycle = a "
	      "period's completion; &plusmn; = 95 % interval of the median (--repeat, 6 rounds or "
	      "more; or the runs of run --runs), &#8596; = spread over the repetitions (or runs); vs best = times worse than the group's "
	      "best. Click a column to sort.</p>\n", h->f);
	for (size_t i = 0; i < v->n && i < MAX_ROWS; i++) {
		size_t n = 0;

		if (done[i])
			continue;
		for (size_t j = i; j < v->n; j++)
			if (!done[j] && same_group(v->cells[i], v->cells[j])) {
				rows[n] = (struct trow){ v->cells[j], j, headline(v->cells[j]) };
				done[j] = true;
				n++;
			}
		group_table(h, v, rows, n);
	}
	free(rows);
	free(done);
}
