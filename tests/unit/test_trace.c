// SPDX-License-Identifier: MIT
/* The tracer on its own (src/trace/, no runner): a pipe ping-pong between
 * two processes pinned to one CPU, each marking its window as the runner's
 * sides do, checked against what getrusage and the clock say; a side that
 * spins without a syscall; a syscall table made too small; an unprivileged
 * caller. Behaviour only, never speed. Exit 0 pass, 1 fail, 77 skip. */
#include <errno.h>
#include <grp.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipclab/metrics.h"
#include "ipclab/result.h"
#include "ipclab/trace.h"
#include "ipclab/util.h"

#define EXCHANGES 20000
#define WARMUP 2000

static int failures;

#define CHECK(cond, ...)                                                \
	do {                                                            \
		if (!(cond)) {                                          \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);     \
			printf(__VA_ARGS__);                            \
			printf("\n");                                   \
			failures++;                                     \
		}                                                       \
	} while (0)

struct shared {
	struct rusage_snap ru[2];
	uint64_t rtt_sum_ns;
	bool batch;
};

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void xread(int fd, void *b, size_t n)
{
	if (read(fd, b, n) != (ssize_t)n)
		_exit(3);
}

static void xwrite(int fd, const void *b, size_t n)
{
	if (write(fd, b, n) != (ssize_t)n)
		_exit(3);
}

/* One side of the ping-pong: side 0 answers, side 1 asks and times. */
static void pp_side(struct trace *t, struct shared *sh, unsigned side, int go, int rfd, int wfd)
{
	char buf[64] = "", c;
	struct rusage_snap r0, r1;
	uint64_t rtt = 0;
	struct sched_param sp = { 0 };

	pin(0);
	/* SCHED_BATCH: a woken side does not preempt its waker, so each
	 * exchange is exactly two sleeps and two wakeups */
	if (sh->batch)
		sched_setscheduler(0, SCHED_BATCH, &sp);
	xread(go, &c, 1);
	for (int k = 0; k < WARMUP + EXCHANGES; k++) {
		if (k == WARMUP) {
			rusage_snap_take(&r0, true);
			trace_mark(t, side, false, now_ns());
		}
		if (side == 1) {
			uint64_t t0 = now_ns();

			xwrite(wfd, buf, sizeof(buf));
			xread(rfd, buf, sizeof(buf));
			if (k >= WARMUP)
				rtt += now_ns() - t0;
		} else {
			xread(rfd, buf, sizeof(buf));
			xwrite(wfd, buf, sizeof(buf));
		}
	}
	trace_mark(t, side, true, now_ns());
	rusage_snap_take(&r1, true);
	rusage_snap_diff(&sh->ru[side], &r0, &r1);
	if (side == 1)
		sh->rtt_sum_ns = rtt;
	_exit(0);
}

static int wait_all(pid_t *pids, unsigned n)
{
	int bad = 0;

	for (unsigned i = 0; i < n; i++) {
		int st;

		if (waitpid(pids[i], &st, 0) != pids[i] || !WIFEXITED(st) || WEXITSTATUS(st))
			bad++;
	}
	return bad;
}

/* Two processes, one CPU: the cell the issue calibrates on. */
static int run_pingpong(bool syscalls, unsigned slots, struct trace_result *r, struct shared *sh)
{
	struct trace_target tt = { .nsides = 2, .syscalls = syscalls, .syscall_slots = slots };
	struct trace_rusage ru[2];
	int req[2], rep[2], go[2];
	struct trace *t;
	char err[256];
	pid_t pids[2];

	if (trace_open(&tt, &t, err, sizeof(err))) {
		printf("FAIL trace_open: %s\n", err);
		return -1;
	}
	if (pipe(req) || pipe(rep) || pipe(go))
		return -1;
	for (unsigned i = 0; i < 2; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			if (i == 0)
				pp_side(t, sh, 0, go[0], req[0], rep[1]);
			pp_side(t, sh, 1, go[0], rep[0], req[1]);
		}
		trace_add_tid(t, i, pids[i]);
	}
	xwrite(go[1], "gg", 2);
	if (wait_all(pids, 2))
		printf("FAIL a ping-pong side failed\n");
	for (unsigned i = 0; i < 2; i++)
		ru[i] = (struct trace_rusage){ sh->ru[i].user_ns, sh->ru[i].sys_ns };
	trace_collect(t, EXCHANGES, (double)sh->rtt_sum_ns / EXCHANGES, ru, r);
	trace_close(t);
	for (int k = 0; k < 2; k++) {
		close(req[k]);
		close(rep[k]);
		close(go[k]);
	}
	return 0;
}

static double rel(double a, double b)
{
	return b ? fabs(a - b) / b : (a ? INFINITY : 0);
}

static void check_partition(const struct trace_side *s, const char *what)
{
	uint64_t sum = s->user_ns + s->sys_ns + s->runnable_ns + s->preempted_ns + s->sleep_ns;

	CHECK(s->wall_ns > 0, "%s: no window", what);
	CHECK(rel((double)sum, (double)s->wall_ns) <= 0.05,
	      "%s: partition %llu ns vs window %llu ns", what, (unsigned long long)sum,
	      (unsigned long long)s->wall_ns);
}

static void test_pingpong(struct shared *sh, bool syscalls)
{
	struct trace_result *r = calloc(1, sizeof(*r));

	printf("ping-pong, syscall probes %s:\n", syscalls ? "on" : "off");
	sh->batch = true;
	if (!r || run_pingpong(syscalls, 0, r, sh)) {
		failures++;
		free(r);
		return;
	}
	CHECK(r->on && r->nsides == 2 && r->syscalls_traced == syscalls, "no trace");
	CHECK(syscalls ? fabs(r->per_msg.syscalls - 4) <= 0.1 : r->per_msg.syscalls == 0,
	      "syscalls/exchange %.3f", r->per_msg.syscalls);
	CHECK(r->complete && r->lost_events == 0, "lost %llu events", (unsigned long long)r->lost_events);
	CHECK(fabs(r->per_msg.ctx_switches - 2) <= 0.1, "cs/exchange %.3f", r->per_msg.ctx_switches);
	/* two on a quiet machine; fewer when a side was preempted before it
	 * slept (its peer's write then finds it runnable): every voluntary
	 * switch still ends with one wakeup */
	CHECK(r->per_msg.wakeups <= 2.1, "wakeups/exchange %.3f", r->per_msg.wakeups);
	for (unsigned i = 0; i < 2; i++)
		CHECK(rel((double)r->sides[i].wakeups, (double)r->sides[i].vol_cs) <= 0.05,
		      "side %u: %llu wakeups, %llu voluntary switches", i,
		      (unsigned long long)r->sides[i].wakeups, (unsigned long long)r->sides[i].vol_cs);
	CHECK(r->per_msg.migrations == 0, "migrations/exchange %.4f", r->per_msg.migrations);
	for (unsigned i = 0; i < 2; i++) {
		const struct trace_side *s = &r->sides[i];
		const struct rusage_snap *ru = &sh->ru[i];
		char what[16];

		snprintf(what, sizeof(what), "side %u", i);
		check_partition(s, what);
		CHECK(rel((double)s->vol_cs, (double)ru->vol_cs) <= 0.05,
		      "%s: voluntary switches %llu, getrusage %llu", what,
		      (unsigned long long)s->vol_cs, (unsigned long long)ru->vol_cs);
		CHECK(rel((double)(s->user_ns + s->sys_ns), (double)(ru->user_ns + ru->sys_ns)) <= 0.05,
		      "%s: CPU %llu ns, getrusage %llu ns", what,
		      (unsigned long long)(s->user_ns + s->sys_ns),
		      (unsigned long long)(ru->user_ns + ru->sys_ns));
		CHECK(s->lat_count > EXCHANGES / 2 && s->lat_p50_ns > 0 &&
		      s->lat_p50_ns <= s->lat_p99_ns && s->lat_p99_ns <= s->lat_max_ns,
		      "%s: wakeup latency n %llu p50 %llu p99 %llu max %llu", what,
		      (unsigned long long)s->lat_count, (unsigned long long)s->lat_p50_ns,
		      (unsigned long long)s->lat_p99_ns, (unsigned long long)s->lat_max_ns);
		printf("side %u: wall %llu user %llu sys %llu woken %llu preempted %llu sleep %llu; "
		       "vol %llu invol %llu wakeups %llu (same CPU %llu) sent %llu lat n %llu\n", i,
		       (unsigned long long)s->wall_ns, (unsigned long long)s->user_ns,
		       (unsigned long long)s->sys_ns, (unsigned long long)s->runnable_ns,
		       (unsigned long long)s->preempted_ns, (unsigned long long)s->sleep_ns,
		       (unsigned long long)s->vol_cs, (unsigned long long)s->invol_cs,
		       (unsigned long long)s->wakeups, (unsigned long long)s->wakeups_same_cpu,
		       (unsigned long long)s->wakes_sent, (unsigned long long)s->lat_count);
		CHECK(!syscalls || (s->ntop > 0 && (!strcmp(s->top[0].name, "read") ||
						    !strcmp(s->top[0].name, "write"))),
		      "%s: top syscall %s", what, s->ntop ? s->top[0].name : "(none)");
	}
	CHECK(r->has_cpath && rel(r->cpath.total_ns, r->cpath.measured_ns) <= 0.10,
	      "critical path %.0f ns vs measured RTT %.0f ns", r->cpath.total_ns, r->cpath.measured_ns);
	printf("pingpong: cs/x %.3f wake/x %.3f mig/x %.4f sys/x %.2f; server wake p50 %llu ns; "
	       "path %.0f of %.0f ns (c.user %.0f c.kern %.0f s.wake %.0f s.user %.0f s.kern %.0f "
	       "c.wake %.0f other %.0f)\n",
	       r->per_msg.ctx_switches, r->per_msg.wakeups, r->per_msg.migrations,
	       r->per_msg.syscalls, (unsigned long long)r->sides[0].lat_p50_ns, r->cpath.total_ns,
	       r->cpath.measured_ns, r->cpath.client_user_ns, r->cpath.client_kernel_ns,
	       r->cpath.server_wakeup_ns, r->cpath.server_user_ns, r->cpath.server_kernel_ns,
	       r->cpath.client_wakeup_ns, r->cpath.unattributed_ns);
	free(r);
}

/* A side that only computes (like the null transport's): it never sleeps. */
static void test_spinner(void)
{
	struct trace_target tt = { .nsides = 1 };
	struct trace_result *r = calloc(1, sizeof(*r));
	struct trace *t;
	char err[256], c;
	int go[2];
	pid_t pid;

	if (!r || pipe(go) || trace_open(&tt, &t, err, sizeof(err))) {
		printf("FAIL spinner set-up: %s\n", err);
		failures++;
		free(r);
		return;
	}
	pid = fork();
	if (pid == 0) {
		volatile uint64_t x = 1;
		uint64_t end;

		xread(go[0], &c, 1);
		trace_mark(t, 0, false, now_ns());
		end = now_ns() + 50 * 1000 * 1000;
		while (now_ns() < end)
			x *= 3;
		trace_mark(t, 0, true, now_ns());
		_exit(0);
	}
	trace_add_tid(t, 0, pid);
	xwrite(go[1], "g", 1);
	CHECK(!wait_all(&pid, 1), "spinner failed");
	trace_collect(t, 1, 0, NULL, r);
	trace_close(t);
	close(go[0]);
	close(go[1]);
	check_partition(&r->sides[0], "spinner");
	CHECK(r->sides[0].sleep_ns == 0 && r->sides[0].vol_cs == 0,
	      "spinner slept %llu ns, %llu voluntary switches",
	      (unsigned long long)r->sides[0].sleep_ns, (unsigned long long)r->sides[0].vol_cs);
	CHECK(!r->has_cpath, "a critical path without a client");
	free(r);
}

/* Room for one (side, syscall) pair: the rest is lost, and said so. */
static void test_lost(struct shared *sh)
{
	struct trace_result *r = calloc(1, sizeof(*r));

	sh->batch = false;
	if (!r || run_pingpong(true, 1, r, sh)) {
		failures++;
		free(r);
		return;
	}
	CHECK(r->lost_events > 0 && !r->complete, "tiny table: %llu lost, complete %d",
	      (unsigned long long)r->lost_events, r->complete);
	/* SCHED_OTHER: a woken side may preempt its waker, which then needs
	 * no wakeup; still, every voluntary switch ends with one */
	CHECK(fabs(r->per_msg.ctx_switches - 2) <= 0.1, "SCHED_OTHER: cs/exchange %.3f",
	      r->per_msg.ctx_switches);
	for (unsigned i = 0; i < 2; i++)
		CHECK(rel((double)r->sides[i].wakeups, (double)r->sides[i].vol_cs) <= 0.05,
		      "SCHED_OTHER side %u: %llu wakeups, %llu voluntary switches", i,
		      (unsigned long long)r->sides[i].wakeups, (unsigned long long)r->sides[i].vol_cs);
	free(r);
}

static void test_spinner_once(struct shared *sh, bool unused)
{
	(void)sh;
	(void)unused;
	test_spinner();
}

static void test_lost_syscalls(struct shared *sh, bool unused)
{
	(void)unused;
	test_lost(sh);
}

/* The checks compare two measurements of one run (the trace against
 * getrusage, the parts against the window, counts per exchange); a run
 * disturbed by the rest of a shared VM is repeated, up to three times, and
 * only the last attempt's failures count. */
static void attempts(void (*fn)(struct shared *, bool), struct shared *sh, bool arg)
{
	int before = failures;

	for (int i = 1; i <= 3; i++) {
		failures = before;
		fn(sh, arg);
		if (failures == before)
			return;
		printf("attempt %d disagreed\n", i);
	}
}

/* Without the capabilities: refused, with the fix in the one line. */
static void test_unprivileged(void)
{
	int fds[2], st;
	char msg[256] = "";
	pid_t pid;

	if (pipe(fds))
		return;
	pid = fork();
	if (pid == 0) {
		char err[256] = "";
		int ret;

		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(2);
		ret = trace_check(err, sizeof(err));
		xwrite(fds[1], err, strlen(err));
		_exit(ret == -EPERM ? 0 : 1);
	}
	close(fds[1]);
	if (read(fds[0], msg, sizeof(msg) - 1) < 0)
		msg[0] = 0;
	close(fds[0]);
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "as uid 65534: not refused (%s)", msg);
	CHECK(strstr(msg, "CAP_BPF") && strstr(msg, "root") && !strchr(msg, '\n'),
	      "refusal does not name the privilege and the fix: %s", msg);
}

/* The cause split of a result, without tracing: the shares of a made-up
 * trace add up to its figure whatever the parts, largest first, and are
 * read from the side they should be. */
static double share_sum(const struct trace_cause *c, double *ns)
{
	double pct = 0;

	*ns = 0;
	for (unsigned k = 0; k < c->nshares; k++) {
		pct += c->shares[k].pct;
		*ns += c->shares[k].ns;
		CHECK(!k || c->shares[k - 1].ns >= c->shares[k].ns, "share %u out of order", k);
		CHECK(!strcmp(c->shares[k].name, trace_cause_name(c->shares[k].kind)), "share name");
	}
	return pct;
}

static void fill_side(struct trace_side *s, uint64_t user, uint64_t sys, uint64_t woken,
		      uint64_t pre, uint64_t sleep)
{
	*s = (struct trace_side){ .user_ns = user, .sys_ns = sys, .runnable_ns = woken,
				  .preempted_ns = pre, .sleep_ns = sleep,
				  .wall_ns = user + sys + woken + pre + sleep };
}

static void test_cause_stream(struct result *r)
{
	const struct trace_cause *c;
	double ns, pct;

	memset(r, 0, sizeof(*r));
	strcpy(r->pattern, "stream");
	r->lat_kind = LAT_ONE_WAY;
	r->trace.on = true;
	r->trace.nsides = r->nsides = 2;
	r->msgs = 1000;
	r->elapsed_ns = 1000000;	/* 1 us a message */
	/* the receiver (server, c2s) busy, the sender asleep 60 % */
	fill_side(&r->trace.sides[0], 500000, 300000, 100000, 50000, 50000);
	fill_side(&r->trace.sides[1], 200000, 150000, 30000, 20000, 600000);
	r->trace.sides[0].woken_other_ns = 40000;
	trace_cause_fill(r);
	c = trace_cause(&r->trace);
	CHECK(c && !strcmp(c->of, "ns_per_msg"), "stream: no cause");
	if (!c)
		return;
	pct = share_sum(c, &ns);
	CHECK(fabs(pct - 100) < 0.01 && fabs(ns - 1000) < 0.1, "stream: shares %.2f %% %.1f ns", pct, ns);
	CHECK(!c->bottleneck_sends && c->bottleneck == 0, "stream: bottleneck %u", c->bottleneck);
	CHECK(c->largest == TC_USER && fabs(c->largest_pct - 50) < 0.01, "stream: largest %s %.1f",
	      trace_cause_name(c->largest), c->largest_pct);
	CHECK(fabs(c->other_wait_pct - 60) < 0.01, "stream: sender waited %.1f %%", c->other_wait_pct);
	CHECK(strstr(c->sentence, "user work") && strstr(c->sentence, "full buffer"),
	      "stream: sentence %s", c->sentence);
	r->trace.on = false;
	trace_cause_fill(r);
	CHECK(!trace_cause(&r->trace), "untraced: a cause");
}

/* Ping-pong: a path short of the measured round trip leaves the rest
 * unattributed; one over it is scaled down to it. */
static void test_cause_pingpong(struct result *r, double measured)
{
	struct trace_cpath *p = &r->trace.cpath;
	const struct trace_cause *c;
	double ns, pct;

	memset(r, 0, sizeof(*r));
	strcpy(r->pattern, "pingpong");
	r->lat_kind = LAT_RTT;
	r->trace.on = r->trace.has_cpath = true;
	r->trace.nsides = r->nsides = 2;
	*p = (struct trace_cpath){ .client_user_ns = 1000, .client_kernel_ns = 2000,
				   .server_wakeup_ns = 3000, .server_user_ns = 1000,
				   .server_kernel_ns = 2000, .client_wakeup_ns = 1000,
				   .wakeup_idle_ns = 2500, .unattributed_ns = 0, .total_ns = 10000,
				   .measured_ns = measured };
	trace_cause_fill(r);
	c = trace_cause(&r->trace);
	CHECK(c && !strcmp(c->of, "rtt_mean_ns"), "ping-pong: no cause");
	if (!c)
		return;
	pct = share_sum(c, &ns);
	CHECK(fabs(pct - 100) < 0.01 && fabs(ns - measured) < 0.1, "ping-pong %.0f: shares %.2f %% %.1f ns",
	      measured, pct, ns);
	CHECK(c->largest == TC_KERNEL, "ping-pong: largest %s", trace_cause_name(c->largest));
	CHECK(measured < 10000 ? fabs(c->scale - measured / 10000) < 1e-9 : c->scale == 1,
	      "ping-pong %.0f: scale %.3f", measured, c->scale);
	for (unsigned k = 0; k < c->nshares; k++)
		if (c->shares[k].kind == TC_UNATTRIBUTED)
			CHECK(measured > 10000 && fabs(c->shares[k].ns - (measured - 10000)) < 0.1,
			      "ping-pong %.0f: unattributed %.0f", measured, c->shares[k].ns);
}

static void test_cause_split(void)
{
	struct result *r = calloc(1, sizeof(*r));

	if (!r) {
		failures++;
		return;
	}
	test_cause_stream(r);
	test_cause_pingpong(r, 12000);
	test_cause_pingpong(r, 8000);
	free(r);
}

int main(void)
{
	struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char err[256];
	int ret = trace_check(err, sizeof(err));

	test_cause_split();
	if (ret) {
		printf("skip: %s%s\n", err, failures ? " (and the cause split FAILED)" : "");
		return failures ? 1 : 77;
	}
	if (sh == MAP_FAILED)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	attempts(test_pingpong, sh, false);
	attempts(test_pingpong, sh, true);
	attempts(test_spinner_once, sh, false);
	attempts(test_lost_syscalls, sh, true);
	test_unprivileged();
	printf("%s (%d failures)\n", failures ? "FAIL" : "ok", failures);
	return failures ? 1 : 0;
}
