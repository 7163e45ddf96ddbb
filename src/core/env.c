// SPDX-License-Identifier: MIT
/* The machine a result was measured on: kernel and its configuration hints
 * (preemption model, HZ), CPU model, topology, caches and frequency,
 * clocksource, hypervisor, the limits that constrain IPC, the build, and the
 * cost of reading the clock. Every value falls back to "unknown" (or "none"
 * where absence is the answer, ENV_UNKNOWN for numbers) rather than failing:
 * a result without a governor is still a result. Kernel configuration,
 * caches, limits and warnings are in env_kernel.c. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <gnu/libc-version.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "ipclab/result.h"
#include "ipclab/util.h"
#include "env_probe.h"

#ifndef IPCLAB_VERSION
#define IPCLAB_VERSION "unknown"
#endif
#ifndef IPCLAB_GIT_REV
#define IPCLAB_GIT_REV "unknown"
#endif

/* Copy with runs of blanks squeezed and the ends trimmed: /proc/cpuinfo
 * pads model names ("Intel(R) Xeon(R) CPU  @ 2.20GHz"). */
void env_squeeze(char *dst, size_t len, const char *src)
{
	size_t n = 0;

	while (isspace((unsigned char)*src))
		src++;
	for (; *src && n + 1 < len; src++) {
		if (isspace((unsigned char)*src) &&
		    (!src[1] || isspace((unsigned char)src[1])))
			continue;
		dst[n++] = isspace((unsigned char)*src) ? ' ' : *src;
	}
	dst[n] = '\0';
}

void env_read_or(const char *path, char *buf, size_t len, const char *fallback)
{
	char tmp[256];

	if (read_text_file(path, tmp, sizeof(tmp)) > 0)
		env_squeeze(buf, len, tmp);
	else
		snprintf(buf, len, "%s", fallback);
}

/* Append a word (space-separated), cut to fit. */
void env_add_word(char *buf, size_t len, const char *w)
{
	size_t n = strlen(buf), m = strlen(w);

	if (n && n + 1 < len)
		buf[n++] = ' ';
	if (m > len - 1 - n)
		m = len - 1 - n;
	memcpy(buf + n, w, m);
	buf[n + m] = '\0';
}

static void env_kernel(char *buf, size_t len)
{
	struct utsname u;

	snprintf(buf, len, "%s", "unknown");
	if (uname(&u))
		return;
	/* release first: it is what differs between two result files; a build
	 * string too long to fit is dropped rather than the architecture */
	buf[0] = '\0';
	env_add_word(buf, len, u.release);
	if (strlen(u.release) + strlen(u.version) + strlen(u.machine) + 2 < len)
		env_add_word(buf, len, u.version);
	env_add_word(buf, len, u.machine);
}

/* "model name" on x86, "cpu"/"cpu model" on POWER and MIPS, "Model" on boards
 * that name themselves; arm64 has only implementer and part numbers. */
static void env_cpu_model(char *buf, size_t len)
{
	static const char *const keys[] = { "model name", "cpu model", "cpu", "Model" };
	char impl[32] = "", part[32] = "", *line = NULL;
	size_t cap = 0, best = ARRAY_SIZE(keys);
	FILE *f = fopen("/proc/cpuinfo", "re");

	snprintf(buf, len, "unknown");
	while (f && getline(&line, &cap, f) > 0) {
		char *colon = strchr(line, ':');
		size_t klen;

		if (!colon)
			continue;
		for (klen = (size_t)(colon - line); klen && isspace((unsigned char)line[klen - 1]); )
			klen--;
		for (size_t k = 0; k < best; k++)
			if (strlen(keys[k]) == klen && !strncmp(line, keys[k], klen)) {
				env_squeeze(buf, len, colon + 1);
				best = k;
			}
		if (best == 0)
			break;	/* the best name there is; skip the other CPUs */
		if (klen == 15 && !strncmp(line, "CPU implementer", klen) && !impl[0])
			env_squeeze(impl, sizeof(impl), colon + 1);
		if (klen == 8 && !strncmp(line, "CPU part", klen) && !part[0])
			env_squeeze(part, sizeof(part), colon + 1);
	}
	if (best == ARRAY_SIZE(keys) && impl[0])
		snprintf(buf, len, "implementer %s part %s", impl, part);
	free(line);
	if (f)
		fclose(f);
}

#if defined(__x86_64__) || defined(__i386__)
static const char *cpuid_sig_name(unsigned leaf)
{
	static const struct { const char sig[13], *name; } sigs[] = {
		{ "KVMKVMKVM\0\0\0", "kvm" },	 { "Linux KVM Hv", "kvm" },
		{ "Microsoft Hv", "microsoft" }, { "VMwareVMware", "vmware" },
		{ "XenVMMXenVMM", "xen" },	 { "TCGTCGTCGTCG", "qemu" },
		{ "bhyve bhyve ", "bhyve" },	 { "ACRNACRNACRN", "acrn" },
		{ " lrpepyh  vr", "parallels" }, { "VBoxVBoxVBox", "oracle" },
		{ "QNXQVMBSQG\0\0", "qnx" },	 { "SRESRESRESRE", "sre" },
	};
	unsigned a, b, c, d;
	char sig[12];

	__cpuid(leaf, a, b, c, d);
	memcpy(sig, &b, 4);
	memcpy(sig + 4, &c, 4);
	memcpy(sig + 8, &d, 4);
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		if (!memcmp(sig, sigs[i].sig, sizeof(sig)))
			return sigs[i].name;
	return NULL;
}

/* CPUID says whether a hypervisor is present and names it in 12 bytes. KVM
 * with Hyper-V enlightenments answers "Microsoft Hv" and puts its own name
 * one range up, so that range is asked too. */
static const char *cpuid_hypervisor(void)
{
	unsigned a, b, c, d;
	const char *name, *kvm;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 31)))
		return NULL;
	name = cpuid_sig_name(0x40000000);
	if (name && !strcmp(name, "microsoft")) {
		kvm = cpuid_sig_name(0x40000100);
		if (kvm)
			name = kvm;
	}
	return name ? name : "unknown-hypervisor";
}
#else
static const char *cpuid_hypervisor(void)
{
	return NULL;
}
#endif

/* Firmware tables name the virtual machine where CPUID cannot (arm64). */
static const char *dmi_hypervisor(void)
{
	static const struct { const char *vendor, *name; } vendors[] = {
		{ "QEMU", "qemu" },	   { "KVM", "kvm" },
		{ "VMware", "vmware" },	   { "innotek", "oracle" },
		{ "Xen", "xen" },	   { "Microsoft Corporation", "microsoft" },
		{ "Amazon EC2", "amazon" }, { "Google Compute Engine", "google" },
	};
	static const char *const files[] = { "/sys/class/dmi/id/sys_vendor",
					     "/sys/class/dmi/id/product_name" };
	char val[128];

	for (size_t f = 0; f < ARRAY_SIZE(files); f++) {
		if (read_text_file(files[f], val, sizeof(val)) <= 0)
			continue;
		for (size_t i = 0; i < ARRAY_SIZE(vendors); i++)
			if (!strncmp(val, vendors[i].vendor, strlen(vendors[i].vendor)))
				return vendors[i].name;
	}
	return NULL;
}

static void env_virt(char *buf, size_t len)
{
	const char *name = cpuid_hypervisor();
	char xen[32];

	if (!name && read_text_file("/sys/hypervisor/type", xen, sizeof(xen)) > 0)
		name = xen;	/* Xen PV guests hide the CPUID bit */
	if (!name)
		name = dmi_hypervisor();
	snprintf(buf, len, "%s", name ? name : "none");
}

/* Distinct thread_siblings_list values: "0-1 2-3" means two cores with two
 * hardware threads each; "0 1" means no SMT. Offline CPUs have no topology
 * directory and are skipped. */
static void env_smt(struct env_info *env)
{
	long conf = sysconf(_SC_NPROCESSORS_CONF);
	int64_t per_core = 0;
	char active[16];

	env->cpus_configured = conf > 0 ? conf : ENV_UNKNOWN;
	for (long cpu = 0; cpu < (conf > 0 ? conf : 1) && cpu < 4096; cpu++) {
		char path[96], list[64], padded[sizeof(env->smt_siblings) + 2];
		int64_t n;

		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%ld/topology/thread_siblings_list", cpu);
		if (read_text_file(path, list, sizeof(list)) <= 0)
			continue;
		snprintf(padded, sizeof(padded), " %s ", env->smt_siblings);
		snprintf(path, sizeof(path), " %s ", list);
		if (!strstr(padded, path))
			env_add_word(env->smt_siblings, sizeof(env->smt_siblings), list);
		n = env_cpu_list_count(list);
		if (n > per_core)
			per_core = n;
	}
	if (!env->smt_siblings[0])
		snprintf(env->smt_siblings, sizeof(env->smt_siblings), "unknown");
	env->threads_per_core = per_core ? per_core : ENV_UNKNOWN;
	/* "notsupported" and a missing file both mean the kernel cannot tell */
	if (read_text_file("/sys/devices/system/cpu/smt/active", active, sizeof(active)) > 0 &&
	    (!strcmp(active, "0") || !strcmp(active, "1")))
		env->smt_active = active[0] - '0';
	else
		env->smt_active = ENV_UNKNOWN;
}

static double khz_to_mhz(const char *path)
{
	int64_t khz = env_read_i64(path);

	return khz > 0 ? (double)khz / 1000.0 : NAN;
}

/* cpufreq when the kernel drives the frequency; otherwise what /proc/cpuinfo
 * says (in a VM, the host's nominal frequency). */
static void env_freq(struct env_info *env)
{
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	env->cpu_mhz = khz_to_mhz("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq");
	env->cpu_min_mhz = khz_to_mhz("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_min_freq");
	env->cpu_max_mhz = khz_to_mhz("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
	if (!isnan(env->cpu_mhz))
		return;
	f = fopen("/proc/cpuinfo", "re");
	while (f && getline(&line, &cap, f) > 0) {
		char *colon = strchr(line, ':');

		if (colon && !strncmp(line, "cpu MHz", 7)) {
			env->cpu_mhz = strtod(colon + 1, NULL);
			break;
		}
	}
	free(line);
	if (f)
		fclose(f);
}

static void env_build(struct env_info *env)
{
	snprintf(env->glibc_version, sizeof(env->glibc_version), "%s", gnu_get_libc_version());
#if defined(__clang__)
	snprintf(env->compiler, sizeof(env->compiler), "clang %s", __clang_version__);
#elif defined(__GNUC__)
	snprintf(env->compiler, sizeof(env->compiler), "gcc %s", __VERSION__);
#else
	snprintf(env->compiler, sizeof(env->compiler), "unknown");
#endif
	snprintf(env->ipclab_version, sizeof(env->ipclab_version), "%s", IPCLAB_VERSION);
	snprintf(env->ipclab_git_rev, sizeof(env->ipclab_git_rev), "%s", IPCLAB_GIT_REV);
}

void env_collect(struct env_info *env)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	double load[1];

	memset(env, 0, sizeof(*env));
	env_kernel(env->kernel, sizeof(env->kernel));
	env_cpu_model(env->cpu_model, sizeof(env->cpu_model));
	env->cpus_online = n > 0 ? (unsigned)n : 0;
	env_read_or("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		    env->clocksource, sizeof(env->clocksource), "unknown");
	env_virt(env->virtualization, sizeof(env->virtualization));
	/* no cpufreq directory (most VMs): the host decides, say so */
	env_read_or("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", env->governor,
		    sizeof(env->governor), "none");
	if (gethostname(env->hostname, sizeof(env->hostname) - 1))
		snprintf(env->hostname, sizeof(env->hostname), "unknown");
	env_kconfig(env);
	env_smt(env);
	env_caches(env);
	env_freq(env);
	env_limits(env);
	env_build(env);
	env->loadavg_1min = getloadavg(load, 1) == 1 ? load[0] : NAN;
	env_warnings(env);
	clock_measure(&env->clock);
}
