// SPDX-License-Identifier: MIT
/* udp: UDP over loopback (127.0.0.1), a pair of connected sockets per
 * client. Lossy: the transport only moves datagrams; a full receive buffer
 * drops them, and the pattern counts what is lost, duplicated or reordered.
 * Messages are at most 65507 bytes (the IPv4 datagram limit). Closing sends
 * a zero-length datagram, which the peer's recv returns as 0 (EOF); being
 * a datagram, it can be lost too.
 *
 * Any local user can send to a port on 127.0.0.1. Once connected, a socket
 * takes datagrams only from its peer's address and port, which our own
 * socket holds; what another process sent between bind and connect is
 * already queued, so create drains both sockets and counts it (setting
 * foreign_datagrams). recv also checks each datagram's source and drops a
 * stranger's, for one whose delivery raced the connect itself: nothing
 * foreign is ever measured. */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipclab/netaddr.h"
#include "ipclab/reference.h"
#include "tp_common.h"
#include "tp_remote.h"

#define UDP_MAX_MSG 65507u	/* 65535 - 8 (UDP header) - 20 (IPv4 header) */

struct udp_opts {
	uint64_t sndbuf, rcvbuf;
	char listen[OPT_STR_MAX], connect[OPT_STR_MAX], secret[OPT_STR_MAX];
};

static const struct opt_desc udp_options[] = {
	{ .name = "sndbuf", .type = OPT_SIZE, .offset = offsetof(struct udp_opts, sndbuf),
	  .def = "", .max = 1ull << 30,
	  .help = "SO_SNDBUF (0 = net.core.wmem_default; capped by net.core.wmem_max)" },
	{ .name = "rcvbuf", .type = OPT_SIZE, .offset = offsetof(struct udp_opts, rcvbuf),
	  .def = "", .max = 1ull << 30,
	  .help = "SO_RCVBUF: what a slow receiver can queue before drops (0 = net.core.rmem_default; capped by net.core.rmem_max)" },
	{ .name = "listen", .type = OPT_STRING, .offset = offsetof(struct udp_opts, listen),
	  .def = "", .help = "between hosts: the server's side only, on this IPv4 or IPv6 address, client i on port PORT+i (set by ipclab serve)" },
	{ .name = "connect", .type = OPT_STRING, .offset = offsetof(struct udp_opts, connect),
	  .def = "", .help = "between hosts: the clients only, client i sending to IPV4:PORT+i or [IPV6]:PORT+i (set by run --peer)" },
	{ .name = "secret", .type = OPT_STRING, .offset = offsetof(struct udp_opts, secret),
	  .def = "", .help = "between hosts: the cell's hello secret, 32 hex digits (set by serve / --peer)" },
	{ .name = NULL },
};

static int udp_check_opts(const void *opts, char *err, size_t errlen)
{
	const struct udp_opts *o = opts;

	return tp_remote_check("udp", o->listen, o->connect, o->secret, err, errlen);
}

static int udp_socket(struct tp_channel *ch, struct sockaddr_in *sa, char *err, size_t errlen)
{
	const struct udp_opts *o = ch->cfg->opts;
	socklen_t l = sizeof(*sa);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret;

	if (fd < 0)
		return errf(err, errlen, errno, "udp: socket: %s", strerror(errno));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa->sin_port = 0;	/* the kernel picks a free port */
	if (bind(fd, (struct sockaddr *)sa, sizeof(*sa)) < 0 ||
	    getsockname(fd, (struct sockaddr *)sa, &l) < 0) {
		ret = errf(err, errlen, errno, "udp: bind 127.0.0.1: %s", strerror(errno));
		close(fd);
		return ret;
	}
	ret = o ? tp_sock_bufs("udp", fd, o->sndbuf, o->rcvbuf, err, errlen) : 0;
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

/* Nothing of ours has been sent yet: whatever a socket holds is foreign. */
static unsigned udp_drain(int fd)
{
	unsigned n = 0;
	char b;

	while (recv(fd, &b, 1, MSG_DONTWAIT | MSG_TRUNC) >= 0)
		n++;
	return n;
}

static int udp_pair(struct tp_channel *ch, struct fd_table *c, unsigned id, unsigned *foreign,
		    char *err, size_t errlen)
{
	struct sockaddr_in sa[2] = { { 0 } };
	int fd[2];

	for (int i = 0; i < 2; i++) {
		fd[i] = udp_socket(ch, &sa[i], err, errlen);
		if (fd[i] < 0)
			return fd[i];
		fd_table_set(c, 2 * id + i, fd[i], i ? FD_CLIENT : FD_SERVER, id);
	}
	/* connected: each socket takes datagrams from its peer only */
	for (int i = 0; i < 2; i++)
		if (connect(fd[i], (struct sockaddr *)&sa[!i], sizeof(sa[0])) < 0)
			return errf(err, errlen, errno, "udp: connect: %s", strerror(errno));
	for (int i = 0; i < 2; i++)
		*foreign += udp_drain(fd[i]);
	return 0;
}

/* ---- between hosts -------------------------------------------------------- */

#define UDP_HELLO_RESEND_MS 200

static struct tp_remote *udp_remote_of(struct tp_channel *ch)
{
	struct fd_table *c = ch->priv;

	return c && c->nfd == 2 * tp_clients(ch) + 1 ? c->extra : NULL;
}

/* The server's sockets on consecutive ports, one per client id. */
static int udp_remote_bind(struct tp_channel *ch, struct fd_table *c, const struct tp_remote *r,
			   char *err, size_t errlen)
{
	const struct udp_opts *o = ch->cfg->opts;
	unsigned n = tp_clients(ch);

	for (int attempt = 0; attempt < 32; attempt++) {
		struct sockaddr_storage sa = r->addr;
		socklen_t l = sizeof(sa);
		unsigned id, base = 0;
		int fd;

		for (unsigned i = 0; i < 2 * n; i++)
			if (c->fd[i].fd >= 0) {
				close(c->fd[i].fd);
				c->fd[i].fd = -1;
			}
		net_set_port(&sa, 0);
		for (id = 0; id < n; id++) {
			fd = socket(sa.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
			if (fd < 0)
				return errf(err, errlen, errno, "udp: socket: %s", strerror(errno));
			fd_table_set(c, 2 * id, fd, FD_SERVER, id);
			if (bind(fd, (struct sockaddr *)&sa, net_len(&sa)) < 0) {
				if (id && errno == EADDRINUSE)
					break;	/* the next port is taken: another base */
				return errf(err, errlen, errno, "udp: bind: %s", strerror(errno));
			}
			if (!id && getsockname(fd, (struct sockaddr *)&sa, &l) < 0)
				return errf(err, errlen, errno, "udp: getsockname: %s", strerror(errno));
			if (!id)
				base = net_port(&sa);
			if (id + 1 < n && net_port(&sa) == 65535)
				break;	/* no room past it: another base */
			if (id + 1 < n)
				net_set_port(&sa, (uint16_t)(net_port(&sa) + 1));
			if (o && tp_sock_bufs("udp", fd, o->sndbuf, o->rcvbuf, err, errlen))
				return -ERANGE;
		}
		if (id == n) {
			tp_setting(ch, "listen_port", "%u", base);
			return 0;
		}
	}
	return errf(err, errlen, EADDRINUSE, "udp: no %u consecutive free ports", n);
}

/* Client id: its hello goes to port PORT+id until the server's answer. */
static int udp_remote_dial(struct tp_channel *ch, struct fd_table *c, const struct tp_remote *r,
			   unsigned id, char *err, size_t errlen)
{
	const struct udp_opts *o = ch->cfg->opts;
	struct sockaddr_storage sa = r->addr;
	struct tp_rhello h, got;
	uint64_t deadline = now_ns() + TP_REMOTE_WAIT_MS * NSEC_PER_MSEC;
	int fd = socket(sa.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret;

	if (fd < 0)
		return errf(err, errlen, errno, "udp: socket: %s", strerror(errno));
	fd_table_set(c, 2 * id + 1, fd, FD_CLIENT, id);
	if (o && (ret = tp_sock_bufs("udp", fd, o->sndbuf, o->rcvbuf, err, errlen)))
		return ret;
	if (net_port(&sa) + id > 65535)
		return errf(err, errlen, EINVAL, "udp: -O connect: port %u + client %u is past 65535",
			    net_port(&sa), id);
	net_set_port(&sa, (uint16_t)(net_port(&sa) + id));
	if (connect(fd, (struct sockaddr *)&sa, net_len(&sa)) < 0)
		return errf(err, errlen, errno, "udp: client %u: connect: %s", id, strerror(errno));
	tp_rhello_fill(&h, r, id);
	while (now_ns() < deadline) {
		if (send(fd, &h, sizeof(h), MSG_NOSIGNAL) < 0 && errno != ECONNREFUSED)
			return errf(err, errlen, errno, "udp: client %u: hello: %s", id, strerror(errno));
		ret = tp_remote_poll(fd, POLLIN, UDP_HELLO_RESEND_MS);
		if (ret == -EINTR)
			return errf(err, errlen, EINTR, "udp: client %u: stopped during the hello", id);
		if (ret > 0 && recv(fd, &got, sizeof(got), MSG_DONTWAIT) == (ssize_t)sizeof(got) &&
		    tp_rhello_check(&got, r, tp_clients(ch)) == (int)id)
			return 0;
	}
	return errf(err, errlen, ETIMEDOUT, "udp: client %u: no answer to its hello within %d s",
		    id, TP_REMOTE_WAIT_MS / 1000);
}

/* Server, client id: wait for that client's hello, connect to where it
 * came from, answer it. Other datagrams are foreign: dropped. */
static int udp_remote_accept(struct tp_channel *ch, unsigned id, char *err, size_t errlen)
{
	struct fd_table *c = ch->priv;
	const struct tp_remote *r = c->extra;
	int fd = c->fd[2 * id].fd, ret;
	uint64_t deadline = now_ns() + TP_REMOTE_WAIT_MS * NSEC_PER_MSEC;

	while (now_ns() < deadline) {
		struct sockaddr_storage from;
		socklen_t l = sizeof(from);
		struct tp_rhello h;
		ssize_t n;

		ret = tp_remote_poll(fd, POLLIN, 100);
		if (ret == -EINTR)
			return errf(err, errlen, EINTR, "udp: server: stopped while waiting for client %u", id);
		if (ret <= 0)
			continue;
		n = recvfrom(fd, &h, sizeof(h), MSG_DONTWAIT | MSG_TRUNC, (struct sockaddr *)&from, &l);
		if (n != (ssize_t)sizeof(h) || tp_rhello_check(&h, r, tp_clients(ch)) != (int)id)
			continue;
		if (connect(fd, (struct sockaddr *)&from, l) < 0)
			return errf(err, errlen, errno, "udp: server: connect: %s", strerror(errno));
		/* the answer; a lost one makes the client repeat its hello,
		 * which recv drops */
		for (int k = 0; k < 3; k++)
			(void)!send(fd, &h, sizeof(h), MSG_NOSIGNAL);
		return 0;
	}
	return errf(err, errlen, ETIMEDOUT, "udp: server: client %u's hello did not arrive within %d s",
		    id, TP_REMOTE_WAIT_MS / 1000);
}

static int udp_create_remote(struct tp_channel *ch, const struct tp_remote *r, char *err,
			     size_t errlen)
{
	unsigned n = tp_clients(ch);
	struct fd_table *c = fd_table_new(ch, 2 * n + 1, 0, sizeof(*r), err, errlen);
	int ret = 0;

	if (!c)
		return -ENOMEM;
	memcpy(c->extra, r, sizeof(*r));
	if (r->mode == TPR_SERVER)
		ret = udp_remote_bind(ch, c, r, err, errlen);
	for (unsigned id = 0; !ret && r->mode == TPR_CLIENT && id < n; id++)
		ret = udp_remote_dial(ch, c, r, id, err, errlen);
	if (!ret)
		tp_sock_report(ch, c->fd[r->mode == TPR_SERVER ? 0 : 1].fd);
	return ret;
}

static int udp_create(struct tp_channel *ch, char *err, size_t errlen)
{
	const struct udp_opts *o = ch->cfg->opts;
	unsigned n = tp_clients(ch);
	struct tp_remote r = { 0 };
	struct fd_table *c;
	unsigned foreign = 0;
	int ret = 0;

	if (o && (ret = tp_remote_parse("udp", o->listen, o->connect, o->secret, &r, err, errlen)))
		return ret;

	if (ch->cfg->msg_size > UDP_MAX_MSG)
		return errf(err, errlen, EMSGSIZE,
			    "udp: message size %zu exceeds the largest UDP datagram (%u bytes); use a smaller -s",
			    ch->cfg->msg_size, UDP_MAX_MSG);
	if (r.mode != TPR_LOCAL)
		return udp_create_remote(ch, &r, err, errlen);
	c = fd_table_new(ch, 2 * n, 0, 0, err, errlen);
	if (!c)
		return -ENOMEM;
	for (unsigned id = 0; !ret && id < n; id++)
		ret = udp_pair(ch, c, id, &foreign, err, errlen);
	if (!ret)
		tp_sock_report(ch, c->fd[0].fd);
	tp_setting(ch, "foreign_datagrams", "%u", foreign);
	return ret;
}

static int udp_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		    struct tp_endpoint **out, char *err, size_t errlen)
{
	unsigned idx = 2 * id + (role == TP_CLIENT);
	struct sockaddr_storage *peer = calloc(1, sizeof(*peer));
	socklen_t l = sizeof(*peer);
	struct tp_remote *r = udp_remote_of(ch);
	int ret;

	if (!peer)
		return errf(err, errlen, ENOMEM, "udp: out of memory");
	if (r && r->mode == TPR_SERVER && role == TP_SERVER && id < tp_clients(ch) &&
	    (ret = udp_remote_accept(ch, id, err, errlen))) {
		free(peer);
		return ret;
	}
	ret = tp_ep_from_chan(ch, role, id, idx, idx, TP_EP_MARKER, out, err, errlen);
	if (ret) {
		free(peer);
		return ret;
	}
	/* the address recv accepts datagrams from */
	if (getpeername((*out)->rfd, (struct sockaddr *)peer, &l) < 0) {
		ret = errf(err, errlen, errno, "udp: getpeername: %s", strerror(errno));
		free(peer);
		tp_ep_free(*out);
		*out = NULL;
		return ret;
	}
	(*out)->extra = peer;
	return 0;
}

/* As tp_dgram_recv, but a datagram from anywhere but the peer is dropped. */
static ssize_t udp_recv(struct tp_endpoint *ep, void *buf, size_t len)
{
	const struct sockaddr_storage *peer = ep->extra;

	for (;;) {
		struct sockaddr_storage from;
		socklen_t l = sizeof(from);
		ssize_t n = recvfrom(ep->rfd, buf, len, MSG_TRUNC, (struct sockaddr *)&from, &l);

		if (n < 0)
			return errno == ECONNREFUSED ? 0 : -errno;
		if (l != net_len(peer) || !net_same(&from, peer))
			continue;
		/* between hosts: a client's repeated hello (its answer was lost) */
		if (n == (ssize_t)sizeof(struct tp_rhello) &&
		    ((const struct tp_rhello *)buf)->magic == TP_RHELLO_MAGIC && len >= (size_t)n)
			continue;
		return (size_t)n > len ? -EMSGSIZE : n;
	}
}

static void udp_close(struct tp_endpoint *ep)
{
	void *peer = ep ? ep->extra : NULL;

	tp_fd_close(ep);
	free(peer);
}

static size_t udp_max_msg(const void *opts)
{
	return UDP_MAX_MSG;
}

const struct transport tp_udp = {
	.name = "udp",
	.summary = "UDP over 127.0.0.1, connected socket pair per client; lossy, at most 65507 bytes; -O sndbuf, rcvbuf",
	.caps = TP_DGRAM | TP_LOSSY | TP_MULTI_CLIENT | TP_POLLABLE | TP_REMOTE,
	.group = TP_GROUP_KERNEL,
	.options = udp_options,
	.opts_size = sizeof(struct udp_opts),
	.check_opts = udp_check_opts,
	.max_msg = udp_max_msg,
	.create = udp_create,
	.open = udp_open,
	.send = tp_dgram_send,
	.recv = udp_recv,
	.pollfd = tp_fd_pollfd,
	.close = udp_close,
	.destroy = fd_table_destroy,
	.reference = &ref_udp,
};
