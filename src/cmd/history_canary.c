// SPDX-License-Identifier: MIT
/* `ipclab history` marks the points measured in another state of the
 * machine: each run's canary (env.canary, include/ipclab/floors.h, read
 * from the run's stored header) against the series' own state - the lower
 * median of its points' canaries, a state a point really had, the faster
 * one when the points split evenly between two - more than
 * CANARY_RATIO_MAX apart, or a run whose own start and end are. Points of
 * runs without a canary are left unmarked. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "history.h"
#include "../report/env_json.h"
#include "../report/rec_env.h"

/* One run's canary, from the header stored with it. */
static int got_header(void *arg, const char *const *col, int ncol)
{
	struct canary *c = arg;
	json_t *root = ncol > 0 && col[0] ? json_loads(col[0], 0, NULL) : NULL;

	rec_canary(root, c);
	json_decref(root);
	return 0;
}

static int run_canary(struct db *db, int64_t run, struct canary c[2], char *err, size_t len)
{
	char id[24];
	const char *p[] = { id };

	snprintf(id, sizeof(id), "%" PRId64, run);
	c[0].on = c[1].on = false;
	return db_exec(db, "SELECT header FROM ipclab_runs WHERE id = $1", p, 1, got_header, c, err,
		       len);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The series' state: the point whose canary is the lower median (by the
 * cache line, else the pipe); NULL when no point has one. */
static const struct hpoint *reference(const struct hseries *s)
{
	double *v = malloc((s->n + 1) * sizeof(*v)), want;
	const struct hpoint *ref = NULL;
	size_t n = 0;
	bool cl = false;

	for (size_t i = 0; v && i < s->n; i++)
		cl |= isfinite(s->pts[i].canary[0].cacheline_rtt_ns);
	for (size_t i = 0; v && i < s->n; i++) {
		const struct canary *c = &s->pts[i].canary[0];
		double x = cl ? c->cacheline_rtt_ns : c->pipe_rtt_ns;

		if (c->on && isfinite(x))
			v[n++] = x;
	}
	if (n) {
		qsort(v, n, sizeof(*v), cmp_dbl);
		want = v[(n - 1) / 2];
		for (size_t i = 0; i < s->n && !ref; i++)
			if (s->pts[i].canary[0].on &&
			    (cl ? s->pts[i].canary[0].cacheline_rtt_ns : s->pts[i].canary[0].pipe_rtt_ns) == want)
				ref = &s->pts[i];
	}
	free(v);
	return ref;
}

static void mark_series(struct hseries *s)
{
	const struct hpoint *ref = reference(s);
	struct canary rc[2];

	if (!ref)
		return;
	memcpy(rc, ref->canary, sizeof(rc));
	for (size_t i = 0; i < s->n; i++) {
		struct hpoint *p = &s->pts[i];
		const char *what = "", *dwhat = "";
		double r = canary_between(p->canary, rc, &what), d = canary_drift(p->canary, &dwhat);

		p->state_ratio = r;
		if (r > CANARY_RATIO_MAX)
			snprintf(p->state_why, sizeof(p->state_why), "another state (%s %.1fx)", what, r);
		else if (d > CANARY_RATIO_MAX)
			snprintf(p->state_why, sizeof(p->state_why), "state changed during the run (%s %.1fx)",
				 dwhat, d);
	}
}

int history_canary(struct history *h, struct db *db)
{
	char err[ERRLEN];

	for (size_t i = 0; i < h->n; i++) {
		for (size_t k = 0; k < h->s[i].n; k++) {
			struct hpoint *p = &h->s[i].pts[k];
			int ret = run_canary(db, p->run, p->canary, err, sizeof(err));

			if (ret)
				return say_error("history", "%s", err);
		}
		mark_series(&h->s[i]);
	}
	return 0;
}
