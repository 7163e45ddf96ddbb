/* SPDX-License-Identifier: MIT */
/* The engine's front door: a typed plan (struct plan_spec: transports,
 * patterns, sizes, placements, schedulers and knobs as typed lists), turned
 * into cells by plan_build (src/core/plan.c) and run by session_run
 * (src/core/session.c) into results. No text is parsed and nothing is
 * printed here: errors fill a buffer, progress goes to an observer. The
 * command layer (src/cmd/) turns what the user typed into a plan_spec. */
#ifndef IPCLAB_ENGINE_H
#define IPCLAB_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipclab/experiment.h"
#include "ipclab/result.h"

#define PLAN_MAX_LIST 64	/* values in one list of a plan_spec */
#define PLAN_MAX_CELLS 10000	/* cells in one plan */
#define PLAN_THINK_MAX 1000000000ull	/* --think: iterations per byte */
#define PLAN_THINK_NS_MAX (3600ull * NSEC_PER_SEC)

/* One experiment as typed lists: the plan is their cartesian product. */
struct plan_spec {
	const struct transport *tp[PLAN_MAX_LIST];
	bool tp_named[PLAN_MAX_LIST];	/* named by the user: a cell it cannot run is an error */
	const void *tp_opts[PLAN_MAX_LIST];	/* each transport's parsed options (or NULL) */
	const struct pattern *pat[PLAN_MAX_LIST];
	const void *pat_opts[PLAN_MAX_LIST];
	uint64_t size[PLAN_MAX_LIST];	/* bytes per message, header included */
	bool threads[2];		/* endpoints: false = processes, true = threads */
	struct pin_spec pin[PLAN_MAX_LIST];
	/* --pin matrix: more pins than a list holds, used instead of pin[]
	 * when set (borrowed for plan_build only) */
	const struct pin_spec *pins_ext;
	unsigned npins_ext;
	struct sched_spec sched[PLAN_MAX_LIST];
	unsigned clients[PLAN_MAX_LIST];
	/* think: iterations per byte, or think_ns: a busy time; one list (nthink) */
	uint64_t think[PLAN_MAX_LIST], think_ns[PLAN_MAX_LIST];
	double rate[PLAN_MAX_LIST];	/* messages/s (0 = as fast as it can) */
	char period_text[24];		/* --period as typed, for a periodic pattern's plan hook ("" = none) */
	char rate_text[PLAN_MAX_LIST][24];	/* as the user wrote it ("max" for 0) */
	unsigned ntp, npat, nsize, nep, npin, nsched, nclients, nthink, nrate;

	uint64_t count, duration_ns, timeout_ns;
	uint64_t warmup;		/* with warmup_set; else derived from count (or 1 when paced) */
	uint64_t max_time_ns;		/* with max_time_set; else derived per cell */
	bool warmup_set, max_time_set, verify, keep_awake;
	bool trace;			/* --trace: every cell traced (src/trace/) */
	bool explain;			/* --explain: and its cause tested */
	bool trace_syscalls;		/* --trace=syscalls: and every syscall probed */
	struct trace_events *trace_events;	/* --trace=events: the timeline (NULL = none) */
	bool profile;			/* --profile: every cell profiled */
	const char *profile_dir;	/* --profile DIR: folded stacks (NULL = none) */
	bool lenient;			/* a named transport that cannot run is skipped, not an error */
	int pm_qos_us;			/* -1 = not touched */
	const char *section;		/* suite section written into each cell (NULL = none) */
	/* think loop iterations per ns, asked once the first cell with think_ns
	 * needs it (the command layer calibrates and may say so) */
	double (*think_per_ns)(void *arg);
	void *think_arg;
};

/* Fill the scalar knobs with `ipclab run`'s defaults; every list empty. */
void plan_spec_defaults(struct plan_spec *s);

/* The cells of one or more specs. The plan owns the option blocks the
 * command layer allocated for them (opt_blocks, freed by plan_free). */
struct plan {
	struct cell *cells;
	size_t n, cap;
	void *opt_blocks[2 * PLAN_MAX_LIST];
	unsigned nblocks;
};

/* Indices into each list of a spec: one of its cells. */
struct plan_pick {
	unsigned pat, size, tp, ep, pin, sched, clients, think, rate;
};

/* Where plan_build put k's cell among the cells of s, counted from the
 * first cell s added (its results are in the same order), or -1 when k
 * is past the end of one of s's lists. */
long plan_cell_index(const struct plan_spec *s, const struct plan_pick *k);

/* Append the cells of spec to pl. 0, -EINVAL (bad input: why in err, one
 * line for the user) or -ENOMEM. */
int plan_build(const struct plan_spec *spec, struct plan *pl, char *err, size_t errlen)
	__attribute__((warn_unused_result));
void plan_free(struct plan *pl);

/* How a plan is run: the whole plan shares these. */
struct session_opts {
	unsigned repeat;		/* every cell this many times, interleaved (0 = 1); with
					 * repeat_auto the most rounds (the cap) */
	/* --repeat auto: rounds (whole sweeps over every cell) added until
	 * every cell's headline interval lies within auto_pct of its median
	 * (at least STATS_CI_MIN_N rounds, at most repeat), and none started
	 * that would end past budget_ns (0 = no budget) at the pace so far */
	bool repeat_auto;
	double auto_pct;
	uint64_t budget_ns;
	bool dry_run;			/* every cell is reported as skipped ("dry run") */
	int pm_qos_us;			/* /dev/cpu_dma_latency held during the run (-1 = no) */
	bool keep_awake;		/* SCHED_IDLE spinners on the endpoints' CPUs */
	bool floors;			/* the machine's floors measured at the start (env.floors) */
	/* --reference: each cell's bare loop right after it (NULL = none;
	 * the command layer hands the engine src/reference's reference_ops) */
	const struct reference_ops *reference;
	/* --pin matrix: the cells of each round in an order shuffled from
	 * this seed (0 = plan order); order, when set, gets the cell run at
	 * each step (repeat x n entries) */
	uint64_t shuffle_seed;
	uint32_t *order;
	unsigned *rounds;		/* when set, gets the rounds run */
};

/* Told before each cell runs (k of total, counting repetitions) and once
 * more at the end (k == total). Optional. */
struct session_observer {
	void (*cell_start)(void *arg, size_t k, size_t total);
	void *arg;
};

/* Run every cell of pl; rep->results then holds rep->n complete cells
 * (allocated, the caller frees it) and rep->env the machine. Returns 0,
 * 128+N when interrupted by signal N, -ENOMEM, or -EIO when an idle knob
 * could not be set (why in err; nothing ran). */
int session_run(const struct plan *pl, const struct session_opts *o,
		const struct session_observer *obs, struct report *rep, char *err, size_t errlen)
	__attribute__((warn_unused_result));

#endif
