// SPDX-License-Identifier: MIT
/* Send and receive one checked message (see common.h). */
#include <string.h>
#include <time.h>

#include "common.h"

int pat_send_failed(struct participant *p, uint32_t seq, ssize_t n, size_t len)
{
	if (n == -EINTR && pat_stopping(p))
		return -EINTR;
	if (n < 0)
		return pat_fail(p, (int)-n, "send of message %u failed: %s", seq, strerror((int)-n));
	return pat_fail(p, EIO, "send of message %u moved %zd of %zu bytes", seq, n, len);
}

int pat_send(struct participant *p, struct tp_endpoint *ep, uint32_t seq, uint32_t flags,
	     uint64_t ts_ns)
{
	const struct transport *tp = p->cell->tp;
	size_t len = p->cell->size;
	ssize_t n;
	void *buf;

	if (tp->reserve) {
		/* in place: the payload written straight into the transport's place */
		n = tp->reserve(ep, &buf, len);
		if (n != (ssize_t)len)
			return pat_send_failed(p, seq, n, len);
		pat_build(buf, len, seq, flags, ts_ns, p->cell->verify, p->buf);
		n = tp->commit(ep, len);
	} else {
		pat_build(p->buf, len, seq, flags, ts_ns, p->cell->verify, NULL);
		n = tp->send(ep, p->buf, len);
	}
	return n == (ssize_t)len ? 0 : pat_send_failed(p, seq, n, len);
}

bool pat_use_zerocopy(const struct participant *p, int recv_mode)
{
	return recv_mode != RECV_COPY && (p->cell->tp->caps & TP_ZEROCOPY);
}

int pat_recv(struct participant *p, struct tp_endpoint *ep, uint32_t want_seq,
	     const struct msg_hdr **hdr, bool zerocopy)
{
	const struct transport *tp = p->cell->tp;
	const void *msg = p->buf;
	ssize_t n;

	if (zerocopy)
		n = tp->peek(ep, &msg, p->cell->size);
	else
		n = tp->recv(ep, p->buf, p->cell->size);
	if (n == -EINTR && pat_stopping(p))
		return -EINTR;
	*hdr = msg;
	if (zerocopy && n > 0 && !p->cell->verify)
		msg_read_in_place(msg, (size_t)n);
	return pat_check_fast(p, msg, n, want_seq);
}

void pat_recv_done(struct participant *p, struct tp_endpoint *ep, bool zerocopy)
{
	if (zerocopy)
		p->cell->tp->release(ep);
}

void pat_wait_until(const struct participant *p, uint64_t t_ns)
{
	struct timespec ts = ns_to_timespec(t_ns);

	while (now_ns() < t_ns && !pat_stopping(p))
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}
