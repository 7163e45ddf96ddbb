// SPDX-License-Identifier: MIT
/* nng-tcp (nng.c): its ports and addresses. On one host the server listens
 * on tcp://127.0.0.1 on a port the kernel chooses, published to the client
 * through a shared page made in create (the parent never calls nng).
 * Between hosts (ipclab serve / run --peer set -O listen, connect and
 * secret, tp_remote.h) the server listens on the address the control
 * connection came in on, on a block of consecutive ports (one per client
 * id) reserved in create, the first handed out as "listen_port"; client id
 * i dials that port + i. nng does not authenticate: a pair0 socket keeps
 * its first peer and refuses the others, so the hello (nng.c) decides
 * whether that peer is the cell's client. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nng_tcp.h"
#include "ipclab/netaddr.h"
#include "ipclab/util.h"

#ifdef HAVE_NNG

#include <nng/transport/tcp/tcp.h>

#define NN_PORT_NAPS 10000	/* the client waits this many 1 ms naps for the port */

/* tcp://HOST:PORT of the server's host: 127.0.0.1 on one host, an IPv6
 * address in brackets. */
static void nn_tcp_url(const struct nn_chan *c, unsigned port, char *buf, size_t len)
{
	struct sockaddr_storage sa = c->remote.addr;
	char hp[NET_ADDR_TEXT];

	if (c->remote.mode == TPR_LOCAL) {
		snprintf(buf, len, "tcp://127.0.0.1:%u", port);
		return;
	}
	net_set_port(&sa, (uint16_t)port);
	net_format(&sa, true, hp, sizeof(hp));
	snprintf(buf, len, "tcp://%s", hp);
}

static int nn_tcp_reserve(struct tp_channel *ch, struct nn_chan *c, char *err, size_t errlen)
{
	return tp_remote_reserve_block(ch, &c->remote, c->n, &c->resv, c->ports, err, errlen);
}

int nn_tcp_create(struct tp_channel *ch, struct nn_chan *c, char *err, size_t errlen)
{
	const struct nn_opts *o = ch->cfg->opts;
	unsigned base;
	int ret;

	c->ports = mmap(NULL, c->n * sizeof(*c->ports), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (c->ports == MAP_FAILED) {
		c->ports = NULL;
		return errf(err, errlen, errno, "%s: mmap: %s", ch->tp->name, strerror(errno));
	}
	ret = o ? tp_remote_parse(ch->tp->name, o->listen, o->connect, o->secret, &c->remote, err,
				  errlen) : 0;
	if (ret || c->remote.mode == TPR_LOCAL)
		return ret;
	if (c->remote.mode == TPR_SERVER)
		return nn_tcp_reserve(ch, c, err, errlen);
	base = net_port(&c->remote.addr);
	if (base + c->n - 1 > 65535)
		return errf(err, errlen, EINVAL, "%s: -O connect: port %u + %u clients is past 65535",
			    ch->tp->name, base, c->n);
	for (unsigned id = 0; id < c->n; id++)
		atomic_store_explicit(&c->ports[id], base + id, memory_order_relaxed);
	return 0;
}

void nn_tcp_destroy(struct nn_chan *c)
{
	tp_remote_unreserve(c->resv, c->n);
	free(c->resv);
	c->resv = NULL;
	if (c->ports)
		munmap(c->ports, c->n * sizeof(*c->ports));
	c->ports = NULL;
}

int nn_tcp_listen(struct tp_channel *ch, nng_socket s, unsigned id, char *err, size_t errlen)
{
	struct nn_chan *c = ch->priv;
	char url[NN_ADDR_MAX];
	nng_listener l;
	int port = 0, rv;

	/* between hosts: the port reserved for id (the reservation lets our
	 * listener share it); on one host any */
	nn_tcp_url(c, c->remote.mode == TPR_LOCAL ? 0 :
		   atomic_load_explicit(&c->ports[id], memory_order_relaxed), url, sizeof(url));
	rv = nng_listener_create(&l, s, url);
	if (!rv)
		rv = nng_listener_start(l, 0);
	if (rv)
		return nn_err(err, errlen, ch->tp->name, url, rv);
	if (c->remote.mode != TPR_LOCAL)
		return 0;
	rv = nng_listener_get_int(l, NNG_OPT_TCP_BOUND_PORT, &port);
	if (rv)
		return nn_err(err, errlen, ch->tp->name, "reading the bound port", rv);
	if (port <= 0 || port > 65535)
		return errf(err, errlen, EPROTO, "%s: %s bound to port %d", ch->tp->name, url, port);
	atomic_store_explicit(&c->ports[id], (uint32_t)port, memory_order_release);
	return 0;
}

int nn_tcp_addr(struct tp_channel *ch, unsigned id, char *addr, size_t len, char *err,
		size_t errlen)
{
	struct nn_chan *c = ch->priv;
	uint32_t port = 0;

	for (unsigned i = 0; !port; i++) {
		port = atomic_load_explicit(&c->ports[id], memory_order_acquire);
		if (port)
			break;
		if (stop_requested(ch->cfg->stop))
			return errf(err, errlen, EINTR, "%s: client %u: stopped", ch->tp->name, id);
		if (i >= NN_PORT_NAPS)
			return errf(err, errlen, ETIMEDOUT,
				    "%s: client %u: the server did not listen within %d s",
				    ch->tp->name, id, NN_PORT_NAPS / 1000);
		usleep(1000);
	}
	nn_tcp_url(c, port, addr, len);
	return 0;
}

#endif /* HAVE_NNG */
