// SPDX-License-Identifier: MIT
/* The stream pattern's common case (see stream.c): one endpoint, a count
 * of messages or a duration, no pacing, no think, a transport that loses
 * nothing. Its own loops keep what they read of the cell in locals (the
 * transport's calls are opaque to the compiler, which would otherwise load
 * them again after each); through a transport whose endpoint moves runs
 * (the batch operations), the messages are built, checked and handed back
 * in runs. The same header, checks and sampled stamps as the general loop. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "stream.h"

/* Power of two >= x. */
static uint32_t pow2_at_least(double x)
{
	uint32_t n = 1;

	while (n < x && n < (1u << 30))
		n <<= 1;
	return n;
}

/* The clock's cost, measured before the warm-up: its 21000 reads took
 * longer than all the sampled stamps of a 2M-message window, and inside the
 * window they were the receiver's wait for the first measured message. */
double stream_clock_cost_ns(const struct cell *c)
{
	struct clock_info ci;

	if (c->rate > 0 || !c->warmup)
		return 0;
	clock_measure(&ci);
	return ci.cost_ns;
}

/* From the warm-up's time per message: sample so that two clock reads per
 * sampled message cost under 1 % of the messages between samples. */
uint32_t stream_choose_sampling(double cost_ns, uint64_t warm_ns, uint64_t warm_msgs)
{
	double per_msg;

	if (!warm_msgs || !warm_ns)
		return 1;
	per_msg = (double)warm_ns / (double)warm_msgs;
	return pow2_at_least(2 * cost_ns / (0.01 * per_msg));
}

/* A transport with the batch operations both ways (a -d run too goes
 * through them: stream_send_batched reads the clock as the general loop). */
static bool stream_batched(const struct cell *c)
{
	const struct transport *tp = c->tp;

	return tp->reserve && tp->reserve_n && tp->commit_n && tp->peek_n && tp->release_n;
}

/* ... and this endpoint of it moves runs (see transport.h's runs). */
bool stream_runs(const struct cell *c, const struct tp_endpoint *ep)
{
	return stream_batched(c) && (!c->tp->runs || c->tp->runs(ep));
}

/* stream_send_fast through a batching transport (reserve_n/commit_n): the
 * same messages, header, stamps and progress, built in runs of places that
 * the transport publishes at once. A run never crosses the end of the
 * warm-up, so the window opens at the same message. With -d, the clock is
 * read before a run once 1024 messages went since the last read; once past
 * the deadline, the next message is the last (as stream_send_loop's). */
static int stream_send_batched(struct participant *p, struct tp_endpoint *ep)
{
	const struct cell *c = p->cell;
	const struct transport *tp = c->tp;
	ssize_t (*const reserve_n)(struct tp_endpoint *, void **, size_t, unsigned) = tp->reserve_n;
	int (*const commit_n)(struct tp_endpoint *, unsigned, size_t) = tp->commit_n;
	const size_t len = c->size;
	const bool verify = c->verify;
	const uint64_t warmup = c->warmup;
	const void *const src = p->buf;
	double clock_ns = stream_clock_cost_ns(c);
	uint64_t t0 = now_ns(), stamp_at = warmup, seq = 0, total = pat_total(p);
	uint64_t deadline = 0, next_check = UINT64_MAX;
	uint32_t every = 1;
	void *bufs[TP_BATCH_MAX];
	ssize_t k;
	int r;

	while (seq < total) {
		uint64_t lim;

		if (__builtin_expect(seq == warmup, 0)) {
			every = stream_choose_sampling(clock_ns, now_ns() - t0, warmup);
			p->st->sample_every = every;
			pat_window_begin(p);
			if (c->duration_ns) {
				deadline = p->st->win_start_ns + c->duration_ns;
				next_check = seq;
			}
		}
		if (__builtin_expect(seq >= next_check, 0)) {
			next_check = seq + 1024;
			if (now_ns() >= deadline)
				total = seq + 1;
		}
		lim = total - seq;
		if (seq < warmup && warmup - seq < lim)
			lim = warmup - seq;
		if (lim > TP_BATCH_MAX)
			lim = TP_BATCH_MAX;
		k = reserve_n(ep, bufs, len, (unsigned)lim);
		if (__builtin_expect(k <= 0 || (uint64_t)k > lim, 0))
			return pat_send_failed(p, (uint32_t)seq, k <= 0 ? k : -EPROTO, len);
		for (ssize_t i = 0; i < k; i++, seq++) {
			uint64_t ts = 0;

			if (__builtin_expect(seq == stamp_at, 0)) {
				ts = now_ns();
				stamp_at += every;
			}
			pat_build(bufs[i], len, (uint32_t)seq, seq + 1 == total ? MSG_F_END : 0, ts,
				  verify, src);
		}
		r = commit_n(ep, (unsigned)k, len);
		if (__builtin_expect(r < 0, 0))
			return pat_send_failed(p, (uint32_t)(seq - 1), r, len);
		pat_progress(p, seq);
		/* as stream_send_loop: for transports that never block, once
		 * every 256 messages (a run of 1 each time would cost a call) */
		if (((seq - (uint64_t)k) ^ seq) >> 8 && seq < total && pat_stopping(p))
			return -EINTR;
	}
	p->st->msgs = total > warmup ? total - warmup : 0;
	p->st->bytes = p->st->msgs * len;
	pat_window_end(p);
	return 0;
}

int stream_send_fast(struct participant *p, struct tp_endpoint *ep)
{
	const struct cell *c = p->cell;
	const struct transport *tp = c->tp;
	ssize_t (*const reserve)(struct tp_endpoint *, void **, size_t) = tp->reserve;
	ssize_t (*const commit)(struct tp_endpoint *, size_t) = tp->commit;
	ssize_t (*const send)(struct tp_endpoint *, const void *, size_t) = tp->send;
	const size_t len = c->size;
	const bool verify = c->verify;
	const uint64_t warmup = c->warmup, total = warmup + c->count;
	void *const pbuf = p->buf;
	double clock_ns = stream_clock_cost_ns(c);
	uint64_t t0 = now_ns(), stamp_at = warmup, seq;
	uint32_t every = 1;
	ssize_t r;

	if (stream_runs(c, ep))
		return stream_send_batched(p, ep);
	for (seq = 0; seq < total; seq++) {
		uint32_t flags = seq + 1 == total ? MSG_F_END : 0;
		uint64_t ts = 0;
		void *buf = pbuf;

		if (__builtin_expect(seq == warmup, 0)) {
			every = stream_choose_sampling(clock_ns, now_ns() - t0, warmup);
			p->st->sample_every = every;
			pat_window_begin(p);
		}
		if (__builtin_expect(seq == stamp_at, 0)) {
			ts = now_ns();
			stamp_at += every;
		}
		if (reserve) {
			r = reserve(ep, &buf, len);
			if (__builtin_expect(r == (ssize_t)len, 1)) {
				pat_build(buf, len, (uint32_t)seq, flags, ts, verify, pbuf);
				r = commit(ep, len);
			}
		} else {
			pat_build(pbuf, len, (uint32_t)seq, flags, ts, verify, NULL);
			r = send(ep, pbuf, len);
		}
		if (__builtin_expect(r != (ssize_t)len, 0))
			return pat_send_failed(p, (uint32_t)seq, r, len);
		pat_progress(p, seq + 1);
		/* as stream_send_loop: for transports that never block */
		if ((seq & 255) == 0 && !flags && pat_stopping(p))
			return -EINTR;
	}
	p->st->msgs = total - warmup;
	p->st->bytes = p->st->msgs * len;
	pat_window_end(p);
	return 0;
}

/* One message of the common case's receive (@n: what the transport gave):
 * its sequence and length checked inline (the out-of-line check names what
 * is wrong), its sampled stamp timed. 0 with its header's second word in
 * *w1 (the flags), -EINTR on a stop, or pat_fail()'s result. */
static inline int stream_check_one(struct participant *p, const void *msg, ssize_t n,
				   uint64_t want, size_t len, bool verify, uint64_t warmup,
				   struct hist *hist, uint32_t *w1)
{
	uint32_t w[2] = { 0, 0 };
	uint64_t ts;
	int ret;

	if (__builtin_expect(n == (ssize_t)len && !verify, 1))
		memcpy(w, msg, sizeof(w));
	if (__builtin_expect(w[0] != (uint32_t)want || (w[1] & MSG_LEN_MASK) != len ||
			     n != (ssize_t)len || verify, 0)) {
		if (n == -EINTR && pat_stopping(p))
			return -EINTR;
		ret = pat_check_msg(p, msg, n, (uint32_t)want);
		if (ret)
			return ret;
		memcpy(w, msg, sizeof(w));
	}
	memcpy(&ts, (const char *)msg + offsetof(struct msg_hdr, ts_ns), sizeof(ts));
	if (ts && want >= warmup) {
		uint64_t now = now_ns();

		hist_add(hist, now - ts);
		pat_mark(p, ts, now);
	}
	*w1 = w[1];
	return 0;
}

/* stream_recv_fast through a batching transport (peek_n/release_n): every
 * message of each run checked as there, the run handed back at once. */
static int stream_recv_batched(struct participant *p, struct tp_endpoint *ep)
{
	const struct cell *c = p->cell;
	const struct transport *tp = c->tp;
	ssize_t (*const peek_n)(struct tp_endpoint *, const void **, size_t *, unsigned) =
		tp->peek_n;
	void (*const release_n)(struct tp_endpoint *, unsigned) = tp->release_n;
	const size_t len = c->size;
	const bool verify = c->verify;
	const uint64_t warmup = c->warmup;
	struct hist *hist = p->st->hist;
	const void *msgs[TP_BATCH_MAX];
	size_t lens[TP_BATCH_MAX];
	uint64_t want = 0;
	bool end = false;
	int ret;

	if (!warmup)
		pat_window_begin(p);
	while (!end) {
		ssize_t k = peek_n(ep, msgs, lens, TP_BATCH_MAX);

		if (__builtin_expect(k <= 0 || k > (ssize_t)TP_BATCH_MAX, 0)) {
			if (k == -EINTR && pat_stopping(p))
				return -EINTR;
			return pat_check_msg(p, p->buf, k <= 0 ? k : -EPROTO, (uint32_t)want);
		}
		for (ssize_t i = 0; i < k; i++, want++) {
			uint32_t w1;

			if (__builtin_expect(end, 0))	/* a message after the last */
				return pat_fail(p, EBADMSG, "message %llu after the end marker",
						(unsigned long long)want);
			ret = stream_check_one(p, msgs[i], (ssize_t)lens[i], want, len, verify,
					       warmup, hist, &w1);
			if (ret)
				return ret;
			if (!verify)
				msg_read_in_place(msgs[i], len);
			if (want + 1 == warmup)
				pat_window_begin(p);
			if (w1 & MSG_F_END)
				end = true;
		}
		release_n(ep, (unsigned)k);
		pat_progress(p, want);
	}
	p->st->msgs = want > warmup ? want - warmup : 0;
	p->st->bytes = p->st->msgs * len;
	if (want < warmup)
		pat_window_begin(p);
	pat_window_end(p);
	return 0;
}

int stream_recv_fast(struct participant *p, struct tp_endpoint *ep, bool zc)
{
	const struct cell *c = p->cell;
	const struct transport *tp = c->tp;
	ssize_t (*const peek)(struct tp_endpoint *, const void **, size_t) = tp->peek;
	void (*const release)(struct tp_endpoint *) = tp->release;
	ssize_t (*const recv)(struct tp_endpoint *, void *, size_t) = tp->recv;
	const size_t len = c->size;
	const bool verify = c->verify;
	const uint64_t warmup = c->warmup;
	void *const pbuf = p->buf;
	struct hist *hist = p->st->hist;
	uint64_t want;
	int ret;

	if (zc && stream_runs(c, ep))
		return stream_recv_batched(p, ep);
	if (!warmup)
		pat_window_begin(p);
	for (want = 0;; want++) {
		const void *msg = pbuf;
		ssize_t n = zc ? peek(ep, &msg, len) : recv(ep, pbuf, len);
		uint32_t w1;

		ret = stream_check_one(p, msg, n, want, len, verify, warmup, hist, &w1);
		if (ret)
			return ret;
		if (zc) {
			if (!verify)
				msg_read_in_place(msg, len);
			release(ep);
		}
		pat_progress(p, want + 1);
		if (want + 1 == warmup)
			pat_window_begin(p);
		if (w1 & MSG_F_END)
			break;
	}
	p->st->msgs = want + 1 > warmup ? want + 1 - warmup : 0;
	p->st->bytes = p->st->msgs * len;
	if (want + 1 < warmup)
		pat_window_begin(p);
	pat_window_end(p);
	return 0;
}

