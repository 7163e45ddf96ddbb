// SPDX-License-Identifier: MIT
/* tcp: TCP over loopback (127.0.0.1). create listens on one kernel-chosen
 * port per client id; a client connects in open and sends a hello with its
 * id, the server accepts on that id's port and checks it. TCP_NODELAY is on
 * by default (Nagle would hold back small messages; -O nodelay=0 measures
 * that); -O sndbuf/rcvbuf fix the buffers, which turns off autotuning. The
 * values a socket gets are read back and reported. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tp_common.h"

struct tcp_opts {
	int nodelay;
	uint64_t sndbuf, rcvbuf;
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
	{ .name = NULL },
};

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

static int tcp_listen(struct tp_chan *c, unsigned id, char *err, size_t errlen)
{
	struct sockaddr_in *sa = (struct sockaddr_in *)c->extra + id;
	socklen_t l = sizeof(*sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return errf(err, errlen, errno, "tcp: socket: %s", strerror(errno));
	tp_chan_set(c, id, fd, TPF_SERVER, id);
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa->sin_port = 0;	/* the kernel picks a free port */
	if (bind(fd, (struct sockaddr *)sa, sizeof(*sa)) < 0 || listen(fd, 4) < 0 ||
	    getsockname(fd, (struct sockaddr *)sa, &l) < 0)
		return errf(err, errlen, errno, "tcp: listen on 127.0.0.1: %s", strerror(errno));
	return 0;
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

static int tcp_create(struct tp_channel *ch, char *err, size_t errlen)
{
	unsigned n = tp_clients(ch);
	struct tp_chan *c = tp_chan_new(ch, n, 0, n * sizeof(struct sockaddr_in), err, errlen);
	int ret, fd;

	if (!c)
		return -ENOMEM;
	for (unsigned id = 0; id < n; id++) {
		ret = tcp_listen(c, id, err, errlen);
		if (ret)
			return ret;
	}
	/* what a connected socket will get, checked here, before anything starts */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errf(err, errlen, errno, "tcp: socket: %s", strerror(errno));
	ret = tcp_setup(ch, fd, err, errlen);
	if (!ret)
		tcp_report(ch, fd);
	close(fd);
	return ret;
}

static int tcp_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		    struct tp_endpoint **out, char *err, size_t errlen)
{
	struct tp_chan *c = ch->priv;
	const struct sockaddr_in *sa = (const struct sockaddr_in *)c->extra + id;
	int ret = tp_check_id(ch, id, err, errlen);

	if (ret)
		return ret;
	if (role == TP_CLIENT)
		return tp_conn_client(ch, id, (const struct sockaddr *)sa, sizeof(*sa), tcp_setup,
				      out, err, errlen);
	return tp_conn_server(ch, id, c->fd[id].fd, tcp_setup, out, err, errlen);
}

static size_t tcp_max_msg(const void *opts)
{
	return 0;
}

const struct transport tp_tcp = {
	.name = "tcp",
	.summary = "TCP over 127.0.0.1, one connection per client, a byte stream; -O nodelay, sndbuf, rcvbuf",
	.caps = TP_STREAM | TP_MULTI_CLIENT | TP_POLLABLE,
	.options = tcp_options,
	.opts_size = sizeof(struct tcp_opts),
	.max_msg = tcp_max_msg,
	.create = tcp_create,
	.open = tcp_open,
	.send = tp_stream_send,
	.recv = tp_stream_recv,
	.pollfd = tp_fd_pollfd,
	.close = tp_fd_close,
	.destroy = tp_chan_destroy,
};
