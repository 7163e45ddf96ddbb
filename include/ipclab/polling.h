/* SPDX-License-Identifier: MIT */
/* Polling, accounted: a transport or doorbell that spins (or spins and
 * yields) while it waits for its peer says how long, so that --trace can
 * show that CPU time as waiting (`polling`), not as the side's work. Each
 * source counts the calling thread's own time; the runner reads the sum at
 * its window's start and end (side_stats.poll_ns). */
#ifndef IPCLAB_POLLING_H
#define IPCLAB_POLLING_H

#include <stdint.h>

/* A source's count for the calling thread: its polling so far, in ns. */
typedef uint64_t (*polling_fn)(void);

/* Register a source (once is enough; again is a no-op): 1, or 0 when the
 * table (8 sources) is full. */
int polling_source(polling_fn f);
/* Time the calling thread polled so far, ipclab's own spinning included
 * (polling_add), over every source registered. */
uint64_t polling_ns(void);
/* ipclab's own spinning (a spin doorbell): ns more for the calling thread. */
void polling_add(uint64_t ns);

#endif
