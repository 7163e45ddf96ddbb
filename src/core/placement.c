// SPDX-License-Identifier: MIT
/* Placement: --pin and --sched parsing, and applying them in each endpoint.
 * A placement that cannot be applied is an error with the reason, never
 * silently ignored. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipclab/placement.h"

/* The n-th CPU this process may run on, or -1. */
static int allowed_cpu(unsigned n)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set) && n-- == 0)
			return cpu;
	return -1;
}

static int cpu_usable(int cpu)
{
	cpu_set_t set;

	if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof(set), &set))
		return 0;
	return CPU_ISSET(cpu, &set);
}

static int parse_cpu(const char *s, int *cpu)
{
	uint64_t v;

	if (parse_u64(s, &v) || v > 1000000)
		return -EINVAL;
	*cpu = (int)v;
	return 0;
}

int pin_make(enum pin_mode mode, struct pin_spec *out, char *err, size_t errlen)
{
	static const char *const name[] = { [PIN_NONE] = "none", [PIN_SAME] = "same", [PIN_SPLIT] = "split" };

	memset(out, 0, sizeof(*out));
	out->server_cpu = out->client_cpu = -1;
	out->mode = mode;
	switch (mode) {
	case PIN_NONE:
		break;
	case PIN_SAME:
		out->server_cpu = out->client_cpu = allowed_cpu(0);
		break;
	case PIN_SPLIT:
		out->server_cpu = allowed_cpu(0);
		out->client_cpu = allowed_cpu(1);
		if (out->client_cpu < 0)
			return errf(err, errlen, EINVAL,
				    "--pin split needs two usable CPUs, this process may use one; use --pin same or none");
		break;
	default:
		return errf(err, errlen, EINVAL, "a placement of given CPUs needs them: --pin SERVER_CPU:CLIENT_CPU");
	}
	snprintf(out->text, sizeof(out->text), "%s", name[mode]);
	return 0;
}

int pin_parse(const char *s, struct pin_spec *out, char *err, size_t errlen)
{
	if (strcmp(s, "none") == 0)
		return pin_make(PIN_NONE, out, err, errlen);
	if (strcmp(s, "same") == 0)
		return pin_make(PIN_SAME, out, err, errlen);
	if (strcmp(s, "split") == 0)
		return pin_make(PIN_SPLIT, out, err, errlen);
	memset(out, 0, sizeof(*out));
	snprintf(out->text, sizeof(out->text), "%s", s);
	out->server_cpu = out->client_cpu = -1;
	char a[16], b[16];
	const char *colon = strchr(s, ':');

	if (!colon || (size_t)(colon - s) >= sizeof(a) || strlen(colon + 1) >= sizeof(b))
		return errf(err, errlen, EINVAL,
			    "--pin %s: expected none, same, split or SERVER_CPU:CLIENT_CPU (e.g. 0:1)", s);
	snprintf(a, sizeof(a), "%.*s", (int)(colon - s), s);
	snprintf(b, sizeof(b), "%s", colon + 1);
	out->mode = PIN_CPUS;
	if (parse_cpu(a, &out->server_cpu) || parse_cpu(b, &out->client_cpu))
		return errf(err, errlen, EINVAL,
			    "--pin %s: CPUs must be numbers, e.g. --pin 0:1", s);
	for (int i = 0; i < 2; i++) {
		int cpu = i ? out->client_cpu : out->server_cpu;

		if (!cpu_usable(cpu))
			return errf(err, errlen, EINVAL,
				    "--pin %s: CPU %d does not exist or is not allowed here (online: 0-%ld)",
				    s, cpu, sysconf(_SC_NPROCESSORS_ONLN) - 1);
	}
	return 0;
}

void sched_make(int policy, int prio, struct sched_spec *out)
{
	const char *name = policy == SCHED_FIFO ? "fifo" : policy == SCHED_RR ? "rr" :
			   policy == SCHED_BATCH ? "batch" : policy == SCHED_IDLE ? "idle" : "other";

	memset(out, 0, sizeof(*out));
	out->policy = policy;
	if (policy == SCHED_FIFO || policy == SCHED_RR) {
		out->prio = prio;
		snprintf(out->text, sizeof(out->text), "%s:%d", name, prio);
	} else {
		snprintf(out->text, sizeof(out->text), "%s", name);
	}
}

int sched_parse(const char *s, struct sched_spec *out, char *err, size_t errlen)
{
	static const struct { const char *name; int policy; bool rt; } pol[] = {
		{ "other", SCHED_OTHER, false }, { "batch", SCHED_BATCH, false },
		{ "idle", SCHED_IDLE, false }, { "fifo", SCHED_FIFO, true },
		{ "rr", SCHED_RR, true },
	};
	const char *colon = strchr(s, ':');
	size_t nl = colon ? (size_t)(colon - s) : strlen(s);

	memset(out, 0, sizeof(*out));
	snprintf(out->text, sizeof(out->text), "%s", s);
	for (size_t i = 0; i < ARRAY_SIZE(pol); i++) {
		if (strlen(pol[i].name) != nl || strncmp(pol[i].name, s, nl))
			continue;
		out->policy = pol[i].policy;
		if (!pol[i].rt) {
			if (colon)
				return errf(err, errlen, EINVAL, "--sched %s: %s takes no priority", s,
					    pol[i].name);
			return 0;
		}
		uint64_t prio;
		int lo = sched_get_priority_min(out->policy), hi = sched_get_priority_max(out->policy);

		if (!colon || parse_u64(colon + 1, &prio) || prio < (uint64_t)lo || prio > (uint64_t)hi)
			return errf(err, errlen, EINVAL,
				    "--sched %s: %s needs a priority %d..%d, e.g. --sched %s:%d", s,
				    pol[i].name, lo, hi, pol[i].name, hi < 90 ? hi : 90);
		out->prio = (int)prio;
		return 0;
	}
	return errf(err, errlen, EINVAL,
		    "--sched %s: expected other, batch, idle, fifo:PRIO or rr:PRIO", s);
}

int placement_cpu(const struct cell *c, enum tp_role role, unsigned id)
{
	if (c->pin.mode == PIN_NONE)
		return -1;
	if (role == TP_SERVER || c->pin.mode == PIN_SAME || c->pin.mode == PIN_CPUS)
		return role == TP_SERVER ? c->pin.server_cpu : c->pin.client_cpu;
	/* split with several clients: clients take the other CPUs in turn */
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	int cpu = allowed_cpu(1 + (unsigned)(id % (unsigned)(n > 1 ? n - 1 : 1)));

	return cpu >= 0 ? cpu : c->pin.client_cpu;
}

int placement_apply(const struct cell *c, enum tp_role role, unsigned id, char *err,
		    size_t errlen)
{
	int cpu = placement_cpu(c, role, id);
	const char *who = role == TP_SERVER ? "server" : "client";

	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			return errf(err, errlen, errno, "%s: cannot pin to CPU %d: %s", who, cpu,
				    strerror(errno));
	}
	if (c->sched.policy != SCHED_OTHER) {
		struct sched_param sp = { .sched_priority = c->sched.prio };

		if (sched_setscheduler(0, c->sched.policy, &sp)) {
			int e = errno;

			return errf(err, errlen, e, "%s: cannot set --sched %s: %s%s", who,
				    c->sched.text, strerror(e),
				    e == EPERM ? " (needs CAP_SYS_NICE or RLIMIT_RTPRIO; run as root)" : "");
		}
	}
	return 0;
}
