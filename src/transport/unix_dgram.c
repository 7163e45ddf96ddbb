// SPDX-License-Identifier: MIT
/* unix-dgram and unix-seqpacket: one socketpair(AF_UNIX, SOCK_DGRAM or
 * SOCK_SEQPACKET) per client; the kernel keeps message boundaries. The
 * largest message is SO_SNDBUF - 32 bytes (the check in unix_dgram_sendmsg),
 * so the send buffer (-O sndbuf, capped by net.core.wmem_max) sets the size
 * limit. A datagram socket has no EOF: closing sends a zero-length datagram,
 * which the peer's recv returns as 0; a seqpacket socket is shut down. */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipclab/reference.h"
#include "tp_common.h"

#define UNIX_DGRAM_OVERHEAD 32	/* unix_dgram_sendmsg: len > sk_sndbuf - 32 */

struct udgram_opts {
	uint64_t sndbuf;
};

static const struct opt_desc udgram_options[] = {
	{ .name = "sndbuf", .type = OPT_SIZE, .offset = offsetof(struct udgram_opts, sndbuf),
	  .def = "", .max = 1ull << 30,
	  .help = "SO_SNDBUF: the largest message is twice this - 32 (0 = default net.core.wmem_default; capped by net.core.wmem_max)" },
	{ .name = NULL },
};

/* The largest message a socket of this type carries with this SO_SNDBUF:
 * ask a scratch socketpair, so the answer is the kernel's, not a guess (a
 * refused size is reported by create, on the real sockets). */
static long udgram_limit(int type, uint64_t sndbuf)
{
	int sv[2], v = sndbuf > INT32_MAX / 2 ? INT32_MAX / 2 : (int)sndbuf, snd = 0;
	uint64_t def = 212992;

	if (socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, sv) < 0) {
		(void)tp_sysctl_u64("/proc/sys/net/core/wmem_default", &def);
		return (long)def - UNIX_DGRAM_OVERHEAD;
	}
	if (v)
		setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
	(void)tp_sock_get(sv[0], SO_SNDBUF, &snd);
	close(sv[0]);
	close(sv[1]);
	return (long)snd - UNIX_DGRAM_OVERHEAD;
}

static int udgram_create_type(struct tp_channel *ch, int type, char *err, size_t errlen)
{
	const struct udgram_opts *o = ch->cfg->opts;
	const char *name = ch->tp->name;
	unsigned n = tp_clients(ch);
	struct fd_table *c = fd_table_new(ch, 2 * n, 0, 0, err, errlen);
	uint64_t qlen;
	int sv[2], snd = 0, ret;

	if (!c)
		return -ENOMEM;
	for (unsigned id = 0; id < n; id++) {
		if (socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, sv) < 0)
			return errf(err, errlen, errno, "%s: socketpair: %s", name, strerror(errno));
		fd_table_set(c, 2 * id, sv[0], FD_SERVER, id);
		fd_table_set(c, 2 * id + 1, sv[1], FD_CLIENT, id);
		for (int i = 0; i < 2; i++) {
			ret = tp_sock_bufs(name, sv[i], o ? o->sndbuf : 0, 0, err, errlen);
			if (ret)
				return ret;
		}
	}
	(void)tp_sock_get(c->fd[0].fd, SO_SNDBUF, &snd);
	if (ch->cfg->msg_size + UNIX_DGRAM_OVERHEAD > (size_t)snd)
		return errf(err, errlen, EMSGSIZE,
			    "%s: message size %zu exceeds the largest datagram here (%d = SO_SNDBUF %d - 32); raise -O sndbuf=%zu (capped by net.core.wmem_max)",
			    name, ch->cfg->msg_size, snd - UNIX_DGRAM_OVERHEAD, snd,
			    (ch->cfg->msg_size + UNIX_DGRAM_OVERHEAD + 1) / 2);
	tp_sock_report(ch, c->fd[0].fd);
	tp_setting(ch, "max_msg_bytes", "%d", snd - UNIX_DGRAM_OVERHEAD);
	/* datagrams queued per receiver before the sender blocks */
	if (type == SOCK_DGRAM && tp_sysctl_u64("/proc/sys/net/unix/max_dgram_qlen", &qlen) == 0)
		tp_setting(ch, "max_dgram_qlen", "%llu", (unsigned long long)qlen);
	return 0;
}

static int udgram_create(struct tp_channel *ch, char *err, size_t errlen)
{
	return udgram_create_type(ch, SOCK_DGRAM, err, errlen);
}

static int useqp_create(struct tp_channel *ch, char *err, size_t errlen)
{
	return udgram_create_type(ch, SOCK_SEQPACKET, err, errlen);
}

static int udgram_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		       struct tp_endpoint **out, char *err, size_t errlen)
{
	unsigned idx = 2 * id + (role == TP_CLIENT);

	return tp_ep_from_chan(ch, role, id, idx, idx, TP_EP_MARKER, out, err, errlen);
}

static int useqp_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		      struct tp_endpoint **out, char *err, size_t errlen)
{
	unsigned idx = 2 * id + (role == TP_CLIENT);

	return tp_ep_from_chan(ch, role, id, idx, idx, TP_EP_SHUTDOWN, out, err, errlen);
}

static size_t udgram_max_msg(const void *opts)
{
	const struct udgram_opts *o = opts;

	return (size_t)udgram_limit(SOCK_DGRAM, o ? o->sndbuf : 0);
}

static size_t useqp_max_msg(const void *opts)
{
	const struct udgram_opts *o = opts;

	return (size_t)udgram_limit(SOCK_SEQPACKET, o ? o->sndbuf : 0);
}

const struct transport tp_unix_dgram = {
	.name = "unix-dgram",
	.summary = "socketpair(AF_UNIX, SOCK_DGRAM) per client, whole messages up to SO_SNDBUF - 32; -O sndbuf",
	.caps = TP_DGRAM | TP_MULTI_CLIENT | TP_POLLABLE,
	.group = TP_GROUP_KERNEL,
	.options = udgram_options,
	.opts_size = sizeof(struct udgram_opts),
	.max_msg = udgram_max_msg, .max_msg_limit = "-O sndbuf (capped by net.core.wmem_max)",
	.create = udgram_create,
	.open = udgram_open,
	.send = tp_dgram_send,
	.recv = tp_dgram_recv,
	.pollfd = tp_fd_pollfd,
	.close = tp_fd_close,
	.destroy = fd_table_destroy,
	.reference = &ref_unix_dgram,
};

const struct transport tp_unix_seqpacket = {
	.name = "unix-seqpacket",
	.summary = "socketpair(AF_UNIX, SOCK_SEQPACKET) per client, whole messages up to SO_SNDBUF - 32; -O sndbuf",
	.caps = TP_DGRAM | TP_MULTI_CLIENT | TP_POLLABLE,
	.group = TP_GROUP_KERNEL,
	.options = udgram_options,
	.opts_size = sizeof(struct udgram_opts),
	.max_msg = useqp_max_msg, .max_msg_limit = "-O sndbuf (capped by net.core.wmem_max)",
	.create = useqp_create,
	.open = useqp_open,
	.send = tp_dgram_send,
	.recv = tp_dgram_recv,
	.pollfd = tp_fd_pollfd,
	.close = tp_fd_close,
	.destroy = fd_table_destroy,
	.reference = &ref_unix_seqpacket,
};
