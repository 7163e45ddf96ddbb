// SPDX-License-Identifier: MIT
/* `ipclab env`: the machine as every result file records it, and what on it
 * distorts measurements. One key table drives the text, the JSON of this
 * command and the "env" object of result files, so the three never differ. */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/result.h"
#include "ipclab/util.h"
#include "env_json.h"

#define K(k, l, g, kd, m) \
	{ k, l, g, kd, offsetof(struct env_info, m), sizeof(((struct env_info *)0)->m) }

/* Order: the JSON and text order. caches and warnings follow, as arrays.
 * rec_env.c reads a result file's env back through it. */
const struct env_key env_keys[] = {
	K("hostname", "hostname", "machine", EK_STR, hostname),
	K("virtualization", "hypervisor", "machine", EK_STR, virtualization),
	K("kernel", "uname -rvm", "kernel", EK_STR, kernel),
	K("preempt", "preemption model", "kernel", EK_STR, preempt),
	K("preempt_dynamic", "PREEMPT_DYNAMIC", "kernel", EK_BOOL, preempt_dynamic),
	K("preempt_source", "model read from", "kernel", EK_STR, preempt_source),
	K("hz", "CONFIG_HZ", "kernel", EK_I64, hz),
	K("nohz", "tick (NO_HZ)", "kernel", EK_STR, nohz),
	K("cpu_model", "model", "cpu", EK_STR, cpu_model),
	K("cpus_online", "online", "cpu", EK_UINT, cpus_online),
	K("cpus_configured", "configured", "cpu", EK_I64, cpus_configured),
	K("smt_siblings", "SMT sibling groups", "cpu", EK_STR, smt_siblings),
	K("smt_active", "SMT active", "cpu", EK_BOOL, smt_active),
	K("threads_per_core", "threads per core", "cpu", EK_I64, threads_per_core),
	K("governor", "cpufreq governor", "cpu", EK_STR, governor),
	K("cpu_mhz", "MHz now", "cpu", EK_DBL, cpu_mhz),
	K("cpu_min_mhz", "MHz min", "cpu", EK_DBL, cpu_min_mhz),
	K("cpu_max_mhz", "MHz max", "cpu", EK_DBL, cpu_max_mhz),
	K("loadavg_1min", "load average (1 min)", "cpu", EK_DBL, loadavg_1min),
	K("clocksource", "clocksource", "clock", EK_STR, clocksource),
	K("clock_cost_ns", "one read, ns", "clock", EK_DBL, clock.cost_ns),
	K("clock_resolution_ns", "resolution, ns", "clock", EK_U64, clock.resolution_ns),
	K("sched_rt_runtime_us", "kernel.sched_rt_runtime_us", "scheduling", EK_I64,
	  sched_rt_runtime_us),
	K("sched_rt_period_us", "kernel.sched_rt_period_us", "scheduling", EK_I64,
	  sched_rt_period_us),
	K("rlimit_rtprio", "RLIMIT_RTPRIO", "scheduling", EK_LIMIT, rlimit_rtprio),
	K("pipe_max_size_bytes", "fs.pipe-max-size", "ipc limits", EK_I64, pipe_max_size_bytes),
	K("mqueue_msg_max", "fs.mqueue.msg_max", "ipc limits", EK_I64, mqueue_msg_max),
	K("mqueue_msgsize_max_bytes", "fs.mqueue.msgsize_max", "ipc limits", EK_I64,
	  mqueue_msgsize_max_bytes),
	K("mqueue_queues_max", "fs.mqueue.queues_max", "ipc limits", EK_I64, mqueue_queues_max),
	K("msgmax_bytes", "kernel.msgmax", "ipc limits", EK_I64, msgmax_bytes),
	K("msgmnb_bytes", "kernel.msgmnb", "ipc limits", EK_I64, msgmnb_bytes),
	K("unix_max_dgram_qlen", "net.unix.max_dgram_qlen", "ipc limits", EK_I64,
	  unix_max_dgram_qlen),
	K("rlimit_msgqueue_bytes", "RLIMIT_MSGQUEUE", "ipc limits", EK_LIMIT,
	  rlimit_msgqueue_bytes),
	K("rlimit_nofile", "RLIMIT_NOFILE", "ipc limits", EK_LIMIT, rlimit_nofile),
	K("glibc_version", "glibc", "build", EK_STR, glibc_version),
	K("compiler", "compiler", "build", EK_STR, compiler),
	K("ipclab_version", "ipclab", "build", EK_STR, ipclab_version),
	K("ipclab_git_rev", "git revision", "build", EK_STR, ipclab_git_rev),
};
const size_t env_nkeys = ARRAY_SIZE(env_keys);

static const void *member(const struct env_info *e, const struct env_key *k)
{
	return (const char *)e + k->off;
}

static int64_t i64_of(const struct env_info *e, const struct env_key *k)
{
	return *(const int64_t *)member(e, k);
}

/* jansson refuses invalid UTF-8; a hostname or model name is not worth
 * losing over one byte, so non-ASCII bytes become '?' in that case. */
static json_t *env_str(const char *s)
{
	json_t *j = json_string(s);
	char buf[256];

	if (j)
		return j;
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *p = buf; *p; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	return json_string(buf);
}

static json_t *key_json(const struct env_info *e, const struct env_key *k)
{
	double d;
	int64_t v;

	switch (k->kind) {
	case EK_STR:
		return env_str(member(e, k));
	case EK_UINT:
		return json_integer(*(const unsigned *)member(e, k));
	case EK_U64:
		return json_integer((json_int_t)*(const uint64_t *)member(e, k));
	case EK_DBL:
		d = *(const double *)member(e, k);
		return isfinite(d) ? json_real(d) : json_null();
	default:
		break;
	}
	v = i64_of(e, k);
	if (v == ENV_UNKNOWN)
		return json_null();
	if (k->kind == EK_BOOL)
		return json_boolean(v != 0);
	if (k->kind == EK_LIMIT && v == ENV_UNLIMITED)
		return json_string("unlimited");
	return json_integer((json_int_t)v);
}

static json_t *caches_json(const struct env_info *e)
{
	json_t *arr = json_array();

	for (unsigned i = 0; arr && i < e->ncaches && i < ENV_MAX_CACHES; i++) {
		const struct env_cache *c = &e->caches[i];
		json_t *size = c->size_bytes >= 0 ? json_integer(c->size_bytes) : json_null();

		if (json_array_append_new(arr, json_pack("{s:i, s:s, s:o, s:i, s:s}",
					"level", (int)c->level, "type", c->type, "size_bytes", size,
					"line_bytes", (int)c->line_bytes, "shared_cpus", c->shared_cpus))) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

json_t *env_json_object(const struct env_info *e)
{
	json_t *obj = json_object(), *warn = json_array();
	int rc = !obj || !warn;

	for (size_t i = 0; !rc && i < ARRAY_SIZE(env_keys); i++)
		rc |= json_object_set_new(obj, env_keys[i].key, key_json(e, &env_keys[i]));
	for (unsigned i = 0; !rc && i < e->nwarnings && i < ENV_MAX_WARNINGS; i++)
		rc |= json_array_append_new(warn, env_str(e->warnings[i]));
	if (!rc)
		rc |= json_object_set_new(obj, "caches", caches_json(e));
	if (!rc && (e->canary[0].on || e->canary[1].on))
		rc |= json_object_set_new(obj, "canary", canary_json(e->canary));
	if (!rc && e->floors.on)
		rc |= json_object_set_new(obj, "floors", floors_json(&e->floors));
	if (!rc)
		rc |= json_object_set_new(obj, "warnings", json_incref(warn));
	json_decref(warn);
	if (rc) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

/* ---- text --------------------------------------------------------------------- */

static void key_text(const struct env_info *e, const struct env_key *k, char *buf, size_t len)
{
	char scaled[32];
	int64_t v;
	double d;

	switch (k->kind) {
	case EK_STR:
		snprintf(buf, len, "%s", (const char *)member(e, k));
		return;
	case EK_UINT:
		snprintf(buf, len, "%u", *(const unsigned *)member(e, k));
		return;
	case EK_U64:
		snprintf(buf, len, "%" PRIu64, *(const uint64_t *)member(e, k));
		return;
	case EK_DBL:
		d = *(const double *)member(e, k);
		snprintf(buf, len, isfinite(d) ? "%.2f" : "unknown", d);
		return;
	default:
		break;
	}
	v = i64_of(e, k);
	if (v == ENV_UNKNOWN)
		snprintf(buf, len, "unknown");
	else if (k->kind == EK_BOOL)
		snprintf(buf, len, "%s", v ? "yes" : "no");
	else if (k->kind == EK_LIMIT && v == ENV_UNLIMITED)
		snprintf(buf, len, "unlimited");
	else if (strstr(k->key, "_bytes") && v >= 1024)
		snprintf(buf, len, "%" PRId64 " (%s)", v, fmt_bytes(scaled, sizeof(scaled), (double)v));
	else
		snprintf(buf, len, "%" PRId64, v);
}

static void caches_text(FILE *f, const struct env_info *e)
{
	for (unsigned i = 0; i < e->ncaches && i < ENV_MAX_CACHES; i++) {
		const struct env_cache *c = &e->caches[i];
		char size[32] = "unknown size", label[40];

		if (c->size_bytes >= 0)
			fmt_bytes(size, sizeof(size), (double)c->size_bytes);
		snprintf(label, sizeof(label), "L%u %s cache", c->level, c->type);
		fprintf(f, "  %-28s %s, %u-byte lines, shared by CPUs %s\n", label, size,
			c->line_bytes, c->shared_cpus);
	}
}

int env_text(FILE *f, const struct env_info *e)
{
	const char *group = "";

	for (size_t i = 0; i < ARRAY_SIZE(env_keys); i++) {
		const struct env_key *k = &env_keys[i];
		char val[256];

		if (strcmp(group, k->group)) {
			if (!strcmp(group, "cpu"))
				caches_text(f, e);
			group = k->group;
			fprintf(f, "%s\n", group);
		}
		key_text(e, k, val, sizeof(val));
		fprintf(f, "  %-28s %s\n", k->label, val);
	}
	if (e->canary[0].on || e->canary[1].on) {
		fprintf(f, "canary\n");
		canary_text(f, e->canary);
	}
	if (e->floors.on && floors_text(f, &e->floors))
		return -EIO;
	fprintf(f, "warnings\n");
	if (!e->nwarnings)
		fprintf(f, "  none\n");
	for (unsigned i = 0; i < e->nwarnings && i < ENV_MAX_WARNINGS; i++)
		fprintf(f, "  ! %s\n", e->warnings[i]);
	return ferror(f) ? -EIO : 0;
}
