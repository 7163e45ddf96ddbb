/* SPDX-License-Identifier: MIT */
/* Private to the runner (runner.c, the parent; side.c, each endpoint): the
 * memory every side shares, and the futex helpers both use. */
#ifndef IPCLAB_RUNNER_INT_H
#define IPCLAB_RUNNER_INT_H

#include <stdatomic.h>
#include <stdint.h>

#include "ipclab/pattern.h"
#include "ipclab/report.h"

/* Shared by the parent and every side, in a MAP_SHARED mapping. */
struct run_ctl {
	_Atomic uint32_t gate;		/* futex: 0 closed, 1 open, 2 aborted */
	_Atomic uint32_t ready;		/* futex: sides at the barrier */
	_Atomic uint32_t done;		/* futex: sides finished */
	_Atomic uint32_t in_window, out_window;
	_Atomic int stop;
	unsigned nsides;
	struct sys_snap sys0, sys1;
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

#endif
