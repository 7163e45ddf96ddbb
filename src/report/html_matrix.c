// SPDX-License-Identifier: MIT
/* --pin matrix in the HTML report: the CPU x CPU heatmaps of a matrix
 * file (figure_matrix.c), drawn by fig_svg. */
#include <stdlib.h>

#include "figure.h"
#include "html.h"

void html_matrix(struct html *h, const struct rfile *rf)
{
	struct figure *figs;
	size_t n;

	if (figure_matrix(rf, &figs, &n) || !n)
		return;
	fputs("<section class=\"matrix\"><h3>CPU x CPU matrix</h3>\n", h->f);
	for (size_t i = 0; i < n; i++)
		fig_svg(h, &figs[i]);
	fputs("</section>\n", h->f);
	figure_free_n(figs, n);
}
