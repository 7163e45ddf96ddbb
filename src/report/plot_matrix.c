// SPDX-License-Identifier: MIT
/* ipclab plot of a --pin matrix file: its CPU x CPU heatmaps
 * (figure_matrix.c), each as NAME.dat and NAME.gp by fig_gnuplot. */
#include <errno.h>
#include <stdlib.h>

#include "ipclab/result.h"
#include "figure.h"
#include "rec_matrix.h"
#include "plot.h"

/* matrix.metric names a metric ipclab writes: it is part of file names. */
int fig_check_matrix(struct plot_ctx *ctx)
{
	struct rmatrix m;

	if (rfile_matrix(ctx->rf, &m) && m.metric && !field_find(m.metric))
		return errf(ctx->err, ctx->errlen, EINVAL, "%s: matrix.metric '%.60s' is not a metric ipclab writes; is the file damaged?",
			    ctx->rf->path, m.metric);
	return 0;
}

int fig_matrix(struct plot_ctx *ctx)
{
	struct figure *figs;
	size_t n;
	int ret = figure_matrix(ctx->rf, &figs, &n);

	if (ret == -EINVAL)
		return errf(ctx->err, ctx->errlen, EINVAL, "%s: the \"matrix\" object has no cpus or metric",
			    ctx->rf->path);
	if (ret)
		return errf(ctx->err, ctx->errlen, -ret, "out of memory");
	for (size_t i = 0; !ret && i < n; i++)
		ret = fig_gnuplot(ctx, &figs[i]);
	figure_free_n(figs, n);
	return ret;
}
