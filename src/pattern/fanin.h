/* SPDX-License-Identifier: MIT */
/* Fan-in for servers with several clients: wait on every client at once and
 * serve whichever is ready (-O serve=auto), or each in turn
 * (-O serve=in-turn, and where the transport has no pollable descriptor,
 * spins, or is lossy). The server records which one ran (serve). */
#ifndef IPCLAB_PATTERN_FANIN_H
#define IPCLAB_PATTERN_FANIN_H

#include <stdbool.h>
#include <string.h>

#include "common.h"

enum { SERVE_AUTO, SERVE_IN_TURN };

struct pat_fanin {
	int epfd;
	unsigned n;
};

/* Can this server wait on all its clients at once? */
bool pat_fanin_possible(const struct participant *p, int serve_mode);
/* 0, or a part_fail() error. */
int pat_fanin_open(struct participant *p, struct pat_fanin *f);
/* Block until some clients are ready: their indices in ready[] (at most
 * MAX_CLIENTS), the count returned; -EINTR on a stop; a part_fail() error. */
int pat_fanin_wait(struct participant *p, struct pat_fanin *f, unsigned *ready);
/* Client i has ended: wait on it no more. */
void pat_fanin_drop(struct participant *p, struct pat_fanin *f, unsigned i);
void pat_fanin_close(struct pat_fanin *f);

/* A server's loop with fan-in: open the set, mark the side as served
 * ready (receiving in place per recv_mode), run serve, close the set. */
typedef int (*pat_fanin_serve_fn)(struct participant *p, struct pat_fanin *f, bool zerocopy);
int pat_fanin_serve(struct participant *p, int recv_mode, pat_fanin_serve_fn serve);

#endif
