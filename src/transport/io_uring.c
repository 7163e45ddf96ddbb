// SPDX-License-Identifier: MIT
/* io-uring: the pipe transport's two pipes per client (or, with -O
 * via=unix, a socketpair), their reads and writes submitted through
 * io_uring (liburing) instead of read(2)/write(2). Each endpoint makes its
 * own ring in open (a ring is not shared across fork). A message is one
 * IORING_OP_READ or IORING_OP_WRITE of the whole message (resubmitted for
 * the rest after a short transfer), submitted and waited for in one
 * io_uring_enter (io_uring_submit_and_wait_timeout): submission and
 * completion batched into a single system call. -O sqpoll=1 gives the ring
 * a kernel thread that polls the submission queue (IORING_SETUP_SQPOLL),
 * so a submission needs no system call while that thread is awake; waiting
 * for the completion still does.
 *
 * Waits are slices of IOU_SLICE_MS: between them the stop request is
 * looked at. An interrupted operation is cancelled and its completion
 * reaped before recv/send returns, so the kernel never writes into a
 * buffer that was given back. A dead peer is the pipe's or socket's EOF or
 * EPIPE, as for pipe and unix-stream. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absent.h"
#include "tp_common.h"

#ifdef HAVE_URING
#include <liburing.h>
#ifdef IO_URING_VERSION_MAJOR
#define IOU_STR2(x) #x
#define IOU_STR(x) IOU_STR2(x)
#define IOU_LIB_VERSION IOU_STR(IO_URING_VERSION_MAJOR) "." IOU_STR(IO_URING_VERSION_MINOR)
#elif defined(IOU_PKG_VERSION)
#define IOU_LIB_VERSION IOU_PKG_VERSION	/* from pkg-config: older headers lack the macros */
#else
#define IOU_LIB_VERSION "unknown"
#endif
#endif

#define IOU_INSTALL "install liburing-dev (make deps)"
#define IOU_DISABLED "/proc/sys/kernel/io_uring_disabled"

struct iou_opts {
	int via;		/* 0 pipe, 1 unix */
	int sqpoll;
	uint64_t sq_idle_ms;
	uint64_t pipe_size;
};

static const struct opt_desc iou_options[] = {
	{ .name = "via", .type = OPT_CHOICE, .offset = offsetof(struct iou_opts, via),
	  .def = "pipe", .choices = "pipe|unix",
	  .help = "the descriptors: two pipes, or an AF_UNIX stream socketpair, per client" },
	{ .name = "sqpoll", .type = OPT_BOOL, .offset = offsetof(struct iou_opts, sqpoll),
	  .def = "0", .help = "IORING_SETUP_SQPOLL: a kernel thread polls the submission queue" },
	{ .name = "sq-idle", .type = OPT_UINT, .offset = offsetof(struct iou_opts, sq_idle_ms),
	  .def = "100", .min = 1, .max = 10000,
	  .help = "with sqpoll: ms the polling thread spins idle before it sleeps (sq_thread_idle)" },
	{ .name = "pipe-size", .type = OPT_SIZE, .offset = offsetof(struct iou_opts, pipe_size),
	  .def = "", .max = 1ull << 31,
	  .help = "via=pipe: F_SETPIPE_SZ of each pipe (0 = kernel default, 64k)" },
	{ .name = NULL },
};

#ifdef HAVE_URING

#define IOU_SLICE_MS 100
#define IOU_ENTRIES 4		/* one operation in flight, and its cancel */
#define IOU_OP 1		/* user_data of the read or write */
#define IOU_CANCEL 2		/* user_data of its cancel */

/* Channel entries per client id (as pipe.c; via=unix uses the first two:
 * the server's and the client's end of the socketpair). */
enum { P_C2S_R, P_C2S_W, P_S2C_R, P_S2C_W, P_PER_CLIENT };

static unsigned iou_flags(const struct iou_opts *o)
{
	return o && o->sqpoll ? IORING_SETUP_SQPOLL : 0;
}

static int iou_ring(struct io_uring *ring, const struct iou_opts *o, struct io_uring_params *p)
{
	memset(p, 0, sizeof(*p));
	p->flags = iou_flags(o);
	if (p->flags & IORING_SETUP_SQPOLL)
		p->sq_thread_idle = (unsigned)o->sq_idle_ms;
	return io_uring_queue_init_params(IOU_ENTRIES, ring, p);
}

static int iou_ring_error(int e, const char *what, char *why, size_t len)
{
	uint64_t dis = 0;

	(void)tp_sysctl_u64(IOU_DISABLED, &dis);
	if (dis && (e == EPERM || e == EACCES))
		return errf(why, len, e,
			    "%s refused: kernel.io_uring_disabled = %llu; allow it: sysctl kernel.io_uring_disabled=0",
			    what, (unsigned long long)dis);
	if (e == ENOSYS)
		return errf(why, len, e, "%s: this kernel has no io_uring (CONFIG_IO_URING)", what);
	if (e == EPERM && what[0] == 's')
		return errf(why, len, e, "%s: sqpoll refused (needs CAP_SYS_NICE on older kernels); run as root or without -O sqpoll", what);
	if (e == EMFILE || e == ENFILE)
		return errf(why, len, e, "%s: %s; raise it: ulimit -n", what, strerror(e));
	if (e == ENOMEM)
		return errf(why, len, e, "%s: %s (locked memory for the ring; raise it: ulimit -l)",
			    what, strerror(e));
	return errf(why, len, e, "%s: %s", what, strerror(e));
}

/* Usable here: a ring can be made with the options asked for. */
static int iou_probe(const struct tp_config *cfg, char *why, size_t len)
{
	struct io_uring ring;
	struct io_uring_params p;
	int r = iou_ring(&ring, cfg->opts, &p);

	if (r < 0)
		return iou_ring_error(-r, iou_flags(cfg->opts) ? "sqpoll ring" : "io_uring_setup",
				      why, len);
	io_uring_queue_exit(&ring);
	return 0;
}

static int iou_make(struct tp_channel *ch, struct tp_chan *c, unsigned id, int *size,
		    char *err, size_t errlen)
{
	const struct iou_opts *o = ch->cfg->opts;
	unsigned base = id * P_PER_CLIENT;
	int p[2], ret;

	if (o && o->via) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) < 0)
			return errf(err, errlen, errno, "io-uring: socketpair: %s%s",
				    strerror(errno), errno == EMFILE ? "; raise it: ulimit -n" : "");
		tp_chan_set(c, base, p[0], TPF_SERVER, id);
		tp_chan_set(c, base + 1, p[1], TPF_CLIENT, id);
		return 0;
	}
	for (unsigned dir = 0; dir < 2; dir++) {
		if (pipe2(p, O_CLOEXEC) < 0)
			return errf(err, errlen, errno, "io-uring: pipe2: %s%s", strerror(errno),
				    errno == EMFILE ? "; raise it: ulimit -n" : "");
		tp_chan_set(c, base + 2 * dir, p[0], dir ? TPF_CLIENT : TPF_SERVER, id);
		tp_chan_set(c, base + 2 * dir + 1, p[1], dir ? TPF_SERVER : TPF_CLIENT, id);
		ret = tp_pipe_size("io-uring", p[1], o ? o->pipe_size : 0, size, err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

static int iou_create(struct tp_channel *ch, char *err, size_t errlen)
{
	const struct iou_opts *o = ch->cfg->opts;
	unsigned n = tp_clients(ch);
	struct tp_chan *c = tp_chan_new(ch, n * P_PER_CLIENT, 0, 0, err, errlen);
	struct io_uring ring;
	struct io_uring_params p;
	int size = 0, ret;

	if (!c)
		return -ENOMEM;
	for (unsigned id = 0; id < n; id++) {
		ret = iou_make(ch, c, id, &size, err, errlen);
		if (ret)
			return ret;
	}
	/* what a ring made as the endpoints' gets, read back */
	ret = iou_ring(&ring, o, &p);
	if (ret < 0) {
		char why[160];

		iou_ring_error(-ret, "io_uring_setup", why, sizeof(why));
		return errf(err, errlen, -ret, "io-uring: %s", why);
	}
	tp_setting(ch, "via", "%s", o && o->via ? "unix socketpair" : "pipes");
	tp_setting(ch, "liburing", "%s", IOU_LIB_VERSION);
	tp_setting(ch, "sq_entries", "%u", p.sq_entries);
	tp_setting(ch, "cq_entries", "%u", p.cq_entries);
	tp_setting(ch, "sqpoll", "%d", !!(p.flags & IORING_SETUP_SQPOLL));
	if (p.flags & IORING_SETUP_SQPOLL)
		tp_setting(ch, "sq_thread_idle_ms", "%u", p.sq_thread_idle);
	tp_setting(ch, "features", "%#x", p.features);
	tp_setting(ch, "ext_arg", "%d", !!(p.features & IORING_FEAT_EXT_ARG));
	tp_setting(ch, "per_message", "one io_uring_enter: submit and wait");
	io_uring_queue_exit(&ring);
	if (o && o->via)
		tp_sock_report(ch, c->fd[0].fd);
	else
		tp_setting(ch, "pipe_size_bytes", "%d", size);
	return 0;
}

static int iou_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		    struct tp_endpoint **out, char *err, size_t errlen)
{
	const struct iou_opts *o = ch->cfg->opts;
	unsigned base = id * P_PER_CLIENT, r, w;
	struct io_uring_params p;
	struct io_uring *ring;
	int ret;

	if (o && o->via)
		r = w = base + (role == TP_CLIENT);
	else if (role == TP_SERVER)
		r = base + P_C2S_R, w = base + P_S2C_W;
	else
		r = base + P_S2C_R, w = base + P_C2S_W;
	ret = tp_ep_from_chan(ch, role, id, r, w, o && o->via ? TPE_SHUTDOWN : 0, out, err,
			      errlen);
	if (ret)
		return ret;
	ring = calloc(1, sizeof(*ring));
	ret = ring ? iou_ring(ring, o, &p) : -ENOMEM;
	if (ret < 0) {
		char why[160];

		iou_ring_error(-ret, "io_uring_setup", why, sizeof(why));
		free(ring);
		tp_fd_close(*out);
		*out = NULL;
		return errf(err, errlen, -ret, "io-uring: %s", why);
	}
	(*out)->extra = ring;
	return 0;
}

/* Wait for the operation's completion; its result, or -EINTR after a stop
 * (the operation cancelled and reaped first). first: submit in the same
 * io_uring_enter. */
static int iou_complete(struct io_uring *ring, const _Atomic int *stop)
{
	bool cancelled = false;

	for (unsigned slices = 0;; slices++) {
		struct __kernel_timespec ts = { 0, IOU_SLICE_MS * 1000000LL };
		struct io_uring_cqe *cqe;
		int r = io_uring_wait_cqe_timeout(ring, &cqe, &ts);

		if (r == 0) {
			uint64_t ud = cqe->user_data;
			int res = cqe->res;

			io_uring_cqe_seen(ring, cqe);
			if (ud == IOU_OP)
				return cancelled ? -EINTR : res;
			continue;	/* the cancel's own completion */
		}
		if (r != -ETIME && r != -EINTR)
			return r;
		if (!cancelled && stop_requested(stop)) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

			if (!sqe)
				return -EBUSY;
			io_uring_prep_cancel64(sqe, IOU_OP, 0);
			sqe->user_data = IOU_CANCEL;
			io_uring_submit(ring);
			cancelled = true;
		}
	}
}

/* One message: a read or write of all len bytes, resubmitted after a short
 * transfer. */
static ssize_t iou_xfer(struct tp_endpoint *ep, bool wr, void *buf, size_t len)
{
	struct io_uring *ring = ep->extra;
	size_t done = 0;

	while (done < len) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
		struct __kernel_timespec ts = { 0, IOU_SLICE_MS * 1000000LL };
		struct io_uring_cqe *cqe;
		int r;

		if (!sqe)
			return -EBUSY;
		if (wr)
			io_uring_prep_write(sqe, ep->wfd, (char *)buf + done, len - done, -1);
		else
			io_uring_prep_read(sqe, ep->rfd, (char *)buf + done, len - done, -1);
		sqe->user_data = IOU_OP;
		/* submitted whatever it returns; then the completion */
		r = io_uring_submit_and_wait_timeout(ring, &cqe, 1, &ts, NULL);
		if (r >= 0 && cqe && cqe->user_data == IOU_OP) {
			r = cqe->res;
			io_uring_cqe_seen(ring, cqe);
		} else {
			r = iou_complete(ring, ep->stop);
		}
		if (r == -EINTR && !stop_requested(ep->stop))
			continue;	/* another signal: the op ended, try again */
		if (r == -EAGAIN)
			continue;
		if (r < 0)
			return r;
		if (r == 0)
			return wr ? -EIO : done ? -EPIPE : 0;	/* EOF: mid-message is an error */
		done += (size_t)r;
	}
	return (ssize_t)len;
}

static ssize_t iou_send(struct tp_endpoint *ep, const void *buf, size_t len)
{
	return iou_xfer(ep, true, (void *)buf, len);
}

static ssize_t iou_recv(struct tp_endpoint *ep, void *buf, size_t len)
{
	return iou_xfer(ep, false, buf, len);
}

static void iou_close(struct tp_endpoint *ep)
{
	if (!ep)
		return;
	if (ep->extra) {
		io_uring_queue_exit(ep->extra);
		free(ep->extra);
		ep->extra = NULL;
	}
	tp_fd_close(ep);
}

#define IOU_OPS                                                                      \
	.probe = iou_probe, .create = iou_create, .open = iou_open, .send = iou_send,  \
	.recv = iou_recv, .close = iou_close, .destroy = tp_chan_destroy

#else /* !HAVE_URING */

static int iou_probe(const struct tp_config *cfg, char *why, size_t len)
{
	return errf(why, len, ENOTSUP, "built without liburing; %s", IOU_INSTALL);
}

#define IOU_OPS .probe = iou_probe, TP_ABSENT_OPS

#endif /* HAVE_URING */

const struct transport tp_io_uring = {
	.name = "io-uring",
	.summary = "two pipes (or -O via=unix, a socketpair) per client, reads and writes submitted through io_uring, a byte stream; -O sqpoll",
	.caps = TP_STREAM | TP_MULTI_CLIENT,
	.options = iou_options,
	.opts_size = sizeof(struct iou_opts),
	IOU_OPS,
};
