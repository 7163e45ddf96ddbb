// SPDX-License-Identifier: MIT
/* Per-side CPU time and context switches (getrusage), and the system-wide
 * view from /proc/stat (vmstat's "cs" and CPU split). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ipclab/metrics.h"
#include "ipclab/util.h"

static uint64_t tv_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * NSEC_PER_SEC + (uint64_t)tv.tv_usec * 1000u;
}

int rusage_snap_take(struct rusage_snap *s, bool thread)
{
	struct rusage ru;

	if (getrusage(thread ? RUSAGE_THREAD : RUSAGE_SELF, &ru))
		return -errno;
	s->user_ns = tv_ns(ru.ru_utime);
	s->sys_ns = tv_ns(ru.ru_stime);
	s->vol_cs = (uint64_t)ru.ru_nvcsw;
	s->invol_cs = (uint64_t)ru.ru_nivcsw;
	return 0;
}

void rusage_snap_diff(struct rusage_snap *out, const struct rusage_snap *a,
		      const struct rusage_snap *b)
{
	out->user_ns = b->user_ns - a->user_ns;
	out->sys_ns = b->sys_ns - a->sys_ns;
	out->vol_cs = b->vol_cs - a->vol_cs;
	out->invol_cs = b->invol_cs - a->invol_cs;
}

/* "cpuN user nice system idle iowait irq softirq steal ..." */
static void parse_cpu_line(struct sys_snap *s, const char *line)
{
	unsigned long long v[10] = { 0 };
	int idx = 0;
	const char *p = line + 3;

	if (*p != ' ') {
		idx = atoi(p) + 1;
		if (idx < 1 || idx > SYS_MAX_CPUS)
			return;
		if ((unsigned)idx > s->ncpu)
			s->ncpu = (unsigned)idx;
	}
	p = strchr(p, ' ');
	if (!p || sscanf(p, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
			 &v[3], &v[4], &v[5], &v[6], &v[7]) < 4)
		return;
	s->user[idx] = v[0] + v[1];
	s->sys[idx] = v[2] + v[5] + v[6];
	s->irq[idx] = v[5] + v[6];
	s->steal[idx] = v[7];
	s->busy[idx] = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	s->total[idx] = s->busy[idx] + v[3] + v[4];
}

int sys_snap_take(struct sys_snap *s)
{
	return sys_snap_read("/proc/stat", s);
}

int sys_snap_read(const char *path, struct sys_snap *s)
{
	static __thread char buf[131072];
	ssize_t n;
	char *line, *save = NULL;

	memset(s, 0, sizeof(*s));
	n = read_text_file(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "cpu", 3) == 0)
			parse_cpu_line(s, line);
		else if (strncmp(line, "ctxt ", 5) == 0)
			s->ctxt = strtoull(line + 5, NULL, 10);
		else if (strncmp(line, "intr ", 5) == 0)
			s->intr = strtoull(line + 5, NULL, 10);
	}
	s->t_ns = now_ns();
	return 0;
}

void clock_measure(struct clock_info *ci)
{
	enum { N = 20000 };
	struct timespec res;
	uint64_t t0, t1, sink = 0;

	for (int i = 0; i < 1000; i++)
		sink += now_ns();
	t0 = now_ns();
	for (int i = 0; i < N; i++)
		sink += now_ns();
	t1 = now_ns();
	ci->cost_ns = (double)(t1 - t0) / N;
	clock_getres(CLOCK_MONOTONIC, &res);
	ci->resolution_ns = (uint64_t)res.tv_sec * NSEC_PER_SEC + (uint64_t)res.tv_nsec;
	__asm__ __volatile__("" ::"r"(sink));
}
