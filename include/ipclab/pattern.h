/* SPDX-License-Identifier: MIT */
/* A pattern drives endpoints and measures: it times messages into the
 * histogram and tells the runner when its measured window starts and ends.
 * The runner does everything else (placement, start barrier, rusage). */
#ifndef IPCLAB_PATTERN_H
#define IPCLAB_PATTERN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "ipclab/experiment.h"
#include "ipclab/opt.h"

struct result;

/* What plan_build hands a pattern's plan hook. */
struct pat_plan {
	const char *period;		/* --period as typed ("" = not given) */
	bool warmup_set;		/* --warmup was given: keep c->warmup */
	double expect_ns;		/* out: time its schedule adds to the cell (--max-time's derivation) */
};

/* Which of --reference's bare loops (src/reference/loop.c) mirrors a
 * pattern's cells: none (they have no reference, and say so), a one-way
 * flood, or one request and reply at a time. */
enum pat_ref { PAT_REF_NONE = 0, PAT_REF_STREAM, PAT_REF_PINGPONG };

struct pattern {
	const char *name;
	const char *summary;
	unsigned needs_caps;		/* transport caps required */
	enum lat_kind lat_kind;		/* what its latencies measure (metrics.h) */
	enum pat_ref reference;		/* --reference's loop for its cells */
	const struct opt_desc *options;
	size_t opts_size;
	int (*server)(struct participant *self);
	int (*client)(struct participant *self);
	/* Optional: endpoints on channels of their own (one per hop of a
	 * graph, each with one client id) instead of one channel the server
	 * shares with every client: how many the cell needs, and how a side
	 * opens (0 or pat_fail()'s result) and closes its endpoints on them. */
	unsigned (*channels)(const struct cell *c);
	int (*open)(struct participant *self);
	void (*close)(struct participant *self);
	bool periodic;			/* runs on a period: takes --period (its plan hook parses it) */
	/* a periodic pattern's --period: 0 (ns set), or -EINVAL / -ERANGE with why */
	int (*period_parse)(const char *text, uint64_t *ns, char *err, size_t errlen);
	/* Optional, for a pattern with knobs and results of its own: */
	/* at plan time, check the cell and derive what the pattern needs (its
	 * pat_cell, the warm-up, the watchdog); 0, or -EINVAL with why */
	int (*plan)(struct cell *c, struct pat_plan *pp, char *err, size_t errlen);
	const char *reliable_why;	/* it needs a reliable transport, for this reason */
	const char *mark_name;		/* what --trace=events marks time (NULL: from lat_kind) */
	size_t side_size;		/* bytes of its own in each side's record (side_stats.pat) */
	/* its figures of the sides' records into res->pat_result (after the
	 * engine's own, before latency), and after --trace filled res->trace */
	void (*collect)(const struct side_stats *sides, unsigned n, struct result *res);
	void (*collect_trace)(struct result *res);
	/* the progress line's figures while it runs (the records' atomics only) */
	void (*live)(const struct side_stats *sides, unsigned n, char *buf, size_t len);
	/* a periodic pattern's result, for --trace's cause split
	 * (src/trace/cause.c): the cycles it ran, and whether its sides run
	 * one after another each cycle (a chain: their shares add up) or at
	 * once (the busiest counts); false when r holds none */
	bool (*cycles_of)(const struct result *r, uint64_t *cycles, bool *chain);
	/* ... and what that split is of: one period's name (the split's
	 * "whose", the reading's unit) and its figure's key */
	const char *period_name, *period_figure;
	/* its part of the result record is src/report's (pat_report_of,
	 * ipclab/result.h), which names the pattern: a pattern never names
	 * the report layer */
};

extern const struct pattern *const patterns[];
extern const size_t n_patterns;
const struct pattern *pattern_find(const char *name);

/* Runner services for patterns (src/core/side.c). */
bool pat_stopping(const struct participant *p);
void pat_window_begin(struct participant *p);
void pat_window_end(struct participant *p);
static inline void pat_progress(struct participant *p, uint64_t n)
{
	atomic_store_explicit(&p->st->progress, n, memory_order_relaxed);
}
/* A timed message, [t0, t1] on CLOCK_MONOTONIC: with --trace=events a mark
 * on the side's timeline (src/trace/events.c), else nothing. */
void pat_mark_slow(struct participant *p, uint64_t t0, uint64_t t1);
static inline void pat_mark(struct participant *p, uint64_t t0, uint64_t t1)
{
	if (__builtin_expect(p->marks, 0))
		pat_mark_slow(p, t0, t1);
}
/* The pattern's own record (side_stats.pat) of side i of the cell where
 * that side runs on this machine, else NULL (it runs elsewhere): for a
 * pattern whose server reads what its clients published (-p cycle). */
void *pat_side_own(const struct participant *p, unsigned i);
/* This side times messages into its histogram (side_stats.hist, which
 * the runner maps for a pattern with a lat_kind): 0, or pat_fail()'s
 * result when there is none. */
int pat_hist_open(struct participant *p);
/* --trace: the time so far in this side's window that other tasks ran on
 * the CPU it waited for (true), or false when the cell is not traced. */
bool pat_lost_ns(const struct participant *p, uint64_t *ns);
/* Fail this side with a message (returns -err). */
int pat_fail(struct participant *p, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Busy computation between messages (--think, --think-ns): seed 001's loop,
 * `v *= 3` on a volatile, size * think times (or think_iters times). */
void pat_think_loop(const struct participant *p);
static inline void pat_think(const struct participant *p)
{
	if (__builtin_expect(p->cell->think || p->cell->think_iters, 0))
		pat_think_loop(p);
}

/* Loop iterations per nanosecond of pat_think's loop, measured
 * (src/core/think.c). */
double think_calibrate(void);

/* Check a received message's header: sequence and length (and payload with
 * verify). 0, or pat_fail()'s result with expected vs got. */
int pat_check_msg(struct participant *p, const void *buf, ssize_t got, uint32_t want_seq);

/* The common case inline (right length and sequence, no --verify); the
 * out-of-line check names what is wrong. The header's first two words are
 * read through memcpy: a transport's buffer need not be aligned. */
static inline int pat_check_fast(struct participant *p, const void *buf, ssize_t got,
				  uint32_t want_seq)
{
	uint32_t w[2];

	if (__builtin_expect(got > 0 && (size_t)got == p->cell->size && !p->cell->verify, 1)) {
		memcpy(w, buf, sizeof(w));
		if (w[0] == want_seq && (w[1] & 0x7fffffffu) == (uint32_t)got)
			return 0;
	}
	return pat_check_msg(p, buf, got, want_seq);
}

#endif
