// SPDX-License-Identifier: MIT
/* unix-stream: one socketpair(AF_UNIX, SOCK_STREAM) per client, a byte
 * stream framed by message size. -O sndbuf/rcvbuf set SO_SNDBUF/SO_RCVBUF;
 * the values the kernel grants are read back and reported. Closing an
 * endpoint shuts its socket down for writing, so the peer reads EOF even
 * while another process still holds the descriptor. */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#include "ipclab/reference.h"
#include "tp_common.h"

struct ustream_opts {
	uint64_t sndbuf, rcvbuf;
};

static const struct opt_desc ustream_options[] = {
	{ .name = "sndbuf", .type = OPT_SIZE, .offset = offsetof(struct ustream_opts, sndbuf),
	  .def = "", .max = 1ull << 30,
	  .help = "SO_SNDBUF (0 = kernel default; the kernel doubles it, capped by net.core.wmem_max)" },
	{ .name = "rcvbuf", .type = OPT_SIZE, .offset = offsetof(struct ustream_opts, rcvbuf),
	  .def = "", .max = 1ull << 30,
	  .help = "SO_RCVBUF (0 = kernel default; capped by net.core.rmem_max)" },
	{ .name = NULL },
};

static int ustream_create(struct tp_channel *ch, char *err, size_t errlen)
{
	const struct ustream_opts *o = ch->cfg->opts;
	unsigned n = tp_clients(ch);
	struct fd_table *c = fd_table_new(ch, 2 * n, 0, 0, err, errlen);
	int sv[2], ret;

	if (!c)
		return -ENOMEM;
	for (unsigned id = 0; id < n; id++) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
			return errf(err, errlen, errno, "unix-stream: socketpair: %s",
				    strerror(errno));
		fd_table_set(c, 2 * id, sv[0], FD_SERVER, id);
		fd_table_set(c, 2 * id + 1, sv[1], FD_CLIENT, id);
		for (int i = 0; i < 2 && o; i++) {
			ret = tp_sock_bufs("unix-stream", sv[i], o->sndbuf, o->rcvbuf, err, errlen);
			if (ret)
				return ret;
		}
	}
	tp_sock_report(ch, c->fd[0].fd);
	return 0;
}

static int ustream_open(struct tp_channel *ch, enum tp_role role, unsigned id,
			struct tp_endpoint **out, char *err, size_t errlen)
{
	unsigned idx = 2 * id + (role == TP_CLIENT);

	return tp_ep_from_chan(ch, role, id, idx, idx, TP_EP_SHUTDOWN, out, err, errlen);
}

const struct transport tp_unix_stream = {
	.name = "unix-stream",
	.summary = "socketpair(AF_UNIX, SOCK_STREAM) per client, a byte stream; -O sndbuf, rcvbuf",
	.caps = TP_STREAM | TP_MULTI_CLIENT | TP_POLLABLE,
	.group = TP_GROUP_KERNEL,
	.options = ustream_options,
	.opts_size = sizeof(struct ustream_opts),
	.create = ustream_create,
	.open = ustream_open,
	.send = tp_stream_send,
	.recv = tp_stream_recv,
	.pollfd = tp_fd_pollfd,
	.close = tp_fd_close,
	.destroy = fd_table_destroy,
	.reference = &ref_unix_stream,
};
