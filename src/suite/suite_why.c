// SPDX-License-Identifier: MIT
/* Why a seed's figure differs between two of its cells, from the trace
 * (suite_why.h): the asked-about cell's cause split (its largest shares),
 * the shares that differ most from the other cell's, the machine's share
 * where others took the CPUs (who, by name and pid), the repetitions'
 * spread where it is wider than the difference, and what --explain
 * measured. One sentence, from the result records alone. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "suite_why.h"
#include "ipclab/stats.h"
#include "ipclab/util.h"

#define WHY_TOP 3		/* a's shares named */
#define WHY_DIFFS 2		/* the differing shares named */
#define WHY_MIN_DIFF 0.05	/* a difference under this part of the gap is not named */

void why_add(char *buf, size_t len, size_t *n, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (!len || *n >= len - 1)
		return;
	va_start(ap, fmt);
	k = vsnprintf(buf + *n, len - *n, fmt, ap);
	va_end(ap);
	if (k > 0)
		*n = *n + (size_t)k < len - 1 ? *n + (size_t)k : len - 1;
}

static const struct trace_cause *ok_cause(const struct result *r)
{
	return r && r->status == RES_OK ? trace_cause(&r->trace) : NULL;
}

static double figure(const struct result *r, const char *key)
{
	const struct field *f = field_find(key);

	return f && f->get_num ? f->get_num(r) : NAN;
}

/* ---- the repetitions' spread ------------------------------------------------- */

/* Half the 95 % interval of the median, % of it; NAN without one. */
static double ci_pct(const struct result *r, const char *key)
{
	const struct repeat_stat *st = result_repeat_stat(r, key);
	double v = figure(r, key);

	if (!st || isnan(st->ci_lo) || isnan(st->ci_hi) || !(fabs(v) > 0))
		return NAN;
	return 50.0 * (st->ci_hi - st->ci_lo) / fabs(v);
}

static double spread_pct(const struct result *r, const char *key)
{
	const struct repeat_stat *st = result_repeat_stat(r, key);

	return st && r->repeat_n >= 2 ? st->spread_pct : NAN;
}

/* The ratio a/b of key over the two cells' kept repetitions, with its
 * 95 % (Hodges-Lehmann) interval: 0, or -1 without enough of them. */
static int rep_ratio(const struct repeat_stat *st_a, const struct repeat_stat *st_b, double *est,
		     double *lo, double *hi)
{
	size_t na = st_a->n_values < STATS_MAX_SAMPLE ? st_a->n_values : STATS_MAX_SAMPLE;
	size_t nb = st_b->n_values < STATS_MAX_SAMPLE ? st_b->n_values : STATS_MAX_SAMPLE;

	if (na < 2 || nb < 2)
		return -1;
	return stats_ratio_ci(st_b->values, nb, st_a->values, na, est, lo, hi) ? -1 : 0;
}

/* From the repetitions' values: the same within the margin ("no
 * difference", a finding) or too noisy to tell, said: 1; 0 when the
 * interval says the cells differ; -1 when there is none. The ratio is
 * said as the larger cell over the smaller (as a section's tests say
 * theirs), each cell named. */
static int why_verdict(char *buf, size_t len, size_t *n, const struct repeat_stat *st_a,
		       const struct repeat_stat *st_b, const char *key, const char *a_name,
		       const char *b_name)
{
	double est, lo, hi, t;
	enum stats_verdict v;
	const char *na = a_name, *nb = b_name;

	if (rep_ratio(st_a, st_b, &est, &lo, &hi))
		return -1;
	v = stats_ratio_verdict(lo, hi, STATS_EQUIV_MARGIN);
	if (v != SV_NO_DIFFERENCE && v != SV_TOO_NOISY)
		return 0;
	if (est < 1 && est > 0 && lo > 0) {	/* b over a, then */
		t = lo;
		lo = 1 / hi;
		hi = 1 / t;
		est = 1 / est;
		na = b_name;
		nb = a_name;
	}
	if (v == SV_NO_DIFFERENCE) {
		why_add(buf, len, n, "no difference: %s of the %s over the %s is %.3gx, 95 %% interval %.3g-%.3gx over %u and %u repetitions, within +-%.0f %%",
			key, na, nb, est, lo, hi, st_a->n_values, st_b->n_values, 100 * STATS_EQUIV_MARGIN);
		return 1;
	}
	why_add(buf, len, n, "too noisy to tell: %s of the %s over the %s is %.3gx, but its 95 %% interval %.3g-%.3gx over %u and %u repetitions holds 1 and reaches past +-%.0f %%%s",
		key, na, nb, est, lo, hi, st_a->n_values, st_b->n_values, 100 * STATS_EQUIV_MARGIN,
		st_a->bimodal || st_b->bimodal ? " (the repetitions fell in two clusters)" : "");
	return 1;
}

bool why_noise(char *buf, size_t len, size_t *n, const struct result *a, const char *a_name,
	       const struct result *b, const char *b_name, const char *key)
{
	const struct repeat_stat *st_a = result_repeat_stat(a, key), *st_b = result_repeat_stat(b, key);
	double va = figure(a, key), vb = figure(b, key), gap, ca, cb;
	bool bimodal;

	if (!(va > 0) || !(vb > 0) || !st_a || !st_b)
		return false;
	/* the repetitions themselves, where they were kept: the ratio's interval */
	switch (why_verdict(buf, len, n, st_a, st_b, key, a_name, b_name)) {
	case 1:
		return true;
	case 0:
		return false;
	default:
		break;	/* no interval of the ratio: the medians' intervals or spreads */
	}
	gap = 100.0 * fabs(va - vb) / fmin(va, vb);
	ca = ci_pct(a, key);
	cb = ci_pct(b, key);
	bimodal = st_a->bimodal || st_b->bimodal;
	if (!isnan(ca) && !isnan(cb)) {
		/* the intervals overlap */
		if (va > vb ? st_a->ci_lo > st_b->ci_hi : st_b->ci_lo > st_a->ci_hi)
			return false;
		why_add(buf, len, n, "the 95 %% intervals of %s (+-%.0f %% and +-%.0f %%) overlap across the %.0f %% difference",
		    key, ca, cb, gap);
	} else {
		double sa = spread_pct(a, key), sb = spread_pct(b, key);

		if (isnan(sa) || isnan(sb) || fmax(sa, sb) < gap)
			return false;
		why_add(buf, len, n, "the repetitions of %s spread %.0f %% and %.0f %%, wider than the %.0f %% difference",
		    key, sa, sb, gap);
	}
	why_add(buf, len, n, "%s: the machine's noise was too large to tell",
	    bimodal ? " (and fell in two clusters)" : "");
	return true;
}

/* ---- the machine's share ----------------------------------------------------- */

/* Of r's time preempted and waiting for a CPU, the part other tasks took. */
static double others_frac(const struct trace_result *tr)
{
	double mine = 0, all = 0;

	for (unsigned i = 0; i < tr->nsides && i < TRACE_MAX_SIDES; i++) {
		const struct trace_side *s = &tr->sides[i];
		double pre_taken = s->taken_ns > s->taken_woken_ns ? (double)(s->taken_ns - s->taken_woken_ns) : 0;

		all += (double)(s->woken_other_ns + s->preempted_ns);
		mine += (double)s->woken_other_ns + fmin((double)s->preempted_ns, pre_taken);
	}
	return all > 0 ? fmin(mine / all, 1) : 0;
}

/* The split's preempted and waiting-for-a-CPU shares, % of the figure. */
static double cpu_lost_pct(const struct trace_cause *c)
{
	double pct = 0;

	for (unsigned k = 0; k < c->nshares && k < TC_NKINDS; k++)
		if (c->shares[k].kind == TC_PREEMPTED || c->shares[k].kind == TC_CPU_WAIT)
			pct += c->shares[k].pct;
	return pct;
}

/* The two tasks (by pid, over every side) that took the most, each as a
 * share of all the time other tasks took from the endpoints. */
static void takers(char *buf, size_t len, size_t *n, const struct trace_result *tr)
{
	struct { const struct trace_taker *t; double ns; } by[4 * TRACE_TOP_TAKERS] = { { 0 } };
	unsigned nby = 0, top[2] = { 0, 0 };
	double all = 0;

	for (unsigned i = 0; i < tr->nsides && i < TRACE_MAX_SIDES; i++) {
		const struct trace_side *s = &tr->sides[i];

		all += (double)s->taken_ns;
		for (unsigned k = 0; k < s->ntakers && k < TRACE_TOP_TAKERS; k++) {
			unsigned j = 0;

			while (j < nby && by[j].t->pid != s->takers[k].pid)
				j++;
			if (j == nby && nby == sizeof(by) / sizeof(by[0]))
				continue;	/* past the first sides' takers */
			if (j == nby)
				by[nby++].t = &s->takers[k];
			by[j].ns += (double)s->takers[k].ns;
		}
	}
	for (unsigned j = 1; j < nby; j++) {
		if (by[j].ns > by[top[0]].ns) {
			top[1] = top[0];
			top[0] = j;
		} else if (top[1] == top[0] || by[j].ns > by[top[1]].ns) {
			top[1] = j;
		}
	}
	for (unsigned j = 0; j < 2 && j < nby && all > 0; j++) {
		if (j && top[1] == top[0])
			break;
		const struct trace_taker *t = by[top[j]].t;
		char comm[TRACE_COMM_MAX + 1];

		/* a record's comm is cleaned where it is read; cleaned again here,
		 * unterminated or not, since the sentence goes to a terminal */
		trace_comm_clean(comm, sizeof(comm), t->comm, sizeof(t->comm));
		why_add(buf, len, n, "%s%s (pid %u) %.0f %%", j ? ", " : ", by ", comm, t->pid,
			100 * fmin(by[top[j]].ns / all, 1));
	}
	if (nby && all > 0)
		why_add(buf, len, n, " of the time others took");
}

bool why_machine(char *buf, size_t len, size_t *n, const struct result *r, const char *name)
{
	const struct trace_cause *c = ok_cause(r);
	double pct;

	if (!c)
		return false;
	pct = cpu_lost_pct(c) * others_frac(&r->trace);
	if (pct < WHY_MACHINE_PCT)
		return false;
	/* a stream's split is one side's window: "the sender's time" */
	why_add(buf, len, n, "other tasks held the CPUs for %.0f %% of the %s%s in the %s (preempted, waiting for a CPU)",
	    pct, c->whose, strcmp(c->of, "ns_per_msg") ? "" : "'s time", name);
	takers(buf, len, n, &r->trace);
	why_add(buf, len, n, ": that figure is the machine's, not the IPC's");
	return true;
}

/* ---- --explain --------------------------------------------------------------- */

bool why_explain(char *buf, size_t len, size_t *n, const struct result *r, const char *name)
{
	const struct trace_explain *e = r ? &r->trace.explain : NULL;

	if (!e || !e->on)
		return false;
	if (!e->applied && (!e->cause || !strcmp(e->cause, "none"))) {
		why_add(buf, len, n, "--explain on the %s found no cause to test: %.100s", name, e->note);
		return true;
	}
	if (!e->applied) {
		why_add(buf, len, n, "--explain on the %s did not test %s: %.100s", name, e->cause, e->note);
		return true;
	}
	if (!e->pairs) {	/* a run of the pairs failed: the note says which */
		why_add(buf, len, n, "--explain on the %s could not test %s with %s: %.100s", name, e->cause,
			e->knob ? e->knob : "?", e->note[0] ? e->note : "no pair ran");
		return true;
	}
	why_add(buf, len, n, "--explain on the %s tested %s (%.0f %%) with %s: %s %.3gx over %u pairs (%.3g-%.3gx), %s",
	    name, e->cause, e->share_pct, e->knob ? e->knob : "?", e->of ? e->of : "?", e->ratio,
	    e->pairs, e->ratio_lo, e->ratio_hi,
	    e->confirmed ? "which confirmed it" : "which did not confirm it");
	return true;
}

/* ---- the shares ---------------------------------------------------------------- */

static double share_of(const struct trace_cause *c, enum trace_cause_kind k, bool by_pct)
{
	for (unsigned i = 0; i < c->nshares && i < TC_NKINDS; i++)
		if (c->shares[i].kind == k)
			return by_pct ? c->shares[i].pct : c->shares[i].ns;
	return 0;
}

static const char *unit_of(const struct trace_cause *c)
{
	/* a periodic pattern's split is per its period, named in whose */
	return !strcmp(c->of, "ns_per_msg") ? "message" : !strcmp(c->of, "rtt_mean_ns") ? "exchange" : c->whose;
}

static void value(char *buf, size_t len, size_t *n, double v, bool by_pct)
{
	char t[32];

	if (by_pct)
		why_add(buf, len, n, "%.0f %%", v);
	else
		why_add(buf, len, n, "%s", fmt_ns(t, sizeof(t), v));
}

/* a's largest shares: "in the paced cell the round trip took 48.1us per
 * exchange: wakeup from idle 41 %, ..." */
static void largest(char *buf, size_t len, size_t *n, const struct trace_cause *c, const char *name)
{
	char t[32];

	why_add(buf, len, n, "in the %s the %s took %s per %s:", name, c->whose,
	    fmt_ns(t, sizeof(t), c->total_ns), unit_of(c));
	for (unsigned k = 0; k < c->nshares && k < WHY_TOP; k++)
		why_add(buf, len, n, "%s %s %.0f %%", k ? "," : "", c->shares[k].name, c->shares[k].pct);
}

/* The shares that differ most between a and b (WHY_DIFFS, each at least
 * WHY_MIN_DIFF of the gap between the figures, or of the larger figure). */
/* Whose doing a share was, in the cell r where it was the larger: a
 * wakeup's CPU (cross-CPU or its own), the task that held the CPU or
 * preempted it (the peer or others). */
static const char *qualifier(enum trace_cause_kind k, const struct result *r)
{
	double peer = 0, others = 0, pre = 0, pre_others = 0;

	for (unsigned i = 0; i < r->trace.nsides && i < TRACE_MAX_SIDES; i++) {
		const struct trace_side *s = &r->trace.sides[i];

		peer += (double)s->woken_side_ns;
		others += (double)s->woken_other_ns;
		pre += (double)s->preempted_ns;
		pre_others += s->taken_ns > s->taken_woken_ns ? (double)(s->taken_ns - s->taken_woken_ns) : 0;
	}
	switch (k) {
	case TC_WAKEUP:
		return r->trace.cause.cross_cpu_frac >= 0.5 ? ", cross-CPU" : ", on its own CPU";
	case TC_CPU_WAIT:
		return peer + others <= 0 ? "" : peer > others ? " held by its peer" : " held by other tasks";
	case TC_PREEMPTED:
		return pre <= 0 ? "" : 2 * pre_others >= pre ? " by other tasks" : " by its peer";
	default:
		return "";
	}
}

static void differ(char *buf, size_t len, size_t *n, const struct why_pair *p)
{
	const struct trace_cause *a = &p->a->trace.cause, *b = &p->b->trace.cause;
	bool by_pct = p->by_pct;
	double d[TC_NKINDS], gap = by_pct ? 100 : fabs(a->total_ns - b->total_ns);
	unsigned named = 0;
	char t[32];

	if (!(gap > 0))
		gap = fmax(a->total_ns, b->total_ns);
	for (unsigned k = 0; k < TC_NKINDS; k++)
		d[k] = share_of(a, k, by_pct) - share_of(b, k, by_pct);
	if (by_pct)
		why_add(buf, len, n, "; against the %s", p->b_name);
	else
		why_add(buf, len, n, "; against %s per %s in the %s", fmt_ns(t, sizeof(t), b->total_ns),
		    unit_of(b), p->b_name);
	if (strcmp(a->whose, b->whose))	/* a stream's other side set its pace */
		why_add(buf, len, n, " (its %s)", b->whose);
	why_add(buf, len, n, ",");
	for (; named < WHY_DIFFS; named++) {
		unsigned m = 0;

		for (unsigned k = 1; k < TC_NKINDS; k++)
			if (fabs(d[k]) > fabs(d[m]))
				m = k;
		if (!(fabs(d[m]) > 0) || fabs(d[m]) < WHY_MIN_DIFF * gap)
			break;
		why_add(buf, len, n, "%s %s%s (", named ? " and" : " the shares that differ most are",
		    trace_cause_name(m), qualifier(m, d[m] > 0 ? p->a : p->b));
		value(buf, len, n, share_of(a, m, by_pct), by_pct);
		why_add(buf, len, n, " vs ");
		value(buf, len, n, share_of(b, m, by_pct), by_pct);
		why_add(buf, len, n, ")");
		d[m] = 0;
	}
	if (!named)
		why_add(buf, len, n, " no share differs by %.0f %% of the gap", 100 * WHY_MIN_DIFF);
}

size_t why_pair(char *buf, size_t len, const struct why_pair *p)
{
	const struct trace_cause *ca = ok_cause(p->a), *cb = ok_cause(p->b);
	size_t n = 0;

	if (len)
		buf[0] = '\0';
	if (!ca && !cb)
		return 0;
	why_add(buf, len, &n, "Why (trace): ");
	if (!(ca && cb && why_noise(buf, len, &n, p->a, p->a_name, p->b, p->b_name, p->key)))
		why_split(buf, len, &n, p);
	why_add(buf, len, &n, "; ");
	why_others(buf, len, &n, p);
	return why_end(buf, len, &n);
}

void why_split(char *buf, size_t len, size_t *n, const struct why_pair *p)
{
	const struct trace_cause *ca = ok_cause(p->a), *cb = ok_cause(p->b);

	if (ca) {
		largest(buf, len, n, ca, p->a_name);
		if (p->note)
			why_add(buf, len, n, " %s", p->note);
		if (cb)
			differ(buf, len, n, p);
	} else if (cb) {
		largest(buf, len, n, cb, p->b_name);
		why_add(buf, len, n, " (the %s has no cause split)", p->a_name);
	}
}

void why_others(char *buf, size_t len, size_t *n, const struct why_pair *p)
{
	if (why_machine(buf, len, n, p->a, p->a_name))
		why_add(buf, len, n, "; ");
	if (why_machine(buf, len, n, p->b, p->b_name))
		why_add(buf, len, n, "; ");
	if (why_explain(buf, len, n, p->a, p->a_name) || why_explain(buf, len, n, p->b, p->b_name))
		why_add(buf, len, n, "; ");
}

size_t why_end(char *buf, size_t len, size_t *n)
{
	while (*n >= 2 && !strcmp(buf + *n - 2, "; "))	/* the last separator: the end */
		buf[*n -= 2] = '\0';
	why_add(buf, len, n, ".");
	return *n;
}

void why_print(size_t n, const char *buf)
{
	if (n)
		printf("%s\n", buf);
}

/* ---- the seeds' comparisons ------------------------------------------------------ */

static bool ok(const struct result *r)
{
	return r && r->status == RES_OK;
}

/* Seed 000: the slowest transport against the fastest, normal scheduling. */
size_t why_000(char *buf, size_t len, const struct result *best, const struct result *worst)
{
	char a[64], b[64];

	if (len)
		buf[0] = '\0';
	if (!ok(best) || !ok(worst))
		return 0;
	snprintf(a, sizeof(a), "%.31s cell (the slowest)", worst->transport);
	snprintf(b, sizeof(b), "%.31s cell", best->transport);
	return why_pair(buf, len, &(struct why_pair){ worst, best, a, b, "msgs_per_s", false, NULL });
}

/* Seed 001: the grid's cell that parallelised worst against the best, by
 * the shares of their bottleneck sides' windows (their work differs). */
size_t why_001(char *buf, size_t len, const struct result *low, const struct result *high)
{
	char a[64], b[64];

	if (len)
		buf[0] = '\0';
	if (!ok(low) || !ok(high))
		return 0;
	snprintf(a, sizeof(a), "worst cell (%llu B, think %llu)", (unsigned long long)low->cell.size,
		 (unsigned long long)low->cell.think);
	snprintf(b, sizeof(b), "best (%llu B, think %llu)", (unsigned long long)high->cell.size,
		 (unsigned long long)high->cell.think);
	return why_pair(buf, len, &(struct why_pair){ low, high, a, b, "cpu_pct_total", true, NULL });
}

/* Seed 002: the slower of the best on one CPU and the best on two. */
size_t why_002(char *buf, size_t len, const struct result *same, const struct result *split)
{
	bool split_slow;
	const struct result *a, *b;
	char an[64], bn[64];

	if (len)
		buf[0] = '\0';
	if (!ok(same) || !ok(split))
		return 0;
	split_slow = split->msgs_per_s < same->msgs_per_s;
	a = split_slow ? split : same;
	b = split_slow ? same : split;
	snprintf(an, sizeof(an), "%.31s %s cell", a->transport, a == split ? "two-CPU" : "one-CPU");
	snprintf(bn, sizeof(bn), "%.31s %s cell", b->transport, b == split ? "two-CPU" : "one-CPU");
	return why_pair(buf, len, &(struct why_pair){ a, b, an, bn, "msgs_per_s", false, NULL });
}

/* Seed 003: the paced round trip against the flood one, timed from the
 * actual send (the client's timer lateness said beside, outside it). */
size_t why_003(char *buf, size_t len, const struct result *flood, const struct result *paced)
{
	double late;
	char note[96] = "", t[32];

	if (len)
		buf[0] = '\0';
	if (!ok(paced) || !ok(flood))
		return 0;
	late = paced->trace.has_cpath ? paced->trace.cpath.timer_late_ns :
	       paced->late_samples ? (double)paced->send_late_p50_ns : 0;
	if (late > 0)
		snprintf(note, sizeof(note), "(from the actual send: the client's timer woke %s late, outside it)",
			 fmt_ns(t, sizeof(t), late));
	return why_pair(buf, len, &(struct why_pair){ paced, flood, "paced cell", "flood cell",
						      "lat_p50_ns", false, note[0] ? note : NULL });
}

/* Seed 004: unpinned, the slower of processes and threads over a pipe. */
size_t why_004(char *buf, size_t len, const struct result *procs, const struct result *threads)
{
	bool slow;

	if (len)
		buf[0] = '\0';
	if (!ok(procs) || !ok(threads))
		return 0;
	slow = procs->msgs_per_s < threads->msgs_per_s;
	return why_pair(buf, len, &(struct why_pair){ slow ? procs : threads, slow ? threads : procs,
						      slow ? "process pair" : "thread pair",
						      slow ? "thread pair" : "process pair", "msgs_per_s",
						      false, NULL });
}
