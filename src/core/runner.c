// SPDX-License-Identifier: MIT
/* The runner: starts the endpoints of one cell as processes or threads,
 * holds them at a start barrier, watches them (dead peer, stall, signals)
 * and collects what they measured. Patterns only time messages; the window
 * bookkeeping (rusage, /proc/stat) lives here. */
#include <errno.h>
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
#include "ipclab/idle.h"
#include "ipclab/msg.h"
#include "ipclab/placement.h"
#include "ipclab/profile.h"
#include "ipclab/runner.h"
#include "ipclab/trace.h"
#include "runner_int.h"
#include "traced.h"

volatile sig_atomic_t runner_interrupted;
/* The stop word of the cell that is running (its run_ctl's, handed to
 * the transport in tp_config), or NULL between cells: what SIGUSR1 sets.
 * A lock-free atomic store is all a handler does, so it is signal-safe. */
static _Atomic(_Atomic int *) stop_word;

static void on_stop_signal(int sig)
{
	_Atomic int *w = atomic_load(&stop_word);

	(void)sig;
	if (w)
		atomic_store(w, 1);
}

static void on_parent_signal(int sig)
{
	runner_interrupted = sig;
}

/* SIGPIPE from a write to a closed pipe or socket is the process's own (the
 * kernel sends it as from the writer): the write's EPIPE reports that. One
 * sent by anyone else asks the run to end, like SIGTERM. */
static void on_sigpipe(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (si && si->si_code <= 0 && si->si_pid != getpid())
		runner_interrupted = sig;
}

/* The signals that end a run: each is handled, so that the run stops and
 * cleans up and ipclab exits 128+N. */
static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

void runner_init(void)
{
	struct sigaction sa = { .sa_handler = on_parent_signal };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(stop_signals); i++)
		sigaction(stop_signals[i], &sa, NULL);
	sa.sa_handler = on_stop_signal;	/* no SA_RESTART: interrupts blocking calls */
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = NULL;
	sa.sa_sigaction = on_sigpipe;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGPIPE, &sa, NULL);
	/* inherited as ignored, children would be reaped before we saw them */
	signal(SIGCHLD, SIG_DFL);
}

uint64_t runner_default_warmup(uint64_t count)
{
	uint64_t w = count / 20;

	return w < 1 ? 1 : w > 10000 ? 10000 : w;
}

/* ---- the parent ------------------------------------------------------------ */



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
		/* the parent decides how a signalled run ends (a terminal sends
		 * its INT, HUP and QUIT to the whole group); TERM and KILL stop
		 * a child */
		signal(SIGINT, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
		signal(SIGPIPE, SIG_IGN);
		signal(SIGTERM, SIG_DFL);
		_exit(runner_side_run(&rs->args[i]) ? 1 : 0);
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
		a->ch = &rs->chs[0];
		a->chs = rs->chs;
		a->nch = rs->nch;
		a->role = i == 0 ? TP_SERVER : TP_CLIENT;
		a->id = i == 0 ? 0 : i - 1;
		a->st = &rs->ctl->sides[i];
		a->st->role = a->role;
		a->st->id = a->id;
		if (!cell_side_local(rs->cell, i))
			continue;
		if (rs->cell->threads) {
			ret = -pthread_create(&rs->threads[i], NULL, runner_side_thread, a);
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
	runner_wake_all(&rs->ctl->gate);
	for (unsigned i = 0; i < rs->nsides; i++) {
		if (!rs->started[i])
			continue;
		if (rs->cell->threads)
			pthread_kill(rs->threads[i], SIGUSR1);
		else if (rs->pids[i] > 0)
			kill(rs->pids[i], kill_now ? SIGKILL : SIGUSR1);
	}
}


/* Join side i's thread by the deadline (0, or -ETIMEDOUT). A stop signal
 * that lands after the side last looked at the stop flag, but before it
 * entered a blocking call, interrupts nothing: while a stop is asked for,
 * the signal is sent again every 10 ms until the thread is gone. */
static int join_thread(struct run_state *rs, unsigned i, uint64_t deadline)
{
	for (;;) {
		uint64_t t = now_ns() + 10 * NSEC_PER_MSEC;
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 10 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		if (pthread_timedjoin_np(rs->threads[i], NULL, &ts) == 0)
			return 0;
		if (t > deadline)
			return -ETIMEDOUT;
		if (atomic_load(&rs->ctl->stop))
			pthread_kill(rs->threads[i], SIGUSR1);
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
			if (join_thread(rs, i, deadline)) {
				/* a thread stuck in a call that ignores signals: give up on it */
				fprintf(stderr, "ipclab: an endpoint thread did not stop; exiting\n");
				cleanup_all();
				_exit(1);
			}
		} else if (rs->pids[i] > 0) {
			int status, w;
			unsigned polls = 0;

			while (!(w = runner_child_wait(rs->pids[i], &status))) {
				if (now_ns() > deadline)
					kill(rs->pids[i], SIGKILL);
				else if (++polls % 10 == 0 && atomic_load(&rs->ctl->stop))
					kill(rs->pids[i], SIGUSR1);	/* see join_thread */
				usleep(1000);
			}
			runner_reap_child(rs, i, w > 0 ? &status : NULL);
		}
		rs->started[i] = false;
	}
}

/* --trace (and =events: the timeline names the cell and its marks). */
static int trace_setup(struct run_state *rs, const struct cell *c)
{
	struct trace_target tt = { .nsides = rs->nsides, .syscalls = c->trace_syscalls,
				   .events = c->trace_events };
	char err[ERRLEN] = "", name[192];
	int ret;

	profile_cell_name(c, name, sizeof(name));
	tt.name = name;
	tt.round_trips = c->pat && c->pat->lat_kind == LAT_RTT;
	tt.paced = c->rate > 0;
	tt.mark_name = c->pat && c->pat->mark_name ? c->pat->mark_name :
		       c->pat && c->pat->lat_kind == LAT_RTT ? "round trip" :
							       "one-way (sampled)";
	if ((ret = trace_open(&tt, &rs->trace, err, sizeof(err))))
		return errf(rs->fail, sizeof(rs->fail), -ret, "%s", err);
	rs->ctl->trace = rs->trace;
	return 0;
}

#define ALIGN64(n) (((n) + 63) / 64 * 64)	/* a cache line's multiple */

/* The shared record: the run's control, every side's record and after
 * them, for each side, the pattern's own record (side_stats.pat), its
 * latency histogram where the pattern measures latency (side_stats.hist)
 * and a paced cell's views (side_stats.paced), mapped before any side
 * starts, so that every process sees them at one address. */
static int map_shared(struct run_state *rs, const struct cell *c)
{
	size_t own = c->pat ? ALIGN64(c->pat->side_size) : 0;
	size_t hist = c->pat && c->pat->lat_kind != LAT_NONE ? ALIGN64(sizeof(struct hist)) : 0;
	size_t paced = c->rate > 0 ? ALIGN64(sizeof(struct side_paced)) : 0;
	size_t each = own + hist + paced;
	size_t recs = ALIGN64(sizeof(struct run_ctl) + rs->nsides * sizeof(struct side_stats));
	char *base;

	rs->ctl_size = recs + rs->nsides * each;
	rs->ctl = mmap(NULL, rs->ctl_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (rs->ctl == MAP_FAILED) {
		rs->ctl = NULL;
		return errf(rs->fail, sizeof(rs->fail), ENOMEM, "cannot map shared state: %s",
			    strerror(errno));
	}
	base = (char *)rs->ctl + recs;
	for (unsigned i = 0; i < rs->nsides; i++) {
		char *mine = base + i * each;
		struct side_stats *st = &rs->ctl->sides[i];

		st->pat = own ? mine : NULL;
		st->hist = hist ? (struct hist *)(mine + own) : NULL;
		st->paced = paced ? (struct side_paced *)(mine + own + hist) : NULL;
		if (st->hist)
			hist_init(st->hist);
	}
	return 0;
}

/* Before any side starts: the shared record, --trace and --profile, the
 * configuration and every channel (a step each, in the order they are
 * undone); 0, 1 when the transport cannot run here (skipped), or -errno. */
static int setup(struct run_state *rs, const struct cell *c, struct result *res)
{
	char err[ERRLEN] = "";
	int ret;

	rs->cell = c;
	rs->nsides = 1 + c->clients;
	rs->nlocal = 0;
	for (unsigned i = 0; i < rs->nsides; i++)
		rs->nlocal += cell_side_local(c, i);
	if ((ret = map_shared(rs, c)))
		return ret;
	rs->ctl->nsides = rs->nlocal;
	rs->ctl->helpers.n = keep_awake_tasks(rs->ctl->helpers.pid, rs->ctl->helpers.cpu,
					      INTF_MAX_HELPERS);
	atomic_store(&stop_word, &rs->ctl->stop);
	if (c->trace && (ret = trace_setup(rs, c)))
		return ret;
	if (c->profile && (ret = profile_open(rs->nsides, c->profile_dir, &rs->profile, err,
					      sizeof(err))))
		return errf(rs->fail, sizeof(rs->fail), -ret, "%s", err);
	/* a pattern with channels of its own: one client id on each */
	rs->nch = c->pat && c->pat->channels ? c->pat->channels(c) : 1;
	rs->cfg = (struct tp_config){ .msg_size = c->size,
				      .clients = c->pat && c->pat->channels ? 1 : c->clients,
				      .threads = c->threads, .opts = c->tp_opts,
				      .dir = cleanup_private_dir(), .stop = &rs->ctl->stop };
	if (!rs->cfg.dir)
		return errf(rs->fail, sizeof(rs->fail), errno, "cannot make a private directory: %s",
			    strerror(errno));
	rs->chs = calloc(rs->nch ? rs->nch : 1, sizeof(*rs->chs));
	if (!rs->chs)
		return errf(rs->fail, sizeof(rs->fail), ENOMEM, "out of memory");
	for (unsigned i = 0; i < rs->nch; i++)
		rs->chs[i] = (struct tp_channel){ .cfg = &rs->cfg };
	if (c->tp->probe && (ret = c->tp->probe(&rs->cfg, err, sizeof(err)))) {
		res->status = RES_SKIPPED;
		snprintf(res->reason, sizeof(res->reason), "%s", err);
		return 1;
	}
	for (unsigned i = 0; i < rs->nch; i++) {
		rs->chs[i].tp = c->tp;
		rs->nch_made = i + 1;
		ret = c->tp->create(&rs->chs[i], err, sizeof(err));
		if (i == 0)
			res->settings = rs->chs[0].settings;
		if (ret)
			return errf(rs->fail, sizeof(rs->fail), -ret, "%s%s",
				    err[0] ? err : strerror(-ret),
				    (ret == -EMFILE || ret == -ENFILE) && !strstr(err, "ulimit") ?
				    " (out of file descriptors: raise the open-file limit, ulimit -n)" : "");
	}
	if (c->remote && c->remote->created &&
	    (ret = c->remote->created(c, &rs->chs[0], err, sizeof(err))))
		return errf(rs->fail, sizeof(rs->fail), -ret, "%s", err);
	return 0;
}

static int execute(struct run_state *rs)
{
	int ret;

	rs->start_ns = now_ns();
	ret = start_sides(rs);

	if (!ret)
		ret = runner_watch_until(rs, &rs->ctl->ready, rs->nlocal);
	for (unsigned i = 0; !ret && rs->trace && i < rs->nsides; i++)
		ret = trace_add_tid(rs->trace, i, rs->ctl->sides[i].tid);
	for (unsigned i = 0; !ret && rs->profile && i < rs->nsides; i++) {
		char err[ERRLEN];

		if ((ret = profile_add_tid(rs->profile, i, rs->ctl->sides[i].pid,
					   rs->ctl->sides[i].tid, err, sizeof(err))))
			errf(rs->fail, sizeof(rs->fail), -ret, "%s", err);
	}
	if (!ret) {
		atomic_store(&rs->ctl->gate, 1);
		runner_wake_all(&rs->ctl->gate);
		ret = runner_watch_until(rs, &rs->ctl->done, rs->nlocal);
	}
	if (ret)
		stop_sides(rs, !rs->cell->threads && ret != -EINTR ? true : false);
	if (ret == -EINTR && !rs->cell->threads)
		stop_sides(rs, true);
	finish_sides(rs);
	if (!ret)
		runner_check_sides(rs);
	return ret == -EINTR ? -EINTR : rs->fail[0] ? -EIO : 0;
}

static int run_once(const struct cell *c, struct result *res)
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
	for (unsigned i = 0; c->tp && i < rs->nch_made; i++)
		c->tp->destroy(&rs->chs[i]);
	free(rs->chs);
	if (ret == 0 && c->remote && c->remote->sides_done &&
	    c->remote->sides_done(c, rs->ctl->sides, rs->nsides, rs->fail, sizeof(rs->fail)))
		ret = -EIO;
	if (ret == 0) {
		struct run_ctl_view v = { .sides = rs->ctl->sides, .nsides = rs->nsides,
					  .sys0 = &rs->ctl->sys0, .sys1 = &rs->ctl->sys1,
					  .helpers = &rs->ctl->helpers };

		runner_collect(&v, res);
		if (rs->trace)
			trace_fill(rs->trace, res);
		if (c->pat && c->pat->collect_trace)
			c->pat->collect_trace(res);
		for (unsigned i = 0; rs->profile && i < rs->nsides; i++)
			profile_window(rs->profile, i, rs->ctl->sides[i].win_start_ns,
				       rs->ctl->sides[i].win_end_ns);
		if (rs->profile)
			profile_fill(rs->profile, res);
	} else if (ret < 0) {
		res->status = RES_FAILED;
		snprintf(res->reason, sizeof(res->reason), "%s",
			 rs->fail[0] ? rs->fail : ret == -EINTR ? "interrupted" : strerror(-ret));
	}
	trace_close(rs->trace);
	profile_close(rs->profile);
	if (rs->ctl) {
		atomic_store(&stop_word, NULL);
		munmap(rs->ctl, rs->ctl_size);
	}
	free(rs);
	return ret == -EINTR ? -EINTR : 0;
}

int run_cell(const struct cell *c, struct result *res)
{
	if (c->remote && c->remote->run)
		return c->remote->run(c, res, run_once);
	return c->trace || c->profile ? trace_run_pair(c, res, run_once) : run_once(c, res);
}
