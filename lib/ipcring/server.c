// SPDX-License-Identifier: MIT
/*
 * server.c - the listening side of the connection layer: listen on a name,
 * read each client's hello, check its credentials against the policy and
 * its protocol version, make and send its two rings (or a refusal with a
 * reason), and the one-thread dispatcher that serves many connections from
 * one epoll loop: rotation with a per-connection quantum, a bounded spin
 * over every ring, then sleep in epoll with every request ring armed.
 *
 * Set-up time: most of a connection's set-up is the server making its two
 * rings (memfds, and page allocation when its ends map and prefault them).
 * So the server keeps one channel made ahead, its own ends attached: a
 * new client gets it at once. The next is made once the server has been
 * idle for SRV_SPARE_IDLE_MS: not at once, or the new client's first
 * request would wait for it. Connections that come faster than that (a
 * burst) make their own rings in the handshake, as without one.
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
#define SRV_LISTEN_SLOT		0x7fffffffu
#define SRV_EVENTS		64
#define SRV_ACCEPT_BURST	16
#define SRV_CHECK_NS		1000000u	/* look at the sockets at least every 1 ms */
#define SRV_SPARE_IDLE_MS	1		/* idle this long: make a channel ahead */

struct ipcring_server {
	int lfd;
	int epfd;			/* made on first use (dispatch, server_fd) */
	int reserve_fd;			/* let go to refuse a client when out of fds */
	struct ipc_addr addr;
	dev_t dev;
	ino_t ino;
	pid_t owner;			/* the process that unlinks the file */
	struct ipcring_opts ring;
	uint32_t *uids, *gids;
	unsigned int nuids, ngids;
	ipcring_allow_fn allow;
	void *allow_ctx;
	unsigned int max_conns, handshake_ms, quantum;
	uint64_t spin_ns;
	struct ipcring_server_ops ops;
	void *ops_ctx;
	struct ipcring_conn **conns;	/* max_conns slots, by epoll key */
	struct ipcring_conn **open;	/* the open ones, dense: nopen */
	unsigned int nslots, nconns, npending, nopen, rr;
	uint64_t next_id;
	uint32_t gen;			/* epoll keys: slot + generation */
	uint64_t last_check_ns;
	struct ipcring_conn *cur;	/* in a hook */
	bool drop_cur;
	struct {			/* a channel made ahead (rx NULL: none) */
		struct ipcring *rx, *tx;
		int fds[HS_NFDS];
		pid_t pid;		/* made by this process (not a forked copy) */
	} spare;
};

static bool id_in(const uint32_t *v, unsigned int n, uint32_t x)
{
	for (unsigned int i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

static int srv_policy(struct ipcring_server *s, const struct ipcring_cred *p,
		      char *reason, size_t len)
{
	int ret;

	if (s->allow) {
		ret = s->allow(s->allow_ctx, p, reason, len);
		if (ret && reason && !reason[0])
			ipc_reason(reason, len, "uid %u gid %u pid %d refused by the server's policy",
				   p->uid, p->gid, p->pid);
		return ret > 0 ? -EACCES : ret;
	}
	if (p->uid == (uint32_t)geteuid() || id_in(s->uids, s->nuids, p->uid) ||
	    id_in(s->gids, s->ngids, p->gid))
		return 0;
	ipc_reason(reason, len, "uid %u (gid %u, pid %d) is not allowed: this server accepts "
		   "uid %u%s", p->uid, p->gid, p->pid, (unsigned)geteuid(),
		   s->nuids || s->ngids ? " and its listed uids/gids" : " only");
	return -EACCES;
}

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

static void srv_refuse(int sock, int err, const char *reason)
{
	struct hs_reply rep;

	memset(&rep, 0, sizeof(rep));
	rep.magic = HS_REPLY_MAGIC;
	rep.version = IPCRING_PROTO_VERSION;
	rep.status = err;
	snprintf(rep.reason, sizeof(rep.reason), "%s", reason);
	(void)srv_send_reply(sock, &rep, NULL, 0);
}

/* Make a channel ahead, this side's ends attached (best effort: without
 * one, the next handshake makes its rings itself). */
static void srv_spare_make(struct ipcring_server *s)
{
	int fds[HS_NFDS] = { -1, -1, -1, -1 }, ret;
	struct ipcring *rx = NULL, *tx = NULL;

	if (s->spare.rx)
		return;
	ret = ipcring_create(&s->ring, &fds[0], &fds[1]);
	if (!ret)
		ret = ipcring_create(&s->ring, &fds[2], &fds[3]);
	if (!ret)
		ret = ipcring_attach(&rx, fds[0], IPCRING_CONSUMER, fds[1]);
	if (!ret)
		ret = ipcring_attach(&tx, fds[2], IPCRING_PRODUCER, fds[3]);
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
 * The hello is there (or the socket hung up): read it, apply the policy
 * and the version, then make the channel. A refusal is sent with its
 * reason and returned (-EACCES, -EPROTO); 0 = the connection is open.
 */
static int srv_handshake(struct ipcring_server *s, struct ipcring_conn *c, bool full,
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
		srv_refuse(c->sock, -EPROTO, reason);
		return -EPROTO;
	}
	ret = srv_policy(s, &c->peer, reason, len);
	if (!ret && h.version != IPCRING_PROTO_VERSION) {
		ipc_reason(reason, len, "protocol version %u is not supported: this server "
			   "speaks version %u", h.version, IPCRING_PROTO_VERSION);
		ret = -EPROTO;
	}
	if (!ret && full) {
		ipc_reason(reason, len, "the server is full (%u connections)", s->max_conns);
		ret = -EUSERS;
	}
	if (ret) {
		srv_refuse(c->sock, ret, reason);
		return ret;
	}
	c->tag = h.tag;
	c->id = ++s->next_id;
	ret = srv_channel(s, c);
	if (ret) {
		/* the client is told why (out of descriptors, of memory) */
		ipc_reason(reason, len, "making the channel for pid %d: %s", c->peer.pid,
			   strerror(-ret));
		srv_refuse(c->sock, ret, reason);
	}
	return ret;
}

static void srv_refused(struct ipcring_server *s, const struct ipcring_cred *p, int err,
			const char *reason);

/* accept4 failed for want of a descriptor (@err): let the reserved one go,
 * take the waiting connection and refuse it with the reason, so that the
 * client learns why and the listening socket does not stay readable. */
static void srv_refuse_nofd(struct ipcring_server *s, int err)
{
	char reason[IPCRING_REASON_MAX], hello[sizeof(struct hs_hello)];
	struct ipcring_cred peer;
	int fd;

	if (s->reserve_fd < 0)
		return;
	close(s->reserve_fd);
	fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd >= 0) {
		memset(&peer, 0, sizeof(peer));
		(void)ipc_peer_cred(fd, &peer);
		/* the hello read first: a socket closed with unread data
		 * resets its peer before the peer reads the refusal */
		(void)recv(fd, hello, sizeof(hello), MSG_DONTWAIT);
		ipc_reason(reason, sizeof(reason), "the server is out of file descriptors "
			   "(accept: %s)", strerror(-err));
		srv_refuse(fd, err, reason);
		close(fd);
		srv_refused(s, &peer, err, reason);
	}
	s->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/* accept4 one pending connection (non-blocking) into a new handle. */
static int srv_accept_one(struct ipcring_server *s, struct ipcring_conn **out)
{
	struct ipcring_conn *c;
	int fd, ret;

	fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0) {
		ret = errno == EWOULDBLOCK ? -EAGAIN : -errno;
		if (ret == -EMFILE || ret == -ENFILE)
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
		ret = srv_accept_one(s, &c);
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
			srv_spare_make(s);	/* idle: make the next channel now */
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
	ret = ipc_wait_fd(c->sock, POLLIN, (int)s->handshake_ms);
	if (ret == -ETIMEDOUT)
		ipc_reason(reason, len, "pid %d sent no hello within %u ms", c->peer.pid,
			   s->handshake_ms);
	if (!ret)
		ret = srv_handshake(s, c, false, reason, len);
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
		s->nslots = 2 * s->max_conns;
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
	s->lfd = s->epfd = -1;
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

/* ---- the dispatcher ---- */

static uint64_t ev_key(const struct ipcring_conn *c, unsigned int which)
{
	return ((uint64_t)c->gen << 32) | ((uint64_t)c->slot << 1) | which;
}

static int srv_epoll(struct ipcring_server *s)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = (uint64_t)SRV_LISTEN_SLOT << 1 };

	if (s->epfd >= 0)
		return 0;
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0)
		return -errno;
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->lfd, &ev) < 0) {
		int e = errno;

		close(s->epfd);
		s->epfd = -1;
		return -e;
	}
	return 0;
}

static void srv_unlink_conn(struct ipcring_server *s, struct ipcring_conn *c)
{
	if (c->state == CONN_PENDING) {
		s->npending--;
	} else if (c->state == CONN_OPEN) {
		s->open[c->oidx] = s->open[--s->nopen];
		s->open[c->oidx]->oidx = c->oidx;
	}
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->sock, NULL);
	if (c->rx)
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, ipcring_fd(c->rx), NULL);
	s->conns[c->slot] = NULL;
	s->nconns--;
}

static void srv_drop(struct ipcring_server *s, struct ipcring_conn *c, int why)
{
	bool open = c->state == CONN_OPEN;

	srv_unlink_conn(s, c);
	if (open && s->ops.disconnected) {
		s->cur = c;
		s->ops.disconnected(s->ops_ctx, c, why);
		s->cur = NULL;
	}
	ipc_conn_free(c);
}

static void srv_refused(struct ipcring_server *s, const struct ipcring_cred *p, int err,
			const char *reason)
{
	if (s->ops.refused)
		s->ops.refused(s->ops_ctx, p, err, reason);
}

static void srv_open_pending(struct ipcring_server *s, struct ipcring_conn *c);

/* A new socket: a slot, and the socket in epoll until its hello comes. */
static void srv_add_pending(struct ipcring_server *s, struct ipcring_conn *c)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };
	unsigned int i;

	/* open connections are capped at the handshake (-EUSERS, with its
	 * reason, after the hello); slots beyond are for handshakes only */
	for (i = 0; i < s->nslots && s->conns[i]; i++)
		;
	if (i == s->nslots) {
		ipc_conn_free(c);	/* a flood of handshakes: no word */
		return;
	}
	c->srv = s;
	c->slot = i;
	c->gen = ++s->gen;
	ev.data.u64 = ev_key(c, 0);
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, c->sock, &ev) < 0) {
		ipc_conn_free(c);
		return;
	}
	s->conns[i] = c;
	s->nconns++;
	s->npending++;
	/* the hello often came with the connection: no epoll round trip */
	if (ipc_wait_fd(c->sock, POLLIN, 0) == 0)
		srv_open_pending(s, c);
}

static void srv_accept_burst(struct ipcring_server *s)
{
	struct ipcring_conn *c;

	for (int k = 0; k < SRV_ACCEPT_BURST; k++) {
		if (srv_accept_one(s, &c))
			return;
		srv_add_pending(s, c);
	}
}

static void srv_open_pending(struct ipcring_server *s, struct ipcring_conn *c)
{
	struct epoll_event ev = { .events = EPOLLIN };
	char reason[IPCRING_REASON_MAX] = "";
	int ret;

	ret = srv_handshake(s, c, s->nopen >= s->max_conns, reason, sizeof(reason));
	if (!ret) {
		ev.data.u64 = ev_key(c, 1);
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, ipcring_fd(c->rx), &ev) < 0)
			ret = -errno;
	}
	if (ret) {
		if (ret == -EACCES || ret == -EPROTO || ret == -EUSERS)
			srv_refused(s, &c->peer, ret, reason);
		srv_drop(s, c, ret);
		return;
	}
	c->state = CONN_OPEN;
	s->npending--;
	c->oidx = s->nopen;
	s->open[s->nopen++] = c;
	/* armed at once: its first request wakes the loop (or is served next) */
	(void)ipcring_prepare_wait(c->rx);
	if (s->ops.connected) {
		s->cur = c;
		s->ops.connected(s->ops_ctx, c);
		s->cur = NULL;
	}
}

/* The peer hung up: serve what a graceful close left, then drop it. */
static void srv_hangup(struct ipcring_server *s, struct ipcring_conn *c);

static struct ipcring_conn *srv_conn_of(struct ipcring_server *s, uint64_t key)
{
	uint32_t slot = (uint32_t)(key >> 1) & 0x7fffffffu;
	struct ipcring_conn *c;

	if (slot >= s->nslots)
		return NULL;
	c = s->conns[slot];
	return c && c->gen == (uint32_t)(key >> 32) ? c : NULL;
}

static void srv_expire_pending(struct ipcring_server *s, uint64_t now)
{
	char reason[IPCRING_REASON_MAX];

	for (unsigned int i = 0; s->npending && i < s->nslots; i++) {
		struct ipcring_conn *c = s->conns[i];

		if (!c || c->state != CONN_PENDING ||
		    now < c->since_ns + s->handshake_ms * 1000000ull)
			continue;
		ipc_reason(reason, sizeof(reason), "no hello within %u ms", s->handshake_ms);
		srv_refuse(c->sock, -ETIMEDOUT, reason);
		srv_drop(s, c, -ETIMEDOUT);
	}
}

/* Handle what epoll reports (waiting up to @timeout_ms); the event count. */
static int srv_events(struct ipcring_server *s, int timeout_ms)
{
	struct epoll_event ev[SRV_EVENTS];
	int n = epoll_wait(s->epfd, ev, SRV_EVENTS, timeout_ms);

	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	s->last_check_ns = ring_now_ns();
	for (int k = 0; k < n; k++) {
		struct ipcring_conn *c;

		if ((ev[k].data.u64 >> 1) == SRV_LISTEN_SLOT) {
			srv_accept_burst(s);
			continue;
		}
		c = srv_conn_of(s, ev[k].data.u64);
		if (!c)
			continue;	/* dropped earlier in this batch */
		if (c->state == CONN_PENDING)
			srv_open_pending(s, c);
		else if (!(ev[k].data.u64 & 1) &&
			 (ev[k].events & (EPOLLHUP | EPOLLRDHUP | EPOLLERR | EPOLLIN)))
			srv_hangup(s, c);
		/* an rx eventfd: its requests are served by the round */
	}
	if (s->npending)
		srv_expire_pending(s, ring_now_ns());
	return n;
}

struct srv_batch {
	struct ipcring_server *s;
	struct ipcring_conn *c;
	int ret;
};

static int srv_on_msg(void *ctx, const void *msg, size_t len)
{
	struct srv_batch *b = ctx;

	if (!b->s->ops.message)
		return 0;
	b->ret = b->s->ops.message(b->s->ops_ctx, b->c, msg, len);
	return b->ret || b->s->drop_cur;
}

/* Serve up to @max records of @c; their count, or -errno / 0 = EOS via *gone. */
static int srv_serve_conn(struct ipcring_server *s, struct ipcring_conn *c,
			  unsigned int max, int *gone)
{
	struct srv_batch b = { .s = s, .c = c };
	int n;

	s->cur = c;
	s->drop_cur = false;
	n = ipcring_read_batch(c->rx, srv_on_msg, &b, max, 0);
	s->cur = NULL;
	if (n == -EAGAIN)
		return 0;
	if (n > 0)
		c->batches++;
	if (n == 0)
		*gone = 1;		/* end of stream: the client closed */
	else if (n < 0)
		*gone = n;
	else if (b.ret)
		*gone = b.ret;
	else if (s->drop_cur)
		*gone = 2;
	(void)ipcring_flush(c->tx);	/* replies committed with IPCRING_MORE */
	return n > 0 ? n : 0;
}

/* One round: every open connection in rotation, quantum records each. */
static int srv_round(struct ipcring_server *s)
{
	unsigned int k, n = s->nopen, start, served = 0;

	if (!n)
		return 0;
	start = s->rr++ % n;
	for (k = 0; k < n && s->nopen; k++) {
		struct ipcring_conn *c = s->open[(start + k) % s->nopen];
		int gone = 0;

		served += (unsigned int)srv_serve_conn(s, c, s->quantum, &gone);
		if (gone)
			srv_drop(s, c, gone == 1 || gone == 2 ? 0 : gone);
	}
	return (int)(served > INT32_MAX ? INT32_MAX : served);
}

static void srv_hangup(struct ipcring_server *s, struct ipcring_conn *c)
{
	uint32_t st = atomic_load(c->rx->peer_state);
	int gone = 0;

	if (st == ST_CLOSED) {
		/* a graceful close: what it sent before still counts */
		while (!gone && srv_serve_conn(s, c, s->quantum, &gone) > 0)
			;
		srv_drop(s, c, 0);
		return;
	}
	(void)ipcring_mark_peer_dead(c->rx);
	(void)ipcring_mark_peer_dead(c->tx);
	srv_drop(s, c, -EPIPE);
}

/* Arm every request ring; 1 if one already has something (do not sleep). */
static int srv_arm(struct ipcring_server *s)
{
	for (unsigned int i = 0; i < s->nopen; i++)
		if (ipcring_prepare_wait(s->open[i]->rx))
			return 1;
	return 0;
}

static int srv_spin(struct ipcring_server *s)
{
	uint64_t end;
	int n;

	if (!s->spin_ns || !s->nopen)
		return 0;
	end = ring_now_ns() + s->spin_ns;
	do {
		for (int k = 0; k < 64; k++) {
			n = srv_round(s);
			if (n)
				return n;
			ring_cpu_relax();
		}
	} while (ring_now_ns() < end);
	return 0;
}

int ipcring_server_dispatch(struct ipcring_server *s, int timeout_ms)
{
	int ret, n;

	if (!s)
		return -EINVAL;
	ret = srv_epoll(s);
	if (ret)
		return ret;
	if (ring_now_ns() - s->last_check_ns >= SRV_CHECK_NS) {
		ret = srv_events(s, 0);
		if (ret < 0)
			return ret;
	}
	n = srv_round(s);
	if (!n && timeout_ms)
		n = srv_spin(s);
	if (n)
		return n;
	/* nothing to do: arm every request ring, then sleep in epoll (or, with
	 * timeout 0, only look once, leaving the fd armed for the caller) */
	if (srv_arm(s))
		return srv_round(s);
	if (!s->spare.rx && timeout_ms) {
		/* a short sleep first; if it stays idle, make a channel ahead */
		int t = timeout_ms < 0 || timeout_ms > SRV_SPARE_IDLE_MS ?
			SRV_SPARE_IDLE_MS : timeout_ms;

		ret = srv_events(s, t);
		if (ret < 0)
			return ret;
		if (ret > 0 || t == timeout_ms)
			return srv_round(s);
		if (timeout_ms > 0)
			timeout_ms -= t;
		srv_spare_make(s);
		if (srv_arm(s))
			return srv_round(s);
	}
	ret = srv_events(s, timeout_ms);
	if (ret < 0)
		return ret;
	return srv_round(s);
}

int ipcring_server_fd(const struct ipcring_server *cs)
{
	struct ipcring_server *s = (struct ipcring_server *)cs;
	int ret;

	if (!s)
		return -EINVAL;
	ret = srv_epoll(s);
	return ret ? ret : s->epfd;
}

int ipcring_server_set_ops(struct ipcring_server *s, const struct ipcring_server_ops *ops,
			   void *ctx)
{
	if (!s)
		return -EINVAL;
	if (ops)
		s->ops = *ops;
	else
		memset(&s->ops, 0, sizeof(s->ops));
	s->ops_ctx = ctx;
	return srv_epoll(s);
}

int ipcring_server_nconns(const struct ipcring_server *s)
{
	return s ? (int)s->nopen : -EINVAL;
}

int ipcring_conn_drop(struct ipcring_conn *c)
{
	if (!c || !c->srv || c->srv->cur != c)
		return -EINVAL;
	c->srv->drop_cur = true;
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
	if (s->reserve_fd >= 0)
		close(s->reserve_fd);
	free(s->conns);
	free(s->open);
	free(s->uids);
	free(s->gids);
	free(s);
	return 0;
}
