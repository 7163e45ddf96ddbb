// SPDX-License-Identifier: MIT
/* The runner: starts the endpoints of one cell as processes or threads,
 * holds them at a start barrier, watches them (dead peer, stall, signals)
 * and collects what they measured. Patterns only time messages; the window
 * bookkeeping (rusage, /proc/stat) lives here. */
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

#include "ipclab/cleanup.h"
#include "ipclab/msg.h"
#include "ipclab/placement.h"
#include "ipclab/runner.h"

volatile sig_atomic_t runner_interrupted;
static runner_tick_fn tick_fn;

void runner_set_tick(runner_tick_fn fn)
{
	tick_fn = fn;
}
__attribute__((weak)) volatile sig_atomic_t ipclab_stop_requested;

/* Shared by the parent and every side, in a MAP_SHARED mapping. */
struct run_ctl {
	_Atomic uint32_t gate;		/* futex: 0 closed, 1 open, 2 aborted */
	_Atomic uint32_t ready;		/* futex: sides at the barrier */
	_Atomic uint32_t done;		/* futex: sides finished */
	_Atomic uint32_t in_window, out_window;
	_Atomic int stop;
	unsigned nsides;
	struct sys_snap sys0, sys1;
	struct side_stats sides[];
};

struct side_arg {
	struct run_ctl *ctl;
	const struct cell *cell;
	struct tp_channel *ch;
	enum tp_role role;
	unsigned id;
	struct side_stats *st;
};

static long futex(_Atomic uint32_t *w, int op, uint32_t val, uint64_t timeout_ns)
{
	struct timespec ts = ns_to_timespec(timeout_ns);

	return syscall(SYS_futex, w, op, val, timeout_ns ? &ts : NULL, NULL, 0);
}

static void wake_all(_Atomic uint32_t *w)
{
	futex(w, FUTEX_WAKE, INT32_MAX, 0);
}

static void on_stop_signal(int sig)
{
	(void)sig;
	ipclab_stop_requested = 1;
}

static void on_parent_signal(int sig)
{
	runner_interrupted = sig;
}

void runner_init(void)
{
	struct sigaction sa = { .sa_handler = on_parent_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_stop_signal;	/* no SA_RESTART: interrupts blocking calls */
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

uint64_t runner_default_warmup(uint64_t count)
{
	uint64_t w = count / 20;

	return w < 1 ? 1 : w > 10000 ? 10000 : w;
}

/* ---- services for patterns ---------------------------------------------- */

static struct run_ctl *ctl_of(const struct participant *p)
{
	return p->ctl;
}

bool part_stopping(const struct participant *p)
{
	return atomic_load_explicit(&ctl_of(p)->stop, memory_order_relaxed) ||
	       ipclab_stop_requested;
}

void part_window_begin(struct participant *p)
{
	struct run_ctl *ctl = ctl_of(p);

	/* the last side in takes the system snapshot, before its own clock */
	if (atomic_fetch_add(&ctl->in_window, 1) + 1 == ctl->nsides)
		sys_snap_take(&ctl->sys0);
	rusage_snap_take(&p->ru0, true);
	p->st->win_start_ns = now_ns();
	atomic_store(&p->st->state, SIDE_IN_WINDOW);
}

void part_window_end(struct participant *p)
{
	struct rusage_snap ru1;
	struct run_ctl *ctl = ctl_of(p);

	if (atomic_load(&p->st->state) != SIDE_IN_WINDOW)
		return;
	p->st->win_end_ns = now_ns();
	rusage_snap_take(&ru1, true);
	rusage_snap_diff(&p->st->ru, &p->ru0, &ru1);
	atomic_store(&p->st->state, SIDE_READY);
	if (atomic_fetch_add(&ctl->out_window, 1) + 1 == ctl->nsides)
		sys_snap_take(&ctl->sys1);
}

int part_fail(struct participant *p, int err, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(p->st->err, sizeof(p->st->err), "%s %u: ",
			 p->role == TP_SERVER ? "server" : "client", p->id);

	va_start(ap, fmt);
	vsnprintf(p->st->err + n, sizeof(p->st->err) - (size_t)n, fmt, ap);
	va_end(ap);
	p->st->status = -err;
	return -err;
}

int part_check_msg(struct participant *p, const void *buf, ssize_t got, uint32_t want_seq)
{
	const struct msg_hdr *h = buf;
	size_t want_len = p->cell->size;
	size_t bad;

	if (got < 0)
		return part_fail(p, (int)-got, "receive failed after %llu messages: %s",
				 (unsigned long long)atomic_load(&p->st->progress), strerror((int)-got));
	if (got == 0)
		return part_fail(p, EPIPE, "peer closed after %llu messages (expected more)",
				 (unsigned long long)atomic_load(&p->st->progress));
	if ((size_t)got != want_len || (h->len & MSG_LEN_MASK) != want_len)
		return part_fail(p, EBADMSG, "message %u: length %zd (header says %u), expected %zu",
				 want_seq, got, h->len & MSG_LEN_MASK, want_len);
	if (h->seq != want_seq)
		return part_fail(p, EBADMSG, "sequence %u received, expected %u (%s)", h->seq,
				 want_seq, h->seq < want_seq ? "duplicate or reorder" : "message lost");
	if (p->cell->verify && (bad = msg_check_payload(buf, want_len, want_seq)))
		return part_fail(p, EBADMSG, "message %u: payload corrupt at byte %zu", want_seq,
				 bad - 1);
	return 0;
}

/* ---- one side ------------------------------------------------------------ */

static int side_open(struct participant *p)
{
	const struct transport *tp = p->cell->tp;
	char err[ERRLEN];
	int ret;

	if (p->role == TP_CLIENT) {
		ret = tp->open(p->ch, TP_CLIENT, p->id, &p->ep, err, sizeof(err));
		if (ret)
			return part_fail(p, -ret, "%s", err);
		return 0;
	}
	for (unsigned i = 0; i < p->cell->clients; i++) {
		ret = tp->open(p->ch, TP_SERVER, i, &p->eps[i], err, sizeof(err));
		if (ret) {
			while (i-- > 0)
				tp->close(p->eps[i]);
			return part_fail(p, -ret, "%s", err);
		}
	}
	p->ep = p->eps[0];
	return 0;
}

static void side_close(struct participant *p)
{
	const struct transport *tp = p->cell->tp;

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
		futex(&ctl->gate, FUTEX_WAIT, g, 100 * NSEC_PER_MSEC);
	}
}

static int side_run(struct side_arg *a)
{
	struct participant p = {
		.cell = a->cell, .ch = a->ch, .role = a->role, .id = a->id,
		.st = a->st, .ctl = a->ctl,
	};
	const struct pattern *pat = a->cell->pat;
	char err[ERRLEN];
	int ret;

	p.st->pid = getpid();
	p.st->tid = (int)syscall(SYS_gettid);
	ret = placement_apply(a->cell, a->role, a->id, err, sizeof(err));
	if (ret) {
		part_fail(&p, -ret, "%s", err);
		goto out;
	}
	p.st->cpu = sched_getcpu();
	p.buf = aligned_alloc(64, (a->cell->size + 63) & ~(size_t)63);
	if (!p.buf) {
		ret = part_fail(&p, ENOMEM, "no memory for a %llu-byte buffer",
				(unsigned long long)a->cell->size);
		goto out;
	}
	memset(p.buf, 0, a->cell->size);
	ret = side_open(&p);
	if (ret)
		goto out;
	atomic_store(&p.st->state, SIDE_READY);
	atomic_fetch_add(&a->ctl->ready, 1);
	wake_all(&a->ctl->ready);
	if (side_wait_gate(a->ctl))
		ret = a->role == TP_SERVER ? pat->server(&p) : pat->client(&p);
	part_window_end(&p);
	side_close(&p);
out:
	if (ret && !p.st->status)
		part_fail(&p, ret < 0 ? -ret : EIO, "failed: %s", strerror(ret < 0 ? -ret : EIO));
	free(p.buf);
	atomic_store(&p.st->state, SIDE_DONE);
	atomic_fetch_add(&a->ctl->done, 1);
	wake_all(&a->ctl->done);
	wake_all(&a->ctl->ready);
	return ret;
}

static void *side_thread(void *arg)
{
	side_run(arg);
	return NULL;
}

/* ---- the parent ------------------------------------------------------------ */

struct run_state {
	const struct cell *cell;
	struct run_ctl *ctl;
	size_t ctl_size;
	struct tp_channel ch;
	struct tp_config cfg;
	struct side_arg args[MAX_SIDES];
	pid_t pids[MAX_SIDES];
	int pid_handles[MAX_SIDES];
	pthread_t threads[MAX_SIDES];
	bool started[MAX_SIDES];
	unsigned nsides;
	char fail[ERRLEN];
	struct sys_snap tick_prev;
	uint64_t stopped_since[MAX_SIDES];	/* when a child was first seen stopped */
	uint64_t last_stop_check;
};

static const char *side_name(const struct side_stats *st, char *buf, size_t len)
{
	snprintf(buf, len, "%s %u", st->role == TP_SERVER ? "server" : "client", st->id);
	return buf;
}

static int start_process(struct run_state *rs, unsigned i)
{
	pid_t parent = getpid();
	int h = cleanup_add_id(CL_PID, -1);
	pid_t pid;

	if (h < 0)
		return h;
	pid = fork();
	if (pid < 0) {
		cleanup_forget(h);
		return -errno;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_DFL);
		_exit(side_run(&rs->args[i]) ? 1 : 0);
	}
	cleanup_set_id(h, pid);
	rs->pids[i] = pid;
	rs->pid_handles[i] = h;
	rs->started[i] = true;
	return 0;
}

static int start_sides(struct run_state *rs)
{
	for (unsigned i = 0; i < rs->nsides; i++) {
		struct side_arg *a = &rs->args[i];
		int ret;

		a->ctl = rs->ctl;
		a->cell = rs->cell;
		a->ch = &rs->ch;
		a->role = i == 0 ? TP_SERVER : TP_CLIENT;
		a->id = i == 0 ? 0 : i - 1;
		a->st = &rs->ctl->sides[i];
		a->st->role = a->role;
		a->st->id = a->id;
		hist_init(&a->st->hist);
		if (rs->cell->threads) {
			ret = -pthread_create(&rs->threads[i], NULL, side_thread, a);
			if (!ret)
				rs->started[i] = true;
		} else {
			ret = start_process(rs, i);
		}
		if (ret)
			return errf(rs->fail, sizeof(rs->fail), -ret, "cannot start %s: %s",
				    i ? "client" : "server", strerror(-ret));
	}
	return 0;
}

/* Ask every side to stop: flag, signal (interrupts blocking calls), and in
 * process mode a kill after the grace period. */
static void stop_sides(struct run_state *rs, bool kill_now)
{
	atomic_store(&rs->ctl->stop, 1);
	atomic_store(&rs->ctl->gate, 2);
	wake_all(&rs->ctl->gate);
	for (unsigned i = 0; i < rs->nsides; i++) {
		if (!rs->started[i])
			continue;
		if (rs->cell->threads)
			pthread_kill(rs->threads[i], SIGUSR1);
		else if (rs->pids[i] > 0)
			kill(rs->pids[i], kill_now ? SIGKILL : SIGUSR1);
	}
}

/* A child that exited: was it an orderly end? Fill rs->fail if not. */
static bool reap_child(struct run_state *rs, unsigned i, int status)
{
	struct side_stats *st = &rs->ctl->sides[i];
	char who[32];

	cleanup_forget(rs->pid_handles[i]);
	rs->pids[i] = 0;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && atomic_load(&st->state) == SIDE_DONE)
		return true;
	if (rs->fail[0])
		return false;
	if (atomic_load(&st->state) == SIDE_DONE && st->status)
		snprintf(rs->fail, sizeof(rs->fail), "%s", st->err);
	else if (WIFSIGNALED(status))
		snprintf(rs->fail, sizeof(rs->fail),
			 "%s (pid %d) died: killed by signal %d (%s) after %llu messages",
			 side_name(st, who, sizeof(who)), st->pid, WTERMSIG(status),
			 strsignal(WTERMSIG(status)), (unsigned long long)atomic_load(&st->progress));
	else
		snprintf(rs->fail, sizeof(rs->fail), "%s (pid %d) died: exit status %d after %llu messages",
			 side_name(st, who, sizeof(who)), st->pid,
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1,
			 (unsigned long long)atomic_load(&st->progress));
	return false;
}

/* Non-blocking check of every side; false once something failed. */
static bool check_sides(struct run_state *rs)
{
	for (unsigned i = 0; i < rs->nsides; i++) {
		struct side_stats *st = &rs->ctl->sides[i];
		int status;

		if (!rs->cell->threads && rs->pids[i] > 0 &&
		    waitpid(rs->pids[i], &status, WNOHANG) == rs->pids[i] && !reap_child(rs, i, status))
			return false;
		if (atomic_load(&st->state) == SIDE_DONE && st->status) {
			if (!rs->fail[0])
				snprintf(rs->fail, sizeof(rs->fail), "%s", st->err);
			return false;
		}
	}
	return !rs->fail[0];
}

/* The state letter of a process ('R', 'S', 'T' = stopped, ...), or 0. */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_text_file(path, buf, sizeof(buf)) <= 0 || !(p = strrchr(buf, ')')))
		return 0;
	return p[1] == ' ' ? p[2] : 0;
}

/* A child stopped (SIGSTOP, a debugger) for over a second is reported, not
 * waited on: checked four times a second. */
static bool check_stopped(struct run_state *rs, uint64_t t)
{
	char who[32];

	if (rs->cell->threads || t - rs->last_stop_check < 250 * NSEC_PER_MSEC)
		return true;
	rs->last_stop_check = t;
	for (unsigned i = 0; i < rs->nsides; i++) {
		char st = rs->pids[i] > 0 ? proc_state(rs->pids[i]) : 0;

		if (st != 'T' && st != 't') {
			rs->stopped_since[i] = 0;
			continue;
		}
		if (!rs->stopped_since[i])
			rs->stopped_since[i] = t;
		else if (t - rs->stopped_since[i] > NSEC_PER_SEC) {
			snprintf(rs->fail, sizeof(rs->fail),
				 "%s (pid %d) is stopped (SIGSTOP or a debugger) after %llu messages",
				 side_name(&rs->ctl->sides[i], who, sizeof(who)), rs->pids[i],
				 (unsigned long long)atomic_load(&rs->ctl->sides[i].progress));
			return false;
		}
	}
	return true;
}

static uint64_t total_progress(struct run_state *rs)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < rs->nsides; i++)
		n += atomic_load_explicit(&rs->ctl->sides[i].progress, memory_order_relaxed);
	return n;
}

static void describe_stall(struct run_state *rs, uint64_t idle_ns)
{
	size_t off;
	char who[32];

	off = (size_t)snprintf(rs->fail, sizeof(rs->fail), "stalled: no message moved for %.1f s;",
			       (double)idle_ns / 1e9);
	for (unsigned i = 0; i < rs->nsides && off < sizeof(rs->fail); i++)
		off += (size_t)snprintf(rs->fail + off, sizeof(rs->fail) - off, " %s at %llu",
					side_name(&rs->ctl->sides[i], who, sizeof(who)),
					(unsigned long long)atomic_load(&rs->ctl->sides[i].progress));
	if (off < sizeof(rs->fail))
		snprintf(rs->fail + off, sizeof(rs->fail) - off, " (raise --timeout if this is expected)");
}

/* Wait until `word` reaches `want` while watching the sides. */
/* --vmstat: a snapshot a second, handed to the tick function. */
static void vmstat_tick(struct run_state *rs, uint64_t t)
{
	if (!tick_fn)
		return;
	if (!rs->tick_prev.t_ns) {
		sys_snap_take(&rs->tick_prev);
		return;
	}
	if (t - rs->tick_prev.t_ns < NSEC_PER_SEC)
		return;
	struct sys_snap cur;

	sys_snap_take(&cur);
	tick_fn(rs->cell, &rs->tick_prev, &cur);
	rs->tick_prev = cur;
}

static int watch_until(struct run_state *rs, _Atomic uint32_t *word, uint32_t want)
{
	uint64_t last = total_progress(rs), last_t = now_ns();

	for (;;) {
		uint32_t v = atomic_load(word);

		if (v >= want)
			return 0;
		if (runner_interrupted)
			return -EINTR;
		if (!check_sides(rs))
			return -EIO;
		uint64_t p = total_progress(rs), t = now_ns();

		vmstat_tick(rs, t);
		if (!check_stopped(rs, t))
			return -EIO;
		if (p != last) {
			last = p;
			last_t = t;
		} else if (rs->cell->timeout_ns && t - last_t > rs->cell->timeout_ns) {
			describe_stall(rs, t - last_t);
			return -ETIMEDOUT;
		}
		futex(word, FUTEX_WAIT, v, 20 * NSEC_PER_MSEC);
	}
}

/* Join / reap everything; kill what does not stop within the grace time. */
static void finish_sides(struct run_state *rs)
{
	uint64_t deadline = now_ns() + 2 * NSEC_PER_SEC;

	for (unsigned i = 0; i < rs->nsides; i++) {
		if (!rs->started[i])
			continue;
		if (rs->cell->threads) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += 2;
			if (pthread_timedjoin_np(rs->threads[i], NULL, &ts)) {
				/* a thread stuck in a call that ignores signals: give up on it */
				fprintf(stderr, "ipclab: an endpoint thread did not stop; exiting\n");
				cleanup_all();
				_exit(1);
			}
		} else if (rs->pids[i] > 0) {
			int status;

			while (waitpid(rs->pids[i], &status, WNOHANG) == 0) {
				if (now_ns() > deadline)
					kill(rs->pids[i], SIGKILL);
				usleep(1000);
			}
			reap_child(rs, i, status);
		}
		rs->started[i] = false;
	}
}

static int setup(struct run_state *rs, const struct cell *c, struct result *res)
{
	char err[ERRLEN] = "";
	int ret;

	rs->cell = c;
	rs->nsides = 1 + c->clients;
	rs->ctl_size = sizeof(struct run_ctl) + rs->nsides * sizeof(struct side_stats);
	rs->ctl = mmap(NULL, rs->ctl_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (rs->ctl == MAP_FAILED) {
		rs->ctl = NULL;
		return errf(rs->fail, sizeof(rs->fail), ENOMEM, "cannot map shared state: %s",
			    strerror(errno));
	}
	rs->ctl->nsides = rs->nsides;
	rs->cfg = (struct tp_config){ .msg_size = c->size, .clients = c->clients,
				      .threads = c->threads, .opts = c->tp_opts,
				      .dir = cleanup_private_dir() };
	if (!rs->cfg.dir)
		return errf(rs->fail, sizeof(rs->fail), errno, "cannot make a private directory: %s",
			    strerror(errno));
	rs->ch = (struct tp_channel){ .cfg = &rs->cfg };
	if (c->tp->probe && (ret = c->tp->probe(&rs->cfg, err, sizeof(err)))) {
		res->status = RES_SKIPPED;
		snprintf(res->reason, sizeof(res->reason), "%s", err);
		return 1;
	}
	rs->ch.tp = c->tp;
	ret = c->tp->create(&rs->ch, err, sizeof(err));
	res->settings = rs->ch.settings;
	if (ret)
		return errf(rs->fail, sizeof(rs->fail), -ret, "%s", err[0] ? err : strerror(-ret));
	return 0;
}

static int execute(struct run_state *rs)
{
	int ret = start_sides(rs);

	if (!ret)
		ret = watch_until(rs, &rs->ctl->ready, rs->nsides);
	if (!ret) {
		atomic_store(&rs->ctl->gate, 1);
		wake_all(&rs->ctl->gate);
		ret = watch_until(rs, &rs->ctl->done, rs->nsides);
	}
	if (ret)
		stop_sides(rs, !rs->cell->threads && ret != -EINTR ? true : false);
	if (ret == -EINTR && !rs->cell->threads)
		stop_sides(rs, true);
	finish_sides(rs);
	if (!ret)
		check_sides(rs);
	ipclab_stop_requested = 0;
	return ret == -EINTR ? -EINTR : rs->fail[0] ? -EIO : 0;
}

int run_cell(const struct cell *c, struct result *res)
{
	struct run_state *rs = calloc(1, sizeof(*rs));
	int ret;

	if (!rs) {
		res->status = RES_FAILED;
		snprintf(res->reason, sizeof(res->reason), "out of memory");
		return 0;
	}
	ret = setup(rs, c, res);
	if (ret == 0)
		ret = execute(rs);
	if (c->tp && rs->ch.tp)
		c->tp->destroy(&rs->ch);
	if (ret == 0) {
		struct run_ctl_view v = { .sides = rs->ctl->sides, .nsides = rs->nsides,
					  .sys0 = &rs->ctl->sys0, .sys1 = &rs->ctl->sys1 };

		runner_collect(&v, res);
	} else if (ret < 0) {
		res->status = RES_FAILED;
		snprintf(res->reason, sizeof(res->reason), "%s",
			 rs->fail[0] ? rs->fail : ret == -EINTR ? "interrupted" : strerror(-ret));
	}
	if (rs->ctl)
		munmap(rs->ctl, rs->ctl_size);
	free(rs);
	return ret == -EINTR ? -EINTR : 0;
}
