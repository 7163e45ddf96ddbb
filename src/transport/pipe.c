// SPDX-License-Identifier: MIT
/* pipe: two anonymous pipes per client, one per direction. A byte stream:
 * messages are framed by their size (full_read/full_write). -O pipe-size
 * sets F_SETPIPE_SZ; the size the kernel grants is read back and reported. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "ipclab/reference.h"
#include "tp_common.h"

struct pipe_opts {
	uint64_t pipe_size;
};

static const struct opt_desc pipe_options[] = {
	{ .name = "pipe-size", .type = OPT_SIZE, .offset = offsetof(struct pipe_opts, pipe_size),
	  .def = "", .min = 0, .max = 1ull << 31,
	  .help = "F_SETPIPE_SZ of each pipe (0 = kernel default, 64k; limit /proc/sys/fs/pipe-max-size)" },
	{ .name = NULL },
};

/* Channel entries per client id: client->server read/write, then
 * server->client read/write. */
enum { P_C2S_R, P_C2S_W, P_S2C_R, P_S2C_W, P_PER_CLIENT };

static int pipe_make(struct tp_channel *ch, struct fd_table *c, unsigned id, int *size,
		     char *err, size_t errlen)
{
	const struct pipe_opts *o = ch->cfg->opts;
	unsigned base = id * P_PER_CLIENT;
	int p[2], ret;

	for (unsigned dir = 0; dir < 2; dir++) {
		if (pipe2(p, O_CLOEXEC) < 0)
			return errf(err, errlen, errno, "pipe: pipe2: %s%s", strerror(errno),
				    errno == EMFILE ? " (raise the open-file limit: ulimit -n)" : "");
		/* client->server: the server reads; server->client: the client reads */
		fd_table_set(c, base + 2 * dir, p[0], dir ? FD_CLIENT : FD_SERVER, id);
		fd_table_set(c, base + 2 * dir + 1, p[1], dir ? FD_SERVER : FD_CLIENT, id);
		ret = tp_pipe_size("pipe", p[1], o ? o->pipe_size : 0, size, err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

static int pipe_create(struct tp_channel *ch, char *err, size_t errlen)
{
	unsigned n = tp_clients(ch);
	struct fd_table *c = fd_table_new(ch, n * P_PER_CLIENT, 0, 0, err, errlen);
	int size = 0, ret;

	if (!c)
		return -ENOMEM;
	for (unsigned id = 0; id < n; id++) {
		ret = pipe_make(ch, c, id, &size, err, errlen);
		if (ret)
			return ret;
	}
	tp_setting(ch, "pipe_size_bytes", "%d", size);
	return 0;
}

static int pipe_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		     struct tp_endpoint **out, char *err, size_t errlen)
{
	unsigned base = id * P_PER_CLIENT;

	if (role == TP_SERVER)
		return tp_ep_from_chan(ch, role, id, base + P_C2S_R, base + P_S2C_W, 0, out, err,
				       errlen);
	return tp_ep_from_chan(ch, role, id, base + P_S2C_R, base + P_C2S_W, 0, out, err, errlen);
}

const struct transport tp_pipe = {
	.name = "pipe",
	.summary = "two pipes per client (one per direction), a byte stream; -O pipe-size",
	.caps = TP_STREAM | TP_MULTI_CLIENT | TP_POLLABLE,
	.group = TP_GROUP_KERNEL,
	.options = pipe_options,
	.opts_size = sizeof(struct pipe_opts),
	.create = pipe_create,
	.open = pipe_open,
	.send = tp_stream_send,
	.recv = tp_stream_recv,
	.pollfd = tp_fd_pollfd,
	.close = tp_fd_close,
	.destroy = fd_table_destroy,
	.reference = &ref_pipe,
};
