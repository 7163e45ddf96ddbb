// SPDX-License-Identifier: MIT
/* libqb-ipc (libqb_ipc.c): the server side. The qb_ipcs service's
 * callbacks (this uid only, each connection's directory made 0700, the
 * hello that binds a connection to its client id, every request copied
 * into its connection's queue), the service's start and stop (a qb_loop
 * with its slice timer, the free-descriptor check qb_loop_create needs),
 * and the server's endpoints: open waits for its client's hello, recv
 * takes from the queue or runs the loop (libqb_ipc_loop.c), send answers
 * the oldest unanswered request or sends an event, and the end. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "libqb_ipc.h"

#ifdef HAVE_LIBQB

static int32_t qi_accept(qb_ipcs_connection_t *c, uid_t uid, gid_t gid)
{
	(void)c;
	(void)gid;
	return uid == geteuid() ? 0 : -EACCES;
}

/* libqb makes each connection's directory /dev/shm/qb-<server pid>-<client
 * pid>-<fd>-XXXXXX with mode 0770 (for a daemon's group); the rings in it
 * are 0600. Here nobody but this uid may even look: 0700. */
static void qi_created(qb_ipcs_connection_t *c)
{
	struct qi_srv *s = qb_ipcs_connection_service_context_get(c);
	struct qb_ipcs_connection_stats st = { 0 };
	char prefix[64];
	struct dirent *e;
	struct stat sb;
	int fd = -1;
	DIR *d;

	if (!s || qb_ipcs_connection_stats_get(c, &st, 0))
		return;
	for (const struct qi_fd *f = s->fds; f < s->fds + s->nfds; f++)
		if (f->fd >= 0 && f->data == c)
			fd = f->fd;
	snprintf(prefix, sizeof(prefix), "qb-%d-%d-%d-", (int)getpid(), (int)st.client_pid, fd);
	d = opendir("/dev/shm");
	if (!d)
		return;
	while ((e = readdir(d)))
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 &&
		    fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(sb.st_mode) && sb.st_uid == geteuid())
			(void)fchmodat(dirfd(d), e->d_name, 0700, 0);
	closedir(d);
}

static void qi_respond(qb_ipcs_connection_t *c, int32_t id, const void *p, size_t len)
{
	struct qb_ipc_response_header rh = { .id = id, .size = (int32_t)(sizeof(rh) + len) };
	struct iovec iov[2] = { { &rh, sizeof(rh) }, { (void *)p, len } };

	(void)qb_ipcs_response_sendv(c, iov, len ? 2 : 1);
}

/* A connection's first request: its hello, which binds it to its id. */
static int32_t qi_hello(struct qi_srv *s, qb_ipcs_connection_t *c,
			const struct qb_ipc_request_header *h, size_t size)
{
	const struct qi_hello *hi = (const void *)(h + 1);
	struct qi_hello_res res = { .magic = QI_MAGIC, .status = 0 };
	unsigned char diff = 0;
	struct qi_slot *sl;
	struct qi_fd *f;

	if (h->id != QI_ID_HELLO || size != sizeof(*h) + sizeof(*hi) || hi->magic != QI_MAGIC)
		res.status = EPROTO;
	else if (hi->version != QI_VERSION)
		res.status = EPROTONOSUPPORT;
	if (!res.status) {
		for (size_t i = 0; i < sizeof(hi->secret); i++)
			diff |= hi->secret[i] ^ s->secret[i];
		if (diff)
			res.status = EACCES;
		else if (hi->id >= s->n)
			res.status = EINVAL;
		else if (s->slot[hi->id].bound)
			res.status = EEXIST;
	}
	qi_respond(c, QI_ID_HELLO, &res, sizeof(res));
	if (res.status) {
		qb_ipcs_disconnect(c);
		return 0;
	}
	sl = &s->slot[hi->id];
	sl->c = c;
	sl->bound = true;
	for (f = s->fds; f < s->fds + s->nfds; f++)
		if (f->fd >= 0 && f->data == c)
			sl->fd = f->fd;
	qb_ipcs_context_set(c, sl);
	qi_wake(s, sl);
	return 0;
}

static int32_t qi_msg(qb_ipcs_connection_t *c, void *data, size_t size)
{
	struct qi_srv *s = qb_ipcs_connection_service_context_get(c);
	struct qi_slot *sl = qb_ipcs_context_get(c);
	const struct qb_ipc_request_header *h = data;
	struct qi_node *nd;
	size_t len;

	if (!s)
		return 0;
	if (size < sizeof(*h) || h->size < 0 || (size_t)h->size != size) {
		if (!sl) {
			qb_ipcs_disconnect(c);
			return 0;
		}
		sl->err = -EPROTO;
		qi_wake(s, sl);
		return 0;
	}
	if (!sl)
		return qi_hello(s, c, h, size);
	len = size - sizeof(*h);
	if (h->id == QI_ID_EOF && len == 0) {
		sl->peer_done = true;
		qi_wake(s, sl);
		return 0;
	}
	if (h->id != QI_ID_MSG || len > s->max_len) {
		sl->err = -EPROTO;
		qi_wake(s, sl);
		return 0;
	}
	nd = sl->spare;
	if (nd)
		sl->spare = nd->next;
	else
		nd = malloc(sizeof(*nd) + s->max_len);
	if (!nd) {
		sl->err = -ENOMEM;
		qi_wake(s, sl);
		return 0;
	}
	nd->next = NULL;
	nd->len = len;
	memcpy(nd->data, h + 1, len);
	if (sl->tail)
		sl->tail->next = nd;
	else
		sl->head = nd;
	sl->tail = nd;
	sl->queued++;
	sl->unanswered++;
	if (!sl->held && sl->queued >= s->hold_at)
		qi_hold(sl, true);
	qi_wake(s, sl);
	return 0;
}

static void qi_gone(qb_ipcs_connection_t *c)
{
	struct qi_srv *s = qb_ipcs_connection_service_context_get(c);
	struct qi_slot *sl = qb_ipcs_context_get(c);

	if (!s || !sl || sl->c != c)
		return;
	sl->c = NULL;
	sl->eof = true;
	sl->fd = -1;
	qi_wake(s, sl);
}

static int32_t qi_closed(qb_ipcs_connection_t *c)
{
	qi_gone(c);
	return 0;
}

static void qi_free_list(struct qi_node *nd)
{
	while (nd) {
		struct qi_node *next = nd->next;

		free(nd);
		nd = next;
	}
}

void qi_srv_stop(struct qi_chan *qc)
{
	struct qi_srv *s = qc->srv;

	if (!s)
		return;
	qi_serving = s;
	if (s->svc)
		qb_ipcs_destroy(s->svc);	/* disconnects all, stops listening */
	if (s->tick_fd >= 0) {
		if (s->loop)
			(void)qb_loop_poll_del(s->loop, s->tick_fd);
		close(s->tick_fd);
	}
	if (s->loop)
		qb_loop_destroy(s->loop);
	for (unsigned i = 0; s->slot && i < s->n; i++) {
		qi_free_list(s->slot[i].head);
		qi_free_list(s->slot[i].spare);
	}
	free(s->slot);
	free(s->fds);
	free(s);
	qc->srv = NULL;
	qi_serving = NULL;
}

/* qb_loop_create needs QI_LOOP_FDS descriptors (its epoll and its signal
 * pipe) but returns a loop whether it got them or not, and such a loop
 * crashes qb_loop_destroy (and any use): so look that they are free first,
 * by taking them (dups, closed again at once). Endpoint threads that open
 * descriptors in the instant between can still take them. */
#define QI_LOOP_FDS 3

static int qi_fd_room(const char *what, char *err, size_t errlen)
{
	int e = tp_fds_free(QI_LOOP_FDS);

	if (!e)
		return 0;
	if (e == EMFILE || e == ENFILE)
		return errf(err, errlen, e, "libqb-ipc: %s: fewer than %d descriptors free for "
			    "qb_loop_create (its epoll and signal pipe); raise the open-file limit: "
			    "ulimit -n", what, QI_LOOP_FDS);
	return errf(err, errlen, e, "libqb-ipc: %s: checking free descriptors: %s", what,
		    strerror(e));
}

/* A libqb call that failed for want of a descriptor: the fix. */
static const char *qi_fd_hint(int e)
{
	return e == EMFILE || e == ENFILE ? " (out of file descriptors: raise the open-file "
					    "limit, ulimit -n)" : "";
}

/* Long: one step after another, each with its own undo and message. */
static int qi_srv_start(struct tp_channel *ch, struct qi_chan *qc, char *err, size_t errlen)
{
	struct qb_ipcs_service_handlers sh = {
		.connection_accept = qi_accept,
		.connection_created = qi_created,
		.msg_process = qi_msg,
		.connection_closed = qi_closed,
		.connection_destroyed = qi_gone,
	};
	struct qb_ipcs_poll_handlers ph = {
		.job_add = qi_job_add,
		.dispatch_add = qi_dispatch_add,
		.dispatch_mod = qi_dispatch_mod,
		.dispatch_del = qi_dispatch_del,
	};
	struct itimerspec slice = { .it_interval = { 0, QI_SLICE_MS * 1000000L },
				    .it_value = { 0, QI_SLICE_MS * 1000000L } };
	struct qi_srv *s = calloc(1, sizeof(*s));
	int32_t r;

	if (!s)
		return errf(err, errlen, ENOMEM, "libqb-ipc: out of memory");
	qc->srv = s;
	s->tick_fd = -1;
	s->n = qc->n;
	s->want = -1;
	s->secret = qc->secret;
	s->max_len = ch->cfg->msg_size;
	s->hold_at = (unsigned)(QI_HOLD_BYTES / (s->max_len ? s->max_len : 1));
	s->hold_at = s->hold_at < 2 ? 2 : s->hold_at > QI_HOLD_MAX ? QI_HOLD_MAX : s->hold_at;
	s->nfds = s->n + 8;
	s->slot = calloc(s->n, sizeof(*s->slot));
	s->fds = calloc(s->nfds, sizeof(*s->fds));
	if (!s->slot || !s->fds) {
		qi_srv_stop(qc);
		return errf(err, errlen, ENOMEM, "libqb-ipc: out of memory");
	}
	for (unsigned i = 0; i < s->nfds; i++)
		s->fds[i].fd = -1;
	for (unsigned i = 0; i < s->n; i++) {
		s->slot[i].fd = -1;
		s->slot[i].srv = s;
		s->slot[i].id = i;
	}
	s->tick_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (s->tick_fd < 0 || timerfd_settime(s->tick_fd, 0, &slice, NULL)) {
		r = errno;
		qi_srv_stop(qc);
		return errf(err, errlen, r, "libqb-ipc: server: timerfd: %s%s", strerror(r),
			    qi_fd_hint(r));
	}
	r = qi_fd_room("server", err, errlen);
	if (r) {
		qi_srv_stop(qc);
		return r;
	}
	errno = 0;
	s->loop = qb_loop_create();
	if (!s->loop || qb_loop_poll_add(s->loop, QB_LOOP_HIGH, s->tick_fd, POLLIN, s, qi_tick)) {
		r = errno ? errno : ENOMEM;
		qi_srv_stop(qc);
		return errf(err, errlen, r, "libqb-ipc: server: qb_loop_create: %s%s", strerror(r),
			    qi_fd_hint(r));
	}
	errno = 0;
	s->svc = qb_ipcs_create(qc->service, 0, QB_IPC_SHM, &sh);
	if (!s->svc) {
		r = errno ? errno : ENOMEM;
		qi_srv_stop(qc);
		return errf(err, errlen, r, "libqb-ipc: server: qb_ipcs_create: %s%s", strerror(r),
			    qi_fd_hint(r));
	}
	qb_ipcs_service_context_set(s->svc, s);
	qb_ipcs_poll_handlers_set(s->svc, &ph);
	qb_ipcs_enforce_buffer_size(s->svc, (uint32_t)qc->buffer);
	qi_serving = s;
	r = qb_ipcs_run(s->svc);
	if (r < 0) {
		s->svc = NULL;		/* qb_ipcs_run let go of it */
		qi_srv_stop(qc);
		return errf(err, errlen, -r, "libqb-ipc: server: qb_ipcs_run(%s): %s%s",
			    qc->service, strerror(-r), qi_fd_hint(-r));
	}
	return 0;
}

int qi_srv_open(struct tp_channel *ch, struct qi_chan *qc, unsigned id,
		struct tp_endpoint *ep, char *err, size_t errlen)
{
	struct qi_slot *sl;
	unsigned start;
	int r;

	if (!qc->srv) {
		r = qi_srv_start(ch, qc, err, errlen);
		if (r)
			return r;
	}
	sl = &qc->srv->slot[id];
	start = qc->srv->ticks;
	while (!sl->bound) {
		if (QI_STOPPING(ep))
			r = errf(err, errlen, EINTR, "libqb-ipc: server: stopped");
		else if (qc->srv->ticks - start >= QI_START_TICKS)
			r = errf(err, errlen, ETIMEDOUT, "libqb-ipc: server: client %u did not connect "
				 "within %u s", id, QI_START_TICKS * QI_SLICE_MS / 1000);
		else
			r = qi_run(qc->srv, (int)id);
		if (r < 0)
			r = errf(err, errlen, -r, "libqb-ipc: server: qb_loop: %s", strerror(-r));
		if (r) {
			if (!qc->srv->open_eps)
				qi_srv_stop(qc);
			return r;
		}
	}
	ep->slot = sl;
	qc->srv->open_eps++;
	return 0;
}

ssize_t qi_srv_recv(struct tp_endpoint *ep, void *buf, size_t len)
{
	struct qi_slot *sl = ep->slot;
	struct qi_srv *s = sl->srv;

	for (;;) {
		struct qi_node *nd = sl->head;

		if (nd) {
			ssize_t n = nd->len > len ? -EMSGSIZE : (ssize_t)nd->len;

			if (n > 0)
				memcpy(buf, nd->data, nd->len);
			sl->head = nd->next;
			if (!sl->head)
				sl->tail = NULL;
			nd->next = sl->spare;
			sl->spare = nd;
			sl->queued--;
			if (sl->held && sl->queued <= s->hold_at / 2)
				qi_hold(sl, false);
			return n;
		}
		if (sl->err)
			return sl->err;
		if (sl->eof || sl->peer_done)
			return 0;
		if (QI_STOPPING(ep))
			return -EINTR;
		int r = qi_run(s, (int)sl->id);

		if (r < 0)
			return r;
	}
}

ssize_t qi_srv_send(struct tp_endpoint *ep, const void *buf, size_t len)
{
	struct qi_slot *sl = ep->slot;
	struct qb_ipc_response_header rh = { .id = QI_ID_MSG, .size = (int32_t)(sizeof(rh) + len) };
	struct iovec iov[2] = { { &rh, sizeof(rh) }, { (void *)buf, len } };

	for (uint32_t tries = 1;; tries++) {
		ssize_t r;

		if (!sl->c)
			return -EPIPE;
		r = sl->unanswered ? qb_ipcs_response_sendv(sl->c, iov, 2)
				   : qb_ipcs_event_sendv(sl->c, iov, 2);
		if (r == (ssize_t)(sizeof(rh) + len)) {
			if (sl->unanswered)
				sl->unanswered--;
			return (ssize_t)len;
		}
		if (r >= 0)
			return -EIO;
		if (r != -EAGAIN && r != -ETIMEDOUT)
			return qi_peer_gone(r);
		/* the ring is full: again, at once; now and then look at the
		 * stop request and let the loop see a hang-up */
		sched_yield();
		if (tries % QI_CHECK_EVERY)
			continue;
		if (QI_STOPPING(ep))
			return -EINTR;
		qi_turn(sl->srv);
	}
}

/* The server's end of one connection. libqb drops what a peer has not
 * read once the other end hangs up (it looks at the socket first), so
 * neither end disconnects before the other is done: the server sends its
 * end marker (as a response when a request waits for one, else as an
 * event), waits (bounded) for the client's end marker or hang-up, answers
 * the marker, and waits for the client to disconnect; then it disconnects. */
void qi_srv_end(struct tp_endpoint *ep, struct qi_slot *sl)
{
	struct qi_srv *s = sl->srv;
	struct qb_ipc_response_header rh = { .id = QI_ID_EOF, .size = sizeof(rh) };
	unsigned start;

	qi_serving = s;
	if (sl->c && !sl->peer_done && !QI_STOPPING(ep)) {
		if (sl->unanswered) {
			sl->unanswered--;
			(void)qb_ipcs_response_send(sl->c, &rh, sizeof(rh));
		} else {
			(void)qb_ipcs_event_send(sl->c, &rh, sizeof(rh));
		}
	}
	for (start = s->ticks; sl->c && !sl->peer_done && !QI_STOPPING(ep) &&
	     s->ticks - start < QI_CLOSE_SLICES;)
		if (qi_run(s, (int)sl->id))
			break;
	if (sl->c && sl->peer_done && !sl->done_sent) {
		sl->done_sent = true;
		(void)qb_ipcs_response_send(sl->c, &rh, sizeof(rh));
	}
	for (start = s->ticks; sl->c && !QI_STOPPING(ep) && s->ticks - start < QI_CLOSE_SLICES;)
		if (qi_run(s, (int)sl->id))
			break;
	if (sl->c)
		qb_ipcs_disconnect(sl->c);
}

#endif /* HAVE_LIBQB */
