// SPDX-License-Identifier: MIT
/* nng-ipc, nng-inproc, nng-tcp: nng (nanomsg-next-gen) pair0 sockets, one pair per
 * client id: a server endpoint per client is one socket, and a message
 * carries no protocol header (pair1 adds a 4-byte hop count to each).
 *
 * nng is not fork-safe, and says so: once a process has started nng, a
 * child forked from it aborts in its first nng call ("nng is not
 * fork-reentrant safe"). So in process mode the parent never calls nng:
 * create reads the settings back in a short helper child, and the probe
 * first checks, in another such child, that nng can start in a child of
 * this process at all (both in nng_probe.c); where an nng endpoint run as
 * a thread already started nng here, the process-mode cell is skipped
 * saying so. In thread mode the parent reads the settings itself.
 *
 * The server listens, the client dials (in the background, retried) and
 * sends a hello (a per-run secret and its id) that the server checks
 * before anything is measured:
 *   - ipc:// paths live in the run's private 0700 directory, registered for
 *     cleanup before the server's listener makes them;
 *   - inproc:// names are unique per channel (threads of one process);
 *   - tcp:// on 127.0.0.1 or between hosts (nng_tcp.c): there the hello is
 *     the remote one with the cell's secret (tp_remote.h), as tcp's.
 *
 * Every blocking call has NNG_OPT_RECVTIMEO/NNG_OPT_SENDTIMEO of
 * NN_SLICE_MS: between slices the stop request is looked at (-EINTR) and
 * whether the connection (nng's pipe) went away, which a pipe-removal
 * callback records (for the pipe the socket paired with, not a refused
 * stranger's): a dead peer is -ECONNRESET (recv, once nothing is left
 * to read) or -EPIPE (send), never a wait. nng retries a dial or an
 * accept that gets no descriptor without end and without a word: a hello
 * wait that finds none free in the process for a second gives up, naming
 * ulimit -n. A zero-length message is the EOF marker (as zmq and
 * posix-mq). */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "absent.h"
#include "ipclab/cleanup.h"
#include "ipclab/transport.h"
#include "ipclab/util.h"
#include "nng_probe.h"
#include "nng_tcp.h"
#include "tp_remote.h"

#ifdef HAVE_NNG
#include <nng/nng.h>
#include <nng/protocol/pair0/pair.h>
#endif

#define NN_INSTALL "install libnng-dev (make deps)"

#define NN_OPT_BUF                                                                    \
	{ .name = "buf", .type = OPT_UINT, .offset = offsetof(struct nn_opts, buf),     \
	  .def = "", .max = 8192,                                                        \
	  .help = "NNG_OPT_SENDBUF and NNG_OPT_RECVBUF: messages queued in the socket each way (0 = nng's default)" }

static const struct opt_desc nn_options[] = {
	NN_OPT_BUF,
	{ .name = NULL },
};

static const struct opt_desc nn_tcp_options[] = {
	NN_OPT_BUF,
	{ .name = "listen", .type = OPT_STRING, .offset = offsetof(struct nn_opts, listen),
	  .def = "", .help = "between hosts: the server's side only, listening on this IPv4 or IPv6 address (set by ipclab serve)" },
	{ .name = "connect", .type = OPT_STRING, .offset = offsetof(struct nn_opts, connect),
	  .def = "", .help = "between hosts: the clients only, client id i dialing IPV4:PORT+i or [IPV6]:PORT+i (set by run --peer)" },
	{ .name = "secret", .type = OPT_STRING, .offset = offsetof(struct nn_opts, secret),
	  .def = "", .help = "between hosts: the cell's hello secret, 32 hex digits (set by serve / --peer)" },
	{ .name = NULL },
};

static int nn_tcp_check_opts(const void *opts, char *err, size_t errlen)
{
	const struct nn_opts *o = opts;

	return tp_remote_check("nng-tcp", o->listen, o->connect, o->secret, err, errlen);
}

#ifdef HAVE_NNG

#define NN_HELLO_SLICES 100	/* the server waits this many slices for the hello */
#define NN_LINGER_SLICES 20	/* close: slices to wait for the peer's EOF marker */
#define NN_DRAIN_MAX (1u << 20)	/* close: messages of a peer still sending, dropped */
#define NN_STARVED_SLICES 10	/* hello waits: slices in a row with no descriptor free */

struct tp_endpoint {
	nng_socket sock;
	bool open;
	_Atomic bool peer_gone;	/* nng removed the connection's pipe */
	_Atomic uint32_t pipe;	/* the id of the pipe nng added first, 0 = none yet */
	bool eof_seen;		/* recv returned the peer's EOF marker */
	bool moved;		/* a message was sent or received (the hello aside) */
	const _Atomic int *stop;	/* the cell's stop word (tp_config) */
};

static inline bool nn_stopping(const struct tp_endpoint *ep)
{
	return stop_requested(ep->stop);
}

static int nn_addr_ipc(struct tp_channel *ch, struct nn_chan *c, unsigned id, char *err,
		       size_t errlen)
{
	char path[PATH_MAX];
	int ret = tp_ipc_socket_path(ch, "nng", id, path, err, errlen);

	if (ret)
		return ret;
	/* registered before the server's listener makes it */
	c->cl[id] = cleanup_add(CL_PATH, path);
	if (c->cl[id] < 0)
		return errf(err, errlen, ENOMEM, "%s: cleanup table full", ch->tp->name);
	snprintf(c->addr[id], NN_ADDR_MAX, "ipc://%.*s", (int)sizeof(((struct sockaddr_un *)0)->sun_path) - 1, path);
	return 0;
}

/* create, for the transport of that kind (the wrappers below). */
static int nn_create(struct tp_channel *ch, enum nn_kind kind, char *err, size_t errlen)
{
	unsigned n = ch->cfg->clients ? ch->cfg->clients : 1;
	struct nn_chan *c = calloc(1, sizeof(*c));
	char name[64];
	int ret = 0;

	if (!c)
		return errf(err, errlen, ENOMEM, "%s: out of memory", ch->tp->name);
	ch->priv = c;
	c->kind = kind;
	c->n = n;
	c->cl = malloc(n * sizeof(*c->cl));
	c->addr = calloc(n, sizeof(*c->addr));
	if (!c->cl || !c->addr)
		return errf(err, errlen, ENOMEM, "%s: out of memory", ch->tp->name);
	for (unsigned i = 0; i < n; i++)
		c->cl[i] = -1;
	if (getrandom(c->hello.secret, sizeof(c->hello.secret), 0) != sizeof(c->hello.secret))
		return errf(err, errlen, errno, "%s: getrandom: %s", ch->tp->name, strerror(errno));
	cleanup_unique_name(name, sizeof(name), "ipclab-nng");
	if (c->kind == NN_TCP)
		ret = nn_tcp_create(ch, c, err, errlen);
	for (unsigned id = 0; !ret && id < n; id++) {
		if (c->kind == NN_IPC)
			ret = nn_addr_ipc(ch, c, id, err, errlen);
		else if (c->kind == NN_INPROC)
			snprintf(c->addr[id], NN_ADDR_MAX, "inproc://%s.%u", name, id);
	}
	if (!ret)
		ret = nn_report(ch, c->kind == NN_TCP, err, errlen);
	if (!ret && c->kind == NN_IPC)
		tp_setting(ch, "ipc_dir", "%s", ch->cfg->dir);
	if (!ret && c->kind == NN_TCP)
		tp_setting(ch, "auth", c->remote.mode == TPR_LOCAL ?
			   "none (hello with a per-run secret)" :
			   "none (hello with the cell's secret from the control connection)");
	return ret;
}

static void nn_destroy(struct tp_channel *ch)
{
	struct nn_chan *c = ch->priv;

	if (!c)
		return;
	for (unsigned i = c->n; c->cl && i-- > 0;)
		if (c->cl[i] >= 0)
			cleanup_run_one(c->cl[i]);
	nn_tcp_destroy(c);
	free(c->cl);
	free(c->addr);
	free(c);
	ch->priv = NULL;
}

/* On one of nng's threads: the connection came or went. Only the first
 * pipe counts: pair0 refuses a second peer while it has one (over tcp,
 * anyone may connect), and that refused pipe's going is no news. */
static void nn_pipe_event(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	struct tp_endpoint *ep = arg;
	int pid = nng_pipe_id(p);
	uint32_t none = 0;

	if (pid <= 0)
		return;
	if (ev == NNG_PIPE_EV_ADD_POST)
		atomic_compare_exchange_strong(&ep->pipe, &none, (uint32_t)pid);
	else if (ev == NNG_PIPE_EV_REM_POST && atomic_load(&ep->pipe) == (uint32_t)pid)
		atomic_store(&ep->peer_gone, true);
}

static bool nn_peer_gone(struct tp_endpoint *ep)
{
	return atomic_load(&ep->peer_gone);
}

/* A hello wait's slice ran out: is this process out of descriptors, for
 * NN_STARVED_SLICES slices in a row? The connection needs one (the
 * dialer's socket, the listener's accepted one) and nng retries either
 * without end and without a word, so a wait with none free would last
 * until the cell's stall limit and end without the reason. */
static bool nn_starved(unsigned *starved)
{
	int e = tp_fds_free(1);

	*starved = e == EMFILE || e == ENFILE ? *starved + 1 : 0;
	return *starved >= NN_STARVED_SLICES;
}

#define NN_STARVED_FIX "(nng retries without end); raise the open-file limit: ulimit -n"

/* The server's check of the client's hello: the run's secret and its id. */
static int nn_hello_check(struct tp_channel *ch, struct tp_endpoint *ep, unsigned id,
			  char *err, size_t errlen)
{
	struct nn_chan *c = ch->priv;
	struct nn_hello want = c->hello;
	nng_msg *m = NULL;
	int rv = NNG_ETIMEDOUT;
	bool remote = c->remote.mode != TPR_LOCAL;
	unsigned starved = 0;

	want.id = id;
	for (unsigned i = 0; i < NN_HELLO_SLICES && rv == NNG_ETIMEDOUT; i++) {
		rv = nng_recvmsg(ep->sock, &m, 0);
		if (rv == NNG_ETIMEDOUT && nn_stopping(ep))
			return errf(err, errlen, EINTR, "%s: server %u: stopped", ch->tp->name, id);
		if (rv == NNG_ETIMEDOUT && nn_starved(&starved))
			return errf(err, errlen, EMFILE,
				    "%s: server %u: out of file descriptors, client %u's connection "
				    "cannot be accepted " NN_STARVED_FIX, ch->tp->name, id, id);
	}
	if (rv == NNG_ETIMEDOUT)
		return errf(err, errlen, ETIMEDOUT, "%s: client %u's hello did not come within %d s",
			    ch->tp->name, id, NN_HELLO_SLICES * NN_SLICE_MS / 1000);
	if (rv)
		return nn_err(err, errlen, ch->tp->name, "reading the hello", rv);
	if (remote) {
		struct tp_rhello h;

		rv = nng_msg_len(m) != sizeof(h);
		if (!rv) {
			memcpy(&h, nng_msg_body(m), sizeof(h));
			rv = tp_rhello_check(&h, &c->remote, c->n) != (int)id;
		}
	} else {
		rv = nng_msg_len(m) != sizeof(want) || memcmp(nng_msg_body(m), &want, sizeof(want));
	}
	nng_msg_free(m);
	if (rv && remote)
		return errf(err, errlen, EPROTO,
			    "%s: the first peer on client %u's port is not this cell's client (wrong hello); it was closed, never measured: run again",
			    ch->tp->name, id);
	if (rv)
		return errf(err, errlen, EPROTO,
			    "%s: the first peer on client %u's socket is not ours (wrong hello)%s",
			    ch->tp->name, id,
			    c->kind == NN_TCP ? ": another local process connected first; run again" : "");
	return 0;
}

static int nn_hello_send(struct tp_channel *ch, struct tp_endpoint *ep, unsigned id, char *err,
			 size_t errlen)
{
	struct nn_chan *c = ch->priv;
	struct nn_hello h = c->hello;
	struct tp_rhello rh;
	void *msg = &h;
	size_t len = sizeof(h);
	int rv = NNG_ETIMEDOUT;
	unsigned starved = 0;

	h.id = id;
	if (c->remote.mode == TPR_CLIENT) {
		tp_rhello_fill(&rh, &c->remote, id);
		msg = &rh;
		len = sizeof(rh);
	}
	/* send waits for the dialer's connection, retried in the background */
	for (unsigned i = 0; i < NN_HELLO_SLICES && rv == NNG_ETIMEDOUT; i++) {
		rv = nng_send(ep->sock, msg, len, 0);
		if (rv == NNG_ETIMEDOUT && nn_stopping(ep))
			return errf(err, errlen, EINTR, "%s: client %u: stopped", ch->tp->name, id);
		if (rv == NNG_ETIMEDOUT && nn_starved(&starved))
			return errf(err, errlen, EMFILE,
				    "%s: client %u: out of file descriptors, no connection to the "
				    "server can be made " NN_STARVED_FIX, ch->tp->name, id);
	}
	if (rv == NNG_ETIMEDOUT)
		return errf(err, errlen, ETIMEDOUT,
			    "%s: client %u could not reach the server within %d s", ch->tp->name, id,
			    NN_HELLO_SLICES * NN_SLICE_MS / 1000);
	return rv ? nn_err(err, errlen, ch->tp->name, "sending the hello", rv) : 0;
}

static void nn_free(struct tp_endpoint *ep)
{
	/* no callback runs once nng_close has returned */
	if (ep->open)
		nng_close(ep->sock);
	free(ep);
}

/* The server listens on id's address, the client dials it (in the
 * background, retried by nng). 0 or -errno with why. */
static int nn_attach(struct tp_channel *ch, struct tp_endpoint *ep, enum tp_role role,
		     unsigned id, char *err, size_t errlen)
{
	struct nn_chan *c = ch->priv;
	int rv;

	if (c->kind == NN_TCP && role == TP_SERVER)
		return nn_tcp_listen(ch, ep->sock, id, err, errlen);
	if (c->kind == NN_TCP) {
		rv = nn_tcp_addr(ch, id, c->addr[id], NN_ADDR_MAX, err, errlen);
		if (rv)
			return rv;
	}
	if (role == TP_CLIENT) {
		rv = nng_dial(ep->sock, c->addr[id], NULL, NNG_FLAG_NONBLOCK);
		return rv ? nn_err(err, errlen, ch->tp->name, c->addr[id], rv) : 0;
	}
	rv = nng_listen(ep->sock, c->addr[id], NULL, 0);
	if (rv)
		return nn_err(err, errlen, ch->tp->name, c->addr[id], rv);
	/* in the private 0700 directory; 0600 as every socket there */
	if (c->kind == NN_IPC && chmod(c->addr[id] + strlen("ipc://"), 0600) < 0)
		return errf(err, errlen, errno, "%s: chmod %s: %s", ch->tp->name, c->addr[id],
			    strerror(errno));
	return 0;
}

static int nn_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		   struct tp_endpoint **out, char *err, size_t errlen)
{
	struct nn_chan *c = ch->priv;
	struct tp_endpoint *ep;
	const char *what = "nng_pair0_open";
	int rv;

	if (id >= c->n)
		return errf(err, errlen, EINVAL, "%s: client id %u out of range (%u clients)",
			    ch->tp->name, id, c->n);
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return errf(err, errlen, ENOMEM, "%s: out of memory", ch->tp->name);
	ep->stop = ch->cfg->stop;
	rv = nng_pair0_open(&ep->sock);
	ep->open = rv == 0;
	if (!rv && (what = "socket options", rv = nn_setup(ep->sock, ch->cfg)) == 0) {
		what = "nng_pipe_notify";
		rv = nng_pipe_notify(ep->sock, NNG_PIPE_EV_ADD_POST, nn_pipe_event, ep);
		if (!rv)
			rv = nng_pipe_notify(ep->sock, NNG_PIPE_EV_REM_POST, nn_pipe_event, ep);
	}
	rv = rv ? nn_err(err, errlen, ch->tp->name, what, rv) :
		  nn_attach(ch, ep, role, id, err, errlen);
	if (!rv)
		rv = role == TP_SERVER ? nn_hello_check(ch, ep, id, err, errlen) :
					 nn_hello_send(ch, ep, id, err, errlen);
	if (rv) {
		nn_free(ep);
		return rv;
	}
	*out = ep;
	return 0;
}

static ssize_t nn_send(struct tp_endpoint *ep, const void *buf, size_t len)
{
	if (len == 0)
		return -EINVAL;	/* a zero-length message means EOF here */
	for (;;) {
		int rv = nng_send(ep->sock, (void *)buf, len, 0);

		if (rv == 0) {
			ep->moved = true;
			return (ssize_t)len;
		}
		if (rv != NNG_ETIMEDOUT && rv != NNG_EAGAIN && rv != NNG_EINTR)
			return -nn_errno(rv);
		if (nn_stopping(ep))
			return -EINTR;
		if (nn_peer_gone(ep))
			return -EPIPE;
	}
}

static ssize_t nn_take(struct tp_endpoint *ep, nng_msg *m, void *buf, size_t len)
{
	size_t n = nng_msg_len(m);

	ep->moved = true;
	if (n == 0)
		ep->eof_seen = true;
	if (n > len) {
		nng_msg_free(m);
		return -EMSGSIZE;
	}
	memcpy(buf, nng_msg_body(m), n);
	nng_msg_free(m);
	return (ssize_t)n;
}

static ssize_t nn_recv(struct tp_endpoint *ep, void *buf, size_t len)
{
	for (;;) {
		nng_msg *m = NULL;
		int rv = nng_recvmsg(ep->sock, &m, 0);

		if (rv == 0)
			return nn_take(ep, m, buf, len);
		if (rv != NNG_ETIMEDOUT && rv != NNG_EAGAIN && rv != NNG_EINTR)
			return -nn_errno(rv);
		if (nn_stopping(ep))
			return -EINTR;
		/* only once nothing is left to read: what a closing peer sent
		 * (its EOF marker last) is queued before its pipe goes */
		if (nn_peer_gone(ep)) {
			if (nng_recvmsg(ep->sock, &m, NNG_FLAG_NONBLOCK) == 0)
				return nn_take(ep, m, buf, len);
			return -ECONNRESET;
		}
	}
}

/* Wait (a bounded time) for the peer's EOF marker, dropping what else
 * comes: nng drops what is still on its way when a socket closes, so the
 * first to close keeps its socket until the peer has read everything, its
 * EOF marker included, and closed in turn. */
static void nn_await_peer_close(struct tp_endpoint *ep)
{
	unsigned idle = 0, drained = 0;

	while (idle < NN_LINGER_SLICES && drained < NN_DRAIN_MAX) {
		nng_msg *m = NULL;
		int rv;

		if (nn_peer_gone(ep) || nn_stopping(ep))
			return;
		rv = nng_recvmsg(ep->sock, &m, 0);
		if (rv == 0) {
			size_t n = nng_msg_len(m);

			nng_msg_free(m);
			if (n == 0)
				return;
			drained++;
		} else if (rv == NNG_ETIMEDOUT || rv == NNG_EAGAIN || rv == NNG_EINTR) {
			idle++;
		} else {
			return;
		}
	}
}

static void nn_close(struct tp_endpoint *ep)
{
	if (!ep)
		return;
	/* the EOF marker, waiting for room while the peer is there */
	for (int i = 0; i < NN_LINGER_SLICES; i++) {
		int rv;

		if (nn_peer_gone(ep) || nn_stopping(ep))
			break;
		rv = nng_send(ep->sock, "", 0, 0);
		if (rv != NNG_ETIMEDOUT && rv != NNG_EAGAIN && rv != NNG_EINTR)
			break;
	}
	/* the peer closed first: it drains until our marker comes. Nothing
	 * to keep for a peer when no message moved (an open that failed
	 * after others of the side's had opened: their peers are not
	 * reading yet, and waiting for each in turn made that error late) */
	if (!ep->eof_seen && ep->moved)
		nn_await_peer_close(ep);
	nn_free(ep);
}

/* One create per transport, each naming its kind (not its name). */
static int nn_create_ipc(struct tp_channel *ch, char *err, size_t errlen)
{
	return nn_create(ch, NN_IPC, err, errlen);
}

static int nn_create_tcp(struct tp_channel *ch, char *err, size_t errlen)
{
	return nn_create(ch, NN_TCP, err, errlen);
}

static int nn_create_inproc(struct tp_channel *ch, char *err, size_t errlen)
{
	return nn_create(ch, NN_INPROC, err, errlen);
}

#define NN_PROBE nn_probe
#define NN_OPS(kind)                                                                     \
	.create = nn_create_##kind, .open = nn_open, .send = nn_send, .recv = nn_recv, \
	.close = nn_close, .destroy = nn_destroy

#else /* !HAVE_NNG */

static int nn_probe(const struct tp_config *cfg, char *why, size_t len)
{
	(void)cfg;
	return errf(why, len, ENOTSUP, "built without nng; %s", NN_INSTALL);
}

#define NN_PROBE nn_probe
#define NN_OPS(kind) TP_ABSENT_OPS

#endif /* HAVE_NNG */

const struct transport tp_nng_ipc = {
	.name = "nng-ipc",
	.summary = "nng pair0 sockets over ipc:// (a unix socket in the private directory), one per client; -O buf",
	.caps = TP_DGRAM | TP_MULTI_CLIENT | TP_NAMED,
	.group = TP_GROUP_LIBRARY,
	.options = nn_options,
	.opts_size = sizeof(struct nn_opts),
	.probe = NN_PROBE,
	NN_OPS(ipc),
};

const struct transport tp_nng_tcp = {
	.name = "nng-tcp",
	.summary = "nng pair0 sockets over tcp://127.0.0.1 or between hosts (no nng authentication: a hello with a secret), one per client; -O buf",
	.caps = TP_DGRAM | TP_MULTI_CLIENT | TP_REMOTE,
	.group = TP_GROUP_LIBRARY,
	.options = nn_tcp_options,
	.opts_size = sizeof(struct nn_opts),
	.check_opts = nn_tcp_check_opts,
	.probe = NN_PROBE,
	NN_OPS(tcp),
};

const struct transport tp_nng_inproc = {
	.name = "nng-inproc",
	.summary = "nng pair0 sockets over inproc:// (threads of one process), one per client; -O buf",
	.caps = TP_DGRAM | TP_MULTI_CLIENT | TP_THREAD_ONLY,
	.group = TP_GROUP_LIBRARY,
	.options = nn_options,
	.opts_size = sizeof(struct nn_opts),
	.probe = NN_PROBE,
	NN_OPS(inproc),
};
