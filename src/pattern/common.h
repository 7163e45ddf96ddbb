/* SPDX-License-Identifier: MIT */
/* Helpers the patterns share: build and send one message, receive and check
 * one (copying or in place), the end-of-window bookkeeping. */
#ifndef IPCLAB_PATTERN_COMMON_H
#define IPCLAB_PATTERN_COMMON_H

#include <string.h>

#include "ipclab/msg.h"
#include "ipclab/pattern.h"

/* Messages in the cell (warm-up + measured), or UINT64_MAX in duration mode. */
static inline uint64_t pat_total(const struct participant *p)
{
	return p->cell->duration_ns ? UINT64_MAX : p->cell->warmup + p->cell->count;
}

/* The header, and the payload:
 * - with --verify, every byte (msg_fill);
 * - written in place (@src, the sender's buffer): the payload copied from
 *   @src whole, as a producer writes its data and a copying send copies it
 *   (whole lines also spare the fetch of each line's old contents from the
 *   consumer's CPU that a store to part of a line needs: docs/patterns.md);
 * - copied out of p->buf by the transport (@src NULL): nothing, its copy is
 *   the pass over the payload (stores just before it only made the copy
 *   wait: up to 0.8 of a libqb-rb 4 KiB stream's reference rate).
 * Inline: it runs once a message. */
static inline void pat_build(void *buf, size_t len, uint32_t seq, uint32_t flags,
			     uint64_t ts_ns, bool verify, const void *src)
{
	struct msg_hdr *h = buf;

	if (__builtin_expect(verify, 0))
		msg_fill(buf, len, seq, true);
	else if (src && len == 64)	/* the common small size: a copy inlined */
		memcpy((unsigned char *)buf + MSG_HDR_SIZE,
		       (const unsigned char *)src + MSG_HDR_SIZE, 64 - MSG_HDR_SIZE);
	else if (src && len > MSG_HDR_SIZE)
		memcpy((unsigned char *)buf + MSG_HDR_SIZE,
		       (const unsigned char *)src + MSG_HDR_SIZE, len - MSG_HDR_SIZE);
	h->seq = seq;
	h->len = (uint32_t)len | flags;
	h->ts_ns = ts_ns;
}

/* Fill p->buf as message seq and send it on ep. flags: MSG_F_END. */
int pat_send(struct participant *p, struct tp_endpoint *ep, uint32_t seq, uint32_t flags,
	     uint64_t ts_ns);

/* A send that returned @n instead of @len: -EINTR on a stop request, else
 * pat_fail()'s result naming message @seq. */
int pat_send_failed(struct participant *p, uint32_t seq, ssize_t n, size_t len);

/* Receive message want_seq on ep and check it. On success *hdr points at
 * the received header (in p->buf, or in place when zero-copy), valid until
 * pat_recv_done(). Returns 0 or a pat_fail() error. */
int pat_recv(struct participant *p, struct tp_endpoint *ep, uint32_t want_seq,
	     const struct msg_hdr **hdr, bool zerocopy);
void pat_recv_done(struct participant *p, struct tp_endpoint *ep, bool zerocopy);

/* Whether this side should receive in place (the transport can and the
 * pattern option allows). */
bool pat_use_zerocopy(const struct participant *p, int recv_mode);

enum { RECV_AUTO, RECV_COPY, RECV_PEEK };

/* Paced sending (--rate): the intended send time of message k of the window. */
static inline uint64_t pat_intended(const struct participant *p, uint64_t t0, uint64_t k)
{
	return t0 + (uint64_t)((double)k * 1e9 / p->cell->rate);
}

/* Sleep until an absolute CLOCK_MONOTONIC time (returns early on a stop). */
void pat_wait_until(const struct participant *p, uint64_t t_ns);

#endif
