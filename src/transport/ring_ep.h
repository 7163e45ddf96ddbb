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
	/* NULL, or called before a wait (@slice_over false) and after each
	 * slice of it in vain (true) that no stop request ended */
	void (*watch)(struct ring_ep *ep, bool slice_over);
};

int ring_ep_reserve_wait(struct ring_ep *ep, size_t len, void **p);
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
