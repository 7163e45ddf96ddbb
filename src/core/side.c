// SPDX-License-Identifier: MIT
/* One side of a cell, in its own process or thread: placement, opening the
 * endpoints, the start barrier, the pattern, and the services patterns use
 * (the measured window, failures, message checks). */
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipclab/cell_remote.h"
#include "ipclab/cleanup.h"
#include "ipclab/msg.h"
#include "ipclab/placement.h"
#include "ipclab/polling.h"
#include "ipclab/runner.h"
#include "ipclab/trace.h"
#include "runner_int.h"


long runner_futex(_Atomic uint32_t *w, int op, uint32_t val, uint64_t timeout_ns)
{
	struct timespec ts = ns_to_timespec(timeout_ns);

	return syscall(SYS_futex, w, op, val, timeout_ns ? &ts : NULL, NULL, 0);
}

void runner_wake_all(_Atomic uint32_t *w)
{
	runner_futex(w, FUTEX_WAKE, INT32_MAX, 0);
}

/* ---- services for patterns ---------------------------------------------- */

static struct run_ctl *ctl_of(const struct participant *p)
{
	return p->ctl;
}

bool pat_stopping(const struct participant *p)
{
	return atomic_load_explicit(&ctl_of(p)->stop, memory_order_relaxed);
}

void pat_window_begin(struct participant *p)
{
	struct run_ctl *ctl = ctl_of(p);

	/* the last side in takes the system snapshot, before its own clock */
	if (atomic_fetch_add(&ctl->in_window, 1) + 1 == ctl->nsides) {
		sys_snap_take(&ctl->sys0);
		intf_helpers_take(&ctl->helpers, false);
	}
	rusage_snap_take(&p->ru0, true);
	p->poll0 = polling_ns();
	p->sched0_ok = !sched_snap_self(&p->sched0);
	p->st->win_start_ns = now_ns();
	trace_mark(ctl->trace, (unsigned)(p->st - ctl->sides), false, p->st->win_start_ns);
	atomic_store(&p->st->state, SIDE_IN_WINDOW);
}

/* The scheduler's run and wait time over the window (interference). */
static void window_sched(struct participant *p)
{
	struct sched_snap s1;

	p->st->sched_known = p->sched0_ok && !sched_snap_self(&s1) &&
			     s1.run_ns >= p->sched0.run_ns && s1.wait_ns >= p->sched0.wait_ns;
	if (!p->st->sched_known)
		return;
	p->st->sched = (struct sched_snap){ .run_ns = s1.run_ns - p->sched0.run_ns,
					    .wait_ns = s1.wait_ns - p->sched0.wait_ns,
					    .slices = s1.slices - p->sched0.slices };
}

void pat_window_end(struct participant *p)
{
	struct rusage_snap ru1;
	struct run_ctl *ctl = ctl_of(p);

	if (atomic_load(&p->st->state) != SIDE_IN_WINDOW)
		return;
	p->st->win_end_ns = now_ns();
	trace_mark(ctl->trace, (unsigned)(p->st - ctl->sides), true, p->st->win_end_ns);
	rusage_snap_take(&ru1, true);
	rusage_snap_diff(&p->st->ru, &p->ru0, &ru1);
	p->st->poll_ns = polling_ns() - p->poll0;
	window_sched(p);
	atomic_store(&p->st->state, SIDE_READY);
	if (atomic_fetch_add(&ctl->out_window, 1) + 1 == ctl->nsides) {
		sys_snap_take(&ctl->sys1);
		intf_helpers_take(&ctl->helpers, true);
	}
}

void pat_mark_slow(struct participant *p, uint64_t t0, uint64_t t1)
{
	struct run_ctl *ctl = ctl_of(p);

	trace_msg_mark(ctl->trace, (unsigned)(p->st - ctl->sides), t0, t1);
}

void *pat_side_own(const struct participant *p, unsigned i)
{
	const struct cell *c = p->cell;

	if (i > c->clients || !cell_side_local(c, i))
		return NULL;
	return ctl_of(p)->sides[i].pat;
}

int pat_hist_open(struct participant *p)
{
	if (!p->st->hist)
		return pat_fail(p, EINVAL, "no latency histogram (the runner mapped none)");
	p->st->has_hist = true;
	return 0;
}

bool pat_lost_ns(const struct participant *p, uint64_t *ns)
{
	const struct run_ctl *ctl = ctl_of(p);

	return trace_lost_ns(ctl->trace, (unsigned)(p->st - ctl->sides), ns);
}

int pat_fail(struct participant *p, int err, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(p->st->err, sizeof(p->st->err), "%s %u: ",
			 p->role == TP_SERVER ? "server" : "client", p->id);

	va_start(ap, fmt);
	n += vsnprintf(p->st->err + n, sizeof(p->st->err) - (size_t)n, fmt, ap);
	va_end(ap);
	if ((err == EMFILE || err == ENFILE) && !strstr(p->st->err, "ulimit") &&
	    (size_t)n < sizeof(p->st->err))
		snprintf(p->st->err + n, sizeof(p->st->err) - (size_t)n,
			 " (out of file descriptors: raise the open-file limit, ulimit -n)");
	p->st->status = -err;
	return -err;
}

int pat_check_msg(struct participant *p, const void *buf, ssize_t got, uint32_t want_seq)
{
	const struct msg_hdr *h = buf;
	size_t want_len = p->cell->size;
	size_t bad;

	if (got < 0)
		return pat_fail(p, (int)-got, "receive failed after %llu messages: %s",
				 (unsigned long long)atomic_load(&p->st->progress), strerror((int)-got));
	if (got == 0)
		return pat_fail(p, EPIPE, "peer closed after %llu messages (expected more)",
				 (unsigned long long)atomic_load(&p->st->progress));
	if ((size_t)got != want_len || (h->len & MSG_LEN_MASK) != want_len)
		return pat_fail(p, EBADMSG, "message %u: length %zd (header says %u), expected %zu",
				 want_seq, got, h->len & MSG_LEN_MASK, want_len);
	if (h->seq != want_seq)
		return pat_fail(p, EBADMSG, "sequence %u received, expected %u (%s)", h->seq,
				 want_seq, h->seq < want_seq ? "duplicate or reorder" : "message lost");
	if (p->cell->verify && (bad = msg_check_payload(buf, want_len, want_seq)))
		return pat_fail(p, EBADMSG, "message %u: payload corrupt at byte %zu", want_seq,
				 bad - 1);
	return 0;
}

/* ---- one side ------------------------------------------------------------ */

static int side_open(struct participant *p)
{
	const struct transport *tp = p->cell->tp;
	char err[ERRLEN];
	int ret;

	if (p->cell->pat->open)
		return p->cell->pat->open(p);
	if (p->role == TP_CLIENT) {
		ret = tp->open(p->ch, TP_CLIENT, p->id, &p->ep, err, sizeof(err));
		if (ret)
			return pat_fail(p, -ret, "%s", err);
		return 0;
	}
	for (unsigned i = 0; i < p->cell->clients; i++) {
		ret = tp->open(p->ch, TP_SERVER, i, &p->eps[i], err, sizeof(err));
		if (ret) {
			while (i-- > 0)
				tp->close(p->eps[i]);
			return pat_fail(p, -ret, "%s", err);
		}
	}
	p->ep = p->eps[0];
	return 0;
}

static void side_close(struct participant *p)
{
	const struct transport *tp = p->cell->tp;

	if (p->cell->pat->close) {
		p->cell->pat->close(p);
		return;
	}
	if (p->role == TP_CLIENT) {
		if (p->ep)
			tp->close(p->ep);
		return;
	}
	for (unsigned i = 0; i < p->cell->clients; i++)
		if (p->eps[i])
			tp->close(p->eps[i]);
}

/* Wait at the start barrier; false if the run was aborted meanwhile. */
static bool side_wait_gate(struct run_ctl *ctl)
{
	for (;;) {
		uint32_t g = atomic_load(&ctl->gate);

		if (g == 1)
			return true;
		if (g == 2 || atomic_load(&ctl->stop))
			return false;
		runner_futex(&ctl->gate, FUTEX_WAIT, g, 100 * NSEC_PER_MSEC);
	}
}

/* The CPUs this thread may run on, a bit each (those past 63 are not
 * told apart: /proc/stat is read for 64 CPUs). */
static uint64_t affinity_mask(void)
{
	cpu_set_t set;
	uint64_t m = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (int c = 0; c < 64; c++)
		if (CPU_ISSET(c, &set))
			m |= UINT64_C(1) << c;
	return m;
}

int runner_side_run(struct side_arg *a)
{
	struct participant p = {
		.cell = a->cell, .ch = a->ch, .chs = a->chs, .nch = a->nch,
		.role = a->role, .id = a->id,
		.st = a->st, .ctl = a->ctl, .marks = trace_marks_on(a->ctl->trace),
	};
	const struct pattern *pat = a->cell->pat;
	char err[ERRLEN];
	int ret;

	p.st->pid = getpid();
	p.st->tid = (int)syscall(SYS_gettid);
	ret = placement_apply(a->cell, a->role, a->id, err, sizeof(err));
	if (ret) {
		pat_fail(&p, -ret, "%s", err);
		goto out;
	}
	p.st->cpu = sched_getcpu();
	p.st->cpu_mask = affinity_mask();
	p.buf = aligned_alloc(64, (a->cell->size + 63) & ~(size_t)63);
	if (!p.buf) {
		ret = pat_fail(&p, ENOMEM, "no memory for a %llu-byte buffer",
				(unsigned long long)a->cell->size);
		goto out;
	}
	memset(p.buf, 0, a->cell->size);
	ret = side_open(&p);
	if (ret)
		goto out;
	atomic_store(&p.st->state, SIDE_READY);
	atomic_fetch_add(&a->ctl->ready, 1);
	runner_wake_all(&a->ctl->ready);
	if (side_wait_gate(a->ctl))
		ret = a->role == TP_SERVER ? pat->server(&p) : pat->client(&p);
	pat_window_end(&p);
	/* before the close that its peers may take for the cause (EPIPE) */
	if (p.st->status)
		atomic_store(&p.st->state, SIDE_FAILED);
	side_close(&p);
out:
	if (ret && !p.st->status)
		pat_fail(&p, ret < 0 ? -ret : EIO, "failed: %s", strerror(ret < 0 ? -ret : EIO));
	free(p.buf);
	atomic_store(&p.st->state, SIDE_DONE);
	atomic_fetch_add(&a->ctl->done, 1);
	runner_wake_all(&a->ctl->done);
	runner_wake_all(&a->ctl->ready);
	return ret;
}

void *runner_side_thread(void *arg)
{
	runner_side_run(arg);
	return NULL;
}

