// SPDX-License-Identifier: MIT
/* Human reporters: an aligned text table and a GitHub-markdown table, one
 * row per result, with the field table's `table` columns in its order. A
 * result that did not run shows its reason where the metrics would be. The
 * ranked table sorts rows within each (pattern, size) group by the pattern's
 * headline metric — median round trip for RTT patterns, message rate for the
 * others — and says how many times worse than the group's best each is. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/reporter.h"
#include "ipclab/result.h"
#include "ipclab/util.h"
#include "env_json.h"
#include "fields.h"
#include "matrix.h"
#include "profile_out.h"
#include "repeat_out.h"
#include "trace_out.h"

#define CELL_LEN 48
#define MAX_COLS 24
#define GAP "  "

static const char legend[] =
	"lat: RTT = round trip (send to reply), 1-way = send to receive, cycle = a period's "
	"completion (intended start to the graph's end; msgs/s = cycles/s), never mixed; "
	"p50/p99/max in ns/us/ms; MB/s = 10^6 bytes/s; CPU% = user+sys of both sides, "
	"% of one CPU (200 = two CPUs busy); cs/s = system-wide context switches/s; "
	"busy/CPU = each CPU's busy % over the window (/proc/stat)";
static const char legend_noise[] =
	"noise = other tasks took over 5 % of an endpoint's CPU over the window (cpuN: the worst "
	"one; pool: the CPUs unpinned endpoints may use) or the hypervisor stole time (steal); "
	"the figures of that row are not the transport's alone (JSON: interference)";
static const char legend_ranked[] =
	"ranked within each (pattern, size): by p50 for RTT patterns, else by msgs/s; "
	"vs best = times worse than the group's best";

enum col_kind { COL_FIELD, COL_RANK, COL_REL, COL_BUSY, COL_NOISE };

struct col {
	const char *label;
	const struct field *fd;
	enum col_kind kind;
	bool right;		/* numbers are right-aligned */
	size_t width;
};

struct row {
	const struct result *r;
	size_t group;		/* (pattern, size) group, numbered by first appearance */
	size_t pos;		/* place in the report: keeps the sort stable */
	double key;		/* headline metric, smaller is better; NAN: not ranked */
	unsigned rank;		/* 1-based within the group; 0 = not ranked */
	double rel;		/* key / the group's best key */
};

struct layout {
	struct col cols[MAX_COLS];
	size_t ncols, first_metric;
	bool ranked;
	bool noise;		/* a row is marked noisy (interference) */
	struct row *rows;
	size_t nrows;
	char (*cells)[MAX_COLS][CELL_LEN];
};

static void add_col(struct layout *lay, const char *label, const struct field *fd,
		    enum col_kind kind, bool right)
{
	if (lay->ncols < MAX_COLS)
		lay->cols[lay->ncols++] = (struct col){ .label = label, .fd = fd, .kind = kind,
							 .right = right };
}

/* A configuration field the table does not show by default still gets a
 * column when its value differs between results (a --think or --rate sweep),
 * and the noisy flag when any result carries it. */
static bool shown(const struct field *fd, const struct report *rep)
{
	static const char *const sweepable[] = { "think", "think_ns", "rate_per_s", "repeat_n",
						 "section" };
	char first[CELL_LEN], v[CELL_LEN];

	if (fd->table)
		return true;
	if (!strcmp(fd->key, "noisy")) {
		for (size_t i = 0; i < rep->n; i++)
			if (rep->results[i].noisy)
				return true;
		return false;
	}
	/* a paced round trip is the IPC's own; its sender's lateness beside it */
	if (!strcmp(fd->key, "send_late_p50_ns")) {
		for (size_t i = 0; i < rep->n; i++)
			if (rep->results[i].late_samples)
				return true;
		return false;
	}
	for (size_t k = 0; k < ARRAY_SIZE(sweepable); k++) {
		if (strcmp(fd->key, sweepable[k]))
			continue;
		for (size_t i = 0; i < rep->n; i++) {
			field_text(fd, &rep->results[i], i ? v : first, CELL_LEN);
			if (i && strcmp(v, first))
				return true;
		}
	}
	return false;
}

static void build_cols(struct layout *lay, const struct report *rep)
{
	lay->first_metric = 0;
	for (size_t i = 0; i < rep->n && !lay->noise; i++)
		lay->noise = rep->results[i].status == RES_OK && rep->results[i].intf.noisy;
	if (lay->ranked)
		add_col(lay, "#", NULL, COL_RANK, true);
	for (size_t i = 0; i < n_result_fields; i++) {
		const struct field *fd = &result_fields[i];

		if (!shown(fd, rep))
			continue;
		if (!fd->config && !lay->first_metric)
			lay->first_metric = lay->ncols;
		add_col(lay, fd->label, fd, COL_FIELD, fd->kind != F_STR);
		/* a noisy row's mark beside its CPU figure, one word a row */
		if (!strcmp(fd->key, "cpu_pct_total") && lay->noise)
			add_col(lay, "noise", NULL, COL_NOISE, false);
		/* each CPU's busy %, always beside the system-wide cs/s */
		if (!strcmp(fd->key, "sys_ctx_switches_per_s"))
			add_col(lay, "busy/CPU", NULL, COL_BUSY, true);
	}
	if (lay->ranked)
		add_col(lay, "vs best", NULL, COL_REL, true);
	if (!lay->first_metric)
		lay->first_metric = lay->ncols;
}

/* Smaller is better: ns per round trip, or ns per message for a stream. */
static double headline(const struct result *r)
{
	if (r->status != RES_OK)
		return NAN;
	if (r->lat_kind == LAT_RTT && r->lat_samples)
		return (double)r->lat_p50_ns;
	return r->msgs_per_s > 0 ? 1e9 / r->msgs_per_s : NAN;
}

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	if (isnan(x->key) != isnan(y->key))
		return isnan(x->key) ? 1 : -1;
	if (!isnan(x->key) && x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static void rank_rows(struct layout *lay)
{
	for (size_t i = 0; i < lay->nrows; i++) {
		struct row *w = &lay->rows[i];

		w->group = i;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(lay->rows[j].r->pattern, w->r->pattern) &&
			    lay->rows[j].r->cell.size == w->r->cell.size) {
				w->group = lay->rows[j].group;
				break;
			}
		w->key = headline(w->r);
	}
	qsort(lay->rows, lay->nrows, sizeof(*lay->rows), row_cmp);
	for (size_t i = 0, first = 0; i < lay->nrows; i++) {
		struct row *w = &lay->rows[i];

		if (i && w->group != lay->rows[i - 1].group)
			first = i;
		if (isnan(w->key))
			continue;
		w->rank = (unsigned)(i - first + 1);
		w->rel = lay->rows[first].key > 0 ? w->key / lay->rows[first].key : 1;
	}
}

/* "99/3" for up to four CPUs, else "max 99 mean 13"; "-" when the window
 * held no clock tick (/proc/stat counts in ticks). */
static void busy_cell(const struct result *r, char *buf, size_t len)
{
	unsigned n = r->ncpu < SYS_MAX_CPUS ? r->ncpu : SYS_MAX_CPUS;
	double max = 0, sum = 0;
	size_t off = 0;

	buf[0] = '\0';
	if (!n) {
		snprintf(buf, len, "-");
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		double v = r->cpu_busy_pct[i];

		if (!isfinite(v)) {
			/* a window shorter than a clock tick: not measured */
			snprintf(buf, len, "-");
			return;
		}
		max = v > max ? v : max;
		sum += v;
		if (n <= 4 && off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%.0f", i ? "/" : "", v);
	}
	if (n > 4)
		snprintf(buf, len, "max %.0f mean %.0f", max, sum / n);
}

static void fill_cell(const struct col *c, const struct row *w, char *buf, size_t len)
{
	switch (c->kind) {
	case COL_BUSY:
		busy_cell(w->r, buf, len);
		break;
	case COL_NOISE:
		intf_summary(&w->r->intf, buf, len);
		if (!buf[0])
			snprintf(buf, len, "-");
		break;
	case COL_FIELD:
		if (!repeat_headline_cell(c->fd, w->r, buf, len))
			field_human(c->fd, w->r, buf, len);
		break;
	case COL_RANK:
		if (w->rank)
			snprintf(buf, len, "%u", w->rank);
		else
			snprintf(buf, len, "-");
		break;
	case COL_REL:
		if (w->rank)
			snprintf(buf, len, "%.2fx", w->rel);
		else
			snprintf(buf, len, "-");
		break;
	}
}

/* Columns a cell takes on a terminal: UTF-8 continuation bytes take none
 * (the ± of a repeated headline). */
static size_t text_width(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static bool row_ok(const struct row *w)
{
	return w->r->status == RES_OK;
}

static int layout_init(struct layout *lay, const struct report *rep, bool ranked)
{
	memset(lay, 0, sizeof(*lay));
	lay->ranked = ranked;
	build_cols(lay, rep);
	lay->nrows = rep->n;
	lay->rows = calloc(rep->n ? rep->n : 1, sizeof(*lay->rows));
	lay->cells = calloc(rep->n ? rep->n : 1, sizeof(*lay->cells));
	if (!lay->rows || !lay->cells)
		return -ENOMEM;
	for (size_t i = 0; i < rep->n; i++)
		lay->rows[i] = (struct row){ .r = &rep->results[i], .pos = i, .key = NAN };
	if (ranked)
		rank_rows(lay);
	for (size_t c = 0; c < lay->ncols; c++)
		lay->cols[c].width = strlen(lay->cols[c].label);
	for (size_t i = 0; i < lay->nrows; i++)
		for (size_t c = 0; c < lay->ncols; c++) {
			char *cell = lay->cells[i][c];
			size_t n;

			if (!row_ok(&lay->rows[i]) && c >= lay->first_metric)
				continue;	/* the reason spans these */
			fill_cell(&lay->cols[c], &lay->rows[i], cell, CELL_LEN);
			n = text_width(cell);
			if (n > lay->cols[c].width)
				lay->cols[c].width = n;
		}
	return 0;
}

static void layout_free(struct layout *lay)
{
	free(lay->rows);
	free(lay->cells);
}

/* "skipped: why" — what a result that did not run shows. */
static void reason_text(const struct result *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s: %s", result_status_name(r->status),
		 r->reason[0] ? r->reason : "no reason given");
}

static void text_line(FILE *f, const struct layout *lay, const char *const *cells,
		      size_t ncells, const char *tail)
{
	for (size_t c = 0; c < ncells; c++) {
		const struct col *col = &lay->cols[c];
		bool last = c + 1 == lay->ncols && !tail;

		if (c)
			fputs(GAP, f);
		size_t pad = col->width > text_width(cells[c]) ? col->width - text_width(cells[c]) : 0;

		if (col->right)
			fprintf(f, "%*s%s", (int)pad, "", cells[c]);
		else if (last)
			fputs(cells[c], f);	/* no trailing blanks */
		else
			fprintf(f, "%s%*s", cells[c], (int)pad, "");
	}
	if (tail)
		fprintf(f, "%s%s", ncells ? GAP : "", tail);
	fputc('\n', f);
}

static void text_rule(FILE *f, const struct layout *lay)
{
	size_t n = 0;

	for (size_t c = 0; c < lay->ncols; c++)
		n += lay->cols[c].width + (c ? strlen(GAP) : 0);
	while (n--)
		fputc('-', f);
	fputc('\n', f);
}

/* --reference: one line under the row. */
static void lat_text(char *buf, size_t len, double ns)
{
	if (ns < 1e3)
		snprintf(buf, len, "%.0fns", ns);
	else if (ns < 1e6)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else
		snprintf(buf, len, "%.2fms", ns / 1e6);
}

static void reference_line(FILE *f, const struct result *r)
{
	const struct ref_result *x = &r->ref;
	char mean[32], p50[32];

	if (x->status == REF_NONE) {
		fprintf(f, "  reference: none (%s)\n", x->reason);
		return;
	}
	if (x->status == REF_FAILED) {
		fprintf(f, "  reference: failed: %s\n", x->reason);
		return;
	}
	fprintf(f, "  reference: %.4g msgs/s", x->msgs_per_s);
	if (!isnan(x->lat_mean_ns)) {
		lat_text(mean, sizeof(mean), x->lat_mean_ns);
		lat_text(p50, sizeof(p50), (double)x->lat_p50_ns);
		fprintf(f, "  mean RTT %s  p50 %s", mean, p50);
	}
	if (!isnan(x->ratio))
		fprintf(f, "  ratio %.2f  overhead_pct %.1f", x->ratio, x->overhead_pct);
	fprintf(f, "  (%u pair%s)\n", x->pairs, x->pairs == 1 ? "" : "s");
}

static void print_text(FILE *f, const struct layout *lay)
{
	const char *cells[MAX_COLS] = { 0 };
	char why[ERRLEN + 16];

	for (size_t c = 0; c < lay->ncols; c++)
		cells[c] = lay->cols[c].label;
	text_line(f, lay, cells, lay->ncols, NULL);
	text_rule(f, lay);
	for (size_t i = 0; i < lay->nrows; i++) {
		const struct row *w = &lay->rows[i];

		if (lay->ranked && i && w->group != lay->rows[i - 1].group)
			fputc('\n', f);
		for (size_t c = 0; c < lay->ncols; c++)
			cells[c] = lay->cells[i][c];
		if (row_ok(w)) {
			text_line(f, lay, cells, lay->ncols, NULL);
			const struct pat_report *pr = pat_report_of(w->r->cell.pat);

			if (pr && pr->table_line)
				pr->table_line(f, w->r);
			if (w->r->trace.on)
				trace_table_line(f, &w->r->trace);
			if (w->r->profile.on)
				profile_table(f, &w->r->profile);
			if (w->r->ref.on)
				reference_line(f, w->r);
			continue;
		}
		reason_text(w->r, why, sizeof(why));
		text_line(f, lay, cells, lay->first_metric, why);
		if (w->r->ref.on)
			reference_line(f, w->r);
	}
	fprintf(f, "%s\n", legend);
	if (lay->noise)
		fprintf(f, "%s\n", legend_noise);
	if (lay->ranked)
		fprintf(f, "%s\n", legend_ranked);
}

static int report_text(FILE *f, const struct report *rep, bool ranked)
{
	struct layout lay;
	int rc = layout_init(&lay, rep, ranked);

	if (!rc) {
		print_text(f, &lay);
		repeat_notes(f, rep->results, rep->n);
		floors_against(f, rep);
	}
	layout_free(&lay);
	if (rc)
		return rc;
	return fflush(f) || ferror(f) ? -EIO : 0;
}

int report_table(FILE *f, const struct report *rep)
{
	if (rep->matrix)	/* --pin matrix: the CPU x CPU table instead */
		return report_matrix(f, rep);
	return report_text(f, rep, false);
}

int report_table_ranked(FILE *f, const struct report *rep)
{
	return report_text(f, rep, true);
}

/* A markdown cell: '|' would end it and a newline would end the row. */
static void md_cell(FILE *f, const char *s)
{
	fputs(" ", f);
	for (; *s; s++) {
		if (*s == '|' || *s == '\\')
			fputc('\\', f);
		fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
	}
	fputs(" |", f);
}

static void print_markdown(FILE *f, const struct layout *lay)
{
	char why[ERRLEN + 16];

	fputc('|', f);
	for (size_t c = 0; c < lay->ncols; c++)
		md_cell(f, lay->cols[c].label);
	fputs("\n|", f);
	for (size_t c = 0; c < lay->ncols; c++)
		fputs(lay->cols[c].right ? " ---: |" : " --- |", f);
	fputc('\n', f);
	for (size_t i = 0; i < lay->nrows; i++) {
		const struct row *w = &lay->rows[i];

		reason_text(w->r, why, sizeof(why));
		fputc('|', f);
		for (size_t c = 0; c < lay->ncols; c++) {
			if (row_ok(w) || c < lay->first_metric)
				md_cell(f, lay->cells[i][c]);
			else
				md_cell(f, c == lay->first_metric ? why : "");
		}
		fputc('\n', f);
	}
	fprintf(f, "\n%s\n", legend);
	if (lay->noise)
		fprintf(f, "%s\n", legend_noise);
}

int report_markdown(FILE *f, const struct report *rep)
{
	struct layout lay;
	int rc = layout_init(&lay, rep, false);

	if (!rc) {
		print_markdown(f, &lay);
		repeat_notes(f, rep->results, rep->n);
	}
	layout_free(&lay);
	if (rc)
		return rc;
	return fflush(f) || ferror(f) ? -EIO : 0;
}
