// SPDX-License-Identifier: MIT
/* ring-ipc: libipcring's connections by name, the way a daemon would use
 * them. create listens on a socket in the run's private directory; each
 * client connects by that name in open (its client id is the connection's
 * tag) and receives its two rings (requests, replies) from the server,
 * which checks its credentials. The server endpoint of id N takes the
 * connection tagged N (others that arrive first wait in the channel). The
 * control socket tells either side at once when the other dies; the rings
 * then give -EPIPE.
 *
 * Waits are the library's: spin for -O spin-ns, then sleep on the ring's
 * eventfd. Every blocking call is bounded by RIPC_SLICE_MS (ring_ep's
 * slice), after which the cell's stop word gives -EINTR; the client's
 * connect is ipcring_connect_cancel(), which asks the stop word. The endpoint operations the ring
 * transport does alike (reserve, commit, send, peek, release and their
 * waits) are ring_ep.h's; this file adds the connection, the -EPIPE
 * marking of the other ring and the fan-in eventfd. With several clients each server endpoint
 * offers its request ring's eventfd (pollfd) to the pattern's epoll loop,
 * in one of two ways. With the ready hook (what the fan-in server uses),
 * as a ring server's own loop waits: the server spins over every request
 * ring, and only when all are empty announces sleep on each (the clients
 * then write their eventfds) and sleeps in epoll; while it spins, clients
 * make no system call. Without it (classic epoll, -O serve=epoll), the
 * eventfd is kept readable whenever a request is waiting: an endpoint that
 * finds its ring empty announces sleep, and one that leaves requests
 * behind marks the eventfd itself.
 * -O batch=N publishes every Nth message (ring_ep_commit), and runs of
 * places move through the batch operations (reserve_n/commit_n, peek_n/
 * release_n: ring_ep's, as the ring transport's); -O batch=auto, the
 * default, publishes a message sent alone at once and a run at its
 * commit_n. A fan-in server's endpoints are read one message at a time
 * by the patterns, so no client's run can hold up the others there. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipcring.h"
#include "ipclab/cleanup.h"
#include "ipclab/polling.h"
#include "ipclab/transport.h"
#include "ipclab/util.h"
#include "ring_ep.h"

#define RIPC_SLICE_MS RING_EP_SLICE_MS
#define RIPC_CONNECT_MS 10000
#define RIPC_MAX_CLIENTS 1024

struct ripc_opts {
	uint64_t capacity;
	uint64_t spin_ns;
	uint64_t batch;
};

static const struct opt_desc ripc_options[] = {
	{ .name = "capacity", .type = OPT_SIZE, .offset = offsetof(struct ripc_opts, capacity),
	  .def = "1M", .min = 4096, .max = 1u << 30, .flags = OPT_POW2,
	  .help = "data bytes of each connection's two rings: a power of two; the largest "
		  "message is a quarter" },
	{ .name = "spin-ns", .type = OPT_DURATION, .offset = offsetof(struct ripc_opts, spin_ns),
	  .def = "30us", .min = 0, .max = 1000000000,
	  .help = "spin budget before sleeping on the eventfd; 0 = none" },
	{ .name = "batch", .type = OPT_UINT, .offset = offsetof(struct ripc_opts, batch),
	  .def = "auto", .min = 1, .max = 65536, .zero_word = "auto",
	  .help = "auto: a closed-loop stream moves the messages ready at once as one run, "
		  "published at its end, and any other message is published at once; "
		  "N: publish every Nth message (paced or think runs wait for N)" },
	{ .name = NULL },
};

static const struct ripc_opts ripc_defaults = {
	.capacity = 1u << 20, .spin_ns = 30000, .batch = 0,	/* auto */
};

struct ripc_chan {
	struct ipcring_server *srv;
	char name[256];
	int cl;				/* cleanup handle of the socket file */
	unsigned nclients;
	bool threads;
	struct ipcring_conn **early;	/* server side: accepted before their open */
};

struct tp_endpoint {
	struct ring_ep re;		/* its rings are the connection's */
	struct ipcring_conn *conn;
	bool fanin;			/* server of several clients: offer pollfd */
	bool level;			/* keep pollfd readable while a request waits
					 * (until the ready hook is used) */
	bool marked;			/* this side wrote its own eventfd */
};

static const struct ripc_opts *ripc_opts_of(const void *opts)
{
	return opts ? opts : &ripc_defaults;
}

static size_t ripc_max_msg(const void *opts)
{
	return (size_t)(ripc_opts_of(opts)->capacity / 4);
}

static int ripc_listen(struct tp_channel *ch, struct ripc_chan *rc, char *err, size_t errlen)
{
	const struct ripc_opts *o = ripc_opts_of(ch->cfg->opts);
	const char *dir = ch->cfg->dir ? ch->cfg->dir : cleanup_private_dir();
	struct ipcring_opts ro = {
		.capacity = (uint32_t)o->capacity,
		.spin_ns = o->spin_ns ? (uint32_t)o->spin_ns : IPCRING_NO_SPIN,
	};
	struct ipcring_server_opts so = { .ring = &ro, .max_conns = rc->nclients };
	char uniq[64], why[IPCRING_REASON_MAX];
	int r;

	if (!dir)
		return errf(err, errlen, errno, "ring-ipc: private directory: %s", strerror(errno));
	cleanup_unique_name(uniq, sizeof(uniq), "ring-ipc");
	if ((size_t)snprintf(rc->name, sizeof(rc->name), "%s/%s.sock", dir, uniq) >= 108)
		return errf(err, errlen, ENAMETOOLONG,
			    "ring-ipc: %s/%s.sock is longer than a socket path may be; set TMPDIR "
			    "to a shorter directory", dir, uniq);
	rc->cl = cleanup_add(CL_PATH, rc->name);
	if (rc->cl < 0)
		return errf(err, errlen, ENOMEM, "ring-ipc: cleanup table full");
	r = ipcring_listen(&rc->srv, rc->name, &so, why, sizeof(why));
	if (r)
		return errf(err, errlen, -r, "ring-ipc: ipcring_listen: %s", why);
	return 0;
}

static int ripc_create(struct tp_channel *ch, char *err, size_t errlen)
{
	const struct ripc_opts *o = ripc_opts_of(ch->cfg->opts);
	struct ripc_chan *rc = calloc(1, sizeof(*rc));

	if (!rc)
		return errf(err, errlen, ENOMEM, "ring-ipc: out of memory");
	rc->cl = -1;
	ch->priv = rc;
	rc->nclients = ch->cfg->clients ? ch->cfg->clients : 1;
	rc->threads = ch->cfg->threads;
	if (o->capacity & (o->capacity - 1))
		return errf(err, errlen, EINVAL, "ring-ipc: -O capacity=%llu is not a power of two "
			    "(use e.g. 1M or 4M)", (unsigned long long)o->capacity);
	if (ch->cfg->msg_size > o->capacity / 4)
		return errf(err, errlen, EMSGSIZE, "ring-ipc: a %zu-byte message exceeds a quarter "
			    "of the ring (%llu); raise -O capacity", ch->cfg->msg_size,
			    (unsigned long long)o->capacity / 4);
	if (rc->nclients > RIPC_MAX_CLIENTS)
		return errf(err, errlen, EINVAL, "ring-ipc: at most %d clients", RIPC_MAX_CLIENTS);
	rc->early = calloc(rc->nclients, sizeof(*rc->early));
	if (!rc->early)
		return errf(err, errlen, ENOMEM, "ring-ipc: out of memory");
	tp_setting(ch, "mode", "eventfd");
	tp_setting(ch, "capacity_bytes", "%llu", (unsigned long long)o->capacity);
	tp_setting(ch, "spin_ns", "%llu", (unsigned long long)o->spin_ns);
	if (o->batch)
		tp_setting(ch, "batch", "%llu", (unsigned long long)o->batch);
	else
		tp_setting(ch, "batch", "auto");
	tp_setting(ch, "protocol", "%u", IPCRING_PROTO_VERSION);
	tp_setting(ch, "peer_check", "SO_PEERCRED, same uid");
	return ripc_listen(ch, rc, err, errlen);
}

static void ripc_destroy(struct tp_channel *ch)
{
	struct ripc_chan *rc = ch->priv;

	if (!rc)
		return;
	for (unsigned i = 0; rc->early && i < rc->nclients; i++)
		(void)ipcring_conn_close(rc->early[i]);
	free(rc->early);
	(void)ipcring_server_close(rc->srv);	/* the listening process unlinks */
	if (rc->cl >= 0)
		cleanup_run_one(rc->cl);
	free(rc);
	ch->priv = NULL;
}

/* Take the connection tagged @id; others that come first wait in early[]. */
static int ripc_accept(struct tp_channel *ch, unsigned id, const _Atomic int *stop,
		       struct ipcring_conn **out, char *err, size_t errlen)
{
	struct ripc_chan *rc = ch->priv;
	char why[IPCRING_REASON_MAX];
	struct ipcring_conn *c;
	uint64_t tag;
	int r;

	while (!rc->early[id]) {
		r = ipcring_server_accept(rc->srv, &c, why, sizeof(why), RIPC_SLICE_MS);
		if (r == -ETIMEDOUT) {
			if (stop_requested(stop))
				return -EINTR;
			continue;
		}
		if (r == -EACCES || r == -EPROTO || r == -ECONNRESET)
			continue;	/* refused (it was told why) or gone: not ours */
		if (r)
			return errf(err, errlen, -r, "ring-ipc: server: accept for client %u: %s%s",
				    id, why[0] ? why : strerror(-r), r == -EMFILE || r == -ENFILE ?
				    " (out of file descriptors: raise the open-file limit, ulimit -n)" :
				    "");
		if (ipcring_conn_tag(c, &tag) || tag >= rc->nclients || rc->early[tag]) {
			(void)ipcring_conn_close(c);	/* not one of this cell's clients */
			continue;
		}
		rc->early[tag] = c;
	}
	*out = rc->early[id];
	rc->early[id] = NULL;
	return 0;
}

static void ripc_mark(struct tp_endpoint *ep)
{
	uint64_t one = 1;

	if (!ep->marked && write(ipcring_conn_fd(ep->conn), &one, sizeof(one)) == sizeof(one))
		ep->marked = true;
}

/* Fan-in: the eventfd is readable iff a request (or the end) is waiting.
 * A request already there keeps the mark this side wrote. Only when there
 * is none does it announce sleep, which drains the eventfd: if a request
 * then came before the announcement (the client saw no sleeper and wrote
 * nothing), the mark is gone and is written again. */
static void ripc_arm(struct tp_endpoint *ep)
{
	const void *msg;
	size_t n;

	if (ipcring_peek(ep->re.rx, &msg, &n, 0) != -EAGAIN) {
		ripc_mark(ep);		/* a request, the end or an error */
		return;
	}
	ep->marked = false;	/* drained; the client writes it now */
	if (ipcring_prepare_wait(ep->re.rx) != 0)
		ripc_mark(ep);
}

/* ipcring_connect_cancel's question: has the cell been told to stop? */
static int ripc_stopped(void *stop)
{
	return stop_requested(stop);
}

static int ripc_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		     struct tp_endpoint **out, char *err, size_t errlen)
{
	struct ripc_chan *rc = ch->priv;
	struct ipcring_connect_opts co = { .tag = id, .timeout_ms = RIPC_CONNECT_MS };
	char why[IPCRING_REASON_MAX];
	struct tp_endpoint *ep;
	int r;

	if (id >= rc->nclients)
		return errf(err, errlen, EINVAL, "ring-ipc: client id %u out of range (%u clients)",
			    id, rc->nclients);
	polling_source(ipcring_thread_poll_ns);	/* its spin is waiting, not work */
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return errf(err, errlen, ENOMEM, "ring-ipc: out of memory");
	ep->re.stop = ch->cfg->stop;
	ep->re.batch = (uint32_t)ripc_opts_of(ch->cfg->opts)->batch;
	ep->re.auto_runs = !ep->re.batch;
	if (!ep->re.batch)
		ep->re.batch = 1;	/* auto: a message alone is published at once */
	if (role == TP_SERVER) {
		r = ripc_accept(ch, id, ep->re.stop, &ep->conn, err, errlen);
	} else {
		if (!rc->threads && rc->srv) {
			/* a forked client keeps nothing of the server's */
			(void)ipcring_server_close(rc->srv);
			rc->srv = NULL;
		}
		/* the stop word ends the wait for a server that will not answer
		 * (its side failed, e.g. out of descriptors) */
		r = ipcring_connect_cancel(&ep->conn, rc->name, &co, ripc_stopped,
					   (void *)ep->re.stop, why, sizeof(why));
		if (r == -ECANCELED)
			r = errf(err, errlen, EINTR, "ring-ipc: client %u: stopped while "
				 "connecting: %s", id, why);
		else if (r)
			/* -EMFILE: this process's, or the server's in its refusal */
			errf(err, errlen, -r, "ring-ipc: client %u: %s%s", id, why,
			     r == -EMFILE || r == -ENFILE ? " (out of file descriptors: raise the "
			     "open-file limit, ulimit -n)" : "");
	}
	if (!r)
		r = ipcring_conn_rings(ep->conn, &ep->re.tx, &ep->re.rx);
	if (r) {
		(void)ipcring_conn_close(ep->conn);
		free(ep);
		return r;
	}
	ep->fanin = ep->level = role == TP_SERVER && rc->nclients > 1;
	if (ep->fanin)
		ripc_arm(ep);
	*out = ep;
	return 0;
}

static ssize_t ripc_reserve(struct tp_endpoint *ep, void **buf, size_t len)
{
	ssize_t r = ring_ep_reserve(&ep->re, buf, len);

	if (r == -EPIPE)
		(void)ipcring_mark_peer_dead(ep->re.rx);
	return r;
}

static ssize_t ripc_commit(struct tp_endpoint *ep, size_t len)
{
	return ring_ep_commit(&ep->re, len);
}

static ssize_t ripc_send(struct tp_endpoint *ep, const void *buf, size_t len)
{
	return ring_ep_send(ep, buf, len, ripc_reserve, ripc_commit);
}

static ssize_t ripc_peek(struct tp_endpoint *ep, const void **msg, size_t len)
{
	ssize_t r;

	(void)len;
	if (ep->re.pending)
		ring_ep_flush(&ep->re);
	r = ring_ep_peek(&ep->re, msg);
	if (r == -EPIPE)
		(void)ipcring_mark_peer_dead(ep->re.tx);
	if (r <= 0 && ep->level)
		ripc_mark(ep);	/* the end stays readable */
	return r;
}

static void ripc_release(struct tp_endpoint *ep)
{
	ring_ep_release(&ep->re);
	if (ep->level)
		ripc_arm(ep);
}

static ssize_t ripc_reserve_n(struct tp_endpoint *ep, void **bufs, size_t len, unsigned max)
{
	ssize_t r = ring_ep_reserve_n(&ep->re, bufs, len, max);

	if (r == -EPIPE)
		(void)ipcring_mark_peer_dead(ep->re.rx);
	return r;
}

static int ripc_commit_n(struct tp_endpoint *ep, unsigned n, size_t len)
{
	return ring_ep_commit_n(&ep->re, n, len);
}

/* as ripc_peek: the other ring marked at a dead peer, the fan-in eventfd
 * kept readable at the end, re-armed at release */
static ssize_t ripc_peek_n(struct tp_endpoint *ep, const void **msgs, size_t *lens,
			   unsigned max)
{
	ssize_t r = ring_ep_peek_n(&ep->re, msgs, lens, max);

	if (r == -EPIPE)
		(void)ipcring_mark_peer_dead(ep->re.tx);
	if (r <= 0 && ep->level)
		ripc_mark(ep);
	return r;
}

static void ripc_release_n(struct tp_endpoint *ep, unsigned n)
{
	ring_ep_release_n(&ep->re, n);
	if (ep->level)
		ripc_arm(ep);
}

static bool ripc_runs(const struct tp_endpoint *ep)
{
	return ring_ep_runs(&ep->re);
}

static ssize_t ripc_recv(struct tp_endpoint *ep, void *buf, size_t len)
{
	return tp_recv_via_peek(ep, buf, len, ripc_peek, ripc_release);
}

static int ripc_pollfd(const struct tp_endpoint *ep)
{
	return ep->fanin ? ipcring_conn_fd(ep->conn) : -1;
}

/* The fan-in server's readiness check: a non-blocking peek (the record,
 * if any, stays for recv), and with @arm the ring's own sleep announcement
 * (which drains the eventfd; the client writes it at its next flush).
 * From the first call on, the eventfd is no longer kept level: it is
 * readable only after an arm. */
static int ripc_ready(struct tp_endpoint *ep, bool arm)
{
	const void *msg;
	size_t n;

	ep->level = false;
	if (ep->re.peeked || ipcring_peek(ep->re.rx, &msg, &n, 0) != -EAGAIN)
		return 1;	/* a request, the end, or an error for recv to report */
	return arm ? ipcring_prepare_wait(ep->re.rx) != 0 : 0;
}

static void ripc_close(struct tp_endpoint *ep)
{
	if (ep->re.run_n)
		(void)ring_ep_run_end(&ep->re, 0);
	if (ep->re.peeked)
		ring_ep_release(&ep->re);	/* not ripc_release: no arming now */
	(void)ipcring_conn_close(ep->conn);
	free(ep);
}

const struct transport tp_ring_ipc = {
	.name = "ring-ipc",
	.summary = "libipcring client/server: connect by name (SO_PEERCRED checked), a request and a "
		   "reply ring per client, eventfd sleep; -O capacity, spin-ns, batch",
	.caps = TP_DGRAM | TP_MULTI_CLIENT | TP_POLLABLE | TP_NAMED | TP_ZEROCOPY |
		TP_ZEROCOPY_SEND,
	.group = TP_GROUP_RING,
	.options = ripc_options,
	.opts_size = sizeof(struct ripc_opts),
	.max_msg = ripc_max_msg,
	.max_msg_limit = "-O capacity (a message is at most a quarter of the ring)",
	.create = ripc_create,
	.open = ripc_open,
	.send = ripc_send,
	.recv = ripc_recv,
	.peek = ripc_peek,
	.release = ripc_release,
	.reserve = ripc_reserve,
	.commit = ripc_commit,
	.reserve_n = ripc_reserve_n,
	.commit_n = ripc_commit_n,
	.peek_n = ripc_peek_n,
	.release_n = ripc_release_n,
	.runs = ripc_runs,
	.pollfd = ripc_pollfd,
	.ready = ripc_ready,
	.close = ripc_close,
	.destroy = ripc_destroy,
};
