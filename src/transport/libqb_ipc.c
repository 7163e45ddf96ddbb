// SPDX-License-Identifier: MIT
/* libqb-ipc: libqb's own client/server IPC, the path a corosync client
 * takes to its daemon (seed 003, without totem): a qb_ipcs service in
 * shared-memory mode (QB_IPC_SHM) served from a qb_loop on the server
 * side, and per client id a qb_ipcc connection. A client's request is
 * qb_ipcc_sendv (a request header, then the payload); its reply is
 * qb_ipcc_recv on the response ring: the two halves of qb_ipcc_sendv_recv,
 * split because ipclab's ping-pong sends and receives in two calls. The
 * server answers the oldest unanswered request with qb_ipcs_response_sendv
 * and, when none waits for an answer (a server's stream), sends an event
 * (qb_ipcs_event_sendv) that the client takes with qb_ipcc_event_recv.
 *
 * The service: a name with a random part (cleanup_unique_name), so nobody
 * can guess or squat it; libqb listens on an abstract unix socket (nothing
 * in the filesystem). connection_accept admits only this uid. Each client
 * then sends a hello with its id and a per-channel secret (inherited from
 * the parent, never on any wire but this one), which binds the connection
 * to its id; anything else is refused and disconnected. libqb makes each
 * connection's rings in a directory /dev/shm/qb-<pids>-<fd>-XXXXXX whose
 * name it picks itself: the channel registers the service name with
 * cleanup (CL_QB_IPC) before anything exists, and cleanup removes every
 * qb-* directory of this uid that holds rings of that service - at the
 * end of the cell, at ipclab's exit, and in `ipclab clean` after a
 * SIGKILL.
 *
 * The server side: qb_ipcs calls back from qb_loop. recv for client i runs
 * qb_loop_run until a request of i is there (msg_process copies every
 * request into its connection's queue and stops the loop when it is i's),
 * or a 100 ms timerfd in the loop ends the run so that a stop is seen. The poll
 * handlers are qb_loop's (qb_loop_poll_add and friends, as corosync sets
 * them), wrapped so that a connection whose queue is long is polled no
 * more until it is drained: the queue stays short even when one client
 * floods and the server serves another. No pollfd: libqb dispatches every
 * connection from the one qb_loop, whose epoll descriptor it keeps to
 * itself, and it consumes a connection's wake-up bytes as it dispatches,
 * so no per-client descriptor stays readable while that client's requests
 * wait in the queue; the fan-in server serves the clients in turn. The
 * poll handlers get no context from libqb, so the server thread keeps a
 * thread-local pointer to its own state while it calls into libqb.
 *
 * Ends: a client's close is qb_ipcc_disconnect, the server sees the
 * connection closed and reads EOF after its queue; a dead client's socket
 * hangs up and reads the same. The server's close disconnects; a client
 * reads -ENOTCONN/-ESHUTDOWN from libqb as EOF. A full ring (libqb never
 * blocks a writer) is tried again, yielding, with the stop request and the
 * peer looked at every QI_CHECK_EVERY tries. Built only with libqb-dev.
 *
 * Here the options and the hooks (the channel's create and destroy; open,
 * send, recv and close pick the endpoint's side); libqb_ipc_server.c has
 * the server side, libqb_ipc_loop.c its qb_loop and poll handlers,
 * libqb_ipc_client.c the client side; libqb_ipc.h what they share. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "absent.h"
#include "ipclab/cleanup.h"
#include "ipclab/transport.h"
#include "ipclab/util.h"

#ifdef HAVE_LIBQB
#include <qb/qbconfig.h>
#endif

#define QI_INSTALL "install libqb-dev (make deps)"

struct qi_opts {
	uint64_t buffer;
};

static const struct opt_desc qi_options[] = {
	{ .name = "buffer", .type = OPT_SIZE, .offset = offsetof(struct qi_opts, buffer),
	  .def = "1M", .min = 4096, .max = 1u << 30,
	  .help = "qb_ipcc_connect's max_msg_size: the size of each ring (request, response, "
		  "event) and the largest message with libqb's header; corosync asks for 1 MiB" },
	{ .name = NULL },
};

#ifdef HAVE_LIBQB

static const struct qi_opts qi_defaults = { .buffer = 1u << 20 };

static const struct qi_opts *qi_opts_of(const void *opts)
{
	return opts ? opts : &qi_defaults;
}

#include "libqb_ipc.h"

/* ---- the hooks ---- */

static int qi_create(struct tp_channel *ch, char *err, size_t errlen)
{
	const struct qi_opts *o = qi_opts_of(ch->cfg->opts);
	struct qi_chan *qc = calloc(1, sizeof(*qc));

	if (!qc)
		return errf(err, errlen, ENOMEM, "libqb-ipc: out of memory");
	ch->priv = qc;
	qc->handle = -1;
	qc->n = ch->cfg->clients ? ch->cfg->clients : 1;
	qc->buffer = (size_t)o->buffer;
	if (ch->cfg->msg_size + sizeof(struct qb_ipc_response_header) > qc->buffer)
		return errf(err, errlen, EMSGSIZE, "libqb-ipc: a %zu-byte message and libqb's "
			    "%zu-byte header exceed the %zu-byte buffer; raise -O buffer",
			    ch->cfg->msg_size, sizeof(struct qb_ipc_response_header), qc->buffer);
	if (getrandom(qc->secret, sizeof(qc->secret), 0) != sizeof(qc->secret))
		return errf(err, errlen, errno, "libqb-ipc: getrandom: %s", strerror(errno));
	cleanup_unique_name(qc->service, sizeof(qc->service), "ipclab-qb");
	/* before anything exists: the rings libqb will make for this service */
	qc->handle = cleanup_add(CL_QB_IPC, qc->service);
	if (qc->handle < 0)
		return errf(err, errlen, ENOMEM, "libqb-ipc: cleanup table full");
	tp_setting(ch, "ipc", "QB_IPC_SHM (qb_ipcs on a qb_loop)");
	tp_setting(ch, "service", "%s", qc->service);
	tp_setting(ch, "socket", "abstract (@qb-%s...)", qc->service);
	tp_setting(ch, "buffer_bytes", "%zu", qc->buffer);
	tp_setting(ch, "rings_per_client", "3 (request, response, event)");
	tp_setting(ch, "request_header_bytes", "%zu", sizeof(struct qb_ipc_request_header));
	tp_setting(ch, "response_header_bytes", "%zu", sizeof(struct qb_ipc_response_header));
	tp_setting(ch, "libqb_version", "%s", QB_VER_STR);
	tp_setting(ch, "c2s", "qb_ipcc_sendv; response qb_ipcc_recv");
	tp_setting(ch, "s2c", "response to the oldest request, else event");
	return 0;
}

static void qi_destroy(struct tp_channel *ch)
{
	struct qi_chan *qc = ch->priv;

	if (!qc)
		return;
	qi_srv_stop(qc);		/* threads: a server side left behind */
	cleanup_run_one(qc->handle);	/* whatever libqb left in /dev/shm */
	free(qc);
	ch->priv = NULL;
}

static int qi_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		   struct tp_endpoint **out, char *err, size_t errlen)
{
	struct qi_chan *qc = ch->priv;
	struct tp_endpoint *ep;
	int r;

	if (id >= qc->n)
		return errf(err, errlen, EINVAL, "libqb-ipc: client id %u out of range", id);
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return errf(err, errlen, ENOMEM, "libqb-ipc: out of memory");
	ep->role = role;
	ep->id = id;
	ep->qc = qc;
	ep->stop = ch->cfg->stop;
	r = role == TP_SERVER ? qi_srv_open(ch, qc, id, ep, err, errlen)
			      : qi_cli_open(ch, qc, id, ep, err, errlen);
	if (r) {
		if (ep->c)
			qb_ipcc_disconnect(ep->c);
		free(ep->stage);
		free(ep);
		return r;
	}
	*out = ep;
	return 0;
}

static ssize_t qi_send(struct tp_endpoint *ep, const void *buf, size_t len)
{
	return ep->role == TP_SERVER ? qi_srv_send(ep, buf, len) : qi_cli_send(ep, buf, len);
}

static ssize_t qi_recv(struct tp_endpoint *ep, void *buf, size_t len)
{
	return ep->role == TP_SERVER ? qi_srv_recv(ep, buf, len) : qi_cli_recv(ep, buf, len);
}

static void qi_close(struct tp_endpoint *ep)
{
	if (!ep)
		return;
	if (ep->role == TP_CLIENT) {
		if (ep->c)
			qi_cli_end(ep);
	} else if (ep->slot) {
		struct qi_slot *sl = ep->slot;
		struct qi_srv *s = sl->srv;

		qi_srv_end(ep, sl);
		if (--s->open_eps == 0)
			qi_srv_stop(ep->qc);
	}
	free(ep->stage);
	free(ep);
}

static size_t qi_max_msg(const void *opts)
{
	return (size_t)qi_opts_of(opts)->buffer - sizeof(struct qb_ipc_response_header);
}

static int qi_probe(const struct tp_config *cfg, char *why, size_t len)
{
	(void)cfg;
	if (access("/dev/shm", W_OK | X_OK))
		return errf(why, len, ENOTSUP, "libqb's shared-memory IPC needs a writable tmpfs "
			    "on /dev/shm");
	return 0;
}

#define QI_OPS                                                                   \
	.max_msg = qi_max_msg, .max_msg_limit = "-O buffer", .probe = qi_probe,     \
	.create = qi_create, .open = qi_open, .send = qi_send, .recv = qi_recv,      \
	.close = qi_close, .destroy = qi_destroy

#else /* !HAVE_LIBQB */

static int qi_probe(const struct tp_config *cfg, char *why, size_t len)
{
	(void)cfg;
	return errf(why, len, ENOTSUP, "built without libqb-dev; %s", QI_INSTALL);
}

#define QI_OPS .probe = qi_probe, TP_ABSENT_OPS

#endif /* HAVE_LIBQB */

const struct transport tp_libqb_ipc = {
	.name = "libqb-ipc",
	.summary = "libqb's client/server IPC (qb_ipcs in shared-memory mode on a qb_loop, qb_ipcc clients): corosync's path to its daemon",
	.caps = TP_DGRAM | TP_MULTI_CLIENT | TP_NAMED,
	.group = TP_GROUP_LIBRARY,
	.options = qi_options,
	.opts_size = sizeof(struct qi_opts),
	QI_OPS,
};
