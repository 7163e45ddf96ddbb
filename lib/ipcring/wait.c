// SPDX-License-Identifier: MIT
/*
 * wait.c - how a side waits and how it wakes the other: a time-bounded spin,
 * then a waiter-bit eventcount (announce with one seq_cst fetch_or, re-check
 * the ring, FUTEX_WAIT on the announced value; the other side wakes only
 * when it sees the bit, after bumping the epoch). Every sleep is bounded by
 * poll_ns, after which the peer's liveness is checked (pidfd or socket).
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#define SPIN_CLOCK_EVERY	64u	/* iterations between clock reads */
#define SPIN_POLITE_NS		1000u	/* a spin this long also yields at each clock read */
#define IDLE_CHECK_EVERY	64u	/* failed non-blocking calls between checks */

/* Shared futex: never FUTEX_PRIVATE_FLAG, the word lives in a MAP_SHARED page. */
static long futex(_Atomic uint32_t *uaddr, int op, uint32_t val,
		  const struct timespec *ts)
{
	return syscall(SYS_futex, (uint32_t *)uaddr, op, val, ts, NULL, 0);
}

/* The calling thread's polling time (ipcring_thread_poll_ns). */
static __thread uint64_t thread_poll_ns;

uint64_t ipcring_thread_poll_ns(void)
{
	return thread_poll_ns;
}

void ring_poll_add(uint64_t ns)
{
	thread_poll_ns += ns;
}

uint64_t ring_deadline(int timeout_ms)
{
	if (timeout_ms == 0)
		return 0;
	if (timeout_ms < 0)
		return UINT64_MAX;
	return ring_now_ns() + (uint64_t)timeout_ms * RING_MS_NS;
}

static uint32_t ec_prepare(_Atomic uint32_t *ec)
{
	return atomic_fetch_or(ec, EC_W) | EC_W;
}

/* Withdraw an announcement that was not slept on, if nobody consumed it. */
static void ec_cancel(_Atomic uint32_t *ec, uint32_t e)
{
	atomic_compare_exchange_strong(ec, &e, e & ~EC_W);
}

/* Bump the epoch and clear the waiter bit, whatever it was. */
static void ec_bump(_Atomic uint32_t *ec)
{
	uint32_t v = atomic_load(ec);

	while (!atomic_compare_exchange_weak(ec, &v, (v + 1) & ~EC_W))
		;
}

/*
 * One read resets a (non-semaphore, non-blocking) eventfd to 0; never loop,
 * a descriptor that keeps answering must not keep the caller here.
 */
void ring_efd_drain(int efd)
{
	uint64_t v;

	if (read(efd, &v, sizeof(v)) < 0) {
		/* EAGAIN: already 0 */
	}
}

static void efd_kick(int efd)
{
	uint64_t one = 1;

	if (write(efd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is already non-zero, the reader will wake */
	}
}

/*
 * Called after a seq_cst publish (tail or head): wake the peer if, and only
 * if, it announced sleep. Costs one load when it did not.
 */
void ring_notify(struct ipcring *r)
{
	_Atomic uint32_t *ec = r->notify_ec;
	uint32_t v = atomic_load(ec);

	while (v & EC_W) {
		if (atomic_compare_exchange_weak(ec, &v, (v + 1) & ~EC_W)) {
			if (r->notify_efd >= 0)
				efd_kick(r->notify_efd);
			else
				futex(ec, FUTEX_WAKE, 1, NULL);
			stat_add(&r->my_stats->wakes, 1);
			return;
		}
	}
}

/* After a state change: bump both eventcounts, wake everybody. */
void ring_wake_all(struct ipcring *r)
{
	ec_bump(&r->shm->data_ec);
	ec_bump(&r->shm->space_ec);
	futex(&r->shm->data_ec, FUTEX_WAKE, INT_MAX, NULL);
	futex(&r->shm->space_ec, FUTEX_WAKE, INT_MAX, NULL);
	if (r->efd >= 0)
		efd_kick(r->efd);	/* poll() has no compare: always kick */
}

/* Open a pidfd for the pid the peer recorded; 1 if the peer is gone. */
static int peer_auto_pidfd(struct ipcring *r)
{
	uint32_t pid = atomic_load(r->peer_pid);
	int fd;

	if (!pid || (pid_t)pid == getpid())
		return 0;
#ifdef SYS_pidfd_open
	fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
	if (fd >= 0) {
		r->auto_pidfd = fd;
		r->peer_kind = IPCRING_PEER_PIDFD;
		return 0;
	}
	if (errno == ESRCH)
		return 1;
#endif
	r->auto_pidfd = -2;
	return 0;
}

static int peer_fd_dead(struct ipcring *r)
{
	struct pollfd pfd = { .fd = r->peer_fd };
	short bad;

	if (pfd.fd < 0) {
		if (r->auto_pidfd == -1 &&
		    atomic_load(r->peer_state) == ST_ALIVE && peer_auto_pidfd(r))
			return 1;
		pfd.fd = r->auto_pidfd;
		if (pfd.fd < 0)
			return 0;
	}
	if (r->peer_kind == IPCRING_PEER_SOCKET) {
		pfd.events = POLLRDHUP;
		bad = POLLHUP | POLLRDHUP | POLLERR | POLLNVAL;
	} else {
		pfd.events = POLLIN;
		bad = POLLIN | POLLHUP | POLLERR | POLLNVAL;
	}
	if (poll(&pfd, 1, 0) <= 0)
		return 0;
	return (pfd.revents & bad) != 0;
}

/*
 * A peer that has not attached IPCRING_ATTACH_POLLS liveness periods after
 * this side did, when no peer fd was given, is taken for dead: it may have
 * died before attaching, and nothing else would ever tell.
 */
static bool peer_never_came(const struct ipcring *r, uint32_t st)
{
	return st == ST_INIT && r->peer_fd < 0 &&
	       ring_now_ns() - r->attach_ns >= r->poll_ns * IPCRING_ATTACH_POLLS;
}

/* 0 if the peer may be alive (or closed gracefully), -EPIPE if dead. */
int ring_peer_check(struct ipcring *r)
{
	uint32_t st = atomic_load(r->peer_state);

	r->last_check_ns = ring_now_ns();
	if (st == ST_DEAD)
		return -EPIPE;
	if (st == ST_CLOSED)
		return 0;
	if (!peer_never_came(r, st) && !peer_fd_dead(r))
		return 0;
	ipcring_mark_peer_dead(r);
	return -EPIPE;
}

/* Non-blocking call that found nothing: an occasional liveness check. */
static int ring_idle(struct ipcring *r, ring_ready_fn ready)
{
	uint64_t now;

	if (++r->idle_polls % IDLE_CHECK_EVERY)
		return -EAGAIN;
	now = ring_now_ns();
	if (now - r->last_check_ns < r->poll_ns)
		return -EAGAIN;
	if (ring_peer_check(r))
		return ready(r, true);
	return -EAGAIN;
}

/*
 * Spin for the budget. Past its first SPIN_POLITE_NS the spinner also
 * yields at each look at the clock: the peer it waits for may have been
 * woken onto this very CPU (the scheduler puts a wakee beside its waker),
 * and a pure spin would keep it off the CPU for the whole budget. With no
 * other task to run the yield returns at once; a reply across CPUs in
 * under SPIN_POLITE_NS never meets one.
 */
static int ring_spin(struct ipcring *r, ring_ready_fn ready, uint64_t deadline)
{
	uint64_t now, end, polite, start;
	unsigned int i;
	int ret;

	if (!r->spin_ns)
		return 0;
	now = ring_now_ns();
	end = now + r->spin_ns;
	if (end > deadline)
		end = deadline;
	polite = now + SPIN_POLITE_NS;
	start = now;
	for (i = 1;; i++) {
		ring_cpu_relax();
		ret = ready(r, false);
		if (ret) {
			/* to the last clock read (at most SPIN_CLOCK_EVERY
			 * iterations short): no clock read on the way out of a
			 * spin that found its record */
			thread_poll_ns += now - start;
			return ret;
		}
		if (i % SPIN_CLOCK_EVERY)
			continue;
		now = ring_now_ns();
		if (now >= end) {
			thread_poll_ns += now - start;
			return 0;
		}
		if (now >= polite)
			sched_yield();
	}
}

/* IPCRING_WAIT_SPIN_ONLY after the spin budget: yield between bursts. */
static int ring_yield(struct ipcring *r, ring_ready_fn ready, uint64_t deadline)
{
	uint64_t start = ring_now_ns(), now, next_check = start + r->poll_ns;
	unsigned int i;
	int ret;

	for (;;) {
		for (i = 0; i < SPIN_CLOCK_EVERY; i++) {
			ret = ready(r, false);
			if (ret) {
				thread_poll_ns += ring_now_ns() - start;
				return ret;
			}
			ring_cpu_relax();
		}
		sched_yield();
		now = ring_now_ns();
		if (now >= next_check) {
			next_check = now + r->poll_ns;
			if (ring_peer_check(r)) {
				thread_poll_ns += now - start;
				return ready(r, true);
			}
		}
		if (now >= deadline) {
			thread_poll_ns += now - start;
			return -ETIMEDOUT;
		}
	}
}

/* One bounded sleep on @e: 0 woken/changed/interrupted, -ETIMEDOUT. */
static int ring_sleep_once(struct ipcring *r, uint32_t e, uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / 1000000000u),
		.tv_nsec = (long)(ns % 1000000000u),
	};
	struct pollfd pfd = { .fd = r->wait_efd, .events = POLLIN };
	int n;

	stat_add(&r->my_stats->sleeps, 1);
	if (r->wait_efd >= 0) {
		n = ppoll(&pfd, 1, &ts, NULL);
		return n == 0 ? -ETIMEDOUT : 0;
	}
	if (futex(r->wait_ec, FUTEX_WAIT, e, &ts) < 0 && errno == ETIMEDOUT)
		return -ETIMEDOUT;
	return 0;
}

static int ring_sleep(struct ipcring *r, ring_ready_fn ready, uint64_t deadline)
{
	uint64_t now;
	uint32_t e;
	int ret;

	for (;;) {
		if (r->wait_efd >= 0)
			ring_efd_drain(r->wait_efd);
		e = ec_prepare(r->wait_ec);
		ret = ready(r, true);		/* the seq_cst re-check */
		if (ret)
			break;
		now = ring_now_ns();
		if (now >= deadline) {
			ret = -ETIMEDOUT;
			break;
		}
		ret = ring_sleep_once(r, e, deadline - now < r->poll_ns ?
					    deadline - now : r->poll_ns);
		/* every poll period, even when the eventcount keeps changing */
		if ((ret == -ETIMEDOUT ||
		     ring_now_ns() - r->last_check_ns >= r->poll_ns) &&
		    ring_peer_check(r)) {
			ret = ready(r, true);
			break;
		}
		ret = ready(r, false);
		if (ret)
			break;
	}
	ec_cancel(r->wait_ec, e);
	return ret;
}

/*
 * Wait until ready() says go (1) or fails (< 0). @deadline: 0 = do not
 * wait (-EAGAIN), UINT64_MAX = forever, else absolute CLOCK_MONOTONIC ns.
 */
int ring_wait(struct ipcring *r, ring_ready_fn ready, uint64_t deadline)
{
	int ret;

	ret = ready(r, false);
	if (ret)
		return ret;
	if (!deadline)
		return ring_idle(r, ready);
	stat_add(&r->my_stats->spins, 1);
	ret = ring_spin(r, ready, deadline);
	if (ret)
		return ret;
	if (r->wait_mode == IPCRING_WAIT_SPIN_ONLY)
		return ring_yield(r, ready, deadline);
	return ring_sleep(r, ready, deadline);
}
