// SPDX-License-Identifier: MIT
/* --trace and --profile in the HTML report: each traced side's time budget
 * as stacked bars (user, kernel, runnable, preempted, asleep: the five add
 * up to its window), the cause split (html_cause.c), the ping-pong
 * critical path, the per-message counts, what preempted the endpoints and
 * --explain's verdict (html_cause.c), and whatever else the tracer
 * recorded as tables; for a profiled cell each side's top functions and
 * its flame graph. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/util.h"
#include "html_svg.h"

#define MAX_ROWS 128

static const char *const budget_keys[] = { "user_ns", "sys_ns", "runnable_ns", "preempted_ns",
					   "sleep_ns" };
static const char *const budget_names[] = { "user", "kernel", "runnable (woken, waiting)",
					    "preempted", "asleep" };
static const char *const cpath_keys[] = { "client_user", "client_kernel", "server_wakeup",
					  "server_user", "server_kernel", "client_wakeup",
					  "unattributed" };
/* what the generic tables below need not repeat */
static const char *const trace_known[] = { "sides", "per_msg", "sys_from", "critical_path_ns",
					   "lost_events", "complete", "perturbation",
					   "perturbation_of", "cause", "explain", NULL };
static const char *const side_known[] = { "role", "id", "wakeup_lat_ns", "top_syscalls",
					  "preempted_by", NULL };

static double num(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static void side_name(const json_t *s, char *buf, size_t len)
{
	const char *role = json_string_value(json_object_get(s, "role"));
	double id = num(s, "id");

	if (role && !strcmp(role, "server"))
		snprintf(buf, len, "server");
	else
		snprintf(buf, len, "client %.0f", isnan(id) ? 0 : id);
}

static bool known(const char *const *list, const char *k)
{
	for (; *list; list++)
		if (!strcmp(*list, k))
			return true;
	return false;
}

/* Any JSON the report has no drawing for, as a table: an object's keys,
 * an array of objects as rows. Strings are escaped like all others. */
static void json_table(struct html *h, const char *title, const json_t *v)
{
	char t[512];
	const char *k;
	json_t *x;
	size_t i;

	html_elem(h->f, "h5", NULL, title);
	fputs("<div class=\"tw\"><table class=\"kv\"><tbody>\n", h->f);
	if (json_is_object(v)) {
		i = 0;
		json_object_foreach((json_t *)v, k, x) {
			if (i++ == MAX_ROWS)
				break;
			html_json_text(x, t, sizeof(t));
			fputs("<tr>", h->f);
			html_elem(h->f, "th", NULL, k);
			html_elem(h->f, "td", NULL, t);
			fputs("</tr>\n", h->f);
		}
	} else if (json_is_array(v)) {
		json_array_foreach((json_t *)v, i, x) {
			if (i >= MAX_ROWS)
				break;
			html_json_text(x, t, sizeof(t));
			fputs("<tr>", h->f);
			html_elem(h->f, "td", NULL, t);
			fputs("</tr>\n", h->f);
		}
	} else {
		html_json_text(v, t, sizeof(t));
		fputs("<tr>", h->f);
		html_elem(h->f, "td", NULL, t);
		fputs("</tr>\n", h->f);
	}
	fputs("</tbody></table></div>\n", h->f);
}

/* ---- the view's budgets and critical paths --------------------------------------- */

struct rows {
	char (*label)[HTML_LABEL];
	const char *ptr[MAX_ROWS];
	double *v;
	size_t n;
};

static int rows_alloc(struct rows *r, size_t nparts)
{
	r->n = 0;
	r->label = calloc(MAX_ROWS, HTML_LABEL);
	r->v = calloc(MAX_ROWS * nparts, sizeof(double));
	for (size_t i = 0; r->label && i < MAX_ROWS; i++)
		r->ptr[i] = r->label[i];
	return r->label && r->v ? 0 : -ENOMEM;
}

static void rows_free(struct rows *r)
{
	free(r->label);
	free(r->v);
}

static void budgets(struct html *h, const struct html_view *v)
{
	struct rows r;

	if (rows_alloc(&r, ARRAY_SIZE(budget_keys)))
		goto out;
	for (size_t i = 0; i < v->n; i++) {
		const json_t *sides = json_object_get(json_object_get(v->cells[i]->obj, "trace"), "sides"), *s;
		char lab[HTML_LABEL], side[32];
		size_t k;

		html_label(v, v->cells[i], NULL, lab, sizeof(lab));
		json_array_foreach(sides, k, s) {
			if (r.n == MAX_ROWS)
				break;
			side_name(s, side, sizeof(side));
			snprintf(r.label[r.n], HTML_LABEL, "%.150s: %s", lab, side);
			for (size_t p = 0; p < ARRAY_SIZE(budget_keys); p++)
				r.v[r.n * ARRAY_SIZE(budget_keys) + p] = num(s, budget_keys[p]);
			r.n++;
		}
	}
	struct svg_stack c = {
		.title = "time budget of each side over its window", .parts = budget_names,
		.nparts = ARRAY_SIZE(budget_names), .rows = r.ptr, .nrows = r.n, .v = r.v,
		.percent = true, .fd = field_find("elapsed_ns"), .unit_label = "% of the side's window",
		.caption = "from the scheduler's events (--trace): running in user space and in the kernel, woken but not yet running, runnable after a preemption, blocked",
	};

	svg_stack(h, &c);
out:
	rows_free(&r);
}

static void critical_paths(struct html *h, const struct html_view *v)
{
	struct rows r;

	if (rows_alloc(&r, ARRAY_SIZE(cpath_keys)))
		goto out;
	for (size_t i = 0; i < v->n && r.n < MAX_ROWS; i++) {
		const json_t *cp = json_object_get(json_object_get(v->cells[i]->obj, "trace"),
						   "critical_path_ns");
		char lab[HTML_LABEL], tot[32], mea[32];

		if (!json_is_object(cp))
			continue;
		html_label(v, v->cells[i], NULL, lab, sizeof(lab));
		fmt_ns(tot, sizeof(tot), num(cp, "total"));
		fmt_ns(mea, sizeof(mea), num(cp, "measured"));
		snprintf(r.label[r.n], HTML_LABEL, "%.120s (%s of %s)", lab, tot, mea);
		for (size_t p = 0; p < ARRAY_SIZE(cpath_keys); p++)
			r.v[r.n * ARRAY_SIZE(cpath_keys) + p] = num(cp, cpath_keys[p]);
		r.n++;
	}
	struct svg_stack c = {
		.title = "critical path of a round trip", .parts = cpath_keys,
		.nparts = ARRAY_SIZE(cpath_keys), .rows = r.ptr, .nrows = r.n, .v = r.v,
		.fd = field_find("lat_mean_ns"), .unit_label = "ns per exchange",
		.caption = "ping-pong with one client, per exchange: where the round trip goes, against the measured mean",
	};

	svg_stack(h, &c);
out:
	rows_free(&r);
}

/* ---- one traced cell's numbers ---------------------------------------------------- */

static void per_msg(struct html *h, const json_t *tr)
{
	const json_t *pm = json_object_get(tr, "per_msg");
	const char *of = json_string_value(json_object_get(tr, "perturbation_of"));
	double pert = num(tr, "perturbation");
	const char *k;
	json_t *x;

	fputs("<p class=\"pm\">per message:", h->f);
	json_object_foreach((json_t *)pm, k, x) {
		fputs(" ", h->f);
		html_esc(h->f, k);
		if (json_is_number(x))
			fprintf(h->f, " %.3g;", json_number_value(x));
		else
			fputs(" -;", h->f);
	}
	if (!isnan(pert))
		html_escf(h->f, " traced/untraced %.2fx (%s)", pert, of ? of : "?");
	if (json_is_false(json_object_get(tr, "complete")))
		fprintf(h->f, " <span class=\"badge inc\">INCOMPLETE: %.0f events lost</span>",
			num(tr, "lost_events"));
	fputs("</p>\n", h->f);
}

static void side_table(struct html *h, const json_t *sides)
{
	const json_t *s;
	size_t i;

	fputs("<div class=\"tw\"><table class=\"kv\"><thead><tr><th>side</th><th>wakeups</th>"
	      "<th>woken p50</th><th>woken p99</th><th>migrations</th><th>ctx switches (vol/invol)</th>"
	      "<th>top syscalls</th><th>more</th></tr></thead><tbody>\n", h->f);
	json_array_foreach((json_t *)sides, i, s) {
		const json_t *wl = json_object_get(s, "wakeup_lat_ns"), *top = json_object_get(s, "top_syscalls"), *t;
		char name[32], a[32], b[32], more[512] = "";
		size_t k, off = 0;
		const char *key;
		json_t *x;

		side_name(s, name, sizeof(name));
		fmt_ns(a, sizeof(a), num(wl, "p50"));
		fmt_ns(b, sizeof(b), num(wl, "p99"));
		fputs("<tr>", h->f);
		html_elem(h->f, "td", NULL, name);
		fprintf(h->f, "<td class=\"num\">%.0f</td><td class=\"num\">%s</td><td class=\"num\">%s</td>"
			"<td class=\"num\">%.0f</td><td class=\"num\">%.0f/%.0f</td><td>", num(s, "wakeups"),
			wl ? a : "-", wl ? b : "-", num(s, "migrations"), num(s, "vol_ctx_switches"),
			num(s, "invol_ctx_switches"));
		json_array_foreach((json_t *)top, k, t) {
			const char *sc = json_string_value(json_object_get(t, "name"));

			html_escf(h->f, "%s%s %.0f", k ? ", " : "", sc ? sc : "?", num(t, "count"));
		}
		fputs("</td><td>", h->f);
		json_object_foreach((json_t *)s, key, x)
			if (!known(side_known, key) && (json_is_object(x) || json_is_array(x)) &&
			    off < sizeof(more)) {
				char t2[256];

				html_json_text(x, t2, sizeof(t2));
				off += (size_t)snprintf(more + off, sizeof(more) - off, "%s%s: %s",
							off ? "; " : "", key, t2);
			}
		html_esc(h->f, more);
		fputs("</td></tr>\n", h->f);
	}
	fputs("</tbody></table></div>\n", h->f);
}

static void trace_cell(struct html *h, const struct html_view *v, const struct rcell *c)
{
	const json_t *tr = json_object_get(c->obj, "trace");
	char lab[HTML_LABEL];
	const char *k;
	json_t *x;

	html_label(v, c, NULL, lab, sizeof(lab));
	fputs("<details class=\"cell\"><summary>", h->f);
	html_esc(h->f, lab);
	fputs("</summary>\n", h->f);
	per_msg(h, tr);
	html_cause_text(h, tr);
	side_table(h, json_object_get(tr, "sides"));
	html_preempted_by(h, tr);
	html_explain(h, tr);
	json_object_foreach((json_t *)tr, k, x)
		if (!known(trace_known, k) && !json_is_null(x))
			json_table(h, k, x);
	fputs("</details>\n", h->f);
}

void html_traces(struct html *h, const struct html_view *v)
{
	size_t n = 0;

	for (size_t i = 0; i < v->n; i++)
		n += json_is_object(json_object_get(v->cells[i]->obj, "trace"));
	if (!n)
		return;
	fprintf(h->f, "<section class=\"trace\" id=\"%s-trace\"><h3>Trace</h3>\n", v->idp);
	budgets(h, v);
	html_cause_split(h, v);
	critical_paths(h, v);
	for (size_t i = 0; i < v->n; i++)
		if (json_is_object(json_object_get(v->cells[i]->obj, "trace")))
			trace_cell(h, v, v->cells[i]);
	fputs("</section>\n", h->f);
}

/* ---- profiles ------------------------------------------------------------------ */

static void top_table(struct html *h, const json_t *side)
{
	const json_t *top = json_object_get(side, "top"), *t;
	char name[32];
	size_t i;

	side_name(side, name, sizeof(name));
	fputs("<div class=\"tw\"><table class=\"top sortable\"><caption>", h->f);
	html_escf(h->f, "%s: %.0f samples, %.0f in the kernel", name, num(side, "samples"),
		  num(side, "kernel_samples"));
	fputs("</caption><thead><tr><th data-k=\"n\">samples</th><th data-k=\"n\">%</th>"
	      "<th>symbol</th><th>object</th></tr></thead><tbody>\n", h->f);
	json_array_foreach((json_t *)top, i, t) {
		const char *sym = json_string_value(json_object_get(t, "symbol"));

		if (i == MAX_ROWS)
			break;
		const char *obj = json_string_value(json_object_get(t, "object"));

		/* plain numbers: the script sorts them by their text */
		fprintf(h->f, "<tr><td class=\"num\">%.0f</td><td class=\"num\">%.2f</td>",
			num(t, "samples"), num(t, "pct"));
		html_elem(h->f, "td", "sym", sym ? sym : "?");
		html_elem(h->f, "td", NULL, obj ? obj : "?");
		fputs("</tr>\n", h->f);
	}
	fputs("</tbody></table></div>\n", h->f);
}

static void profile_cell(struct html *h, const struct html_view *v, const struct rcell *c)
{
	const json_t *pr = json_object_get(c->obj, "profile"), *run = json_object_get(c->obj, "profile_run");
	const char *why = json_string_value(json_object_get(run, "kernel_symbols_why"));
	char lab[HTML_LABEL];
	const json_t *s;
	size_t i;

	html_label(v, c, NULL, lab, sizeof(lab));
	fputs("<details class=\"cell\" open><summary>", h->f);
	html_esc(h->f, lab);
	fputs("</summary>\n<p class=\"pm\">", h->f);
	html_escf(h->f, "%.0f Hz", num(run, "hz"));
	if (!isnan(num(run, "perturbation")))
		html_escf(h->f, ", profiled/unprofiled %.2fx", num(run, "perturbation"));
	if (json_is_false(json_object_get(run, "complete")))
		fprintf(h->f, " <span class=\"badge inc\">INCOMPLETE: %.0f samples lost</span>",
			num(run, "lost_samples"));
	if (why) {
		fputs("; kernel frames unnamed: ", h->f);
		html_esc(h->f, why);
	}
	fputs("</p>\n<div class=\"sides\">", h->f);
	json_array_foreach((json_t *)pr, i, s)
		top_table(h, s);
	fputs("</div>\n", h->f);
	json_array_foreach((json_t *)pr, i, s)
		html_flame(h, v, c, (unsigned)i);
	fputs("</details>\n", h->f);
}

void html_profiles(struct html *h, const struct html_view *v)
{
	size_t n = 0;

	for (size_t i = 0; i < v->n; i++)
		n += json_is_array(json_object_get(v->cells[i]->obj, "profile"));
	if (!n)
		return;
	fprintf(h->f, "<section class=\"profile\" id=\"%s-profile\"><h3>Profile</h3>\n", v->idp);
	for (size_t i = 0; i < v->n; i++)
		if (json_is_array(json_object_get(v->cells[i]->obj, "profile")))
			profile_cell(h, v, v->cells[i]);
	fputs("</section>\n", h->f);
}
