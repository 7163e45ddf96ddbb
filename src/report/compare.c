// SPDX-License-Identifier: MIT
/* `ipclab compare before.json after.json`: cells matched by configuration,
 * per metric both values, the ratio, and a verdict: with both files'
 * repetitions (--repeat) a test over them (compare_test.c), else whether
 * the difference is beyond the cells' run-to-run spread. With
 * --fail-above PCT the exit status is 3 when a metric got worse by more
 * than PCT percent (lower latency and CPU are better, higher throughput is
 * better), so that CI can gate a kernel or library change on it. Printing
 * is in compare_out.c. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipclab/util.h"
#include "ipclab/result.h"
#include "compare.h"

/* The metrics compare looks at, in this order. Their label, unit and
 * better direction are the field table's; bytes/s keeps its own label, as
 * compare prints bytes in their own unit (the table's column is MB/s). */
static const char *const cmp_keys[CMP_NMETRICS] = {
	"msgs_per_s", "bytes_per_s", "lat_p50_ns", "lat_p99_ns", "lat_max_ns", "cpu_ns_per_msg",
	"cpu_pct_total", "sys_ctx_switches_per_s",
};

const struct cmp_metric *cmp_metric(unsigned m)
{
	static struct cmp_metric tab[CMP_NMETRICS];
	static bool made;

	if (!made) {
		for (unsigned i = 0; i < CMP_NMETRICS; i++) {
			const struct field *fd = field_find(cmp_keys[i]);

			tab[i] = (struct cmp_metric){ .key = cmp_keys[i], .label = fd ? fd->label : cmp_keys[i],
						      .higher_better = fd && fd->better > 0 };
			switch (fd ? fd->unit : U_NONE) {
			case U_BYTES_PER_S: tab[i].unit = CU_BYTES_PER_S; tab[i].label = "bytes/s"; break;
			case U_NS: tab[i].unit = CU_NS; break;
			case U_PCT: tab[i].unit = CU_PCT; break;
			default: tab[i].unit = CU_PER_S; break;
			}
		}
		made = true;
	}
	return m < CMP_NMETRICS ? &tab[m] : &tab[0];
}

int cmp_parse_metrics(const char *list, unsigned *mask, char *err, size_t errlen)
{
	char buf[512], *save = NULL;

	*mask = 0;
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		const char *key = rf_metric_alias(w);
		unsigned i;

		for (i = 0; i < CMP_NMETRICS; i++)
			if (!strcmp(cmp_metric(i)->key, key) || !strcmp(cmp_metric(i)->label, key))
				break;
		if (i == CMP_NMETRICS)
			return errf(err, errlen, EINVAL, "--metrics %s: unknown metric '%s'; expected some of msgs_per_s, bytes_per_s, lat_p50_ns, lat_p99_ns, lat_max_ns, cpu_ns_per_msg, cpu_pct_total, sys_ctx_switches_per_s",
				    list, w);
		*mask |= 1u << i;
	}
	if (!*mask)
		return errf(err, errlen, EINVAL, "--metrics: no metric named; e.g. --metrics lat_p50_ns,msgs_per_s");
	return 0;
}

/* Spread of the two cells: with data on both sides the difference is real
 * when their [min, max] ranges do not overlap; with one side only, when it
 * is wider than that side's range. */
static enum cmp_spread spread_of(const struct cmp_row *row, const char *key, double before,
				 double after)
{
	double amin, amax, bmin, bmax, sp;
	bool a = rcell_spread(row->before, key, &amin, &amax, &sp);
	bool b = rcell_spread(row->after, key, &bmin, &bmax, &sp);

	if (a && b)
		return amax < bmin || bmax < amin ? CMP_BEYOND : CMP_WITHIN;
	if (a)
		return fabs(after - before) > amax - amin ? CMP_BEYOND : CMP_WITHIN;
	if (b)
		return fabs(after - before) > bmax - bmin ? CMP_BEYOND : CMP_WITHIN;
	return CMP_NO_SPREAD;
}

static bool compare_value(struct cmp_row *row, unsigned m, const struct cmp_opts *o,
			  const struct cmp_canary *canary)
{
	const struct cmp_metric *cm = cmp_metric(m);
	struct cmp_value *v = &row->v[m];

	v->before = rcell_metric(row->before, cm->key);
	v->after = rcell_metric(row->after, cm->key);
	v->ratio = v->change_pct = v->worse_pct = NAN;
	v->spread = CMP_NO_SPREAD;
	v->regressed = false;
	if (isnan(v->before) || isnan(v->after))
		return false;
	if (v->before != 0) {
		v->ratio = v->after / v->before;
		v->change_pct = (v->ratio - 1) * 100;
	} else if (v->after == 0) {
		v->ratio = 1;
		v->change_pct = 0;
	}
	v->worse_pct = cm->higher_better ? -v->change_pct : v->change_pct;
	v->spread = spread_of(row, cm->key, v->before, v->after);
	cmp_test_value(row, m, o, v);
	cmp_runs_value(row, m, o, v);
	if (canary->other_state) {	/* not like with like: no verdict, no regression */
		v->verdict = CV_OTHER_STATE;
		v->nmodes = 0;
		snprintf(v->why, sizeof(v->why), "%s", canary->why);
		return v->regressed = false;
	}
	if (!(o->metric_mask & (1u << m)))
		v->regressed = false;
	else if (v->verdict == CV_UNTESTED)	/* no repetitions: the spread rule */
		v->regressed = !isnan(o->fail_above_pct) &&
			       (v->before == 0 ? v->after != 0 && !cm->higher_better :
						 v->worse_pct > o->fail_above_pct) &&
			       v->spread != CMP_WITHIN;
	return v->regressed;
}

static void compare_row(struct cmp_row *row, const struct cmp_opts *o,
			const struct cmp_canary *canary, unsigned *regressions)
{
	bool any = false;

	row->comparable = row->before->ok && row->after->ok;
	row->noisy[0] = rcell_flag(row->before, "noisy");
	row->noisy[1] = rcell_flag(row->after, "noisy");
	row->bimodal[0] = rcell_flag(row->before, "bimodal");
	row->bimodal[1] = rcell_flag(row->after, "bimodal");
	for (unsigned m = 0; row->comparable && m < CMP_NMETRICS; m++)
		any |= compare_value(row, m, o, canary);
	*regressions += any;
}

/* The k-th cell of a configuration in after, matching the k-th in before. */
static const struct rcell *find_match(const struct rfile *after, const struct rcell *c,
				      bool *used)
{
	for (size_t j = 0; j < after->n; j++)
		if (!used[j] && !strcmp(after->cells[j].match, c->match)) {
			used[j] = true;
			return &after->cells[j];
		}
	return NULL;
}

static int alloc_result(const struct rfile *a, const struct rfile *b, struct cmp_result *r)
{
	memset(r, 0, sizeof(*r));
	r->before = a;
	r->after = b;
	r->rows = calloc(a->n + 1, sizeof(*r->rows));
	r->only_before = calloc(a->n + 1, sizeof(*r->only_before));
	r->only_after = calloc(b->n + 1, sizeof(*r->only_after));
	r->only_before_label = calloc(a->n + 1, sizeof(*r->only_before_label));
	r->only_after_label = calloc(b->n + 1, sizeof(*r->only_after_label));
	if (!r->rows || !r->only_before || !r->only_after || !r->only_before_label ||
	    !r->only_after_label) {
		compare_free(r);
		return -ENOMEM;
	}
	return 0;
}

/* The canaries of every run of one side against every run of the other: the
 * first pair in another state of the machine says so for the comparison. */
static void cmp_canary_runs(const struct rfile *before, const struct rfile *after,
			    const struct cmp_opts *o, struct cmp_canary *c)
{
	size_t nb = o->nruns[0] ? o->nruns[0] : 1, na = o->nruns[1] ? o->nruns[1] : 1;

	cmp_canary(before, after, c);
	for (size_t i = 0; i < nb && !c->other_state; i++)
		for (size_t j = 0; j < na && !c->other_state; j++) {
			struct cmp_canary one;

			if (!i && !j)
				continue;
			cmp_canary(i ? o->runs[0][i] : before, j ? o->runs[1][j] : after, &one);
			if (one.other_state)
				*c = one;
		}
}

int compare_files(const struct rfile *before, const struct rfile *after,
		  const struct cmp_opts *o, struct cmp_result *r)
{
	const struct rfile *files[2] = { before, after };
	const char *names[64];
	size_t nn = rf_varying(files, 2, true, names, ARRAY_SIZE(names));
	bool *used = calloc(after->n + 1, sizeof(*used));

	if (!used || alloc_result(before, after, r)) {
		free(used);
		return -ENOMEM;
	}
	cmp_canary_runs(before, after, o, &r->canary);
	for (size_t i = 0; i < before->n; i++) {
		const struct rcell *c = &before->cells[i], *m = find_match(after, c, used);

		if (!m) {
			rcell_label(c, names, nn, NULL, r->only_before_label[r->nonly_before], 256);
			r->only_before[r->nonly_before++] = c;
			continue;
		}
		r->rows[r->nrows] = (struct cmp_row){ .before = c, .after = m };
		rcell_label(c, names, nn, NULL, r->rows[r->nrows].label, sizeof(r->rows[0].label));
		compare_row(&r->rows[r->nrows++], o, &r->canary, &r->regressions);
	}
	for (size_t j = 0; j < after->n; j++)
		if (!used[j]) {
			rcell_label(&after->cells[j], names, nn, NULL,
				    r->only_after_label[r->nonly_after], 256);
			r->only_after[r->nonly_after++] = &after->cells[j];
		}
	free(used);
	cmp_env_all(before, after, &r->env);
	return 0;
}

void compare_free(struct cmp_result *r)
{
	free(r->rows);
	free(r->only_before);
	free(r->only_after);
	free(r->only_before_label);
	free(r->only_after_label);
	memset(r, 0, sizeof(*r));
}
