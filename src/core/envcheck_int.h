/* SPDX-License-Identifier: MIT */
/* Private to `ipclab env --check` (envcheck.c: the machine's settings;
 * envcheck_sample.c: what a few seconds of watching show). */
#ifndef IPCLAB_CORE_ENVCHECK_INT_H
#define IPCLAB_CORE_ENVCHECK_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "ipclab/envcheck.h"

#define ENVC_MAX_CPUS 256

struct envc {
	const struct envc_opts *o;
	struct env_checks *out;
	bool online[ENVC_MAX_CPUS];
	bool ep[ENVC_MAX_CPUS];		/* the endpoints' CPUs */
	unsigned nonline, nep;
	char ep_text[64];		/* "CPUs 0 and 1", "CPU 0", "CPUs 0-3" */
};

/* A small file under the sysfs (sys) or procfs root, its path formatted;
 * its length, or -errno. */
int envc_sys(const struct envc *e, char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int envc_proc(const struct envc *e, char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Add a check: found is formatted; fix may be "" (nothing to do). */
void envc_put(struct envc *e, const char *name, enum check_status s, const char *fix,
	      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* A CPU set as a kernel CPU list ("0-1,4"). */
void envc_cpulist(const bool *set, unsigned max, char *buf, size_t len);
/* Printable ASCII only (a task's name is anyone's to choose). */
void envc_printable(char *s);

/* One process as /proc/PID/stat tells it. */
struct envc_task {
	int pid;
	unsigned long long start, ticks;	/* starttime; utime + stime */
	char comm[20];				/* printable ASCII only */
};
/* Parse a /proc/PID/stat line (the name between the first '(' and the
 * last ')'); 0 or -EINVAL. */
int envc_parse_stat(const char *buf, struct envc_task *t);

/* The sampled checks: irqbalance, steal, interrupts, other busy tasks. */
void envc_sample(struct envc *e);

#endif
