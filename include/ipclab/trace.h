/* SPDX-License-Identifier: MIT */
/* --trace: where each endpoint's time goes, from the kernel scheduler's own
 * events (src/trace/). The runner is the only caller: it opens a trace
 * before the sides start, names their threads once they are up, the sides
 * mark their own measured window (a store, no syscall), and after the cell
 * the runner collects a plain record the reporters print. Patterns and
 * transports know nothing of it. */
#ifndef IPCLAB_TRACE_H
#define IPCLAB_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TRACE_MAX_SIDES 65	/* = MAX_SIDES */
#define TRACE_TOP_SYSCALLS 3
#define TRACE_TOP_TAKERS 5
#define TRACE_COMM_MAX 15	/* a task's name, as the kernel keeps it */

struct trace;
struct trace_events;

struct trace_target {
	unsigned nsides;		/* side 0 is the server, 1.. the clients */
	bool syscalls;			/* also probe every syscall's entry and exit
					 * (exact kernel time, counts, top 3; costs
					 * ~350 ns a syscall here, docs/trace.md) */
	unsigned syscall_slots;		/* (side, syscall) pairs kept; 0 = 4096 */
	struct trace_events *events;	/* --trace=events: the timeline file, else NULL */
	const char *name;		/* the cell, as the timeline names its process */
	const char *mark_name;		/* what a message mark is ("round trip", ...) */
	bool round_trips;		/* a mark is a round trip (the pattern's lat_kind) */
	bool paced;			/* the client sends at --rate: what it does between
					 * two round trips is never on their path */
	int hide_tid;			/* tests: every probe drops the events in this
					 * task's context, as a kernel that keeps a
					 * task out of tracing does; 0 none */
};

/* A side's getrusage over its window: without syscall probes, running
 * time is split into user and kernel in getrusage's proportion. */
struct trace_rusage {
	uint64_t user_ns, sys_ns;
};

struct trace_syscall {
	char name[24];			/* "read", or "sys_N" */
	uint64_t count, cpu_ns, wall_ns;	/* wall: entry to exit, sleep included */
};

/* Another task that ran on the CPU a side was runnable on, while the side
 * waited for it: the machine's share, named. */
struct trace_taker {
	char comm[TRACE_COMM_MAX + 1];	/* printable ASCII only, '?' for the rest */
	uint32_t pid, tid;		/* its process and thread */
	uint64_t ns, count;		/* the time it took, in that many slices */
};

struct trace_side {
	bool server;
	unsigned id;
	/* the partition of the side's window: user + sys + runnable +
	 * preempted + sleep = wall */
	uint64_t wall_ns, user_ns, sys_ns, runnable_ns, preempted_ns, sleep_ns;
	/* runnable_ns by how each wakeup ended (parts of it): woken by a timer's
	 * expiry (its lateness), or else switched in on a CPU that was idle (the
	 * IPI and idle exit), that ran another task (waiting for a CPU), or
	 * another endpoint */
	uint64_t woken_idle_ns, woken_other_ns, woken_side_ns, woken_timer_ns;
	uint64_t timer_wakeups;
	uint64_t vol_cs, invol_cs;
	uint64_t wakeups, wakeups_same_cpu, wakes_sent;
	uint64_t wakeups_raced;	/* woken on another CPU while it switched out (recovered) */
	uint64_t migrations, syscalls;
	uint64_t lat_count, lat_min_ns, lat_p50_ns, lat_p99_ns, lat_max_ns;
	uint64_t cpus;			/* bit per CPU it ran on */
	unsigned ntop;
	struct trace_syscall top[TRACE_TOP_SYSCALLS];	/* by CPU time */
	/* others on its CPU while it waited (part of runnable + preempted; of
	 * it, taken_woken_ns after a wakeup), the top takers by time; and the
	 * interrupt handlers and softirqs that ran while it was on its CPU
	 * (part of user + sys) */
	uint64_t taken_ns, taken_woken_ns, irq_ns, softirq_ns;
	/* of its running time, polling for the peer (the transport's or
	 * doorbell's own count, polling.h): waiting, not work */
	uint64_t poll_ns;
	unsigned ntakers;
	struct trace_taker takers[TRACE_TOP_TAKERS];
};

#define TRACE_CP_BINS 256
/* A round trip's parts on its critical path (struct trace_cpath's bins):
 * each side's running and woken time, and its woken time by how the
 * wakeups ended (from idle, waiting for a CPU) as measured wakeup by
 * wakeup: a wakeup's part can fall in the next exchange, so they are
 * bound by the woken time only when summed (trace_cp_bound). */
enum trace_cp_part { TCP_CLIENT_USER, TCP_CLIENT_KERNEL, TCP_CLIENT_WAKEUP, TCP_SERVER_USER,
		     TCP_SERVER_KERNEL, TCP_SERVER_WAKEUP, TCP_CLIENT_IDLE, TCP_CLIENT_CPU_WAIT,
		     TCP_SERVER_IDLE, TCP_SERVER_CPU_WAIT, TCP_PREEMPTED, TCP_ASLEEP, TCP_NPARTS };
/* The wakeups' parts of summed parts v, each side's bound by its woken
 * time: from idle into *idle, waiting for a CPU into *cpu_wait. */
void trace_cp_bound(const double *v, double *idle, double *cpu_wait);

/* The ping-pong round trip, per exchange, split along its critical path.
 * Paced (--rate), the client's sleep until its timer (the pacing gap) and
 * its wait to run after the timer's expiry (the timer's lateness) are left
 * out of total, as they are of the measured round trip, and given beside. */
struct trace_cpath {
	double client_user_ns, client_kernel_ns, server_wakeup_ns,
	       server_user_ns, server_kernel_ns, client_wakeup_ns,
	       unattributed_ns, total_ns, measured_ns;
	double wakeup_idle_ns, wakeup_cpu_wait_ns;	/* parts of the two wakeups */
	double preempted_ns;				/* part of unattributed */
	double pacing_gap_ns, timer_late_ns;		/* left out of total */
	/* The same parts exchange by exchange, for the shares' intervals: bin
	 * i holds exchange i (up to TRACE_CP_BINS exchanges), or the sum of
	 * every TRACE_CP_BINS-th exchange from i; ns per bin, not per exchange */
	uint64_t exchanges;		/* exchanges in the bins */
	unsigned nbins;			/* bins holding one exchange or more */
	uint32_t bin_n[TRACE_CP_BINS];	/* exchanges in each */
	float bin[TRACE_CP_BINS][TCP_NPARTS];
	uint32_t bin_nmeas[TRACE_CP_BINS];	/* the client's own timings in each */
	float bin_meas[TRACE_CP_BINS];	/* ... their sum, ns */
};

/* The sides' time slice by slice of their window, for the intervals of the
 * splits without exchanges (stream, fan-in, cycle): the window cut into
 * `slices` slices of slice_ns in order (up to 4.3 s; a longer window's
 * slices each hold every 4.3 s-th part of it from theirs), each
 * interval's time in the slices it covers. Row i is side i (below
 * TRACE_SL_SIDES), row TRACE_SL_SIDES the clients (sides 1..) summed. ns
 * per slice, running time split into user and kernel as the side's whole
 * window was (getrusage's, without syscall probes). */
#define TRACE_SL_BINS 64
#define TRACE_SL_SIDES 4
enum trace_sl_part { TSL_USER, TSL_KERNEL, TSL_WOKEN, TSL_PREEMPTED, TSL_SLEEP, TSL_IDLE,
		     TSL_CPU_WAIT, TSL_TIMER, TSL_NPARTS };
struct trace_slices {
	double slice_ns;
	unsigned slices;		/* slices of the longest window, the last one partial */
	float bin[TRACE_SL_SIDES + 1][TRACE_SL_BINS][TSL_NPARTS];
};

/* --explain (src/trace/explain.c): the traced cell's largest cause, tested
 * by running the cell again with the one knob that should remove it,
 * interleaved with the cell as it was (B A B A B A), untraced both. */
struct trace_explain {
	bool on;			/* the cell was explained */
	const char *cause;		/* "cross-CPU wakeups", ...; "none" */
	const char *knob;		/* "--pin same", ...; NULL = none */
	double share_pct;		/* the cause's share of the figure (the cause split's;
					 * without one, % of the sides' windows) */
	bool applied;			/* the knob ran; else note says why not */
	const char *of;			/* the figure compared: "lat_p50_ns", "msgs_per_s" or,
					 * for timer lateness, "send_late_p50_ns" */
	double before, after;		/* medians over the pairs */
	double ratio, ratio_lo, ratio_hi;	/* after / before: the median, smallest, largest */
	unsigned pairs;
	bool confirmed;			/* every pair improved, by 5 % or more at the median */
	char note[160];
	/* each knob tried, in order (the caller's first where it named one,
	 * then the cause's; the fields above are the first's) */
	unsigned ntries;
	struct trace_explain_try {
		const char *knob;
		bool applied, confirmed;
		double before, after, ratio, ratio_lo, ratio_hi;
		unsigned pairs;
		char note[160];
	} tries[2];
};
#define TRACE_EXPLAIN_PAIRS 3
/* The cause split (trace_cause): the cell's headline figure, its time per
 * message / exchange / cycle, split into named shares that add up to it
 * (100 % +- 5; what the trace cannot place is `unattributed`), and one
 * sentence naming the largest and what would change it. The kinds are
 * stable: --explain picks its knob from the largest. */
enum trace_cause_kind {
	TC_USER,		/* "user work": running in user space */
	TC_KERNEL,		/* "kernel work": running in the kernel (syscalls) */
	TC_WAKEUP,		/* "wakeup latency": woken to running, the CPU handed
				 * over by the peer or by nothing else (the scheduler's
				 * own path, a cross-CPU wakeup's queueing) */
	TC_WAKEUP_IDLE,		/* "wakeup from idle": woken onto an idle CPU: its IPI
				 * and its exit from idle */
	TC_CPU_WAIT,		/* "waiting for a CPU": woken, its CPU held by another task */
	TC_PREEMPTED,		/* "preempted": runnable, its CPU taken while it ran */
	TC_PEER,		/* "waiting for the peer": asleep on the other side
				 * (stream: a full or an empty buffer; fan-in: the server
				 * serving others; cycle: the stages before) */
	TC_TIMER,		/* "timer lateness": a timer's wakeup came late */
	TC_UNATTRIBUTED,	/* "unattributed": the figure's time the trace did not place */
	TC_POLLING,		/* "polling": running, but spinning for the peer (the
				 * transport's own count): waiting, not work */
	TC_STEAL,		/* "the hypervisor (steal)": running as the guest saw it,
				 * its vCPU held by the host (/proc/stat steal on its CPUs) */
	TC_NKINDS
};

struct trace_share {
	enum trace_cause_kind kind;
	const char *name;		/* trace_cause_name(kind) */
	double ns, pct;			/* of the figure */
};

struct trace_cause {
	bool on;			/* split (a traced cell with a figure to split) */
	const char *of;			/* the figure: "rtt_mean_ns" (ping-pong, fan-in: per
					 * exchange), "ns_per_msg" (stream: the bottleneck's
					 * window per message), a periodic pattern's mean
					 * period (struct pattern.period_figure) */
	double total_ns;		/* that figure, per message / exchange / cycle */
	char whose[32];			/* "round trip", "receiver", "sender", "clients",
					 * a periodic pattern's period_name */
	unsigned nshares;		/* the shares, largest first, zero ones left out */
	struct trace_share shares[TC_NKINDS];
	enum trace_cause_kind largest;	/* = shares[0].kind */
	double largest_pct;
	double scale;			/* the parts onto the figure: 1, or below where they
					 * ran at once and exceeded it */
	double cross_cpu_frac;		/* of the endpoints' wakeups, those sent from
					 * another CPU (a knob: --pin same) */
	unsigned bottleneck;		/* stream: the side that sets the pace */
	bool bottleneck_sends;		/* ... is the sender */
	double other_wait_pct;		/* ... the other side asleep, % of its window */
	bool ci_on;			/* the shares have intervals (ping-pong, one client:
					 * a bootstrap over its exchanges; stream, fan-in,
					 * cycle: a block bootstrap over the window's slices) */
	struct trace_share_ci {
		double lo, hi;
	} ci[TC_NKINDS];		/* shares[i].pct's 95 % interval, % (ci_on) */
	uint64_t ci_exchanges;		/* ... drawn from so many exchanges (ping-pong) */
	uint64_t ci_slices;		/* ... or from so many slices of the window */
	bool decided;			/* the largest is the leading cause: its interval
					 * lies above every other share's (always, without
					 * intervals); else the sentence says none is */
	char sentence[320];		/* the largest share, and what would change it */
	/* fan-in: each client's round trip, from its own window per exchange */
	unsigned nclients;
	struct trace_client_path {
		unsigned id;
		double total_ns;	/* its window per exchange */
		double work_ns, wakeup_ns, preempted_ns;	/* its own: running, woken, preempted */
		double peer_ns;		/* asleep: waiting for the server */
	} clients[TRACE_MAX_SIDES - 1];
};

/* The share names, "user work", ... ("?" past TC_NKINDS). */
const char *trace_cause_name(enum trace_cause_kind k);
struct trace_result;
/* The cell's cause split, NULL when it has none (not traced, no figure). */
const struct trace_cause *trace_cause(const struct trace_result *tr);
/* For the runner, after the trace is collected: r->trace.cause. */
struct result;
void trace_cause_fill(struct result *r);
/* The shares' 95 % intervals: a percentile bootstrap over the round
 * trip's exchanges (their bins, struct trace_cpath), TRACE_CI_BOOT draws
 * from a fixed seed, each share of a draw a ratio of its sums; kinds
 * summed by group (group[kind] in 0..ngroups-1, -1: left out), in % of the
 * figure, into lo[] and hi[]. Fewer than TRACE_CI_MIN_EXCHANGES: 0-100.
 * -1 where the cell has no round trip's exchanges (another pattern, or a
 * record made without them). */
#define TRACE_CI_BOOT 2000
#define TRACE_CI_MIN_EXCHANGES 5
int trace_cause_boot(const struct result *r, const int group[TC_NKINDS], unsigned ngroups,
		     double *lo, double *hi);
/* lo lies above every hi[] but hi[self]: a stable leader. */
bool trace_ci_above(double lo, const double *hi, unsigned n, unsigned self);

struct trace_result {
	bool on;			/* the cell was traced */
	bool complete;			/* no event was lost */
	uint64_t lost_events;
	/* lost_events by kind: a side switched in while thought asleep, a
	 * (side, syscall) pair the syscall table had no room for, probe runs
	 * the kernel skipped for recursion, and a side switched in with no
	 * wakeup seen while a CPU ran what the probes do not see (the kernel
	 * kept a task out of tracing: its wakeups are invisible) */
	uint64_t lost_missed_wakeups, lost_syscalls, lost_recursion, lost_unseen_wakeups;
	uint64_t unseen_spans;		/* spans of a CPU the probes did not see, in the window */
	unsigned nsides;
	struct trace_side sides[TRACE_MAX_SIDES];
	struct {
		double ctx_switches, wakeups, migrations, syscalls, ipis, idle_exits;
	} per_msg;			/* all sides, per message (per exchange for RTT) */
	bool ipis_known;		/* the kernel has the IPI tracepoints */
	bool irqs_known;		/* ... and the irq and softirq ones */
	bool syscalls_traced;		/* sys_ns and syscalls from syscall probes; else
					 * sys_ns is getrusage's share, syscalls unknown */
	bool has_cpath;
	struct trace_cpath cpath;
	bool has_slices;
	struct trace_slices slices;
	struct trace_cause cause;	/* trace_cause() */
	double perturbation;		/* traced / untraced headline, the median of the
					 * pairs' ratios; 0 = not measured */
	const char *perturbation_of;	/* "lat_p50_ns" or "msgs_per_s" */
	double perturbation_lo, perturbation_hi;	/* the pairs' smallest, largest */
	unsigned perturbation_pairs;
	bool perturbation_separable;	/* every pair on the same side of 1 */
	struct trace_explain explain;	/* --explain */
	struct {
		bool on;		/* --trace=events wrote this cell's timeline */
		unsigned pid;		/* its process in the file */
		uint64_t recorded;	/* events the ring buffer delivered */
		uint64_t lost;		/* events it had no room for, or the store dropped */
		uint64_t written;	/* trace events written (slices, flows, marks) */
		uint64_t span_ns;	/* the span they cover, at the window's end */
		bool truncated;		/* the span holds fewer events than it should */
	} events;
};


/* What --explain would test: the cause with the most time in the trace
 * and the knob that should remove it. */
enum explain_cause { EX_NONE, EX_OTHERS, EX_CROSS_CPU, EX_IDLE_EXIT, EX_PEER_CPU, EX_TIMER_LATE,
		     EX_POLLING, EX_STEAL, EX_NCAUSES };

/* The knobs, and the one table from a cause to them (trace_knobs_for,
 * src/trace/knobs.c; docs/trace.md, "The right knob"). A knob ipclab can
 * turn has its option (`arg`) and --explain can run it; the others are
 * advice (`says`) only. */
enum trace_knob { TK_NONE, TK_PIN_SAME, TK_PIN_SPLIT, TK_SCHED_FIFO, TK_KEEP_AWAKE, TK_PM_QOS,
		  TK_SLEEPING_WAIT, TK_TIMER_SLACK, TK_FREE_CPU, TK_OTHER_HOST, TK_NKNOBS };
struct trace_knob_info {
	enum trace_knob knob;
	const char *arg;		/* "--pin same"; NULL: not a knob ipclab can turn */
	const char *says;		/* "both ends on one CPU (--pin same)" */
};
const struct trace_knob_info *trace_knob_info(enum trace_knob k);
/* A knob by its option ("--pin same", "--sched fifo:10", "--keep-awake",
 * "--pm-qos 0", "--pin split"); TK_NONE when none. */
enum trace_knob trace_knob_parse(const char *arg);
/* The knobs for @cause, best first, those the cell @c already has left
 * out (c NULL: none left out), at most max into out; their count. */
struct cell;
unsigned trace_knobs_for(enum explain_cause cause, const struct cell *c, enum trace_knob *out,
			 unsigned max);
/* The cause a share of the split stands for (own_cpus: the endpoints each
 * have a CPU of their own); EX_NONE for the figure's own work. */
enum explain_cause trace_share_cause(const struct trace_share *sh, const struct trace_cause *c,
				     const struct trace_result *tr, bool own_cpus);
/* A task's name as a reader should see it: ipclab's own --keep-awake loop
 * ("ipclab-awake") is "ipclab's keep-awake loop (pid N)", any other
 * "NAME (pid N)". */
void trace_taker_label(const struct trace_taker *t, char *buf, size_t len);
#define TRACE_AWAKE_COMM "ipclab-awake"	/* the keep-awake loops' name (idle.c) */
struct trace_pick {
	enum explain_cause cause;
	double ns;			/* its time over the sides' windows */
	double pct;			/* of their sum */
	/* from a cause split with intervals: the share picked, and a share of
	 * another cause a knob acts on whose interval reaches the pick's (the
	 * pick is then not stable: cause EX_NONE) */
	const struct trace_share *share, *rival;
	const struct trace_share_ci *ci, *rival_ci;	/* their intervals */
	uint64_t exchanges;		/* ... over so many exchanges, or slices of the window */
	bool slices;
};
struct trace_pick explain_pick(const struct trace_result *tr);
/* ... for endpoints that each have a CPU of their own (@own_cpus: --pin
 * split, or two different CPUs): they cannot wait for each other's CPU, so
 * what held theirs was someone else's, and a wakeup from the peer came from
 * the other CPU. */
struct trace_pick explain_pick_placed(const struct trace_result *tr, bool own_cpus);
const char *explain_cause_name(enum explain_cause c);

/* Untraced and traced runs of a traced cell, interleaved (U T U T U T). */
#define TRACE_PAIRS 3
#define TRACE_COST_MAX 64	/* most pair ratios trace_perturbation folds */

/* Can --trace work here (built with libbpf, kernel BTF, privilege)? 0, or
 * -errno with one line naming what is missing and the fix. */
int trace_check(char *err, size_t len);

/* Load and attach the probes; nothing is counted until a side marks its
 * window. 0 or -errno (err filled). */
int trace_open(const struct trace_target *tt, struct trace **out, char *err, size_t len);
/* The runner, once side i's thread exists: its thread id. */
int trace_add_tid(struct trace *t, unsigned side, int tid);
/* Side i itself, with the clock reading that starts / ends its window. */
void trace_mark(struct trace *t, unsigned side, bool end, uint64_t ns);
/* After the sides are gone: the record. msgs is the cell's message (or
 * exchange) count; rtt_mean_ns the measured mean round trip, 0 if none;
 * ru each side's getrusage (NULL: none). */
void trace_collect(struct trace *t, uint64_t msgs, double rtt_mean_ns,
		   const struct trace_rusage *ru, struct trace_result *out);
void trace_close(struct trace *t);
/* A task's name from the kernel (n bytes, maybe unterminated) made safe to
 * print anywhere: at most TRACE_COMM_MAX bytes, printable ASCII, the rest
 * '?'; dst always terminated. */
void trace_comm_clean(char *dst, size_t len, const char *src, size_t n);
/* The cost of tracing: each pair's traced headline against its untraced
 * run just before (RTT: p50 traced / untraced; otherwise msgs/s untraced /
 * traced, so that above 1 means slower when traced); @n pairs' ratios in
 * @ratio: their median, spread and whether every pair agrees on the side
 * of 1 (else the cost is not separable from the machine's run-to-run
 * noise). */
void trace_perturbation(struct trace_result *tr, const double *ratio, unsigned n);
/* The same measured cost into a profile record. */
struct profile_result;
void profile_cost_from(struct profile_result *pr, const double *ratio, unsigned n);

/* --trace=events (src/trace/events*.c): each traced cell's scheduler view
 * as Chrome trace-event JSON (ui.perfetto.dev, chrome://tracing load it),
 * a process per cell, written into f (the caller opens and commits it):
 * per endpoint thread its running, runnable and sleeping slices, wakeups as
 * flow arrows from waker to wakee, migrations, the pattern's message marks,
 * over the last span_ns of the window or its last max_events events. */
struct trace_events_opts {
	uint64_t span_ns;		/* 0: by max_events */
	uint64_t max_events;		/* 0: by span_ns */
};
#define TRACE_EVENTS_SPAN_NS (50 * 1000 * 1000ull)
#define TRACE_EVENTS_MAX 4000000ull
int trace_events_begin(FILE *f, const struct trace_events_opts *o, struct trace_events **out);
/* The end of the file (ev freed); 0, or -EIO when writing failed. */
int trace_events_end(struct trace_events *ev);
/* Side i, for each message it timed: [t0, t1] as a mark on its timeline
 * (CLOCK_MONOTONIC ns); nothing unless the cell records events. */
void trace_msg_mark(struct trace *t, unsigned side, uint64_t t0, uint64_t t1);
bool trace_marks_on(const struct trace *t);
/* Side i's time so far that other tasks ran on the CPU it waited for (the
 * machine's share, live, read by the side itself): true, or false where
 * t is NULL or cannot tell. */
bool trace_lost_ns(const struct trace *t, unsigned side, uint64_t *ns);

/* For the runner (src/trace/cell.c): the record from a collected result.
 * The drivers that run a cell traced and untraced, and --explain's
 * reruns, are the engine's (src/core/traced.h). */
struct result;
void trace_fill(struct trace *t, struct result *res);

#endif
