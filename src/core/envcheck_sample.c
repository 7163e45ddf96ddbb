// SPDX-License-Identifier: MIT
/* `ipclab env --check`, the part that watches (envcheck_int.h): for a few
 * seconds, /proc/stat's steal and interrupt time on the endpoints' CPUs and
 * every process's CPU time, so that other busy tasks are named; and
 * whether irqbalance runs. A task's name is anyone's to choose: only its
 * printable ASCII is kept. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ipclab/metrics.h"
#include "ipclab/util.h"
#include "envcheck_int.h"

#define MAX_TASKS 8192
#define TOP_TASKS 3
#define BUSY_PCT 5.0		/* a task using more of a CPU than this is named */
#define BAD_BUSY_PCT 50.0	/* others together past this: bad */

struct tasks {
	size_t n;
	struct envc_task t[MAX_TASKS];
};

int envc_parse_stat(const char *buf, struct envc_task *t)
{
	const char *open = strchr(buf, '('), *close = strrchr(buf, ')');
	unsigned long long ut, st, start;
	size_t n;

	if (!open || !close || close < open || close[1] != ' ')
		return -EINVAL;
	n = (size_t)(close - open - 1);
	if (n >= sizeof(t->comm))
		n = sizeof(t->comm) - 1;
	memcpy(t->comm, open + 1, n);
	t->comm[n] = '\0';
	envc_printable(t->comm);
	/* after ") ": state (3), ppid .. cmajflt (4-12), utime (14), stime (15),
	 * ... starttime (22) */
	if (sscanf(close + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d "
			      "%*d %*d %*d %llu", &ut, &st, &start) != 3)
		return -EINVAL;
	t->ticks = ut + st;
	t->start = start;
	return 0;
}

static bool is_pid(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* Every process under the proc root; 0 or -errno. */
static int tasks_take(const struct envc *e, struct tasks *ts)
{
	DIR *d = opendir(e->o->proc_root);
	struct dirent *de;

	ts->n = 0;
	if (!d)
		return -errno;
	while ((de = readdir(d)) && ts->n < MAX_TASKS) {
		char buf[1024];
		long pid;

		if (!is_pid(de->d_name) || (pid = strtol(de->d_name, NULL, 10)) <= 0 || pid > INT32_MAX ||
		    envc_proc(e, buf, sizeof(buf), "%ld/stat", pid) <= 0)
			continue;
		ts->t[ts->n].pid = (int)pid;
		if (!envc_parse_stat(buf, &ts->t[ts->n]))
			ts->n++;
	}
	closedir(d);
	return 0;
}

static const struct envc_task *task_find(const struct tasks *ts, const struct envc_task *t)
{
	for (size_t i = 0; i < ts->n; i++)
		if (ts->t[i].pid == t->pid && ts->t[i].start == t->start)
			return &ts->t[i];
	return NULL;
}

/* ---- irqbalance ------------------------------------------------------------------ */

static void check_irqbalance(struct envc *e, const struct tasks *ts, int err)
{
	for (size_t i = 0; !err && i < ts->n; i++)
		if (!strcmp(ts->t[i].comm, "irqbalance")) {
			envc_put(e, "irqbalance", CHECK_WARN,
				 "sudo systemctl stop irqbalance, then keep interrupts off the endpoints' CPUs (/proc/irq/N/smp_affinity_list)",
				 "irqbalance runs (pid %d): it moves interrupts between CPUs, onto the endpoints' too, while a run goes on",
				 ts->t[i].pid);
			return;
		}
	if (err)
		envc_put(e, "irqbalance", CHECK_NA, "", "cannot list processes: %s", strerror(-err));
	else
		envc_put(e, "irqbalance", CHECK_OK, "", "irqbalance is not running");
}

/* ---- steal and interrupts ----------------------------------------------------------- */

/* The worst endpoint CPU's share of a /proc/stat column over the sample;
 * -1 when no endpoint CPU saw a tick. */
static double worst_share(const struct envc *e, const struct sys_snap *a, const struct sys_snap *b,
			  bool steal, unsigned *cpu)
{
	double worst = -1;

	for (unsigned c = 0; c < SYS_MAX_CPUS && c < a->ncpu && c < b->ncpu; c++) {
		uint64_t tot = b->total[c + 1] - a->total[c + 1];
		uint64_t x = steal ? b->steal[c + 1] - a->steal[c + 1] : b->irq[c + 1] - a->irq[c + 1];

		if (!e->ep[c] || b->total[c + 1] <= a->total[c + 1])
			continue;
		if (100.0 * (double)x / (double)tot > worst) {
			worst = 100.0 * (double)x / (double)tot;
			*cpu = c;
		}
	}
	return worst;
}

static void check_steal_irq(struct envc *e, const struct sys_snap *a, const struct sys_snap *b,
			    bool ok, double secs)
{
	unsigned cpu = 0;
	double steal = ok ? worst_share(e, a, b, true, &cpu) : -1;

	if (steal < 0)
		envc_put(e, "steal", CHECK_NA, "", "no clock tick on %s in %.1f s of /proc/stat",
			 e->ep_text, secs);
	else if (steal >= 1.0)
		envc_put(e, "steal", CHECK_BAD,
			 "a host that gives this VM dedicated cores (pinned vCPUs), or compare only runs made side by side",
			 "the hypervisor stole %.1f%% of CPU %u over %.1f s: it ran other guests on this VM's CPU",
			 steal, cpu, secs);
	else if (steal > 0)
		envc_put(e, "steal", CHECK_WARN,
			 "a host that gives this VM dedicated cores (pinned vCPUs), or compare only runs made side by side",
			 "the hypervisor stole %.1f%% of CPU %u over %.1f s", steal, cpu, secs);
	else
		envc_put(e, "steal", CHECK_OK, "", "no steal time on %s over %.1f s", e->ep_text, secs);
	double irq = ok ? worst_share(e, a, b, false, &cpu) : -1;

	if (irq < 0)
		envc_put(e, "interrupts", CHECK_NA, "", "no clock tick on %s in %.1f s of /proc/stat",
			 e->ep_text, secs);
	else if (irq > 5.0)
		envc_put(e, "interrupts", CHECK_WARN,
			 "move them off the endpoints' CPUs: see /proc/interrupts, then echo CPUS | sudo tee /proc/irq/N/smp_affinity_list",
			 "interrupts (irq + softirq) took %.0f%% of CPU %u over %.1f s", irq, cpu, secs);
	else
		envc_put(e, "interrupts", CHECK_OK, "",
			 "interrupts (irq + softirq) took %.1f%% of CPU %u at most over %.1f s", irq, cpu,
			 secs);
}

/* ---- other busy tasks ------------------------------------------------------------------ */

struct busy {
	const struct envc_task *t;
	double pct;
};

static void busy_text(const struct busy *top, unsigned n, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s (pid %d) %.0f%%", i ? ", " : "",
					top[i].t->comm, top[i].t->pid, top[i].pct);
}

static void check_busy(struct envc *e, const struct tasks *a, const struct tasks *b, double secs,
		       int err)
{
	struct busy top[TOP_TASKS] = { { 0 } };
	double hz = (double)sysconf(_SC_CLK_TCK), others = 0, load[1];
	unsigned ntop = 0;
	char names[160], la[32] = "";

	if (getloadavg(load, 1) == 1)
		snprintf(la, sizeof(la), "; load average %.2f", load[0]);
	if (err || secs <= 0) {
		envc_put(e, "busy_tasks", CHECK_NA, "", "cannot watch the processes: %s",
			 err ? strerror(-err) : "no time to watch");
		return;
	}
	for (size_t i = 0; i < b->n; i++) {
		const struct envc_task *was = task_find(a, &b->t[i]);
		double pct;

		if (b->t[i].pid == e->o->self_pid || !was || b->t[i].ticks < was->ticks)
			continue;
		pct = 100.0 * (double)(b->t[i].ticks - was->ticks) / (hz > 0 ? hz : 100) / secs;
		others += pct;
		if (pct <= BUSY_PCT)
			continue;
		if (ntop < TOP_TASKS)
			top[ntop++] = (struct busy){ &b->t[i], pct };
		else if (pct > top[TOP_TASKS - 1].pct)
			top[TOP_TASKS - 1] = (struct busy){ &b->t[i], pct };
		else
			continue;
		for (unsigned k = ntop - 1; k > 0 && top[k].pct > top[k - 1].pct; k--) {
			struct busy x = top[k];

			top[k] = top[k - 1];
			top[k - 1] = x;
		}
	}
	busy_text(top, ntop, names, sizeof(names));
	if (!ntop)
		envc_put(e, "busy_tasks", CHECK_OK, "", "no other task used over %.0f%% of a CPU in %.1f s%s",
			 BUSY_PCT, secs, la);
	else
		envc_put(e, "busy_tasks", others > BAD_BUSY_PCT ? CHECK_BAD : CHECK_WARN,
			 "stop them, or keep them off the endpoints' CPUs: sudo taskset -apc OTHER_CPUS PID (or isolate CPUs for the endpoints)",
			 "other tasks used %.0f%% of a CPU over %.1f s: %s%s", others, secs, names, la);
}

/* Sleep for the sample; the time really slept, in seconds. */
static double sample_sleep(uint64_t ns)
{
	uint64_t t0 = now_ns();
	struct timespec ts = ns_to_timespec(ns);

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	return (double)(now_ns() - t0) / 1e9;
}

void envc_sample(struct envc *e)
{
	struct tasks *ta = malloc(sizeof(*ta)), *tb = malloc(sizeof(*tb));
	struct sys_snap *sa = malloc(sizeof(*sa)), *sb = malloc(sizeof(*sb));
	char path[512];
	double secs;
	bool ok;
	int err;

	if (!ta || !tb || !sa || !sb) {
		envc_put(e, "sample", CHECK_NA, "", "out of memory: irqbalance, steal, interrupts and busy tasks not checked");
		goto out;
	}
	snprintf(path, sizeof(path), "%s/stat", e->o->proc_root);
	ok = !sys_snap_read(path, sa);
	err = tasks_take(e, ta);
	secs = sample_sleep(e->o->sample_ns);
	ok &= !sys_snap_read(path, sb);
	if (!err)
		err = tasks_take(e, tb);
	check_irqbalance(e, tb, err);
	check_steal_irq(e, sa, sb, ok, secs);
	check_busy(e, ta, tb, secs, err);
out:
	free(ta);
	free(tb);
	free(sa);
	free(sb);
}
