/* SPDX-License-Identifier: MIT */
/* --trace=events inside src/trace/: the records the ring buffer delivers,
 * the message marks the sides leave, the recorder that drains the buffer
 * while the cell runs (events_rec.c, with libbpf) and the builder that
 * turns one cell's records into trace events (events.c, plain C: the
 * unit test feeds it records of its own). */
#ifndef IPCLAB_TRACE_EVENTS_INT_H
#define IPCLAB_TRACE_EVENTS_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipclab/trace.h"

/* = struct tr_ev of trace_shared.h (the BPF object's record) */
enum tev_kind { TEV_SWITCH = 1, TEV_WAKING, TEV_MIGRATE };
struct tev_rec {
	uint64_t t;
	uint32_t kind, cpu;
	uint32_t a, b, c, d;	/* switch: prev tid, next tid, prev_state, preempt;
				 * waking: waker tid, wakee tid; migrate: tid, dest CPU */
};

/* A side's timed messages: the last TEV_MARKS of them, in a ring the side
 * writes (shared memory: a side may be a process) and the parent reads
 * once the side is gone. */
#define TEV_MARKS 16384
struct tev_mark {
	uint64_t t0, t1;
};
struct tev_marks {
	_Atomic uint64_t n;		/* marks ever written */
	struct tev_mark m[TEV_MARKS];
};

/* One cell for the builder. */
struct tev_cell {
	const char *name;		/* the process's name */
	const char *mark_name;		/* "round trip", "one-way", "cycle" */
	unsigned nsides;
	const int *tids;		/* side i's thread id */
	const uint64_t *win_start, *win_end;	/* each side's window (0: none) */
	const struct tev_rec *ev;	/* in time order */
	size_t nev;
	const struct tev_marks *const *marks;	/* per side, or NULL */
};

/* What the builder wrote (the result record's trace.events). */
struct tev_stats {
	uint64_t written, span_ns;
	bool truncated;
};

/* Append the cell as process pid to the file: 0 or -EIO. */
int tev_write_cell(struct trace_events *ev, const struct tev_cell *c, unsigned *pid,
		   struct tev_stats *st);
/* The options it was opened with. */
const struct trace_events_opts *tev_opts(const struct trace_events *ev);

/* ---- the recorder (events_rec.c): drains the ring buffer while the cell runs */
struct tev_recorder;
/* map_fd: the evbuf ring buffer; cap: records kept (the last ones). */
int tev_recorder_start(int map_fd, size_t cap, struct tev_recorder **out);
/* Stop draining (after a last pass); the records, in time order, stay the
 * recorder's. */
void tev_recorder_stop(struct tev_recorder *r, const struct tev_rec **ev, size_t *n,
		       uint64_t *dropped, uint64_t *recorded);
void tev_recorder_free(struct tev_recorder *r);

#endif
