// SPDX-License-Identifier: MIT
/* ipclab history's figure in the figure model (figure.h): the stored runs
 * of one metric, a series per cell (and machine), or per cell across the
 * machines with --by machine. x is a point's place among all the figure's
 * points: the points of one run share it, so that cells measured together
 * line up; y is the metric in the field table's unit. Each change point is
 * a rule before its first point, saying the segments' means and the ratio;
 * the points of runs measured in another state of the machine (their
 * canaries) are marks of their own series. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/safe_print.h"
#include "changepoint.h"
#include "fields.h"
#include "figure.h"

#define MAX_TICKS 8
#define TICK_BYTES 24	/* a label's tick: cut at a character */

/* A point's place on x, and the text of its tick. */
struct place {
	const struct fig_hpoint *p;
	size_t pos;
};

static enum fig_hx order_of;

static int cmp_str(const char *a, const char *b, bool ver)
{
	if (!a || !b)
		return !a - !b;
	return ver ? strverscmp(a, b) : strcmp(a, b);
}

/* As history orders a series' points: by the label (missing last), the
 * time, the run; across machines by the machine's name alone. */
static int cmp_place(const void *a, const void *b)
{
	const struct fig_hpoint *x = ((const struct place *)a)->p, *y = ((const struct place *)b)->p;
	int c = order_of == FIG_HX_RUNS ? 0 : cmp_str(x->by, y->by, true);

	if (c || order_of == FIG_HX_MACHINE)
		return c;
	c = cmp_str(x->at, y->at, false);
	return c ? c : (x->run > y->run) - (x->run < y->run);
}

/* A tick's text: the date, the time of day when every run is of one day;
 * the label's value or the machine (cut at TICK_BYTES, at a character). */
static void tick_text(const struct fig_hin *in, const struct fig_hpoint *p, bool one_day, char *buf)
{
	const char *at = p->at ? p->at : "";
	const char *t = in->x != FIG_HX_RUNS && p->by ? p->by : NULL;

	if (t)
		snprintf(buf, FIG_LABEL, "%.*s", (int)utf8_cut(t, TICK_BYTES), t);
	else if (one_day && strlen(at) >= 19)
		snprintf(buf, FIG_LABEL, "%.*s", (int)utf8_cut(at + 11, 8), at + 11);
	else
		snprintf(buf, FIG_LABEL, "%.*s", (int)utf8_cut(at, 10), at);
}

/* The places of every point of the metric's series, in order; the
 * figure's cats are their ticks' texts, at most MAX_TICKS of them ticked. */
static int places(struct figure *f, const struct fig_hin *in, const char *metric,
		  struct place **out, size_t *np)
{
	size_t n = 0, k = 0;
	struct place *pl;
	bool one_day = true;
	const char *day = NULL;

	for (size_t i = 0; i < in->n; i++)
		n += !strcmp(in->s[i].metric, metric) ? in->s[i].n : 0;
	*np = n;
	if (!(*out = pl = calloc(n + 1, sizeof(*pl))))
		return -ENOMEM;
	for (size_t i = 0; i < in->n; i++)
		for (size_t j = 0; !strcmp(in->s[i].metric, metric) && j < in->s[i].n; j++) {
			const struct fig_hpoint *p = &in->s[i].pts[j];

			pl[k++].p = p;
			one_day &= p->at && (!day || !strncmp(day, p->at, 10));
			day = day ? day : p->at;
		}
	order_of = in->x;
	qsort(pl, n, sizeof(*pl), cmp_place);
	if (!(f->cats = calloc(n + 1, FIG_LABEL)))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (i && cmp_place(&pl[i - 1], &pl[i]))
			f->ncat++;
		pl[i].pos = f->ncat;
		if (!i || cmp_place(&pl[i - 1], &pl[i]))
			tick_text(in, pl[i].p, one_day, f->cats[f->ncat]);
	}
	f->ncat += n > 0;
	if (!(f->tick_at = calloc(MAX_TICKS + 1, sizeof(double))) ||
	    !(f->tick_text = calloc(MAX_TICKS + 1, sizeof(char *))))
		return -ENOMEM;
	for (size_t i = 0; i < f->ncat; i += f->ncat > MAX_TICKS ? (f->ncat + MAX_TICKS - 1) / MAX_TICKS : 1) {
		f->tick_at[f->x.nticks] = (double)i;
		f->tick_text[f->x.nticks++] = f->cats[i];
	}
	f->x.ticks = f->tick_at;
	f->x.tick_labels = f->tick_text;
	return 0;
}

/* A point's place: the points are in key order, one key one place. */
static size_t place_of(const struct place *pl, size_t n, const struct fig_hpoint *p)
{
	struct place key = { .p = p };
	const struct place *at = bsearch(&key, pl, n, sizeof(*pl), cmp_place);

	return at ? at->pos : 0;
}

/* y: the points and their intervals, 8 % of the range beside them; from 0
 * when that margin would cross it. */
static void y_range(struct figure *f, const struct fig_hin *in, const char *metric)
{
	double lo = INFINITY, hi = -INFINITY, pad;

	for (size_t i = 0; i < in->n; i++)
		for (size_t j = 0; !strcmp(in->s[i].metric, metric) && j < in->s[i].n; j++) {
			const struct fig_hpoint *p = &in->s[i].pts[j];

			if (!isfinite(p->value))
				continue;
			lo = fmin(lo, isfinite(p->lo) ? fmin(p->lo, p->value) : p->value);
			hi = fmax(hi, isfinite(p->hi) ? fmax(p->hi, p->value) : p->value);
		}
	if (!(lo <= hi))
		return;		/* none: the back end's default */
	if (!(hi > lo)) {
		lo -= fabs(lo) * 0.1 + 1;
		hi += fabs(hi) * 0.1 + 1;
	}
	pad = (hi - lo) * 0.08;
	f->y.lo = lo - pad < 0 && lo >= 0 ? 0 : lo - pad;
	f->y.hi = hi + pad;
}

static void value_text(const struct field *fd, double v, char *buf, size_t len)
{
	if (fd)
		field_human_num(fd, v, buf, len);
	else
		snprintf(buf, len, "%.4g", v);
}

static int grow_rules(struct figure *f)
{
	struct fig_rule *r = realloc(f->rules, (f->nrules + 1) * sizeof(*r));

	if (!r)
		return -ENOMEM;
	f->rules = r;
	return 0;
}

/* A rule before each change point's first point: "10us -> 20us (x2.00, p=0.004)". */
static int rules(struct figure *f, const struct fig_hseries *s, size_t series,
		 const struct place *pl, size_t np)
{
	for (size_t k = 0; k < s->ncp; k++) {
		const struct cp_change *c = &s->cp[k];
		struct fig_rule *r;
		char a[32], b[32];

		if (c->index < 1 || c->index >= s->n)
			continue;
		if (grow_rules(f))
			return -ENOMEM;
		r = &f->rules[f->nrules++];
		r->x = ((double)place_of(pl, np, &s->pts[c->index - 1]) +
			(double)place_of(pl, np, &s->pts[c->index])) / 2;
		r->series = series;
		value_text(f->y.fd, c->before, a, sizeof(a));
		value_text(f->y.fd, c->after, b, sizeof(b));
		snprintf(r->label, sizeof(r->label), "%s \xe2\x86\x92 %s (x%.2f, p=%.3f)", a, b, c->ratio,
			 c->p_value);
	}
	return 0;
}

static const char *x_label(const struct fig_hin *in, char *buf, size_t len)
{
	if (in->x == FIG_HX_MACHINE)
		return "machines by name: the median of each one's runs";
	if (in->x == FIG_HX_RUNS)
		return "runs, oldest first";
	snprintf(buf, len, "runs in the order of their label %s", in->by ? in->by : "");
	return buf;
}

int figure_history(struct figure *f, const struct fig_hin *in, const char *metric)
{
	const struct field *fd = field_find(metric);
	struct fig_series *marks = NULL;
	struct place *pl = NULL;
	size_t np = 0, nmarks = 0;
	int ret;

	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "history-%s", metric);
	f->kind = FIG_POINTS;
	f->caption = in->x == FIG_HX_MACHINE ?
		"each point the median of a machine's runs, with the range of their values (one run: its 95 % interval)" :
		"each point a run, with its 95 % interval where it has one; a dashed rule: a change point, the means before and after it";
	f->x = (struct fig_axis){ .key = "place" };
	f->x.label = x_label(in, f->axis_text, sizeof(f->axis_text));
	/* the axis: the table's short header ("p50", "msgs/s"); the title: what it is */
	f->y = (struct fig_axis){ .label = fd ? fd->label : metric, .key = metric, .fd = fd };
	snprintf(f->title, sizeof(f->title), "%s (%s)%s", fd && fd->doc ? fd->doc : metric, metric,
		 in->x == FIG_HX_MACHINE ? " across machines" : " across stored runs");
	ret = places(f, in, metric, &pl, &np);
	if (!ret)
		y_range(f, in, metric);
	f->x.lo = -0.5;
	f->x.hi = (double)f->ncat - 0.5;
	for (size_t i = 0; !ret && i < in->n; i++) {
		const struct fig_hseries *hs = &in->s[i];
		struct fig_series *s;

		if (strcmp(hs->metric, metric) || !hs->n)
			continue;
		if (!(s = figure_series(f, hs->label)))
			break;
		for (size_t j = 0; !ret && j < hs->n; j++) {
			const struct fig_hpoint *p = &hs->pts[j];

			ret = figure_point_more(s, (double)place_of(pl, np, p), p->value, p->lo, p->hi,
						p->tip);
			nmarks += p->state && p->state[0];
		}
		if (!ret)
			ret = rules(f, hs, f->ns - 1, pl, np);
	}
	/* the marks: a series of their own, drawn over the others */
	if (!ret && nmarks && (marks = figure_series(f, "another state of the machine"))) {
		marks->marks = true;
		for (size_t i = 0; !ret && i < in->n; i++)
			for (size_t j = 0; !ret && !strcmp(in->s[i].metric, metric) && j < in->s[i].n; j++) {
				const struct fig_hpoint *p = &in->s[i].pts[j];
				char tip[FIG_LABEL + 96];

				if (!p->state || !p->state[0])
					continue;
				snprintf(tip, sizeof(tip), "%s: %s", in->s[i].label, p->state);
				ret = figure_point_more(marks, (double)place_of(pl, np, p), p->value, NAN,
							NAN, tip);
			}
	}
	free(pl);
	return ret;
}
