/* SPDX-License-Identifier: MIT */
/* The experiment model: a cell (transport x pattern x placement x size and
 * the knobs), its placement (pin_spec, sched_spec), and a participant, one
 * side of a running cell with its shared-memory record (side_stats). The
 * planner (src/core/plan.c) makes cells, the runner runs them, patterns
 * drive participants (ipclab/pattern.h). */
#ifndef IPCLAB_EXPERIMENT_H
#define IPCLAB_EXPERIMENT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "ipclab/interference.h"
#include "ipclab/metrics.h"
#include "ipclab/transport.h"
#include "ipclab/util.h"

struct pattern;
struct cell_remote;

/* Where the endpoints run (--pin): parsed by pin_parse (core/placement.c). */
enum pin_mode { PIN_NONE, PIN_SAME, PIN_SPLIT, PIN_CPUS };
struct pin_spec {
	enum pin_mode mode;
	int server_cpu, client_cpu;	/* resolved CPUs (-1 = not pinned) */
	char text[32];
};

/* How they are scheduled (--sched): sched_parse. */
struct sched_spec {
	int policy;		/* SCHED_OTHER, SCHED_FIFO, SCHED_RR */
	int prio;
	char text[32];
};

struct trace_events;

#define PAT_CELL_MAX 64		/* bytes a pattern keeps in each of its cells */

/* One experiment: transport x pattern x placement x size. */
struct cell {
	const struct transport *tp;
	const void *tp_opts;
	const struct pattern *pat;
	const void *pat_opts;
	uint64_t size;		/* bytes per message, header included */
	uint64_t count;		/* measured messages (0 with duration) */
	uint64_t warmup;	/* messages before the window */
	uint64_t duration_ns;	/* measured window length instead of count */
	bool threads;		/* endpoints are threads */
	struct pin_spec pin;
	struct sched_spec sched;
	unsigned clients;
	bool verify;
	uint64_t timeout_ns;	/* watchdog: no progress for this long fails */
	uint64_t max_time_ns;	/* the whole cell may take this long (0 = no limit) */
	uint64_t think;		/* busy loop iterations per message byte, both sides */
	uint64_t think_ns;	/* or a calibrated busy time per message */
	uint64_t think_iters;	/* think_ns as loop iterations (calibrated) */
	double rate;		/* messages/s the client sends at (0 = as fast as it can) */
	int pm_qos_us;		/* /dev/cpu_dma_latency held at this (-1 = not touched) */
	bool keep_awake;	/* SCHED_IDLE spinners kept the endpoints' CPUs awake */
	bool trace;		/* --trace: scheduler events per side (src/trace/) */
	bool trace_syscalls;	/* --trace=syscalls: syscall probes too */
	bool explain;		/* --explain: the trace's cause tested (src/trace/explain.c) */
	const char *explain_first;	/* ... this knob tried first ("--pin same"; NULL none) */
	struct trace_events *trace_events;	/* --trace=events: the timeline, in the parent (NULL = none) */
	bool profile;		/* --profile: sampled stacks per side (src/trace/profile*.c) */
	const char *profile_dir;	/* --profile DIR: folded stacks there (NULL = none) */
	const struct cell_remote *remote;	/* --peer / serve: some sides run elsewhere (NULL = all here) */
	char rate_text[24];
	char skip[256];		/* not run here, and why ("" = run it) */
	char section[32];	/* suite section ("" = none) */
	/* the pattern's own values for this cell, set by its plan hook
	 * (ipclab/pattern.h); zero for a pattern without one */
	_Alignas(8) unsigned char pat_cell[PAT_CELL_MAX];
};

#define MAX_CLIENTS 64
#define MAX_SIDES (MAX_CLIENTS + 1)

/* --rate, each paced side's: *side_stats.hist counts from the actual send
 * (the IPC's own); intended from the intended send time (the open-loop
 * view of a round trip), late the send's lateness (intended -> actual). */
struct side_paced {
	struct hist intended, late;
};

/* One side's record, in memory shared by every side (processes or threads).
 * Written only by its own side; read by the runner after the side is done,
 * except `progress`, which the watchdog reads at any time. */
struct side_stats {
	enum tp_role role;
	unsigned id;
	int pid, tid, cpu;
	_Atomic uint64_t progress;	/* messages moved so far, warm-up included */
	_Atomic int state;		/* SIDE_* */
	uint64_t msgs, bytes;		/* inside the window */
	uint64_t win_start_ns, win_end_ns;
	struct rusage_snap ru;		/* over the window */
	uint64_t poll_ns;		/* of it, polling for the peer (polling.h) */
	uint64_t cpu_mask;		/* CPUs it may run on, a bit each (< 64) */
	struct sched_snap sched;	/* the scheduler's run and wait time over the window */
	bool sched_known;		/* sched was read (interference) */
	int status;			/* 0 or -errno */
	char err[ERRLEN];
	uint64_t lost, dups, reorders;	/* lossy transports only */
	uint32_t sample_every;		/* one-way latency: every Nth message */
	bool zerocopy;			/* received in place (peek/release) */
	bool serve_ready;		/* server: waited on every client at once (fan-in) */
	bool serve_spin;		/* ... spinning over them first (the ready hook) */
	/* its latencies (has_hist: it timed messages into hist): mapped by
	 * the runner, in the same shared memory, for every side of a cell
	 * whose pattern measures latency (pattern.lat_kind), NULL otherwise */
	bool has_hist;
	struct hist *hist;
	/* --rate: the paced views (struct side_paced), mapped by the runner
	 * for a paced cell only (NULL otherwise) */
	bool has_paced;
	struct side_paced *paced;
	/* the pattern's own record (pattern.side_size bytes, zeroed, in the
	 * same shared memory; NULL when it has none) */
	void *pat;
};

/* SIDE_FAILED: its error is set, its endpoints not yet closed (then DONE) */
enum side_state { SIDE_INIT, SIDE_READY, SIDE_IN_WINDOW, SIDE_DONE, SIDE_FAILED };

struct run_ctl;

struct participant {
	const struct cell *cell;
	struct tp_channel *ch;
	struct tp_endpoint *ep;		/* the client's, or the server's for client 0 */
	struct tp_endpoint *eps[MAX_CLIENTS];	/* server: one per client */
	enum tp_role role;
	unsigned id;
	/* a pattern with channels of its own (pattern.channels): all of them,
	 * and the endpoint towards the next stage of its graph */
	struct tp_channel *chs;
	unsigned nch;
	struct tp_endpoint *next;
	struct side_stats *st;
	struct run_ctl *ctl;
	void *buf;			/* cell->size bytes, cache-line aligned */
	struct rusage_snap ru0;
	uint64_t poll0;			/* polling_ns() at the window's start */
	struct sched_snap sched0;	/* at the window's start */
	bool sched0_ok;
	bool marks;			/* --trace=events: pat_mark records the timed messages */
};

#endif
