// SPDX-License-Identifier: MIT
/* libqb-ipc (libqb_ipc.c): the server's qb_loop. The poll handlers libqb's
 * qb_ipcs calls (qb_loop's own, as corosync sets them) wrapped so that a
 * connection whose queue is long is polled no more until it is drained
 * (qi_hold); the 100 ms timerfd that ends each run of the loop so that a
 * stop is seen; a run until something for one slot is there, and one turn
 * without blocking. */
#include <poll.h>
#include <stdint.h>
#include <unistd.h>

#include "libqb_ipc.h"

#ifdef HAVE_LIBQB

_Thread_local struct qi_srv *qi_serving;

static struct qi_fd *qi_fd_find(struct qi_srv *s, int fd)
{
	for (unsigned i = 0; i < s->nfds; i++)
		if (s->fds[i].fd == fd)
			return &s->fds[i];
	return NULL;
}

static struct qi_slot *qi_slot_of_fd(struct qi_srv *s, int fd)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->slot[i].fd == fd && s->slot[i].c)
			return &s->slot[i];
	return NULL;
}

/* What is polled: what libqb wants, less the requests of a held one. */
static int32_t qi_events(struct qi_srv *s, const struct qi_fd *f)
{
	struct qi_slot *sl = qi_slot_of_fd(s, f->fd);

	return sl && sl->held ? f->events & POLLOUT : f->events;
}

int32_t qi_dispatch_add(enum qb_loop_priority p, int32_t fd, int32_t events, void *data,
			qb_ipcs_dispatch_fn_t fn)
{
	struct qi_srv *s = qi_serving;
	struct qi_fd *f = s ? qi_fd_find(s, -1) : NULL;
	int32_t r;

	if (!f)
		return -EMFILE;
	*f = (struct qi_fd){ .fd = fd, .prio = p, .events = events, .data = data, .fn = fn };
	r = qb_loop_poll_add(s->loop, p, fd, events, data, fn);
	if (r)
		f->fd = -1;
	return r;
}

int32_t qi_dispatch_mod(enum qb_loop_priority p, int32_t fd, int32_t events, void *data,
			qb_ipcs_dispatch_fn_t fn)
{
	struct qi_srv *s = qi_serving;
	struct qi_fd *f = s ? qi_fd_find(s, fd) : NULL;

	if (!f)
		return -ENOENT;
	f->prio = p;
	f->events = events;
	f->data = data;
	f->fn = fn;
	return qb_loop_poll_mod(s->loop, p, fd, qi_events(s, f), data, fn);
}

int32_t qi_dispatch_del(int32_t fd)
{
	struct qi_srv *s = qi_serving;
	struct qi_fd *f = s ? qi_fd_find(s, fd) : NULL;

	if (!f)
		return -ENOENT;
	f->fd = -1;
	return qb_loop_poll_del(s->loop, fd);
}

int32_t qi_job_add(enum qb_loop_priority p, void *data, qb_loop_job_dispatch_fn fn)
{
	struct qi_srv *s = qi_serving;

	return s ? qb_loop_job_add(s->loop, p, data, fn) : -EINVAL;
}

/* Poll a connection's requests no more (on), or again (off). */
void qi_hold(struct qi_slot *sl, bool on)
{
	struct qi_srv *s = sl->srv;
	struct qi_fd *f = sl->fd >= 0 ? qi_fd_find(s, sl->fd) : NULL;

	sl->held = on;
	if (f)
		(void)qb_loop_poll_mod(s->loop, f->prio, f->fd, qi_events(s, f), f->data, f->fn);
}

/* Something for the slot the server waits on: end the loop's run. */
void qi_wake(struct qi_srv *s, const struct qi_slot *sl)
{
	if (s->want == (int)sl->id)
		qb_loop_stop(s->loop);
}

/* The slice: a timerfd in the loop (the kernel's, whatever signals do to
 * the loop's own timers), which ends each run so that stop is seen. */
int32_t qi_tick(int32_t fd, int32_t revents, void *data)
{
	struct qi_srv *s = data;
	uint64_t n = 0;

	(void)revents;
	if (read(fd, &n, sizeof(n)) == sizeof(n))
		s->ticks += (unsigned)n;
	qb_loop_stop(s->loop);
	return 0;
}

static void qi_stop_now(void *data)
{
	qb_loop_stop(data);
}

/* Run the loop until something for slot want is there, or for a slice. */
int qi_run(struct qi_srv *s, int want)
{
	s->want = want;
	qi_serving = s;
	qb_loop_run(s->loop);
	s->want = -1;
	return 0;
}

/* One turn of the loop without blocking (a writer waiting for room): what
 * is ready is dispatched, a dead peer's hang-up among it. */
void qi_turn(struct qi_srv *s)
{
	qb_loop_timer_handle h;

	if (qb_loop_timer_add(s->loop, QB_LOOP_LOW, 0, s->loop, qi_stop_now, &h))
		return;
	qi_serving = s;
	qb_loop_run(s->loop);
}

#endif /* HAVE_LIBQB */
