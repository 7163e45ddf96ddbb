// SPDX-License-Identifier: MIT
/* --trace in the reports: the `trace` object of a result (docs/output.md)
 * and the one line under its row in the text table. */
#include <math.h>
#include <string.h>

#include "ipclab/util.h"
#include "trace_out.h"

static json_t *jnum_or_null(bool known, double v)
{
	return known && isfinite(v) ? json_real(v) : json_null();
}

/* Who took the side's CPU while it waited: the top takers, the total, and
 * the interrupts that ran while it was on its CPU (null: not probed). */
static void preempted_by_json(json_t *o, const struct trace_side *s, bool irqs)
{
	json_t *a = json_array();

	for (unsigned k = 0; a && k < s->ntakers && k < TRACE_TOP_TAKERS; k++)
		json_array_append_new(a, json_pack("{s:s, s:i, s:i, s:I, s:I}",
						   "comm", s->takers[k].comm,
						   "pid", (int)s->takers[k].pid, "tid", (int)s->takers[k].tid,
						   "ns", (json_int_t)s->takers[k].ns,
						   "count", (json_int_t)s->takers[k].count));
	json_object_set_new(o, "preempted_by", a ? a : json_null());
	json_object_set_new(o, "preempted_by_ns", json_integer((json_int_t)s->taken_ns));
	json_object_set_new(o, "preempted_by_woken_ns", json_integer((json_int_t)s->taken_woken_ns));
	json_object_set_new(o, "irq_ns", irqs ? json_integer((json_int_t)s->irq_ns) : json_null());
	json_object_set_new(o, "softirq_ns",
			    irqs ? json_integer((json_int_t)s->softirq_ns) : json_null());
	json_object_set_new(o, "poll_ns", json_integer((json_int_t)s->poll_ns));
}

static json_t *side_json(const struct trace_side *s, bool syscalls, bool irqs)
{
	json_t *o = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			      "role", s->server ? "server" : "client", "id", (json_int_t)s->id,
			      "wall_ns", (json_int_t)s->wall_ns, "user_ns", (json_int_t)s->user_ns,
			      "sys_ns", (json_int_t)s->sys_ns, "runnable_ns", (json_int_t)s->runnable_ns,
			      "preempted_ns", (json_int_t)s->preempted_ns,
			      "sleep_ns", (json_int_t)s->sleep_ns, "wakeups", (json_int_t)s->wakeups,
			      "wakeups_same_cpu", (json_int_t)s->wakeups_same_cpu,
			      "wakeups_sent", (json_int_t)s->wakes_sent,
			      "ctx_switches", (json_int_t)(s->vol_cs + s->invol_cs),
			      "vol_ctx_switches", (json_int_t)s->vol_cs,
			      "invol_ctx_switches", (json_int_t)s->invol_cs,
			      "migrations", (json_int_t)s->migrations);
	json_t *wk = json_pack("{s:I, s:I, s:I, s:I, s:I}", "from_idle_ns", (json_int_t)s->woken_idle_ns,
			       "cpu_wait_ns", (json_int_t)s->woken_other_ns,
			       "from_peer_ns", (json_int_t)s->woken_side_ns,
			       "after_timer_ns", (json_int_t)s->woken_timer_ns,
			       "timer_wakeups", (json_int_t)s->timer_wakeups);
	json_t *top = json_array();

	if (!o || !top || !wk) {
		json_decref(o);
		json_decref(top);
		json_decref(wk);
		return NULL;
	}
	json_object_set_new(o, "runnable_split", wk);
	json_object_set_new(o, "wakeups_raced", json_integer((json_int_t)s->wakeups_raced));
	json_object_set_new(o, "syscalls", syscalls ? json_integer((json_int_t)s->syscalls) : json_null());
	json_object_set_new(o, "wakeup_lat_ns",
			    s->lat_count ? json_pack("{s:I, s:I, s:I, s:I, s:I}",
						     "count", (json_int_t)s->lat_count,
						     "min", (json_int_t)s->lat_min_ns,
						     "p50", (json_int_t)s->lat_p50_ns,
						     "p99", (json_int_t)s->lat_p99_ns,
						     "max", (json_int_t)s->lat_max_ns) : json_null());
	for (unsigned k = 0; k < s->ntop; k++)
		json_array_append_new(top, json_pack("{s:s, s:I, s:I, s:I}", "name", s->top[k].name,
						     "count", (json_int_t)s->top[k].count,
						     "cpu_ns", (json_int_t)s->top[k].cpu_ns,
						     "wall_ns", (json_int_t)s->top[k].wall_ns));
	json_object_set_new(o, "top_syscalls", top);
	preempted_by_json(o, s, irqs);
	return o;
}

static json_t *cpath_json(const struct trace_cpath *c)
{
	return json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}",
			 "client_user", c->client_user_ns, "client_kernel", c->client_kernel_ns,
			 "server_wakeup", c->server_wakeup_ns, "server_user", c->server_user_ns,
			 "server_kernel", c->server_kernel_ns, "client_wakeup", c->client_wakeup_ns,
			 "unattributed", c->unattributed_ns, "total", c->total_ns,
			 "measured", c->measured_ns, "wakeup_from_idle", c->wakeup_idle_ns,
			 "wakeup_cpu_wait", c->wakeup_cpu_wait_ns, "preempted", c->preempted_ns,
			 "pacing_gap", c->pacing_gap_ns, "timer_late", c->timer_late_ns);
}

/* {of, total_ns, whose, shares: [{name, ns, pct, pct_ci95}], largest,
 * leading, ci_exchanges or ci_slices, scale, ..., sentence}, or null */
static json_t *cause_json(const struct trace_cause *c)
{
	json_t *o, *sh = json_array();

	if (!c || !sh) {
		json_decref(sh);
		return json_null();
	}
	for (unsigned k = 0; k < c->nshares; k++)
		json_array_append_new(sh, json_pack("{s:s, s:f, s:f, s:o}", "name", c->shares[k].name,
						    "ns", c->shares[k].ns, "pct", c->shares[k].pct,
						    "pct_ci95", c->ci_on ? json_pack("[f, f]", c->ci[k].lo, c->ci[k].hi)
									 : json_null()));
	o = json_pack("{s:s, s:f, s:s, s:o, s:s, s:f, s:o, s:o, s:f, s:f, s:s}", "of", c->of,
		      "total_ns", c->total_ns, "whose", c->whose, "shares", sh,
		      "largest", trace_cause_name(c->largest), "largest_pct", c->largest_pct,
		      "leading", c->decided ? json_string(trace_cause_name(c->largest)) : json_null(),
		      "ci_exchanges", c->ci_on && !c->ci_slices ? json_integer((json_int_t)c->ci_exchanges)
							       : json_null(),
		      "scale", c->scale, "cross_cpu_frac", c->cross_cpu_frac,
		      "sentence", c->sentence);
	/* the intervals' units: the window's slices (stream, fan-in, cycle) */
	if (o)
		json_object_set_new(o, "ci_slices", c->ci_on && c->ci_slices
							 ? json_integer((json_int_t)c->ci_slices) : json_null());
	if (o && c->nclients) {	/* fan-in */
		json_t *a = json_array();

		for (unsigned k = 0; a && k < c->nclients; k++) {
			const struct trace_client_path *p = &c->clients[k];

			json_array_append_new(a, json_pack("{s:i, s:f, s:f, s:f, s:f, s:f}", "id", (int)p->id,
							   "total_ns", p->total_ns, "work_ns", p->work_ns,
							   "wakeup_ns", p->wakeup_ns, "preempted_ns", p->preempted_ns,
							   "server_wait_ns", p->peer_ns));
		}
		json_object_set_new(o, "clients", a ? a : json_null());
	}
	if (o && !strcmp(c->of, "ns_per_msg")) {
		json_object_set_new(o, "bottleneck", json_string(c->bottleneck_sends ? "sender" : "receiver"));
		json_object_set_new(o, "other_wait_pct", json_real(c->other_wait_pct));
	}
	return o ? o : json_null();
}

/* --explain: the cause, the knob and what it measured. */
static json_t *explain_json(const struct trace_explain *e)
{
	bool ran = e->applied && e->pairs;
	json_t *o = json_pack("{s:s, s:f, s:b, s:I}", "cause", e->cause ? e->cause : "none",
			      "share_pct", e->share_pct, "applied", e->applied,
			      "pairs", (json_int_t)e->pairs);

	if (!o)
		return NULL;
	json_object_set_new(o, "knob", e->knob ? json_string(e->knob) : json_null());
	json_object_set_new(o, "of", ran && e->of ? json_string(e->of) : json_null());
	json_object_set_new(o, "before", jnum_or_null(ran, e->before));
	json_object_set_new(o, "after", jnum_or_null(ran, e->after));
	json_object_set_new(o, "ratio", jnum_or_null(ran, e->ratio));
	json_object_set_new(o, "ratio_lo", jnum_or_null(ran, e->ratio_lo));
	json_object_set_new(o, "ratio_hi", jnum_or_null(ran, e->ratio_hi));
	json_object_set_new(o, "confirmed", ran ? json_boolean(e->confirmed) : json_null());
	json_object_set_new(o, "note", e->note[0] ? json_string(e->note) : json_null());
	if (e->ntries) {	/* each knob tried, the first as above */
		json_t *a = json_array();

		for (unsigned i = 0; a && i < e->ntries && i < 2; i++) {
			const struct trace_explain_try *t = &e->tries[i];
			bool r = t->applied && t->pairs;
			json_t *x = json_object();

			if (!x)
				continue;
			json_object_set_new(x, "knob", t->knob ? json_string(t->knob) : json_null());
			json_object_set_new(x, "applied", json_boolean(t->applied));
			json_object_set_new(x, "pairs", json_integer((json_int_t)t->pairs));
			json_object_set_new(x, "ratio", jnum_or_null(r, t->ratio));
			json_object_set_new(x, "ratio_lo", jnum_or_null(r, t->ratio_lo));
			json_object_set_new(x, "ratio_hi", jnum_or_null(r, t->ratio_hi));
			json_object_set_new(x, "confirmed", r ? json_boolean(t->confirmed) : json_null());
			json_object_set_new(x, "note", t->note[0] ? json_string(t->note) : json_null());
			json_array_append_new(a, x);
		}
		json_object_set_new(o, "tries", a ? a : json_null());
	}
	return o;
}

json_t *trace_json(const struct trace_result *tr)
{
	json_t *o = json_object(), *sides = json_array();
	json_t *pm = json_pack("{s:f, s:f, s:f}", "ctx_switches", tr->per_msg.ctx_switches,
			       "wakeups", tr->per_msg.wakeups, "migrations", tr->per_msg.migrations);

	if (!o || !sides || !pm) {
		json_decref(o);
		json_decref(sides);
		json_decref(pm);
		return NULL;
	}
	for (unsigned i = 0; i < tr->nsides && i < TRACE_MAX_SIDES; i++)
		json_array_append_new(sides, side_json(&tr->sides[i], tr->syscalls_traced, tr->irqs_known));
	json_object_set_new(pm, "syscalls", jnum_or_null(tr->syscalls_traced, tr->per_msg.syscalls));
	json_object_set_new(pm, "ipis", jnum_or_null(tr->ipis_known, tr->per_msg.ipis));
	json_object_set_new(pm, "idle_exits", json_real(tr->per_msg.idle_exits));
	json_object_set_new(o, "sides", sides);
	json_object_set_new(o, "per_msg", pm);
	json_object_set_new(o, "sys_from", json_string(tr->syscalls_traced ? "syscalls" : "getrusage"));
	json_object_set_new(o, "critical_path_ns", tr->has_cpath ? cpath_json(&tr->cpath) : json_null());
	json_object_set_new(o, "cause", cause_json(trace_cause(tr)));
	json_object_set_new(o, "lost_events", json_integer((json_int_t)tr->lost_events));
	json_object_set_new(o, "lost_by", json_pack("{s:I, s:I, s:I, s:I}",
		"missed_wakeups", (json_int_t)tr->lost_missed_wakeups,
		"syscall_table", (json_int_t)tr->lost_syscalls,
		"recursion", (json_int_t)tr->lost_recursion,
		"unseen_wakeups", (json_int_t)tr->lost_unseen_wakeups));
	json_object_set_new(o, "unseen_spans", json_integer((json_int_t)tr->unseen_spans));
	json_object_set_new(o, "complete", json_boolean(tr->complete));
	json_object_set_new(o, "perturbation", jnum_or_null(tr->perturbation > 0, tr->perturbation));
	json_object_set_new(o, "perturbation_of",
			    tr->perturbation_of ? json_string(tr->perturbation_of) : json_null());
	perturbation_json(o, tr->perturbation_pairs, tr->perturbation_lo, tr->perturbation_hi,
			  tr->perturbation_separable);
	if (tr->explain.on)
		json_object_set_new(o, "explain", explain_json(&tr->explain));
	if (tr->events.on)	/* --trace=events */
		json_object_set_new(o, "events",
				    json_pack("{s:i, s:I, s:I, s:I, s:I, s:b}", "pid", (int)tr->events.pid,
					      "recorded", (json_int_t)tr->events.recorded,
					      "lost", (json_int_t)tr->events.lost,
					      "written", (json_int_t)tr->events.written,
					      "span_ns", (json_int_t)tr->events.span_ns,
					      "truncated", tr->events.truncated));
	return o;
}

void perturbation_json(json_t *o, unsigned pairs, double lo, double hi, bool separable)
{
	json_object_set_new(o, "perturbation_pairs", json_integer(pairs));
	json_object_set_new(o, "perturbation_lo", jnum_or_null(pairs > 0, lo));
	json_object_set_new(o, "perturbation_hi", jnum_or_null(pairs > 0, hi));
	json_object_set_new(o, "perturbation_separable", pairs ? json_boolean(separable) : json_null());
}

/* "traced/untraced 1.12x (1.05-1.20 over 3 pairs)", or where the pairs
 * disagree on the side of 1, "not separable from noise (0.92-1.31x ...)". */
void perturbation_text(FILE *f, const char *what, double med, unsigned pairs, double lo,
		       double hi, bool separable)
{
	if (pairs < 2)
		fprintf(f, "  %s %.2fx", what, med);
	else if (separable)
		fprintf(f, "  %s %.2fx (%.2f-%.2f over %u pairs)", what, med, lo, hi, pairs);
	else
		fprintf(f, "  %s not separable from noise (%.2f-%.2fx over %u pairs)", what, lo, hi,
			pairs);
}

/* The scaled form the table uses for latencies: 850ns, 28us, 1.5ms. */
static void lat_text(uint64_t ns, char *buf, size_t len)
{
	if (ns < 1000)
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.3gus", (double)ns / 1e3);
	else
		snprintf(buf, len, "%.3gms", (double)ns / 1e6);
}

static double pct_of(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* "    machine: client lost 31.2% of its window to bash (pid 4242; 33.0% to
 * others in all)", for each side that lost 1 % or more, and the interrupt
 * time beside; nothing when no side did. */
static void machine_line(FILE *f, const struct trace_result *tr)
{
	const char *sep = "    machine:";

	for (unsigned i = 0; i < tr->nsides && i < TRACE_MAX_SIDES; i++) {
		const struct trace_side *s = &tr->sides[i];
		double all = pct_of(s->taken_ns, s->wall_ns), irq = pct_of(s->irq_ns + s->softirq_ns, s->wall_ns);
		char who[24];

		if (all < 1 && irq < 1)
			continue;
		if (s->server)
			snprintf(who, sizeof(who), "server");
		else
			snprintf(who, sizeof(who), "client %u", s->id);
		fprintf(f, "%s %s", sep, who);
		if (all >= 1 && s->ntakers) {
			char name[64];

			trace_taker_label(&s->takers[0], name, sizeof(name));
			fprintf(f, " lost %.1f%% of its window to %s (%.1f%% to others in all)",
				pct_of(s->takers[0].ns, s->wall_ns), name, all);
		}
		if (irq >= 1)
			fprintf(f, "%s %.1f%% to interrupts", all >= 1 && s->ntakers ? "," : " lost", irq);
		sep = ";";
	}
	if (strcmp(sep, "    machine:"))
		fputc('\n', f);
}

/* "    explain, then --keep-awake: 1.19x (...): not confirmed": the knobs
 * tried after the first */
static void explain_tries(FILE *f, const struct trace_explain *e)
{
	for (unsigned i = 1; i < e->ntries && i < 2; i++) {
		const struct trace_explain_try *t = &e->tries[i];

		if (t->applied && t->pairs)
			fprintf(f, "    explain, then %s: %.2fx (%.2f-%.2f over %u pairs): %s\n", t->knob,
				t->ratio, t->ratio_lo, t->ratio_hi, t->pairs,
				t->confirmed ? "confirmed" : "not confirmed");
		else if (t->knob)
			fprintf(f, "    explain, then %s: not applied: %s\n", t->knob, t->note);
		else	/* advice: no knob ipclab turns */
			fprintf(f, "    explain, then: %s\n", t->note);
	}
}

/* "    explain: cross-CPU wakeups (41.2% of the figure) -> --pin same:
 * lat_p50_ns 132us -> 80.1us, 0.61x (0.55-0.70 over 3 pairs): confirmed" */
static void explain_line(FILE *f, const struct trace_result *tr)
{
	const struct trace_explain *e = &tr->explain;
	char a[24], b[24];

	if (!e->on)
		return;
	fprintf(f, "    explain: %s", e->cause ? e->cause : "none");
	if (e->knob)
		fprintf(f, " (%.1f%% of the %s) -> %s", e->share_pct,
			trace_cause(tr) ? "figure" : "windows", e->knob);
	if (!e->applied || !e->pairs) {
		fprintf(f, "%s%s\n", e->knob && !e->applied ? " not applied: " : ": ", e->note);
		explain_tries(f, e);
		return;
	}
	if (e->of && strcmp(e->of, "msgs_per_s")) {	/* a time */
		lat_text((uint64_t)e->before, a, sizeof(a));
		lat_text((uint64_t)e->after, b, sizeof(b));
	} else {
		snprintf(a, sizeof(a), "%.3g msgs/s", e->before);
		snprintf(b, sizeof(b), "%.3g msgs/s", e->after);
	}
	fprintf(f, ": %s %s -> %s, %.2fx (%.2f-%.2f over %u pairs): %s\n", e->of, a, b, e->ratio,
		e->ratio_lo, e->ratio_hi, e->pairs, e->confirmed ? "confirmed" : "not confirmed");
	explain_tries(f, e);
}

/* "    cause: wakeup latency 41% (35-47%), kernel work 30% (24-36%), ...:
 * <sentence>" (the shares' 95 % intervals where they have them) */
static void cause_line(FILE *f, const struct trace_cause *c)
{
	if (!c)
		return;
	fprintf(f, "    cause (%s):", c->whose);
	for (unsigned k = 0; k < c->nshares && k < 4; k++) {
		fprintf(f, "%s %s %.0f%%", k ? "," : "", c->shares[k].name, c->shares[k].pct);
		if (c->ci_on)
			fprintf(f, " (%.0f-%.0f%%)", c->ci[k].lo, c->ci[k].hi);
	}
	if (c->nshares > 4)
		fprintf(f, ", %u more", c->nshares - 4);
	fprintf(f, ". %c%s\n", c->sentence[0] >= 'a' && c->sentence[0] <= 'z' ? c->sentence[0] - 32 : c->sentence[0],
		c->sentence[0] ? c->sentence + 1 : "");
}

void trace_table_line(FILE *f, const struct trace_result *tr)
{
	uint64_t p50 = 0;
	char lat[24];

	/* the wakeup latency of the side woken most often stands for the cell */
	for (unsigned i = 0, most = 0; i < tr->nsides; i++)
		if (tr->sides[i].lat_count > most) {
			most = (unsigned)tr->sides[i].lat_count;
			p50 = tr->sides[i].lat_p50_ns;
		}
	lat_text(p50, lat, sizeof(lat));
	fprintf(f, "    trace: cs/msg %.2f  wake/msg %.2f  wake p50 %s  mig/msg %.3g", tr->per_msg.ctx_switches,
		tr->per_msg.wakeups, lat, tr->per_msg.migrations);
	if (tr->syscalls_traced) {
		fprintf(f, "  sys/msg %.2f", tr->per_msg.syscalls);
		if (tr->nsides && tr->sides[0].ntop)
			fprintf(f, " (server: %s most)", tr->sides[0].top[0].name);
	}
	if (tr->has_cpath)
		fprintf(f, "  path %.0f/%.0fns", tr->cpath.total_ns, tr->cpath.measured_ns);
	if (tr->perturbation > 0)
		perturbation_text(f, "traced/untraced", tr->perturbation, tr->perturbation_pairs,
				  tr->perturbation_lo, tr->perturbation_hi, tr->perturbation_separable);
	if (!tr->complete)
		fprintf(f, "  INCOMPLETE: %llu events lost (%llu missed wakeups, %llu syscall table, %llu recursion, %llu unseen wakeups)",
			(unsigned long long)tr->lost_events, (unsigned long long)tr->lost_missed_wakeups,
			(unsigned long long)tr->lost_syscalls, (unsigned long long)tr->lost_recursion,
			(unsigned long long)tr->lost_unseen_wakeups);
	if (tr->events.on)
		fprintf(f, "  timeline: process %u, %.3g ms, %llu records%s", tr->events.pid,
			(double)tr->events.span_ns / 1e6, (unsigned long long)tr->events.recorded,
			tr->events.truncated ? " (TRUNCATED: records lost)" : "");
	fputc('\n', f);
	cause_line(f, trace_cause(tr));
	machine_line(f, tr);
	explain_line(f, tr);
}
