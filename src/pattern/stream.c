// SPDX-License-Identifier: MIT
/* stream: one side sends N messages of S bytes as fast as it can, the other
 * receives them (seeds 000 and 002). Reports each side's elapsed time,
 * messages/s, bytes/s and a one-way delivery latency measured on a sample
 * of messages: the sender stamps every Nth message, N chosen during warm-up
 * so that clock reads cost under 1 % of a message. The latency includes
 * queueing in the transport (a fast sender fills the buffer). */
#include <stddef.h>
#include <string.h>

#include "common.h"

struct stream_opts {
	int dir;	/* 0: client -> server, 1: server -> client */
	int recv_mode;	/* RECV_AUTO / RECV_COPY / RECV_PEEK */
};

static const struct opt_desc stream_options[] = {
	{ .name = "dir", .type = OPT_CHOICE, .offset = offsetof(struct stream_opts, dir),
	  .def = "c2s", .choices = "c2s|s2c",
	  .help = "direction: client to server (c2s) or server to client (s2c)" },
	{ .name = "recv", .type = OPT_CHOICE, .offset = offsetof(struct stream_opts, recv_mode),
	  .def = "auto", .choices = "auto|copy|peek",
	  .help = "receive by copy, or in place where the transport can (auto)" },
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

/* From the warm-up's time per message: sample so that two clock reads per
 * sampled message cost under 1 % of the messages between samples. */
static uint32_t choose_sampling(uint64_t warm_ns, uint64_t warm_msgs)
{
	struct clock_info ci;
	double per_msg;

	if (!warm_msgs || !warm_ns)
		return 1;
	clock_measure(&ci);
	per_msg = (double)warm_ns / (double)warm_msgs;
	return pow2_at_least(2 * ci.cost_ns / (0.01 * per_msg));
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

static int stream_send_loop(struct participant *p)
{
	const struct cell *c = p->cell;
	struct tp_endpoint **eps;
	unsigned n = side_eps(p, &eps);
	uint64_t total = pat_total(p), t0 = now_ns(), deadline = 0, seq;
	uint32_t mask = 0;
	int ret;

	for (seq = 0; seq < total; seq++) {
		bool end = seq + 1 == total;

		if (seq == c->warmup) {
			p->st->sample_every = c->rate > 0 ? 1 : choose_sampling(now_ns() - t0, c->warmup);
			mask = p->st->sample_every - 1;
			part_window_begin(p);
			if (c->duration_ns)
				deadline = p->st->win_start_ns + c->duration_ns;
		}
		uint64_t ts = send_stamp(p, seq, mask, deadline, &end);

		for (unsigned i = 0; i < n; i++) {
			ret = pat_send(p, eps[i], (uint32_t)seq, end ? MSG_F_END : 0, ts);
			if (ret)
				return ret;
		}
		part_progress(p, seq + 1);
		pat_think(p);
		if (end)
			break;
		if (part_stopping(p))
			return -EINTR;
	}
	p->st->msgs = (seq + 1 - c->warmup) * n;
	p->st->bytes = p->st->msgs * c->size;
	part_window_end(p);
	return 0;
}

static int stream_recv_loop(struct participant *p, int recv_mode)
{
	const struct cell *c = p->cell;
	bool zc = pat_use_zerocopy(p, recv_mode), done[MAX_CLIENTS] = { false };
	struct tp_endpoint **eps;
	unsigned n = side_eps(p, &eps), left = n;
	uint64_t seq, got = 0;
	const struct msg_hdr *h;
	int ret;

	p->st->zerocopy = zc;
	p->st->has_hist = true;
	for (seq = 0; left; seq++) {
		if (seq == c->warmup)
			part_window_begin(p);
		for (unsigned i = 0; i < n; i++) {
			if (done[i])
				continue;
			ret = pat_recv(p, eps[i], (uint32_t)seq, &h, zc);
			if (ret)
				return ret;
			if (h->ts_ns && seq >= c->warmup)
				hist_add(&p->st->hist, now_ns() - h->ts_ns);
			if (h->len & MSG_F_END) {
				done[i] = true;
				left--;
			}
			pat_recv_done(p, eps[i], zc);
			if (seq >= c->warmup)
				got++;
		}
		part_progress(p, seq + 1);
		pat_think(p);
	}
	p->st->msgs = got;
	p->st->bytes = got * c->size;
	part_window_end(p);
	return 0;
}

static int stream_server(struct participant *p)
{
	const struct stream_opts *o = p->cell->pat_opts;

	return o->dir ? stream_send_loop(p) : stream_recv_loop(p, o->recv_mode);
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
