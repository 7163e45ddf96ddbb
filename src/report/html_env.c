// SPDX-License-Identifier: MIT
/* The machine and the comparison in the HTML report: each file's env (the
 * keys `ipclab env` shows), what differs between the files' machines (the
 * env diff ipclab compare computes), and for two files the compare view:
 * per cell and metric both values, the ratio with its interval where the
 * files hold one, and compare's verdict. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/util.h"
#include "compare.h"
#include "html.h"
#include "rec_env.h"

#define MAX_KEYS 256		/* of an env shown (ipclab writes about 40) */

static void file_head(struct html *h, const struct rfile *rf)
{
	const char *when = rfile_created(rf), *cmd = rfile_cmdline(rf), *ver = rfile_version(rf);

	fputs("<p class=\"file\">", h->f);
	html_esc(h->f, rf->path);
	fputs(": ", h->f);
	html_escf(h->f, "%s, ipclab %s", when ? when : "undated", ver ? ver : "?");
	if (cmd) {
		fputs("<br><code>", h->f);
		html_esc(h->f, cmd);
		fputs("</code>", h->f);
	}
	fputs("</p>\n", h->f);
}

static void env_table(struct html *h, const json_t *env)
{
	const char *k;
	json_t *v;
	size_t n = 0;

	if (!json_is_object(env))
		return;
	fputs("<div class=\"tw\"><table class=\"env\"><tbody>\n", h->f);
	json_object_foreach((json_t *)env, k, v) {
		char val[1024];

		if (n++ == MAX_KEYS)
			break;
		html_json_text(v, val, sizeof(val));
		fputs("<tr>", h->f);
		html_elem(h->f, "th", NULL, k);
		html_elem(h->f, "td", NULL, val);
		fputs("</tr>\n", h->f);
	}
	fputs("</tbody></table></div>\n", h->f);
}

static void warnings(struct html *h, const struct rfile *rf)
{
	struct env_info e;

	if (!rfile_env(rf, &e) || !e.nwarnings)
		return;
	fputs("<ul class=\"warn\">", h->f);
	for (unsigned i = 0; i < e.nwarnings; i++)
		html_elem(h->f, "li", NULL, e.warnings[i]);
	fputs("</ul>\n", h->f);
}

static void diff_table(struct html *h, const struct cmp_env_diff *d, const char *a, const char *b)
{
	char va[512], vb[512];

	if (!d->present)
		return;
	if (!d->n) {
		fputs("<p>No difference between ", h->f);
		html_escf(h->f, "%s and %s", a, b);
		fputs(" (load and clock readings aside).</p>\n", h->f);
		return;
	}
	fputs("<div class=\"tw\"><table class=\"diff\"><thead><tr><th>key</th>", h->f);
	html_elem(h->f, "th", NULL, a);
	html_elem(h->f, "th", NULL, b);
	fputs("</tr></thead><tbody>\n", h->f);
	for (size_t k = 0; k < d->n; k++) {
		html_json_text(d->a[k], va, sizeof(va));
		html_json_text(d->b[k], vb, sizeof(vb));
		fputs("<tr>", h->f);
		html_elem(h->f, "th", NULL, d->key[k]);
		html_elem(h->f, "td", NULL, va);
		html_elem(h->f, "td", NULL, vb);
		fputs("</tr>\n", h->f);
	}
	fputs("</tbody></table></div>\n", h->f);
}

void html_env(struct html *h, const struct rfile *const *files, size_t n)
{
	fputs("<section id=\"env\"><h2>Machine</h2>\n", h->f);
	for (size_t i = 0; i < n; i++) {
		const json_t *env = rfile_env_json(files[i]);
		const json_t *renv = rfile_remote_env_json(files[i]);

		file_head(h, files[i]);
		warnings(h, files[i]);
		fputs("<details><summary>env of ", h->f);
		html_esc(h->f, files[i]->path);
		fputs("</summary>\n", h->f);
		env_table(h, env);
		fputs("</details>\n", h->f);
		if (renv) {
			struct cmp_env_diff d;

			fputs("<h3>--peer: this host against the server host</h3>\n", h->f);
			cmp_env_diff(env, renv, &d);
			diff_table(h, &d, "client", "server");
		}
	}
	for (size_t i = 1; i < n; i++) {
		struct cmp_env_diff d;

		fputs("<h3>What differs between the machines</h3>\n", h->f);
		cmp_env_diff(rfile_env_json(files[0]), rfile_env_json(files[i]), &d);
		diff_table(h, &d, files[0]->path, files[i]->path);
	}
	fputs("</section>\n", h->f);
}

/* ---- compare ------------------------------------------------------------------ */

static void value_text(unsigned m, double v, char *buf, size_t len)
{
	const struct field *fd = field_find(cmp_metric(m)->key);

	if (fd)
		html_value_text(fd, v, buf, len);
	else
		snprintf(buf, len, isnan(v) ? "-" : "%.4g", v);
}

/* The ratio's range from the two cells' intervals (ci95) or spreads. */
static bool ratio_range(const struct cmp_row *row, const char *key, double *lo, double *hi,
			const char **what)
{
	double alo, ahi, blo, bhi, sp;

	if (rec_ci95(row->before->obj, key, &alo, &ahi) && rec_ci95(row->after->obj, key, &blo, &bhi)) {
		*what = "from the 95 % intervals";
	} else if (rcell_spread(row->before, key, &alo, &ahi, &sp) &&
		   rcell_spread(row->after, key, &blo, &bhi, &sp)) {
		*what = "from min and max";
	} else {
		return false;
	}
	if (!(alo > 0) || !(ahi > 0))
		return false;
	*lo = blo / ahi;
	*hi = bhi / alo;
	return isfinite(*lo) && isfinite(*hi);
}

static const char *verdict(unsigned m, const struct cmp_value *v, char *buf, size_t len)
{
	bool better = cmp_metric(m)->higher_better ? v->after > v->before : v->after < v->before;

	if (isnan(v->change_pct))
		snprintf(buf, len, "-");
	else if (v->spread == CMP_WITHIN)
		snprintf(buf, len, "within spread");
	else if (v->after == v->before)
		snprintf(buf, len, "same");
	else
		snprintf(buf, len, "%s%s", better ? "better" : "worse",
			 v->spread == CMP_BEYOND ? ", beyond spread" : "");
	return better ? "better" : "worse";
}

static void compare_metric(struct html *h, const struct cmp_row *row, unsigned m)
{
	const struct cmp_value *v = &row->v[m];
	char b[48], a[48], vd[64];
	const char *cls = verdict(m, v, vd, sizeof(vd)), *what;
	double lo, hi;

	value_text(m, v->before, b, sizeof(b));
	value_text(m, v->after, a, sizeof(a));
	fputs("<tr>", h->f);
	html_elem(h->f, "td", NULL, cmp_metric(m)->label);
	html_elem(h->f, "td", "num", b);
	html_elem(h->f, "td", "num", a);
	if (isnan(v->ratio))
		fputs("<td class=\"num\">-</td>", h->f);
	else
		fprintf(h->f, "<td class=\"num\" data-v=\"%.6g\">%.3f</td>", v->ratio, v->ratio);
	if (ratio_range(row, cmp_metric(m)->key, &lo, &hi, &what)) {
		fprintf(h->f, "<td class=\"num\" title=\"%s\">%.3f &ndash; %.3f</td>", what, lo, hi);
	} else {
		fputs("<td class=\"num\" title=\"no --repeat data\">-</td>", h->f);
	}
	fprintf(h->f, "<td class=\"v-%s\">", v->spread == CMP_WITHIN || isnan(v->change_pct) ||
		v->after == v->before ? "same" : cls);
	html_esc(h->f, vd);
	fputs("</td></tr>\n", h->f);
}

static void compare_row(struct html *h, const struct cmp_row *row)
{
	fputs("<tbody><tr class=\"grp\"><th colspan=\"6\">", h->f);
	html_esc(h->f, row->label);
	fputs("</th></tr>\n", h->f);
	if (!row->comparable) {
		const struct rcell *c = row->before->ok ? row->after : row->before;
		const char *st = rec_status(c->obj);

		fputs("<tr><td colspan=\"6\" class=\"why\">", h->f);
		html_escf(h->f, "not compared: %s %s", c == row->before ? "before" : "after",
			  st ? st : "?");
		fputs("</td></tr></tbody>\n", h->f);
		return;
	}
	for (unsigned m = 0; m < CMP_NMETRICS; m++)
		compare_metric(h, row, m);
	fputs("</tbody>\n", h->f);
}

static void only_list(struct html *h, const char *which, const struct rfile *rf,
		      char (*labels)[256], size_t n)
{
	if (!n)
		return;
	fputs("<p>Only in ", h->f);
	html_escf(h->f, "%s (%s)", which, rf->path);
	fputs(", not compared:</p><ul>", h->f);
	for (size_t i = 0; i < n; i++)
		html_elem(h->f, "li", NULL, labels[i]);
	fputs("</ul>\n", h->f);
}

void html_compare(struct html *h, const struct rfile *a, const struct rfile *b)
{
	struct cmp_opts o = { .fail_above_pct = NAN, .metric_mask = (1u << CMP_NMETRICS) - 1 };
	struct cmp_result r;

	fputs("<section id=\"compare\"><h2>Compare</h2>\n<p>before: ", h->f);
	html_esc(h->f, a->path);
	fputs("<br>after: ", h->f);
	html_esc(h->f, b->path);
	fputs("</p>\n", h->f);
	if (compare_files(a, b, &o, &r)) {
		fputs("<p>out of memory</p></section>\n", h->f);
		return;
	}
	fputs("<p class=\"legend-text\">ratio = after / before; its range from the cells' intervals "
	      "(or min and max) where --repeat gave them; a verdict within the run-to-run spread "
	      "is no change.</p>\n<div class=\"tw\"><table class=\"cmp\"><thead><tr><th>metric</th>"
	      "<th>before</th><th>after</th><th>ratio</th><th>ratio range</th><th>verdict</th></tr>"
	      "</thead>\n", h->f);
	for (size_t i = 0; i < r.nrows; i++)
		compare_row(h, &r.rows[i]);
	fputs("</table></div>\n", h->f);
	only_list(h, "before", a, r.only_before_label, r.nonly_before);
	only_list(h, "after", b, r.only_after_label, r.nonly_after);
	compare_free(&r);
	fputs("</section>\n", h->f);
}
