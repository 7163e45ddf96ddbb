/* SPDX-License-Identifier: MIT */
/* What the parts of libqb-ipc share: libqb_ipc.c (the hooks, the channel),
 * libqb_ipc_loop.c (the server's qb_loop and its poll handlers),
 * libqb_ipc_server.c (the qb_ipcs service and the server's endpoints) and
 * libqb_ipc_client.c (the qb_ipcc endpoints). */
#ifndef IPCLAB_TP_LIBQB_IPC_H
#define IPCLAB_TP_LIBQB_IPC_H

#ifdef HAVE_LIBQB

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <qb/qbipcc.h>
#include <qb/qbipcs.h>
#include <qb/qbloop.h>

#include "ipclab/transport.h"
#include "ipclab/util.h"

/* the cell's stop word (tp_config) */
#define QI_STOPPING(ep) stop_requested((ep)->stop)

#define QI_ID_HELLO (QB_IPC_MSG_USER_START + 1)
#define QI_ID_MSG (QB_IPC_MSG_USER_START + 2)
#define QI_ID_EOF (QB_IPC_MSG_USER_START + 3)	/* this end is done */
#define QI_MAGIC 0x69716271u		/* "qbqi" */
#define QI_VERSION 1u
#define QI_SLICE_MS 100			/* a wait's longest slice */
#define QI_START_TICKS 100		/* server: slices to wait for a client's hello */
#define QI_CLOSE_SLICES 50		/* close: slices to wait for the peer's end */
#define QI_CONNECT_TRIES 2000		/* client: tries, QI_CONNECT_PAUSE_NS apart */
#define QI_CONNECT_PAUSE_NS 5000000L
#define QI_CHECK_EVERY 256		/* full-ring retries between looks at stop / peer */
#define QI_HOLD_BYTES (4u << 20)	/* queue length, in bytes, that holds a connection */
#define QI_HOLD_MAX 64u			/* ... and in messages */

struct qi_hello {
	uint32_t magic, version, id, pad;
	uint8_t secret[16];
};

struct qi_hello_res {
	uint32_t magic, status;		/* 0, or an errno */
};

struct qi_chan {
	char service[64];
	uint8_t secret[16];
	size_t buffer;			/* bytes asked of libqb per ring */
	unsigned n;
	int handle;			/* cleanup handle of the service's rings, or -1 */
	struct qi_srv *srv;		/* the server side's state (made in its first open) */
};

/* One queued request. */
struct qi_node {
	struct qi_node *next;
	size_t len;
	unsigned char data[];
};

struct qi_slot {
	qb_ipcs_connection_t *c;
	int fd;				/* its socket, as libqb registered it, or -1 */
	bool bound, eof, held;
	bool peer_done;			/* the client's end marker came */
	bool done_sent;			/* the server's end marker went */
	int err;			/* a protocol error seen: -EPROTO */
	unsigned unanswered;		/* requests without a response yet */
	struct qi_node *head, *tail, *spare;
	unsigned queued;
	struct qi_srv *srv;
	unsigned id;
};

/* A descriptor libqb asked to have polled. */
struct qi_fd {
	int fd;				/* -1 = free */
	enum qb_loop_priority prio;
	int32_t events;			/* what libqb wants */
	void *data;
	qb_ipcs_dispatch_fn_t fn;
};

struct qi_srv {
	qb_loop_t *loop;
	qb_ipcs_service_t *svc;
	int tick_fd;			/* timerfd, every QI_SLICE_MS, or -1 */
	unsigned ticks;			/* its expiries */
	int want;			/* the slot recv/open waits for, or -1 */
	unsigned n, open_eps;
	size_t max_len;			/* the largest payload */
	unsigned hold_at;		/* queue length that holds a connection */
	const uint8_t *secret;
	struct qi_slot *slot;
	struct qi_fd *fds;
	unsigned nfds;
};

struct tp_endpoint {
	enum tp_role role;
	unsigned id;
	const _Atomic int *stop;
	struct qi_chan *qc;
	/* server */
	struct qi_slot *slot;
	/* client */
	qb_ipcc_connection_t *c;
	unsigned outstanding;		/* requests sent, responses not yet read */
	bool eof;
	size_t cap;			/* bytes of stage */
	unsigned char *stage;		/* libqb's header + the payload */
};

/* qb_ipcs's poll handlers carry no context: the state of the server this
 * thread serves, set while it calls into libqb. Thread-local, so thread
 * endpoints of one process never share it. */
extern _Thread_local struct qi_srv *qi_serving;

static inline ssize_t qi_peer_gone(ssize_t r)
{
	return r == -ENOTCONN || r == -ESHUTDOWN || r == -ECONNRESET || r == -EPIPE ? -EPIPE : r;
}

/* libqb_ipc_loop.c */
int32_t qi_dispatch_add(enum qb_loop_priority p, int32_t fd, int32_t events, void *data,
			qb_ipcs_dispatch_fn_t fn);
int32_t qi_dispatch_mod(enum qb_loop_priority p, int32_t fd, int32_t events, void *data,
			qb_ipcs_dispatch_fn_t fn);
int32_t qi_dispatch_del(int32_t fd);
int32_t qi_job_add(enum qb_loop_priority p, void *data, qb_loop_job_dispatch_fn fn);
int32_t qi_tick(int32_t fd, int32_t revents, void *data);
void qi_hold(struct qi_slot *sl, bool on);
void qi_wake(struct qi_srv *s, const struct qi_slot *sl);
int qi_run(struct qi_srv *s, int want);
void qi_turn(struct qi_srv *s);

/* libqb_ipc_server.c */
void qi_srv_stop(struct qi_chan *qc);
int qi_srv_open(struct tp_channel *ch, struct qi_chan *qc, unsigned id,
		struct tp_endpoint *ep, char *err, size_t errlen);
ssize_t qi_srv_recv(struct tp_endpoint *ep, void *buf, size_t len);
ssize_t qi_srv_send(struct tp_endpoint *ep, const void *buf, size_t len);
void qi_srv_end(struct tp_endpoint *ep, struct qi_slot *sl);

/* libqb_ipc_client.c */
int qi_cli_open(struct tp_channel *ch, struct qi_chan *qc, unsigned id,
		struct tp_endpoint *ep, char *err, size_t errlen);
ssize_t qi_cli_send(struct tp_endpoint *ep, const void *buf, size_t len);
ssize_t qi_cli_recv(struct tp_endpoint *ep, void *buf, size_t len);
void qi_cli_end(struct tp_endpoint *ep);

#endif /* HAVE_LIBQB */

#endif /* IPCLAB_TP_LIBQB_IPC_H */
