// SPDX-License-Identifier: MIT
/* The parts of the environment that explain a result rather than name the
 * machine: the kernel's preemption model and tick rate, the caches, the
 * limits that cap IPC objects (a pipe or queue larger than these fails), and
 * the conditions that distort measurements, as warnings. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "ipclab/result.h"
#include "ipclab/util.h"
#include "env_probe.h"

int64_t env_read_i64(const char *path)
{
	char buf[64], *end;
	long long v;

	if (read_text_file(path, buf, sizeof(buf)) <= 0)
		return ENV_UNKNOWN;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno || end == buf || *end)
		return ENV_UNKNOWN;
	return v;
}

int64_t env_cpu_list_count(const char *list)
{
	int64_t n = 0;
	const char *p = list;

	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b = a;

		if (end == p || a < 0)
			return 0;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a)
				return 0;
			p = end;
		}
		n += b - a + 1;
		if (*p == ',')
			p++;
		else if (*p)
			return 0;
	}
	return n;
}

/* ---- kernel configuration ------------------------------------------------ */

struct kconfig {
	int64_t hz;
	const char *model;	/* the Kconfig preemption choice */
	bool dynamic, rt;
	const char *nohz;
};

static void kconfig_line(struct kconfig *kc, const char *l)
{
	static const struct { const char *opt, *model; } models[] = {
		{ "CONFIG_PREEMPT_NONE=y", "none" }, { "CONFIG_PREEMPT_VOLUNTARY=y", "voluntary" },
		{ "CONFIG_PREEMPT=y", "full" },	     { "CONFIG_PREEMPT_LAZY=y", "lazy" },
	};
	static const struct { const char *opt, *mode; } ticks[] = {
		{ "CONFIG_HZ_PERIODIC=y", "periodic" }, { "CONFIG_NO_HZ_IDLE=y", "idle" },
		{ "CONFIG_NO_HZ_FULL=y", "full" },
	};

	if (!strncmp(l, "CONFIG_HZ=", 10))
		kc->hz = strtoll(l + 10, NULL, 10);
	else if (!strcmp(l, "CONFIG_PREEMPT_RT=y"))
		kc->rt = true;
	else if (!strcmp(l, "CONFIG_PREEMPT_DYNAMIC=y"))
		kc->dynamic = true;
	for (size_t i = 0; i < ARRAY_SIZE(models); i++)
		if (!strcmp(l, models[i].opt))
			kc->model = models[i].model;
	for (size_t i = 0; i < ARRAY_SIZE(ticks); i++)
		if (!strcmp(l, ticks[i].opt))
			kc->nohz = ticks[i].mode;
}

/* The running kernel's configuration: /boot/config-RELEASE (Debian), else
 * /proc/config.gz (CONFIG_IKCONFIG_PROC) through gzip. Returns false when
 * neither is readable; source names the one read. */
static bool kconfig_read(struct kconfig *kc, char *source, size_t len)
{
	char path[96], line[256];
	struct utsname u;
	bool piped = false;
	FILE *f = NULL;

	if (!uname(&u)) {
		snprintf(path, sizeof(path), "/boot/config-%s", u.release);
		f = fopen(path, "re");
	}
	if (!f && access("/proc/config.gz", R_OK) == 0) {
		snprintf(path, sizeof(path), "/proc/config.gz");
		f = popen("exec gzip -dc /proc/config.gz 2>/dev/null", "re");
		piped = f != NULL;
	}
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		kconfig_line(kc, line);
	}
	if (piped ? pclose(f) != 0 : fclose(f) != 0)
		return false;
	snprintf(source, len, "%s", path);
	return kc->hz > 0 || kc->model;
}

/* "none voluntary (full) lazy": the model in force is the one in brackets. */
static bool preempt_debugfs(struct env_info *env)
{
	char buf[128], *open_, *close_;

	if (read_text_file("/sys/kernel/debug/sched/preempt", buf, sizeof(buf)) <= 0)
		return false;
	open_ = strchr(buf, '(');
	close_ = open_ ? strchr(open_, ')') : NULL;
	if (!close_)
		return false;
	*close_ = '\0';
	snprintf(env->preempt, sizeof(env->preempt), "%s", open_ + 1);
	snprintf(env->preempt_source, sizeof(env->preempt_source), "debugfs");
	env->preempt_dynamic = 1;
	return true;
}

/* A PREEMPT_DYNAMIC kernel boots with preempt= if given, else the Kconfig
 * choice. */
static bool preempt_cmdline(struct env_info *env)
{
	char buf[4096], *p;

	if (read_text_file("/proc/cmdline", buf, sizeof(buf)) <= 0)
		return false;
	for (p = strstr(buf, "preempt="); p; p = strstr(p + 1, "preempt="))
		if (p == buf || isspace((unsigned char)p[-1]))
			break;
	if (!p)
		return false;
	p += 8;
	p[strcspn(p, " \t")] = '\0';
	snprintf(env->preempt, sizeof(env->preempt), "%s", p);
	snprintf(env->preempt_source, sizeof(env->preempt_source), "/proc/cmdline");
	return true;
}

/* uname -v carries "PREEMPT_RT", "PREEMPT_DYNAMIC" or "PREEMPT" as a word. */
static void preempt_uname(struct env_info *env)
{
	struct utsname u;
	char padded[sizeof(u.version) + 2];

	snprintf(env->preempt, sizeof(env->preempt), "unknown");
	if (uname(&u))
		return;
	snprintf(padded, sizeof(padded), " %s ", u.version);
	snprintf(env->preempt_source, sizeof(env->preempt_source), "uname -v");
	if (strstr(padded, " PREEMPT_RT "))
		snprintf(env->preempt, sizeof(env->preempt), "rt");
	else if (strstr(padded, " PREEMPT_DYNAMIC "))
		env->preempt_dynamic = 1;
	else if (strstr(padded, " PREEMPT "))
		snprintf(env->preempt, sizeof(env->preempt), "full");
	else
		snprintf(env->preempt, sizeof(env->preempt), "none or voluntary");
}

void env_kconfig(struct env_info *env)
{
	struct kconfig kc = { .hz = ENV_UNKNOWN };
	char source[96] = "";
	bool have = kconfig_read(&kc, source, sizeof(source));

	env->hz = kc.hz > 0 ? kc.hz : ENV_UNKNOWN;
	snprintf(env->nohz, sizeof(env->nohz), "%s", kc.nohz ? kc.nohz : "unknown");
	env->preempt_dynamic = have ? kc.dynamic : ENV_UNKNOWN;
	if (preempt_debugfs(env))
		return;
	preempt_uname(env);
	if (env->preempt_dynamic == 1 && preempt_cmdline(env))
		return;
	if (have && (kc.rt || kc.model)) {
		snprintf(env->preempt, sizeof(env->preempt), "%s", kc.rt ? "rt" : kc.model);
		snprintf(env->preempt_source, sizeof(env->preempt_source), "%s", source);
	}
}

/* ---- caches ------------------------------------------------------------------ */

/* sysfs sizes read "32K", "1024K", "32768K". */
static int64_t parse_cache_size(const char *s)
{
	char *end;
	long long v = strtoll(s, &end, 10);

	if (end == s || v < 0)
		return ENV_UNKNOWN;
	switch (toupper((unsigned char)*end)) {
	case 'K':
		return v << 10;
	case 'M':
		return v << 20;
	case 'G':
		return v << 30;
	}
	return *end ? ENV_UNKNOWN : v;
}

/* CPU 0's caches, level 1 first, as the kernel lists them. */
void env_caches(struct env_info *env)
{
	for (unsigned i = 0; i < 16 && env->ncaches < ENV_MAX_CACHES; i++) {
		struct env_cache *c = &env->caches[env->ncaches];
		char dir[80], path[112], size[32];
		int64_t level;

		snprintf(dir, sizeof(dir), "/sys/devices/system/cpu/cpu0/cache/index%u", i);
		snprintf(path, sizeof(path), "%s/level", dir);
		level = env_read_i64(path);
		if (level < 0)
			continue;
		c->level = (unsigned)level;
		snprintf(path, sizeof(path), "%s/type", dir);
		env_read_or(path, c->type, sizeof(c->type), "unknown");
		snprintf(path, sizeof(path), "%s/size", dir);
		env_read_or(path, size, sizeof(size), "");
		c->size_bytes = parse_cache_size(size);
		snprintf(path, sizeof(path), "%s/shared_cpu_list", dir);
		env_read_or(path, c->shared_cpus, sizeof(c->shared_cpus), "unknown");
		snprintf(path, sizeof(path), "%s/coherency_line_size", dir);
		level = env_read_i64(path);
		c->line_bytes = level > 0 ? (unsigned)level : 0;
		env->ncaches++;
	}
}

/* ---- limits ------------------------------------------------------------------ */

static int64_t rlimit_soft(int resource)
{
	struct rlimit rl;

	if (getrlimit(resource, &rl))
		return ENV_UNKNOWN;
	if (rl.rlim_cur == RLIM_INFINITY)
		return ENV_UNLIMITED;
	return (int64_t)rl.rlim_cur;
}

void env_limits(struct env_info *env)
{
	env->sched_rt_runtime_us = env_read_i64("/proc/sys/kernel/sched_rt_runtime_us");
	env->sched_rt_period_us = env_read_i64("/proc/sys/kernel/sched_rt_period_us");
	env->pipe_max_size_bytes = env_read_i64("/proc/sys/fs/pipe-max-size");
	env->mqueue_msg_max = env_read_i64("/proc/sys/fs/mqueue/msg_max");
	env->mqueue_msgsize_max_bytes = env_read_i64("/proc/sys/fs/mqueue/msgsize_max");
	env->mqueue_queues_max = env_read_i64("/proc/sys/fs/mqueue/queues_max");
	env->msgmax_bytes = env_read_i64("/proc/sys/kernel/msgmax");
	env->msgmnb_bytes = env_read_i64("/proc/sys/kernel/msgmnb");
	env->unix_max_dgram_qlen = env_read_i64("/proc/sys/net/unix/max_dgram_qlen");
	env->rlimit_msgqueue_bytes = rlimit_soft(RLIMIT_MSGQUEUE);
	env->rlimit_rtprio = rlimit_soft(RLIMIT_RTPRIO);
	env->rlimit_nofile = rlimit_soft(RLIMIT_NOFILE);
}

/* ---- warnings ------------------------------------------------------------------ */

static void warn(struct env_info *env, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct env_info *env, const char *fmt, ...)
{
	va_list ap;

	if (env->nwarnings >= ENV_MAX_WARNINGS)
		return;
	va_start(ap, fmt);
	vsnprintf(env->warnings[env->nwarnings++], sizeof(env->warnings[0]), fmt, ap);
	va_end(ap);
}

/* What makes numbers from this machine drift or disagree with another's. */
void env_warnings(struct env_info *env)
{
	if (strcmp(env->governor, "none") && strcmp(env->governor, "unknown") &&
	    strcmp(env->governor, "performance"))
		warn(env, "cpufreq governor is '%s', not 'performance': the clock speed follows the load (cpupower frequency-set -g performance)",
		     env->governor);
	if (!isnan(env->loadavg_1min) && env->loadavg_1min > 0.5)
		warn(env, "load average %.2f is above 0.5: other work competes for the CPUs",
		     env->loadavg_1min);
	if (strcmp(env->virtualization, "none"))
		warn(env, "virtual machine (%s): the host's scheduling and steal time add noise; compare only runs taken side by side",
		     env->virtualization);
}
