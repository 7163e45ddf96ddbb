// SPDX-License-Identifier: MIT
/* A figure of figure.c for ipclab plot: its numbers as NAME.dat (a row per
 * x, a column per series, headed by the series' labels; NaN where a series
 * has no value; a heatmap's as gnuplot's matrix with row and column
 * headers) and NAME.gp, the gnuplot script that draws them. Values
 * are in each axis' fixed unit (latency in us, throughput in MB/s). Every
 * text goes through plot_text.c: titles and axis labels as gnuplot strings
 * in single quotes (gp_quote), the series' labels as data file text that
 * the script reads with columnheader (dat_text), notes as comments. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "figure.h"
#include "plot.h"

/* Past a dozen series a key beside the plot squeezes it: put it below. */
static void key_place(FILE *gp, size_t nseries)
{
	if (nseries > 12)
		fprintf(gp, "set key below left Left reverse noenhanced\n");
}

static double shown(const struct fig_axis *a, double v)
{
	return a->per ? v / a->per : v;
}

/* A value in the axis' fixed unit: whole numbers exact (sizes), others to
 * six digits or the axis' decimals. */
static void value_out(FILE *dat, const struct fig_axis *a, double v)
{
	v = shown(a, v);
	if (isnan(v))
		fputs("NaN", dat);
	else if (a->decimals)
		fprintf(dat, "%.*f", (int)a->decimals, v);
	else if (v == floor(v) && fabs(v) < 1e15)
		fprintf(dat, "%.0f", v);
	else
		fprintf(dat, "%.6g", v);
}

/* Every series' x values, ascending, each once. */
static double *x_union(const struct figure *f, size_t *n)
{
	size_t total = 0, k = 0;
	double *x;

	for (size_t i = 0; i < f->ns; i++)
		total += f->s[i].n;
	x = malloc((total + 1) * sizeof(*x));
	for (size_t i = 0; x && i < f->ns; i++)
		for (size_t j = 0; j < f->s[i].n; j++) {
			size_t at = k;
			double v = f->s[i].x[j];

			while (at > 0 && x[at - 1] > v)
				at--;
			if (at > 0 && x[at - 1] == v)
				continue;
			memmove(x + at + 1, x + at, (k - at) * sizeof(*x));
			x[at] = v;
			k++;
		}
	*n = k;
	return x;
}

static double y_at(const struct fig_series *s, double x)
{
	for (size_t j = 0; j < s->n; j++)
		if (s->x[j] == x)
			return s->y[j];
	return NAN;
}

/* The data file's first line: "# TITLE: A WORD B; CAPTION; NOTE". */
static void dat_head(FILE *dat, const struct figure *f, const char *a, const char *word,
		     const char *b)
{
	fputs("# ", dat);
	dat_text(dat, f->title);
	fputs(": ", dat);
	dat_text(dat, a);
	fputs(word, dat);
	dat_text(dat, b);
	if (f->caption) {
		fputs("; ", dat);
		dat_text(dat, f->caption);
	}
	if (f->note[0]) {
		fputs("; ", dat);
		dat_text(dat, f->note);
	}
	fputc('\n', dat);
}

static int write_dat(FILE *dat, const struct figure *f)
{
	char yt[160], xt[160];
	size_t nx = f->ncat;
	double *x = f->kind == FIG_BARS ? NULL : x_union(f, &nx);

	if (f->kind != FIG_BARS && !x)
		return -ENOMEM;
	fig_axis_title(&f->y, yt, sizeof(yt));
	fig_axis_title(&f->x, xt, sizeof(xt));
	dat_head(dat, f, yt, " by ", xt);
	fprintf(dat, "%s%s", f->x.percentile ? "percentile\t" : "", f->x.key);
	for (size_t i = 0; i < f->ns; i++) {
		fputc('\t', dat);
		dat_text(dat, f->s[i].label);
	}
	fputc('\n', dat);
	for (size_t r = 0; r < nx; r++) {
		if (f->kind == FIG_BARS)
			dat_text(dat, f->cats[r]);
		else if (f->x.percentile)
			fprintf(dat, "%.4f\t", 100 * (1 - 1 / x[r]));
		if (f->kind != FIG_BARS)
			value_out(dat, &f->x, x[r]);
		for (size_t i = 0; i < f->ns; i++) {
			fputc('\t', dat);
			value_out(dat, &f->y, f->kind == FIG_BARS ? (r < f->s[i].n ? f->s[i].y[r] : NAN) :
							     y_at(&f->s[i], x[r]));
		}
		fputc('\n', dat);
	}
	free(x);
	return 0;
}

static void axis_script(FILE *gp, char which, const struct fig_axis *a)
{
	char t[160];

	if (a->log == 10)
		fprintf(gp, "set logscale %c\n", which);
	else if (a->log)
		fprintf(gp, "set logscale %c %u\n", which, a->log);
	if (a->lo < a->hi)
		fprintf(gp, "set %crange [%.6g:%.6g]\n", which, shown(a, a->lo), shown(a, a->hi));
	else if (a->from_zero && !a->log)
		fprintf(gp, "set %crange [0:*]\n", which);
	if (a->nticks) {
		fprintf(gp, "set %ctics (", which);
		for (size_t i = 0; i < a->nticks; i++) {
			fputs(i ? ", " : "", gp);
			gp_quote(gp, a->tick_labels ? a->tick_labels[i] : "");
			fprintf(gp, " %.6g", shown(a, a->ticks[i]));
		}
		fputs(")\n", gp);
	}
	fig_axis_title(a, t, sizeof(t));
	fprintf(gp, "set %clabel ", which);
	gp_quote(gp, t);
	fputc('\n', gp);
}

/* A FIG_HEAT's numbers, as gnuplot reads a matrix with rowheaders and
 * columnheaders: a row per row of squares headed by its text, a column
 * per column, in the colour scale's fixed unit, NaN where none. */
static void write_heat_dat(FILE *dat, const struct figure *f)
{
	const struct fig_grid *g = &f->grid;
	char zt[160], rc[2 * FIG_LABEL];

	fig_axis_title(&f->z, zt, sizeof(zt));
	snprintf(rc, sizeof(rc), "rows %s, columns %s", f->y.label, f->x.label);
	dat_head(dat, f, zt, "; ", rc);
	fprintf(dat, "%s\\%s", f->y.key, f->x.key);
	for (size_t k = 0; k < g->nc; k++) {
		fputc('\t', dat);
		dat_text(dat, g->cols[k]);
	}
	fputc('\n', dat);
	for (size_t r = 0; r < g->nr; r++) {
		dat_text(dat, g->rows[r]);
		for (size_t k = 0; k < g->nc; k++) {
			fputc('\t', dat);
			value_out(dat, &f->z, g->v[r * g->nc + k]);
		}
		fputc('\n', dat);
	}
}

/* A FIG_HEAT's script: the squares as an image coloured by the figure's
 * stops, each square's text (cls, row by row) boxed over it. */
static void heat_script(FILE *gp, const struct figure *f)
{
	const struct fig_grid *g = &f->grid;
	char zt[160];

	axis_script(gp, 'x', &f->x);
	axis_script(gp, 'y', &f->y);
	fputs("unset grid\nset key off\nset yrange [] reverse\n", gp);
	/* a square without a value is NaN, which the image leaves out: the
	 * page's colour for it shows from behind */
	fputs("set object 1 rectangle from graph 0, graph 0 to graph 1, graph 1 behind fillcolor rgb \"" FIG_NO_COLOUR
	      "\" fillstyle solid 1.0 noborder\nset palette defined (", gp);
	for (size_t i = 0; i < FIG_STOPS; i++)
		fprintf(gp, "%s%g '#%02x%02x%02x'", i ? ", " : "", (double)i / (FIG_STOPS - 1),
			fig_stops[i][0], fig_stops[i][1], fig_stops[i][2]);
	fig_axis_title(&f->z, zt, sizeof(zt));
	fputs(")\n", gp);
	/* the colours' ends where the page puts them: the lowest and the
	 * highest value, not gnuplot's rounded ones */
	double lo = shown(&f->z, f->z.lo), hi = shown(&f->z, f->z.hi);

	if (isfinite(lo) && isfinite(hi) && lo < hi)
		fprintf(gp, "set cbrange [%.6g:%.6g]\n", lo, hi);
	fputs("set cblabel ", gp);
	gp_quote(gp, zt);
	fputs("\nset style textbox opaque noborder\n# each square's text, row by row: ", gp);
	gp_comment(gp, f->caption ? f->caption : "");
	fprintf(gp, "\narray cls[%zu]\n", g->nr * g->nc);
	for (size_t i = 0; i < g->nr * g->nc; i++) {
		fprintf(gp, "cls[%zu] = ", i + 1);
		gp_quote(gp, g->text[i]);
		fputc('\n', gp);
	}
}

int fig_gnuplot(struct plot_ctx *ctx, const struct figure *f)
{
	static const char *const with[] = { [FIG_LINES] = "with lines lw 2",
					    [FIG_STEPS] = "with steps lw 2",
					    [FIG_POINTS] = "with linespoints lw 2" };
	size_t xcol = f->x.percentile ? 2 : 1;
	char title[sizeof(f->title) + FIG_NOTE + 4], what[sizeof(f->title)] = "";
	FILE *dat, *gp;

	if (f->kind == FIG_HEAT ? !f->grid.nr || !f->grid.nc : !f->ns)
		return 0;
	if (fig_open(ctx, f->name, &dat, &gp))
		return -EIO;
	if (f->kind == FIG_HEAT) {
		write_heat_dat(dat, f);
	} else if (write_dat(dat, f)) {
		fclose(dat);
		fclose(gp);
		free(ctx->datbuf);
		free(ctx->gpbuf);
		ctx->datbuf = ctx->gpbuf = NULL;
		return errf(ctx->err, ctx->errlen, ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < sizeof(what) - 1 && f->title[i]; i++) {	/* a comment's text */
		unsigned char ch = (unsigned char)f->title[i];

		what[i] = ch < 0x20 || ch == 0x7f || ch == '\\' ? '?' : (char)ch;
	}
	fig_script_head(ctx, gp, f->name, what);
	snprintf(title, sizeof(title), "%s%s%s%s", f->title, f->note[0] ? " (" : "", f->note,
		 f->note[0] ? ")" : "");
	fputs("set title ", gp);
	gp_quote(gp, title);
	fputc('\n', gp);
	if (f->kind == FIG_HEAT)
		heat_script(gp, f);
	else if (f->kind == FIG_BARS)
		fputs("set style data histogram\nset style histogram clustered gap 1\n"
		      "set style fill solid 0.8 border -1\nset xtics rotate by -30 noenhanced\n", gp);
	else
		axis_script(gp, 'x', &f->x);
	if (f->kind != FIG_HEAT) {
		axis_script(gp, 'y', &f->y);
		key_place(gp, f->ns);
	}
	fig_script_begin_output(gp, f->name);
	if (f->kind == FIG_HEAT)
		fprintf(gp, "\tplot \"%s.dat\" matrix rowheaders columnheaders using 1:2:3 with image, \\\n"
			"\t     \"\" matrix rowheaders columnheaders using 1:2:(cls[int($2) * %zu + int($1) + 1]) with labels boxed\n",
			f->name, f->grid.nc);
	else if (f->kind == FIG_BARS)
		fprintf(gp, "\tplot for [i=2:%zu] \"%s.dat\" using i:xtic(1) title columnheader(i)\n",
			f->ns + 1, f->name);
	else
		fprintf(gp, "\tplot for [i=%zu:%zu] \"%s.dat\" using %zu:i %s title columnheader(i)\n",
			xcol + 1, xcol + f->ns, f->name, xcol, with[f->kind]);
	fig_script_end_output(gp);
	return fig_finish(ctx, f->name, dat, gp);
}
