// SPDX-License-Identifier: MIT
/* dbus: D-Bus messages through sd-bus (libsystemd), in two modes.
 *
 * -O via=p2p (default), peer to peer: per client id an AF_UNIX stream
 * socketpair, each end an sd-bus connection (the server's end with
 * sd_bus_set_server), the D-Bus handshake (SASL EXTERNAL) done in open,
 * before anything is measured. No bus daemon: what is measured is sd-bus's
 * marshalling and dispatch over the socket.
 *
 * -O via=bus, through a private dbus-daemon that create starts for the
 * cell (dbus_daemon.c) and destroy stops. Every endpoint is a bus client
 * (sd_bus_set_address + sd_bus_set_bus_client: the handshake and Hello in
 * open) that owns a well-known name, org.ipclab.Msg.S<id> for the server's
 * endpoint of client id, org.ipclab.Msg.C<id> for the client, and waits in
 * open until its peer's name has an owner (NameOwnerChanged, matched
 * before GetNameOwner is asked, so no change is missed). Messages go to
 * the peer's name; only those whose sender is the peer's unique name are
 * taken. The peer's close or death is its name losing its owner: EOF.
 *
 * A message is one D-Bus message carrying the payload as a byte array
 * ("ay"): the client sends method calls (org.ipclab.Msg.Send); the server
 * answers the last call it received with its reply (a method return), and
 * sends a signal (org.ipclab.Msg.Data) when no call waits for one. So a
 * ping-pong is a method call and its reply, a stream is method calls the
 * server never answers (c2s) or signals (s2c). Through the bus a client
 * asks for a reply only while no call of its own waits for one: the
 * daemon keeps a record per call awaiting a reply and scans them all for
 * each call, so a c2s stream of calls all awaiting replies would cost it
 * more with every call (and reach max_replies_per_connection). The server
 * answers the last call that asked for a reply.
 *
 * Waits: sd_bus_wait for at most DB_SLICE_USEC at a time, the stop request
 * looked at between. sd-bus owns a dup of the channel's socket; the peer's
 * close (or death) is sd-bus's Disconnected message, read as EOF. A send
 * the socket cannot take at once is queued by sd-bus and flushed before
 * send returns (db_flush: sd_bus_process and sd_bus_wait in slices, as
 * sd_bus_flush would wait again after a signal). Opening an endpoint's
 * connection, both modes: dbus_open.c. */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "ipclab/cleanup.h"
#include "absent.h"
#include "dbus_daemon.h"
#include "dbus_ep.h"
#include "tp_common.h"

#ifdef HAVE_SDBUS
#include <systemd/sd-bus.h>
#include <systemd/sd-id128.h>
#endif

#define DB_INSTALL "install libsystemd-dev (make deps)"

/* what a message's header and the array's length take beyond the payload */
#define DB_HEADROOM 1024
#define DB_ARRAY_MAX (64u << 20)	/* D-Bus: an array's bytes, at most */

static const struct opt_desc db_options[] = {
	{ .name = "via", .type = OPT_CHOICE, .offset = offsetof(struct db_opts, via),
	  .def = "p2p", .choices = "p2p|bus",
	  .help = "p2p: a direct sd-bus connection over a socketpair per client (no bus daemon); "
		  "bus: through a private dbus-daemon started for the cell" },
	{ .name = "max_message", .type = OPT_SIZE, .offset = offsetof(struct db_opts, max_message),
	  .def = "4M", .min = 4096, .max = 128u << 20,
	  .help = "via=bus: the daemon's max_message_size (dbus-daemon's own default is 32M, "
		  "the D-Bus protocol's limit 128M); a payload takes up to this less 1 KiB, at most 64M" },
	{ .name = NULL },
};

static size_t db_max_msg(const void *opts)
{
	const struct db_opts *o = opts;
	uint64_t m;

	if (o->via != DB_BUS)
		return 0;
	m = o->max_message > DB_HEADROOM ? o->max_message - DB_HEADROOM : 0;
	return m > DB_ARRAY_MAX ? DB_ARRAY_MAX : (size_t)m;
}

#ifdef HAVE_SDBUS

static int db_create_p2p(struct tp_channel *ch, char *err, size_t errlen)
{
	unsigned n = tp_clients(ch);
	struct fd_table *c = fd_table_new(ch, n * S_PER_CLIENT, 0, 0, err, errlen);
	int sv[2];

	if (!c)
		return -ENOMEM;
	for (unsigned id = 0; id < n; id++) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
			return errf(err, errlen, errno, "dbus: socketpair: %s%s", strerror(errno),
				    errno == EMFILE ? " (raise the open-file limit: ulimit -n)" : "");
		fd_table_set(c, id * S_PER_CLIENT + S_SERVER, sv[0], FD_SERVER, id);
		fd_table_set(c, id * S_PER_CLIENT + S_CLIENT, sv[1], FD_CLIENT, id);
	}
	tp_setting(ch, "via", "p2p (socketpair, no daemon)");
	tp_setting(ch, "library", "sd-bus (libsystemd)");
	tp_setting(ch, "auth", "EXTERNAL");
	tp_setting(ch, "c2s", "method call " DB_IFACE ".Send (ay)");
	tp_setting(ch, "s2c", "its method return, else signal " DB_IFACE ".Data (ay)");
	tp_sock_report(ch, c->fd[0].fd);
	return 0;
}

/* The cell's private dbus-daemon: ch->priv's extra is its struct dbd. */
static int db_create_bus(struct tp_channel *ch, char *err, size_t errlen)
{
	const struct db_opts *o = db_opts(ch);
	struct fd_table *c = fd_table_new(ch, 0, 0, sizeof(struct dbd), err, errlen);
	struct dbd *b;
	const char *dir = ch->cfg->dir ? ch->cfg->dir : cleanup_private_dir();
	char addr[64];
	int ret;

	if (!c)
		return -ENOMEM;
	b = c->extra;
	dbd_init(b);
	if (!dir)
		return errf(err, errlen, errno, "dbus: private directory: %s", strerror(errno));
	ret = dbd_start(b, dir, o->max_message, ch->cfg->stop, err, errlen);
	if (ret)
		return ret;
	/* the address without its guid; a long one shortened to its socket's name */
	if (strlen(b->sock) + 10 < sizeof(addr))
		snprintf(addr, sizeof(addr), "unix:path=%.53s", b->sock);
	else
		snprintf(addr, sizeof(addr), "unix:path=.../%.49s", strrchr(b->sock, '/') + 1);
	tp_setting(ch, "via", "bus (a private dbus-daemon)");
	tp_setting(ch, "daemon", "dbus-daemon %s", b->version);
	tp_setting(ch, "address", "%s", addr);
	tp_setting(ch, "library", "sd-bus (libsystemd)");
	tp_setting(ch, "auth", "EXTERNAL (this uid only)");
	tp_setting(ch, "names", DB_NAME ".S<id> and .C<id>");
	tp_setting(ch, "c2s", "method call " DB_IFACE ".Send (ay)");
	tp_setting(ch, "s2c", "its method return, else signal " DB_IFACE ".Data (ay)");
	tp_setting(ch, "max_message_bytes", "%llu", (unsigned long long)o->max_message);
	tp_setting(ch, "max_incoming_bytes", "%llu", (unsigned long long)(2 * o->max_message));
	return 0;
}

static int db_create(struct tp_channel *ch, char *err, size_t errlen)
{
	return db_opts(ch)->via == DB_BUS ? db_create_bus(ch, err, errlen)
					  : db_create_p2p(ch, err, errlen);
}

static void db_destroy(struct tp_channel *ch)
{
	struct fd_table *c = ch->priv;

	if (c && db_opts(ch)->via == DB_BUS)
		dbd_stop(c->extra);
	fd_table_destroy(ch);
}

/* Keep m for recv, after those kept before it. */
static int db_hold(struct db_ep *d, sd_bus_message *m)
{
	if (d->first_held && d->first_held == d->n_held)
		d->first_held = d->n_held = 0;
	if (d->n_held == d->cap_held) {
		size_t cap = d->cap_held ? 2 * d->cap_held : 8;
		sd_bus_message **h = realloc(d->held, cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		d->held = h;
		d->cap_held = cap;
	}
	d->held[d->n_held++] = m;
	return 0;
}

/* sd-bus queued what the socket did not take: write it out before send
 * returns. Not sd_bus_flush: it waits again when a signal interrupts
 * it, and a stop request would never end the wait. sd_bus_process writes
 * the queue, then may hand out a message that came in: kept for recv. */
static ssize_t db_flush(struct db_ep *d)
{
	for (;;) {
		sd_bus_message *m = NULL;
		uint64_t q = 0;
		int r;

		if (sd_bus_get_n_queued_write(d->bus, &q) < 0 || q == 0)
			return 0;
		if (db_stopping(d))
			return -EINTR;
		r = sd_bus_process(d->bus, &m);
		if (m && db_hold(d, m)) {
			sd_bus_message_unref(m);
			return -ENOMEM;
		}
		if (r < 0)
			return r;
		if (r > 0)
			continue;
		r = sd_bus_wait(d->bus, DB_SLICE_USEC);
		if (r < 0 && r != -EINTR)
			return r;
	}
}

static inline ssize_t db_err(ssize_t r)
{
	return r == -ECONNRESET || r == -ENOTCONN ? -EPIPE : r;
}

/* The message that carries the next payload. */
static int db_new_message(struct db_ep *d, sd_bus_message **m, bool *asks)
{
	const char *to = d->via_bus ? d->peer : NULL;
	int r;

	*asks = false;
	if (d->role == TP_CLIENT) {
		r = sd_bus_message_new_method_call(d->bus, m, to, DB_PATH, DB_IFACE, "Send");
		/* through the bus: one call awaiting a reply at a time */
		*asks = !d->via_bus || !d->awaiting;
		if (r >= 0 && !*asks)
			r = sd_bus_message_set_expect_reply(*m, 0);
		return r;
	}
	if (d->pending)
		return sd_bus_message_new_method_return(d->pending, m);
	r = sd_bus_message_new_signal(d->bus, m, DB_PATH, DB_IFACE, "Data");
	if (r >= 0 && to)
		r = sd_bus_message_set_destination(*m, to);
	return r;
}

static ssize_t db_send(struct tp_endpoint *ep, const void *buf, size_t len)
{
	struct db_ep *d = ep->extra;
	sd_bus_message *m = NULL;
	uint64_t cookie = 0;
	bool asks;
	ssize_t ret;
	int r;

	if (d->peer_gone)
		return -EPIPE;
	r = db_new_message(d, &m, &asks);
	if (r >= 0)
		r = sd_bus_message_append_array(m, 'y', buf, len);
	/* a cookie asked for: sd-bus marks a call sent without one "no reply
	 * expected", and then drops the server's reply */
	if (r >= 0)
		r = sd_bus_send(d->bus, m, &cookie);
	sd_bus_message_unref(m);
	if (d->pending && r >= 0)
		d->pending = sd_bus_message_unref(d->pending);
	if (r < 0)
		return db_err(r);
	if (asks && d->via_bus)
		d->awaiting = cookie;
	ret = db_flush(d);
	return ret < 0 ? db_err(ret) : (ssize_t)len;
}

/* Through the bus: a reply or error for our call awaiting one settles it;
 * true when m is a NoReply error for it (the daemon gave up: dropped). */
static bool db_settle(struct db_ep *d, sd_bus_message *m, uint8_t type)
{
	uint64_t c = 0;

	if (type != SD_BUS_MESSAGE_METHOD_RETURN && type != SD_BUS_MESSAGE_METHOD_ERROR)
		return false;
	if (sd_bus_message_get_reply_cookie(m, &c) < 0 || c != d->awaiting)
		return false;
	d->awaiting = 0;
	return type == SD_BUS_MESSAGE_METHOD_ERROR &&
	       sd_bus_message_is_method_error(m, "org.freedesktop.DBus.Error.NoReply");
}

/* One of ours: its payload. Returns its length, -1 when it is not ours
 * (dropped), or -errno. */
static ssize_t db_take(struct db_ep *d, sd_bus_message *m, void *buf, size_t len)
{
	const void *p = NULL;
	size_t n = 0;
	uint8_t type = 0;
	int r;

	if (sd_bus_message_get_type(m, &type) < 0)
		return -1;
	if (d->via_bus) {
		const char *from = sd_bus_message_get_sender(m);

		if (!from || strcmp(from, d->peer_unique))
			return -1;	/* the daemon's, or a stranger's */
		if (db_settle(d, m, type))
			return -1;
	}
	if (type == SD_BUS_MESSAGE_METHOD_CALL &&
	    !(d->role == TP_SERVER && sd_bus_message_is_method_call(m, DB_IFACE, "Send")))
		return -1;
	if (type == SD_BUS_MESSAGE_SIGNAL &&
	    !(d->role == TP_CLIENT && sd_bus_message_is_signal(m, DB_IFACE, "Data")))
		return -1;
	if (type == SD_BUS_MESSAGE_METHOD_ERROR)
		return -EPROTO;
	r = sd_bus_message_read_array(m, 'y', &p, &n);
	if (r < 0)
		return -EPROTO;
	if (n > len)
		return -EMSGSIZE;
	if (n)
		memcpy(buf, p, n);
	if (type == SD_BUS_MESSAGE_METHOD_CALL && sd_bus_message_get_expect_reply(m) > 0) {
		sd_bus_message_unref(d->pending);
		d->pending = sd_bus_message_ref(m);
	}
	return (ssize_t)n;
}

static ssize_t db_recv(struct tp_endpoint *ep, void *buf, size_t len)
{
	struct db_ep *d = ep->extra;

	for (;;) {
		sd_bus_message *m = NULL;
		int r = 1;

		if (d->first_held < d->n_held)
			m = d->held[d->first_held++];	/* what a send read first */
		else
			r = sd_bus_process(d->bus, &m);
		if (r == -ECONNRESET || r == -ENOTCONN || r == -EPIPE)
			return 0;	/* the peer closed, or died */
		if (r < 0)
			return r;
		if (m) {
			ssize_t n;

			if (sd_bus_message_is_signal(m, "org.freedesktop.DBus.Local", "Disconnected")) {
				sd_bus_message_unref(m);
				return 0;
			}
			n = db_take(d, m, buf, len);
			sd_bus_message_unref(m);
			if (n >= 0 || n < -1)
				return n;
			continue;
		}
		/* everything the peer sent came before its name's owner changed */
		if (d->peer_gone)
			return 0;
		if (r > 0)
			continue;
		if (db_stopping(d))
			return -EINTR;
		r = sd_bus_wait(d->bus, DB_SLICE_USEC);
		if (r < 0 && r != -EINTR)
			return r == -ECONNRESET || r == -ENOTCONN ? 0 : r;
	}
}

static void db_close(struct tp_endpoint *ep)
{
	struct db_ep *d;

	if (!ep)
		return;
	d = ep->extra;
	if (d) {
		/* what sd-bus still holds, then EOF for the peer: p2p, even
		 * while other descriptors of the socket stay open (threads);
		 * through the bus, closing the connection drops its name */
		if (!db_stopping(d))
			db_flush(d);
		if (!d->via_bus && d->fd >= 0)
			shutdown(d->fd, SHUT_WR);
		db_ep_free(d);
		ep->extra = NULL;
	}
	tp_ep_free(ep);
}

static int db_probe(const struct tp_config *cfg, char *why, size_t len)
{
	const struct db_opts *o = cfg->opts;
	char exe[PATH_MAX];

	if (o && o->via == DB_BUS && dbd_find(exe, sizeof(exe)))
		return errf(why, len, ENOENT, "-O via=bus: dbus-daemon not found on PATH; %s",
			    DBD_INSTALL);
	return 0;
}

#define DB_OPS                                                                 \
	.probe = db_probe, .create = db_create, .open = db_open, .send = db_send, \
	.recv = db_recv, .close = db_close, .destroy = db_destroy

#else /* !HAVE_SDBUS */

static int db_probe(const struct tp_config *cfg, char *why, size_t len)
{
	return errf(why, len, ENOTSUP, "built without sd-bus; %s", DB_INSTALL);
}

#define DB_OPS .probe = db_probe, TP_ABSENT_OPS

#endif /* HAVE_SDBUS */

const struct transport tp_dbus = {
	.name = "dbus",
	.summary = "D-Bus method calls and replies (signals for a server's stream) through sd-bus, peer to peer over a socketpair per client (-O via=p2p) or through a private dbus-daemon (-O via=bus)",
	.caps = TP_DGRAM | TP_MULTI_CLIENT,
	.group = TP_GROUP_LIBRARY,
	.options = db_options,
	.opts_size = sizeof(struct db_opts),
	.max_msg = db_max_msg,
	.max_msg_limit = "-O max_message (via=bus: the daemon's max_message_size, at most 128M)",
	DB_OPS,
};
