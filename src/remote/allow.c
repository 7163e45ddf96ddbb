// SPDX-License-Identifier: MIT
/* What a peer may ask of the server's placement (remote.h): the
 * scheduling policies of --allow-sched (the real-time ones up to a
 * priority) and the CPUs of --allow-cpus. serve refuses a cell past them;
 * run --peer reads them from the welcome and refuses it before it is
 * sent. A root server would otherwise run whatever a client names at
 * SCHED_FIFO 99 on the CPU it names. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/remote.h"
#include "ipclab/topology.h"
#include "ipclab/util.h"

static int sched_item(const char *item, struct remote_allow *a, char *err, size_t errlen)
{
	static const struct { const char *name; int policy; } pol[] = {
		{ "other", SCHED_OTHER }, { "batch", SCHED_BATCH }, { "idle", SCHED_IDLE },
		{ "fifo", SCHED_FIFO }, { "rr", SCHED_RR },
	};
	const char *colon = strchr(item, ':');
	size_t nl = colon ? (size_t)(colon - item) : strlen(item);
	uint64_t max;

	for (size_t i = 0; i < ARRAY_SIZE(pol); i++) {
		bool rt = pol[i].policy == SCHED_FIFO || pol[i].policy == SCHED_RR;

		if (strlen(pol[i].name) != nl || strncmp(pol[i].name, item, nl))
			continue;
		if (!rt && colon)
			return errf(err, errlen, EINVAL, "--allow-sched %s: %s takes no priority",
				    item, pol[i].name);
		if (rt && (!colon || parse_u64(colon + 1, &max) || max < 1 || max > 99))
			return errf(err, errlen, EINVAL,
				    "--allow-sched %s: %s needs the highest priority allowed, 1..99 (e.g. %s:50)",
				    item, pol[i].name, pol[i].name);
		a->policies |= 1u << pol[i].policy;
		if (pol[i].policy == SCHED_FIFO)
			a->fifo_max = (int)max;
		else if (pol[i].policy == SCHED_RR)
			a->rr_max = (int)max;
		return 0;
	}
	return errf(err, errlen, EINVAL,
		    "--allow-sched: '%s' is none of other, batch, idle, fifo:MAX, rr:MAX", item);
}

int allow_sched_parse(const char *text, struct remote_allow *a, char *err, size_t errlen)
{
	char buf[sizeof(a->sched_text)], *save = NULL;
	int ret;

	if (strlen(text) >= sizeof(buf) || !text[0])
		return errf(err, errlen, EINVAL, "--allow-sched: expected a list of other, batch, idle, fifo:MAX, rr:MAX (at most %zu characters)",
			    sizeof(buf) - 1);
	snprintf(buf, sizeof(buf), "%s", text);
	a->policies = 0;
	a->fifo_max = a->rr_max = 0;
	for (char *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save))
		if ((ret = sched_item(it, a, err, errlen)))
			return ret;
	snprintf(a->sched_text, sizeof(a->sched_text), "%s", text);
	return 0;
}

/* set as "0-3,8" into buf */
static void cpus_format(const bool *set, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int c = 0; c < REMOTE_MAX_CPUS && off < len; c++) {
		int e = c;

		if (!set[c])
			continue;
		while (e + 1 < REMOTE_MAX_CPUS && set[e + 1])
			e++;
		off += (size_t)snprintf(buf + off, len - off, e > c ? "%s%d-%d" : "%s%d", off ? "," : "",
					c, e);
		c = e;
	}
}

int allow_cpus_parse(const char *text, struct remote_allow *a, char *err, size_t errlen)
{
	bool any = false;

	if (!text[0] || cpulist_parse(text, a->cpus, REMOTE_MAX_CPUS))
		return errf(err, errlen, EINVAL, "--allow-cpus %s: expected a list of CPUs, e.g. 0-3,8 (each below %d)",
			    text, REMOTE_MAX_CPUS);
	for (int c = 0; c < REMOTE_MAX_CPUS; c++)
		any |= a->cpus[c];
	if (!any)
		return errf(err, errlen, EINVAL, "--allow-cpus %s: names no CPU", text);
	a->cpus_any = false;
	cpus_format(a->cpus, a->cpus_text, sizeof(a->cpus_text));
	return 0;
}

int allow_cpus_own(struct remote_allow *a, char *err, size_t errlen)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return errf(err, errlen, errno, "sched_getaffinity: %s", strerror(errno));
	for (int c = 0; c < REMOTE_MAX_CPUS; c++)
		a->cpus[c] = c < CPU_SETSIZE && CPU_ISSET(c, &set);
	a->cpus_any = false;
	cpus_format(a->cpus, a->cpus_text, sizeof(a->cpus_text));
	return 0;
}

int allow_check(const struct remote_allow *a, const struct sched_spec *sc, int server_cpu,
		bool here, char *err, size_t errlen)
{
	const char *who = here ? "this server" : "the server";
	const char *sw = here ? "ipclab serve" : "its";
	bool rt = sc->policy == SCHED_FIFO || sc->policy == SCHED_RR;
	int max = sc->policy == SCHED_FIFO ? a->fifo_max : a->rr_max;

	if (sc->policy < 0 || sc->policy >= 32 || !(a->policies & (1u << sc->policy)) ||
	    (rt && sc->prio > max))
		return errf(err, errlen, EINVAL,
			    "--sched %s is not allowed by %s (it allows %s; %s --allow-sched)",
			    sc->text[0] ? sc->text : "other", who, a->sched_text, sw);
	if (server_cpu >= 0 && !a->cpus_any &&
	    (server_cpu >= REMOTE_MAX_CPUS || !a->cpus[server_cpu]))
		return errf(err, errlen, EINVAL,
			    "--pin: CPU %d is not allowed by %s (it allows %s; %s --allow-cpus)",
			    server_cpu, who, a->cpus_text, sw);
	return 0;
}
