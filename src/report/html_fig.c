// SPDX-License-Identifier: MIT
/* The figures of the HTML report: those of figure.c (latency by
 * percentile and its histogram per latency kind, throughput and message
 * rate against message size, CPU time per message), the same ipclab plot
 * draws, as inline SVG (fig_svg.c). */
#include <errno.h>
#include <stdlib.h>

#include "figure.h"
#include "html.h"

int html_figures(struct html *h, const struct html_view *v)
{
	struct fig_in in = { .rf = v->rf, .cells = v->cells, .n = v->n };
	struct figure *f = malloc(sizeof(*f));
	int ret = f ? 0 : -ENOMEM;

	for (unsigned id = 0; !ret && id < FIG_COUNT; id++) {
		ret = figure_build(f, id, &in);
		if (!ret)
			ret = fig_svg(h, f);
		figure_free(f);
	}
	free(f);
	return ret;
}
