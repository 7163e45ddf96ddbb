// SPDX-License-Identifier: MIT
/* A figure of figure.c as inline SVG in the HTML page, drawn by html_svg.c
 * (lines, steps, markers) and html_svg_more.c (clustered bars): the
 * figure's axes become the chart's, its series the chart's, its text goes
 * through html_esc there. Ticks and values are in the field table's units,
 * scaled per value (ns, us, ms): the page has no need of one fixed unit. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "figure.h"
#include "html_svg.h"

static struct svg_axis svg_axis_of(const struct fig_axis *a)
{
	return (struct svg_axis){ .lo = a->lo, .hi = a->hi, .log = a->log, .fd = a->fd,
				  .label = a->label, .from_zero = a->from_zero,
				  .percentile = a->percentile, .ticks = a->ticks,
				  .tick_labels = a->tick_labels, .nticks = a->nticks };
}

/* The caption, and what was left out. */
static const char *caption_of(const struct figure *f, char *buf, size_t len)
{
	if (!f->note[0])
		return f->caption;
	snprintf(buf, len, "%s%s%s", f->caption ? f->caption : "", f->caption ? "; " : "", f->note);
	return buf;
}

static int svg_lines(struct html *h, const struct figure *f)
{
	struct svg_series *s = calloc(f->ns, sizeof(*s));
	char cap[320];
	int ret;

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < f->ns; i++) {
		snprintf(s[i].label, sizeof(s[i].label), "%s", f->s[i].label);
		s[i].x = f->s[i].x;
		s[i].y = f->s[i].y;
		s[i].n = f->s[i].n;
		s[i].steps = f->kind == FIG_STEPS;
		s[i].points = f->kind == FIG_POINTS;
	}
	struct svg_xy c = { .title = f->title, .caption = caption_of(f, cap, sizeof(cap)), .s = s,
			    .ns = f->ns, .hline = NAN, .x = svg_axis_of(&f->x),
			    .y = svg_axis_of(&f->y) };

	ret = svg_xy(h, &c);
	free(s);
	return ret;
}

/* Bars: [category * series + series] from each series' y at the category. */
static int svg_bars_of(struct html *h, const struct figure *f)
{
	const char **cats = calloc(f->ncat + 1, sizeof(*cats)), **sers = calloc(f->ns, sizeof(*sers));
	double *v = calloc(f->ncat * f->ns + 1, sizeof(*v));
	char cap[320];
	int ret = -ENOMEM;

	if (cats && sers && v) {
		for (size_t a = 0; a < f->ncat; a++)
			cats[a] = f->cats[a];
		for (size_t b = 0; b < f->ns; b++) {
			sers[b] = f->s[b].label;
			for (size_t a = 0; a < f->ncat; a++)
				v[a * f->ns + b] = a < f->s[b].n ? f->s[b].y[a] : NAN;
		}
		struct svg_bars c = { .title = f->title, .caption = caption_of(f, cap, sizeof(cap)),
				      .ylabel = f->y.label, .fd = f->y.fd, .cats = cats,
				      .ncat = f->ncat, .sers = sers, .nser = f->ns, .v = v };

		ret = svg_bars(h, &c);
	}
	free(cats);
	free(sers);
	free(v);
	return ret;
}

int fig_svg(struct html *h, const struct figure *f)
{
	if (!f->ns)
		return 0;
	return f->kind == FIG_BARS ? svg_bars_of(h, f) : svg_lines(h, f);
}
