// SPDX-License-Identifier: MIT
/* libqb-ipc: libqb's own client/server IPC, the path a corosync client
 * takes to its daemon (seed 003, without totem): a qb_ipcs service in
 * shared-memory mode (QB_IPC_SHM) served from a qb_loop on the server
 * side, and per client id a qb_ipcc connection. A client's request is
 * qb_ipcc_sendv (a request header, then the payload); its reply is
 * qb_ipcc_recv on the response ring: the two halves of qb_ipcc_sendv_recv,
 * split because ipclab's ping-pong sends and receives in two calls. The
 * server answers the oldest unanswered request with qb_ipcs_response_sendv
 * and, when none waits for an answer (a server's stream), sends an event
 * (qb_ipcs_event_sendv) that the client takes with qb_ipcc_event_recv.
 *
 * The service: a name with a random part (cleanup_unique_name), so nobody
 * can guess or squat it; libqb listens on an abstract unix socket (nothing
 * in the filesystem). connection_accept admits only this uid. Each client
 * then sends a hello with its id and a per-channel secret (inherited from
 * the parent, never on any wire but this one), which binds the connection
 * to its id; anything else is refused and disconnected. libqb makes each
 * connection's rings in a directory /dev/shm/qb-<pids>-<fd>-XXXXXX whose
 * name it picks itself: the channel registers the service name with
 * cleanup (CL_QB_IPC) before anything exists, and cleanup removes every
 * qb-* directory of this uid that holds rings of that service - at the
 * end of the cell, at ipclab's exit, and in `ipclab clean` after a
 * SIGKILL.
 *
 * The server side: qb_ipcs calls back from qb_loop. recv for client i runs
 * qb_loop_run until a request of i is there (msg_process copies every
 * request into its connection's queue and stops the loop when it is i's),
 * or a 100 ms timerfd in the loop ends the run so that a stop is seen. The poll
 * handlers are qb_loop's (qb_loop_poll_add and friends, as corosync sets
 * them), wrapped so that a connection whose queue is long is polled no
 * more until it is drained: the queue stays short even when one client
 * floods and the server serves another. No pollfd: libqb dispatches every
 * connection from the one qb_loop, whose epoll descriptor it keeps to
 * itself, and it consumes a connection's wake-up bytes as it dispatches,
 * so no per-client descriptor stays readable while that client's requests
 * wait in the queue; the fan-in server serves the clients in turn. The
 * poll handlers get no context from libqb, so the server thread keeps a
 * thread-local pointer to its own state while it calls into libqb.
 *
 * Ends: a client's close is qb_ipcc_disconnect, the server sees the
 * connection closed and reads EOF after its queue; a dead client's socket
 * hangs up and reads the same. The server's close disconnects; a client
 * reads -ENOTCONN/-ESHUTDOWN from libqb as EOF. A full ring (libqb never
 * blocks a writer) is tried again, yielding, with the stop request and the
 * peer looked at every QI_CHECK_EVERY tries. Built only with libqb-dev. */
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
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "absent.h"
#include "ipclab/cleanup.h"
#include "ipclab/transport.h"
#include "ipclab/util.h"

#ifdef HAVE_LIBQB
#include <qb/qbconfig.h>
#include <qb/qbipcc.h>
#include <qb/qbipcs.h>
#include <qb/qbloop.h>
#endif

/* the cell's stop word (tp_config) */
#define QI_STOPPING(ep) stop_requested((ep)->stop)

#define QI_INSTALL "install libqb-dev (make deps)"

struct qi_opts {
	uint64_t buffer;
};

static const struct opt_desc qi_options[] = {
	{ .name = "buffer", .type = OPT_SIZE, .offset = offsetof(struct qi_opts, buffer),
	  .def = "1M", .min = 4096, .max = 1u << 30,
	  .help = "qb_ipcc_connect's max_msg_size: the size of each ring (request, response, "
		  "event) and the largest message with libqb's header; corosync asks for 1 MiB" },
	{ .name = NULL },
};

static const struct qi_opts qi_defaults = { .buffer = 1u << 20 };

static const struct qi_opts *qi_opts_of(const void *opts)
{
	return opts ? opts : &qi_defaults;
}

#ifdef HAVE_LIBQB

#define QI_ID_HELLO (QB_IPC_MSG_USER_START + 1)
#define QI_ID_MSG (QB_IPC_MSG_USER_START + 2)
#define QI_ID_EOF (QB_IPC_MSG_USER_START + 3)	/* this end is done */
#define QI_MAGIC 0x69716271u		/* "qbqi" */
#define QI_VERSION 1u
#define QI_SLICE_MS 100			/* a wait's longest slice */
#define QI_START_TICKS 100		/* server: slices to wait for a client's hello */
#define QI_CLOSE_SLICES 50		/* close: slices to wait for the peer's end */
#define QI_CONNECT_TRIES 2000		/* client: tries, QI_CONNECT_PAUSE_NS apart */
#define QI_CONNECT_PAUSE_NS 5000000L
#define QI_CHECK_EVERY 256		/* full-ring retries between looks at stop / peer */
#define QI_HOLD_BYTES (4u << 20)	/* queue length, in bytes, that holds a connection */
#define QI_HOLD_MAX 64u			/* ... and in messages */

struct qi_hello {
	uint32_t magic, version, id, pad;
	uint8_t secret[16];
};

struct qi_hello_res {
	uint32_t magic, status;		/* 0, or an errno */
};

struct qi_chan {
	char service[64];
	uint8_t secret[16];
	size_t buffer;			/* bytes asked of libqb per ring */
	unsigned n;
	int handle;			/* cleanup handle of the service's rings, or -1 */
	struct qi_srv *srv;		/* the server side's state (made in its first open) */
};

/* One queued request. */
struct qi_node {
	struct qi_node *next;
	size_t len;
	unsigned char data[];
};

struct qi_slot {
	qb_ipcs_connection_t *c;
	int fd;				/* its socket, as libqb registered it, or -1 */
	bool bound, eof, held;
	bool peer_done;			/* the client's end marker came */
	bool done_sent;			/* the server's end marker went */
	int err;			/* a protocol error seen: -EPROTO */
	unsigned unanswered;		/* requests without a response yet */
	struct qi_node *head, *tail, *spare;
	unsigned queued;
	struct qi_srv *srv;
	unsigned id;
};

/* A descriptor libqb asked to have polled. */
struct qi_fd {
	int fd;				/* -1 = free */
	enum qb_loop_priority prio;
	int32_t events;			/* what libqb wants */
	void *data;
	qb_ipcs_dispatch_fn_t fn;
};

struct qi_srv {
	qb_loop_t *loop;
	qb_ipcs_service_t *svc;
	int tick_fd;			/* timerfd, every QI_SLICE_MS, or -1 */
	unsigned ticks;			/* its expiries */
	int want;			/* the slot recv/open waits for, or -1 */
	unsigned n, open_eps;
	size_t max_len;			/* the largest payload */
	unsigned hold_at;		/* queue length that holds a connection */
	const uint8_t *secret;
	struct qi_slot *slot;
	struct qi_fd *fds;
	unsigned nfds;
};

struct tp_endpoint {
	enum tp_role role;
	unsigned id;
	const _Atomic int *stop;
	struct qi_chan *qc;
	/* server */
	struct qi_slot *slot;
	/* client */
	qb_ipcc_connection_t *c;
	unsigned outstanding;		/* requests sent, responses not yet read */
	bool eof;
	size_t cap;			/* bytes of stage */
	unsigned char *stage;		/* libqb's header + the payload */
};

/* qb_ipcs's poll handlers carry no context: the state of the server this
 * thread serves, set while it calls into libqb. Thread-local, so thread
 * endpoints of one process never share it. */
static _Thread_local struct qi_srv *qi_serving;

static ssize_t qi_peer_gone(ssize_t r)
{
	return r == -ENOTCONN || r == -ESHUTDOWN || r == -ECONNRESET || r == -EPIPE ? -EPIPE : r;
}

/* ---- the server side: qb_loop, poll handlers, callbacks ---- */

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

static int32_t qi_dispatch_add(enum qb_loop_priority p, int32_t fd, int32_t events, void *data,
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

static int32_t qi_dispatch_mod(enum qb_loop_priority p, int32_t fd, int32_t events, void *data,
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

static int32_t qi_dispatch_del(int32_t fd)
{
	struct qi_srv *s = qi_serving;
	struct qi_fd *f = s ? qi_fd_find(s, fd) : NULL;

	if (!f)
		return -ENOENT;
	f->fd = -1;
	return qb_loop_poll_del(s->loop, fd);
}

static int32_t qi_job_add(enum qb_loop_priority p, void *data, qb_loop_job_dispatch_fn fn)
{
	struct qi_srv *s = qi_serving;

	return s ? qb_loop_job_add(s->loop, p, data, fn) : -EINVAL;
}

/* Poll a connection's requests no more (on), or again (off). */
static void qi_hold(struct qi_slot *sl, bool on)
{
	struct qi_srv *s = sl->srv;
	struct qi_fd *f = sl->fd >= 0 ? qi_fd_find(s, sl->fd) : NULL;

	sl->held = on;
	if (f)
		(void)qb_loop_poll_mod(s->loop, f->prio, f->fd, qi_events(s, f), f->data, f->fn);
}

/* Something for the slot the server waits on: end the loop's run. */
static void qi_wake(struct qi_srv *s, const struct qi_slot *sl)
{
	if (s->want == (int)sl->id)
		qb_loop_stop(s->loop);
}

/* The slice: a timerfd in the loop (the kernel's, whatever signals do to
 * the loop's own timers), which ends each run so that stop is seen. */
static int32_t qi_tick(int32_t fd, int32_t revents, void *data)
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
static int qi_run(struct qi_srv *s, int want)
{
	s->want = want;
	qi_serving = s;
	qb_loop_run(s->loop);
	s->want = -1;
	return 0;
}

/* One turn of the loop without blocking (a writer waiting for room): what
 * is ready is dispatched, a dead peer's hang-up among it. */
static void qi_turn(struct qi_srv *s)
{
	qb_loop_timer_handle h;

	if (qb_loop_timer_add(s->loop, QB_LOOP_LOW, 0, s->loop, qi_stop_now, &h))
		return;
	qi_serving = s;
	qb_loop_run(s->loop);
}

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

static void qi_srv_stop(struct qi_chan *qc)
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
	int fds[QI_LOOP_FDS], n = 0, e = 0;

	while (n < QI_LOOP_FDS) {
		fds[n] = fcntl(2, F_DUPFD_CLOEXEC, 3);
		if (fds[n] < 0 && errno == EBADF)
			fds[n] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fds[n] < 0) {
			e = errno;
			break;
		}
		n++;
	}
	while (n > 0)
		close(fds[--n]);
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

static int qi_srv_open(struct tp_channel *ch, struct qi_chan *qc, unsigned id,
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

static ssize_t qi_srv_recv(struct tp_endpoint *ep, void *buf, size_t len)
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

static ssize_t qi_srv_send(struct tp_endpoint *ep, const void *buf, size_t len)
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
static void qi_srv_end(struct tp_endpoint *ep, struct qi_slot *sl)
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

/* ---- the client side ---- */

/* One response (want_response) or event into ep->stage: its length, 0 at
 * EOF, -EINTR on a stop, or -errno. */
static ssize_t qi_cli_take(struct tp_endpoint *ep, bool want_response, unsigned max_slices)
{
	for (unsigned i = 0; !max_slices || i < max_slices; i++) {
		ssize_t n = want_response ? qb_ipcc_recv(ep->c, ep->stage, ep->cap, QI_SLICE_MS)
					  : qb_ipcc_event_recv(ep->c, ep->stage, ep->cap, QI_SLICE_MS);

		if (n > 0)
			return n;
		if (n == -EAGAIN || n == -ETIMEDOUT || n == 0) {
			if (QI_STOPPING(ep))
				return -EINTR;
			continue;
		}
		if (qi_peer_gone(n) == -EPIPE) {
			ep->eof = true;
			return 0;
		}
		return n;
	}
	return -ETIMEDOUT;
}

static ssize_t qi_cli_sendv(struct tp_endpoint *ep, struct iovec *iov, size_t niov, size_t total)
{
	for (uint32_t tries = 1;; tries++) {
		ssize_t r = qb_ipcc_sendv(ep->c, iov, niov);

		if (r == (ssize_t)total) {
			ep->outstanding++;
			return (ssize_t)total;
		}
		if (r >= 0)
			return -EIO;
		if (r != -EAGAIN)
			return qi_peer_gone(r);
		sched_yield();
		if (tries % QI_CHECK_EVERY)
			continue;
		if (QI_STOPPING(ep))
			return -EINTR;
		if (!qb_ipcc_is_connected(ep->c))
			return -EPIPE;
	}
}

static int qi_cli_open(struct tp_channel *ch, struct qi_chan *qc, unsigned id,
		       struct tp_endpoint *ep, char *err, size_t errlen)
{
	struct qi_hello hi = { .magic = QI_MAGIC, .version = QI_VERSION, .id = id };
	struct qb_ipc_request_header rq = { .id = QI_ID_HELLO, .size = sizeof(rq) + sizeof(hi) };
	struct iovec iov[2] = { { &rq, sizeof(rq) }, { &hi, sizeof(hi) } };
	const struct qb_ipc_response_header *rh;
	const struct qi_hello_res *res;
	struct timespec pause = { 0, QI_CONNECT_PAUSE_NS };
	int32_t got;
	ssize_t n;
	int e = ECONNREFUSED;

	for (unsigned t = 0; !ep->c && t < QI_CONNECT_TRIES; t++) {
		ep->c = qb_ipcc_connect(qc->service, qc->buffer);
		if (ep->c)
			break;
		e = errno ? errno : ECONNREFUSED;
		/* the server side has not started listening yet */
		if (e != ECONNREFUSED && e != ENOENT && e != EAGAIN)
			break;
		if (QI_STOPPING(ep))
			return errf(err, errlen, EINTR, "libqb-ipc: client %u: stopped", id);
		nanosleep(&pause, NULL);
	}
	if (!ep->c)
		return errf(err, errlen, e, "libqb-ipc: client %u: qb_ipcc_connect(%s): %s%s", id,
			    qc->service, strerror(e),
			    e == ECONNREFUSED ? " (the server side never listened: did it start?)" :
			    /* the server's own failures in the set-up come back here too */
			    e == EMFILE || e == ENFILE ? " (out of file descriptors, here or in the "
			    "server: raise the open-file limit, ulimit -n)" :
			    e == ENOSPC ? " (/dev/shm, where libqb makes each connection's rings, "
			    "is full: free space there, or raise its size: mount -o remount,size=... "
			    "/dev/shm)" : "");
	got = qb_ipcc_get_buffer_size(ep->c);
	if (got < 0 || (size_t)got < qc->buffer)
		return errf(err, errlen, ENOBUFS, "libqb-ipc: client %u: libqb granted %d bytes per "
			    "ring, less than the %zu asked (-O buffer)", id, (int)got, qc->buffer);
	ep->cap = sizeof(struct qb_ipc_response_header) + ch->cfg->msg_size;
	if (ep->cap < sizeof(struct qb_ipc_response_header) + sizeof(*res))
		ep->cap = sizeof(struct qb_ipc_response_header) + sizeof(*res);
	ep->stage = malloc(ep->cap);
	if (!ep->stage)
		return errf(err, errlen, ENOMEM, "libqb-ipc: out of memory");
	memcpy(hi.secret, qc->secret, sizeof(hi.secret));
	n = qi_cli_sendv(ep, iov, 2, sizeof(rq) + sizeof(hi));
	if (n >= 0)
		n = qi_cli_take(ep, true, QI_START_TICKS);
	ep->outstanding = 0;
	rh = (const void *)ep->stage;
	res = (const void *)(rh + 1);
	if (n == 0)
		return errf(err, errlen, ECONNREFUSED, "libqb-ipc: client %u: the server refused "
			    "the connection (another uid, or a wrong secret)", id);
	if (n < 0)
		return errf(err, errlen, (int)-n, "libqb-ipc: client %u: hello: %s", id,
			    strerror((int)-n));
	if ((size_t)n != sizeof(*rh) + sizeof(*res) || rh->id != QI_ID_HELLO || res->magic != QI_MAGIC)
		return errf(err, errlen, EPROTO, "libqb-ipc: client %u: the server's answer to "
			    "the hello is not ipclab's", id);
	if (res->status)
		return errf(err, errlen, (int)res->status, "libqb-ipc: client %u: the server "
			    "refused the hello: %s", id, strerror((int)res->status));
	return 0;
}

/* The client's end: its end marker, then (bounded) the server's answer to
 * it, so that the server has read every request before the hang-up (see
 * qi_srv_end); then the disconnect. */
static void qi_cli_end(struct tp_endpoint *ep)
{
	struct qb_ipc_request_header rq = { .id = QI_ID_EOF, .size = sizeof(rq) };
	struct iovec iov = { &rq, sizeof(rq) };
	const struct qb_ipc_response_header *rh = (const void *)ep->stage;

	if (ep->stage && !QI_STOPPING(ep) && qi_cli_sendv(ep, &iov, 1, sizeof(rq)) > 0)
		for (unsigned i = 0; i < QI_CLOSE_SLICES; i++) {
			ssize_t n = qi_cli_take(ep, true, 1);

			if (n == -ETIMEDOUT)
				continue;
			if (n <= 0 || ((size_t)n == sizeof(*rh) && rh->id == QI_ID_EOF))
				break;
		}
	qb_ipcc_disconnect(ep->c);
}

static ssize_t qi_cli_send(struct tp_endpoint *ep, const void *buf, size_t len)
{
	struct qb_ipc_request_header rq = { .id = QI_ID_MSG, .size = (int32_t)(sizeof(rq) + len) };
	struct iovec iov[2] = { { &rq, sizeof(rq) }, { (void *)buf, len } };
	ssize_t r = qi_cli_sendv(ep, iov, 2, sizeof(rq) + len);

	return r < 0 ? r : (ssize_t)len;
}

static ssize_t qi_cli_recv(struct tp_endpoint *ep, void *buf, size_t len)
{
	const struct qb_ipc_response_header *rh = (const void *)ep->stage;
	bool response = ep->outstanding > 0;
	ssize_t n;
	size_t body;

	if (ep->eof)
		return 0;
	n = qi_cli_take(ep, response, 0);
	if (n <= 0)
		return n;
	if (response)
		ep->outstanding--;
	if ((size_t)n == sizeof(*rh) && rh->size == n && rh->id == QI_ID_EOF) {
		ep->eof = true;
		return 0;
	}
	if ((size_t)n < sizeof(*rh) || rh->size != n || rh->id != QI_ID_MSG || rh->error)
		return -EPROTO;
	body = (size_t)n - sizeof(*rh);
	if (body > len)
		return -EMSGSIZE;
	memcpy(buf, rh + 1, body);
	return (ssize_t)body;
}

/* ---- the hooks ---- */

static int qi_create(struct tp_channel *ch, char *err, size_t errlen)
{
	const struct qi_opts *o = qi_opts_of(ch->cfg->opts);
	struct qi_chan *qc = calloc(1, sizeof(*qc));

	if (!qc)
		return errf(err, errlen, ENOMEM, "libqb-ipc: out of memory");
	ch->priv = qc;
	qc->handle = -1;
	qc->n = ch->cfg->clients ? ch->cfg->clients : 1;
	qc->buffer = (size_t)o->buffer;
	if (ch->cfg->msg_size + sizeof(struct qb_ipc_response_header) > qc->buffer)
		return errf(err, errlen, EMSGSIZE, "libqb-ipc: a %zu-byte message and libqb's "
			    "%zu-byte header exceed the %zu-byte buffer; raise -O buffer",
			    ch->cfg->msg_size, sizeof(struct qb_ipc_response_header), qc->buffer);
	if (getrandom(qc->secret, sizeof(qc->secret), 0) != sizeof(qc->secret))
		return errf(err, errlen, errno, "libqb-ipc: getrandom: %s", strerror(errno));
	cleanup_unique_name(qc->service, sizeof(qc->service), "ipclab-qb");
	/* before anything exists: the rings libqb will make for this service */
	qc->handle = cleanup_add(CL_QB_IPC, qc->service);
	if (qc->handle < 0)
		return errf(err, errlen, ENOMEM, "libqb-ipc: cleanup table full");
	tp_setting(ch, "ipc", "QB_IPC_SHM (qb_ipcs on a qb_loop)");
	tp_setting(ch, "service", "%s", qc->service);
	tp_setting(ch, "socket", "abstract (@qb-%s...)", qc->service);
	tp_setting(ch, "buffer_bytes", "%zu", qc->buffer);
	tp_setting(ch, "rings_per_client", "3 (request, response, event)");
	tp_setting(ch, "request_header_bytes", "%zu", sizeof(struct qb_ipc_request_header));
	tp_setting(ch, "response_header_bytes", "%zu", sizeof(struct qb_ipc_response_header));
	tp_setting(ch, "libqb_version", "%s", QB_VER_STR);
	tp_setting(ch, "c2s", "qb_ipcc_sendv; response qb_ipcc_recv");
	tp_setting(ch, "s2c", "response to the oldest request, else event");
	return 0;
}

static void qi_destroy(struct tp_channel *ch)
{
	struct qi_chan *qc = ch->priv;

	if (!qc)
		return;
	qi_srv_stop(qc);		/* threads: a server side left behind */
	cleanup_run_one(qc->handle);	/* whatever libqb left in /dev/shm */
	free(qc);
	ch->priv = NULL;
}

static int qi_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		   struct tp_endpoint **out, char *err, size_t errlen)
{
	struct qi_chan *qc = ch->priv;
	struct tp_endpoint *ep;
	int r;

	if (id >= qc->n)
		return errf(err, errlen, EINVAL, "libqb-ipc: client id %u out of range", id);
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return errf(err, errlen, ENOMEM, "libqb-ipc: out of memory");
	ep->role = role;
	ep->id = id;
	ep->qc = qc;
	ep->stop = ch->cfg->stop;
	r = role == TP_SERVER ? qi_srv_open(ch, qc, id, ep, err, errlen)
			      : qi_cli_open(ch, qc, id, ep, err, errlen);
	if (r) {
		if (ep->c)
			qb_ipcc_disconnect(ep->c);
		free(ep->stage);
		free(ep);
		return r;
	}
	*out = ep;
	return 0;
}

static ssize_t qi_send(struct tp_endpoint *ep, const void *buf, size_t len)
{
	return ep->role == TP_SERVER ? qi_srv_send(ep, buf, len) : qi_cli_send(ep, buf, len);
}

static ssize_t qi_recv(struct tp_endpoint *ep, void *buf, size_t len)
{
	return ep->role == TP_SERVER ? qi_srv_recv(ep, buf, len) : qi_cli_recv(ep, buf, len);
}

static void qi_close(struct tp_endpoint *ep)
{
	if (!ep)
		return;
	if (ep->role == TP_CLIENT) {
		if (ep->c)
			qi_cli_end(ep);
	} else if (ep->slot) {
		struct qi_slot *sl = ep->slot;
		struct qi_srv *s = sl->srv;

		qi_srv_end(ep, sl);
		if (--s->open_eps == 0)
			qi_srv_stop(ep->qc);
	}
	free(ep->stage);
	free(ep);
}

static size_t qi_max_msg(const void *opts)
{
	return (size_t)qi_opts_of(opts)->buffer - sizeof(struct qb_ipc_response_header);
}

static int qi_probe(const struct tp_config *cfg, char *why, size_t len)
{
	(void)cfg;
	if (access("/dev/shm", W_OK | X_OK))
		return errf(why, len, ENOTSUP, "libqb's shared-memory IPC needs a writable tmpfs "
			    "on /dev/shm");
	return 0;
}

#define QI_OPS                                                                   \
	.max_msg = qi_max_msg, .max_msg_limit = "-O buffer", .probe = qi_probe,     \
	.create = qi_create, .open = qi_open, .send = qi_send, .recv = qi_recv,      \
	.close = qi_close, .destroy = qi_destroy

#else /* !HAVE_LIBQB */

static int qi_probe(const struct tp_config *cfg, char *why, size_t len)
{
	(void)cfg;
	return errf(why, len, ENOTSUP, "built without libqb-dev; %s", QI_INSTALL);
}

#define QI_OPS .probe = qi_probe, TP_ABSENT_OPS

#endif /* HAVE_LIBQB */

const struct transport tp_libqb_ipc = {
	.name = "libqb-ipc",
	.summary = "libqb's client/server IPC (qb_ipcs in shared-memory mode on a qb_loop, qb_ipcc clients): corosync's path to its daemon",
	.caps = TP_DGRAM | TP_MULTI_CLIENT | TP_NAMED,
	.options = qi_options,
	.opts_size = sizeof(struct qi_opts),
	QI_OPS,
};
