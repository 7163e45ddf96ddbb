// SPDX-License-Identifier: MIT
/* Fan-in (fanin.h): a server with several clients waits on all of them at
 * once, with epoll over the transports' pollable descriptors, and serves
 * whichever is ready. Level-triggered epoll hands back a descriptor that is
 * still ready at the end of its ready list, so clients that keep sending
 * are served in rotation: none starves, none waits behind a slow one.
 *
 * Where the transport can tell, without a system call, whether a client
 * has something waiting (its ready hook: shared-memory rings), the server
 * first spins over every client for -O fanin_spin, and only when all stay
 * empty arms them all and sleeps in epoll: that is how a ring server's own
 * loop waits (ipcring's dispatcher), and while it spins the clients make
 * no system call to wake it. Every client found ready is served in each
 * round, so none starves here either. */
#include <errno.h>
#include <sched.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "fanin.h"

#define FANIN_SLICE_MS 100	/* longest wait between stop checks */
#define FANIN_SPIN_CHECK 64	/* spin rounds between clock (and stop) reads */
#define FANIN_POLITE_NS 1000	/* a spin this long also yields at each clock read */

bool pat_fanin_possible(const struct participant *p, int serve_mode)
{
	const struct transport *tp = p->cell->tp;

	if (serve_mode == SERVE_IN_TURN || p->cell->clients < 2 || !tp->pollfd)
		return false;
	/* a lossy transport's receive loop is its own; a spinning one never
	 * sleeps, so it has nothing to wait on */
	if (tp->caps & (TP_LOSSY | TP_SPINS))
		return false;
	for (unsigned i = 0; i < p->cell->clients; i++)
		if (tp->pollfd(p->eps[i]) < 0)
			return false;
	return true;
}

int pat_fanin_open(struct participant *p, struct pat_fanin *f, int serve_mode,
		   uint64_t spin_ns)
{
	const struct transport *tp = p->cell->tp;

	f->n = p->cell->clients;
	f->spin = tp->ready && serve_mode == SERVE_AUTO;
	f->spin_ns = spin_ns;
	for (unsigned i = 0; i < f->n; i++)
		f->live[i] = true;
	f->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (f->epfd < 0)
		return pat_fail(p, errno, "epoll_create1: %s%s", strerror(errno),
				 errno == EMFILE ? " (raise ulimit -n)" : "");
	for (unsigned i = 0; i < f->n; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = i };

		if (epoll_ctl(f->epfd, EPOLL_CTL_ADD, tp->pollfd(p->eps[i]), &ev) < 0) {
			int e = errno;

			pat_fanin_close(f);
			return pat_fail(p, e, "epoll_ctl on client %u's endpoint: %s", i, strerror(e));
		}
	}
	return 0;
}

/* The clients that have something waiting (arming the others' pollfds
 * with @arm): their indices in ready[], the count returned. */
static int fanin_scan(struct participant *p, struct pat_fanin *f, unsigned *ready, bool arm)
{
	int (*is_ready)(struct tp_endpoint *, bool) = p->cell->tp->ready;
	int n = 0;

	for (unsigned i = 0; i < f->n; i++)
		if (f->live[i] && is_ready(p->eps[i], arm))
			ready[n++] = i;
	return n;
}

/* Spin over every client, then arm them all and sleep in epoll. Past the
 * first FANIN_POLITE_NS the spin also yields at each look at the clock:
 * the clients it waits for may have been woken onto this CPU, and with
 * more endpoints than CPUs a pure spin keeps them off it for the budget. */
static int fanin_wait_spin(struct participant *p, struct pat_fanin *f, unsigned *ready)
{
	struct epoll_event ev[MAX_CLIENTS];
	uint64_t end = 0, polite = 0;
	int n;

	for (unsigned k = 1;; k++) {
		n = fanin_scan(p, f, ready, false);
		if (n)
			return n;
		if (k % FANIN_SPIN_CHECK == 0 || !f->spin_ns) {
			uint64_t t = now_ns();

			if (!end) {
				end = t + f->spin_ns;
				polite = t + FANIN_POLITE_NS;
			}
			if (t >= end)
				break;
			if (pat_stopping(p))
				return -EINTR;
			if (t >= polite)
				sched_yield();
		}
		cpu_relax();
	}
	for (;;) {
		n = fanin_scan(p, f, ready, true);
		if (n)
			return n;
		n = epoll_wait(f->epfd, ev, MAX_CLIENTS, FANIN_SLICE_MS);
		if (n < 0 && errno != EINTR)
			return pat_fail(p, errno, "epoll_wait: %s", strerror(errno));
		n = fanin_scan(p, f, ready, false);
		if (n)
			return n;
		if (pat_stopping(p))
			return -EINTR;
	}
}

int pat_fanin_wait(struct participant *p, struct pat_fanin *f, unsigned *ready)
{
	struct epoll_event ev[MAX_CLIENTS];

	if (f->spin)
		return fanin_wait_spin(p, f, ready);
	for (;;) {
		int n = epoll_wait(f->epfd, ev, MAX_CLIENTS, FANIN_SLICE_MS);

		if (n > 0) {
			for (int k = 0; k < n; k++)
				ready[k] = ev[k].data.u32 < f->n ? ev[k].data.u32 : 0;
			return n;
		}
		if (n < 0 && errno != EINTR)
			return pat_fail(p, errno, "epoll_wait: %s", strerror(errno));
		if (pat_stopping(p))
			return -EINTR;
	}
}

void pat_fanin_drop(struct participant *p, struct pat_fanin *f, unsigned i)
{
	if (i < f->n)
		f->live[i] = false;
	epoll_ctl(f->epfd, EPOLL_CTL_DEL, p->cell->tp->pollfd(p->eps[i]), NULL);
}

void pat_fanin_close(struct pat_fanin *f)
{
	if (f->epfd >= 0)
		close(f->epfd);
	f->epfd = -1;
}

int pat_fanin_serve(struct participant *p, int recv_mode, int serve_mode, uint64_t spin_ns,
		    pat_fanin_serve_fn serve)
{
	struct pat_fanin f;
	int ret = pat_fanin_open(p, &f, serve_mode, spin_ns);

	if (ret)
		return ret;
	p->st->serve_ready = true;
	p->st->serve_spin = f.spin;
	p->st->zerocopy = pat_use_zerocopy(p, recv_mode);
	ret = serve(p, &f, p->st->zerocopy);
	pat_fanin_close(&f);
	return ret;
}
