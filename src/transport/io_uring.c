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
 * for the completion still does. -O batch=N queues sends instead: every
 * Nth send submits the N writes, linked so that they run in order, with
 * one io_uring_enter and reaps their N completions together (a recv or a
 * close submits what is queued first, so ping-pong stays one by one).
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
#include "iou.h"
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

#define IOU_DISABLED "/proc/sys/kernel/io_uring_disabled"

struct iou_opts {
	int via;		/* 0 pipe, 1 unix */
	int sqpoll;
	uint64_t sq_idle_ms;
	uint64_t pipe_size;
	uint64_t batch;
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
	{ .name = "batch", .type = OPT_UINT, .offset = offsetof(struct iou_opts, batch),
	  .def = "1", .min = 1, .max = 256,
	  .help = "sends queued and submitted N at a time: N linked writes per io_uring_enter" },
	{ .name = NULL },
};

#ifdef HAVE_URING

#define IOU_SLICE_MS 100
#define IOU_ENTRIES 4		/* one operation in flight, and its cancel */
#define IOU_OP 1		/* user_data of the read or write */
#define IOU_CANCEL 2		/* user_data of its cancel */
#define IOU_BATCH 16		/* user_data of a batch's first write; the others follow */
#define IOU_BATCH_MAX_BYTES (64ull << 20)	/* one endpoint's queued sends */

/* ep->extra: the endpoint's ring, and the sends -O batch queues. */
struct iou_ep {
	struct io_uring ring;
	unsigned batch, queued;
	size_t len;		/* every queued message has this length */
	unsigned char *buf;	/* batch x len bytes: the queued messages */
	int *res;		/* a batch's results, one per write */
};

/* Channel entries per client id (as pipe.c; via=unix uses the first two:
 * the server's and the client's end of the socketpair). */
enum { P_C2S_R, P_C2S_W, P_S2C_R, P_S2C_W, P_PER_CLIENT };

static unsigned iou_flags(const struct iou_opts *o)
{
	return o && o->sqpoll ? IORING_SETUP_SQPOLL : 0;
}

static unsigned iou_batch(const struct iou_opts *o)
{
	return o && o->batch > 1 ? (unsigned)o->batch : 1;
}

static int iou_ring(struct io_uring *ring, const struct iou_opts *o, struct io_uring_params *p)
{
	unsigned entries = iou_batch(o) + 2;	/* a batch, and a cancel */

	memset(p, 0, sizeof(*p));
	p->flags = iou_flags(o);
	if (p->flags & IORING_SETUP_SQPOLL)
		p->sq_thread_idle = (unsigned)o->sq_idle_ms;
	return io_uring_queue_init_params(entries < IOU_ENTRIES ? IOU_ENTRIES : entries, ring, p);
}

int iou_ring_error(int e, const char *what, char *why, size_t len)
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

static int iou_make(struct tp_channel *ch, struct fd_table *c, unsigned id, int *size,
		    char *err, size_t errlen)
{
	const struct iou_opts *o = ch->cfg->opts;
	unsigned base = id * P_PER_CLIENT;
	int p[2], ret;

	if (o && o->via) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) < 0)
			return errf(err, errlen, errno, "io-uring: socketpair: %s%s",
				    strerror(errno), errno == EMFILE ? "; raise it: ulimit -n" : "");
		fd_table_set(c, base, p[0], FD_SERVER, id);
		fd_table_set(c, base + 1, p[1], FD_CLIENT, id);
		return 0;
	}
	for (unsigned dir = 0; dir < 2; dir++) {
		if (pipe2(p, O_CLOEXEC) < 0)
			return errf(err, errlen, errno, "io-uring: pipe2: %s%s", strerror(errno),
				    errno == EMFILE ? "; raise it: ulimit -n" : "");
		fd_table_set(c, base + 2 * dir, p[0], dir ? FD_CLIENT : FD_SERVER, id);
		fd_table_set(c, base + 2 * dir + 1, p[1], dir ? FD_SERVER : FD_CLIENT, id);
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
	struct fd_table *c = fd_table_new(ch, n * P_PER_CLIENT, 0, 0, err, errlen);
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
	tp_setting(ch, "batch", "%u", iou_batch(o));
	if (iou_batch(o) > 1)
		tp_setting(ch, "per_message", "sends: %u linked writes per io_uring_enter; recv: one enter",
			   iou_batch(o));
	else
		tp_setting(ch, "per_message", "one io_uring_enter: submit and wait");
	io_uring_queue_exit(&ring);
	if (o && o->via)
		tp_sock_report(ch, c->fd[0].fd);
	else
		tp_setting(ch, "pipe_size_bytes", "%d", size);
	return 0;
}

/* The batch's buffers (none without -O batch). */
static int iou_ep_init(struct iou_ep *x, const struct iou_opts *o, size_t len)
{
	x->batch = iou_batch(o);
	x->len = len;
	if (x->batch == 1)
		return 0;
	if ((uint64_t)x->batch * len > IOU_BATCH_MAX_BYTES)
		return -EFBIG;
	x->buf = malloc((size_t)x->batch * len);
	x->res = calloc(x->batch, sizeof(*x->res));
	return x->buf && x->res ? 0 : -ENOMEM;
}

static int iou_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		    struct tp_endpoint **out, char *err, size_t errlen)
{
	const struct iou_opts *o = ch->cfg->opts;
	unsigned base = id * P_PER_CLIENT, r, w;
	struct io_uring_params p;
	struct iou_ep *x;
	int ret;

	if (o && o->via)
		r = w = base + (role == TP_CLIENT);
	else if (role == TP_SERVER)
		r = base + P_C2S_R, w = base + P_S2C_W;
	else
		r = base + P_S2C_R, w = base + P_C2S_W;
	ret = tp_ep_from_chan(ch, role, id, r, w, o && o->via ? TP_EP_SHUTDOWN : 0, out, err,
			      errlen);
	if (ret)
		return ret;
	x = calloc(1, sizeof(*x));
	ret = x ? iou_ep_init(x, o, ch->cfg->msg_size) : -ENOMEM;
	if (ret == -EFBIG) {
		free(x);
		tp_fd_close(*out);
		*out = NULL;
		return errf(err, errlen, EFBIG,
			    "io-uring: -O batch=%u of %zu-byte messages is over %llu MiB; use a smaller batch",
			    iou_batch(o), ch->cfg->msg_size, IOU_BATCH_MAX_BYTES >> 20);
	}
	if (!ret)
		ret = iou_ring(&x->ring, o, &p);
	if (ret < 0) {
		char why[160];

		iou_ring_error(-ret, "io_uring_setup", why, sizeof(why));
		if (x) {
			free(x->buf);
			free(x->res);
		}
		free(x);
		tp_fd_close(*out);
		*out = NULL;
		return errf(err, errlen, -ret, "io-uring: %s", why);
	}
	(*out)->extra = x;
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
	struct io_uring *ring = &((struct iou_ep *)ep->extra)->ring;
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

/* Reap a batch's n completions into x->res; -EINTR after a stop (every
 * write cancelled and reaped first). */
static int iou_batch_reap(struct tp_endpoint *ep, struct iou_ep *x, unsigned n)
{
	bool cancelled = false;
	unsigned seen = 0;

	while (seen < n) {
		struct __kernel_timespec ts = { 0, IOU_SLICE_MS * 1000000LL };
		struct io_uring_cqe *cqe;
		int r = io_uring_wait_cqe_timeout(&x->ring, &cqe, &ts);

		if (r == 0) {
			uint64_t ud = cqe->user_data;

			if (ud >= IOU_BATCH && ud < IOU_BATCH + n) {
				x->res[ud - IOU_BATCH] = cqe->res;
				seen++;
			}
			io_uring_cqe_seen(&x->ring, cqe);
			continue;
		}
		if (r != -ETIME && r != -EINTR)
			return r;
		if (!cancelled && stop_requested(ep->stop)) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&x->ring);

			if (!sqe)
				return -EBUSY;
			io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
			sqe->user_data = IOU_CANCEL;
			io_uring_submit(&x->ring);
			cancelled = true;
		}
	}
	return cancelled ? -EINTR : 0;
}

/* Submit the queued sends: one write each, linked so that they run in
 * order, in one io_uring_enter. A short or failed write breaks the link
 * (the writes after it come back -ECANCELED): the rest is written one by
 * one from there, so the stream keeps its order. */
static int iou_flush(struct tp_endpoint *ep)
{
	struct iou_ep *x = ep->extra;
	unsigned n = x->queued;
	int r;

	x->queued = 0;
	for (unsigned i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&x->ring);

		if (!sqe)
			return -EBUSY;	/* the ring has batch + 2 entries: a bug */
		io_uring_prep_write(sqe, ep->wfd, x->buf + (size_t)i * x->len, x->len, -1);
		sqe->user_data = IOU_BATCH + i;
		if (i + 1 < n)
			sqe->flags |= IOSQE_IO_LINK;
	}
	r = io_uring_submit(&x->ring);
	if (r < 0)
		return r;
	r = iou_batch_reap(ep, x, n);
	for (unsigned i = 0; !r && i < n; i++) {
		int res = x->res[i];
		size_t off = res > 0 ? (size_t)res : 0;
		ssize_t w;

		if (res == (int)x->len)
			continue;
		if (res < 0 && res != -ECANCELED && res != -EAGAIN && res != -EINTR)
			return res;
		w = iou_xfer(ep, true, x->buf + (size_t)i * x->len + off, x->len - off);
		if (w < 0)
			return (int)w;
		x->res[i] = (int)x->len;
	}
	return r;
}

/* With -O batch, a send is queued (an error of its write is the error of
 * a later send, the one that submits it). */
static ssize_t iou_send(struct tp_endpoint *ep, const void *buf, size_t len)
{
	struct iou_ep *x = ep->extra;
	int r;

	if (x->batch == 1 || len != x->len)
		return (r = x->queued ? iou_flush(ep) : 0) ? r : iou_xfer(ep, true, (void *)buf, len);
	memcpy(x->buf + (size_t)x->queued * len, buf, len);
	if (++x->queued == x->batch && (r = iou_flush(ep)))
		return r;
	return (ssize_t)len;
}

static ssize_t iou_recv(struct tp_endpoint *ep, void *buf, size_t len)
{
	struct iou_ep *x = ep->extra;
	int r = x->queued ? iou_flush(ep) : 0;

	return r ? r : iou_xfer(ep, false, buf, len);
}

static void iou_close(struct tp_endpoint *ep)
{
	struct iou_ep *x;

	if (!ep)
		return;
	x = ep->extra;
	if (x) {
		if (x->queued)
			(void)iou_flush(ep);	/* the last sends; a dead peer is seen by its side */
		io_uring_queue_exit(&x->ring);
		free(x->buf);
		free(x->res);
		free(x);
		ep->extra = NULL;
	}
	tp_fd_close(ep);
}

#define IOU_OPS                                                                      \
	.probe = iou_probe, .create = iou_create, .open = iou_open, .send = iou_send,  \
	.recv = iou_recv, .close = iou_close, .destroy = fd_table_destroy

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
	.group = TP_GROUP_LIBRARY,
	.options = iou_options,
	.opts_size = sizeof(struct iou_opts),
	IOU_OPS,
};
