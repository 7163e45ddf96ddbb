// SPDX-License-Identifier: MIT
/* `ipclab report --db URL [filters] -o fleet.html`: the stored runs the
 * filters select (a fleet run: --label fleet_run=ID) as one page, hosts
 * side by side: the runs it drew (id, machine, kernel, ipclab revision,
 * canary), a host x cell table of each cell's headline metric (the
 * median of the machine's runs, the ratio to the first machine by name),
 * and a figure per metric with a bar per machine in each cell. A run
 * whose canary (env.canary, the cache-line RTT, else the pipe's) is more
 * than CANARY_RATIO_MAX from the fleet's lower median (a state one of its
 * runs had; of two hosts, the faster) is out of line: its
 * machine is marked "out of line: not read as a result". The cells come
 * from history --by machine (history_hosts.c); every stored text is
 * written through the report's escaper (html_esc). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "history.h"
#include "ipclab/floors.h"
#include "ipclab/result.h"
#include "ipclab/util.h"
#include "../report/env_json.h"
#include "../report/html.h"
#include "../report/html_svg.h"
#include "../report/rec_env.h"

#define FLEET_MAX_RUNS 1024
#define CSP "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"

static const char *const fig_metrics[] = { "lat_p50_ns", "lat_p99_ns", "msgs_per_s",
					   "cpu_ns_per_msg", NULL };

struct frun {
	int64_t id;
	char created[32], machine[128], kernel[128], rev[64];
	struct canary canary[2];
	double state;			/* its canary figure, NAN: none */
	bool cacheline;			/* state is the cache line's (else the pipe's) */
	bool out_of_line;
};

struct fleet {
	struct frun *r;
	size_t n;
	struct db *db;
	bool full;
};

static int got_run(void *arg, const struct db_run_row *row)
{
	struct fleet *fl = arg;
	struct frun *r;

	if (fl->n == FLEET_MAX_RUNS) {
		fl->full = true;
		return 0;
	}
	r = &fl->r[fl->n++];
	memset(r, 0, sizeof(*r));
	r->id = row->id;
	snprintf(r->created, sizeof(r->created), "%s", row->created_utc);
	snprintf(r->machine, sizeof(r->machine), "%s", row->machine);
	snprintf(r->kernel, sizeof(r->kernel), "%s", row->kernel);
	snprintf(r->rev, sizeof(r->rev), "%s", row->git_rev);
	return 0;
}

static int got_header(void *arg, const char *const *col, int ncol)
{
	struct frun *r = arg;
	/* the run's header: a result file's top level without its results */
	struct rfile hdr = { .root = ncol > 0 && col[0] ? json_loads(col[0], 0, NULL) : NULL };
	struct env_info e;

	rfile_env(&hdr, &e);
	if (e.ipclab_git_rev[0])
		snprintf(r->rev, sizeof(r->rev), "%s", e.ipclab_git_rev);
	memcpy(r->canary, e.canary, sizeof(r->canary));
	json_decref(hdr.root);
	return 0;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Each run's state (its start canary, else its end's), and those more
 * than CANARY_RATIO_MAX from the fleet's lower median marked. */
static void out_of_line(struct fleet *fl)
{
	double v[FLEET_MAX_RUNS], med;
	size_t n = 0, ncl = 0;

	for (size_t i = 0; i < fl->n; i++)
		for (int k = 0; k < 2; k++)
			if (fl->r[i].canary[k].on && isfinite(fl->r[i].canary[k].cacheline_rtt_ns)) {
				ncl++;
				break;
			}
	for (size_t i = 0; i < fl->n; i++) {
		struct frun *r = &fl->r[i];

		r->state = NAN;
		for (int k = 1; k >= 0; k--) {
			double x = ncl ? r->canary[k].cacheline_rtt_ns : r->canary[k].pipe_rtt_ns;

			if (r->canary[k].on && isfinite(x) && x > 0)
				r->state = x;
		}
		r->cacheline = ncl > 0;
		if (isfinite(r->state))
			v[n++] = r->state;
	}
	if (n < 2)
		return;
	qsort(v, n, sizeof(*v), cmp_dbl);
	med = v[(n - 1) / 2];	/* the lower median: a state a run had, the faster of two */
	for (size_t i = 0; i < fl->n; i++)
		fl->r[i].out_of_line = isfinite(fl->r[i].state) &&
				       fmax(fl->r[i].state / med, med / fl->r[i].state) > CANARY_RATIO_MAX;
}

static bool machine_out(const struct fleet *fl, const char *m)
{
	for (size_t i = 0; i < fl->n; i++)
		if (fl->r[i].out_of_line && !strcmp(fl->r[i].machine, m))
			return true;
	return false;
}

static const char *pt_machine(const struct hpoint *p)
{
	const char *m = rec_label(p->labels, "machine");

	return m ? m : "";
}

/* Every machine of the cells, by name (the hosts view's order). */
static size_t machines_of(const struct history *h, const char **out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < h->n; i++)
		for (size_t j = 0; j < h->s[i].n; j++) {
			const char *m = pt_machine(&h->s[i].pts[j]);
			size_t k = 0;

			while (k < n && strcmp(out[k], m))
				k++;
			if (k == n && n < max)
				out[n++] = m;
		}
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && strverscmp(out[j - 1], out[j]) > 0; j--) {
			const char *t = out[j];

			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
}

static const struct hpoint *point_on(const struct hseries *s, const char *m)
{
	for (size_t j = 0; j < s->n; j++)
		if (!strcmp(pt_machine(&s->pts[j]), m))
			return &s->pts[j];
	return NULL;
}

static void runs_table(FILE *f, const struct fleet *fl)
{
	char buf[64];

	fputs("<section id=\"runs\"><h2>Runs</h2>\n<table><thead><tr><th>run</th><th>created (UTC)</th>"
	      "<th>machine</th><th>kernel</th><th>ipclab revision</th><th>canary</th><th></th></tr>"
	      "</thead><tbody>\n", f);
	for (size_t i = 0; i < fl->n; i++) {
		const struct frun *r = &fl->r[i];

		fprintf(f, "<tr><td>%" PRId64 "</td><td>", r->id);
		html_esc(f, r->created);
		fputs("</td><td>", f);
		html_esc(f, r->machine);
		fputs("</td><td>", f);
		html_esc(f, r->kernel);
		fputs("</td><td>", f);
		html_esc(f, r->rev[0] ? r->rev : "-");
		fputs("</td><td>", f);
		if (isfinite(r->state)) {
			fmt_ns(buf, sizeof(buf), r->state);
			html_escf(f, "%s RTT %s", r->cacheline ? "cache-line" : "pipe", buf);
		} else {
			fputs("-", f);
		}
		fprintf(f, "</td><td>%s</td></tr>\n",
			r->out_of_line ? "<strong>out of line: not read as a result</strong>" : "");
	}
	fputs("</tbody></table>\n", f);
	if (fl->full)
		fprintf(f, "<p>Only the first %d runs are listed.</p>\n", FLEET_MAX_RUNS);
	fprintf(f, "<p>A run whose canary is more than %.1fx from the fleet's (lower) median was measured in another state of its machine: it is shown, not read as a result.</p></section>\n",
		CANARY_RATIO_MAX);
}

/* Rows: cells; columns: machines; each cell's headline metric and its
 * ratio to the first machine. */
static void host_table(FILE *f, const struct history *h, const struct fleet *fl)
{
	const char *m[64];
	size_t nm = machines_of(h, m, 64);
	char a[32];

	fputs("<section id=\"hosts\"><h2>Hosts side by side</h2>\n<table><thead><tr><th>cell</th><th>metric</th>",
	      f);
	for (size_t k = 0; k < nm; k++) {
		fputs("<th>", f);
		html_esc(f, m[k]);
		if (machine_out(fl, m[k]))
			fputs("<br><strong>out of line: not read as a result</strong>", f);
		fputs("</th>", f);
	}
	fputs("</tr></thead><tbody>\n", f);
	for (size_t i = 0; i < h->n; i++) {
		const struct hseries *s = &h->s[i];

		fputs("<tr><td>", f);
		html_esc(f, s->label);
		fputs("</td><td>", f);
		html_esc(f, s->metric);
		fputs("</td>", f);
		for (size_t k = 0; k < nm; k++) {
			const struct hpoint *p = point_on(s, m[k]);

			fputs("<td>", f);
			if (p) {
				html_esc(f, history_fmt(a, sizeof(a), s->metric, p->value));
				if (isfinite(p->ratio))
					fprintf(f, " (x%.3f)", p->ratio);
				if (p->runs > 1)
					fprintf(f, " <small>%u runs</small>", p->runs);
			} else {
				fputs("-", f);
			}
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n<p>Each machine's median over its runs of the cell; the ratio is to the first machine by name.</p></section>\n",
	      f);
}

/* A figure of one metric: the cells along x, a bar per machine. */
static int metric_figure(struct html *hp, const struct history *h, const char *metric)
{
	const char *m[64], **cats = calloc(h->n + 1, sizeof(*cats));
	size_t nm = machines_of(h, m, 64);
	double *v = calloc((h->n + 1) * (nm + 1), sizeof(*v));
	char title[96];
	int ret = 0;

	if (!cats || !v) {
		free(cats);
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < h->n; i++) {
		cats[i] = h->s[i].label;
		for (size_t k = 0; k < nm; k++) {
			const struct hpoint *p = point_on(&h->s[i], m[k]);

			v[i * nm + k] = p ? p->value : NAN;
		}
	}
	snprintf(title, sizeof(title), "%s by machine", metric);
	struct svg_bars b = { .title = title, .caption = "each machine's median over its runs",
			      .ylabel = metric, .fd = field_find(metric), .cats = cats, .ncat = h->n,
			      .sers = m, .nser = nm, .v = v };

	if (h->n && nm)
		ret = svg_bars(hp, &b);
	free(cats);
	free(v);
	return ret;
}

static int load(struct history *h, const struct filter_args *fa, const char *metric,
		struct db *db, bool allow_empty)
{
	memset(h, 0, sizeof(*h));
	h->fa = *fa;
	h->metric = metric;
	h->by = "machine";
	h->format = "html";
	h->cmd = "report";
	h->allow_empty = allow_empty;
	cp_opts_defaults(&h->cp);
	return history_load(h, db);
}

static int page(FILE *f, struct fleet *fl, const struct history *head, const struct filter_args *fa,
		const char *title, struct db *db, char *err, size_t errlen)
{
	struct html_opts ho = { .title = title };
	struct html hp = { .f = f, .o = &ho, .err = err, .errlen = errlen };
	int ret = 0;

	hp.data = json_pack("{s:{}, s:s}", "figs", "generator", "ipclab " IPCLAB_VERSION);
	if (!hp.data)
		return errf(err, errlen, ENOMEM, "out of memory");
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"" CSP "\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta name=\"generator\" content=\"ipclab " IPCLAB_VERSION "\">\n<title>", f);
	html_esc(f, title ? title : "ipclab fleet report");
	fputs("</title>\n<style>\n", f);
	html_write_css(f);
	fputs("</style></head>\n<body>\n<header><h1>", f);
	html_esc(f, title ? title : "ipclab fleet report");
	fputs("</h1></header>\n", f);
	runs_table(f, fl);
	host_table(f, head, fl);
	fputs("<section id=\"figures\"><h2>Figures</h2>\n", f);
	for (const char *const *m = fig_metrics; !ret && *m; m++) {
		struct history h;

		ret = load(&h, fa, *m, db, true);
		if (!ret && metric_figure(&hp, &h, *m))
			ret = errf(err, errlen, ENOMEM, "out of memory");
		else if (ret)
			ret = errf(err, errlen, EIO, "reading %s from the store failed", *m);
		history_free(&h);
	}
	fputs("</section>\n", f);
	if (!ret && html_json_script(f, "ipclab-data", hp.data))
		ret = errf(err, errlen, ENOMEM, "out of memory writing the data block");
	if (!ret) {
		fputs("<script>\n", f);
		html_write_js(f);
		fputs("</script>\n</body></html>\n", f);
	}
	json_decref(hp.data);
	if (!ret && (fflush(f) || ferror(f)))
		ret = errf(err, errlen, EIO, "cannot write the page: %s", strerror(errno ? errno : EIO));
	return ret;
}

int report_fleet(const struct filter_args *fa, const char *output, const char *title)
{
	struct fleet fl = { .r = calloc(FLEET_MAX_RUNS, sizeof(struct frun)) };
	struct history head = { 0 };
	char err[ERRLEN] = "";
	struct output o;
	int ret;

	if (!fl.r)
		return cmd_usage_error("report", "out of memory");
	ret = db_cmd_open(fa->url, db_open_flags(false, fa->shared), "report", &fl.db);
	if (!ret)
		ret = load(&head, fa, NULL, fl.db, false);
	if (!ret && db_query_runs(fl.db, &fa->f, got_run, &fl, err, sizeof(err)))
		ret = say_error("report", "%s", err);
	for (size_t i = 0; !ret && i < fl.n; i++) {
		char id[24];
		const char *p[] = { id };

		snprintf(id, sizeof(id), "%" PRId64, fl.r[i].id);
		if (db_exec(fl.db, "SELECT header FROM ipclab_runs WHERE id = $1", p, 1, got_header,
			    &fl.r[i], err, sizeof(err)))
			ret = say_error("report", "%s", err);
	}
	out_of_line(&fl);
	if (!ret)
		ret = output_open(&o, output, "report");
	if (!ret) {
		ret = page(o.f, &fl, &head, fa, title, fl.db, err, sizeof(err));
		ret = output_commit(&o, ret, err);
	}
	db_close(fl.db);
	history_free(&head);
	free(fl.r);
	return ret;
}
