// SPDX-License-Identifier: MIT
/* vsock: AF_VSOCK stream sockets over the local loopback (VMADDR_CID_LOCAL,
 * CID 1): the socket family a virtual machine uses to talk to its host,
 * measured here without leaving this kernel. Only CID 1 is ever used: never
 * the hypervisor's (2) or any other context.
 *
 * As tcp: any local process can connect to a vsock port, so the
 * connections are made in create, before any endpoint starts: one
 * listening socket on CID 1 and a kernel-chosen port, and per client id a
 * connect and the accept of exactly that connection (its peer port is the
 * client socket's own). Whatever else connects meanwhile is foreign:
 * closed and counted (setting foreign_connections), never measured. Then
 * the listener is closed; endpoints only pick up their connected socket.
 *
 * The loopback is a kernel option (CONFIG_VSOCKETS_LOOPBACK): without it
 * socket(AF_VSOCK) may still work while bind or connect to CID 1 fail, so
 * the probe makes one loopback connection and skips the cell saying why. */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <linux/vm_sockets.h>

#include "tp_common.h"

#define VS_NO_LOOPBACK \
	"the kernel has no vsock loopback (CONFIG_VSOCKETS_LOOPBACK); nothing to measure here"
#define VS_CONNECT_MS 2000	/* a loopback connect's longest wait */
#define VS_ACCEPT_WAIT_MS 10000	/* create's wait for its own connection */
#define VS_MAX_FOREIGN 1024

struct vs_opts {
	uint64_t bufsize;
};

static const struct opt_desc vs_options[] = {
	{ .name = "bufsize", .type = OPT_SIZE, .offset = offsetof(struct vs_opts, bufsize),
	  .def = "", .max = 1ull << 30,
	  .help = "SO_VM_SOCKETS_BUFFER_SIZE of each socket (0 = kernel default, 256 KiB)" },
	{ .name = NULL },
};

static int vs_socket(bool nonblock)
{
	return socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);
}

static void vs_connect_timeout(int fd)
{
	struct timeval tv = { .tv_sec = VS_CONNECT_MS / 1000,
			      .tv_usec = (VS_CONNECT_MS % 1000) * 1000 };

	setsockopt(fd, AF_VSOCK, SO_VM_SOCKETS_CONNECT_TIMEOUT, &tv, sizeof(tv));
}

/* A listener on CID 1 and any port; its address in *a. */
static int vs_listen(struct sockaddr_vm *a, unsigned backlog)
{
	socklen_t l = sizeof(*a);
	int fd = vs_socket(true);

	if (fd < 0)
		return -errno;
	memset(a, 0, sizeof(*a));
	a->svm_family = AF_VSOCK;
	a->svm_cid = VMADDR_CID_LOCAL;
	a->svm_port = VMADDR_PORT_ANY;
	if (bind(fd, (struct sockaddr *)a, sizeof(*a)) < 0 || listen(fd, (int)backlog) < 0 ||
	    getsockname(fd, (struct sockaddr *)a, &l) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

static int vs_probe(const struct tp_config *cfg, char *why, size_t len)
{
	struct sockaddr_vm a;
	int lfd, cfd, ret = 0;

	(void)cfg;
	cfd = vs_socket(false);
	if (cfd < 0)
		return errf(why, len, errno, "the kernel has no AF_VSOCK sockets (%s; CONFIG_VSOCKETS); nothing to measure here",
			    strerror(errno));
	lfd = vs_listen(&a, 1);
	if (lfd < 0) {
		close(cfd);
		return errf(why, len, -lfd, "%s (bind to CID 1: %s)", VS_NO_LOOPBACK,
			    strerror(-lfd));
	}
	vs_connect_timeout(cfd);
	if (connect(cfd, (struct sockaddr *)&a, sizeof(a)) < 0)
		ret = errf(why, len, errno, "%s (connect to CID 1: %s)", VS_NO_LOOPBACK,
			   strerror(errno));
	close(cfd);
	close(lfd);
	return ret;
}

static int vs_setup(struct tp_channel *ch, int fd, char *err, size_t errlen)
{
	const struct vs_opts *o = ch->cfg->opts;
	uint64_t want = o ? o->bufsize : 0, got = 0;
	socklen_t l = sizeof(got);

	if (!want)
		return 0;
	/* the maximum first: the size may not exceed it */
	if (setsockopt(fd, AF_VSOCK, SO_VM_SOCKETS_BUFFER_MAX_SIZE, &want, sizeof(want)) < 0 ||
	    setsockopt(fd, AF_VSOCK, SO_VM_SOCKETS_BUFFER_SIZE, &want, sizeof(want)) < 0 ||
	    getsockopt(fd, AF_VSOCK, SO_VM_SOCKETS_BUFFER_SIZE, &got, &l) < 0)
		return errf(err, errlen, errno, "vsock: SO_VM_SOCKETS_BUFFER_SIZE %llu: %s",
			    (unsigned long long)want, strerror(errno));
	if (got != want)
		return errf(err, errlen, EINVAL, "vsock: SO_VM_SOCKETS_BUFFER_SIZE %llu gave %llu",
			    (unsigned long long)want, (unsigned long long)got);
	return 0;
}

static void vs_report(struct tp_channel *ch, int fd)
{
	uint64_t v = 0;
	socklen_t l = sizeof(v);

	tp_setting(ch, "cid", "%u (VMADDR_CID_LOCAL)", VMADDR_CID_LOCAL);
	if (getsockopt(fd, AF_VSOCK, SO_VM_SOCKETS_BUFFER_SIZE, &v, &l) == 0)
		tp_setting(ch, "buffer_bytes", "%llu", (unsigned long long)v);
	l = sizeof(v);
	if (getsockopt(fd, AF_VSOCK, SO_VM_SOCKETS_BUFFER_MAX_SIZE, &v, &l) == 0)
		tp_setting(ch, "buffer_max_bytes", "%llu", (unsigned long long)v);
}

struct vs_make {
	struct tp_channel *ch;
	int lfd;
	struct sockaddr_vm addr;
	unsigned foreign;
	char *err;
	size_t errlen;
};

static int vs_refuse(struct vs_make *m, int fd)
{
	close(fd);
	if (++m->foreign <= VS_MAX_FOREIGN)
		return 0;
	return errf(m->err, m->errlen, ECONNREFUSED,
		    "vsock: over %u foreign connections to CID 1 port %u while the cell connected its clients: another local process keeps connecting to the cell's port; run again when it stops",
		    VS_MAX_FOREIGN, m->addr.svm_port);
}

/* Accept until the connection from port `from` arrives; close and count
 * the others. */
static int vs_accept_own(struct vs_make *m, unsigned id, unsigned from)
{
	for (;;) {
		struct sockaddr_vm peer;
		socklen_t l = sizeof(peer);
		struct pollfd p = { .fd = m->lfd, .events = POLLIN };
		int fd = accept4(m->lfd, (struct sockaddr *)&peer, &l, SOCK_CLOEXEC), ret;

		if (fd >= 0) {
			if (l >= sizeof(peer) && peer.svm_family == AF_VSOCK &&
			    peer.svm_cid == VMADDR_CID_LOCAL && peer.svm_port == from)
				return fd;
			ret = vs_refuse(m, fd);
			if (ret)
				return ret;
			continue;
		}
		if (errno == ECONNABORTED || errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return errf(m->err, m->errlen, errno, "vsock: accept for client %u: %s", id,
				    strerror(errno));
		ret = poll(&p, 1, VS_ACCEPT_WAIT_MS);
		if (ret < 0 && errno != EINTR)
			return errf(m->err, m->errlen, errno,
				    "vsock: waiting for client %u's connection: %s", id,
				    strerror(errno));
		if (ret == 0)
			return errf(m->err, m->errlen, ETIMEDOUT,
				    "vsock: client %u's own connection did not reach CID 1 port %u within %d s",
				    id, m->addr.svm_port, VS_ACCEPT_WAIT_MS / 1000);
	}
}

static int vs_pair(struct vs_make *m, struct fd_table *c, unsigned id)
{
	struct sockaddr_vm me;
	socklen_t l = sizeof(me);
	int cfd, sfd, ret;

	cfd = vs_socket(false);
	if (cfd < 0)
		return errf(m->err, m->errlen, errno, "vsock: socket: %s%s", strerror(errno),
			    errno == EMFILE ? " (raise the open-file limit: ulimit -n)" : "");
	fd_table_set(c, 2 * id + 1, cfd, FD_CLIENT, id);
	ret = vs_setup(m->ch, cfd, m->err, m->errlen);
	if (ret)
		return ret;
	vs_connect_timeout(cfd);
	if (connect(cfd, (struct sockaddr *)&m->addr, sizeof(m->addr)) < 0)
		return errf(m->err, m->errlen, errno, "vsock: client %u: connect to CID 1 port %u: %s",
			    id, m->addr.svm_port, strerror(errno));
	if (getsockname(cfd, (struct sockaddr *)&me, &l) < 0)
		return errf(m->err, m->errlen, errno, "vsock: client %u: getsockname: %s", id,
			    strerror(errno));
	sfd = vs_accept_own(m, id, me.svm_port);
	if (sfd < 0)
		return sfd;
	fd_table_set(c, 2 * id, sfd, FD_SERVER, id);
	return vs_setup(m->ch, sfd, m->err, m->errlen);
}

static int vs_close_listener(struct vs_make *m)
{
	int fd, ret = 0;

	while (!ret && (fd = accept4(m->lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0)
		ret = vs_refuse(m, fd);
	close(m->lfd);
	m->lfd = -1;
	return ret;
}

static int vs_create(struct tp_channel *ch, char *err, size_t errlen)
{
	unsigned n = tp_clients(ch);
	struct fd_table *c = fd_table_new(ch, 2 * n, 0, 0, err, errlen);
	struct vs_make m = { .ch = ch, .lfd = -1, .err = err, .errlen = errlen };
	int ret = 0;

	if (!c)
		return -ENOMEM;
	m.lfd = vs_listen(&m.addr, n + 16);
	if (m.lfd < 0) {
		ret = errf(err, errlen, -m.lfd, "vsock: listen on CID 1: %s", strerror(-m.lfd));
		m.lfd = -1;
	}
	for (unsigned id = 0; !ret && id < n; id++)
		ret = vs_pair(&m, c, id);
	if (m.lfd >= 0) {
		int ret2 = vs_close_listener(&m);

		ret = ret ? ret : ret2;
	}
	if (!ret)
		vs_report(ch, c->fd[0].fd);
	tp_setting(ch, "foreign_connections", "%u", m.foreign);
	return ret;
}

static int vs_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		   struct tp_endpoint **out, char *err, size_t errlen)
{
	unsigned idx = 2 * id + (role == TP_CLIENT);

	return tp_ep_from_chan(ch, role, id, idx, idx, TP_EP_SHUTDOWN, out, err, errlen);
}

const struct transport tp_vsock = {
	.name = "vsock",
	.summary = "AF_VSOCK stream over the local loopback (CID 1), one connection per client; -O bufsize",
	.caps = TP_STREAM | TP_MULTI_CLIENT | TP_POLLABLE,
	.group = TP_GROUP_KERNEL,
	.options = vs_options,
	.opts_size = sizeof(struct vs_opts),
	.probe = vs_probe,
	.create = vs_create,
	.open = vs_open,
	.send = tp_stream_send,
	.recv = tp_stream_recv,
	.pollfd = tp_fd_pollfd,
	.close = tp_fd_close,
	.destroy = fd_table_destroy,
};
