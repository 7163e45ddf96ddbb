/* SPDX-License-Identifier: MIT */
/* Private to the runner (runner.c, the parent; side.c, each endpoint): the
 * memory every side shares, and the futex helpers both use. */
#ifndef IPCLAB_RUNNER_INT_H
#define IPCLAB_RUNNER_INT_H

#include <stdatomic.h>
#include <stdint.h>

#include "ipclab/pattern.h"
#include "ipclab/result.h"

/* Shared by the parent and every side, in a MAP_SHARED mapping. */
struct run_ctl {
	_Atomic uint32_t gate;		/* futex: 0 closed, 1 open, 2 aborted */
	_Atomic uint32_t ready;		/* futex: sides at the barrier */
	_Atomic uint32_t done;		/* futex: sides finished */
	_Atomic uint32_t in_window, out_window;
	_Atomic int stop;
	unsigned nsides;
	struct sys_snap sys0, sys1;
	struct intf_helpers helpers;	/* --keep-awake's spinners, read with sys0 and sys1 */
	struct trace *trace;		/* --trace, else NULL: the sides mark their windows */
	struct side_stats sides[];
};

struct side_arg {
	struct run_ctl *ctl;
	const struct cell *cell;
	struct tp_channel *ch;
	struct tp_channel *chs;		/* every channel of the cell (ch is the first) */
	unsigned nch;
	enum tp_role role;
	unsigned id;
	struct side_stats *st;
};

long runner_futex(_Atomic uint32_t *w, int op, uint32_t val, uint64_t timeout_ns);
void runner_wake_all(_Atomic uint32_t *w);
/* One endpoint, from placement to close (a child's or a thread's body). */
int runner_side_run(struct side_arg *a);
void *runner_side_thread(void *arg);

/* ---- the parent (runner.c, watch.c) ---- */

#include <pthread.h>

#include "ipclab/profile.h"
#include "ipclab/trace.h"

struct run_state {
	const struct cell *cell;
	struct run_ctl *ctl;
	size_t ctl_size;
	struct tp_channel *chs;		/* one, or the pattern's own (pattern.channels) */
	unsigned nch, nch_made;		/* made: create() was called on these */
	struct tp_config cfg;
	struct side_arg args[MAX_SIDES];
	pid_t pids[MAX_SIDES];
	int pid_handles[MAX_SIDES];
	pthread_t threads[MAX_SIDES];
	bool started[MAX_SIDES];
	unsigned nsides;
	unsigned nlocal;		/* sides run here (the others: cell->remote) */
	char fail[ERRLEN];
	struct sys_snap tick_prev;
	uint64_t stopped_since[MAX_SIDES];	/* when a child was first seen stopped */
	uint64_t last_stop_check;
	uint64_t last_live;		/* when the progress line was last told */
	uint64_t start_ns;		/* when the sides were started */
	bool in_prefer;			/* inside prefer_dead_peer() */
	struct trace *trace;		/* --trace */
	struct profile *profile;	/* --profile */
};

/* "server 0", "client 2" */
const char *runner_side_name(const struct side_stats *st, char *buf, size_t len);
/* waitpid without blocking: 1 reaped (*status set), 0 still running, -1
 * gone without a status (reaped elsewhere). */
int runner_child_wait(pid_t pid, int *status);
/* Side i's child is gone (wstatus, or NULL when it was lost): true for an
 * orderly end, else false with rs->fail filled. */
bool runner_reap_child(struct run_state *rs, unsigned i, const int *wstatus);
/* Every side looked at without blocking; false once something failed. */
bool runner_check_sides(struct run_state *rs);
/* Wait until word reaches want while watching the sides: 0, -EINTR (a
 * signal), -EIO (a side failed) or -ETIMEDOUT (a watchdog), rs->fail said. */
int runner_watch_until(struct run_state *rs, _Atomic uint32_t *word, uint32_t want);

#endif
