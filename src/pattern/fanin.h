/* SPDX-License-Identifier: MIT */
/* Fan-in for servers with several clients: wait on every client at once and
 * serve whichever is ready (-O serve=auto), or each in turn
 * (-O serve=in-turn, and where the transport has no pollable descriptor,
 * spins, or is lossy). Where the transport can tell readiness without
 * sleeping (its ready hook), auto spins over every client for
 * -O fanin_spin, then arms them all and sleeps in epoll, as a ring
 * server's own loop does; -O serve=epoll keeps the plain epoll wait. The
 * server records which one ran (serve: ready-spin, ready or in-turn). */
#ifndef IPCLAB_PATTERN_FANIN_H
#define IPCLAB_PATTERN_FANIN_H

#include <stdbool.h>
#include <string.h>

#include "common.h"

enum { SERVE_AUTO, SERVE_IN_TURN, SERVE_EPOLL };

/* the serve and fanin_spin options, as each fan-in pattern lists them */
#define PAT_FANIN_OPTIONS(T, serve_field, spin_field, what)				\
	{ .name = "serve", .type = OPT_CHOICE, .offset = offsetof(T, serve_field),	\
	  .def = "auto", .choices = "auto|in-turn|epoll",				\
	  .help = what ": serve whichever is ready (auto, where the transport can "	\
		  "wait on all; spinning over them first where it can tell readiness "	\
		  "without sleeping), each in turn, or whichever is ready by epoll alone" }, \
	{ .name = "fanin_spin", .type = OPT_DURATION,					\
	  .offset = offsetof(T, spin_field), .def = "30us", .max = 1000000000ull,	\
	  .help = "serve=auto on a transport with a readiness check (ring-ipc): how long "	\
		  "the server spins over its clients before it sleeps in epoll; 0 = none" }

struct pat_fanin {
	int epfd;
	unsigned n;
	bool spin;			/* the transport's ready hook is used */
	uint64_t spin_ns;
	bool live[MAX_CLIENTS];		/* not yet dropped */
};

/* Can this server wait on all its clients at once? */
bool pat_fanin_possible(const struct participant *p, int serve_mode);
/* 0, or a pat_fail() error. */
int pat_fanin_open(struct participant *p, struct pat_fanin *f, int serve_mode,
		   uint64_t spin_ns);
/* Block until some clients are ready: their indices in ready[] (at most
 * MAX_CLIENTS), the count returned; -EINTR on a stop; a pat_fail() error. */
int pat_fanin_wait(struct participant *p, struct pat_fanin *f, unsigned *ready);
/* Client i has ended: wait on it no more. */
void pat_fanin_drop(struct participant *p, struct pat_fanin *f, unsigned i);
void pat_fanin_close(struct pat_fanin *f);

/* A server's loop with fan-in: open the set, mark the side as served
 * ready (receiving in place per recv_mode), run serve, close the set. */
typedef int (*pat_fanin_serve_fn)(struct participant *p, struct pat_fanin *f, bool zerocopy);
int pat_fanin_serve(struct participant *p, int recv_mode, int serve_mode, uint64_t spin_ns,
		    pat_fanin_serve_fn serve);

#endif
