// SPDX-License-Identifier: MIT
/*
 * server.c - the listening side of the connection layer: listen on a name,
 * check each client's credentials (SO_PEERCRED) against the policy as soon
 * as it is accepted, before its hello, then read the hello, check its
 * protocol version, make and send its two rings (or a refusal with a
 * reason), one connection at a time (ipcring_server_accept) or for the
 * dispatcher (dispatch.c, which serves many from one epoll loop); close.
 *
 * Set-up time: most of a connection's set-up is the server making its two
 * rings (memfds, and page allocation when its ends map and prefault them).
 * So the server keeps one channel made ahead, its own ends attached: a
 * new client gets it at once. The dispatcher makes the next when no client
 * waits for it (none just let in, none with a reply unread: most often
 * when a client has just closed), or else once it has been idle for
 * SRV_SPARE_IDLE_MS; not at once, or the new client's first request would
 * wait for it. A handshake that finds none makes its rings itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "ipc.h"

#define SRV_DEFAULT_CONNS	1024u
#define IPCRING_CONN_CAPACITY	(64u * 1024)	/* set-up cost grows with it */
#define SRV_DEFAULT_HS_MS	1000u
#define SRV_DEFAULT_QUANTUM	16u
#define SRV_MAX_CONNS		(1u << 24)
#define SRV_HS_PER_UID_MIN	16u	/* handshakes one uid may have, at least */

static int srv_send_reply(int sock, const struct hs_reply *rep, const int *fds, int nfds)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * HS_NFDS)];
	} u;
	struct iovec iov = { .iov_base = (void *)rep, .iov_len = sizeof(*rep) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	if (nfds) {
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfds);
	}
	if (sendmsg(sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof(*rep))
		return errno ? -errno : -EIO;
	return 0;
}

void ipc_srv_refuse(int sock, int err, const char *reason)
{
	struct hs_reply rep;

	memset(&rep, 0, sizeof(rep));
	rep.magic = HS_REPLY_MAGIC;
	rep.version = IPCRING_PROTO_VERSION;
	rep.status = err;
	snprintf(rep.reason, sizeof(rep.reason), "%s", reason);
	(void)srv_send_reply(sock, &rep, NULL, 0);
}

void ipc_srv_refuse_early(int sock, int err, const char *reason)
{
	char hello[sizeof(struct hs_hello)];

	(void)recv(sock, hello, sizeof(hello), MSG_DONTWAIT);
	ipc_srv_refuse(sock, err, reason);
}

/* Make a channel ahead, this side's ends attached (best effort: without
 * one, the next handshake makes its rings itself). */
void ipc_srv_spare_make(struct ipcring_server *s)
{
	int fds[HS_NFDS] = { -1, -1, -1, -1 }, ret;
	struct ipcring *rx = NULL, *tx = NULL;

	if (s->spare.rx)
		return;
	ret = ipcring_create(&s->ring, &fds[0], &fds[1]);
	if (!ret)
		ret = ipcring_create(&s->ring, &fds[2], &fds[3]);
	if (!ret)
		ret = ring_attach(&rx, fds[0], IPCRING_CONSUMER, fds[1], true);
	if (!ret)
		ret = ring_attach(&tx, fds[2], IPCRING_PRODUCER, fds[3], true);
	if (ret) {
		(void)ipcring_close(rx);
		(void)ipcring_close(tx);
		for (int i = 0; i < HS_NFDS; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		return;
	}
	s->spare.rx = rx;
	s->spare.tx = tx;
	memcpy(s->spare.fds, fds, sizeof(fds));
	s->spare.pid = getpid();
}

/* Free the channel made ahead. A forked copy of the server only closes its
 * descriptors: closing the rings would end them for the process that made
 * them too. */
static void srv_spare_free(struct ipcring_server *s)
{
	if (!s->spare.rx)
		return;
	if (s->spare.pid == getpid()) {
		(void)ipcring_close(s->spare.rx);
		(void)ipcring_close(s->spare.tx);
	}
	for (int i = 0; i < HS_NFDS; i++)
		close(s->spare.fds[i]);
	s->spare.rx = s->spare.tx = NULL;
}

/* Take the channel made ahead, or make the two rings and attach this
 * side's ends; then send them. */
static int srv_channel(struct ipcring_server *s, struct ipcring_conn *c)
{
	struct hs_reply rep;
	int fds[HS_NFDS] = { -1, -1, -1, -1 }, ret;

	if (s->spare.rx && s->spare.pid == getpid()) {
		c->rx = s->spare.rx;
		c->tx = s->spare.tx;
		memcpy(fds, s->spare.fds, sizeof(fds));
		s->spare.rx = s->spare.tx = NULL;
		c->rx->poll_rec = true;	/* as ipc_conn_attach() sets it */
		ret = ipcring_set_peer(c->tx, c->sock, IPCRING_PEER_SOCKET);
		if (!ret)
			ret = ipcring_set_peer(c->rx, c->sock, IPCRING_PEER_SOCKET);
	} else {
		ret = ipcring_create(&s->ring, &fds[0], &fds[1]);
		if (!ret)
			ret = ipcring_create(&s->ring, &fds[2], &fds[3]);
		if (!ret)
			ret = ipc_conn_attach(c, fds[0], fds[1], fds[2], fds[3], true);
	}
	if (!ret) {
		memset(&rep, 0, sizeof(rep));
		rep.magic = HS_REPLY_MAGIC;
		rep.version = IPCRING_PROTO_VERSION;
		rep.conn_id = c->id;
		ret = srv_send_reply(c->sock, &rep, fds, HS_NFDS);
	}
	for (int i = 0; i < HS_NFDS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return ret;
}

/*
 * The hello is there (or the socket hung up): read it, check the version
 * (the policy was applied at accept), then make the channel. A refusal is
 * sent with its reason and returned (-EPROTO, -EUSERS); 0 = it is open.
 */
int ipc_srv_handshake(struct ipcring_server *s, struct ipcring_conn *c, bool full,
		      char *reason, size_t len)
{
	struct hs_hello h;
	ssize_t n;
	int ret;

	memset(&h, 0, sizeof(h));
	n = recv(c->sock, &h, sizeof(h), MSG_DONTWAIT | MSG_TRUNC);
	if (n < 0) {
		ret = -errno;
		ipc_reason(reason, len, "reading the hello of pid %d: %s", c->peer.pid,
			   strerror(-ret));
		return ret;
	}
	if (n == 0) {
		ipc_reason(reason, len, "pid %d closed before its hello", c->peer.pid);
		return -ECONNRESET;
	}
	if (n != (ssize_t)sizeof(h) || h.magic != HS_HELLO_MAGIC) {
		ipc_reason(reason, len, "pid %d sent %zd bytes that are not an ipcring hello",
			   c->peer.pid, n);
		ipc_srv_refuse(c->sock, -EPROTO, reason);
		return -EPROTO;
	}
	if (h.version != IPCRING_PROTO_VERSION) {
		ipc_reason(reason, len, "protocol version %u is not supported: this server "
			   "speaks version %u", h.version, IPCRING_PROTO_VERSION);
		ret = -EPROTO;
	} else if (full) {
		ipc_reason(reason, len, "the server is full (%u connections)", s->max_conns);
		ret = -EUSERS;
	} else {
		ret = 0;
	}
	if (ret) {
		ipc_srv_refuse(c->sock, ret, reason);
		return ret;
	}
	c->tag = h.tag;
	c->id = ++s->next_id;
	ret = srv_channel(s, c);
	if (ret) {
		/* the client is told why (out of descriptors, of memory) */
		ipc_reason(reason, len, "making the channel for pid %d: %s", c->peer.pid,
			   strerror(-ret));
		ipc_srv_refuse(c->sock, ret, reason);
	}
	return ret;
}

void ipc_srv_refused(struct ipcring_server *s, const struct ipcring_cred *p, int err,
		     const char *reason)
{
	if (s->ops.refused)
		s->ops.refused(s->ops_ctx, p, err, reason);
}

/* accept4 failed for want of a descriptor (@err): let the reserved one go,
 * take the waiting connection and refuse it with the reason, so that the
 * client learns why and the listening socket does not stay readable. */
static void srv_refuse_nofd(struct ipcring_server *s, int err)
{
	char reason[IPCRING_REASON_MAX];
	struct ipcring_cred peer;
	int fd;

	if (s->reserve_fd < 0)
		return;
	close(s->reserve_fd);
	fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd >= 0) {
		memset(&peer, 0, sizeof(peer));
		(void)ipc_peer_cred(fd, &peer);
		ipc_reason(reason, sizeof(reason), "the server is out of file descriptors "
			   "(accept: %s)", strerror(-err));
		ipc_srv_refuse_early(fd, err, reason);
		close(fd);
		ipc_srv_refused(s, &peer, err, reason);
	}
	s->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/* Whether a connection waits on the listening socket: the kernel takes the
 * descriptor before it looks at the queue, so accept4 fails with EMFILE when
 * no one is waiting too, and that is no one to refuse. */
static bool srv_pending(const struct ipcring_server *s)
{
	struct pollfd p = { .fd = s->lfd, .events = POLLIN };

	return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

/* accept4 one pending connection (non-blocking) into a new handle. */
int ipc_srv_accept_one(struct ipcring_server *s, struct ipcring_conn **out, bool refuse_nofd)
{
	struct ipcring_conn *c;
	int fd, ret;

	fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0) {
		ret = errno == EWOULDBLOCK ? -EAGAIN : -errno;
		if ((ret == -EMFILE || ret == -ENFILE) && !srv_pending(s))
			return -EAGAIN;	/* accept4 says so with no one waiting too */
		if (refuse_nofd && (ret == -EMFILE || ret == -ENFILE))
			srv_refuse_nofd(s, ret);
		return ret;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return -ENOMEM;
	}
	c->sock = fd;
	c->slot = UINT32_MAX;
	c->since_ns = ring_now_ns();
	ret = ipc_peer_cred(fd, &c->peer);
	if (ret) {
		ipc_conn_free(c);
		return ret;
	}
	*out = c;
	return 0;
}

int ipcring_server_accept(struct ipcring_server *s, struct ipcring_conn **conn,
			  char *reason, size_t len, int timeout_ms)
{
	struct ipcring_conn *c = NULL;
	int ret;

	if (reason && len)
		reason[0] = '\0';
	if (!s || !conn)
		return -EINVAL;
	*conn = NULL;
	for (;;) {
		ret = ipc_srv_accept_one(s, &c, true);
		if (ret != -EAGAIN)
			break;
		if (!s->spare.rx && timeout_ms) {
			int t = timeout_ms < 0 || timeout_ms > SRV_SPARE_IDLE_MS ?
				SRV_SPARE_IDLE_MS : timeout_ms;

			ret = ipc_wait_fd(s->lfd, POLLIN, t);
			if (ret != -ETIMEDOUT || t == timeout_ms) {
				if (ret)
					return ret;
				continue;
			}
			ipc_srv_spare_make(s);	/* idle: make the next channel now */
			if (timeout_ms > 0)
				timeout_ms -= t;
			continue;
		}
		ret = ipc_wait_fd(s->lfd, POLLIN, timeout_ms);
		if (ret)
			return ret;
	}
	if (ret) {
		ipc_reason(reason, len, "accept: %s", strerror(-ret));
		return ret;
	}
	ret = ipc_srv_admit_one(s, c, reason, len);
	if (!ret)
		ret = ipc_wait_fd(c->sock, POLLIN, (int)s->handshake_ms);
	if (ret == -ETIMEDOUT)
		ipc_reason(reason, len, "pid %d sent no hello within %u ms", c->peer.pid,
			   s->handshake_ms);
	if (!ret)
		ret = ipc_srv_handshake(s, c, false, reason, len);
	if (ret) {
		ipc_conn_free(c);
		return ret;
	}
	c->state = CONN_OPEN;
	*conn = c;
	return 0;
}

/* ---- listening ---- */

static int srv_bind(struct ipcring_server *s, const char *name, char *reason, size_t len)
{
	const struct sockaddr *sa = (const struct sockaddr *)&s->addr.sa;
	struct stat st;
	int ret, probe;

	if (bind(s->lfd, sa, s->addr.len) < 0) {
		ret = -errno;
		if (ret == -EADDRINUSE && !s->addr.abstract) {
			/* a file left by a dead server refuses connections */
			probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
			if (probe >= 0 && connect(probe, sa, s->addr.len) < 0 &&
			    errno == ECONNREFUSED && unlink(s->addr.sa.sun_path) == 0 &&
			    bind(s->lfd, sa, s->addr.len) == 0)
				ret = 0;
			if (probe >= 0)
				close(probe);
		}
		if (ret) {
			ipc_reason(reason, len, "bind %s: %s%s", name, strerror(-ret),
				   ret == -EADDRINUSE ? " (another server listens on it)" : "");
			return ret;
		}
	}
	if (!s->addr.abstract) {
		if (chmod(s->addr.sa.sun_path, 0600) < 0 || stat(s->addr.sa.sun_path, &st) < 0) {
			ret = -errno;
			ipc_reason(reason, len, "%s: %s", name, strerror(-ret));
			return ret;
		}
		s->dev = st.st_dev;
		s->ino = st.st_ino;
	}
	if (listen(s->lfd, SOMAXCONN) < 0) {
		ret = -errno;
		ipc_reason(reason, len, "listen %s: %s", name, strerror(-ret));
		return ret;
	}
	return 0;
}

static int srv_copy_ids(uint32_t **dst, const uint32_t *src, unsigned int n)
{
	if (!n)
		return 0;
	if (!src)
		return -EINVAL;
	*dst = malloc(n * sizeof(**dst));
	if (!*dst)
		return -ENOMEM;
	memcpy(*dst, src, n * sizeof(**dst));
	return 0;
}

static int srv_opts(struct ipcring_server *s, const struct ipcring_server_opts *o)
{
	static const struct ipcring_server_opts none;
	int ret;

	if (!o)
		o = &none;
	if (o->ring)
		s->ring = *o->ring;
	s->ring.wait_mode = IPCRING_WAIT_EVENTFD;
	if (!s->ring.capacity)
		s->ring.capacity = IPCRING_CONN_CAPACITY;
	s->max_conns = o->max_conns ? o->max_conns : SRV_DEFAULT_CONNS;
	s->handshake_ms = o->handshake_ms ? o->handshake_ms : SRV_DEFAULT_HS_MS;
	s->quantum = o->quantum ? o->quantum : SRV_DEFAULT_QUANTUM;
	if (s->max_conns > SRV_MAX_CONNS)
		return -EINVAL;
	/* a uid may hold a quarter of the handshakes (at least 16), and there
	 * are slots for 4 such beside max_conns open connections */
	s->hs_per_uid = s->max_conns / 4 > SRV_HS_PER_UID_MIN ? s->max_conns / 4 :
			SRV_HS_PER_UID_MIN;
	s->q_max = s->ring.capacity;
	s->stall_ns = (uint64_t)SRV_STALL_MS * RING_MS_NS;
	if (o->spin_ns == IPCRING_NO_SPIN)
		s->spin_ns = 0;
	else if (o->spin_ns > IPCRING_MAX_SPIN_NS)
		return -EINVAL;
	else
		s->spin_ns = o->spin_ns ? o->spin_ns :
			     s->ring.spin_ns == IPCRING_NO_SPIN ? 0 :
			     s->ring.spin_ns ? s->ring.spin_ns : IPCRING_DEFAULT_SPIN_NS;
	s->allow = o->allow;
	s->allow_ctx = o->allow_ctx;
	s->nuids = o->nuids;
	s->ngids = o->ngids;
	ret = srv_copy_ids(&s->uids, o->uids, o->nuids);
	if (!ret)
		ret = srv_copy_ids(&s->gids, o->gids, o->ngids);
	if (!ret) {
		s->nslots = s->max_conns + (s->max_conns > 4 * s->hs_per_uid ?
					    s->max_conns : 4 * s->hs_per_uid);
		s->conns = calloc(s->nslots, sizeof(*s->conns));
		s->open = calloc(s->max_conns, sizeof(*s->open));
		if (!s->conns || !s->open)
			ret = -ENOMEM;
	}
	return ret;
}

int ipcring_listen(struct ipcring_server **out, const char *name,
		   const struct ipcring_server_opts *o, char *reason, size_t len)
{
	struct ipcring_server *s;
	int ret, mfd, efd;

	if (reason && len)
		reason[0] = '\0';
	if (!out)
		return -EINVAL;
	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->lfd = s->epfd = s->tfd = -1;
	s->owner = getpid();
	/* best effort: without it, a client refused for want of descriptors
	 * waits for its timeout instead of learning why */
	s->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ret = srv_opts(s, o);
	if (ret)
		ipc_reason(reason, len, "bad server options");
	/* the ring options are checked once here, not at each connection */
	if (!ret && !(ret = ipcring_create(&s->ring, &mfd, &efd))) {
		close(mfd);
		close(efd);
	} else if (!reason || !reason[0]) {
		ipc_reason(reason, len, ret == -EINVAL ? "bad ring options: %s" :
			   "making a ring to check the options: %s", strerror(-ret));
	}
	if (!ret)
		ret = ipc_resolve(name, &s->addr, true, reason, len);
	if (!ret) {
		s->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (s->lfd < 0) {
			ret = -errno;
			ipc_reason(reason, len, "socket: %s", strerror(-ret));
		}
	}
	if (!ret)
		ret = srv_bind(s, name, reason, len);
	if (ret) {
		s->owner = 0;		/* nothing of ours to unlink */
		ipcring_server_close(s);
		return ret;
	}
	*out = s;
	return 0;
}

int ipcring_server_close(struct ipcring_server *s)
{
	struct stat st;

	if (!s)
		return 0;
	for (unsigned int i = 0; s->conns && i < s->nslots; i++)
		if (s->conns[i])
			ipc_conn_free(s->conns[i]);
	srv_spare_free(s);
	if (s->owner == getpid() && !s->addr.abstract && s->addr.sa.sun_path[0] &&
	    stat(s->addr.sa.sun_path, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino)
		unlink(s->addr.sa.sun_path);
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->tfd >= 0)
		close(s->tfd);
	if (s->reserve_fd >= 0)
		close(s->reserve_fd);
	free(s->conns);
	free(s->open);
	free(s->uids);
	free(s->gids);
	free(s);
	return 0;
}
