// SPDX-License-Identifier: MIT
/* The tracer's blind spot: the kernel can keep a task out of tracing (no
 * probe runs in its context: its switches, nor the interrupts that hit it,
 * timer wakeups among them). A side whose timer fires while such a task
 * runs is switched in with no wakeup seen; that wakeup is unseen, not
 * missed, and counted apart among the lost events.
 *
 * Made so on purpose: three processes on CPU 0. H (SCHED_FIFO 2), kept out
 * of tracing by the tracer's test knob (trace_target.hide_tid), spins 1 ms,
 * wakes V and sleeps 0.5 ms; V (SCHED_FIFO 1) spins 30 us and waits for H
 * again; the traced side S (SCHED_OTHER) sleeps 300 us at a time. S's timer
 * fires while H spins about every second sleep: H's switch to V is not
 * seen, V's to S is, and S runs with no wakeup seen. Exit 0 pass, 1 fail,
 * 77 skip (no BPF, no root, no SCHED_FIFO). */
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ipclab/trace.h"
#include "ipclab/util.h"

#define SLEEPS 400

static void pin0(int policy, int prio)
{
	struct sched_param sp = { .sched_priority = prio };
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set) || sched_setscheduler(0, policy, &sp))
		_exit(3);
}

static void spin(uint64_t ns)
{
	uint64_t end = now_ns() + ns;

	while (now_ns() < end)
		;
}

static void wait_go(int go)
{
	char c;

	if (read(go, &c, 1) != 1)
		_exit(3);
}

/* H: the task out of tracing. */
static void hidden_task(int go, int hv)
{
	struct timespec half = { 0, 500 * 1000 };

	pin0(SCHED_FIFO, 2);
	wait_go(go);
	for (;;) {
		spin(1000 * 1000);
		if (write(hv, "h", 1) != 1)
			_exit(0);
		nanosleep(&half, NULL);
	}
}

/* V: what runs after H, so that the switch to S is one the probes see. */
static void visible_task(int go, int hv)
{
	char c;

	pin0(SCHED_FIFO, 1);
	wait_go(go);
	while (read(hv, &c, 1) == 1)
		spin(30 * 1000);
	_exit(0);
}

/* S: the traced side, woken by its timer only. */
static void side_task(struct trace *t, int go)
{
	struct timespec d = { 0, 300 * 1000 };

	pin0(SCHED_OTHER, 0);
	wait_go(go);
	trace_mark(t, 0, false, now_ns());
	for (int k = 0; k < SLEEPS; k++)
		nanosleep(&d, NULL);
	trace_mark(t, 0, true, now_ns());
	_exit(0);
}

static pid_t spawn(void (*fn)(int, int), int go, int hv)
{
	pid_t pid = fork();

	if (pid == 0)
		fn(go, hv);
	return pid;
}

static int check(const struct trace_result *r)
{
	int bad = 0;

	printf("unseen wakeups %llu, missed %llu, unseen spans %llu, lost %llu\n",
	       (unsigned long long)r->lost_unseen_wakeups, (unsigned long long)r->lost_missed_wakeups,
	       (unsigned long long)r->unseen_spans, (unsigned long long)r->lost_events);
	if (r->lost_missed_wakeups) {
		printf("FAIL: %llu wakeups called missed, all were unseen\n",
		       (unsigned long long)r->lost_missed_wakeups);
		bad++;
	}
	if (r->lost_unseen_wakeups < SLEEPS / 20 || !r->unseen_spans) {
		printf("FAIL: %llu unseen wakeups in %d sleeps, %llu unseen spans\n",
		       (unsigned long long)r->lost_unseen_wakeups, SLEEPS, (unsigned long long)r->unseen_spans);
		bad++;
	}
	if (r->lost_events != r->lost_missed_wakeups + r->lost_syscalls + r->lost_recursion +
	    r->lost_unseen_wakeups || r->complete) {
		printf("FAIL: lost %llu is not the sum of its kinds, or complete %d\n",
		       (unsigned long long)r->lost_events, r->complete);
		bad++;
	}
	return bad;
}

static int run(void)
{
	struct trace_target tt = { .nsides = 1 };
	struct trace_result *r = calloc(1, sizeof(*r));
	int go[2], hv[2], bad = 1, st;
	pid_t h, v, s = -1;
	struct trace *t;
	char err[256];

	if (!r || pipe(go) || pipe(hv))
		return 1;
	h = spawn(hidden_task, go[0], hv[1]);
	v = spawn(visible_task, go[0], hv[0]);
	tt.hide_tid = h;
	if (h > 0 && v > 0 && !trace_open(&tt, &t, err, sizeof(err))) {
		s = fork();
		if (s == 0)
			side_task(t, go[0]);
		trace_add_tid(t, 0, s);
		if (write(go[1], "ggg", 3) == 3 && waitpid(s, &st, 0) == s && WIFEXITED(st) &&
		    !WEXITSTATUS(st)) {
			trace_collect(t, SLEEPS, 0, NULL, r);
			bad = check(r);
		} else {
			printf("FAIL: the traced side failed (SCHED_FIFO refused?)\n");
		}
		trace_close(t);
	} else {
		printf("FAIL set-up: %s\n", h > 0 && v > 0 ? err : "fork");
	}
	if (s < 0)
		close(go[1]);	/* the helpers, still waiting, leave */
	if (h > 0)
		kill(h, SIGKILL);
	if (v > 0)
		kill(v, SIGKILL);
	if (h > 0)
		waitpid(h, NULL, 0);
	if (v > 0)
		waitpid(v, NULL, 0);
	free(r);
	return bad;
}

int main(void)
{
	char err[256];
	int bad = 0;

	if (trace_check(err, sizeof(err))) {
		printf("skip: %s\n", err);
		return 77;
	}
	if (sched_setscheduler(0, SCHED_FIFO, &(struct sched_param){ .sched_priority = 1 })) {
		printf("skip: SCHED_FIFO not allowed here\n");
		return 77;
	}
	sched_setscheduler(0, SCHED_OTHER, &(struct sched_param){ 0 });
	/* H and S on CPU 0 are all it takes: one run, no retries */
	bad = run();
	printf("%s\n", bad ? "FAIL" : "ok");
	return bad ? 1 : 0;
}
