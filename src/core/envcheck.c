// SPDX-License-Identifier: MIT
/* `ipclab env --check` (ipclab/envcheck.h): the machine's settings that
 * make figures noisy, each with the command that fixes it — cpufreq
 * governor and boost, SMT siblings of the endpoints' CPUs, CPU isolation,
 * irqbalance, deep idle states, transparent hugepages, RT throttling, timer
 * slack. What a few seconds of watching show (steal, interrupts, busy
 * tasks) is in envcheck_sample.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/pattern.h"
#include "ipclab/topology.h"
#include "ipclab/util.h"
#include "envcheck_int.h"

const char *check_status_name(enum check_status s)
{
	switch (s) {
	case CHECK_OK:
		return "ok";
	case CHECK_WARN:
		return "warn";
	case CHECK_BAD:
		return "bad";
	case CHECK_NA:
		break;
	}
	return "n/a";
}

static int read_under(const char *root, char *buf, size_t len, const char *fmt, va_list ap)
{
	char rel[256], path[512];

	vsnprintf(rel, sizeof(rel), fmt, ap);
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	return (int)read_text_file(path, buf, len);
}

int envc_sys(const struct envc *e, char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = read_under(e->o->sys_root, buf, len, fmt, ap);
	va_end(ap);
	return n;
}

int envc_proc(const struct envc *e, char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = read_under(e->o->proc_root, buf, len, fmt, ap);
	va_end(ap);
	return n;
}

void envc_put(struct envc *e, const char *name, enum check_status s, const char *fix,
	      const char *fmt, ...)
{
	struct env_check *c;
	va_list ap;

	if (e->out->n >= ENVC_MAX)
		return;
	c = &e->out->c[e->out->n++];
	c->name = name;
	c->status = s;
	snprintf(c->fix, sizeof(c->fix), "%s", fix);
	va_start(ap, fmt);
	vsnprintf(c->found, sizeof(c->found), fmt, ap);
	va_end(ap);
}

void envc_cpulist(const bool *set, unsigned max, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (unsigned c = 0; c < max && off < len; c++) {
		unsigned end = c;

		if (!set[c])
			continue;
		while (end + 1 < max && set[end + 1])
			end++;
		off += (size_t)snprintf(buf + off, len - off, end > c ? "%s%u-%u" : "%s%u",
					off ? "," : "", c, end);
		c = end;
	}
}

void envc_printable(char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			*s = '?';
}

/* ---- cpufreq ------------------------------------------------------------------ */

static void check_governor(struct envc *e)
{
	bool other[ENVC_MAX_CPUS] = { false };
	char gov[32], name[32] = "", list[64];
	unsigned seen = 0, n_other = 0;

	for (unsigned c = 0; c < ENVC_MAX_CPUS; c++) {
		if (!e->ep[c] ||
		    envc_sys(e, gov, sizeof(gov), "devices/system/cpu/cpu%u/cpufreq/scaling_governor",
			     c) <= 0)
			continue;
		seen++;
		if (strcmp(gov, "performance")) {
			other[c] = true;
			n_other++;
			envc_printable(gov);
			snprintf(name, sizeof(name), "%s", gov);
		}
	}
	envc_cpulist(other, ENVC_MAX_CPUS, list, sizeof(list));
	if (!seen)
		envc_put(e, "governor", CHECK_NA, "",
			 "no cpufreq on %s: the hypervisor or the firmware sets the clock speed",
			 e->ep_text);
	else if (!n_other)
		envc_put(e, "governor", CHECK_OK, "", "performance on %s", e->ep_text);
	else
		envc_put(e, "governor", CHECK_WARN, "sudo cpupower frequency-set -g performance",
			 "'%s' on CPU %s, not performance: the clock speed follows the load", name,
			 list);
}

static void check_boost(struct envc *e)
{
	char v[16];

	if (envc_sys(e, v, sizeof(v), "devices/system/cpu/intel_pstate/no_turbo") > 0) {
		if (!strcmp(v, "0"))
			envc_put(e, "boost", CHECK_WARN,
				 "echo 1 | sudo tee /sys/devices/system/cpu/intel_pstate/no_turbo",
				 "turbo on (intel_pstate): the clock speed follows temperature and the other cores' load");
		else
			envc_put(e, "boost", CHECK_OK, "", "turbo off (intel_pstate no_turbo = 1)");
	} else if (envc_sys(e, v, sizeof(v), "devices/system/cpu/cpufreq/boost") > 0) {
		if (!strcmp(v, "1"))
			envc_put(e, "boost", CHECK_WARN,
				 "echo 0 | sudo tee /sys/devices/system/cpu/cpufreq/boost",
				 "boost on (cpufreq): the clock speed follows temperature and the other cores' load");
		else
			envc_put(e, "boost", CHECK_OK, "", "boost off (cpufreq boost = 0)");
	} else {
		envc_put(e, "boost", CHECK_NA, "",
			 "no boost control (intel_pstate/no_turbo, cpufreq/boost): the hypervisor or the firmware decides");
	}
}

/* ---- topology and isolation ------------------------------------------------------ */

static void check_smt(struct envc *e)
{
	bool sib[ENVC_MAX_CPUS], others[ENVC_MAX_CPUS] = { false };
	char list[256], text[64];
	int shared_a = -1, shared_b = -1;
	unsigned seen = 0, nothers = 0;

	for (unsigned c = 0; c < ENVC_MAX_CPUS; c++) {
		if (!e->ep[c] ||
		    envc_sys(e, list, sizeof(list),
			     "devices/system/cpu/cpu%u/topology/thread_siblings_list", c) <= 0 ||
		    cpulist_parse(list, sib, ENVC_MAX_CPUS))
			continue;
		seen++;
		for (unsigned s = 0; s < ENVC_MAX_CPUS; s++) {
			if (!sib[s] || s == c)
				continue;
			if (e->ep[s] && shared_a < 0) {
				shared_a = (int)c;
				shared_b = (int)s;
			} else if (!e->ep[s] && !others[s]) {
				others[s] = true;
				nothers++;
			}
		}
	}
	envc_cpulist(others, ENVC_MAX_CPUS, text, sizeof(text));
	if (!seen)
		envc_put(e, "smt", CHECK_NA, "", "no CPU topology in sysfs for %s", e->ep_text);
	else if (shared_a >= 0)
		envc_put(e, "smt", CHECK_WARN,
			 "ipclab run --pin S:C with CPUs of two cores (ipclab env lists the sibling groups), or: echo off | sudo tee /sys/devices/system/cpu/smt/control",
			 "CPUs %d and %d are SMT siblings (one core): endpoints there share its execution units",
			 shared_a, shared_b);
	else if (nothers)
		envc_put(e, "smt", CHECK_WARN,
			 "keep the siblings idle (isolcpus=), or: echo off | sudo tee /sys/devices/system/cpu/smt/control",
			 "SMT on: the siblings of %s (CPU %s) run other tasks on the same cores",
			 e->ep_text, text);
	else
		envc_put(e, "smt", CHECK_OK, "", "no SMT sibling: %s %s", e->ep_text,
			 e->nep > 1 ? "each have a core of their own" : "has a core of its own");
}

/* A kernel CPU list file into set; false when missing or not a list. */
static bool read_set(struct envc *e, const char *rel, bool *set)
{
	char list[256];

	memset(set, 0, ENVC_MAX_CPUS * sizeof(*set));
	return envc_sys(e, list, sizeof(list), "%s", rel) >= 0 &&
	       !cpulist_parse(list, set, ENVC_MAX_CPUS);
}

/* The kernel command line and the pin that isolate all CPUs but 0. */
static void isolation_fix(const struct envc *e, char *buf, size_t len)
{
	unsigned last = e->nonline ? e->nonline - 1 : 0;

	if (last >= 2)
		snprintf(buf, len,
			 "boot with isolcpus=1-%u nohz_full=1-%u rcu_nocbs=1-%u, then ipclab run --pin 1:2",
			 last, last, last);
	else
		snprintf(buf, len, "boot with isolcpus=1 nohz_full=1 rcu_nocbs=1, then ipclab run --pin 1:1");
}

/* "ipclab run --pin A:B" on the first two isolated CPUs (A:A for one). */
static const char *isolated_pin(const bool *iso, char *buf, size_t len)
{
	int two[2] = { -1, -1 };

	for (unsigned c = 0, n = 0; c < ENVC_MAX_CPUS && n < 2; c++)
		if (iso[c])
			two[n++] = (int)c;
	snprintf(buf, len, "ipclab run --pin %d:%d (isolated CPUs)", two[0],
		 two[1] >= 0 ? two[1] : two[0]);
	return buf;
}

static void check_isolation(struct envc *e)
{
	bool iso[ENVC_MAX_CPUS], nz[ENVC_MAX_CPUS];
	unsigned in_iso = 0, in_nz = 0, niso = 0;
	char list[64], fix[ENVC_TEXT];

	read_set(e, "devices/system/cpu/isolated", iso);
	read_set(e, "devices/system/cpu/nohz_full", nz);
	for (unsigned c = 0; c < ENVC_MAX_CPUS; c++) {
		niso += iso[c];
		in_iso += e->ep[c] && iso[c];
		in_nz += e->ep[c] && nz[c];
	}
	envc_cpulist(iso, ENVC_MAX_CPUS, list, sizeof(list));
	isolation_fix(e, fix, sizeof(fix));
	if (e->nonline < 2)
		envc_put(e, "isolation", CHECK_NA, "", "one CPU online: nothing to isolate");
	else if (in_iso == e->nep && in_nz == e->nep)
		envc_put(e, "isolation", CHECK_OK, "", "%s isolated (isolcpus) and tickless (nohz_full)",
			 e->ep_text);
	else if (in_iso == e->nep)
		envc_put(e, "isolation", CHECK_WARN, "add nohz_full= and rcu_nocbs= with the same CPUs to the kernel command line",
			 "%s isolated but not nohz_full: the scheduler tick still interrupts them",
			 e->ep_text);
	else if (niso)
		envc_put(e, "isolation", CHECK_WARN, isolated_pin(iso, fix, sizeof(fix)),
			 "CPU %s isolated, but not all of %s: other tasks share those", list, e->ep_text);
	else
		envc_put(e, "isolation", CHECK_WARN, fix,
			 "no CPU is isolated (isolcpus and nohz_full empty): other tasks, timers and RCU callbacks share %s",
			 e->ep_text);
}

/* ---- scheduling and memory ---------------------------------------------------------- */

/* The deepest enabled idle state of the endpoints' CPUs. */
static void check_cstates(struct envc *e)
{
	char name[32] = "", v[32], driver[32];
	long deepest = -1;
	unsigned cpu = 0;

	for (unsigned c = 0; c < ENVC_MAX_CPUS; c++)
		for (unsigned k = 0; e->ep[c] && k < 16; k++) {
			char *end;
			long lat;

			if (envc_sys(e, v, sizeof(v), "devices/system/cpu/cpu%u/cpuidle/state%u/latency",
				     c, k) <= 0)
				break;
			lat = strtol(v, &end, 10);
			if (*end || lat < 0 ||
			    (envc_sys(e, v, sizeof(v), "devices/system/cpu/cpu%u/cpuidle/state%u/disable",
				      c, k) > 0 && strcmp(v, "0")))
				continue;
			if (lat > deepest) {
				deepest = lat;
				cpu = c;
				if (envc_sys(e, name, sizeof(name),
					     "devices/system/cpu/cpu%u/cpuidle/state%u/name", c, k) <= 0)
					snprintf(name, sizeof(name), "state%u", k);
				envc_printable(name);
			}
		}
	if (envc_sys(e, driver, sizeof(driver), "devices/system/cpu/cpuidle/current_driver") <= 0)
		snprintf(driver, sizeof(driver), "none");
	envc_printable(driver);
	if (deepest < 0)
		envc_put(e, "cstates", CHECK_NA, "",
			 "no idle states listed (cpuidle driver %s): the CPU halts as the hypervisor or the firmware lets it",
			 driver);
	else if (deepest > 10)
		envc_put(e, "cstates", CHECK_WARN,
			 "ipclab run --keep-awake (or --pm-qos 0); or: sudo cpupower idle-set -D 11",
			 "%s (exit latency %ld us) is enabled on CPU %u: an endpoint that sleeps wakes that much later",
			 name, deepest, cpu);
	else
		envc_put(e, "cstates", CHECK_OK, "", "the deepest enabled idle state, %s, exits in %ld us",
			 name, deepest);
}

static void check_thp(struct envc *e)
{
	char v[128], *open, *close;

	if (envc_sys(e, v, sizeof(v), "kernel/mm/transparent_hugepage/enabled") <= 0 ||
	    !(open = strchr(v, '[')) || !(close = strchr(open, ']'))) {
		envc_put(e, "thp", CHECK_NA, "", "no transparent hugepages setting in sysfs");
		return;
	}
	*close = '\0';
	envc_printable(open + 1);
	if (!strcmp(open + 1, "always"))
		envc_put(e, "thp", CHECK_WARN,
			 "echo madvise | sudo tee /sys/kernel/mm/transparent_hugepage/enabled",
			 "transparent hugepages always: khugepaged compacts memory in the background and a page fault may stall to assemble a huge page");
	else
		envc_put(e, "thp", CHECK_OK, "", "transparent hugepages %s", open + 1);
}

static long long proc_ll(struct envc *e, const char *rel, bool *ok)
{
	char v[32], *end;
	long long x;

	*ok = false;
	if (envc_proc(e, v, sizeof(v), "%s", rel) <= 0)
		return 0;
	x = strtoll(v, &end, 10);
	*ok = !*end;
	return x;
}

static void check_rt(struct envc *e)
{
	bool ok_rt, ok_period;
	long long rt = proc_ll(e, "sys/kernel/sched_rt_runtime_us", &ok_rt);
	long long period = proc_ll(e, "sys/kernel/sched_rt_period_us", &ok_period);

	if (!ok_rt || !ok_period)
		envc_put(e, "rt_throttling", CHECK_NA, "", "kernel.sched_rt_runtime_us not readable");
	else if (rt < 0)
		envc_put(e, "rt_throttling", CHECK_WARN, "sudo sysctl kernel.sched_rt_runtime_us=950000",
			 "RT throttling off (kernel.sched_rt_runtime_us = -1): a runaway --sched fifo endpoint can hold a CPU for ever");
	else
		envc_put(e, "rt_throttling", CHECK_OK, "",
			 "realtime tasks may run %lld of every %lld us: a --sched fifo endpoint that spins longer is stopped for the rest",
			 rt, period);
}

/* The pattern that sets its own timer slack (its option timer_slack). */
static const char *slack_pattern(void)
{
	for (size_t i = 0; i < n_patterns; i++)
		for (const struct opt_desc *o = patterns[i]->options; o && o->name; o++)
			if (!strcmp(o->name, "timer_slack"))
				return patterns[i]->name;
	return "?";
}

static void check_timer_slack(struct envc *e)
{
	bool ok;
	long long slack = proc_ll(e, "self/timerslack_ns", &ok);

	if (!ok)
		envc_put(e, "timer_slack", CHECK_NA, "", "no /proc/self/timerslack_ns (kernel before 4.6)");
	else if (slack > 1000)
		envc_put(e, "timer_slack", CHECK_WARN,
			 "echo 1 > /proc/$$/timerslack_ns in the shell that starts ipclab (its children inherit it), or --sched fifo:N (realtime tasks have none)",
			 "timer slack %lld ns, inherited by the endpoints: their sleeps and timeouts may end up to %lld us late (-p %s sets its own, -O timer_slack_ns)",
			 slack, slack / 1000, slack_pattern());
	else
		envc_put(e, "timer_slack", CHECK_OK, "", "timer slack %lld ns", slack);
}

/* ---- the whole ------------------------------------------------------------------ */

static void endpoint_cpus(struct envc *e)
{
	const int *want = e->o->cpus;
	bool all = want[0] < 0 && want[1] < 0;
	int two[2] = { -1, -1 };
	char list[48];

	for (unsigned c = 0; c < ENVC_MAX_CPUS; c++) {
		e->ep[c] = e->online[c] && (all || want[0] == (int)c || want[1] == (int)c);
		if (e->ep[c] && e->nep < 2)
			two[e->nep] = (int)c;
		e->nep += e->ep[c];
	}
	envc_cpulist(e->ep, ENVC_MAX_CPUS, list, sizeof(list));
	if (e->nep == 2)
		snprintf(e->ep_text, sizeof(e->ep_text), "CPUs %d and %d", two[0], two[1]);
	else
		snprintf(e->ep_text, sizeof(e->ep_text), "%s %s", e->nep == 1 ? "CPU" : "CPUs", list);
}

void env_check_run(const struct envc_opts *o, struct env_checks *out)
{
	struct envc e = { .o = o, .out = out };

	memset(out, 0, sizeof(*out));
	out->sample_ns = o->sample_ns;
	out->cpus[0] = o->cpus[0];
	out->cpus[1] = o->cpus[1];
	snprintf(out->pin_text, sizeof(out->pin_text), "%s", o->pin_text ? o->pin_text : "");
	if (!read_set(&e, "devices/system/cpu/online", e.online))
		e.online[0] = true;	/* no sysfs: at least CPU 0 */
	for (unsigned c = 0; c < ENVC_MAX_CPUS; c++)
		e.nonline += e.online[c];
	out->ncpu = e.nonline;
	endpoint_cpus(&e);
	check_governor(&e);
	check_boost(&e);
	check_smt(&e);
	check_isolation(&e);
	check_cstates(&e);
	check_thp(&e);
	check_rt(&e);
	check_timer_slack(&e);
	envc_sample(&e);
}
