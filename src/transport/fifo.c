// SPDX-License-Identifier: MIT
/* fifo: two named pipes per client (mkfifo in the private directory, one
 * per direction). The data path is the pipe's; what differs is that each
 * endpoint opens the paths itself, so only the two peers hold the pipe and
 * a peer's exit is EOF even in process mode. Opens follow one order on both
 * sides (client->server first, then server->client), so the blocking opens
 * of a FIFO pair up without deadlock. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipclab/cleanup.h"
#include "ipclab/reference.h"
#include "tp_common.h"

/* The channel's extra area: one path per direction per client. */
struct fifo_path {
	char path[PATH_MAX];
};

/* The pipe size the endpoints will get: a FIFO's pipe exists only while
 * open, so open it once without blocking (O_RDWR) and let it go again. */
static int fifo_report(struct tp_channel *ch, const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC), size = 0, ret;

	if (fd < 0)
		return errf(err, errlen, errno, "fifo: open %s: %s", path, strerror(errno));
	ret = tp_pipe_size("fifo", fd, 0, &size, err, errlen);
	close(fd);
	if (!ret)
		tp_setting(ch, "pipe_size_bytes", "%d", size);
	return ret;
}

static int fifo_create(struct tp_channel *ch, char *err, size_t errlen)
{
	unsigned n = 2 * tp_clients(ch);
	const char *dir = ch->cfg->dir ? ch->cfg->dir : cleanup_private_dir();
	struct fd_table *c = fd_table_new(ch, 0, n, n * sizeof(struct fifo_path), err, errlen);
	struct fifo_path *p;
	char name[96];

	if (!c)
		return -ENOMEM;
	if (!dir)
		return errf(err, errlen, errno, "fifo: private directory: %s", strerror(errno));
	p = c->extra;
	cleanup_unique_name(name, sizeof(name), "ipclab-fifo");
	for (unsigned i = 0; i < n; i++) {
		snprintf(p[i].path, sizeof(p[i].path), "%s/%s-%u-%s", dir, name, i / 2,
			 i % 2 ? "s2c" : "c2s");
		c->cl[i] = cleanup_add(CL_PATH, p[i].path);
		if (c->cl[i] < 0)
			return errf(err, errlen, ENOMEM, "fifo: cleanup table full");
		/* mkfifo fails if the path exists: created exclusively */
		if (mkfifo(p[i].path, 0600) < 0) {
			int e = errno;

			cleanup_forget(c->cl[i]);
			c->cl[i] = -1;
			return errf(err, errlen, e, "fifo: mkfifo %s: %s", p[i].path, strerror(e));
		}
	}
	return fifo_report(ch, p[0].path, err, errlen);
}

static int fifo_open_one(const char *path, int flags, const char *who, char *err, size_t errlen)
{
	/* blocks until the peer opens the other end; a signal interrupts it */
	int fd = open(path, flags | O_CLOEXEC);

	if (fd < 0)
		return errf(err, errlen, errno, "fifo: %s: open %s: %s", who, path, strerror(errno));
	return fd;
}

static int fifo_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		     struct tp_endpoint **out, char *err, size_t errlen)
{
	const struct fd_table *c = ch->priv;
	const struct fifo_path *p = (const struct fifo_path *)c->extra + 2 * id;
	bool srv = role == TP_SERVER;
	const char *who = srv ? "server" : "client";
	int c2s, s2c, ret = tp_check_id(ch, id, err, errlen);

	if (ret)
		return ret;
	c2s = fifo_open_one(p[0].path, srv ? O_RDONLY : O_WRONLY, who, err, errlen);
	if (c2s < 0)
		return c2s;
	s2c = fifo_open_one(p[1].path, srv ? O_WRONLY : O_RDONLY, who, err, errlen);
	if (s2c < 0) {
		close(c2s);
		return s2c;
	}
	ret = srv ? tp_ep_own(ch, c2s, s2c, 0, out, err, errlen) :
		    tp_ep_own(ch, s2c, c2s, 0, out, err, errlen);
	if (ret) {
		close(c2s);
		close(s2c);
	}
	return ret;
}

const struct transport tp_fifo = {
	.name = "fifo",
	.summary = "two named pipes (mkfifo) per client, opened by each endpoint; a byte stream",
	.caps = TP_STREAM | TP_MULTI_CLIENT | TP_POLLABLE | TP_NAMED,
	.group = TP_GROUP_KERNEL,
	.create = fifo_create,
	.open = fifo_open,
	.send = tp_stream_send,
	.recv = tp_stream_recv,
	.pollfd = tp_fd_pollfd,
	.close = tp_fd_close,
	.destroy = fd_table_destroy,
	.reference = &ref_fifo,
};
