// SPDX-License-Identifier: MIT
/* The slow paths of ring_ep.h, shared by ring.c and ring_ipc.c: waiting for
 * room on tx or a record on rx in slices of RING_EP_SLICE_MS, so that a
 * stop request ends the wait with -EINTR, and calling the transport's
 * watch hook (ring: the peer's pidfd) before the wait and between slices. */
#include <errno.h>

#include "ring_ep.h"
#include "ipclab/util.h"

/* After a slice in vain: a stop request, else the transport's look. */
static int ring_ep_slice_over(struct ring_ep *ep)
{
	if (stop_requested(ep->stop))
		return -EINTR;
	if (ep->watch)
		ep->watch(ep, true);
	return 0;
}

int ring_ep_reserve_wait(struct ring_ep *ep, size_t len, void **p)
{
	int r;

	if (ep->watch)
		ep->watch(ep, false);
	for (;;) {
		r = ipcring_reserve(ep->tx, len, p, RING_EP_SLICE_MS);
		if (r != -ETIMEDOUT)
			return r;
		r = ring_ep_slice_over(ep);
		if (r)
			return r;
	}
}

int ring_ep_peek_wait(struct ring_ep *ep, const void **msg, size_t *n)
{
	int r;

	if (ep->watch)
		ep->watch(ep, false);
	for (;;) {
		r = ipcring_peek(ep->rx, msg, n, RING_EP_SLICE_MS);
		if (r != -ETIMEDOUT)
			return r;
		r = ring_ep_slice_over(ep);
		if (r)
			return r;
	}
}
