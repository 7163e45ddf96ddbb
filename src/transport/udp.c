// SPDX-License-Identifier: MIT
/* udp: UDP over loopback (127.0.0.1), a pair of connected sockets per
 * client. Lossy: the transport only moves datagrams; a full receive buffer
 * drops them, and the pattern counts what is lost, duplicated or reordered.
 * Messages are at most 65507 bytes (the IPv4 datagram limit). Closing sends
 * a zero-length datagram, which the peer's recv returns as 0 (EOF); being
 * a datagram, it can be lost too. */
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
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

static int udp_pair(struct tp_channel *ch, struct tp_chan *c, unsigned id, char *err,
		    size_t errlen)
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
	return 0;
}

static int udp_create(struct tp_channel *ch, char *err, size_t errlen)
{
	unsigned n = tp_clients(ch);
	struct tp_chan *c;
	int ret;

	if (ch->cfg->msg_size > UDP_MAX_MSG)
		return errf(err, errlen, EMSGSIZE,
			    "udp: message size %zu exceeds the largest UDP datagram (%u bytes); use a smaller -s",
			    ch->cfg->msg_size, UDP_MAX_MSG);
	c = tp_chan_new(ch, 2 * n, 0, 0, err, errlen);
	if (!c)
		return -ENOMEM;
	for (unsigned id = 0; id < n; id++) {
		ret = udp_pair(ch, c, id, err, errlen);
		if (ret)
			return ret;
	}
	tp_sock_report(ch, c->fd[0].fd);
	return 0;
}

static int udp_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		    struct tp_endpoint **out, char *err, size_t errlen)
{
	unsigned idx = 2 * id + (role == TP_CLIENT);

	return tp_ep_from_chan(ch, role, id, idx, idx, TPE_MARKER, out, err, errlen);
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
	.recv = tp_dgram_recv,
	.pollfd = tp_fd_pollfd,
	.close = tp_fd_close,
	.destroy = tp_chan_destroy,
};
