// SPDX-License-Identifier: MIT
/* The trace and profile parts of a result read back (rec_trace.h): each
 * accessor reads its keys from the cell's tree and checks them, so that
 * the reports meet finite numbers, bounded strings and bounded arrays
 * only, and spell no key of the trace section. */
#include <math.h>
#include <string.h>

#include "ipclab/profile.h"
#include "ipclab/trace.h"
#include "ipclab/util.h"
#include "rec_trace.h"

_Static_assert(RTRACE_MAX_SIDES >= TRACE_MAX_SIDES && RTRACE_MAX_SIDES >= PROFILE_MAX_SIDES,
	       "every side a run writes is read");
_Static_assert(RTRACE_MAX_SHARES >= TC_NKINDS, "every share a run writes is read");
_Static_assert(RTRACE_MAX_TAKERS >= TRACE_TOP_TAKERS, "every taker a run writes is read");
_Static_assert(RTRACE_MAX_SYSCALLS >= TRACE_TOP_SYSCALLS, "every syscall a run writes is read");
_Static_assert(RPROF_MAX_TOP >= PROFILE_TOP, "every function a run writes is read");

/* ---- checked reads ------------------------------------------------------------- */

/* A finite number, or NAN. */
static double num(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	double d = json_number_value(v);

	return json_is_number(v) && isfinite(d) ? d : NAN;
}

/* A string of at most RTRACE_STR_MAX bytes with no NUL in it, or NULL. */
static const char *str(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);

	return s && n <= RTRACE_STR_MAX && strlen(s) == n ? s : NULL;
}

/* An object key handed on (per_msg's, an extra's): as a string above. */
static bool key_ok(const char *k)
{
	return strnlen(k, RTRACE_STR_MAX + 1) <= RTRACE_STR_MAX;
}

/* An array's entries read: at most bound, 0 when it is none. */
static size_t count(const json_t *a, size_t bound)
{
	size_t n = json_array_size(a);

	return n < bound ? n : bound;
}

static bool in_list(const char *const *list, const char *k)
{
	for (; *list; list++)
		if (!strcmp(*list, k))
			return true;
	return false;
}

/* ---- trace --------------------------------------------------------------------- */

static const json_t *trace_of(const struct rcell *c)
{
	const json_t *tr = json_object_get(c->obj, "trace");

	return json_is_object(tr) ? tr : NULL;
}

/* trace.sides[i], NULL past the bounded count. */
static const json_t *side_at(const struct rcell *c, size_t i)
{
	const json_t *sides = json_object_get(trace_of(c), "sides");

	return i < count(sides, RTRACE_MAX_SIDES) ? json_array_get(sides, i) : NULL;
}

bool rcell_has_trace(const struct rcell *c)
{
	return trace_of(c) != NULL;
}

/* reads trace.perturbation, perturbation_of, complete, lost_events */
bool rcell_trace_summary(const struct rcell *c, struct rtrace_summary *out)
{
	const json_t *tr = trace_of(c);

	*out = (struct rtrace_summary){
		.perturbation = num(tr, "perturbation"),
		.perturbation_of = str(tr, "perturbation_of"),
		.incomplete = json_is_false(json_object_get(tr, "complete")),
		.lost_events = num(tr, "lost_events"),
	};
	return tr != NULL;
}

/* reads trace.per_msg: every key, a number or NAN */
size_t rcell_trace_per_msg(const struct rcell *c, struct rtrace_num *out, size_t max)
{
	const json_t *pm = json_object_get(trace_of(c), "per_msg");
	size_t n = 0;
	const char *k;
	json_t *x;

	if (max > RTRACE_MAX_NUMS)
		max = RTRACE_MAX_NUMS;
	json_object_foreach((json_t *)pm, k, x) {
		if (n == max)
			break;
		if (!key_ok(k))
			continue;
		out[n].key = k;
		out[n++].v = json_is_number(x) && isfinite(json_number_value(x)) ?
				     json_number_value(x) : NAN;
	}
	return n;
}

/* reads the length of trace.sides */
size_t rcell_trace_sides(const struct rcell *c)
{
	return count(json_object_get(trace_of(c), "sides"), RTRACE_MAX_SIDES);
}

static const char *const budget_keys[RT_NBUDGET] = {
	[RT_USER] = "user_ns", [RT_SYS] = "sys_ns", [RT_RUNNABLE] = "runnable_ns",
	[RT_PREEMPTED] = "preempted_ns", [RT_SLEEP] = "sleep_ns",
};

/* reads a side's role, id, wall_ns, the budget's five, wakeups,
 * migrations, vol/invol_ctx_switches, wakeup_lat_ns.{p50,p99},
 * preempted_by_ns and the lengths of preempted_by and top_syscalls */
bool rcell_trace_side(const struct rcell *c, size_t i, struct rtrace_side *out)
{
	const json_t *s = side_at(c, i), *wl = json_object_get(s, "wakeup_lat_ns");

	if (i >= rcell_trace_sides(c))
		return false;
	*out = (struct rtrace_side){
		.role = str(s, "role"),
		.id = num(s, "id"),
		.wall_ns = num(s, "wall_ns"),
		.wakeups = num(s, "wakeups"),
		.migrations = num(s, "migrations"),
		.vol_ctx_switches = num(s, "vol_ctx_switches"),
		.invol_ctx_switches = num(s, "invol_ctx_switches"),
		.wakeup_p50_ns = num(wl, "p50"),
		.wakeup_p99_ns = num(wl, "p99"),
		.preempted_by_ns = num(s, "preempted_by_ns"),
		.ntakers = count(json_object_get(s, "preempted_by"), RTRACE_MAX_TAKERS),
		.nsyscalls = count(json_object_get(s, "top_syscalls"), RTRACE_MAX_SYSCALLS),
	};
	for (size_t p = 0; p < RT_NBUDGET; p++)
		out->budget_ns[p] = num(s, budget_keys[p]);
	return true;
}

/* reads a side's preempted_by[]: comm, pid, tid, ns, count */
size_t rcell_trace_takers(const struct rcell *c, size_t side, struct rtrace_taker *out,
			  size_t max)
{
	const json_t *a = json_object_get(side_at(c, side), "preempted_by");
	size_t n = count(a, RTRACE_MAX_TAKERS);

	n = n < max ? n : max;
	for (size_t k = 0; k < n; k++) {
		const json_t *t = json_array_get(a, k);

		out[k] = (struct rtrace_taker){ .comm = str(t, "comm"), .pid = num(t, "pid"),
						.tid = num(t, "tid"), .ns = num(t, "ns"),
						.count = num(t, "count") };
	}
	return n;
}

/* reads a side's top_syscalls[]: name, count, cpu_ns, wall_ns */
size_t rcell_trace_syscalls(const struct rcell *c, size_t side, struct rtrace_syscall *out,
			    size_t max)
{
	const json_t *a = json_object_get(side_at(c, side), "top_syscalls");
	size_t n = count(a, RTRACE_MAX_SYSCALLS);

	n = n < max ? n : max;
	for (size_t k = 0; k < n; k++) {
		const json_t *t = json_array_get(a, k);

		out[k] = (struct rtrace_syscall){ .name = str(t, "name"), .count = num(t, "count"),
						  .cpu_ns = num(t, "cpu_ns"),
						  .wall_ns = num(t, "wall_ns") };
	}
	return n;
}

/* o's keys not in known, whose value passes keep, in order; the count */
static size_t extras(const json_t *o, const char *const *known, bool (*keep)(const json_t *),
		     struct rtrace_extra *out, size_t max)
{
	size_t n = 0;
	const char *k;
	json_t *x;

	if (max > RTRACE_MAX_EXTRAS)
		max = RTRACE_MAX_EXTRAS;
	json_object_foreach((json_t *)o, k, x) {
		if (n == max)
			break;
		if (!in_list(known, k) && keep(x) && key_ok(k))
			out[n++] = (struct rtrace_extra){ .key = k, .v = x };
	}
	return n;
}

static bool is_compound(const json_t *v)
{
	return json_is_object(v) || json_is_array(v);
}

static bool not_null(const json_t *v)
{
	return !json_is_null(v);
}

/* reads a side's other objects and arrays (runnable_split, ...) */
size_t rcell_trace_side_more(const struct rcell *c, size_t side, struct rtrace_extra *out,
			     size_t max)
{
	static const char *const known[] = { "role", "id", "wakeup_lat_ns", "top_syscalls",
					     "preempted_by", NULL };

	return extras(side_at(c, side), known, is_compound, out, max);
}

/* reads trace's other keys (lost_by, unseen_spans, events, perturbation_pairs, ...) */
size_t rcell_trace_more(const struct rcell *c, struct rtrace_extra *out, size_t max)
{
	static const char *const known[] = { "sides", "per_msg", "sys_from", "critical_path_ns",
					     "lost_events", "complete", "perturbation",
					     "perturbation_of", "cause", "explain", NULL };

	return extras(trace_of(c), known, not_null, out, max);
}

const char *const rtrace_cpath_parts[RT_CPATH_PARTS] = {
	"client_user", "client_kernel", "server_wakeup", "server_user",
	"server_kernel", "client_wakeup", "unattributed",
};

/* reads trace.critical_path_ns: the seven parts, total, measured */
bool rcell_trace_cpath(const struct rcell *c, struct rtrace_cpath *out)
{
	const json_t *cp = json_object_get(trace_of(c), "critical_path_ns");

	if (!json_is_object(cp))
		return false;
	for (size_t p = 0; p < RT_CPATH_PARTS; p++)
		out->part_ns[p] = num(cp, rtrace_cpath_parts[p]);
	out->total_ns = num(cp, "total");
	out->measured_ns = num(cp, "measured");
	return true;
}

/* [lo, hi] of two finite numbers, lo <= hi; else NAN both. */
static void pair(const json_t *a, double *lo, double *hi)
{
	double l = json_number_value(json_array_get(a, 0)), h = json_number_value(json_array_get(a, 1));

	*lo = *hi = NAN;
	if (json_array_size(a) == 2 && json_is_number(json_array_get(a, 0)) &&
	    json_is_number(json_array_get(a, 1)) && isfinite(l) && isfinite(h) && l <= h) {
		*lo = l;
		*hi = h;
	}
}

/* reads trace.cause: of, whose, sentence, largest, leading, total_ns,
 * largest_pct, ci_exchanges, ci_slices, shares[]: name, ns, pct, pct_ci95 */
bool rcell_trace_cause(const struct rcell *c, struct rtrace_cause *out)
{
	const json_t *cs = json_object_get(trace_of(c), "cause");
	const json_t *sh = json_object_get(cs, "shares");

	if (!json_is_array(sh))
		return false;
	out->of = str(cs, "of");
	out->whose = str(cs, "whose");
	out->sentence = str(cs, "sentence");
	out->largest = str(cs, "largest");
	out->leading = str(cs, "leading");
	out->decided = out->leading || !json_object_get(cs, "leading");
	out->total_ns = num(cs, "total_ns");
	out->largest_pct = num(cs, "largest_pct");
	out->ci_exchanges = num(cs, "ci_exchanges");
	out->ci_slices = num(cs, "ci_slices");
	out->nshares = count(sh, RTRACE_MAX_SHARES);
	for (size_t k = 0; k < out->nshares; k++) {
		const json_t *s = json_array_get(sh, k);

		out->shares[k] = (struct rtrace_share){ .name = str(s, "name"), .ns = num(s, "ns"),
							.pct = num(s, "pct") };
		pair(json_object_get(s, "pct_ci95"), &out->shares[k].ci_lo, &out->shares[k].ci_hi);
	}
	return true;
}

/* reads trace.explain: cause, knob, of, note, share_pct, before, after,
 * ratio, ratio_lo, ratio_hi, pairs, confirmed */
bool rcell_trace_explain(const struct rcell *c, struct rtrace_explain *out)
{
	const json_t *e = json_object_get(trace_of(c), "explain");
	const json_t *conf = json_object_get(e, "confirmed");

	if (!json_is_object(e))
		return false;
	*out = (struct rtrace_explain){
		.cause = str(e, "cause"), .knob = str(e, "knob"), .of = str(e, "of"),
		.note = str(e, "note"), .share_pct = num(e, "share_pct"),
		.before = num(e, "before"), .after = num(e, "after"), .ratio = num(e, "ratio"),
		.ratio_lo = num(e, "ratio_lo"), .ratio_hi = num(e, "ratio_hi"),
		.pairs = num(e, "pairs"),
		.verdict = json_is_true(conf) ? RT_CONFIRMED :
			   json_is_false(conf) ? RT_NOT_CONFIRMED : RT_NOT_TESTED,
	};
	return true;
}

/* ---- profile ------------------------------------------------------------------- */

static const json_t *profile_of(const struct rcell *c)
{
	const json_t *pr = json_object_get(c->obj, "profile");

	return json_is_array(pr) ? pr : NULL;
}

static const json_t *prof_side_at(const struct rcell *c, size_t i)
{
	return i < rcell_profile_sides(c) ? json_array_get(profile_of(c), i) : NULL;
}

bool rcell_has_profile(const struct rcell *c)
{
	return profile_of(c) != NULL;
}

/* reads the length of profile */
size_t rcell_profile_sides(const struct rcell *c)
{
	return count(profile_of(c), RTRACE_MAX_SIDES);
}

/* reads a profile side's role, id, samples, kernel_samples, folded_file
 * and the length of top */
bool rcell_profile_side(const struct rcell *c, size_t i, struct rprof_side *out)
{
	const json_t *s = prof_side_at(c, i);

	if (i >= rcell_profile_sides(c))
		return false;
	*out = (struct rprof_side){
		.role = str(s, "role"), .id = num(s, "id"), .samples = num(s, "samples"),
		.kernel_samples = num(s, "kernel_samples"), .folded_file = str(s, "folded_file"),
		.ntop = count(json_object_get(s, "top"), RPROF_MAX_TOP),
	};
	return true;
}

/* reads a profile side's top[]: symbol, object, samples, pct */
size_t rcell_profile_top(const struct rcell *c, size_t side, struct rprof_top *out, size_t max)
{
	const json_t *a = json_object_get(prof_side_at(c, side), "top");
	size_t n = count(a, RPROF_MAX_TOP);

	n = n < max ? n : max;
	for (size_t k = 0; k < n; k++) {
		const json_t *t = json_array_get(a, k);

		out[k] = (struct rprof_top){ .symbol = str(t, "symbol"), .object = str(t, "object"),
					     .samples = num(t, "samples"), .pct = num(t, "pct") };
	}
	return n;
}

/* reads profile_run: hz, perturbation, lost_samples, complete,
 * kernel_symbols_why, folded_dir */
bool rcell_profile_run(const struct rcell *c, struct rprof_run *out)
{
	const json_t *run = json_object_get(c->obj, "profile_run");

	if (!json_is_object(run))
		run = NULL;
	*out = (struct rprof_run){
		.hz = num(run, "hz"), .perturbation = num(run, "perturbation"),
		.lost_samples = num(run, "lost_samples"),
		.incomplete = json_is_false(json_object_get(run, "complete")),
		.kernel_symbols_why = str(run, "kernel_symbols_why"),
		.folded_dir = str(run, "folded_dir"),
	};
	return run != NULL;
}
