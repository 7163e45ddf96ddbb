/* SPDX-License-Identifier: MIT */
/* What zmq.c (the endpoints) and zmq_chan.c (the channel: create, destroy,
 * the settings read back, the helpers both use) share. */
#ifndef IPCLAB_TP_ZMQ_CHAN_H
#define IPCLAB_TP_ZMQ_CHAN_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "tp_remote.h"
#include "ipclab/transport.h"

enum zq_kind { ZQ_IPC, ZQ_TCP, ZQ_INPROC };

struct zq_opts {
	uint64_t hwm;
	char listen[OPT_STR_MAX], connect[OPT_STR_MAX], secret[OPT_STR_MAX];	/* zmq-tcp */
};

#ifdef HAVE_ZMQ

#define ZQ_SLICE_MS 100		/* a blocking call's longest wait between checks */
#define ZQ_LINGER_MS 2000	/* close: time for queued messages to leave */
#define ZQ_ADDR_MAX 128	/* "ipc://" and a sun_path */

struct zq_hello {
	uint8_t secret[16];
	uint32_t id;
};

/* ch->priv */
struct zq_chan {
	enum zq_kind kind;
	unsigned n;
	void *ctx;			/* zmq-inproc only: shared by its endpoints */
	struct zq_hello hello;		/* id 0; each client sends its own id */
	_Atomic uint32_t *ports;	/* zmq-tcp: a shared page, one port per id */
	int *cl;			/* zmq-ipc: cleanup handle per id */
	char (*addr)[ZQ_ADDR_MAX];	/* per id; zmq-tcp: filled by the client */
	struct tp_remote remote;	/* zmq-tcp between hosts, else mode TPR_LOCAL */
	int *resv;			/* its server: the reserved ports' sockets */
};

/* zmq_ctx_term, again after a signal; zq_err: zmq_errno in err, returned. */
void zq_ctx_term(void *ctx);
int zq_err(char *err, size_t errlen, const char *tp, const char *what);
/* 0, or the error naming ulimit -n: libzmq aborts without free descriptors. */
int zq_fd_room(const char *tp, char *err, size_t errlen);
/* The options every socket of the cell gets. */
int zq_setup(void *s, const struct tp_channel *ch, char *err, size_t errlen);
/* The address of the server's host in tcp:// form: 127.0.0.1 on one host. */
void zq_host(const struct zq_chan *c, char *buf, size_t len);
/* create for the transport of that kind (its own wrapper in zmq.c). */
int zq_create(struct tp_channel *ch, enum zq_kind kind, char *err, size_t errlen);
void zq_destroy(struct tp_channel *ch);

#endif /* HAVE_ZMQ */

#endif
