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
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tp_common.h"

#define UDP_MAX_MSG 65507u	/* 65535 - 8 (UDP header) - 20 (IPv4 header) */

struct udp_opts {
	uint64_t sndbuf, rcvbuf;
};

static const struct opt_desc udp_options[] = {
	{ .name = "sndbuf", .type = OPT_SIZE, .offset = offsetof(struct udp_opts, sndbuf),
	  .def = "", .max = 1ull << 30,
	  .help = "SO_SNDBUF (0 = net.core.wmem_default; capped by net.core.wmem_max)" },
	{ .name = "rcvbuf", .type = OPT_SIZE, .offset = offsetof(struct udp_opts, rcvbuf),
	  .def = "", .max = 1ull << 30,
	  .help = "SO_RCVBUF: what a slow receiver can queue before drops (0 = net.core.rmem_default; capped by net.core.rmem_max)" },
	{ .name = NULL },
};

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

static int udp_pair(struct tp_channel *ch, struct tp_chan *c, unsigned id, unsigned *foreign,
		    char *err, size_t errlen)
{
	struct sockaddr_in sa[2] = { { 0 } };
	int fd[2];

	for (int i = 0; i < 2; i++) {
		fd[i] = udp_socket(ch, &sa[i], err, errlen);
		if (fd[i] < 0)
			return fd[i];
		tp_chan_set(c, 2 * id + i, fd[i], i ? TPF_CLIENT : TPF_SERVER, id);
	}
	/* connected: each socket takes datagrams from its peer only */
	for (int i = 0; i < 2; i++)
		if (connect(fd[i], (struct sockaddr *)&sa[!i], sizeof(sa[0])) < 0)
			return errf(err, errlen, errno, "udp: connect: %s", strerror(errno));
	for (int i = 0; i < 2; i++)
		*foreign += udp_drain(fd[i]);
	return 0;
}

static int udp_create(struct tp_channel *ch, char *err, size_t errlen)
{
	unsigned n = tp_clients(ch);
	struct tp_chan *c;
	unsigned foreign = 0;
	int ret = 0;

	if (ch->cfg->msg_size > UDP_MAX_MSG)
		return errf(err, errlen, EMSGSIZE,
			    "udp: message size %zu exceeds the largest UDP datagram (%u bytes); use a smaller -s",
			    ch->cfg->msg_size, UDP_MAX_MSG);
	c = tp_chan_new(ch, 2 * n, 0, 0, err, errlen);
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
	struct sockaddr_in *peer = malloc(sizeof(*peer));
	socklen_t l = sizeof(*peer);
	int ret;

	if (!peer)
		return errf(err, errlen, ENOMEM, "udp: out of memory");
	ret = tp_ep_from_chan(ch, role, id, idx, idx, TPE_MARKER, out, err, errlen);
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
	const struct sockaddr_in *peer = ep->extra;

	for (;;) {
		struct sockaddr_in from;
		socklen_t l = sizeof(from);
		ssize_t n = recvfrom(ep->rfd, buf, len, MSG_TRUNC, (struct sockaddr *)&from, &l);

		if (n < 0)
			return errno == ECONNREFUSED ? 0 : -errno;
		if (l == sizeof(from) && from.sin_port == peer->sin_port &&
		    from.sin_addr.s_addr == peer->sin_addr.s_addr)
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
	.caps = TP_DGRAM | TP_LOSSY | TP_MULTI_CLIENT | TP_POLLABLE,
	.options = udp_options,
	.opts_size = sizeof(struct udp_opts),
	.max_msg = udp_max_msg,
	.create = udp_create,
	.open = udp_open,
	.send = tp_dgram_send,
	.recv = udp_recv,
	.pollfd = tp_fd_pollfd,
	.close = udp_close,
	.destroy = tp_chan_destroy,
};
