// SPDX-License-Identifier: MIT
/* zmq-ipc, zmq-tcp, zmq-inproc: ZeroMQ (libzmq) PAIR sockets, one pair per
 * client id, so that a server endpoint per client is one socket and a
 * message carries no routing frame (a ROUTER would add one per message).
 *
 * Nothing of libzmq exists in the parent while endpoints are forked (a
 * context is not fork-safe): create (zmq_chan.c) only picks the addresses
 * and a per-run secret; each endpoint makes its own context (one I/O
 * thread) and socket.
 * zmq-inproc is threads only: its endpoints share one context made in
 * create. The server binds, the client connects and sends a hello (the
 * secret and its id) that the server checks before anything is measured:
 *   - ipc:// paths live in the run's private 0700 directory, registered for
 *     cleanup before the server binds them;
 *   - tcp:// binds 127.0.0.1 on a kernel-chosen port, published to the
 *     client through a shared page. ZeroMQ does not authenticate here: a
 *     PAIR socket keeps its first peer and refuses the others, so a local
 *     process that connects before the cell's client makes the hello check
 *     fail the cell; it is never measured.
 *   - between hosts (ipclab serve / run --peer set -O listen, connect and
 *     secret, tp_remote.h): the server binds the address the control
 *     connection came in on, a block of consecutive ports (one per client
 *     id) reserved in create, the first handed out as "listen_port"; each
 *     client connects to its port there and its first message is the
 *     remote hello with the cell's secret, as tcp's.
 *
 * Every blocking call has ZMQ_RCVTIMEO/ZMQ_SNDTIMEO of ZQ_SLICE_MS: between
 * slices the stop request and a socket monitor are looked at, so a stop is
 * seen within a slice and a peer whose connection dropped (killed) is
 * reported (-ECONNRESET / -EPIPE) rather than waited on. A zero-length
 * message is the EOF marker (as posix-mq). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absent.h"
#include "tp_remote.h"
#include "ipclab/cleanup.h"
#include "ipclab/netaddr.h"
#include "ipclab/transport.h"
#include "ipclab/util.h"
#include "zmq_chan.h"

#ifdef HAVE_ZMQ
#include <zmq.h>
#endif

#define ZQ_INSTALL "install libzmq3-dev (make deps)"

#define ZQ_OPT_HWM                                                                             \
	{ .name = "hwm", .type = OPT_UINT, .offset = offsetof(struct zq_opts, hwm),           \
	  .def = "1000", .max = 1u << 30,                                                      \
	  .help = "ZMQ_SNDHWM and ZMQ_RCVHWM: messages queued each way before send blocks (0 = no limit)" }

static const struct opt_desc zq_options[] = {
	ZQ_OPT_HWM,
	{ .name = NULL },
};

static const struct opt_desc zq_tcp_options[] = {
	ZQ_OPT_HWM,
	{ .name = "listen", .type = OPT_STRING, .offset = offsetof(struct zq_opts, listen),
	  .def = "", .help = "between hosts: the server's side only, binding this IPv4 or IPv6 address (set by ipclab serve)" },
	{ .name = "connect", .type = OPT_STRING, .offset = offsetof(struct zq_opts, connect),
	  .def = "", .help = "between hosts: the clients only, client id i connecting to IPV4:PORT+i or [IPV6]:PORT+i (set by run --peer)" },
	{ .name = "secret", .type = OPT_STRING, .offset = offsetof(struct zq_opts, secret),
	  .def = "", .help = "between hosts: the cell's hello secret, 32 hex digits (set by serve / --peer)" },
	{ .name = NULL },
};

static int zq_tcp_check_opts(const void *opts, char *err, size_t errlen)
{
	const struct zq_opts *o = opts;

	return tp_remote_check("zmq-tcp", o->listen, o->connect, o->secret, err, errlen);
}

#ifdef HAVE_ZMQ

#define ZQ_HELLO_SLICES 100	/* the server waits this many slices for the hello */
#define ZQ_PORT_SLICES 10000	/* the client waits this many 1 ms naps for the port */
#define ZQ_DRAIN_MAX (1u << 20)	/* close: messages of a peer still sending, dropped */
#define ZQ_MON_ADDR "inproc://ipclab-zmq-monitor"

struct tp_endpoint {
	void *ctx;		/* own context, or NULL (zmq-inproc) */
	void *sock, *mon;
	bool peer_gone;		/* the monitor saw the connection drop */
	bool eof_seen;		/* recv returned the peer's EOF marker */
	const _Atomic int *stop;	/* the cell's stop word (tp_config) */
};

static inline bool zq_stopping(const struct tp_endpoint *ep)
{
	return stop_requested(ep->stop);
}

static int zq_probe(const struct tp_config *cfg, char *why, size_t len)
{
	if (!zmq_has("ipc"))
		return errf(why, len, ENOTSUP, "this libzmq has no ipc:// transport; %s",
			    ZQ_INSTALL);
	return 0;
}

/* Drain the monitor: has the connection dropped? */
static bool zq_peer_gone(struct tp_endpoint *ep)
{
	zmq_msg_t m;

	while (ep->mon && !ep->peer_gone) {
		uint16_t ev = 0;
		bool more;

		zmq_msg_init(&m);
		if (zmq_msg_recv(&m, ep->mon, ZMQ_DONTWAIT) < 0) {
			zmq_msg_close(&m);
			break;
		}
		/* an event is two frames: 16-bit event and 32-bit value, then
		 * the endpoint's address */
		if (zmq_msg_size(&m) >= sizeof(ev))
			memcpy(&ev, zmq_msg_data(&m), sizeof(ev));
		more = zmq_msg_more(&m);
		zmq_msg_close(&m);
		if (more) {
			zmq_msg_init(&m);
			zmq_msg_recv(&m, ep->mon, ZMQ_DONTWAIT);
			zmq_msg_close(&m);
		}
		if (ev == ZMQ_EVENT_DISCONNECTED)
			ep->peer_gone = true;
	}
	return ep->peer_gone;
}

static int zq_monitor(struct tp_endpoint *ep, const char *tp, char *err, size_t errlen)
{
	if (zmq_socket_monitor(ep->sock, ZQ_MON_ADDR, ZMQ_EVENT_DISCONNECTED))
		return zq_err(err, errlen, tp, "zmq_socket_monitor");
	ep->mon = zmq_socket(ep->ctx, ZMQ_PAIR);
	if (!ep->mon || zmq_connect(ep->mon, ZQ_MON_ADDR))
		return zq_err(err, errlen, tp, "monitor socket");
	return 0;
}

/* zmq-tcp's server: bind 127.0.0.1 on any port and publish it. */
static int zq_bind(struct tp_channel *ch, struct tp_endpoint *ep, unsigned id, char *err,
		   size_t errlen)
{
	struct zq_chan *c = ch->priv;
	char last[ZQ_ADDR_MAX];
	size_t l = sizeof(last);
	const char *colon;
	unsigned long port;

	if (c->kind == ZQ_IPC) {
		/* in the private 0700 directory; 0600 as every socket there */
		if (zmq_bind(ep->sock, c->addr[id]))
			return zq_err(err, errlen, ch->tp->name, c->addr[id]);
		if (chmod(c->addr[id] + strlen("ipc://"), 0600) < 0)
			return errf(err, errlen, errno, "%s: chmod %s: %s", ch->tp->name,
				    c->addr[id], strerror(errno));
		return 0;
	}
	if (c->kind == ZQ_INPROC)
		return zmq_bind(ep->sock, c->addr[id]) ?
			       zq_err(err, errlen, ch->tp->name, c->addr[id]) : 0;
	if (c->remote.mode == TPR_SERVER) {
		char host[NET_ADDR_TEXT + 2], addr[ZQ_ADDR_MAX];

		zq_host(c, host, sizeof(host));
		snprintf(addr, sizeof(addr), "tcp://%s:%u", host,
			 atomic_load_explicit(&c->ports[id], memory_order_relaxed));
		return zmq_bind(ep->sock, addr) ? zq_err(err, errlen, ch->tp->name, addr) : 0;
	}
	if (zmq_bind(ep->sock, "tcp://127.0.0.1:*") ||
	    zmq_getsockopt(ep->sock, ZMQ_LAST_ENDPOINT, last, &l))
		return zq_err(err, errlen, ch->tp->name, "bind tcp://127.0.0.1:*");
	colon = strrchr(last, ':');
	port = colon ? strtoul(colon + 1, NULL, 10) : 0;
	if (!port || port > 65535)
		return errf(err, errlen, EPROTO, "%s: bound to %s: no port", ch->tp->name, last);
	atomic_store_explicit(&c->ports[id], (uint32_t)port, memory_order_release);
	return 0;
}

static int zq_connect(struct tp_channel *ch, struct tp_endpoint *ep, unsigned id, char *err,
		      size_t errlen)
{
	struct zq_chan *c = ch->priv;
	char addr[ZQ_ADDR_MAX], host[NET_ADDR_TEXT + 2];
	uint32_t port = 0;

	snprintf(addr, sizeof(addr), "%s", c->addr[id]);
	zq_host(c, host, sizeof(host));
	for (unsigned i = 0; c->kind == ZQ_TCP && !port; i++) {
		port = atomic_load_explicit(&c->ports[id], memory_order_acquire);
		if (port)
			snprintf(addr, sizeof(addr), "tcp://%s:%u", host, port);
		else if (zq_stopping(ep))
			return errf(err, errlen, EINTR, "%s: client %u: stopped", ch->tp->name, id);
		else if (i >= ZQ_PORT_SLICES)
			return errf(err, errlen, ETIMEDOUT,
				    "%s: client %u: the server did not bind within %d s",
				    ch->tp->name, id, ZQ_PORT_SLICES / 1000);
		else
			usleep(1000);
	}
	if (zmq_connect(ep->sock, addr))
		return zq_err(err, errlen, ch->tp->name, addr);
	return 0;
}

/* The server's check of the client's hello: the run's secret and its id. */
static int zq_hello_check(struct tp_channel *ch, struct tp_endpoint *ep, unsigned id,
			  char *err, size_t errlen)
{
	struct zq_chan *c = ch->priv;
	struct zq_hello want = c->hello;
	union {
		struct zq_hello local;
		struct tp_rhello remote;
	} got;
	size_t size = c->remote.mode == TPR_LOCAL ? sizeof(got.local) : sizeof(got.remote);
	int n = -1;

	want.id = id;
	for (unsigned i = 0; i < ZQ_HELLO_SLICES && n < 0; i++) {
		n = zmq_recv(ep->sock, &got, sizeof(got), 0);
		if (n < 0 && zmq_errno() != EAGAIN && zmq_errno() != EINTR)
			return zq_err(err, errlen, ch->tp->name, "reading the hello");
		if (n < 0 && zq_stopping(ep))
			return errf(err, errlen, EINTR, "%s: server %u: stopped", ch->tp->name, id);
	}
	if (n < 0)
		return errf(err, errlen, ETIMEDOUT, "%s: client %u's hello did not come within %d s",
			    ch->tp->name, id, ZQ_HELLO_SLICES * ZQ_SLICE_MS / 1000);
	if (c->remote.mode != TPR_LOCAL &&
	    (n != (int)size || tp_rhello_check(&got.remote, &c->remote, c->n) != (int)id))
		return errf(err, errlen, EPROTO,
			    "%s: the first peer on client %u's port is not this cell's client (wrong hello); it was closed, never measured: run again",
			    ch->tp->name, id);
	if (c->remote.mode == TPR_LOCAL && (n != (int)size || memcmp(&got.local, &want, size)))
		return errf(err, errlen, EPROTO,
			    "%s: the first peer on client %u's socket is not ours (wrong hello): another local process connected first; run again",
			    ch->tp->name, id);
	return 0;
}

/* The client's first message: the per-run hello on one host, the remote
 * hello between hosts; waiting (in slices) for a server that binds later. */
static int zq_send_hello(struct tp_channel *ch, struct tp_endpoint *ep,
			 const struct zq_hello *h, unsigned id, char *err, size_t errlen)
{
	struct zq_chan *c = ch->priv;
	struct tp_rhello rh;
	const void *msg = h;
	size_t len = sizeof(*h);

	if (c->remote.mode == TPR_CLIENT) {
		tp_rhello_fill(&rh, &c->remote, id);
		msg = &rh;
		len = sizeof(rh);
	}
	for (unsigned i = 0; i < TP_REMOTE_WAIT_MS / ZQ_SLICE_MS; i++) {
		if (zmq_send(ep->sock, msg, len, 0) == (int)len)
			return 0;
		if (zmq_errno() != EAGAIN && zmq_errno() != EINTR)
			break;
		if (zq_stopping(ep))
			return errf(err, errlen, EINTR, "%s: client %u: stopped", ch->tp->name, id);
	}
	return zq_err(err, errlen, ch->tp->name, "sending the hello");
}

static void zq_free(struct tp_endpoint *ep, bool own_ctx)
{
	if (ep->mon) {
		zmq_socket_monitor(ep->sock, NULL, 0);
		zmq_close(ep->mon);
	}
	if (ep->sock)
		zmq_close(ep->sock);
	if (own_ctx && ep->ctx)
		zq_ctx_term(ep->ctx);
	free(ep);
}

static int zq_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		   struct tp_endpoint **out, char *err, size_t errlen)
{
	struct zq_chan *c = ch->priv;
	struct tp_endpoint *ep;
	struct zq_hello h = c->hello;
	int ret = 0;

	if (id >= c->n)
		return errf(err, errlen, EINVAL, "%s: client id %u out of range (%u clients)",
			    ch->tp->name, id, c->n);
	ret = zq_fd_room(ch->tp->name, err, errlen);
	if (ret)
		return ret;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return errf(err, errlen, ENOMEM, "%s: out of memory", ch->tp->name);
	ep->stop = ch->cfg->stop;
	ep->ctx = c->ctx ? c->ctx : zmq_ctx_new();
	if (!ep->ctx)
		ret = zq_err(err, errlen, ch->tp->name, "zmq_ctx_new");
	if (!ret && !(ep->sock = zmq_socket(ep->ctx, ZMQ_PAIR)))
		ret = zq_err(err, errlen, ch->tp->name, "zmq_socket");
	if (!ret)
		ret = zq_setup(ep->sock, ch, err, errlen);
	if (!ret && c->kind != ZQ_INPROC)
		ret = zq_monitor(ep, ch->tp->name, err, errlen);
	if (!ret && role == TP_SERVER) {
		ret = zq_bind(ch, ep, id, err, errlen);
		if (!ret)
			ret = zq_hello_check(ch, ep, id, err, errlen);
	} else if (!ret) {
		h.id = id;
		ret = zq_connect(ch, ep, id, err, errlen);
		if (!ret)
			ret = zq_send_hello(ch, ep, &h, id, err, errlen);
	}
	if (ret) {
		zq_free(ep, !c->ctx);
		return ret;
	}
	*out = ep;
	return 0;
}

static ssize_t zq_send(struct tp_endpoint *ep, const void *buf, size_t len)
{
	if (len == 0)
		return -EINVAL;	/* a zero-length message means EOF here */
	for (;;) {
		int n = zmq_send(ep->sock, buf, len, 0);

		if (n >= 0)
			return n == (int)len ? n : -EIO;
		if (zmq_errno() != EAGAIN && zmq_errno() != EINTR)
			return -zmq_errno();
		if (zq_stopping(ep))
			return -EINTR;
		if (zq_peer_gone(ep))
			return -EPIPE;
	}
}

static ssize_t zq_recv(struct tp_endpoint *ep, void *buf, size_t len)
{
	for (;;) {
		int n = zmq_recv(ep->sock, buf, len, 0);

		if (n == 0)
			ep->eof_seen = true;
		if (n >= 0)
			return (size_t)n > len ? -EMSGSIZE : n;
		if (zmq_errno() != EAGAIN && zmq_errno() != EINTR)
			return -zmq_errno();
		if (zq_stopping(ep))
			return -EINTR;
		/* only once nothing is left to read: a closing peer's last
		 * messages and its EOF marker come before the drop */
		if (zq_peer_gone(ep))
			return -ECONNRESET;
	}
}

/* Wait (a bounded time) for the peer's EOF marker, dropping what else
 * comes: libzmq discards what a receiver had not yet taken in when the
 * connection drops, so the first to close keeps its socket until the peer
 * has read everything, its EOF marker included, and closed in turn. */
static void zq_await_peer_close(struct tp_endpoint *ep)
{
	unsigned idle = 0, drained = 0;

	while (idle < ZQ_LINGER_MS / ZQ_SLICE_MS && drained < ZQ_DRAIN_MAX) {
		zmq_msg_t m;
		int n;

		if (zq_peer_gone(ep) || zq_stopping(ep))
			return;
		zmq_msg_init(&m);
		n = zmq_msg_recv(&m, ep->sock, 0);
		zmq_msg_close(&m);
		if (n == 0)
			return;
		if (n > 0)
			drained++;
		else if (zmq_errno() == EAGAIN || zmq_errno() == EINTR)
			idle++;
		else
			return;
	}
}

static void zq_close(struct tp_endpoint *ep)
{
	int zero = 0;

	if (!ep)
		return;
	/* the EOF marker, waiting for room while the peer is there */
	for (int i = 0; i < ZQ_LINGER_MS / ZQ_SLICE_MS; i++) {
		if (zq_peer_gone(ep) || zq_stopping(ep) || zmq_send(ep->sock, "", 0, 0) == 0 ||
		    (zmq_errno() != EAGAIN && zmq_errno() != EINTR))
			break;
	}
	/* the peer closed first: it drains until our marker comes */
	if (!ep->eof_seen)
		zq_await_peer_close(ep);
	/* a dead or stopped peer reads nothing more: do not linger for it */
	if (zq_peer_gone(ep) || zq_stopping(ep))
		zmq_setsockopt(ep->sock, ZMQ_LINGER, &zero, sizeof(zero));
	zq_free(ep, ep->mon != NULL);
}

/* One create per transport, each naming its kind (not its name). */
static int zq_create_ipc(struct tp_channel *ch, char *err, size_t errlen)
{
	return zq_create(ch, ZQ_IPC, err, errlen);
}

static int zq_create_tcp(struct tp_channel *ch, char *err, size_t errlen)
{
	return zq_create(ch, ZQ_TCP, err, errlen);
}

static int zq_create_inproc(struct tp_channel *ch, char *err, size_t errlen)
{
	return zq_create(ch, ZQ_INPROC, err, errlen);
}

#define ZQ_PROBE zq_probe
#define ZQ_OPS(kind)                                                                    \
	.create = zq_create_##kind, .open = zq_open, .send = zq_send, .recv = zq_recv, \
	.close = zq_close, .destroy = zq_destroy

#else /* !HAVE_ZMQ */

static int zq_probe(const struct tp_config *cfg, char *why, size_t len)
{
	return errf(why, len, ENOTSUP, "built without libzmq; %s", ZQ_INSTALL);
}

#define ZQ_PROBE zq_probe
#define ZQ_OPS(kind) TP_ABSENT_OPS

#endif /* HAVE_ZMQ */

const struct transport tp_zmq_ipc = {
	.name = "zmq-ipc",
	.summary = "ZeroMQ PAIR sockets over ipc:// (a unix socket in the private directory), one per client; -O hwm",
	.caps = TP_DGRAM | TP_MULTI_CLIENT | TP_NAMED,
	.group = TP_GROUP_LIBRARY,
	.options = zq_options,
	.opts_size = sizeof(struct zq_opts),
	.probe = ZQ_PROBE,
	ZQ_OPS(ipc),
};

const struct transport tp_zmq_tcp = {
	.name = "zmq-tcp",
	.summary = "ZeroMQ PAIR sockets over tcp://127.0.0.1 or between hosts (no ZeroMQ authentication: a hello with a secret), one per client; -O hwm",
	.caps = TP_DGRAM | TP_MULTI_CLIENT | TP_REMOTE,
	.group = TP_GROUP_LIBRARY,
	.options = zq_tcp_options,
	.opts_size = sizeof(struct zq_opts),
	.check_opts = zq_tcp_check_opts,
	.probe = ZQ_PROBE,
	ZQ_OPS(tcp),
};

const struct transport tp_zmq_inproc = {
	.name = "zmq-inproc",
	.summary = "ZeroMQ PAIR sockets over inproc:// (threads of one process, one context), one per client; -O hwm",
	.caps = TP_DGRAM | TP_MULTI_CLIENT | TP_THREAD_ONLY,
	.group = TP_GROUP_LIBRARY,
	.options = zq_options,
	.opts_size = sizeof(struct zq_opts),
	.probe = ZQ_PROBE,
	ZQ_OPS(inproc),
};
