// SPDX-License-Identifier: MIT
/* Shared code of the descriptor-based transports (tp_common.h): channel and
 * endpoint bookkeeping, stream and datagram send/recv, pipe and socket buffer
 * sizes read back from the kernel. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "ipclab/cleanup.h"
#include "tp_common.h"

struct fd_table *fd_table_new(struct tp_channel *ch, unsigned nfd, unsigned ncl,
			    size_t extra_size, char *err, size_t errlen)
{
	size_t fd_off = (sizeof(struct fd_table) + 15) & ~(size_t)15;
	size_t cl_off = fd_off + nfd * sizeof(struct tp_fd);
	size_t ex_off = (cl_off + ncl * sizeof(int) + 15) & ~(size_t)15;
	struct fd_table *c = calloc(1, ex_off + extra_size);

	if (!c) {
		errf(err, errlen, ENOMEM, "%s: out of memory", ch->tp->name);
		return NULL;
	}
	c->nfd = nfd;
	c->ncl = ncl;
	c->fd = (struct tp_fd *)((char *)c + fd_off);
	c->cl = (int *)((char *)c + cl_off);
	c->extra = (char *)c + ex_off;
	for (unsigned i = 0; i < nfd; i++)
		c->fd[i].fd = -1;
	for (unsigned i = 0; i < ncl; i++)
		c->cl[i] = -1;
	ch->priv = c;
	return c;
}

void fd_table_set(struct fd_table *c, unsigned idx, int fd, enum fd_owner owner, unsigned id)
{
	c->fd[idx].fd = fd;
	c->fd[idx].owner = (unsigned char)owner;
	c->fd[idx].id = id;
}

void fd_table_destroy(struct tp_channel *ch)
{
	struct fd_table *c = ch->priv;

	if (!c)
		return;
	for (unsigned i = 0; i < c->nfd; i++)
		if (c->fd[i].fd >= 0)
			close(c->fd[i].fd);
	/* newest first: paths before the directory they might sit in */
	for (unsigned i = c->ncl; i-- > 0;)
		if (c->cl[i] >= 0)
			cleanup_run_one(c->cl[i]);
	free(c);
	ch->priv = NULL;
}

static bool tp_fd_used_by(const struct tp_fd *f, enum tp_role role, unsigned id)
{
	if (f->owner == FD_BOTH)
		return role == TP_SERVER || f->id == id;
	if (f->owner != (unsigned char)role)
		return false;
	/* one server endpoint per client id lives in the same process */
	return role == TP_SERVER || f->id == id;
}

void fd_table_drop_others(struct tp_channel *ch, enum tp_role role, unsigned id)
{
	struct fd_table *c = ch->priv;

	/* Only in process mode: threads share one descriptor table. */
	if (ch->cfg->threads || !c)
		return;
	for (unsigned i = 0; i < c->nfd; i++)
		if (c->fd[i].fd >= 0 && !tp_fd_used_by(&c->fd[i], role, id)) {
			close(c->fd[i].fd);
			c->fd[i].fd = -1;
		}
}

static struct tp_endpoint *tp_ep_alloc(struct tp_channel *ch, unsigned flags)
{
	struct tp_endpoint *ep = calloc(1, sizeof(*ep));

	if (!ep)
		return NULL;
	ep->threads = ch->cfg->threads;
	ep->flags = flags;
	ep->max = ch->cfg->msg_size;
	ep->stop = ch->cfg->stop;
	return ep;
}

int tp_ep_from_chan(struct tp_channel *ch, enum tp_role role, unsigned id, unsigned ridx,
		    unsigned widx, unsigned flags, struct tp_endpoint **out, char *err,
		    size_t errlen)
{
	struct fd_table *c = ch->priv;
	struct tp_endpoint *ep;
	int ret = tp_check_id(ch, id, err, errlen);

	if (ret)
		return ret;
	if (ridx >= c->nfd || widx >= c->nfd || c->fd[ridx].fd < 0 || c->fd[widx].fd < 0)
		return errf(err, errlen, EBADF, "%s: %s endpoint %u opened twice or after close",
			    ch->tp->name, role == TP_SERVER ? "server" : "client", id);
	fd_table_drop_others(ch, role, id);
	ep = tp_ep_alloc(ch, flags);
	if (!ep)
		return errf(err, errlen, ENOMEM, "%s: out of memory", ch->tp->name);
	ep->rslot = &c->fd[ridx];
	ep->wslot = &c->fd[widx];
	ep->rfd = ep->rslot->fd;
	ep->wfd = ep->wslot->fd;
	*out = ep;
	return 0;
}

int tp_ep_own(struct tp_channel *ch, int rfd, int wfd, unsigned flags, struct tp_endpoint **out,
	      char *err, size_t errlen)
{
	struct tp_endpoint *ep = tp_ep_alloc(ch, flags);

	if (!ep)
		return errf(err, errlen, ENOMEM, "%s: out of memory", ch->tp->name);
	ep->rfd = rfd;
	ep->wfd = wfd;
	*out = ep;
	return 0;
}

static void tp_ep_close_one(struct tp_endpoint *ep, struct tp_fd *slot, int fd)
{
	if (!slot) {
		close(fd);
		return;
	}
	/* a queue used by both sides stays open for the peer thread */
	if (ep->threads && slot->owner == FD_BOTH)
		return;
	if (slot->fd >= 0) {
		slot->fd = -1;
		close(fd);
	}
}

void tp_ep_free(struct tp_endpoint *ep)
{
	if (!ep)
		return;
	if (ep->rfd >= 0)
		tp_ep_close_one(ep, ep->rslot, ep->rfd);
	if (ep->wfd >= 0 && ep->wfd != ep->rfd)
		tp_ep_close_one(ep, ep->wslot, ep->wfd);
	free(ep);
}

ssize_t tp_stream_send(struct tp_endpoint *ep, const void *buf, size_t len)
{
	return full_write(ep->wfd, buf, len);
}

ssize_t tp_stream_recv(struct tp_endpoint *ep, void *buf, size_t len)
{
	return full_read(ep->rfd, buf, len);
}

ssize_t tp_dgram_send(struct tp_endpoint *ep, const void *buf, size_t len)
{
	ssize_t n;

	if (len == 0)
		return -EINVAL;	/* a zero-length datagram means EOF here */
	n = send(ep->wfd, buf, len, MSG_NOSIGNAL);
	if (n < 0)
		return errno == ECONNREFUSED ? -EPIPE : -errno;
	return n == (ssize_t)len ? n : -EMSGSIZE;
}

ssize_t tp_dgram_recv(struct tp_endpoint *ep, void *buf, size_t len)
{
	/* MSG_TRUNC: the real length, so that a too-long message is an error
	 * rather than silently cut */
	ssize_t n = recv(ep->rfd, buf, len, MSG_TRUNC);

	if (n < 0)
		return errno == ECONNREFUSED ? 0 : -errno;
	return (size_t)n > len ? -EMSGSIZE : n;
}

int tp_fd_pollfd(const struct tp_endpoint *ep)
{
	return ep->rfd;
}

static int tp_sock_marker(int fd);

void tp_fd_close(struct tp_endpoint *ep)
{
	if (!ep)
		return;
	if (ep->flags & TP_EP_SHUTDOWN)
		shutdown(ep->wfd, SHUT_WR);
	if (ep->flags & TP_EP_MARKER)
		tp_marker(ep->wfd, tp_sock_marker);
	tp_ep_free(ep);
}

static int tp_sock_marker(int fd)
{
	return (int)send(fd, "", 0, MSG_DONTWAIT | MSG_NOSIGNAL);
}

void tp_marker(int fd, int (*try_send)(int fd))
{
	for (int i = 0; i < 64; i++) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };

		if (try_send(fd) == 0 ||
		    (errno != EAGAIN && errno != EWOULDBLOCK && errno != ETIMEDOUT))
			return;
		/* no room yet: the receiver may still be draining what we sent */
		if (poll(&p, 1, TP_MARKER_WAIT_MS) <= 0)
			return;
	}
}

int tp_sysctl_u64(const char *path, uint64_t *out)
{
	char buf[64];
	ssize_t n = read_text_file(path, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	return parse_u64(buf, out);
}

int tp_pipe_size(const char *tp, int fd, uint64_t size, int *got, char *err, size_t errlen)
{
	uint64_t max = 0;

	if (size > (uint64_t)INT32_MAX)
		return errf(err, errlen, ERANGE, "%s: pipe-size %llu too large", tp,
			    (unsigned long long)size);
	if (size && fcntl(fd, F_SETPIPE_SZ, (int)size) < 0) {
		int e = errno;

		(void)tp_sysctl_u64("/proc/sys/fs/pipe-max-size", &max);
		if (e == EPERM)
			return errf(err, errlen, e,
				    "%s: pipe-size %llu refused: over /proc/sys/fs/pipe-max-size (%llu) or the user's pipe-user-pages-hard; raise it: sysctl fs.pipe-max-size=%llu",
				    tp, (unsigned long long)size, (unsigned long long)max,
				    (unsigned long long)size);
		return errf(err, errlen, e, "%s: F_SETPIPE_SZ %llu: %s (limit /proc/sys/fs/pipe-max-size = %llu)",
			    tp, (unsigned long long)size, strerror(e), (unsigned long long)max);
	}
	*got = fcntl(fd, F_GETPIPE_SZ);
	if (*got < 0)
		return errf(err, errlen, errno, "%s: F_GETPIPE_SZ: %s", tp, strerror(errno));
	if (size && (uint64_t)*got < size) {
		(void)tp_sysctl_u64("/proc/sys/fs/pipe-max-size", &max);
		return errf(err, errlen, ERANGE,
			    "%s: pipe-size %llu clamped to %d by the kernel (/proc/sys/fs/pipe-max-size = %llu)",
			    tp, (unsigned long long)size, *got, (unsigned long long)max);
	}
	return 0;
}

int tp_sock_get(int fd, int opt, int *val)
{
	socklen_t l = sizeof(*val);

	return getsockopt(fd, SOL_SOCKET, opt, val, &l) < 0 ? -errno : 0;
}

static int tp_sock_buf(const char *tp, int fd, int opt, uint64_t want, char *err, size_t errlen)
{
	const char *what = opt == SO_SNDBUF ? "sndbuf" : "rcvbuf";
	const char *sysctl = opt == SO_SNDBUF ? "wmem_max" : "rmem_max";
	char path[64];
	uint64_t max = 0;
	int v = (int)want, got = 0;

	if (!want)
		return 0;
	if (want > INT32_MAX / 2)
		return errf(err, errlen, ERANGE, "%s: %s %llu too large", tp, what,
			    (unsigned long long)want);
	if (setsockopt(fd, SOL_SOCKET, opt, &v, sizeof(v)) < 0)
		return errf(err, errlen, errno, "%s: setsockopt %s %d: %s", tp, what, v,
			    strerror(errno));
	if (tp_sock_get(fd, opt, &got) < 0)
		return errf(err, errlen, errno, "%s: getsockopt %s: %s", tp, what, strerror(errno));
	/* the kernel stores twice the request (bookkeeping overhead) */
	if ((uint64_t)got < 2 * want) {
		snprintf(path, sizeof(path), "/proc/sys/net/core/%s", sysctl);
		(void)tp_sysctl_u64(path, &max);
		return errf(err, errlen, ERANGE,
			    "%s: -O %s=%llu clamped to %d by %s (%llu); raise it: sysctl net.core.%s=%llu",
			    tp, what, (unsigned long long)want, got / 2, path,
			    (unsigned long long)max, sysctl, (unsigned long long)want);
	}
	return 0;
}

int tp_sock_bufs(const char *tp, int fd, uint64_t snd, uint64_t rcv, char *err, size_t errlen)
{
	int ret = tp_sock_buf(tp, fd, SO_SNDBUF, snd, err, errlen);

	return ret ? ret : tp_sock_buf(tp, fd, SO_RCVBUF, rcv, err, errlen);
}

void tp_sock_report(struct tp_channel *ch, int fd)
{
	int v;

	if (tp_sock_get(fd, SO_SNDBUF, &v) == 0)
		tp_setting(ch, "sndbuf_bytes", "%d", v);
	if (tp_sock_get(fd, SO_RCVBUF, &v) == 0)
		tp_setting(ch, "rcvbuf_bytes", "%d", v);
}

int tp_hello_send(int fd, unsigned id)
{
	uint32_t hello[2] = { TP_HELLO_MAGIC, id };
	ssize_t n = full_write(fd, hello, sizeof(hello));

	return n < 0 ? (int)n : 0;
}

int tp_hello_check(const char *tp, int fd, unsigned id, char *err, size_t errlen)
{
	uint32_t hello[2];
	ssize_t n = full_read(fd, hello, sizeof(hello));

	if (n < 0)
		return errf(err, errlen, (int)-n, "%s: reading client %u's hello: %s", tp, id,
			    strerror((int)-n));
	if (n == 0)
		return errf(err, errlen, ECONNRESET, "%s: client %u closed before its hello", tp, id);
	if (hello[0] != TP_HELLO_MAGIC || hello[1] != id)
		return errf(err, errlen, EPROTO,
			    "%s: connection on client %u's socket is not ours (magic %#x, id %u)", tp,
			    id, hello[0], hello[1]);
	return 0;
}

int tp_conn_client(struct tp_channel *ch, unsigned id, const struct sockaddr *sa, socklen_t salen,
		   tp_sock_setup_fn setup, struct tp_endpoint **out, char *err, size_t errlen)
{
	const char *tp = ch->tp->name;
	int fd, ret = tp_check_id(ch, id, err, errlen);

	if (ret)
		return ret;
	fd_table_drop_others(ch, TP_CLIENT, id);
	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errf(err, errlen, errno, "%s: socket: %s", tp, strerror(errno));
	ret = setup(ch, fd, err, errlen);
	if (!ret && connect(fd, sa, salen) < 0)
		ret = errf(err, errlen, errno, "%s: client %u: connect: %s", tp, id, strerror(errno));
	if (!ret && (ret = tp_hello_send(fd, id)) < 0)
		errf(err, errlen, -ret, "%s: client %u: hello: %s", tp, id, strerror(-ret));
	if (!ret)
		ret = tp_ep_own(ch, fd, fd, TP_EP_SHUTDOWN, out, err, errlen);
	if (ret)
		close(fd);
	return ret;
}

int tp_conn_server(struct tp_channel *ch, unsigned id, int lfd, tp_sock_setup_fn setup,
		   struct tp_endpoint **out, char *err, size_t errlen)
{
	const char *tp = ch->tp->name;
	int fd, ret = tp_check_id(ch, id, err, errlen);

	if (ret)
		return ret;
	fd_table_drop_others(ch, TP_SERVER, id);
	/* blocks until client id connects; a signal interrupts it */
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return errf(err, errlen, errno, "%s: server: accept for client %u: %s", tp, id,
			    strerror(errno));
	ret = tp_hello_check(tp, fd, id, err, errlen);
	if (!ret)
		ret = setup(ch, fd, err, errlen);
	if (!ret)
		ret = tp_ep_own(ch, fd, fd, TP_EP_SHUTDOWN, out, err, errlen);
	if (ret)
		close(fd);
	return ret;
}

int tp_fds_free(unsigned n)
{
	int fds[64], e = 0;
	unsigned got = 0;

	if (n > 64)
		n = 64;
	while (got < n) {
		fds[got] = fcntl(2, F_DUPFD_CLOEXEC, 3);
		if (fds[got] < 0 && errno == EBADF)
			fds[got] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fds[got] < 0) {
			e = errno;
			break;
		}
		got++;
	}
	while (got > 0)
		close(fds[--got]);
	return e;
}

int tp_ipc_socket_path(const struct tp_channel *ch, const char *prefix, unsigned id, char *path,
		       char *err, size_t errlen)
{
	char name[64];
	size_t max = sizeof(((struct sockaddr_un *)0)->sun_path) - 1;

	cleanup_unique_name(name, sizeof(name), prefix);
	if ((size_t)snprintf(path, PATH_MAX, "%s/%s.%u", ch->cfg->dir, name, id) > max)
		return errf(err, errlen, ENAMETOOLONG,
			    "%s: socket path %s is longer than a socket path may be (%zu); set TMPDIR to a shorter directory",
			    ch->tp->name, path, max);
	return 0;
}
