// SPDX-License-Identifier: MIT
/*
 * name.c - the connection layer's common parts: a name to a socket address
 * (abstract, a checked 0700 directory, or the per-user default directory),
 * reasons, peer credentials, bounded waits on one fd, and attaching a
 * connection's two ends with the control socket as the peer watch.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "ipc.h"

void ipc_reason(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!buf || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

int ipc_timeout(int timeout_ms, int def_ms)
{
	return timeout_ms ? timeout_ms : def_ms;
}

/* @dir must be a real directory of ours that nobody else can enter. */
static int dir_check(const char *dir, char *reason, size_t len)
{
	struct stat st;

	if (lstat(dir, &st) < 0) {
		int e = errno;

		ipc_reason(reason, len, "%s: %s", dir, strerror(e));
		return -e;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		ipc_reason(reason, len, "%s is not a directory of uid %u with mode 0700 "
			   "(fix it, or name a socket in such a directory)", dir,
			   (unsigned)geteuid());
		return -EACCES;
	}
	return 0;
}

static int default_dir(char *dir, size_t dlen, bool create, char *reason, size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int n;

	if (xdg && xdg[0] == '/')
		n = snprintf(dir, dlen, "%s/ipcring", xdg);
	else
		n = snprintf(dir, dlen, "/tmp/ipcring-%u", (unsigned)geteuid());
	if (n < 0 || (size_t)n >= dlen) {
		ipc_reason(reason, len, "the socket directory name is too long");
		return -ENAMETOOLONG;
	}
	if (create && mkdir(dir, 0700) < 0 && errno != EEXIST) {
		int e = errno;

		ipc_reason(reason, len, "mkdir %s: %s", dir, strerror(e));
		return -e;
	}
	return dir_check(dir, reason, len);
}

static int path_set(struct ipc_addr *a, const char *path, char *reason, size_t len)
{
	size_t n = strlen(path);

	if (n >= sizeof(a->sa.sun_path)) {
		ipc_reason(reason, len, "socket path %s is longer than %zu bytes", path,
			   sizeof(a->sa.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	memcpy(a->sa.sun_path, path, n + 1);
	a->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	return 0;
}

int ipc_resolve(const char *name, struct ipc_addr *a, bool create_dir,
		char *reason, size_t len)
{
	char dir[sizeof(a->sa.sun_path)], path[2 * sizeof(a->sa.sun_path)];
	const char *slash;
	size_t n;
	int ret;

	memset(a, 0, sizeof(*a));
	a->sa.sun_family = AF_UNIX;
	if (!name || !name[0] || !strcmp(name, "@")) {
		ipc_reason(reason, len, "empty name");
		return -EINVAL;
	}
	if (name[0] == '@') {
		n = strlen(name + 1);
		if (n >= sizeof(a->sa.sun_path) - 1) {
			ipc_reason(reason, len, "abstract name %s is too long (at most %zu bytes)",
				   name, sizeof(a->sa.sun_path) - 2);
			return -ENAMETOOLONG;
		}
		memcpy(a->sa.sun_path + 1, name + 1, n);
		a->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
		a->abstract = true;
		return 0;
	}
	slash = strrchr(name, '/');
	if (slash) {
		if ((size_t)(slash - name) >= sizeof(dir)) {
			ipc_reason(reason, len, "socket path %s is too long", name);
			return -ENAMETOOLONG;
		}
		if (slash == name)
			snprintf(dir, sizeof(dir), "/");
		else
			snprintf(dir, sizeof(dir), "%.*s", (int)(slash - name), name);
		ret = dir_check(dir, reason, len);
		return ret ? ret : path_set(a, name, reason, len);
	}
	ret = default_dir(dir, sizeof(dir), create_dir, reason, len);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path_set(a, path, reason, len);
}

int ipc_peer_cred(int sock, struct ipcring_cred *c)
{
	struct ucred uc;
	socklen_t l = sizeof(uc);

	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &uc, &l) < 0)
		return -errno;
	if (l != sizeof(uc))
		return -EPROTO;
	c->pid = uc.pid;
	c->uid = uc.uid;
	c->gid = uc.gid;
	return 0;
}

/* 0 when @fd has @events, -ETIMEDOUT, -EAGAIN (timeout 0), -errno. */
int ipc_wait_fd(int fd, short events, int timeout_ms)
{
	return ipc_wait_fd_cancel(fd, events, timeout_ms, NULL, NULL);
}

/* With @cancel: asked before each poll and after each interruption, and
 * every poll is at most IPCRING_CANCEL_POLL_MS; -ECANCELED once it says so. */
int ipc_wait_fd_cancel(int fd, short events, int timeout_ms, ipcring_cancel_fn cancel,
		       void *ctx)
{
	uint64_t deadline = ring_deadline(timeout_ms);
	struct pollfd p = { .fd = fd, .events = events };
	int n, ms;

	for (;;) {
		if (cancel && cancel(ctx))
			return -ECANCELED;
		if (timeout_ms < 0) {
			ms = -1;
		} else {
			uint64_t now = ring_now_ns();

			ms = now >= deadline ? 0 : (int)((deadline - now + 999999) / 1000000);
		}
		if (cancel && (ms < 0 || ms > IPCRING_CANCEL_POLL_MS))
			n = poll(&p, 1, IPCRING_CANCEL_POLL_MS);
		else
			n = poll(&p, 1, ms);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n == 0 && ms == 0)
			return timeout_ms ? -ETIMEDOUT : -EAGAIN;
	}
}

/* Take this side's two roles; the control socket watches the peer. */
int ipc_conn_attach(struct ipcring_conn *c, int req_fd, int req_efd, int rep_fd,
		    int rep_efd, bool server)
{
	int ret;

	if (server) {	/* the rings it has just made */
		ret = ring_attach(&c->rx, req_fd, IPCRING_CONSUMER, req_efd, true);
		if (!ret)
			ret = ring_attach(&c->tx, rep_fd, IPCRING_PRODUCER, rep_efd, true);
	} else {
		ret = ipcring_attach(&c->tx, req_fd, IPCRING_PRODUCER, req_efd);
		if (!ret)
			ret = ipcring_attach(&c->rx, rep_fd, IPCRING_CONSUMER, rep_efd);
	}
	if (!ret && (ipcring_info(c->rx, &(struct ipcring_info){ 0 }) ||
		     c->rx->wait_mode != IPCRING_WAIT_EVENTFD))
		ret = -EBADMSG;		/* the rx end must be pollable */
	if (!ret)
		c->rx->poll_rec = true;	/* requests and replies: see ring_cons_ready() */
	if (!ret)
		ret = ipcring_set_peer(c->tx, c->sock, IPCRING_PEER_SOCKET);
	if (!ret)
		ret = ipcring_set_peer(c->rx, c->sock, IPCRING_PEER_SOCKET);
	return ret;
}

void ipc_conn_free(struct ipcring_conn *c)
{
	if (!c)
		return;
	(void)ipcring_close(c->tx);
	(void)ipcring_close(c->rx);
	if (c->sock >= 0)
		close(c->sock);
	free(c->q.buf);
	free(c);
}

/* ---- the connection API common to both sides ---- */

int ipcring_conn_rings(struct ipcring_conn *c, struct ipcring **tx, struct ipcring **rx)
{
	if (!c || !c->tx)
		return -EINVAL;
	if (tx)
		*tx = c->tx;
	if (rx)
		*rx = c->rx;
	return 0;
}

int ipcring_conn_send(struct ipcring_conn *c, const void *buf, size_t len,
		      unsigned int flags, int timeout_ms)
{
	int ret;

	if (!c || !c->tx)
		return -EINVAL;
	if (c->srv)	/* the dispatcher's: never waits (reply.c) */
		ret = ipc_srv_send(c, buf, len, flags);
	else
		ret = ipcring_write(c->tx, buf, len, flags, timeout_ms);
	if (ret == -EPIPE)	/* one ring saw the peer die: so does the other */
		(void)ipcring_mark_peer_dead(c->rx);
	return ret;
}

int ipcring_conn_recv(struct ipcring_conn *c, void *buf, size_t cap, size_t *len,
		      int timeout_ms)
{
	int ret;

	if (!c || !c->rx)
		return -EINVAL;
	ret = ipcring_read(c->rx, buf, cap, len, timeout_ms);
	if (ret == -EPIPE)
		(void)ipcring_mark_peer_dead(c->tx);
	return ret;
}

int ipcring_conn_fd(const struct ipcring_conn *c)
{
	return c && c->rx ? ipcring_fd(c->rx) : -EINVAL;
}

int ipcring_conn_socket(const struct ipcring_conn *c)
{
	return c && c->sock >= 0 ? c->sock : -EINVAL;
}

int ipcring_conn_cred(const struct ipcring_conn *c, struct ipcring_cred *peer)
{
	if (!c || !peer)
		return -EINVAL;
	*peer = c->peer;
	return 0;
}

int ipcring_conn_tag(const struct ipcring_conn *c, uint64_t *tag)
{
	if (!c || !tag)
		return -EINVAL;
	*tag = c->tag;
	return 0;
}

int ipcring_conn_stats(const struct ipcring_conn *c, struct ipcring_conn_stats *st)
{
	struct ipcring_stats t, r;

	if (!c || !st || !c->tx || !c->rx)
		return -EINVAL;
	if (ipcring_stats(c->tx, &t) || ipcring_stats(c->rx, &r))
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	st->msgs_out = t.producer.msgs;
	st->bytes_out = t.producer.bytes;
	st->msgs_in = r.consumer.msgs;
	st->bytes_in = r.consumer.bytes;
	st->wakes = t.producer.wakes + r.consumer.wakes;
	st->sleeps = t.producer.sleeps + r.consumer.sleeps;
	st->batches = c->batches;
	return 0;
}
