/* SPDX-License-Identifier: MIT */
/* Inside the stream pattern (stream.c): its common case's loops, in
 * stream_fast.c (one endpoint, no pacing, no think, a transport that loses
 * nothing; through the batch operations where the endpoint moves runs),
 * and the sampling helpers both files use. */
#ifndef IPCLAB_PATTERN_STREAM_H
#define IPCLAB_PATTERN_STREAM_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"

/* The clock's cost, measured before the warm-up (0 when paced or none). */
double stream_clock_cost_ns(const struct cell *c);
/* Stamp every Nth message (a power of two): N from the warm-up's pace. */
uint32_t stream_choose_sampling(double cost_ns, uint64_t warm_ns, uint64_t warm_msgs);
/* Does @ep move its messages in runs (the batch operations, runs())? */
bool stream_runs(const struct cell *c, const struct tp_endpoint *ep);
/* The common case's sender and receiver (@zc: in place). */
int stream_send_fast(struct participant *p, struct tp_endpoint *ep);
int stream_recv_fast(struct participant *p, struct tp_endpoint *ep, bool zc);

#endif
