// SPDX-License-Identifier: MIT
/* dbus: D-Bus messages through sd-bus (libsystemd), peer to peer: per
 * client id an AF_UNIX stream socketpair, each end an sd-bus connection
 * (the server's end with sd_bus_set_server), the D-Bus handshake (SASL
 * EXTERNAL) done in open, before anything is measured. No bus daemon:
 * what is measured is sd-bus's marshalling and dispatch over the socket.
 *
 * A message is one D-Bus message carrying the payload as a byte array
 * ("ay"): the client sends method calls (org.ipclab.Msg.Send); the server
 * answers the last call it received with its reply (a method return), and
 * sends a signal (org.ipclab.Msg.Data) when no call waits for one. So a
 * ping-pong is a method call and its reply, a stream is method calls the
 * server never answers (c2s) or signals (s2c).
 *
 * Waits: sd_bus_wait for at most DB_SLICE_USEC at a time, the stop request
 * looked at between. sd-bus owns a dup of the channel's socket; the peer's
 * close (or death) is sd-bus's Disconnected message, read as EOF. A send
 * the socket cannot take at once is queued by sd-bus and flushed before
 * send returns (sd_bus_flush, which a stop signal interrupts). */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absent.h"
#include "tp_common.h"

#ifdef HAVE_SDBUS
#include <systemd/sd-bus.h>
#include <systemd/sd-id128.h>
#endif

#define DB_INSTALL "install libsystemd-dev (make deps)"

struct db_opts {
	int via;	/* 0 p2p */
};

static const struct opt_desc db_options[] = {
	{ .name = "via", .type = OPT_CHOICE, .offset = offsetof(struct db_opts, via),
	  .def = "p2p", .choices = "p2p",
	  .help = "p2p: a direct sd-bus connection over a socketpair per client (no bus daemon)" },
	{ .name = NULL },
};

#ifdef HAVE_SDBUS

#define DB_SLICE_USEC 100000ull		/* a wait's longest slice */
#define DB_START_SLICES 100		/* open: slices for the handshake */
#define DB_PATH "/org/ipclab/Msg"
#define DB_IFACE "org.ipclab.Msg"

/* Channel entries per client id: the server's end, then the client's. */
enum { S_SERVER, S_CLIENT, S_PER_CLIENT };

/* ep->extra */
struct db_ep {
	sd_bus *bus;
	sd_bus_message *pending;	/* server: the last call not yet answered */
	enum tp_role role;
	int fd;				/* the channel's socket (shut down on close) */
	const _Atomic int *stop;	/* the cell's stop word (tp_config) */
};

static inline bool db_stopping(const struct db_ep *d)
{
	return stop_requested(d->stop);
}

static int db_create(struct tp_channel *ch, char *err, size_t errlen)
{
	unsigned n = tp_clients(ch);
	struct tp_chan *c = tp_chan_new(ch, n * S_PER_CLIENT, 0, 0, err, errlen);
	int sv[2];

	if (!c)
		return -ENOMEM;
	for (unsigned id = 0; id < n; id++) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
			return errf(err, errlen, errno, "dbus: socketpair: %s%s", strerror(errno),
				    errno == EMFILE ? " (raise the open-file limit: ulimit -n)" : "");
		tp_chan_set(c, id * S_PER_CLIENT + S_SERVER, sv[0], TPF_SERVER, id);
		tp_chan_set(c, id * S_PER_CLIENT + S_CLIENT, sv[1], TPF_CLIENT, id);
	}
	tp_setting(ch, "via", "p2p (socketpair, no daemon)");
	tp_setting(ch, "library", "sd-bus (libsystemd)");
	tp_setting(ch, "auth", "EXTERNAL");
	tp_setting(ch, "c2s", "method call " DB_IFACE ".Send (ay)");
	tp_setting(ch, "s2c", "its method return, else signal " DB_IFACE ".Data (ay)");
	tp_sock_report(ch, c->fd[0].fd);
	return 0;
}

static void db_ep_free(struct db_ep *d)
{
	if (!d)
		return;
	sd_bus_message_unref(d->pending);
	if (d->bus) {
		sd_bus_close(d->bus);
		sd_bus_unref(d->bus);
	}
	free(d);
}

/* The handshake, a bounded time: until the connection is ready. No
 * message is read here (a peer's first message waits for recv). */
static int db_start(struct db_ep *d, const char *who, unsigned id, char *err, size_t errlen)
{
	int r = sd_bus_start(d->bus);

	if (r < 0)
		return errf(err, errlen, -r, "dbus: %s %u: sd_bus_start: %s", who, id, strerror(-r));
	for (unsigned i = 0; i < DB_START_SLICES; i++) {
		if (sd_bus_is_ready(d->bus) > 0)
			return 0;
		r = sd_bus_process(d->bus, NULL);
		if (r < 0)
			return errf(err, errlen, -r, "dbus: %s %u: the D-Bus handshake: %s", who, id,
				    strerror(-r));
		if (r > 0)
			continue;
		if (db_stopping(d))
			return errf(err, errlen, EINTR, "dbus: %s %u: stopped", who, id);
		r = sd_bus_wait(d->bus, DB_SLICE_USEC);
		if (r < 0 && r != -EINTR)
			return errf(err, errlen, -r, "dbus: %s %u: sd_bus_wait: %s", who, id,
				    strerror(-r));
	}
	return errf(err, errlen, ETIMEDOUT, "dbus: %s %u: the D-Bus handshake did not end within %llu s",
		    who, id, DB_START_SLICES * DB_SLICE_USEC / 1000000ull);
}

static int db_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		   struct tp_endpoint **out, char *err, size_t errlen)
{
	unsigned idx = id * S_PER_CLIENT + (role == TP_SERVER ? S_SERVER : S_CLIENT);
	const char *who = role == TP_SERVER ? "server" : "client";
	struct tp_endpoint *ep;
	struct db_ep *d;
	sd_id128_t bus_id;
	int ret, fd, r;

	ret = tp_check_id(ch, id, err, errlen);
	if (ret)
		return ret;
	ret = tp_ep_from_chan(ch, role, id, idx, idx, 0, &ep, err, errlen);
	if (ret)
		return ret;
	d = calloc(1, sizeof(*d));
	if (!d) {
		tp_ep_free(ep);
		return errf(err, errlen, ENOMEM, "dbus: out of memory");
	}
	d->role = role;
	d->fd = ep->rfd;
	d->stop = ep->stop;
	ep->extra = d;
	/* sd-bus closes what it is given: a dup, the channel keeps its own */
	fd = fcntl(ep->rfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0) {
		ret = errf(err, errlen, errno, "dbus: dup: %s%s", strerror(errno),
			   errno == EMFILE ? " (raise the open-file limit: ulimit -n)" : "");
		goto fail;
	}
	r = sd_bus_new(&d->bus);
	if (r >= 0)
		r = sd_bus_set_fd(d->bus, fd, fd);
	else
		close(fd);
	if (r >= 0 && role == TP_SERVER) {
		r = sd_id128_randomize(&bus_id);
		if (r >= 0)
			r = sd_bus_set_server(d->bus, 1, bus_id);
	}
	if (r < 0) {
		ret = errf(err, errlen, -r, "dbus: %s %u: setting up the connection: %s", who, id,
			   strerror(-r));
		goto fail;
	}
	ret = db_start(d, who, id, err, errlen);
	if (ret)
		goto fail;
	*out = ep;
	return 0;
fail:
	db_ep_free(d);
	ep->extra = NULL;
	tp_ep_free(ep);
	return ret;
}

/* sd-bus queued what the socket did not take: write it out before send
 * returns (interrupted by a stop signal). */
static ssize_t db_flush(struct db_ep *d)
{
	uint64_t q = 0;
	int r;

	if (sd_bus_get_n_queued_write(d->bus, &q) < 0 || q == 0)
		return 0;
	r = sd_bus_flush(d->bus);
	if (r == -EINTR || (r < 0 && db_stopping(d)))
		return -EINTR;
	return r < 0 ? r : 0;
}

static ssize_t db_send(struct tp_endpoint *ep, const void *buf, size_t len)
{
	struct db_ep *d = ep->extra;
	sd_bus_message *m = NULL;
	uint64_t cookie = 0;
	ssize_t ret;
	int r;

	if (d->role == TP_CLIENT)
		r = sd_bus_message_new_method_call(d->bus, &m, NULL, DB_PATH, DB_IFACE, "Send");
	else if (d->pending)
		r = sd_bus_message_new_method_return(d->pending, &m);
	else
		r = sd_bus_message_new_signal(d->bus, &m, DB_PATH, DB_IFACE, "Data");
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
		return r == -ECONNRESET || r == -ENOTCONN ? -EPIPE : r;
	ret = db_flush(d);
	return ret < 0 ? (ret == -ECONNRESET || ret == -ENOTCONN ? -EPIPE : ret) : (ssize_t)len;
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
	if (type == SD_BUS_MESSAGE_METHOD_CALL) {
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
		int r = sd_bus_process(d->bus, &m);

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
		/* what sd-bus still holds, then EOF for the peer even while
		 * other descriptors of the socket stay open (threads) */
		if (!db_stopping(d))
			db_flush(d);
		if (d->fd >= 0)
			shutdown(d->fd, SHUT_WR);
		db_ep_free(d);
		ep->extra = NULL;
	}
	tp_ep_free(ep);
}

static int db_probe(const struct tp_config *cfg, char *why, size_t len)
{
	(void)cfg;
	return 0;
}

#define DB_OPS                                                                 \
	.probe = db_probe, .create = db_create, .open = db_open, .send = db_send, \
	.recv = db_recv, .close = db_close, .destroy = tp_chan_destroy

#else /* !HAVE_SDBUS */

static int db_probe(const struct tp_config *cfg, char *why, size_t len)
{
	return errf(why, len, ENOTSUP, "built without sd-bus; %s", DB_INSTALL);
}

#define DB_OPS .probe = db_probe, TP_ABSENT_OPS

#endif /* HAVE_SDBUS */

const struct transport tp_dbus = {
	.name = "dbus",
	.summary = "D-Bus method calls and replies (signals for a server's stream) through sd-bus, peer to peer over a socketpair per client; -O via=p2p",
	.caps = TP_DGRAM | TP_MULTI_CLIENT,
	.options = db_options,
	.opts_size = sizeof(struct db_opts),
	DB_OPS,
};
