// SPDX-License-Identifier: MIT
/* --repeat in the human tables: the headline cell carries the 95 % interval
 * of its median as ±% ("13.4us ±1.2%"), or, when the repetitions fall in two
 * clusters, both clusters' medians ("10.6us/21.9us") instead of a median
 * that would lie between them. Under the table, notes say what those mean,
 * which cells ran too few rounds for an interval, and, with --repeat auto,
 * which cells did not converge, with their interval and spread. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ipclab/result.h"
#include "ipclab/stats.h"
#include "fields.h"
#include "repeat_out.h"

static bool repeated(const struct result *r)
{
	return r->status == RES_OK && r->repeat_n > 1;
}

bool repeat_headline_cell(const struct field *fd, const struct result *r, char *buf, size_t len)
{
	const struct repeat_stat *st;
	char lo[32], hi[32], med[32];
	double pct;

	if (!repeated(r) || strcmp(fd->key, result_headline_key(r)) || field_missing(fd, r) ||
	    !(st = result_repeat_stat(r, fd->key)))
		return false;
	if (st->bimodal) {
		field_human_value(fd, st->low_median, lo, sizeof(lo));
		field_human_value(fd, st->high_median, hi, sizeof(hi));
		snprintf(buf, len, "%s/%s", lo, hi);
		return true;
	}
	pct = result_headline_ci_pct(r);
	if (isnan(pct))
		return false;
	field_human(fd, r, med, sizeof(med));
	snprintf(buf, len, "%s ±%.1f%%", med, pct);
	return true;
}

static void cell_name(const struct result *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s %lluB %s pin %s sched %s", r->transport, r->pattern,
		 (unsigned long long)r->cell.size, r->cell.threads ? "thread" : "process",
		 r->cell.pin.text, r->cell.sched.text);
}

/* One cell --repeat auto left unconverged: its interval and spread. */
static void unconverged_line(FILE *f, const struct result *r)
{
	const struct repeat_stat *st = result_repeat_stat(r, result_headline_key(r));
	const struct field *fd = field_find(result_headline_key(r));
	double pct = result_headline_ci_pct(r);
	char name[256], lo[32], hi[32];

	cell_name(r, name, sizeof(name));
	fprintf(f, "  %s: ", name);
	if (isnan(pct))
		fprintf(f, "%s", STATS_CI_NOTE);
	else
		fprintf(f, "ci95 ±%.1f%%", pct);
	if (st)
		fprintf(f, ", spread %.1f%%", st->spread_pct);
	if (st && fd && st->bimodal) {
		field_human_value(fd, st->low_median, lo, sizeof(lo));
		field_human_value(fd, st->high_median, hi, sizeof(hi));
		fprintf(f, ", bimodal %s/%s", lo, hi);
	}
	fputc('\n', f);
}

/* --repeat auto: whether every cell converged, else which did not. */
static void auto_notes(FILE *f, const struct result *res, size_t n)
{
	const struct result *any = NULL;
	size_t bad = 0;

	for (size_t i = 0; i < n; i++) {
		if (!repeated(&res[i]) || !res[i].repeat_auto)
			continue;
		any = &res[i];
		bad += !res[i].converged;
	}
	if (!any)
		return;
	if (!bad) {
		fprintf(f, "--repeat auto: every cell's headline within ±%g%% of its median after %u rounds\n",
			any->target_pct, any->repeat_n);
		return;
	}
	fprintf(f, "--repeat auto: %zu cell%s did not converge within ±%g%% in %u rounds (stopped by %s):\n",
		bad, bad == 1 ? "" : "s", any->target_pct, any->repeat_n,
		any->stopped_by ? any->stopped_by : "cap");
	for (size_t i = 0; i < n; i++)
		if (repeated(&res[i]) && res[i].repeat_auto && !res[i].converged)
			unconverged_line(f, &res[i]);
}

/* run --runs: each cell's headline over its separate runs, one line each. */
static void runs_notes(FILE *f, const struct result *res, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct result *r = &res[i];
		const struct field *fd = field_find(result_headline_key(r));
		const struct repeat_stat *st;
		char name[256], lo[32], hi[32];

		if (!repeated(r) || !r->over_runs || !fd || !(st = result_repeat_stat(r, fd->key)))
			continue;
		cell_name(r, name, sizeof(name));
		field_human_value(fd, st->min, lo, sizeof(lo));
		field_human_value(fd, st->max, hi, sizeof(hi));
		fprintf(f, "runs: %s: %s over %u separate runs %s..%s (spread %.0f%%)%s\n", name,
			fd->label, r->repeat_n, lo, hi, st->spread_pct,
			st->bimodal ? ", in two clusters" : "");
	}
}

void repeat_notes(FILE *f, const struct result *res, size_t n)
{
	size_t with_ci = 0, few = 0, bimodal = 0;
	unsigned few_rounds = 0;

	for (size_t i = 0; i < n; i++) {
		if (!repeated(&res[i]))
			continue;
		if (res[i].bimodal)
			bimodal++;
		else if (!isnan(result_headline_ci_pct(&res[i])))
			with_ci++;
		if (res[i].repeat_n < STATS_CI_MIN_N) {
			few++;
			few_rounds = res[i].repeat_n;
		}
	}
	runs_notes(f, res, n);
	if (with_ci)
		fprintf(f, "±: the 95 %% interval of the headline's median (p50 RTT, else msgs/s) over the %s (order statistics)\n",
			res[0].over_runs ? "runs" : "repetitions");
	if (few)
		fprintf(f, "%s: %zu cell%s ran %u, so no interval is shown\n", STATS_CI_NOTE, few,
			few == 1 ? "" : "s", few_rounds);
	if (bimodal)
		fprintf(f, "a/b: bimodal: the headline's repetitions fall in two clusters, a and b their medians\n");
	auto_notes(f, res, n);
}
