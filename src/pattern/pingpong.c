// SPDX-License-Identifier: MIT
/* pingpong: the client sends a request of S bytes, the server answers with
 * a reply of S bytes, one exchange at a time (seed 004's "exchanges").
 * Reports the round-trip time of every exchange and exchanges/s. */
#include <stddef.h>

#include "common.h"
#include "fanin.h"

struct pingpong_opts {
	int recv_mode;
	int serve;	/* SERVE_AUTO / SERVE_IN_TURN / SERVE_EPOLL */
	uint64_t fanin_spin_ns;
};

static const struct opt_desc pingpong_options[] = {
	{ .name = "recv", .type = OPT_CHOICE, .offset = offsetof(struct pingpong_opts, recv_mode),
	  .def = "auto", .choices = "auto|copy|peek",
	  .help = "receive by copy, or in place where the transport can (auto)" },
	PAT_FANIN_OPTIONS(struct pingpong_opts, serve, fanin_spin_ns, "several clients"),
	{ 0 },
};

static int pingpong_client(struct participant *p)
{
	const struct cell *c = p->cell;
	const struct pingpong_opts *o = c->pat_opts;
	bool zc = pat_use_zerocopy(p, o->recv_mode);
	uint64_t total = pat_total(p), deadline = 0, seq;
	const struct msg_hdr *h;
	int ret;

	p->st->zerocopy = zc;
	if ((ret = pat_hist_open(p)))
		return ret;
	if (c->rate > 0) {
		if (!p->st->paced)
			return pat_fail(p, EINVAL, "paced, but no record of the pacing");
		p->st->has_paced = true;
		hist_init(&p->st->paced->intended);
		hist_init(&p->st->paced->late);
	}
	for (seq = 0; seq < total; seq++) {
		uint32_t flags = seq + 1 == total ? MSG_F_END : 0;
		uint64_t t0, t1, intended = 0;

		if (seq == c->warmup) {
			pat_window_begin(p);
			if (c->duration_ns)
				deadline = p->st->win_start_ns + c->duration_ns;
		}
		if (c->rate > 0 && seq >= c->warmup) {
			/* paced: the round trip counts from the actual send (the
			 * IPC's own); from the intended time too, and the lateness */
			intended = pat_intended(p, p->st->win_start_ns, seq - c->warmup);
			pat_wait_until(p, intended);
		}
		t0 = now_ns();
		if (deadline && t0 >= deadline)
			flags = MSG_F_END;
		ret = pat_send(p, p->ep, (uint32_t)seq, flags, 0);
		if (!ret)
			ret = pat_recv(p, p->ep, (uint32_t)seq, &h, zc);
		if (ret)
			return ret;
		pat_recv_done(p, p->ep, zc);
		t1 = now_ns();
		if (seq >= c->warmup) {
			hist_add(p->st->hist, t1 - t0);
			if (intended) {
				hist_add(&p->st->paced->intended, t1 - intended);
				hist_add(&p->st->paced->late, t0 > intended ? t0 - intended : 0);
			}
			pat_mark(p, t0, t1);
		}
		pat_progress(p, seq + 1);
		if (flags & MSG_F_END)
			break;
		pat_think(p);
		if (pat_stopping(p))
			return -EINTR;
	}
	p->st->msgs = seq + 1 > c->warmup ? seq + 1 - c->warmup : 0;
	p->st->bytes = 2 * p->st->msgs * c->size;
	pat_window_end(p);
	return 0;
}

/* Serve whichever client is ready (fan-in), one exchange each time it is,
 * until each has sent its last request. Each client keeps its own sequence;
 * the window opens once as many exchanges as the in-turn server's warm-up
 * rounds are served. */
static int pingpong_serve_ready(struct participant *p, struct pat_fanin *f, bool zc)
{
	const struct cell *c = p->cell;
	uint64_t seq[MAX_CLIENTS] = { 0 }, served = 0, warm = c->warmup * c->clients;
	bool done[MAX_CLIENTS] = { false }, in_window = false;
	unsigned left = c->clients, ready[MAX_CLIENTS];
	const struct msg_hdr *h;
	int n, ret;

	while (left) {
		n = pat_fanin_wait(p, f, ready);
		if (n < 0)
			return n;
		for (int k = 0; k < n; k++) {
			unsigned i = ready[k];

			if (done[i])
				continue;
			if (!in_window && served >= warm) {
				pat_window_begin(p);
				in_window = true;
			}
			ret = pat_recv(p, p->eps[i], (uint32_t)seq[i], &h, zc);
			if (ret)
				return ret;
			uint32_t end = h->len & MSG_F_END;

			pat_recv_done(p, p->eps[i], zc);
			ret = pat_send(p, p->eps[i], (uint32_t)seq[i], end, 0);
			if (ret)
				return ret;
			seq[i]++;
			served++;
			if (end) {
				done[i] = true;
				left--;
				pat_fanin_drop(p, f, i);
			}
		}
		pat_progress(p, served);
		pat_think(p);
	}
	if (!in_window)
		pat_window_begin(p);
	p->st->msgs = served > warm ? served - warm : 0;
	p->st->bytes = 2 * p->st->msgs * c->size;
	pat_window_end(p);
	return 0;
}

/* Serve every client in turn, one exchange each, until each has sent its
 * last request. */
static int pingpong_serve_in_turn(struct participant *p)
{
	const struct cell *c = p->cell;
	const struct pingpong_opts *o = c->pat_opts;
	bool zc = pat_use_zerocopy(p, o->recv_mode);
	bool done[MAX_CLIENTS] = { false };
	unsigned left = c->clients;
	const struct msg_hdr *h;
	uint64_t seq;
	int ret;

	p->st->zerocopy = zc;
	for (seq = 0; left; seq++) {
		if (seq == c->warmup)
			pat_window_begin(p);
		for (unsigned i = 0; i < c->clients; i++) {
			if (done[i])
				continue;
			ret = pat_recv(p, p->eps[i], (uint32_t)seq, &h, zc);
			if (ret)
				return ret;
			uint32_t end = h->len & MSG_F_END;

			pat_recv_done(p, p->eps[i], zc);
			ret = pat_send(p, p->eps[i], (uint32_t)seq, end, 0);
			if (ret)
				return ret;
			if (end) {
				done[i] = true;
				left--;
			}
		}
		pat_progress(p, seq + 1);
		pat_think(p);
	}
	p->st->msgs = seq > c->warmup ? (seq - c->warmup) * c->clients : 0;
	p->st->bytes = 2 * p->st->msgs * c->size;
	pat_window_end(p);
	return 0;
}

static int pingpong_server(struct participant *p)
{
	const struct pingpong_opts *o = p->cell->pat_opts;

	if (!pat_fanin_possible(p, o->serve))
		return pingpong_serve_in_turn(p);
	return pat_fanin_serve(p, o->recv_mode, o->serve, o->fanin_spin_ns, pingpong_serve_ready);
}

const struct pattern pat_pingpong = {
	.name = "pingpong",
	.summary = "request and reply of S bytes, one at a time (round-trip latency, exchanges/s)",
	.lat_kind = LAT_RTT,
	.reference = PAT_REF_PINGPONG,
	.options = pingpong_options,
	.opts_size = sizeof(struct pingpong_opts),
	.server = pingpong_server,
	.client = pingpong_client,
};
