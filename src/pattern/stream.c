// SPDX-License-Identifier: MIT
/* stream: one side sends N messages of S bytes as fast as it can, the other
 * receives them (seeds 000 and 002). Reports each side's elapsed time,
 * messages/s, bytes/s and a one-way delivery latency measured on a sample
 * of messages: the sender stamps every Nth message, N chosen during warm-up
 * so that clock reads cost under 1 % of a message. The latency includes
 * queueing in the transport (a fast sender fills the buffer). */
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "fanin.h"

struct stream_opts {
	int dir;	/* 0: client -> server, 1: server -> client */
	int recv_mode;	/* RECV_AUTO / RECV_COPY / RECV_PEEK */
	int serve;	/* SERVE_AUTO / SERVE_IN_TURN / SERVE_EPOLL (c2s, several clients) */
	uint64_t fanin_spin_ns;
};

static const struct opt_desc stream_options[] = {
	{ .name = "dir", .type = OPT_CHOICE, .offset = offsetof(struct stream_opts, dir),
	  .def = "c2s", .choices = "c2s|s2c",
	  .help = "direction: client to server (c2s) or server to client (s2c)" },
	{ .name = "recv", .type = OPT_CHOICE, .offset = offsetof(struct stream_opts, recv_mode),
	  .def = "auto", .choices = "auto|copy|peek",
	  .help = "receive by copy, or in place where the transport can (auto)" },
	PAT_FANIN_OPTIONS(struct stream_opts, serve, fanin_spin_ns, "c2s with several clients"),
	{ 0 },
};

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
static double clock_cost_ns(const struct cell *c)
{
	struct clock_info ci;

	if (c->rate > 0 || !c->warmup)
		return 0;
	clock_measure(&ci);
	return ci.cost_ns;
}

/* From the warm-up's time per message: sample so that two clock reads per
 * sampled message cost under 1 % of the messages between samples. */
static uint32_t choose_sampling(double cost_ns, uint64_t warm_ns, uint64_t warm_msgs)
{
	double per_msg;

	if (!warm_msgs || !warm_ns)
		return 1;
	per_msg = (double)warm_ns / (double)warm_msgs;
	return pow2_at_least(2 * cost_ns / (0.01 * per_msg));
}

/* Endpoints this side talks to: the server's one per client, or the client's. */
static unsigned side_eps(struct participant *p, struct tp_endpoint ***eps)
{
	if (p->role == TP_SERVER) {
		*eps = p->eps;
		return p->cell->clients;
	}
	*eps = &p->ep;
	return 1;
}

/* Stamp of message seq: the intended send time when paced, else a sampled
 * clock read (0 = not sampled). Sets *end once the duration is over. */
static uint64_t send_stamp(struct participant *p, uint64_t seq, uint32_t mask, uint64_t deadline,
			   bool *end)
{
	const struct cell *c = p->cell;
	uint64_t ts = 0;

	if (seq < c->warmup)
		return 0;
	if (c->rate > 0) {
		ts = pat_intended(p, p->st->win_start_ns, seq - c->warmup);
		pat_wait_until(p, ts);
	} else if (((seq - c->warmup) & mask) == 0) {
		ts = now_ns();
	}
	if (deadline && (ts ? ts : ((seq & 1023) == 0 ? now_ns() : 0)) >= deadline)
		*end = true;
	return ts;
}

/* A transport with the batch operations both ways (a -d run too goes
 * through them: stream_send_batched reads the clock as the general loop). */
static bool stream_batched(const struct cell *c)
{
	const struct transport *tp = c->tp;

	return tp->reserve && tp->reserve_n && tp->commit_n && tp->peek_n && tp->release_n;
}

/* ... and this endpoint of it moves runs (see transport.h's runs). */
static bool stream_runs(const struct cell *c, const struct tp_endpoint *ep)
{
	return stream_batched(c) && (!c->tp->runs || c->tp->runs(ep));
}

/* The common case on a loop of its own: one endpoint, a count of messages,
 * no pacing, no think, a transport that loses nothing. The same header,
 * checks and sampled stamps as stream_send_loop, with what it reads of the
 * cell in locals (the transport's calls are opaque to the compiler, which
 * would otherwise load them again after each). */
static bool stream_fast(const struct participant *p, unsigned n, struct tp_endpoint *const *eps)
{
	const struct cell *c = p->cell;

	return n == 1 && (!c->duration_ns || stream_runs(c, eps[0])) && !(c->rate > 0) &&
	       !c->think && !c->think_iters && !(c->tp->caps & TP_LOSSY);
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
	double clock_ns = clock_cost_ns(c);
	uint64_t t0 = now_ns(), stamp_at = warmup, seq = 0, total = pat_total(p);
	uint64_t deadline = 0, next_check = UINT64_MAX;
	uint32_t every = 1;
	void *bufs[TP_BATCH_MAX];
	ssize_t k;
	int r;

	while (seq < total) {
		uint64_t lim;

		if (__builtin_expect(seq == warmup, 0)) {
			every = choose_sampling(clock_ns, now_ns() - t0, warmup);
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
				  verify, true);
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

static int stream_send_fast(struct participant *p, struct tp_endpoint *ep)
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
	double clock_ns = clock_cost_ns(c);
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
			every = choose_sampling(clock_ns, now_ns() - t0, warmup);
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
				pat_build(buf, len, (uint32_t)seq, flags, ts, verify, true);
				r = commit(ep, len);
			}
		} else {
			pat_build(pbuf, len, (uint32_t)seq, flags, ts, verify, false);
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

static int stream_send_loop(struct participant *p)
{
	const struct cell *c = p->cell;
	struct tp_endpoint **eps;
	unsigned n = side_eps(p, &eps);
	double clock_ns;
	uint64_t total = pat_total(p), t0, deadline = 0, seq;
	uint32_t mask = 0;
	int ret;

	if (stream_fast(p, n, eps))
		return stream_send_fast(p, eps[0]);
	clock_ns = clock_cost_ns(c);
	t0 = now_ns();
	for (seq = 0; seq < total; seq++) {
		bool end = seq + 1 == total;

		if (seq == c->warmup) {
			p->st->sample_every =
				c->rate > 0 ? 1 : choose_sampling(clock_ns, now_ns() - t0, c->warmup);
			mask = p->st->sample_every - 1;
			pat_window_begin(p);
			if (c->duration_ns)
				deadline = p->st->win_start_ns + c->duration_ns;
		}
		uint64_t ts = send_stamp(p, seq, mask, deadline, &end);

		/* a lossy transport drops what a full receiver cannot queue, the
		 * last message too: repeat it, backing off so the receiver drains */
		unsigned copies = end && (c->tp->caps & TP_LOSSY) ? 6 : 1;

		for (unsigned i = 0; i < n; i++) {
			ret = pat_send(p, eps[i], (uint32_t)seq, end ? MSG_F_END : 0, ts);
			if (ret)
				return ret;
		}
		/* the copies may find the receiver gone (it saw one): ignore errors */
		for (unsigned k = 1; k < copies; k++) {
			usleep(500u << k);
			for (unsigned i = 0; i < n; i++)
				(void)!c->tp->send(eps[i], p->buf, c->size);
		}
		pat_progress(p, seq + 1);
		pat_think(p);
		if (end)
			break;
		/* a blocked send returns -EINTR on a stop; polling the flag
		 * is for transports that never block, and need not be often */
		if ((seq & 255) == 0 && pat_stopping(p))
			return -EINTR;
	}
	p->st->msgs = (seq + 1 - c->warmup) * n;
	p->st->bytes = p->st->msgs * c->size;
	pat_window_end(p);
	return 0;
}

/* A lossy transport (udp): a gap in sequence numbers is counted as lost, an
 * older number as reordered or duplicated, never as an error; length and
 * payload are still checked. */
enum { RX_SKIP = 0, RX_USE = 1, RX_CLOSED = 2 };

static int lossy_recv(struct participant *p, struct tp_endpoint *ep, uint64_t *want)
{
	const struct msg_hdr *h = p->buf;
	ssize_t got = p->cell->tp->recv(ep, p->buf, p->cell->size);

	if (got == -EINTR && pat_stopping(p))
		return -EINTR;
	if (got == 0)
		return RX_CLOSED;	/* the sender closed; its last messages may be lost */
	if (got < 0)
		return pat_check_msg(p, h, got, (uint32_t)*want);
	if (h->seq < *want) {
		p->st->reorders++;
		return RX_SKIP;
	}
	if (h->seq > *want)
		p->st->lost += h->seq - *want;
	*want = h->seq;
	int ret = pat_check_msg(p, h, got, h->seq);

	return ret ? ret : RX_USE;
}

static int stream_recv_one(struct participant *p, struct tp_endpoint *ep, uint64_t *want,
			   const struct msg_hdr **h, bool zc, bool lossy)
{
	int ret;

	if (lossy) {
		*h = p->buf;
		return lossy_recv(p, ep, want);
	}
	ret = pat_recv(p, ep, (uint32_t)*want, h, zc);
	return ret ? ret : RX_USE;
}

/* stream_recv_loop's common case (stream_fast): the same checks of every
 * message's length and sequence (the out-of-line check names what is
 * wrong), the sampled one-way latency, the end marker. */
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
	if (ts && want >= warmup)
		hist_add(hist, now_ns() - ts);
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
	struct hist *hist = &p->st->hist;
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

static int stream_recv_fast(struct participant *p, struct tp_endpoint *ep, bool zc)
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
	struct hist *hist = &p->st->hist;
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
		if (zc)
			release(ep);
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

static int stream_recv_loop(struct participant *p, int recv_mode)
{
	const struct cell *c = p->cell;
	const bool lossy = c->tp->caps & TP_LOSSY;
	bool zc = !lossy && pat_use_zerocopy(p, recv_mode), done[MAX_CLIENTS] = { false };
	bool in_window = false;
	struct tp_endpoint **eps;
	unsigned n = side_eps(p, &eps), left = n;
	uint64_t want[MAX_CLIENTS] = { 0 }, got = 0, round;
	const struct msg_hdr *h;
	int ret;

	p->st->zerocopy = zc;
	p->st->has_hist = true;
	if (stream_fast(p, n, eps))
		return stream_recv_fast(p, eps[0], zc);
	for (round = 0; left; round++) {
		for (unsigned i = 0; i < n; i++) {
			if (done[i])
				continue;
			if (!in_window && want[i] >= c->warmup) {
				pat_window_begin(p);
				in_window = true;
			}
			ret = stream_recv_one(p, eps[i], &want[i], &h, zc, lossy);
			if (ret < 0)
				return ret;
			if (ret == RX_SKIP)
				continue;
			if (ret == RX_CLOSED || (h->len & MSG_F_END)) {
				done[i] = true;
				left--;
			}
			if (ret != RX_USE)
				continue;
			if (h->ts_ns && h->seq >= c->warmup)
				hist_add(&p->st->hist, now_ns() - h->ts_ns);
			pat_recv_done(p, eps[i], zc);
			if (want[i]++ >= c->warmup)
				got++;
		}
		pat_progress(p, round + 1);
		pat_think(p);
	}
	if (!in_window)
		pat_window_begin(p);
	p->st->msgs = got;
	p->st->bytes = got * c->size;
	pat_window_end(p);
	return 0;
}

/* The server's receive loop with fan-in: from whichever client is ready,
 * each client's sequence its own; the window opens, as in turn, when the
 * first client is past its warm-up. */
static int stream_recv_ready(struct participant *p, struct pat_fanin *f, bool zc)
{
	const struct cell *c = p->cell;
	bool done[MAX_CLIENTS] = { false }, in_window = false;
	unsigned left = c->clients, ready[MAX_CLIENTS];
	uint64_t want[MAX_CLIENTS] = { 0 }, got = 0, moved = 0;
	const struct msg_hdr *h;
	int n, ret;

	p->st->has_hist = true;
	while (left) {
		n = pat_fanin_wait(p, f, ready);
		if (n < 0)
			return n;
		for (int k = 0; k < n; k++) {
			unsigned i = ready[k];

			if (done[i])
				continue;
			if (!in_window && want[i] >= c->warmup) {
				pat_window_begin(p);
				in_window = true;
			}
			ret = pat_recv(p, p->eps[i], (uint32_t)want[i], &h, zc);
			if (ret)
				return ret;
			if (h->len & MSG_F_END) {
				done[i] = true;
				left--;
				pat_fanin_drop(p, f, i);
			}
			if (h->ts_ns && h->seq >= c->warmup)
				hist_add(&p->st->hist, now_ns() - h->ts_ns);
			pat_recv_done(p, p->eps[i], zc);
			if (want[i]++ >= c->warmup)
				got++;
			moved++;
		}
		pat_progress(p, moved);
		pat_think(p);
	}
	if (!in_window)
		pat_window_begin(p);
	p->st->msgs = got;
	p->st->bytes = got * c->size;
	pat_window_end(p);
	return 0;
}

static int stream_server(struct participant *p)
{
	const struct stream_opts *o = p->cell->pat_opts;

	if (o->dir)
		return stream_send_loop(p);
	if (!pat_fanin_possible(p, o->serve))
		return stream_recv_loop(p, o->recv_mode);
	return pat_fanin_serve(p, o->recv_mode, o->serve, o->fanin_spin_ns, stream_recv_ready);
}

static int stream_client(struct participant *p)
{
	const struct stream_opts *o = p->cell->pat_opts;

	return o->dir ? stream_recv_loop(p, o->recv_mode) : stream_send_loop(p);
}

const struct pattern pat_stream = {
	.name = "stream",
	.summary = "one side sends N messages as fast as it can, the other receives (throughput, one-way latency)",
	.lat_kind = "one_way",
	.options = stream_options,
	.opts_size = sizeof(struct stream_opts),
	.server = stream_server,
	.client = stream_client,
};
