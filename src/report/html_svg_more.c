// SPDX-License-Identifier: MIT
/* The other charts of the HTML report as inline SVG: clustered bars (CPU
 * per message), stacked horizontal bars (a side's time budget, a critical
 * path, a stage's wait and busy); the heatmap is fig_svg.c's. Every bar
 * carries a <title> with its label and value: the browser shows it on
 * hover, with or without script. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/util.h"
#include "fields.h"
#include "html_svg.h"

static void value_text(const struct field *fd, double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (fd)
		field_human_num(fd, v, buf, len);
	else
		snprintf(buf, len, "%.4g", v);
}

/* A 1, 2 or 5 times a power of ten near range/5 (as html_svg.c's). */
static double nice_step(double range)
{
	double raw = range / 5, p = pow(10, floor(log10(raw))), m = raw / p;

	return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

/* ---- clustered bars ------------------------------------------------------ */

#define BW 760
#define BH 360
#define BL 78
#define BT 16
#define BB 90

static double bars_max(const struct svg_bars *c)
{
	double hi = 0;

	for (size_t i = 0; i < c->ncat * c->nser; i++)
		if (isfinite(c->v[i]))
			hi = fmax(hi, c->v[i]);
	hi *= 1.08;
	return hi > 0 && isfinite(hi) ? hi : 1;
}

static void bars_axis(struct html *h, const struct svg_bars *c, double hi)
{
	struct svg_axis a = { .lo = 0, .hi = hi, .fd = c->fd };
	double step = nice_step(hi);
	char t[48];

	fprintf(h->f, "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n", BL, BT,
		BW - BL - 18, BH - BT - BB);
	for (double v = 0; v <= hi && v < 12 * step; v += step) {
		double y = BH - BB - v / hi * (BH - BT - BB);

		svg_value_text(&a, v, t, sizeof(t));
		fprintf(h->f, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>"
			"<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", BL, BW - 18, y, y,
			BL - 6, y + 4);
		html_esc(h->f, t);
		fputs("</text>\n", h->f);
	}
	fprintf(h->f, "<text class=\"alabel\" transform=\"translate(16 %d) rotate(-90)\" "
		"text-anchor=\"middle\">", (BH - BB + BT) / 2);
	html_esc(h->f, c->ylabel);
	fputs("</text>\n", h->f);
}

int svg_bars(struct html *h, const struct svg_bars *c)
{
	double hi = bars_max(c), gw = (double)(BW - BL - 18) / (double)(c->ncat ? c->ncat : 1);
	double bw = gw * 0.8 / (double)(c->nser ? c->nser : 1);
	char id[32], t[48];

	if (!c->ncat || !c->nser)
		return 0;
	html_new_id(h, "fig", id, sizeof(id));
	svg_figure_begin(h, id, c->title, BW, BH);
	bars_axis(h, c, hi);
	for (size_t s = 0; s < c->nser; s++) {
		fprintf(h->f, "<g class=\"s c%zu\" data-s=\"%zu\"><title>", s % 10, s);
		html_esc(h->f, c->sers[s]);
		fputs("</title>", h->f);
		for (size_t k = 0; k < c->ncat; k++) {
			double v = c->v[k * c->nser + s], bh;

			if (!isfinite(v))
				continue;
			bh = v / hi * (BH - BT - BB);
			value_text(c->fd, v, t, sizeof(t));
			fprintf(h->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>",
				BL + gw * (double)k + gw * 0.1 + bw * (double)s, BH - BB - bh, bw, bh);
			html_escf(h->f, "%s, %s: %s", c->cats[k], c->sers[s], t);
			fputs("</title></rect>", h->f);
		}
		fputs("</g>\n", h->f);
	}
	for (size_t k = 0; k < c->ncat; k++) {
		double x = BL + gw * ((double)k + 0.5);

		fprintf(h->f, "<text class=\"tick\" transform=\"translate(%.1f %d) rotate(30)\">", x,
			BH - BB + 14);
		html_escn(h->f, c->cats[k], 40);
		fputs("</text>\n", h->f);
	}
	fputs("</svg>\n", h->f);
	svg_legend(h, id, c->sers, c->nser, "c");
	svg_figure_end(h, c->caption);
	return 0;
}

/* ---- stacked horizontal bars -------------------------------------------- */

#define SW 760
#define SL 230
#define SR 16
#define ROW 26

static double row_sum(const struct svg_stack *c, size_t r)
{
	double s = 0;

	for (size_t p = 0; p < c->nparts; p++)
		if (isfinite(c->v[r * c->nparts + p]) && c->v[r * c->nparts + p] > 0)
			s += c->v[r * c->nparts + p];
	return s;
}

static void stack_row(struct html *h, const struct svg_stack *c, size_t r, double scale, double y)
{
	double x = SL, sum = row_sum(c, r);
	char t[48];

	fprintf(h->f, "<text class=\"rlabel\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", SL - 8,
		y + ROW / 2.0 + 3);
	html_escn(h->f, c->rows[r], 48);
	fputs("</text>\n", h->f);
	for (size_t p = 0; p < c->nparts; p++) {
		double v = c->v[r * c->nparts + p], w;

		if (!isfinite(v) || v <= 0)
			continue;
		w = (c->percent ? (sum > 0 ? v / sum : 0) : v / scale) * (SW - SL - SR);
		value_text(c->fd, v, t, sizeof(t));
		fprintf(h->f, "<rect class=\"p%zu\" x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\">"
			"<title>", p % 10, x, y + 3, w, ROW - 6);
		html_escf(h->f, "%s %s (%.1f %%)", c->parts[p], t, sum > 0 ? 100 * v / sum : 0);
		fputs("</title></rect>", h->f);
		x += w;
	}
	fputc('\n', h->f);
}

int svg_stack(struct html *h, const struct svg_stack *c)
{
	double scale = 0, step;
	unsigned ht = (unsigned)(c->nrows * ROW + 40);
	char id[32];

	if (!c->nrows)
		return 0;
	for (size_t r = 0; r < c->nrows; r++)
		scale = fmax(scale, row_sum(c, r));
	if (!(scale > 0) || !isfinite(scale))
		scale = 1;
	step = nice_step(scale);
	scale = ceil(scale / step * (1 - 1e-9)) * step;
	html_new_id(h, "stk", id, sizeof(id));
	svg_figure_begin(h, id, c->title, SW, ht);
	for (size_t r = 0; r < c->nrows; r++)
		stack_row(h, c, r, scale, 4.0 + (double)r * ROW);
	if (c->percent)
		step = 25, scale = 100;
	for (double v = 0; v <= scale * (1 + 1e-9) && v < 12 * step; v += step) {
		double x = SL + (SW - SL - SR) * v / scale;
		char t[48];

		if (c->percent)
			snprintf(t, sizeof(t), "%.0f %%", v);
		else
			value_text(c->fd, v, t, sizeof(t));
		fprintf(h->f, "<text class=\"tick\" x=\"%.1f\" y=\"%u\" text-anchor=\"middle\">", x,
			ht - 22);
		html_esc(h->f, t);
		fputs("</text>", h->f);
	}
	fprintf(h->f, "\n<text class=\"alabel\" x=\"%d\" y=\"%u\" text-anchor=\"middle\">",
		(SW + SL) / 2, ht - 4);
	html_esc(h->f, c->unit_label);
	fputs("</text></svg>\n", h->f);
	svg_legend(h, id, c->parts, c->nparts, "p");
	svg_figure_end(h, c->caption);
	return 0;
}
