// SPDX-License-Identifier: MIT
/*
 * client.c - ipcring_connect(): connect to a name, check the server's
 * credentials before saying anything (a squatter on the name is refused),
 * send the versioned hello, receive the refusal or the four descriptors of
 * the channel, and attach them (validated as any ring is).
 * ipcring_connect_cancel() is the same with waits its caller can end.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "ipc.h"

#define CONNECT_DEFAULT_MS	5000

/* How the waits of one connect end: by the deadline, or when cancel says. */
struct cl_wait {
	int timeout_ms;
	ipcring_cancel_fn cancel;
	void *ctx;
};

static bool uid_trusted(const struct ipcring_connect_opts *o, uint32_t uid)
{
	if (!o || !o->server_uids)
		return uid == (uint32_t)geteuid() || uid == 0;
	for (unsigned i = 0; i < o->nserver_uids; i++)
		if (o->server_uids[i] == uid)
			return true;
	return false;
}

static int cl_socket(const struct ipc_addr *a, const char *name, const struct cl_wait *w,
		     char *reason, size_t len)
{
	int fd, ret, err = 0;
	socklen_t el = sizeof(err);

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		ret = -errno;
		ipc_reason(reason, len, "socket: %s", strerror(-ret));
		return ret;
	}
	if (connect(fd, (const struct sockaddr *)&a->sa, a->len) < 0) {
		ret = -errno;
		if (ret == -EINPROGRESS || ret == -EAGAIN) {
			ret = ipc_wait_fd_cancel(fd, POLLOUT, w->timeout_ms, w->cancel, w->ctx);
			if (!ret && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
				ret = -errno;
			if (!ret)
				ret = -err;
		}
		if (ret) {
			ipc_reason(reason, len, "connect to %s: %s%s", name, strerror(-ret),
				   ret == -ENOENT || ret == -ECONNREFUSED ?
				   " (is the server running?)" : "");
			close(fd);
			return ret;
		}
	}
	return fd;
}

/* Receive the reply and, with a success, exactly HS_NFDS descriptors. */
static int cl_recv_reply(int fd, struct hs_reply *rep, int *fds, const struct cl_wait *w)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * (HS_NFDS + 4))];
	} u;
	struct iovec iov = { .iov_base = rep, .iov_len = sizeof(*rep) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cm;
	int nfds = 0, ret;
	ssize_t n;

	ret = ipc_wait_fd_cancel(fd, POLLIN, w->timeout_ms, w->cancel, w->ctx);
	if (ret)
		return ret;
	n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0 && errno == ECONNRESET) {
		/* a server that closed with our hello unread resets the socket,
		 * and the reset is read before the refusal it sent: again */
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (n < 0 && errno == EAGAIN)
			return -ECONNRESET;
	}
	if (n < 0)
		return -errno;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int *p = (int *)CMSG_DATA(cm);

		for (size_t i = 0; i < k; i++) {
			if (nfds < HS_NFDS)
				fds[nfds++] = p[i];
			else
				close(p[i]);	/* more than a channel: never kept */
		}
	}
	if (n == 0)
		return -ECONNRESET;
	if (n == (ssize_t)sizeof(*rep) && rep->magic == HS_REPLY_MAGIC && rep->status == 0 &&
	    !(mh.msg_flags & MSG_TRUNC) && (mh.msg_flags & MSG_CTRUNC) && nfds < HS_NFDS)
		ret = -EMFILE;	/* the kernel could not install them all here */
	else if ((mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || n != (ssize_t)sizeof(*rep) ||
		 rep->magic != HS_REPLY_MAGIC)
		ret = -EBADMSG;
	else if (rep->status == 0 && nfds != HS_NFDS)
		ret = -EBADMSG;
	if (ret || rep->status) {
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		for (int i = 0; i < HS_NFDS; i++)
			fds[i] = -1;
	}
	return ret;
}

/* Long: one check after another (uid, hello, reply, version), each with its reason. */
static int cl_handshake(struct ipcring_conn *c, const char *name,
			const struct ipcring_connect_opts *o, const struct cl_wait *w,
			char *reason, size_t len)
{
	struct hs_hello hello = {
		.magic = HS_HELLO_MAGIC,
		.version = o && o->proto_version ? o->proto_version : IPCRING_PROTO_VERSION,
		.tag = o ? o->tag : 0,
	};
	static const struct cl_wait now = { .timeout_ms = 0 };
	struct hs_reply rep;
	int fds[HS_NFDS] = { -1, -1, -1, -1 }, ret;

	ret = ipc_peer_cred(c->sock, &c->peer);
	if (ret) {
		ipc_reason(reason, len, "SO_PEERCRED on %s: %s", name, strerror(-ret));
		return ret;
	}
	if (!uid_trusted(o, c->peer.uid)) {
		ipc_reason(reason, len, "the server on %s runs as uid %u (pid %d), not a trusted "
			   "uid: someone else may hold the name", name, c->peer.uid, c->peer.pid);
		return -EACCES;
	}
	memset(&rep, 0, sizeof(rep));
	if (send(c->sock, &hello, sizeof(hello), MSG_NOSIGNAL) != (ssize_t)sizeof(hello)) {
		ret = -errno;
		/* refused before the hello (out of descriptors): the reason
		 * may be waiting */
		if ((ret != -EPIPE && ret != -ECONNRESET) ||
		    cl_recv_reply(c->sock, &rep, fds, &now) || !rep.status) {
			for (int i = 0; i < HS_NFDS; i++)
				if (fds[i] >= 0)
					close(fds[i]);
			ipc_reason(reason, len, "sending the hello to %s: %s", name, strerror(-ret));
			return ret;
		}
		ret = 0;	/* the refusal, below */
	} else {
		ret = cl_recv_reply(c->sock, &rep, fds, w);
	}
	if (ret) {
		ipc_reason(reason, len, "%s: %s", name, ret == -EBADMSG ?
			   "the server's reply is not an ipcring reply" :
			   ret == -ECONNRESET ? "the server closed the connection" :
			   ret == -EMFILE ? "receiving the channel's descriptors: out of file "
					    "descriptors in this process" :
			   ret == -ECANCELED ? "cancelled while waiting for the server's reply" :
			   strerror(-ret));
		return ret;
	}
	if (rep.status) {
		rep.reason[sizeof(rep.reason) - 1] = '\0';
		ipc_reason(reason, len, "refused by the server on %s: %s", name, rep.reason);
		return rep.status < -4095 || rep.status > 0 ? -EPROTO : rep.status;
	}
	if (rep.version != hello.version) {
		ipc_reason(reason, len, "the server on %s speaks protocol %u, this client %u",
			   name, rep.version, hello.version);
		ret = -EPROTO;
	}
	if (!ret) {
		c->id = rep.conn_id;
		ret = ipc_conn_attach(c, fds[0], fds[1], fds[2], fds[3], false);
		if (ret)
			ipc_reason(reason, len, "the rings from %s: %s", name, strerror(-ret));
	}
	for (int i = 0; i < HS_NFDS; i++)
		close(fds[i]);
	return ret;
}

int ipcring_connect_cancel(struct ipcring_conn **conn, const char *name,
			   const struct ipcring_connect_opts *o, ipcring_cancel_fn cancel,
			   void *ctx, char *reason, size_t len)
{
	struct cl_wait w = {
		.timeout_ms = ipc_timeout(o ? o->timeout_ms : 0, CONNECT_DEFAULT_MS),
		.cancel = cancel, .ctx = ctx,
	};
	struct ipcring_conn *c;
	struct ipc_addr a;
	int ret;

	if (reason && len)
		reason[0] = '\0';
	if (!conn)
		return -EINVAL;
	*conn = NULL;
	ret = ipc_resolve(name, &a, false, reason, len);
	if (ret)
		return ret;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->tag = o ? o->tag : 0;
	c->sock = cl_socket(&a, name, &w, reason, len);
	if (c->sock < 0) {
		ret = c->sock;
		free(c);
		return ret;
	}
	ret = cl_handshake(c, name, o, &w, reason, len);
	if (ret) {
		ipc_conn_free(c);
		return ret;
	}
	*conn = c;
	return 0;
}

int ipcring_connect(struct ipcring_conn **conn, const char *name,
		    const struct ipcring_connect_opts *o, char *reason, size_t len)
{
	return ipcring_connect_cancel(conn, name, o, NULL, NULL, reason, len);
}

int ipcring_conn_close(struct ipcring_conn *c)
{
	if (c && c->srv)
		return -EINVAL;		/* the dispatcher's: ipcring_conn_drop() */
	ipc_conn_free(c);
	return 0;
}
