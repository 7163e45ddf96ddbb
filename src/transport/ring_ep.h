/* SPDX-License-Identifier: MIT */
/* What ring.c (ring, ring-spin, ring-eventfd) and ring_ipc.c (ring-ipc)
 * share: an endpoint over a pair of ipcring rings, one it produces on (tx)
 * and one it consumes (rx), and the operations on it that both transports
 * do alike. Each transport's struct tp_endpoint starts with a struct
 * ring_ep and adds its own: ring its reserved batch runs and the peer's
 * pidfd, ring-ipc its connection and the fan-in eventfd.
 *
 * -O batch=N: a commit publishes every Nth message (IPCRING_MORE before
 * it); ring_ep_flush publishes the rest before the endpoint waits for its
 * peer. Waits are bounded by RING_EP_SLICE_MS, after which the cell's stop
 * word gives -EINTR (the library retries its waits on EINTR, so a signal
 * alone does not end them). The fast paths are inline; the waits are in
 * ring_ep.c. */
#ifndef IPCLAB_RING_EP_H
#define IPCLAB_RING_EP_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "ipcring.h"
#include "ipclab/transport.h"

#define RING_EP_SLICE_MS 100	/* longest library wait between stop checks */

struct ring_ep {
	struct ipcring *tx, *rx;
	uint32_t batch, pending;	/* messages committed with MORE, unpublished */
	bool peeked;			/* rx holds a record handed out by peek */
	const _Atomic int *stop;	/* the cell's stop word (tp_config) */
	/* the batch operations' state (ring_ep_reserve_n and the others):
	 * -O batch=auto publishes each run at its commit_n */
	bool auto_runs;
	unsigned run_n, run_i;		/* reserved run: places, handed out so far */
	size_t run_len;			/* reserve_n: every run[].len is this (0: unset) */
	unsigned run_max;		/* reserve_n: the longest run of run_len the ring takes */
	struct ipcring_rec run[IPCRING_BATCH_MAX];
	struct ipcring_rec got[IPCRING_BATCH_MAX];	/* peek_n's records */
	/* NULL, or called before a wait (@slice_over false) and after each
	 * slice of it in vain (true) that no stop request ended */
	void (*watch)(struct ring_ep *ep, bool slice_over);
};

int ring_ep_reserve_wait(struct ring_ep *ep, size_t len, void **p);
/* The transport interface's batch operations over ep's rings (see
 * transport.h): runs of places reserved and committed with one library
 * call each, at most what -O batch has left before its publication (auto:
 * what is asked, published at commit_n), at most what the ring takes. */
ssize_t ring_ep_reserve_n(struct ring_ep *re, void **bufs, size_t len, unsigned max);
int ring_ep_commit_n(struct ring_ep *re, unsigned n, size_t len);
ssize_t ring_ep_peek_n(struct ring_ep *re, const void **msgs, size_t *lens, unsigned max);
void ring_ep_release_n(struct ring_ep *re, unsigned n);
bool ring_ep_runs(const struct ring_ep *re);
int ring_ep_run_end(struct ring_ep *re, unsigned int flags);
int ring_ep_peek_wait(struct ring_ep *ep, const void **msg, size_t *n);

/* A place for a @len-byte message on tx, waiting while the ring is full. */
static inline ssize_t ring_ep_reserve(struct ring_ep *ep, void **buf, size_t len)
{
	int r = ipcring_reserve(ep->tx, len, buf, 0);

	if (__builtin_expect(r == -EAGAIN, 0))
		r = ring_ep_reserve_wait(ep, len, buf);
	return r ? r : (ssize_t)len;
}

/* Commit the reserved message; publish it (and those before) every batch-th. */
static inline ssize_t ring_ep_commit(struct ring_ep *ep, size_t len)
{
	int r;

	if (++ep->pending < ep->batch) {
		r = ipcring_commit(ep->tx, len, IPCRING_MORE);
	} else {
		ep->pending = 0;
		r = ipcring_commit(ep->tx, len, 0);
	}
	return r ? r : (ssize_t)len;
}

/* send = the transport's reserve + memcpy + its commit (inlined). */
static inline ssize_t ring_ep_send(struct tp_endpoint *ep, const void *buf, size_t len,
				   ssize_t (*reserve)(struct tp_endpoint *, void **, size_t),
				   ssize_t (*commit)(struct tp_endpoint *, size_t))
{
	void *p;
	ssize_t r = reserve(ep, &p, len);

	if (__builtin_expect(r < 0, 0))
		return r;
	memcpy(p, buf, len);
	return commit(ep, len);
}

/* Publish what was committed with MORE (the caller checked ep->pending). */
static inline void ring_ep_flush(struct ring_ep *ep)
{
	ep->pending = 0;
	(void)ipcring_flush(ep->tx);
}

/* The next record of rx in place, waiting for one; its length, 0 when the
 * peer closed and everything was read, or -errno. */
static inline ssize_t ring_ep_peek(struct ring_ep *ep, const void **msg)
{
	size_t n;
	int r = ipcring_peek(ep->rx, msg, &n, 0);

	if (__builtin_expect(r == -EAGAIN, 0))
		r = ring_ep_peek_wait(ep, msg, &n);
	if (r <= 0)
		return r;
	ep->peeked = true;
	return (ssize_t)n;
}

static inline void ring_ep_release(struct ring_ep *ep)
{
	ep->peeked = false;
	(void)ipcring_release(ep->rx);
}

#endif
