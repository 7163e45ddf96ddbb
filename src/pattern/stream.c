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
#include "stream.h"

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

/* Stamp of message seq: when paced, the actual send time once the intended
 * one came (its lateness into the sender's paced->late), else a sampled
 * clock read (0 = not sampled). Sets *end once the duration is over. */
static uint64_t send_stamp(struct participant *p, uint64_t seq, uint32_t mask, uint64_t deadline,
			   bool *end)
{
	const struct cell *c = p->cell;
	uint64_t ts = 0;

	if (seq < c->warmup)
		return 0;
	if (c->rate > 0) {
		uint64_t intended = pat_intended(p, p->st->win_start_ns, seq - c->warmup);

		pat_wait_until(p, intended);
		ts = now_ns();
		hist_add(&p->st->paced->late, ts > intended ? ts - intended : 0);
	} else if (((seq - c->warmup) & mask) == 0) {
		ts = now_ns();
	}
	if (deadline && (ts ? ts : ((seq & 1023) == 0 ? now_ns() : 0)) >= deadline)
		*end = true;
	return ts;
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
	if (c->rate > 0) {
		if (!p->st->paced)
			return pat_fail(p, EINVAL, "paced, but no record of the pacing");
		p->st->has_paced = true;
		hist_init(&p->st->paced->late);
		hist_init(&p->st->paced->intended);	/* stays empty: see docs/patterns.md */
	}
	clock_ns = stream_clock_cost_ns(c);
	t0 = now_ns();
	for (seq = 0; seq < total; seq++) {
		bool end = seq + 1 == total;

		if (seq == c->warmup) {
			p->st->sample_every =
				c->rate > 0 ? 1 : stream_choose_sampling(clock_ns, now_ns() - t0, c->warmup);
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
	if ((ret = pat_hist_open(p)))
		return ret;
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
			if (h->ts_ns && h->seq >= c->warmup) {
				uint64_t now = now_ns();

				hist_add(p->st->hist, now - h->ts_ns);
				pat_mark(p, h->ts_ns, now);
			}
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

	if ((ret = pat_hist_open(p)))
		return ret;
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
			if (h->ts_ns && h->seq >= c->warmup) {
				uint64_t now = now_ns();

				hist_add(p->st->hist, now - h->ts_ns);
				pat_mark(p, h->ts_ns, now);
			}
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
	.lat_kind = LAT_ONE_WAY,
	.reference = PAT_REF_STREAM,
	.options = stream_options,
	.opts_size = sizeof(struct stream_opts),
	.server = stream_server,
	.client = stream_client,
};
