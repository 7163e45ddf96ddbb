// SPDX-License-Identifier: MIT
/* Interference over a measured window (ipclab/interference.h): the
 * scheduler's per-thread accounting read from /proc, and the share of each
 * endpoint CPU that went to other tasks, to interrupts and to the
 * hypervisor. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipclab/interference.h"
#include "ipclab/util.h"

int sched_snap_parse(const char *text, struct sched_snap *s)
{
	unsigned long long run, wait, slices;
	char extra;

	if (sscanf(text, "%llu %llu %llu %c", &run, &wait, &slices, &extra) != 3)
		return -EINVAL;
	*s = (struct sched_snap){ .run_ns = run, .wait_ns = wait, .slices = slices };
	return 0;
}

static int sched_snap_read(const char *path, struct sched_snap *s)
{
	char buf[128];
	ssize_t n = read_text_file(path, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	return sched_snap_parse(buf, s);
}

int sched_snap_self(struct sched_snap *s)
{
	return sched_snap_read("/proc/thread-self/schedstat", s);
}

int sched_snap_pid(int pid, struct sched_snap *s)
{
	char path[48];

	if (pid <= 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	return sched_snap_read(path, s);
}

void intf_helpers_take(struct intf_helpers *h, bool end)
{
	for (unsigned i = 0; i < h->n && i < INTF_MAX_HELPERS; i++) {
		struct sched_snap s = { 0 };
		bool ok = !sched_snap_pid(h->pid[i], &s);

		if (end) {
			h->run1[i] = ok ? s.run_ns : 0;
			h->ok1[i] = ok;
		} else {
			h->run0[i] = ok ? s.run_ns : 0;
			h->ok0[i] = ok;
		}
	}
}

const char *intf_method_name(enum intf_method m)
{
	return m == INTF_PER_CPU ? "per_cpu" : m == INTF_POOLED ? "pooled" : "none";
}

/* ---- the window ------------------------------------------------------------- */

/* CPU c's clock ticks over the window (0: none, not measured). */
static uint64_t cpu_ticks(const struct intf_window *w, unsigned c)
{
	return w->b->total[c + 1] > w->a->total[c + 1] ? w->b->total[c + 1] - w->a->total[c + 1] : 0;
}

static uint64_t delta(const uint64_t *a, const uint64_t *b, unsigned c)
{
	return b[c + 1] > a[c + 1] ? b[c + 1] - a[c + 1] : 0;
}

/* Tasks' time on CPU c (user + nice + system), in ns of the window: the
 * ticks' share of the CPU's ticks, times the window. */
static double task_ns(const struct intf_window *w, unsigned c, uint64_t win)
{
	uint64_t busy = delta(w->a->busy, w->b->busy, c), irq = delta(w->a->irq, w->b->irq, c);
	uint64_t steal = delta(w->a->steal, w->b->steal, c), tot = cpu_ticks(w, c);
	uint64_t task = busy > irq + steal ? busy - irq - steal : 0;

	return tot ? (double)task / (double)tot * (double)win : 0;
}

static unsigned ncpus_of(const struct intf_window *w)
{
	unsigned n = w->a->ncpu < w->b->ncpu ? w->a->ncpu : w->b->ncpu;

	return n < INTF_MAX_CPUS ? n : INTF_MAX_CPUS;
}

/* Endpoint i's CPUs among the online ones; not known where it may run:
 * anywhere. */
static uint64_t ep_mask(const struct intf_window *w, unsigned i)
{
	unsigned n = ncpus_of(w);
	uint64_t online = n >= 64 ? UINT64_MAX : (UINT64_C(1) << n) - 1;

	return w->ep[i].cpus & online ? w->ep[i].cpus & online : online;
}

/* The endpoints' CPU set, and whether each endpoint is confined to one. */
static uint64_t endpoint_cpus(const struct intf_window *w, bool *single)
{
	uint64_t set = 0;

	*single = true;
	for (unsigned i = 0; i < w->nep; i++) {
		if (!w->ep[i].known)
			continue;
		*single &= __builtin_popcountll(ep_mask(w, i)) == 1;
		set |= ep_mask(w, i);
	}
	return set;
}

/* The endpoints' run time on the CPUs of mask (per_cpu: the endpoints
 * confined to exactly that CPU). */
static double ep_ns(const struct intf_window *w, uint64_t mask, bool per_cpu)
{
	double own = 0;

	for (unsigned i = 0; i < w->nep; i++)
		if (w->ep[i].known && (per_cpu ? ep_mask(w, i) == mask : (ep_mask(w, i) & mask)))
			own += (double)w->ep[i].run_ns;
	return own;
}

/* ipclab's helpers' run time on the CPUs of mask. */
static double help_ns(const struct intf_window *w, uint64_t mask)
{
	double own = 0;

	for (unsigned i = 0; i < w->nhelp; i++)
		if (w->help[i].known && (w->help[i].cpus & mask))
			own += (double)w->help[i].run_ns;
	return own;
}

static double clamp(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

enum intf_method intf_foreign_ns(const struct intf_window *w, uint64_t foreign_ns[INTF_MAX_CPUS],
				 uint64_t *pool_ns, uint64_t *cpus)
{
	uint64_t win = w->b->t_ns > w->a->t_ns ? w->b->t_ns - w->a->t_ns : 0;
	unsigned n = ncpus_of(w), pool = 0;
	double task = 0;
	bool single;

	for (unsigned c = 0; c < INTF_MAX_CPUS; c++)
		foreign_ns[c] = UINT64_MAX;
	*pool_ns = 0;
	*cpus = endpoint_cpus(w, &single);
	if (!win || !*cpus)
		return INTF_NONE;
	for (unsigned c = 0; c < n; c++) {
		if (!(*cpus & (UINT64_C(1) << c)))
			continue;
		if (!cpu_ticks(w, c))
			return INTF_NONE;	/* a window shorter than a tick */
		if (single)
			foreign_ns[c] = (uint64_t)clamp(task_ns(w, c, win) -
							ep_ns(w, UINT64_C(1) << c, true) -
							help_ns(w, UINT64_C(1) << c), 0, (double)win);
		task += task_ns(w, c, win);
		pool++;
	}
	if (single)
		return INTF_PER_CPU;
	*pool_ns = (uint64_t)clamp(task - ep_ns(w, *cpus, false) - help_ns(w, *cpus), 0,
				   (double)win * pool);
	return INTF_POOLED;
}

/* ---- the record ------------------------------------------------------------- */

void intf_clear(struct interference *out)
{
	memset(out, 0, sizeof(*out));
	out->method = INTF_NONE;
	out->resolution_pct = out->foreign_pct = out->steal_pct = out->irq_pct = NAN;
	out->endpoint_wait_pct = out->loadavg_1min = NAN;
	out->foreign_cpu = -1;
}

static double pct(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : NAN;
}

static double max_known(double a, double b)
{
	return isnan(a) || b > a ? b : a;
}

/* The endpoint CPUs' shares, and the worst of each. */
static void fill_cpus(const struct intf_window *w, uint64_t cpus, const uint64_t *foreign,
		      uint64_t win, struct interference *out)
{
	for (unsigned c = 0; c < ncpus_of(w) && out->ncpus < INTF_MAX_CPUS; c++) {
		struct intf_cpu *ic = &out->cpu[out->ncpus];
		double tot = (double)cpu_ticks(w, c);

		if (!(cpus & (UINT64_C(1) << c)))
			continue;
		out->ncpus++;
		ic->cpu = c;
		ic->busy_pct = pct((double)delta(w->a->busy, w->b->busy, c), tot);
		ic->irq_pct = pct((double)delta(w->a->irq, w->b->irq, c), tot);
		ic->steal_pct = pct((double)delta(w->a->steal, w->b->steal, c), tot);
		ic->foreign_pct = ic->endpoint_pct = NAN;
		ic->helper_pct = pct(help_ns(w, UINT64_C(1) << c), (double)win);
		if (foreign[c] != UINT64_MAX) {
			ic->foreign_pct = pct((double)foreign[c], (double)win);
			ic->endpoint_pct = pct(ep_ns(w, UINT64_C(1) << c, true), (double)win);
			if (isnan(out->foreign_pct) || ic->foreign_pct > out->foreign_pct) {
				out->foreign_pct = ic->foreign_pct;
				out->foreign_cpu = (int)c;
			}
		}
		out->irq_pct = max_known(out->irq_pct, ic->irq_pct);
		out->steal_pct = max_known(out->steal_pct, ic->steal_pct);
	}
}

static void endpoint_wait(const struct intf_window *w, struct interference *out)
{
	for (unsigned i = 0; i < w->nep; i++)
		if (w->ep[i].known && w->ep[i].window_ns)
			out->endpoint_wait_pct = max_known(out->endpoint_wait_pct,
				pct((double)w->ep[i].wait_ns, (double)w->ep[i].window_ns));
}

static bool is_noisy(const struct interference *in)
{
	double floor = isnan(in->resolution_pct) ? 0 : in->resolution_pct;

	return (in->foreign_pct > INTF_FOREIGN_NOISY_PCT && in->foreign_pct > floor) ||
	       (in->steal_pct >= INTF_STEAL_NOISY_PCT && in->steal_pct > floor);
}

void intf_compute(const struct intf_window *w, double loadavg, struct interference *out)
{
	uint64_t foreign[INTF_MAX_CPUS], pool_ns, cpus;
	long hz = sysconf(_SC_CLK_TCK);

	intf_clear(out);
	out->loadavg_1min = loadavg;
	endpoint_wait(w, out);
	out->method = intf_foreign_ns(w, foreign, &pool_ns, &cpus);
	if (out->method == INTF_NONE)
		return;
	out->window_ns = w->b->t_ns - w->a->t_ns;
	out->resolution_pct = pct(INTF_RESOLUTION_TICKS * 1e9 / (double)(hz > 0 ? hz : 100),
				  (double)out->window_ns);
	fill_cpus(w, cpus, foreign, out->window_ns, out);
	if (out->method == INTF_POOLED)
		out->foreign_pct = pct((double)pool_ns,
				       (double)out->window_ns * __builtin_popcountll(cpus));
	out->noisy = is_noisy(out);
}

void intf_fold(struct interference *dst, const struct interference *src)
{
	bool noisy = dst->noisy || src->noisy;
	double wait = max_known(dst->endpoint_wait_pct, src->endpoint_wait_pct);
	double steal = max_known(dst->steal_pct, src->steal_pct);
	double irq = max_known(dst->irq_pct, src->irq_pct);

	if (src->method != INTF_NONE &&
	    (dst->method == INTF_NONE || src->foreign_pct > dst->foreign_pct))
		*dst = *src;
	dst->noisy = noisy;
	dst->endpoint_wait_pct = wait;
	dst->steal_pct = steal;
	dst->irq_pct = irq;
}

void intf_summary(const struct interference *in, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	if (!in->noisy)
		return;
	if (in->foreign_pct > INTF_FOREIGN_NOISY_PCT) {
		if (in->foreign_cpu >= 0)
			off = (size_t)snprintf(buf, len, "cpu%d:%.0f%%", in->foreign_cpu, in->foreign_pct);
		else
			off = (size_t)snprintf(buf, len, "pool:%.0f%%", in->foreign_pct);
	}
	if (in->steal_pct >= INTF_STEAL_NOISY_PCT && off < len)
		snprintf(buf + off, len - off, "%ssteal:%.0f%%", off ? "," : "", in->steal_pct);
}
