/* SPDX-License-Identifier: MIT */
/* What the engine sees of a cell between hosts (ipclab serve, run --peer;
 * the remote code itself: remote.h, src/remote/): which of the cell's
 * sides run in this process, and the hooks the runner calls around the
 * channel, the sides' records and the whole cell. */
#ifndef IPCLAB_CELL_REMOTE_H
#define IPCLAB_CELL_REMOTE_H

#include <stdbool.h>
#include <stddef.h>

#include "ipclab/experiment.h"

struct result;

/* Which sides of a cell run in this process (the others elsewhere). */
enum cell_sides { CELL_SIDES_ALL, CELL_SIDES_SERVER, CELL_SIDES_CLIENTS };

/* Hung on struct cell (cell->remote) by the remote code. */
struct cell_remote {
	enum cell_sides local;
	/* after the channel was created, before any side starts (serve: tells
	 * the client where the measured connection listens); 0 or -errno */
	int (*created)(const struct cell *c, struct tp_channel *ch, char *err, size_t errlen);
	/* every local side is done, before the result is collected: fill the
	 * records of the sides that ran elsewhere (client), or send ours
	 * (serve); 0 or -errno with why */
	int (*sides_done)(const struct cell *c, struct side_stats *sides, unsigned n, char *err,
			  size_t errlen);
	/* --peer: run_cell hands the whole cell here (with the runner's own
	 * one-cell function), which negotiates and then calls it */
	int (*run)(const struct cell *c, struct result *res,
		   int (*run_local)(const struct cell *c, struct result *res));
	void *arg;
};

static inline bool cell_side_local(const struct cell *c, unsigned side)
{
	enum cell_sides l = c->remote ? c->remote->local : CELL_SIDES_ALL;

	return l == CELL_SIDES_ALL || (l == CELL_SIDES_SERVER) == (side == 0);
}

#endif
