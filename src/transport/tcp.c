// SPDX-License-Identifier: MIT
/* tcp: TCP over loopback (127.0.0.1). Any local user can connect to a
 * port on 127.0.0.1, so the connections are made in create, before any
 * endpoint starts: one listening socket on a kernel-chosen port, and per
 * client id a connect and the accept of exactly that connection (its peer
 * address is the client socket's own). Whatever else connects meanwhile is
 * foreign: accepted, closed and counted (setting foreign_connections),
 * never measured. Then the listener is closed; endpoints only pick up their
 * connected socket. TCP_NODELAY is on by default (Nagle would hold back
 * small messages; -O nodelay=0 measures that); -O sndbuf/rcvbuf fix the
 * buffers, which turns off autotuning. The values a socket gets are read
 * back and reported. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipclab/netaddr.h"
#include "ipclab/reference.h"
#include "tp_common.h"
#include "tp_remote.h"

struct tcp_opts {
	int nodelay;
	uint64_t sndbuf, rcvbuf;
	char listen[OPT_STR_MAX], connect[OPT_STR_MAX], secret[OPT_STR_MAX];
};

static const struct opt_desc tcp_options[] = {
	{ .name = "nodelay", .type = OPT_BOOL, .offset = offsetof(struct tcp_opts, nodelay),
	  .def = "1", .help = "TCP_NODELAY: send small segments at once (0 = Nagle's algorithm)" },
	{ .name = "sndbuf", .type = OPT_SIZE, .offset = offsetof(struct tcp_opts, sndbuf),
	  .def = "", .max = 1ull << 30,
	  .help = "SO_SNDBUF (0 = autotuned; capped by net.core.wmem_max)" },
	{ .name = "rcvbuf", .type = OPT_SIZE, .offset = offsetof(struct tcp_opts, rcvbuf),
	  .def = "", .max = 1ull << 30,
	  .help = "SO_RCVBUF (0 = autotuned; capped by net.core.rmem_max)" },
	/* between hosts (ipclab serve / run --peer set these): tcp_remote.c */
	{ .name = "listen", .type = OPT_STRING, .offset = offsetof(struct tcp_opts, listen),
	  .def = "", .help = "between hosts: the server's side only, listening on this IPv4 or IPv6 address (set by ipclab serve)" },
	{ .name = "connect", .type = OPT_STRING, .offset = offsetof(struct tcp_opts, connect),
	  .def = "", .help = "between hosts: the clients only, connecting to IPV4:PORT or [IPV6]:PORT (set by run --peer)" },
	{ .name = "secret", .type = OPT_STRING, .offset = offsetof(struct tcp_opts, secret),
	  .def = "", .help = "between hosts: the cell's hello secret, 32 hex digits (set by serve / --peer)" },
	{ .name = NULL },
};

static int tcp_check_opts(const void *opts, char *err, size_t errlen)
{
	const struct tcp_opts *o = opts;

	return tp_remote_check("tcp", o->listen, o->connect, o->secret, err, errlen);
}

static int tcp_setup(struct tp_channel *ch, int fd, char *err, size_t errlen)
{
	const struct tcp_opts *o = ch->cfg->opts;
	int on = o ? o->nodelay : 1, got = -1;
	socklen_t l = sizeof(got);

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on)) < 0 ||
	    getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &got, &l) < 0)
		return errf(err, errlen, errno, "tcp: TCP_NODELAY: %s", strerror(errno));
	if (!got != !on)
		return errf(err, errlen, EINVAL, "tcp: TCP_NODELAY=%d did not stick", on);
	return o ? tp_sock_bufs("tcp", fd, o->sndbuf, o->rcvbuf, err, errlen) : 0;
}

static void tcp_report(struct tp_channel *ch, int fd)
{
	const struct tcp_opts *o = ch->cfg->opts;
	int v = 0;
	socklen_t l = sizeof(v);

	if (getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &l) == 0)
		tp_setting(ch, "tcp_nodelay", "%d", !!v);
	tp_sock_report(ch, fd);
	tp_setting(ch, "buf_autotune", "%d", !o || (!o->sndbuf && !o->rcvbuf));
}

/* Foreign connections tolerated while one channel is made: past this,
 * another local process keeps connecting, and the cell fails saying so. */
#define TCP_MAX_FOREIGN 1024
/* How long create waits for its own connection to reach the listener (a
 * SYN dropped by a full accept queue is resent after 1 s, then 3 s). */
#define TCP_ACCEPT_WAIT_MS 10000

struct tcp_make {
	struct tp_channel *ch;
	int lfd;			/* the listener, only while create runs */
	struct sockaddr_in addr;	/* where it listens */
	unsigned foreign;		/* connections that were not ours */
	char *err;
	size_t errlen;
};

static int tcp_listen(struct tcp_make *m, unsigned backlog)
{
	socklen_t l = sizeof(m->addr);

	m->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (m->lfd < 0)
		return errf(m->err, m->errlen, errno, "tcp: socket: %s", strerror(errno));
	m->addr.sin_family = AF_INET;
	m->addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	m->addr.sin_port = 0;	/* the kernel picks a free port */
	if (bind(m->lfd, (struct sockaddr *)&m->addr, sizeof(m->addr)) < 0 ||
	    listen(m->lfd, (int)backlog) < 0 ||
	    getsockname(m->lfd, (struct sockaddr *)&m->addr, &l) < 0)
		return errf(m->err, m->errlen, errno, "tcp: listen on 127.0.0.1: %s", strerror(errno));
	return 0;
}

/* A connection that is not one of ours: closed unread, counted. */
static int tcp_refuse(struct tcp_make *m, int fd)
{
	close(fd);
	if (++m->foreign <= TCP_MAX_FOREIGN)
		return 0;
	return errf(m->err, m->errlen, ECONNREFUSED,
		    "tcp: over %u foreign connections to 127.0.0.1:%u while the cell connected its clients: another local process keeps connecting to the cell's port; run again when it stops",
		    TCP_MAX_FOREIGN, ntohs(m->addr.sin_port));
}

/* Accept until the connection from `from` arrives; close and count the
 * others. Returns the accepted descriptor or -errno. */
static int tcp_accept_own(struct tcp_make *m, unsigned id, const struct sockaddr_in *from)
{
	for (;;) {
		struct sockaddr_in peer;
		socklen_t l = sizeof(peer);
		struct pollfd p = { .fd = m->lfd, .events = POLLIN };
		int fd = accept4(m->lfd, (struct sockaddr *)&peer, &l, SOCK_CLOEXEC), ret;

		if (fd >= 0) {
			if (l == sizeof(peer) && peer.sin_family == AF_INET &&
			    peer.sin_port == from->sin_port &&
			    peer.sin_addr.s_addr == from->sin_addr.s_addr)
				return fd;
			ret = tcp_refuse(m, fd);
			if (ret)
				return ret;
			continue;
		}
		if (errno == ECONNABORTED)
			continue;	/* a connection reset while queued */
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return errf(m->err, m->errlen, errno, "tcp: accept for client %u: %s", id,
				    strerror(errno));
		ret = poll(&p, 1, TCP_ACCEPT_WAIT_MS);
		if (ret < 0)
			return errf(m->err, m->errlen, errno, "tcp: waiting for client %u's connection: %s",
				    id, strerror(errno));
		if (ret == 0)
			return errf(m->err, m->errlen, ETIMEDOUT,
				    "tcp: client %u's own connection did not reach 127.0.0.1:%u within %d s",
				    id, ntohs(m->addr.sin_port), TCP_ACCEPT_WAIT_MS / 1000);
	}
}

/* Client id's connected pair: its socket connects (without blocking, so
 * that a listener queue full of foreign connections cannot stall it), the
 * listener accepts exactly that connection. */
static int tcp_pair(struct tcp_make *m, struct fd_table *c, unsigned id)
{
	struct sockaddr_in me;
	socklen_t l = sizeof(me);
	int cfd, sfd, ret, fl;

	cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (cfd < 0)
		return errf(m->err, m->errlen, errno, "tcp: socket: %s", strerror(errno));
	fd_table_set(c, 2 * id + 1, cfd, FD_CLIENT, id);
	ret = tcp_setup(m->ch, cfd, m->err, m->errlen);
	if (ret)
		return ret;
	if (connect(cfd, (struct sockaddr *)&m->addr, sizeof(m->addr)) < 0 && errno != EINPROGRESS)
		return errf(m->err, m->errlen, errno, "tcp: client %u: connect: %s", id,
			    strerror(errno));
	if (getsockname(cfd, (struct sockaddr *)&me, &l) < 0)
		return errf(m->err, m->errlen, errno, "tcp: client %u: getsockname: %s", id,
			    strerror(errno));
	sfd = tcp_accept_own(m, id, &me);
	if (sfd < 0)
		return sfd;
	fd_table_set(c, 2 * id, sfd, FD_SERVER, id);
	/* accepted means the handshake is done: the client is connected */
	fl = fcntl(cfd, F_GETFL);
	if (fl < 0 || fcntl(cfd, F_SETFL, fl & ~O_NONBLOCK) < 0)
		return errf(m->err, m->errlen, errno, "tcp: client %u: fcntl: %s", id,
			    strerror(errno));
	ret = tp_sock_get(cfd, SO_ERROR, &fl);
	if (ret || fl)
		return errf(m->err, m->errlen, ret ? -ret : fl, "tcp: client %u: connect: %s", id,
			    strerror(ret ? -ret : fl));
	return tcp_setup(m->ch, sfd, m->err, m->errlen);
}

/* What is still queued on the listener came from elsewhere: count it, then
 * close the listener (connections arriving later are refused by the kernel). */
static int tcp_close_listener(struct tcp_make *m)
{
	int fd, ret = 0;

	while (!ret && (fd = accept4(m->lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0)
		ret = tcp_refuse(m, fd);
	close(m->lfd);
	m->lfd = -1;
	return ret;
}

static int tcp_create_remote(struct tp_channel *ch, const struct tp_remote *r, char *err,
			     size_t errlen);

static int tcp_create(struct tp_channel *ch, char *err, size_t errlen)
{
	const struct tcp_opts *o = ch->cfg->opts;
	unsigned n = tp_clients(ch);
	struct tcp_make m = { .ch = ch, .lfd = -1, .err = err, .errlen = errlen };
	struct tp_remote r = { 0 };
	struct fd_table *c;
	int ret, fd;

	if (o && (ret = tp_remote_parse("tcp", o->listen, o->connect, o->secret, &r, err, errlen)))
		return ret;
	if (r.mode != TPR_LOCAL)
		return tcp_create_remote(ch, &r, err, errlen);
	c = fd_table_new(ch, 2 * n, 0, 0, err, errlen);
	if (!c)
		return -ENOMEM;
	/* the settings a connection starts with, read on a fresh socket set up
	 * as one (a connected socket's buffers have already grown) */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errf(err, errlen, errno, "tcp: socket: %s", strerror(errno));
	ret = tcp_setup(ch, fd, err, errlen);
	if (!ret)
		tcp_report(ch, fd);
	close(fd);
	if (!ret)
		ret = tcp_listen(&m, n + 16);
	for (unsigned id = 0; !ret && id < n; id++)
		ret = tcp_pair(&m, c, id);
	if (m.lfd >= 0) {
		int ret2 = tcp_close_listener(&m);

		ret = ret ? ret : ret2;
	}
	tp_setting(ch, "foreign_connections", "%u", m.foreign);
	return ret;
}

/* ---- between hosts -------------------------------------------------------- */

/* The channel of a remote cell: the fd_table's descriptors, then (extra)
 * the remote settings; the server's listener sits past the clients' slots. */
static struct tp_remote *tcp_remote_of(struct tp_channel *ch)
{
	struct fd_table *c = ch->priv;

	return c && c->nfd == 2 * tp_clients(ch) + 1 ? c->extra : NULL;
}

static int tcp_remote_listen(struct tp_channel *ch, struct fd_table *c, struct tp_remote *r,
			     char *err, size_t errlen)
{
	unsigned n = tp_clients(ch);
	struct sockaddr_storage sa = r->addr;
	socklen_t l = sizeof(sa);
	int one = 1, fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	char host[NET_ADDR_TEXT];

	if (fd < 0)
		return errf(err, errlen, errno, "tcp: socket: %s", strerror(errno));
	fd_table_set(c, 2 * n, fd, FD_SERVER, 0);
	net_set_port(&sa, 0);	/* the kernel picks; the control connection tells the client */
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, net_len(&sa)) < 0 || listen(fd, (int)n + 16) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &l) < 0) {
		int e = errno;

		net_format(&r->addr, false, host, sizeof(host));
		return errf(err, errlen, e, "tcp: listen on %s: %s", host, strerror(e));
	}
	tp_setting(ch, "listen_port", "%u", net_port(&sa));
	return 0;
}

static int tcp_remote_dial(struct tp_channel *ch, struct fd_table *c, const struct tp_remote *r,
			   unsigned id, char *err, size_t errlen)
{
	struct tp_rhello h;
	char where[NET_ADDR_TEXT];
	int fd = socket(r->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), ret;

	if (fd < 0)
		return errf(err, errlen, errno, "tcp: socket: %s", strerror(errno));
	fd_table_set(c, 2 * id + 1, fd, FD_CLIENT, id);
	ret = tcp_setup(ch, fd, err, errlen);
	if (ret)
		return ret;
	ret = tp_remote_connect(fd, &r->addr);
	if (ret) {
		net_format(&r->addr, true, where, sizeof(where));
		return errf(err, errlen, -ret, "tcp: client %u: connect to %s: %s", id, where,
			    strerror(-ret));
	}
	tp_rhello_fill(&h, r, id);
	if (full_write(fd, &h, sizeof(h)) != (ssize_t)sizeof(h))
		return errf(err, errlen, EPIPE, "tcp: client %u: hello not sent", id);
	return 0;
}

static int tcp_create_remote(struct tp_channel *ch, const struct tp_remote *r, char *err,
			     size_t errlen)
{
	unsigned n = tp_clients(ch);
	struct fd_table *c = fd_table_new(ch, 2 * n + 1, 0, sizeof(*r), err, errlen);
	int ret, fd;

	if (!c)
		return -ENOMEM;
	memcpy(c->extra, r, sizeof(*r));
	fd = socket(r->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errf(err, errlen, errno, "tcp: socket: %s", strerror(errno));
	ret = tcp_setup(ch, fd, err, errlen);
	if (!ret)
		tcp_report(ch, fd);
	close(fd);
	if (!ret && r->mode == TPR_SERVER)
		ret = tcp_remote_listen(ch, c, c->extra, err, errlen);
	for (unsigned id = 0; !ret && r->mode == TPR_CLIENT && id < n; id++)
		ret = tcp_remote_dial(ch, c, r, id, err, errlen);
	return ret;
}

/* The server's first open: every client's connection, by its hello (in
 * any order, strangers closed and counted: tp_remote_hellos), then the
 * listener closed. A stop signal ends the wait. */
static int tcp_remote_accept_all(struct tp_channel *ch, char *err, size_t errlen)
{
	struct fd_table *c = ch->priv;
	const struct tp_remote *r = c->extra;
	unsigned n = tp_clients(ch), foreign = 0;
	int lfd = c->fd[2 * n].fd, ret, *fds = malloc(n * sizeof(*fds));

	if (!fds)
		return errf(err, errlen, ENOMEM, "tcp: out of memory");
	ret = tp_remote_hellos("tcp", lfd, r, n, fds, &foreign, err, errlen);
	for (unsigned id = 0; id < n; id++) {
		if (fds[id] < 0)
			continue;
		fd_table_set(c, 2 * id, fds[id], FD_SERVER, id);
		if (!ret)
			ret = tcp_setup(ch, fds[id], err, errlen);
	}
	free(fds);
	close(lfd);
	c->fd[2 * n].fd = -1;
	return ret;
}

static int tcp_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		    struct tp_endpoint **out, char *err, size_t errlen)
{
	unsigned idx = 2 * id + (role == TP_CLIENT);
	struct tp_remote *r = tcp_remote_of(ch);
	int ret;

	if (r && r->mode == TPR_SERVER && role == TP_SERVER &&
	    ((struct fd_table *)ch->priv)->fd[2 * tp_clients(ch)].fd >= 0 &&
	    (ret = tcp_remote_accept_all(ch, err, errlen)))
		return ret;

	return tp_ep_from_chan(ch, role, id, idx, idx, TP_EP_SHUTDOWN, out, err, errlen);
}

const struct transport tp_tcp = {
	.name = "tcp",
	.summary = "TCP over 127.0.0.1, one connection per client, a byte stream; -O nodelay, sndbuf, rcvbuf",
	.caps = TP_STREAM | TP_MULTI_CLIENT | TP_POLLABLE | TP_REMOTE,
	.group = TP_GROUP_KERNEL,
	.options = tcp_options,
	.opts_size = sizeof(struct tcp_opts),
	.check_opts = tcp_check_opts,
	.create = tcp_create,
	.open = tcp_open,
	.send = tp_stream_send,
	.recv = tp_stream_recv,
	.pollfd = tp_fd_pollfd,
	.close = tp_fd_close,
	.destroy = fd_table_destroy,
	.reference = &ref_tcp,
};
