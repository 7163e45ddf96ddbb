/* SPDX-License-Identifier: MIT */
/* What nng.c (the endpoints) and nng_tcp.c (nng-tcp's ports and addresses,
 * on one host and between hosts) share: the channel. */
#ifndef IPCLAB_TP_NNG_TCP_H
#define IPCLAB_TP_NNG_TCP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "nng_probe.h"
#include "tp_remote.h"
#include "ipclab/transport.h"

#ifdef HAVE_NNG

#define NN_ADDR_MAX 128		/* "ipc://" and a sun_path; "tcp://[IPV6]:PORT" */

enum nn_kind { NN_IPC, NN_INPROC, NN_TCP };

/* ch->priv */
struct nn_chan {
	enum nn_kind kind;
	unsigned n;
	struct nn_hello hello;		/* id 0; each client sends its own id */
	int *cl;			/* nng-ipc: cleanup handle per id */
	char (*addr)[NN_ADDR_MAX];	/* per id (nng-tcp: made by the endpoint) */
	_Atomic uint32_t *ports;	/* nng-tcp: a shared page, one port per id */
	struct tp_remote remote;	/* nng-tcp between hosts, else mode TPR_LOCAL */
	int *resv;			/* its server: the reserved ports' sockets */
};

/* create's part for nng-tcp: the shared page of ports and, between hosts,
 * which side this is (and the server's reserved ports). */
int nn_tcp_create(struct tp_channel *ch, struct nn_chan *c, char *err, size_t errlen);
void nn_tcp_destroy(struct nn_chan *c);
/* The server of client id: listen, and on one host publish the port the
 * kernel chose. 0 or -errno with why. */
int nn_tcp_listen(struct tp_channel *ch, nng_socket s, unsigned id, char *err, size_t errlen);
/* The client of id: the server's address, waiting (a bounded time, or
 * until stop) for the port a server on this host publishes. */
int nn_tcp_addr(struct tp_channel *ch, unsigned id, char *addr, size_t len, char *err,
		size_t errlen);

#endif /* HAVE_NNG */

#endif
