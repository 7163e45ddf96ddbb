/* SPDX-License-Identifier: MIT */
/* `ipclab env --check`: what on this machine makes figures noisy, each
 * with the command that fixes it, as pyperf's `system tune` checks and as
 * cyclictest users are told (src/core/envcheck.c, envcheck_sample.c). The
 * checks read sysfs and procfs under roots that are parameters, so that a
 * fake tree stands in for a machine in the tests. */
#ifndef IPCLAB_ENVCHECK_H
#define IPCLAB_ENVCHECK_H

#include <stdbool.h>
#include <stdint.h>

enum check_status { CHECK_OK, CHECK_WARN, CHECK_BAD, CHECK_NA };

#define ENVC_MAX 16
#define ENVC_TEXT 240

struct env_check {
	const char *name;		/* "governor", "smt", ... */
	enum check_status status;
	char found[ENVC_TEXT];		/* what it found here */
	char fix[ENVC_TEXT];		/* the command that fixes it ("" = none needed) */
};

struct envc_opts {
	const char *sys_root;		/* "/sys" */
	const char *proc_root;		/* "/proc" */
	uint64_t sample_ns;		/* how long steal and busy tasks are watched */
	int cpus[2];			/* the endpoints' CPUs (-1 = not pinned: all) */
	const char *pin_text;		/* how they were given ("split") */
	int self_pid;			/* not counted among busy tasks (0 = none) */
};

struct env_checks {
	unsigned n;
	struct env_check c[ENVC_MAX];
	uint64_t sample_ns;
	int cpus[2];
	char pin_text[32];
	unsigned ncpu;			/* online CPUs read */
};

/* Every check, sampling for o->sample_ns. Never fails: a check that cannot
 * look is n/a with the reason. */
void env_check_run(const struct envc_opts *o, struct env_checks *out);
/* "ok", "warn", "bad", "n/a" */
const char *check_status_name(enum check_status s);

#endif
