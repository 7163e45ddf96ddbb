// SPDX-License-Identifier: MIT
/* The runner's watch over a running cell (runner_int.h): every side looked
 * at without blocking (a dead peer named, a stopped child reported), the
 * no-progress and --max-time watchdogs, the --vmstat tick and the progress
 * line, while it waits for the sides to reach the barrier or finish. */
#include <errno.h>
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipclab/cleanup.h"
#include "ipclab/runner.h"
#include "runner_int.h"

static runner_tick_fn tick_fn;
static runner_live_fn live_fn;

void runner_set_tick(runner_tick_fn fn)
{
	tick_fn = fn;
}

void runner_set_live(runner_live_fn fn)
{
	live_fn = fn;
}

const char *runner_side_name(const struct side_stats *st, char *buf, size_t len)
{
	snprintf(buf, len, "%s %u", st->role == TP_SERVER ? "server" : "client", st->id);
	return buf;
}

static void prefer_dead_peer(struct run_state *rs, unsigned failed);
static void prefer_own_error(struct run_state *rs, unsigned failed, uint64_t until);

/* A side that failed with EPIPE or ECONNRESET (its peer closed) may only
 * echo another's failure: a side that fails says so (SIDE_FAILED) before
 * it closes the ends its peers then find closed. The first such side with
 * an error of its own is the one to name (a wrong message, not the sender's
 * broken pipe); NULL when there is none (a peer that died is looked for
 * next). */
static const struct side_stats *failure_cause(const struct run_state *rs,
					      const struct side_stats *st)
{
	if (st->status != -EPIPE && st->status != -ECONNRESET)
		return NULL;
	for (unsigned j = 0; j < rs->nsides; j++) {
		const struct side_stats *o = &rs->ctl->sides[j];
		int state = atomic_load(&o->state);

		if (o != st && (state == SIDE_FAILED || state == SIDE_DONE) && o->status &&
		    o->status != -EPIPE && o->status != -ECONNRESET && o->status != -EINTR)
			return o;
	}
	return NULL;
}

/* rs->fail from failed side @st: its cause's error where it echoes one. */
static void name_failure(struct run_state *rs, const struct side_stats *st)
{
	const struct side_stats *cause = failure_cause(rs, st);

	if (!rs->fail[0] && cause)
		snprintf(rs->fail, sizeof(rs->fail), "%s", cause->err);
}

/* waitpid without blocking: 1 reaped (*status set), 0 still running, -1
 * gone without a status (reaped elsewhere: *status is not touched). */
int runner_child_wait(pid_t pid, int *status)
{
	pid_t r;

	do
		r = waitpid(pid, status, WNOHANG);
	while (r < 0 && errno == EINTR);
	return r == pid ? 1 : r == 0 ? 0 : -1;
}

/* A child is gone: was it an orderly end? Fill rs->fail if not. status is
 * its wait status, or NULL where none could be had; then only its own
 * report in the control page says how it ended. */
bool runner_reap_child(struct run_state *rs, unsigned i, const int *wstatus)
{
	int status = wstatus ? *wstatus : 0;
	struct side_stats *st = &rs->ctl->sides[i];
	pid_t pid = rs->pids[i];	/* fork's: the child may die before storing its own */
	char who[32];

	cleanup_forget(rs->pid_handles[i]);
	rs->pids[i] = 0;
	if (atomic_load(&st->state) == SIDE_DONE && !st->status &&
	    (!wstatus || (WIFEXITED(status) && WEXITSTATUS(status) == 0)))
		return true;
	if (rs->fail[0])
		return false;
	if (atomic_load(&st->state) == SIDE_DONE && st->status) {
		/* its own error may be the echo of a peer's failure or death */
		name_failure(rs, st);
		if (!rs->fail[0] && !rs->in_prefer) {
			rs->in_prefer = true;
			prefer_dead_peer(rs, i);
			rs->in_prefer = false;
		}
		if (!rs->fail[0])
			snprintf(rs->fail, sizeof(rs->fail), "%s", st->err);
	} else if (!wstatus)
		snprintf(rs->fail, sizeof(rs->fail),
			 "%s (pid %d) died after %llu messages; its exit status was lost "
			 "(reaped by someone else)", runner_side_name(st, who, sizeof(who)), pid,
			 (unsigned long long)atomic_load(&st->progress));
	else if (WIFSIGNALED(status))
		snprintf(rs->fail, sizeof(rs->fail),
			 "%s (pid %d) died: killed by signal %d (%s) after %llu messages",
			 runner_side_name(st, who, sizeof(who)), pid, WTERMSIG(status),
			 strsignal(WTERMSIG(status)), (unsigned long long)atomic_load(&st->progress));
	else
		snprintf(rs->fail, sizeof(rs->fail), "%s (pid %d) died: exit status %d after %llu messages",
			 runner_side_name(st, who, sizeof(who)), pid,
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1,
			 (unsigned long long)atomic_load(&st->progress));
	return false;
}

/* A side failed: was it because a peer died? A dying process closes its
 * files before it can be reaped, so its survivor may see EOF or EPIPE first:
 * give the others a moment to become reapable, and name the dead one. */
static void prefer_dead_peer(struct run_state *rs, unsigned failed)
{
	uint64_t until = now_ns() + NSEC_PER_SEC;

	if (rs->cell->threads) {
		prefer_own_error(rs, failed, until);
		return;
	}
	do {
		for (unsigned j = 0; j < rs->nsides; j++) {
			int status;

			int w;

			if (j == failed || rs->pids[j] <= 0 || !(w = runner_child_wait(rs->pids[j], &status)))
				continue;
			if (!runner_reap_child(rs, j, w > 0 ? &status : NULL) && rs->fail[0])
				return;
		}
		usleep(5000);
	} while (now_ns() < until);
}

/* Threads: a side whose open failed closed its ends (in the transport's
 * open) before it could say that it failed, so its peer's EPIPE or
 * ECONNRESET may come first (dbus under ulimit -n: the client's dup fails,
 * the server's handshake is reset). Give the others until @until, or until
 * all are done, to say so: the first with an error of its own is named;
 * with none, the echo stands. */
static void prefer_own_error(struct run_state *rs, unsigned failed, uint64_t until)
{
	const struct side_stats *st = &rs->ctl->sides[failed];
	bool others_done = false;

	if (st->status != -EPIPE && st->status != -ECONNRESET)
		return;
	while (!rs->fail[0] && !others_done && now_ns() < until) {
		others_done = true;
		for (unsigned j = 0; j < rs->nsides; j++)
			if (j != failed && atomic_load(&rs->ctl->sides[j].state) != SIDE_DONE)
				others_done = false;
		name_failure(rs, st);
		if (!rs->fail[0] && !others_done)
			usleep(2000);
	}
}

/* Non-blocking check of every side; false once something failed. */
bool runner_check_sides(struct run_state *rs)
{
	for (unsigned i = 0; i < rs->nsides; i++) {
		struct side_stats *st = &rs->ctl->sides[i];
		int status, w;

		if (!rs->cell->threads && rs->pids[i] > 0 && (w = runner_child_wait(rs->pids[i], &status)) &&
		    !runner_reap_child(rs, i, w > 0 ? &status : NULL))
			return false;
		if (atomic_load(&st->state) == SIDE_DONE && st->status) {
			name_failure(rs, st);
			if (!rs->fail[0] && !rs->in_prefer) {
				rs->in_prefer = true;
				prefer_dead_peer(rs, i);
				rs->in_prefer = false;
			}
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
				 runner_side_name(&rs->ctl->sides[i], who, sizeof(who)), rs->pids[i],
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

/* rs->fail: the message, each side's progress, then the fix. */
static void describe_watchdog(struct run_state *rs, const char *what, const char *fix)
{
	size_t off = (size_t)snprintf(rs->fail, sizeof(rs->fail), "%s;", what);
	char who[32];

	for (unsigned i = 0; i < rs->nsides && off < sizeof(rs->fail); i++)
		off += (size_t)snprintf(rs->fail + off, sizeof(rs->fail) - off, " %s at %llu",
					runner_side_name(&rs->ctl->sides[i], who, sizeof(who)),
					(unsigned long long)atomic_load(&rs->ctl->sides[i].progress));
	if (off < sizeof(rs->fail))
		snprintf(rs->fail + off, sizeof(rs->fail) - off, " (%s)", fix);
}

static void describe_stall(struct run_state *rs, uint64_t idle_ns)
{
	char what[96];

	snprintf(what, sizeof(what), "stalled: no message moved for %.1f s", (double)idle_ns / 1e9);
	describe_watchdog(rs, what, "raise --timeout if this is expected");
}

static void describe_overrun(struct run_state *rs, uint64_t ran_ns)
{
	char what[96];

	snprintf(what, sizeof(what), "ran %.1f s, longer than --max-time %.1f s (messages so far)",
		 (double)ran_ns / 1e9, (double)rs->cell->max_time_ns / 1e9);
	describe_watchdog(rs, what, "raise --max-time, or 0 for no limit");
}

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

/* Wait until `word` reaches `want` while watching the sides. */
int runner_watch_until(struct run_state *rs, _Atomic uint32_t *word, uint32_t want)
{
	uint64_t last = total_progress(rs), last_t = now_ns();

	for (;;) {
		uint32_t v = atomic_load(word);

		if (v >= want)
			return 0;
		if (runner_interrupted)
			return -EINTR;
		if (!runner_check_sides(rs))
			return -EIO;
		uint64_t p = total_progress(rs), t = now_ns();

		vmstat_tick(rs, t);
		if (live_fn && t - rs->last_live >= NSEC_PER_SEC) {
			rs->last_live = t;
			live_fn(rs->cell, rs->ctl->sides, rs->nsides, t - rs->start_ns);
		}
		if (!check_stopped(rs, t))
			return -EIO;
		if (p != last) {
			last = p;
			last_t = t;
		} else if (rs->cell->timeout_ns && t - last_t > rs->cell->timeout_ns) {
			describe_stall(rs, t - last_t);
			return -ETIMEDOUT;
		}
		if (rs->cell->max_time_ns && t - rs->start_ns > rs->cell->max_time_ns) {
			describe_overrun(rs, t - rs->start_ns);
			return -ETIMEDOUT;
		}
		runner_futex(word, FUTEX_WAIT, v, 20 * NSEC_PER_MSEC);
	}
}
