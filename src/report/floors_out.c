// SPDX-License-Identifier: MIT
/* The canary and the floors in the record's "env" (include/ipclab/floors.h),
 * as JSON and as text, and how far two canaries read back from result files
 * are apart, for compare and history: which state of the machine a run was
 * measured in. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "ipclab/util.h"
#include "env_json.h"

/* To a hundredth of a nanosecond: the digits beyond say nothing. */
static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(round(v * 100) / 100) : json_null();
}

static json_t *cpus_json(const int cpus[2])
{
	return json_pack("[o, o]", cpus[0] >= 0 ? json_integer(cpus[0]) : json_null(),
			 cpus[1] >= 0 ? json_integer(cpus[1]) : json_null());
}

static json_t *one_canary(const struct canary *c)
{
	return json_pack("{s:o, s:o, s:o}", "cacheline_rtt_ns", num_or_null(c->cacheline_rtt_ns),
			 "pipe_rtt_ns", num_or_null(c->pipe_rtt_ns), "cpus", cpus_json(c->cpus));
}

json_t *canary_json(const struct canary *c)
{
	json_t *o = json_object();

	if (o && c[0].on && json_object_set_new(o, "start", one_canary(&c[0])))
		goto fail;
	if (o && c[1].on && json_object_set_new(o, "end", one_canary(&c[1])))
		goto fail;
	return o;
fail:
	json_decref(o);
	return NULL;
}

static const struct {
	const char *key, *label;
	size_t off;
} floor_keys[] = {
	{ "cacheline_rtt_ns", "cache-line round trip", offsetof(struct floors, cacheline_rtt) },
	{ "wake_idle_ns", "futex wake-to-run, idle CPU", offsetof(struct floors, wake_idle) },
	{ "wake_busy_ns", "futex wake-to-run, busy CPU", offsetof(struct floors, wake_busy) },
	{ "syscall_ns", "system call (getppid)", offsetof(struct floors, syscall) },
};

static const struct floor_stat *floor_of(const struct floors *f, size_t i)
{
	return (const struct floor_stat *)((const char *)f + floor_keys[i].off);
}

/* {"cpus", "cacheline_rtt_ns", ..., "spread": {KEY: {"p10_ns", "p90_ns", "n"}}} */
json_t *floors_json(const struct floors *f)
{
	json_t *o = json_object(), *spread = json_object();
	int rc = !o || !spread || json_object_set_new(o, "cpus", cpus_json(f->cpus));

	for (size_t i = 0; !rc && i < ARRAY_SIZE(floor_keys); i++) {
		const struct floor_stat *s = floor_of(f, i);

		rc |= json_object_set_new(o, floor_keys[i].key, num_or_null(s->median_ns));
		rc |= json_object_set_new(spread, floor_keys[i].key,
					  json_pack("{s:o, s:o, s:i}", "p10_ns", num_or_null(s->p10_ns),
						    "p90_ns", num_or_null(s->p90_ns), "n", (int)s->n));
	}
	if (!rc)
		rc |= json_object_set(o, "spread", spread);
	if (!rc && f->why[0])
		rc |= json_object_set_new(o, "why", json_string(f->why));
	json_decref(spread);
	if (rc) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static void ns_text(char *buf, size_t len, double ns)
{
	if (isfinite(ns))
		fmt_ns(buf, len, ns);
	else
		snprintf(buf, len, "-");
}

void canary_text(FILE *f, const struct canary *c)
{
	static const char *const when[2] = { "at the start", "at the end" };

	for (int k = 0; k < 2; k++) {
		char cl[32], pipe[32];

		if (!c[k].on)
			continue;
		ns_text(cl, sizeof(cl), c[k].cacheline_rtt_ns);
		ns_text(pipe, sizeof(pipe), c[k].pipe_rtt_ns);
		fprintf(f, "  %-28s cache line %s (CPUs %d:%d), pipe %s (CPU %d)\n", when[k], cl,
			c[k].cpus[0], c[k].cpus[1], pipe, c[k].cpus[0]);
	}
}

int floors_text(FILE *f, const struct floors *fl)
{
	fprintf(f, "floors on CPUs %d (waker) and %d (woken)\n", fl->cpus[0], fl->cpus[1]);
	for (size_t i = 0; i < ARRAY_SIZE(floor_keys); i++) {
		const struct floor_stat *s = floor_of(fl, i);
		char m[32], lo[32], hi[32];

		ns_text(m, sizeof(m), s->median_ns);
		ns_text(lo, sizeof(lo), s->p10_ns);
		ns_text(hi, sizeof(hi), s->p90_ns);
		if (s->n)
			fprintf(f, "  %-28s %10s  (p10 %s, p90 %s, n %u)\n", floor_keys[i].label, m, lo, hi,
				s->n);
		else
			fprintf(f, "  %-28s %10s  (not measured)\n", floor_keys[i].label, m);
	}
	if (fl->why[0])
		fprintf(f, "  ! %s\n", fl->why);
	return ferror(f) ? -EIO : 0;
}

/* ---- two canaries (read back by rec_env.c) ---- */

double canary_drift(const struct canary *c, const char **what)
{
	return c[0].on && c[1].on ? canary_ratio(c[0].cacheline_rtt_ns, c[0].pipe_rtt_ns,
						 c[1].cacheline_rtt_ns, c[1].pipe_rtt_ns, what) : 0;
}

double canary_between(const struct canary *a, const struct canary *b, const char **what)
{
	const struct canary *x = a[0].on ? &a[0] : &a[1], *y = b[0].on ? &b[0] : &b[1];

	return x->on && y->on ? canary_ratio(x->cacheline_rtt_ns, x->pipe_rtt_ns,
					     y->cacheline_rtt_ns, y->pipe_rtt_ns, what) : 0;
}

/* ---- a ping-pong against the floors ---- */

/* "pipe pingpong 64B: RTT p50 11.4us = 2 wake-to-run onto an idle CPU of
 * 4.1us + 3.2us in the transport's code", for each round trip measured
 * across two CPUs: a spinning transport's against one cache line's round
 * trip, a sleeping one's against two wakeups. */
void floors_against(FILE *f, const struct report *rep)
{
	const struct floors *fl = &rep->env.floors;
	bool head = false;

	for (size_t i = 0; fl->on && i < rep->n; i++) {
		const struct result *r = &rep->results[i];
		const struct cell *c = &r->cell;
		bool spins = c->tp && (c->tp->caps & TP_SPINS);
		double floor = spins ? fl->cacheline_rtt.median_ns : 2 * fl->wake_idle.median_ns;
		char rtt[32], one[32], rest[32];

		if (r->status != RES_OK || r->lat_kind != LAT_RTT || !r->lat_p50_ns ||
		    c->pin.server_cpu < 0 || c->pin.client_cpu < 0 ||
		    c->pin.server_cpu == c->pin.client_cpu || !isfinite(floor))
			continue;
		if (!head)
			fprintf(f, "against the floors (env.floors, CPUs %d and %d):\n", fl->cpus[0],
				fl->cpus[1]);
		head = true;
		fmt_ns(rtt, sizeof(rtt), (double)r->lat_p50_ns);
		fmt_ns(one, sizeof(one), spins ? floor : floor / 2);
		fmt_ns(rest, sizeof(rest), fabs((double)r->lat_p50_ns - floor));
		fprintf(f, "  %s %s %" PRIu64 "B: RTT p50 %s = %s of %s %c %s%s\n", r->transport,
			r->pattern, c->size, rtt,
			spins ? "1 cache-line round trip" : "2 wake-to-run onto an idle CPU", one,
			(double)r->lat_p50_ns >= floor ? '+' : '-', rest,
			(double)r->lat_p50_ns >= floor ? " in the transport's code" :
							 ": below the floors (taken under other load?)");
	}
}
