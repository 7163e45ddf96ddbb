// SPDX-License-Identifier: MIT
/* Whether the two runs of a comparison were measured in one state of the
 * machine (compare.h): their canaries (env.canary, include/ipclab/floors.h)
 * more than CANARY_RATIO_MAX apart - between the runs, or within one run
 * from its start to its end - and no cell of the pair gets a verdict: "the
 * machine was in another state (cache-line RTT 1.9x): not comparable". A
 * file without a canary (written before there was one) is compared as
 * before. Two files cut from one run whose cells ran in interleaved rounds
 * (--repeat: A B A B ...) share its canary and its drift: a change of
 * state mid-run fell on both sides alike, so they are compared, and the
 * drift is said. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compare.h"
#include "env_json.h"
#include "rec_env.h"

static bool same(double x, double y)
{
	return (isnan(x) && isnan(y)) || x == y;
}

/* before and after are one run's cells, interleaved: the same creation
 * time, host and canary to the bit, every cell in rounds. */
static bool one_run(const struct rfile *before, const struct rfile *after, const struct canary *b,
		    const struct canary *a)
{
	const char *tb = rfile_created(before), *ta = rfile_created(after);
	const char *hb = rfile_hostname(before), *ha = rfile_hostname(after);

	if (!tb || !ta || strcmp(tb, ta) || !hb || !ha || strcmp(hb, ha))
		return false;
	for (int k = 0; k < 2; k++)
		if (a[k].on != b[k].on || (a[k].on && (!same(a[k].cacheline_rtt_ns, b[k].cacheline_rtt_ns) ||
						       !same(a[k].pipe_rtt_ns, b[k].pipe_rtt_ns))))
			return false;
	return rfile_interleaved(before) && rfile_interleaved(after);
}

void cmp_canary(const struct rfile *before, const struct rfile *after, struct cmp_canary *c)
{
	struct canary b[2], a[2];
	const char *what = "";

	*c = (struct cmp_canary){ .ratio = NAN };
	c->present = rfile_canary(before, b) && rfile_canary(after, a);
	if (!c->present)
		return;
	c->ratio = canary_between(b, a, &what);
	c->drift[0] = canary_drift(b, &c->drift_what[0]);
	c->drift[1] = canary_drift(a, &c->drift_what[1]);
	c->one_run = one_run(before, after, b, a);
	if (c->one_run)
		return;
	if (c->ratio > CANARY_RATIO_MAX) {
		c->other_state = true;
		snprintf(c->why, sizeof(c->why), "the machine was in another state (%s %.1fx): not comparable",
			 what, c->ratio);
		return;
	}
	for (int k = 0; k < 2; k++)
		if (c->drift[k] > CANARY_RATIO_MAX) {
			c->other_state = true;
			snprintf(c->why, sizeof(c->why), "the machine changed state during the %s run (%s %.1fx from its start to its end): not comparable",
				 k ? "after" : "before", c->drift_what[k], c->drift[k]);
			return;
		}
}

void cmp_canary_text(FILE *f, const struct cmp_canary *c)
{
	if (!c->present)
		fprintf(f, "canary: not in both files (no state of the machine to compare)\n");
	else if (c->other_state)
		fprintf(f, "canary: %s\n", c->why);
	else if (c->one_run && c->drift[0] > CANARY_RATIO_MAX)
		fprintf(f, "canary: one run's cells, interleaved: its change of state (%s %.1fx from start to end) fell on both sides alike\n",
			c->drift_what[0], c->drift[0]);
	else if (c->one_run)
		fprintf(f, "canary: one run's cells, interleaved (one state of the machine)\n");
	else
		fprintf(f, "canary: the same state of the machine (within %.2fx, limit %.1fx)\n",
			isfinite(c->ratio) && c->ratio > 0 ? c->ratio : 1.0, CANARY_RATIO_MAX);
}

void cmp_canary_markdown(FILE *f, const struct cmp_canary *c)
{
	if (c->other_state)
		fprintf(f, "\n**Not comparable:** %s.\n", c->why);
}

/* {"present", "one_run", "ratio", "drift_before", "drift_after", "comparable", "why"} */
json_t *cmp_canary_json(const struct cmp_canary *c)
{
	json_t *o = json_pack("{s:b, s:b, s:o, s:o, s:o, s:b}", "present", c->present, "one_run", c->one_run, "ratio",
			      c->ratio > 0 ? json_real(c->ratio) : json_null(), "drift_before",
			      c->drift[0] > 0 ? json_real(c->drift[0]) : json_null(), "drift_after",
			      c->drift[1] > 0 ? json_real(c->drift[1]) : json_null(), "comparable",
			      !c->other_state);

	if (o && c->other_state)
		json_object_set_new(o, "why", json_string(c->why));
	return o;
}
