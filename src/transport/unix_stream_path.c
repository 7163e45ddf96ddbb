// SPDX-License-Identifier: MIT
/* unix-stream-path: AF_UNIX stream sockets through a path, the way real
 * servers do it. create binds and listens on one socket path per client id
 * in the private directory; a client connects in open and sends a hello
 * with its id, the server accepts on that id's socket and checks it. The
 * connected sockets exist only in the two endpoints, so a peer's exit is
 * EOF in process mode too. -O sndbuf/rcvbuf as unix-stream. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ipclab/cleanup.h"
#include "tp_common.h"

struct upath_opts {
	uint64_t sndbuf, rcvbuf;
};

static const struct opt_desc upath_options[] = {
	{ .name = "sndbuf", .type = OPT_SIZE, .offset = offsetof(struct upath_opts, sndbuf),
	  .def = "", .max = 1ull << 30,
	  .help = "SO_SNDBUF (0 = kernel default; capped by net.core.wmem_max)" },
	{ .name = "rcvbuf", .type = OPT_SIZE, .offset = offsetof(struct upath_opts, rcvbuf),
	  .def = "", .max = 1ull << 30,
	  .help = "SO_RCVBUF (0 = kernel default; capped by net.core.rmem_max)" },
	{ .name = NULL },
};

static int upath_setup(struct tp_channel *ch, int fd, char *err, size_t errlen)
{
	const struct upath_opts *o = ch->cfg->opts;

	return o ? tp_sock_bufs(ch->tp->name, fd, o->sndbuf, o->rcvbuf, err, errlen) : 0;
}

static int upath_listen(struct tp_channel *ch, struct fd_table *c, unsigned id,
			const char *base, char *err, size_t errlen)
{
	struct sockaddr_un *sa = (struct sockaddr_un *)c->extra + id;
	int fd;

	sa->sun_family = AF_UNIX;
	if ((size_t)snprintf(sa->sun_path, sizeof(sa->sun_path), "%s-%u.sock", base, id) >=
	    sizeof(sa->sun_path))
		return errf(err, errlen, ENAMETOOLONG,
			    "unix-stream-path: %s-%u.sock is longer than a socket path may be (%zu); set TMPDIR to a shorter directory",
			    base, id, sizeof(sa->sun_path) - 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errf(err, errlen, errno, "unix-stream-path: socket: %s", strerror(errno));
	fd_table_set(c, id, fd, FD_SERVER, id);
	c->cl[id] = cleanup_add(CL_PATH, sa->sun_path);
	if (c->cl[id] < 0)
		return errf(err, errlen, ENOMEM, "unix-stream-path: cleanup table full");
	/* bind creates the socket file and fails if the path exists */
	if (bind(fd, (struct sockaddr *)sa, sizeof(*sa)) < 0) {
		int e = errno;

		cleanup_forget(c->cl[id]);
		c->cl[id] = -1;
		return errf(err, errlen, e, "unix-stream-path: bind %s: %s", sa->sun_path,
			    strerror(e));
	}
	/* the 0700 directory already keeps others out; this is for the record */
	if (chmod(sa->sun_path, 0600) < 0 || listen(fd, 4) < 0)
		return errf(err, errlen, errno, "unix-stream-path: listen %s: %s", sa->sun_path,
			    strerror(errno));
	return 0;
}

static int upath_create(struct tp_channel *ch, char *err, size_t errlen)
{
	unsigned n = tp_clients(ch);
	const char *dir = ch->cfg->dir ? ch->cfg->dir : cleanup_private_dir();
	struct fd_table *c = fd_table_new(ch, n, n, n * sizeof(struct sockaddr_un), err, errlen);
	char name[64], base[sizeof(((struct sockaddr_un *)0)->sun_path) + 64];
	int ret, fd;

	if (!c)
		return -ENOMEM;
	if (!dir)
		return errf(err, errlen, errno, "unix-stream-path: private directory: %s",
			    strerror(errno));
	cleanup_unique_name(name, sizeof(name), "ipclab-sock");
	snprintf(base, sizeof(base), "%s/%s", dir, name);
	for (unsigned id = 0; id < n; id++) {
		ret = upath_listen(ch, c, id, base, err, errlen);
		if (ret)
			return ret;
	}
	/* what a connected socket will get, checked here, before anything starts */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errf(err, errlen, errno, "unix-stream-path: socket: %s", strerror(errno));
	ret = upath_setup(ch, fd, err, errlen);
	if (!ret)
		tp_sock_report(ch, fd);
	close(fd);
	return ret;
}

static int upath_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		      struct tp_endpoint **out, char *err, size_t errlen)
{
	struct fd_table *c = ch->priv;
	const struct sockaddr_un *sa = (const struct sockaddr_un *)c->extra + id;
	int ret = tp_check_id(ch, id, err, errlen);

	if (ret)
		return ret;
	if (role == TP_CLIENT)
		return tp_conn_client(ch, id, (const struct sockaddr *)sa, sizeof(*sa), upath_setup,
				      out, err, errlen);
	return tp_conn_server(ch, id, c->fd[id].fd, upath_setup, out, err, errlen);
}

const struct transport tp_unix_stream_path = {
	.name = "unix-stream-path",
	.summary = "AF_UNIX stream sockets connected through a path (listen/connect/accept), a byte stream",
	.caps = TP_STREAM | TP_MULTI_CLIENT | TP_POLLABLE | TP_NAMED,
	.group = TP_GROUP_KERNEL,
	.options = upath_options,
	.opts_size = sizeof(struct upath_opts),
	.create = upath_create,
	.open = upath_open,
	.send = tp_stream_send,
	.recv = tp_stream_recv,
	.pollfd = tp_fd_pollfd,
	.close = tp_fd_close,
	.destroy = fd_table_destroy,
};
