// SPDX-License-Identifier: MIT
/* The slow paths of ring_ep.h, shared by ring.c and ring_ipc.c: waiting for
 * room on tx or a record on rx in slices of RING_EP_SLICE_MS, so that a
 * stop request ends the wait with -EINTR, and calling the transport's
 * watch hook (ring: the peer's pidfd) before the wait and between slices;
 * and the batch operations (reserve_n/commit_n, peek_n/release_n) over
 * the endpoint's reserved run. */
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

/* Commit the reserved run's places handed out so far; publish (and
 * forget what was pending) unless @flags has IPCRING_MORE. */
int ring_ep_run_end(struct ring_ep *re, unsigned int flags)
{
	unsigned n = re->run_i;
	int r;

	if (!re->run_n)
		return 0;
	re->run_n = re->run_i = 0;
	r = ipcring_commit_batch(re->tx, re->run, n, flags);
	if (!(flags & IPCRING_MORE))
		re->pending = 0;
	return r;
}

/* reserve_n's runs of @len-byte messages: every run[].len set once, and
 * the longest run the ring takes (a batch is at most half of it; each
 * record is the message and an 8-byte header, aligned), so that a run too
 * long for it is not tried at every call. */
static void ring_ep_run_lengths(struct ring_ep *re, size_t len)
{
	struct ipcring_info in;

	for (unsigned i = 0; i < IPCRING_BATCH_MAX; i++)
		re->run[i].len = len;
	re->run_len = len;
	re->run_max = IPCRING_BATCH_MAX;
	if (!ipcring_info(re->tx, &in) && in.align) {
		size_t rs = (len + 8 + in.align - 1) & ~((size_t)in.align - 1);
		size_t fit = (in.capacity / 2 - 8) / rs;

		if (fit < re->run_max)
			re->run_max = (unsigned)fit;
	}
}

/* reserve_n: a run of up to @max places (no more than the batch has left
 * before its publication) with one ipcring_reserve_batch(); where no run
 * fits now, one place, waiting for room as reserve does. */
ssize_t ring_ep_reserve_n(struct ring_ep *re, void **bufs, size_t len, unsigned max)
{
	unsigned n = re->auto_runs ? max : re->batch - re->pending;
	ssize_t r;

	if (re->run_n && ring_ep_run_end(re, IPCRING_MORE))
		return -EPROTO;
	if (re->run_len != len)
		ring_ep_run_lengths(re, len);
	if (n > max)
		n = max;
	if (n > re->run_max)
		n = re->run_max;
	if (n >= 2) {
		if (ipcring_reserve_batch(re->tx, re->run, n, 0) == 0) {
			for (unsigned i = 0; i < n; i++)
				bufs[i] = re->run[i].buf;
			re->run_n = n;
			return (ssize_t)n;
		}
	}
	r = ring_ep_reserve(re, &bufs[0], len);
	return r < 0 ? r : 1;
}

/* commit_n: the run with one ipcring_commit_batch(), published when the
 * batch is complete (IPCRING_MORE before); a single place as commit. */
int ring_ep_commit_n(struct ring_ep *re, unsigned n, size_t len)
{
	bool publish;
	ssize_t r;

	if (!re->run_n) {
		if (n != 1)
			return -EINVAL;
		r = ring_ep_commit(re, len);
		return r < 0 ? (int)r : 0;
	}
	if (n != re->run_n)
		return -EINVAL;
	re->pending += n;
	publish = re->auto_runs || re->pending >= re->batch;
	re->run_n = re->run_i = 0;
	if (publish)
		re->pending = 0;
	return ipcring_commit_batch(re->tx, re->run, n, publish ? 0 : IPCRING_MORE);
}

/* peek_n: what is committed, up to @max, with one ipcring_peek_batch()
 * (what this endpoint sent published first, as peek does); when nothing
 * is, the wait of peek, then the records behind the first. */
ssize_t ring_ep_peek_n(struct ring_ep *re, const void **msgs, size_t *lens, unsigned max)
{
	const void *m;
	ssize_t r;
	int k;

	if (max > IPCRING_BATCH_MAX)
		max = IPCRING_BATCH_MAX;
	if (re->pending) {
		if (re->run_n)
			(void)ring_ep_run_end(re, 0);
		ring_ep_flush(re);
	}
	k = ipcring_peek_batch(re->rx, re->got, max, 0);
	if (k == -EAGAIN) {
		r = ring_ep_peek(re, &m);
		if (r <= 0)
			return r;
		k = ipcring_peek_batch(re->rx, re->got, max, 0);	/* m first */
	}
	if (k <= 0)
		return k;
	for (int i = 0; i < k; i++) {
		msgs[i] = re->got[i].buf;
		lens[i] = re->got[i].len;
	}
	re->peeked = true;
	return k;
}

bool ring_ep_runs(const struct ring_ep *re)
{
	return re->batch > 1 || re->auto_runs;
}

void ring_ep_release_n(struct ring_ep *re, unsigned n)
{
	re->peeked = false;
	(void)ipcring_release_batch(re->rx, n);
}
