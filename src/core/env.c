// SPDX-License-Identifier: MIT
/* The machine a result was measured on: kernel, CPU, clocksource, hypervisor,
 * frequency governor, and the cost of reading the clock. Every value falls
 * back to "unknown" (or "none" where absence is the answer) rather than
 * failing: a result without a governor is still a result. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "ipclab/report.h"
#include "ipclab/util.h"

/* Copy with runs of blanks squeezed and the ends trimmed: /proc/cpuinfo
 * pads model names ("Intel(R) Xeon(R) CPU  @ 2.20GHz"). */
static void squeeze(char *dst, size_t len, const char *src)
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

static void read_or(const char *path, char *buf, size_t len, const char *fallback)
{
	char tmp[256];

	if (read_text_file(path, tmp, sizeof(tmp)) > 0)
		squeeze(buf, len, tmp);
	else
		snprintf(buf, len, "%s", fallback);
}

/* Append a word, cut to fit. */
static void add_word(char *buf, size_t len, const char *w)
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
	add_word(buf, len, u.release);
	if (strlen(u.release) + strlen(u.version) + strlen(u.machine) + 2 < len)
		add_word(buf, len, u.version);
	add_word(buf, len, u.machine);
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
				squeeze(buf, len, colon + 1);
				best = k;
			}
		if (best == 0)
			break;	/* the best name there is; skip the other CPUs */
		if (klen == 15 && !strncmp(line, "CPU implementer", klen) && !impl[0])
			squeeze(impl, sizeof(impl), colon + 1);
		if (klen == 8 && !strncmp(line, "CPU part", klen) && !part[0])
			squeeze(part, sizeof(part), colon + 1);
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

void env_collect(struct env_info *env)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	memset(env, 0, sizeof(*env));
	env_kernel(env->kernel, sizeof(env->kernel));
	env_cpu_model(env->cpu_model, sizeof(env->cpu_model));
	env->cpus_online = n > 0 ? (unsigned)n : 0;
	read_or("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		env->clocksource, sizeof(env->clocksource), "unknown");
	env_virt(env->virtualization, sizeof(env->virtualization));
	/* no cpufreq directory (most VMs): the host decides, say so */
	read_or("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", env->governor,
		sizeof(env->governor), "none");
	if (gethostname(env->hostname, sizeof(env->hostname) - 1))
		snprintf(env->hostname, sizeof(env->hostname), "unknown");
	clock_measure(&env->clock);
}
