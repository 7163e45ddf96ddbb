// SPDX-License-Identifier: MIT
/* Each seed section's question, tested (suite_question.h): the thread's
 * own claim as hypotheses, each a ratio of two of the section's cells with
 * its interval and verdict, an answer a reader can act on, and one verdict
 * for the section. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suite_question.h"
#include "ipclab/metrics.h"
#include "ipclab/stats.h"
#include "ipclab/util.h"

const char sq_confirmed[] = "confirmed", sq_refuted[] = "refuted", sq_same[] = "no difference",
	   sq_not_here[] = "not reproduced here", sq_noisy[] = "too noisy";

bool sq_ran(const struct result *r)
{
	return r && r->status == RES_OK;
}

static double figure(const struct result *r, const char *key)
{
	const struct field *f = field_find(key);

	return f && f->get_num ? f->get_num(r) : NAN;
}

static size_t values(const struct repeat_stat *st)
{
	if (!st)
		return 0;
	return st->n_values < STATS_MAX_SAMPLE ? st->n_values : STATS_MAX_SAMPLE;
}

/* Without an interval: the range of b's repetitions over a's. */
static enum stats_verdict range_verdict(const struct repeat_stat *sa, const struct repeat_stat *sb)
{
	double lo, hi;

	if (!sa || !sb || !(sa->min > 0) || !(sb->min > 0))
		return SV_UNKNOWN;
	lo = sb->min / sa->max;
	hi = sb->max / sa->min;
	return stats_ratio_verdict(lo, hi, STATS_EQUIV_MARGIN);
}

/* One run each: the interval of b's median over a's from each run's own
 * exchanges (its latency histogram), each median's interval at 97.5 % so
 * that both hold together at 95 % or more; the ratio's interval their
 * extremes. It says how well each run measured its median, not how runs
 * differ: the text names its basis. */
static int median_ratio_ci(const struct result *a, const struct result *b, double *lo, double *hi)
{
	double alo, ahi, blo, bhi;

	if (hist_median_ci(&a->hist, STATS_ALPHA / 2, &alo, &ahi) ||
	    hist_median_ci(&b->hist, STATS_ALPHA / 2, &blo, &bhi) || !(alo > 0) || !(blo > 0))
		return -EDOM;
	*lo = blo / ahi;
	*hi = bhi / alo;
	return 0;
}

/* The verdict on b's figure vb over a's va, from their repetitions (sa,
 * sb; NULL without), the one-run median rule for lat_p50_ns (key). */
static const char *judge(struct why_test *t, const struct result *a, const struct result *b, double va,
			 double vb, const struct repeat_stat *sa, const struct repeat_stat *sb, const char *key,
			 bool more)
{
	enum stats_verdict v = SV_UNKNOWN;
	double est;
	struct stats_mw mw;

	t->ratio = vb / va;
	if (values(sa) >= 2 && values(sb) >= 2) {
		if (!stats_ratio_ci(sa->values, values(sa), sb->values, values(sb), &est, &t->lo, &t->hi)) {
			v = stats_ratio_verdict(t->lo, t->hi, STATS_EQUIV_MARGIN);
			t->ci_basis = "repetitions";
		}
		if (!stats_mann_whitney(sa->values, values(sa), sb->values, values(sb), &mw))
			t->p_value = mw.p_value;
	} else if (values(sa) < 2 && values(sb) < 2 && !strcmp(key, "lat_p50_ns") &&
		   !median_ratio_ci(a, b, &t->lo, &t->hi)) {
		/* how well each run measured its median, not how runs differ:
		 * an interval that holds 1 or stays inside the band leaves the
		 * pair undecided (never "no difference" from one run each);
		 * one that leaves it lets the one-run rule below decide */
		t->ci_basis = "exchanges";
		if (stats_ratio_verdict(t->lo, t->hi, STATS_EQUIV_MARGIN) != SV_DIFFERENT)
			v = SV_TOO_NOISY;
	}
	if (v == SV_UNKNOWN)
		v = range_verdict(sa, sb);
	/* an answer's difference is one that matters: an interval that
	 * excludes 1 around a ratio inside the +-10 % band is neither a
	 * difference nor shown to be none */
	if (v == SV_DIFFERENT && t->ratio >= 1 / (1 + STATS_EQUIV_MARGIN) &&
	    t->ratio <= 1 + STATS_EQUIV_MARGIN)
		v = SV_TOO_NOISY;
	/* one run each: no spread to weigh; only a factor beyond any run's
	 * noise here tells them apart */
	if (v == SV_UNKNOWN && (t->ratio >= SQ_ONE_RUN_FACTOR || t->ratio <= 1 / SQ_ONE_RUN_FACTOR))
		v = SV_DIFFERENT;
	switch (v) {
	case SV_NO_DIFFERENCE:
		t->verdict = SQ_SAME;
		break;
	case SV_DIFFERENT:
		t->verdict = (t->ratio > 1) == more ? SQ_CONFIRMED : SQ_REFUTED;
		break;
	case SV_UNKNOWN:
	case SV_TOO_NOISY:
		t->verdict = SQ_NOISY;
		break;
	}
	return t->verdict;
}

static void test_start(struct why_test *t, const char *knob)
{
	snprintf(t->knob, sizeof(t->knob), "%s", knob);
	t->ratio = t->lo = t->hi = t->p_value = NAN;
	t->ci_basis = NULL;
	t->verdict = SQ_NOT_HERE;
}

const char *sq_test(struct why_test *t, const char *knob, const struct result *a,
		    const struct result *b, const char *key, bool more)
{
	double va, vb;

	test_start(t, knob);
	if (!sq_ran(a) || !sq_ran(b))
		return t->verdict;
	va = figure(a, key);
	vb = figure(b, key);
	if (!(va > 0) || !(vb > 0))
		return t->verdict;
	return judge(t, a, b, va, vb, result_repeat_stat(a, key), result_repeat_stat(b, key), key, more);
}

/* The system's context switches per message of each repetition (its
 * switches/s over its msgs/s, the two kept in the order they ran), into
 * st; the median into *med. False without them. */
static bool cs_reps(const struct result *r, struct repeat_stat *st, double *med)
{
	const struct repeat_stat *cs = result_repeat_stat(r, "sys_ctx_switches_per_s");
	const struct repeat_stat *rate = result_repeat_stat(r, "msgs_per_s");
	double sorted[REPEAT_MAX_VALUES];
	unsigned n;

	if (!cs || !rate || cs->n_values != rate->n_values || cs->n_values < 1)
		return false;
	n = cs->n_values < REPEAT_MAX_VALUES ? cs->n_values : REPEAT_MAX_VALUES;
	*st = (struct repeat_stat){ .key = "cs_per_msg", .n_values = n, .min = INFINITY, .max = -INFINITY };
	for (unsigned i = 0; i < n; i++) {
		if (!(rate->values[i] > 0) || !(cs->values[i] > 0))
			return false;
		st->values[i] = sorted[i] = cs->values[i] / rate->values[i];
		st->min = fmin(st->min, st->values[i]);
		st->max = fmax(st->max, st->values[i]);
	}
	*med = stats_median(sorted, n);
	return true;
}

/* Context switches per message (the system's, as vmstat counts them) of
 * b over a, over their repetitions: the claim that b switches more. */
const char *sq_test_cs(struct why_test *t, const char *knob, const struct result *a,
			      const struct result *b)
{
	struct repeat_stat sa, sb;
	double va, vb;

	test_start(t, knob);
	if (!sq_ran(a) || !sq_ran(b) || !cs_reps(a, &sa, &va) || !cs_reps(b, &sb, &vb))
		return t->verdict;
	return judge(t, a, b, va, vb, &sa, &sb, "cs_per_msg", true);
}

/* "1.57x (95 % 1.50-1.63x, p = 0.008)" */
void sq_ratio_text(char *buf, size_t len, const struct why_test *t)
{
	int k = snprintf(buf, len, "%.3gx", t->ratio);

	if (k < 0 || (size_t)k >= len)
		return;
	if (!isnan(t->lo) && t->ci_basis && !strcmp(t->ci_basis, "exchanges"))
		k += snprintf(buf + k, len - (size_t)k, " (95 %% %.3g-%.3gx over each run's exchanges, one run each",
			      t->lo, t->hi);
	else if (!isnan(t->lo))
		k += snprintf(buf + k, len - (size_t)k, " (95 %% %.3g-%.3gx", t->lo, t->hi);
	else
		k += snprintf(buf + k, len - (size_t)k, " (no 95 %% interval: too few repetitions");
	if ((size_t)k < len && !isnan(t->p_value))
		k += snprintf(buf + k, len - (size_t)k, ", p = %.2g", t->p_value);
	if ((size_t)k < len)
		snprintf(buf + k, len - (size_t)k, ")");
}

struct why_hyp *sq_hyp(struct report_why *w, const char *claim, const char *conditions,
		       const struct why_test *t, const char *extra)
{
	struct why_hyp *h;
	char r[96];

	if (w->nhyp >= WHY_MAX_HYP)
		return NULL;
	h = &w->hyp[w->nhyp++];
	snprintf(h->claim, sizeof(h->claim), "%s", claim);
	snprintf(h->conditions, sizeof(h->conditions), "%s", conditions);
	h->reproduced = t->verdict == SQ_CONFIRMED;
	if (isnan(t->ratio)) {
		snprintf(h->evidence, sizeof(h->evidence), "%s: a cell is missing or did not run%s%s",
			 t->of, extra ? "; " : "", extra ? extra : "");
		return h;
	}
	sq_ratio_text(r, sizeof(r), t);
	snprintf(h->evidence, sizeof(h->evidence), "%s %s, %s%s%s", t->of, r, t->verdict,
		 extra ? "; " : "", extra ? extra : "");
	return h;
}

bool sq_decided(const char *v)
{
	return v == SQ_CONFIRMED || v == SQ_REFUTED || v == SQ_SAME;
}

struct why_test *sq_add_test(struct report_why *w)
{
	return w->ntests < WHY_MAX_TESTS ? &w->tests[w->ntests++] : NULL;
}

void sq_compared(struct report_why *w, const struct why_test *t)
{
	snprintf(w->compared.of, sizeof(w->compared.of), "%s", t->of);
	w->compared.ratio = t->ratio;
	w->compared.lo = t->lo;
	w->compared.hi = t->hi;
	w->compared.ci_basis = t->ci_basis;
}

void sq_print(FILE *f, const struct report_why *w)
{
	char r[96];

	if (!w || !w->question[0])
		return;
	fprintf(f, "Question: %s\n", w->question);
	for (unsigned i = 0; i < w->nhyp; i++)
		fprintf(f, "Hypothesis: %s (%s) -- %s (%s)\n", w->hyp[i].claim, w->hyp[i].conditions,
			w->hyp[i].reproduced ? "reproduced here" : "not reproduced", w->hyp[i].evidence);
	for (unsigned i = 0; i < w->ntests; i++) {
		if (isnan(w->tests[i].ratio)) {
			fprintf(f, "Test: %s: %s: %s\n", w->tests[i].knob, w->tests[i].of, w->tests[i].verdict);
			continue;
		}
		sq_ratio_text(r, sizeof(r), &w->tests[i]);
		fprintf(f, "Test: %s: %s %s: %s\n", w->tests[i].knob, w->tests[i].of, r, w->tests[i].verdict);
	}
	fprintf(f, "Answer: %s\n", w->answer);
	fprintf(f, "Verdict: %s\n", w->verdict);
}

/* ---- seed 001 ---------------------------------------------------------------- */

/* The share of the window both sides ran at once, at least. */
static double overlap_pct(const struct result *r)
{
	return fmax(0, r->cpu_pct_total - 100);
}

void sq_001(struct report_why *w, const struct result *r, size_t n)
{
	const struct result *low = NULL, *high = NULL;
	unsigned cells = 0, lock = 0, par = 0, starved = 0;
	struct why_test *t = sq_add_test(w);
	char e[200];

	snprintf(w->question, sizeof(w->question),
		 "Does a pipe between two computing processes keep both CPUs busy for every write size and think time, or fall into lockstep (one side running at a time)?");
	for (size_t i = 0; i < n; i++) {
		if (!sq_ran(&r[i]))
			continue;
		cells++;
		if (!low || r[i].cpu_pct_total < low->cpu_pct_total)
			low = &r[i];
		if (!high || r[i].cpu_pct_total > high->cpu_pct_total)
			high = &r[i];
		if (r[i].cpu_pct_total < SQ_STARVED_PCT) {
			starved++;
			continue;
		}
		lock += overlap_pct(&r[i]) <= SQ_LOCKSTEP_PCT;
		par += r[i].cpu_pct_total >= 180;
	}
	snprintf(t->of, sizeof(t->of), "CPU %%, the busiest cell over the least busy");
	sq_test(t, "size x think", low, high, "cpu_pct_total", true);
	sq_compared(w, t);
	if (!cells) {
		snprintf(w->answer, sizeof(w->answer), "No cell of the grid ran here: nothing to compare.");
		w->verdict = SQ_NOT_HERE;
		return;
	}
	snprintf(e, sizeof(e),
		 "%u of %u cells ran both sides at once for at most %.0f %% of the window (%u under %.0f %% CPU, starved, not counted); the least %.0f %% CPU at %llu B think %llu; 2.2.5: 37 of 100, 2.3.38: 0 of 100",
		 lock, cells, SQ_LOCKSTEP_PCT, starved, SQ_STARVED_PCT, low->cpu_pct_total,
		 (unsigned long long)low->cell.size, (unsigned long long)low->cell.think);
	if (w->nhyp < WHY_MAX_HYP) {
		struct why_hyp *h = &w->hyp[w->nhyp++];

		snprintf(h->claim, sizeof(h->claim), "the pipe falls into lockstep for some size and think (2.2.5)");
		snprintf(h->conditions, sizeof(h->conditions), "pipe, size x think grid, unpinned");
		h->reproduced = lock > 0;
		snprintf(h->evidence, sizeof(h->evidence), "%s", e);
	}
	if (w->nhyp < WHY_MAX_HYP) {
		struct why_hyp *h = &w->hyp[w->nhyp++];

		snprintf(h->claim, sizeof(h->claim), "the pipe keeps both CPUs busy (>= 180 %%) in most cells (2.3.38)");
		snprintf(h->conditions, sizeof(h->conditions), "pipe, size x think grid, unpinned");
		h->reproduced = 2 * par > cells;
		snprintf(h->evidence, sizeof(h->evidence), "%u of %u cells at 180 %% or more; 2.2.5: 32 of 100, 2.3.38: 73 of 100",
			 par, cells);
	}
	if (2 * starved > cells) {
		snprintf(w->answer, sizeof(w->answer),
			 "%u of %u cells got less than %.0f %% CPU (the least %.0f %%): other tasks held the CPUs, so whether the pipe keeps both busy could not be seen here; run it on an idle machine.",
			 starved, cells, SQ_STARVED_PCT, low->cpu_pct_total);
		w->verdict = SQ_NOT_HERE;
		w->hyp[0].reproduced = w->hyp[1].reproduced = false;
		return;
	}
	w->verdict = lock ? SQ_CONFIRMED : SQ_REFUTED;
	if (lock)
		snprintf(w->answer, sizeof(w->answer),
			 "The pipe fell into lockstep in %u of %u cells here (the least busy %.0f %% at %llu B, think %llu): the sizes and think times where it did are the ones to avoid.",
			 lock, cells, low->cpu_pct_total, (unsigned long long)low->cell.size,
			 (unsigned long long)low->cell.think);
	else
		snprintf(w->answer, sizeof(w->answer),
			 "No cell fell into lockstep here: both sides ran at once for at least %.0f %% of the window in every cell, as under 2.3.38.",
			 overlap_pct(low));
}

/* ---- seed 002 ---------------------------------------------------------------- */

static const char *const place_002[] = { "unpinned", "one CPU", "two CPUs" };

void sq_002(struct report_why *w, const struct result *pipe[3], const struct result *sock[3],
	    const char *sched)
{
	unsigned faster = 0, tested = 0;
	const struct why_test *pinned_t = NULL;
	char cond[96], e[160];

	snprintf(w->question, sizeof(w->question),
		 "Are unix sockets faster than pipes for 4 KiB messages, and consistently so only when both processes stay on their CPUs?");
	for (unsigned k = 0; k < 3; k++) {
		struct why_test *t = sq_add_test(w);

		if (!t)
			break;
		snprintf(t->of, sizeof(t->of), "msgs/s, unix-stream over pipe, %s, %s", place_002[k], sched);
		sq_test(t, "placement", pipe[k], sock[k], "msgs_per_s", true);
		if (t->verdict == SQ_NOT_HERE)
			continue;
		tested++;
		faster += t->verdict == SQ_CONFIRMED;
		if (k == 2 || (k == 1 && !pinned_t))
			pinned_t = t;
	}
	/* the claim, per placement: sockets faster */
	for (unsigned k = 0; k < 3 && k < w->ntests; k++) {
		snprintf(cond, sizeof(cond), "4 KiB stream, %s, %s", place_002[k], sched);
		sq_hyp(w, "unix sockets move more messages than pipes", cond, &w->tests[k], NULL);
	}
	/* consistent only when pinned: the spread of the repetitions */
	const struct repeat_stat *un = result_repeat_stat(sock[0], "msgs_per_s");
	const struct repeat_stat *pa = result_repeat_stat(sock[1], "msgs_per_s");
	const struct repeat_stat *pb = result_repeat_stat(sock[2], "msgs_per_s");

	if (w->nhyp < WHY_MAX_HYP) {
		struct why_hyp *h = &w->hyp[w->nhyp++];
		double pinned = NAN;

		if (pa && pb)
			pinned = fmax(pa->spread_pct, pb->spread_pct);
		else if (pa || pb)
			pinned = (pa ? pa : pb)->spread_pct;
		snprintf(h->claim, sizeof(h->claim), "sockets are consistent only when pinned");
		snprintf(h->conditions, sizeof(h->conditions), "unix-stream, spread of the repetitions, %s", sched);
		if (sq_ran(sock[0]) && un && !isnan(pinned)) {
			h->reproduced = un->spread_pct > 2 * pinned && un->spread_pct > 5;
			snprintf(e, sizeof(e), "repetitions spread %.1f %% unpinned against %.1f %% pinned (the widest)",
				 un->spread_pct, pinned);
		} else {
			snprintf(e, sizeof(e), "no unpinned or pinned repetitions to compare");
		}
		snprintf(h->evidence, sizeof(h->evidence), "%s", e);
	}
	if (pinned_t)
		sq_compared(w, pinned_t);
	else
		sq_compared(w, &w->tests[0]);
	if (!tested) {
		snprintf(w->answer, sizeof(w->answer), "The pipe and unix-stream cells did not run here: nothing to compare.");
		w->verdict = SQ_NOT_HERE;
		return;
	}
	const struct why_test *h = pinned_t ? pinned_t : &w->tests[0];

	w->verdict = h->verdict;
	if (faster == tested)
		snprintf(w->answer, sizeof(w->answer),
			 "Unix sockets beat pipes for 4 KiB messages in every placement tested here (%.3gx, %s): prefer them for bulk 4 KiB streams.",
			 h->ratio, place_002[h - w->tests]);
	else if (h->verdict == SQ_CONFIRMED)
		snprintf(w->answer, sizeof(w->answer),
			 "Pinned, unix sockets beat pipes (%.3gx); unpinned they %s: pin both ends before choosing sockets for speed.",
			 h->ratio, w->tests[0].verdict == SQ_CONFIRMED ? "also win" : "do not reliably win");
	else
		snprintf(w->answer, sizeof(w->answer),
			 "Sockets are not faster than pipes pinned here (%.3gx, %s): the thread's finding does not carry to this machine; pick by interface, not speed.",
			 h->ratio, h->verdict);
}
