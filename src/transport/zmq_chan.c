// SPDX-License-Identifier: MIT
/* zmq-ipc, zmq-tcp, zmq-inproc (zmq.c): the channel. create picks the
 * addresses (ipc:// paths registered for cleanup, inproc:// names, the
 * shared page of zmq-tcp's ports, between hosts the block of consecutive
 * ports reserved for the server) and reads the settings back from a socket
 * set up as the endpoints' are; destroy undoes it. Also the helpers both
 * halves use: errors, the free-descriptor check, socket options. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/un.h>
#include <unistd.h>

#include "tp_remote.h"
#include "ipclab/cleanup.h"
#include "ipclab/netaddr.h"
#include "ipclab/transport.h"
#include "ipclab/util.h"
#include "zmq_chan.h"

#ifdef HAVE_ZMQ
#include <zmq.h>

/* A signal (a stop request) interrupts zmq_ctx_term: it must be called
 * again, or the context's threads are left running. */
void zq_ctx_term(void *ctx)
{
	while (zmq_ctx_term(ctx) < 0 && zmq_errno() == EINTR)
		;
}

int zq_err(char *err, size_t errlen, const char *tp, const char *what)
{
	int e = zmq_errno();

	if (e == EMFILE || e == ENFILE)
		return errf(err, errlen, e, "%s: %s: %s (each endpoint's context holds several descriptors); raise it: ulimit -n",
			    tp, what, zmq_strerror(e));
	return errf(err, errlen, e, "%s: %s: %s", tp, what, zmq_strerror(e));
}

/* libzmq aborts (an assertion) when it cannot get a descriptor for a
 * context's threads: make sure this many are free before each context or
 * socket, so that the limit is an error naming the fix instead. */
#define ZQ_FDS_NEEDED 16

int zq_fd_room(const char *tp, char *err, size_t errlen)
{
	int e = tp_fds_free(ZQ_FDS_NEEDED);

	if (!e)
		return 0;
	if (e == EMFILE || e == ENFILE)
		return errf(err, errlen, e,
			    "%s: fewer than %d descriptors free (a ZeroMQ context needs several, and libzmq aborts without them); raise it: ulimit -n",
			    tp, ZQ_FDS_NEEDED);
	return errf(err, errlen, e, "%s: checking free descriptors: %s", tp, strerror(e));
}

/* The options every socket of the cell gets. */
int zq_setup(void *s, const struct tp_channel *ch, char *err, size_t errlen)
{
	const struct zq_opts *o = ch->cfg->opts;
	const struct zq_chan *c = ch->priv;
	int hwm = o ? (int)o->hwm : 1000, slice = ZQ_SLICE_MS, linger = ZQ_LINGER_MS, v6 = 1;

	/* libzmq takes an IPv6 address only on a socket told so */
	if (c && c->kind == ZQ_TCP && c->remote.mode != TPR_LOCAL &&
	    c->remote.addr.ss_family == AF_INET6 && zmq_setsockopt(s, ZMQ_IPV6, &v6, sizeof(v6)))
		return zq_err(err, errlen, ch->tp->name, "ZMQ_IPV6");
	if (zmq_setsockopt(s, ZMQ_SNDHWM, &hwm, sizeof(hwm)) ||
	    zmq_setsockopt(s, ZMQ_RCVHWM, &hwm, sizeof(hwm)) ||
	    zmq_setsockopt(s, ZMQ_SNDTIMEO, &slice, sizeof(slice)) ||
	    zmq_setsockopt(s, ZMQ_RCVTIMEO, &slice, sizeof(slice)) ||
	    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof(linger)))
		return zq_err(err, errlen, ch->tp->name, "zmq_setsockopt");
	return 0;
}

static int zq_get_int(void *s, int opt)
{
	int v = -1;
	size_t l = sizeof(v);

	return zmq_getsockopt(s, opt, &v, &l) == 0 ? v : -1;
}

/* Read back what a socket set up as the endpoints' really has. */
static int zq_report(struct tp_channel *ch, char *err, size_t errlen)
{
	struct zq_chan *c = ch->priv;
	void *ctx, *s;
	int maj, min, pat, ret = zq_fd_room(ch->tp->name, err, errlen);

	if (ret)
		return ret;
	ctx = c->ctx ? c->ctx : zmq_ctx_new();
	if (!ctx)
		return zq_err(err, errlen, ch->tp->name, "zmq_ctx_new");
	s = zmq_socket(ctx, ZMQ_PAIR);
	if (!s)
		ret = zq_err(err, errlen, ch->tp->name, "zmq_socket");
	if (!ret)
		ret = zq_setup(s, ch, err, errlen);
	if (!ret) {
		zmq_version(&maj, &min, &pat);
		tp_setting(ch, "zmq_version", "%d.%d.%d", maj, min, pat);
		tp_setting(ch, "zmq_socket", "PAIR per client");
		tp_setting(ch, "sndhwm_msgs", "%d", zq_get_int(s, ZMQ_SNDHWM));
		tp_setting(ch, "rcvhwm_msgs", "%d", zq_get_int(s, ZMQ_RCVHWM));
		tp_setting(ch, "io_threads", "%d", zmq_ctx_get(ctx, ZMQ_IO_THREADS));
		tp_setting(ch, "linger_ms", "%d", zq_get_int(s, ZMQ_LINGER));
		/* ZMQ_IN/OUT_BATCH_SIZE are draft options: not readable in
		 * Debian's libzmq, whose engine batches 8192 bytes a syscall */
		tp_setting(ch, "batch_bytes", "8192 (built in)");
		if (c->kind != ZQ_INPROC) {
			tp_setting(ch, "sndbuf_bytes", "%d",
				   zq_get_int(s, ZMQ_SNDBUF));
			tp_setting(ch, "rcvbuf_bytes", "%d",
				   zq_get_int(s, ZMQ_RCVBUF));
		}
		if (c->kind == ZQ_TCP)
			tp_setting(ch, "auth", c->remote.mode == TPR_LOCAL ?
				   "none (hello with a per-run secret)" :
				   "none (hello with the cell's secret from the control connection)");
	}
	if (s)
		zmq_close(s);
	if (!c->ctx)
		zq_ctx_term(ctx);
	return ret;
}

static int zq_addr_ipc(struct tp_channel *ch, struct zq_chan *c, unsigned id, char *err,
		       size_t errlen)
{
	char path[PATH_MAX];
	int ret = tp_ipc_socket_path(ch, "zmq", id, path, err, errlen);

	if (ret)
		return ret;
	/* registered before the server's bind makes it */
	c->cl[id] = cleanup_add(CL_PATH, path);
	if (c->cl[id] < 0)
		return errf(err, errlen, ENOMEM, "%s: cleanup table full", ch->tp->name);
	snprintf(c->addr[id], ZQ_ADDR_MAX, "ipc://%.*s", (int)sizeof(((struct sockaddr_un *)0)->sun_path) - 1, path);
	return 0;
}

/* ---- zmq-tcp between hosts -------------------------------------------------- */

/* The server's ports: a block of consecutive ones, one per client id, so
 * that the control connection hands out one number. */
static int zq_reserve(struct tp_channel *ch, struct zq_chan *c, char *err, size_t errlen)
{
	return tp_remote_reserve_block(ch, &c->remote, c->n, &c->resv, c->ports, err, errlen);
}

/* -O listen/connect/secret: which side of a remote cell this is. */
static int zq_remote_create(struct tp_channel *ch, struct zq_chan *c, char *err, size_t errlen)
{
	const struct zq_opts *o = ch->cfg->opts;
	int ret;

	if (!o)
		return 0;
	ret = tp_remote_parse(ch->tp->name, o->listen, o->connect, o->secret, &c->remote, err,
			      errlen);
	if (ret || c->remote.mode == TPR_LOCAL)
		return ret;
	if (c->remote.mode == TPR_SERVER)
		return zq_reserve(ch, c, err, errlen);
	if (net_port(&c->remote.addr) + c->n - 1 > 65535)
		return errf(err, errlen, EINVAL, "%s: -O connect: port %u + %u clients is past 65535",
			    ch->tp->name, net_port(&c->remote.addr), c->n);
	for (unsigned id = 0; id < c->n; id++)
		atomic_store_explicit(&c->ports[id], net_port(&c->remote.addr) + id,
				      memory_order_relaxed);
	return 0;
}

/* The address of the server's host in tcp:// form: 127.0.0.1 on one host,
 * an IPv6 one in brackets. */
void zq_host(const struct zq_chan *c, char *buf, size_t len)
{
	char host[NET_ADDR_TEXT];

	if (c->remote.mode == TPR_LOCAL) {
		snprintf(buf, len, "127.0.0.1");
		return;
	}
	net_format(&c->remote.addr, false, host, sizeof(host));
	snprintf(buf, len, c->remote.addr.ss_family == AF_INET6 ? "[%s]" : "%s", host);
}

int zq_create(struct tp_channel *ch, enum zq_kind kind, char *err, size_t errlen)
{
	unsigned n = ch->cfg->clients ? ch->cfg->clients : 1;
	struct zq_chan *c = calloc(1, sizeof(*c));
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
	ret = zq_fd_room(ch->tp->name, err, errlen);
	if (ret)
		return ret;
	if (c->kind == ZQ_INPROC && !(c->ctx = zmq_ctx_new()))
		return zq_err(err, errlen, ch->tp->name, "zmq_ctx_new");
	if (c->kind == ZQ_TCP) {
		c->ports = mmap(NULL, n * sizeof(*c->ports), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (c->ports == MAP_FAILED) {
			c->ports = NULL;
			return errf(err, errlen, errno, "%s: mmap: %s", ch->tp->name,
				    strerror(errno));
		}
		ret = zq_remote_create(ch, c, err, errlen);
		if (ret)
			return ret;
	}
	for (unsigned id = 0; !ret && id < n; id++) {
		if (c->kind == ZQ_IPC)
			ret = zq_addr_ipc(ch, c, id, err, errlen);
		else if (c->kind == ZQ_INPROC)
			snprintf(c->addr[id], ZQ_ADDR_MAX, "inproc://ipclab-%u", id);
	}
	if (!ret)
		ret = zq_report(ch, err, errlen);
	if (!ret && c->kind == ZQ_IPC)
		tp_setting(ch, "ipc_dir", "%s", ch->cfg->dir);
	return ret;
}

void zq_destroy(struct tp_channel *ch)
{
	struct zq_chan *c = ch->priv;

	if (!c)
		return;
	for (unsigned i = c->n; c->cl && i-- > 0;)
		if (c->cl[i] >= 0)
			cleanup_run_one(c->cl[i]);
	tp_remote_unreserve(c->resv, c->n);
	free(c->resv);
	if (c->ports)
		munmap(c->ports, c->n * sizeof(*c->ports));
	if (c->ctx)
		zq_ctx_term(c->ctx);
	free(c->cl);
	free(c->addr);
	free(c);
	ch->priv = NULL;
}
#endif /* HAVE_ZMQ */
