// SPDX-License-Identifier: MIT
/* dbus (dbus.c): open, an endpoint's sd-bus connection made and ready before
 * anything is measured. via=p2p: the channel's socket (a dup: sd-bus closes
 * what it is given) and the D-Bus handshake, the server's end with
 * sd_bus_set_server. via=bus: a bus client of the cell's private daemon that
 * owns its well-known name and waits (bounded) for its peer's to have an
 * owner, watching NameOwnerChanged from before it asks GetNameOwner. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dbus_daemon.h"
#include "dbus_ep.h"
#include "tp_common.h"

#ifdef HAVE_SDBUS
#include <systemd/sd-id128.h>

void db_ep_free(struct db_ep *d)
{
	if (!d)
		return;
	sd_bus_message_unref(d->pending);
	sd_bus_slot_unref(d->watch);
	for (size_t i = d->first_held; i < d->n_held; i++)
		sd_bus_message_unref(d->held[i]);
	free(d->held);
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
			/* -ENOBUFS: the bus daemon refused (LimitsExceeded); it
			 * runs under this process's open-file limit, the usual
			 * one it reaches */
			return errf(err, errlen, -r, "dbus: %s %u: the D-Bus handshake: %s%s", who,
				    id, strerror(-r), r == -ENOBUFS ? " (a limit of the bus daemon, "
				    "most often its open-file limit, which is this run's: raise it, "
				    "ulimit -n)" : "");
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

static int db_open_p2p(struct db_ep *d, int fd, const char *who, unsigned id, char *err,
		       size_t errlen)
{
	sd_id128_t bus_id;
	int r = sd_bus_new(&d->bus);

	if (r >= 0)
		r = sd_bus_set_fd(d->bus, fd, fd);
	else
		close(fd);
	if (r >= 0 && d->role == TP_SERVER) {
		r = sd_id128_randomize(&bus_id);
		if (r >= 0)
			r = sd_bus_set_server(d->bus, 1, bus_id);
	}
	if (r < 0)
		return errf(err, errlen, -r, "dbus: %s %u: setting up the connection: %s", who, id,
			    strerror(-r));
	return db_start(d, who, id, err, errlen);
}

/* NameOwnerChanged of the peer's name: its first owner is the peer, any
 * change after that is the peer gone. */
static int db_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *e)
{
	struct db_ep *d = userdata;
	const char *name = NULL, *old = NULL, *now = NULL;

	(void)e;
	if (sd_bus_message_read(m, "sss", &name, &old, &now) < 0 || strcmp(name, d->peer))
		return 0;
	if (d->peer_unique[0])
		d->peer_gone |= strcmp(now, d->peer_unique) != 0;
	else if (now[0])
		snprintf(d->peer_unique, sizeof(d->peer_unique), "%s", now);
	return 1;
}

/* Watch the peer's name, then ask who owns it; wait (bounded) for one. */
static int db_find_peer(struct db_ep *d, const char *who, unsigned id, char *err, size_t errlen)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *owner = NULL;
	char rule[256];
	int r;

	snprintf(rule, sizeof(rule), "type='signal',sender='" DB_DBUS "',path='" DB_DBUS_PATH
		 "',interface='" DB_DBUS "',member='NameOwnerChanged',arg0='%s'", d->peer);
	r = sd_bus_add_match(d->bus, &d->watch, rule, db_owner_changed, d);
	if (r < 0)
		return errf(err, errlen, -r, "dbus: %s %u: AddMatch: %s", who, id, strerror(-r));
	r = sd_bus_call_method(d->bus, DB_DBUS, DB_DBUS_PATH, DB_DBUS, "GetNameOwner", &e, &reply,
			       "s", d->peer);
	if (r >= 0 && sd_bus_message_read(reply, "s", &owner) > 0 && !d->peer_unique[0])
		snprintf(d->peer_unique, sizeof(d->peer_unique), "%s", owner);
	sd_bus_message_unref(reply);
	if (r < 0 && !sd_bus_error_has_name(&e, "org.freedesktop.DBus.Error.NameHasNoOwner")) {
		r = errf(err, errlen, -r, "dbus: %s %u: GetNameOwner %s: %s", who, id, d->peer,
			 e.message ? e.message : strerror(-r));
		sd_bus_error_free(&e);
		return r;
	}
	sd_bus_error_free(&e);
	for (unsigned i = 0; !d->peer_unique[0]; i++) {
		if (i == DB_PEER_SLICES)
			return errf(err, errlen, ETIMEDOUT, "dbus: %s %u: %s did not appear on the bus "
				    "within %llu s", who, id, d->peer,
				    DB_PEER_SLICES * DB_SLICE_USEC / 1000000ull);
		if (db_stopping(d))
			return errf(err, errlen, EINTR, "dbus: %s %u: stopped", who, id);
		/* nothing of the peer's comes before its name's owner: drop */
		r = sd_bus_process(d->bus, NULL);
		if (r == 0)
			r = sd_bus_wait(d->bus, DB_SLICE_USEC);
		if (r < 0 && r != -EINTR)
			return errf(err, errlen, -r, "dbus: %s %u: waiting for %s: %s", who, id,
				    d->peer, strerror(-r));
	}
	return 0;
}

static int db_open_bus(struct tp_channel *ch, struct db_ep *d, const char *who, unsigned id,
		       char *err, size_t errlen)
{
	const struct dbd *b = ((struct fd_table *)ch->priv)->extra;
	bool server = d->role == TP_SERVER;
	char own[64];
	int r;

	d->via_bus = true;
	snprintf(own, sizeof(own), DB_NAME ".%c%u", server ? 'S' : 'C', id);
	snprintf(d->peer, sizeof(d->peer), DB_NAME ".%c%u", server ? 'C' : 'S', id);
	r = sd_bus_new(&d->bus);
	if (r >= 0)
		r = sd_bus_set_address(d->bus, b->address);
	if (r >= 0)
		r = sd_bus_set_bus_client(d->bus, 1);
	if (r >= 0)
		r = sd_bus_set_method_call_timeout(d->bus, DB_CALL_USEC);
	if (r < 0)
		return errf(err, errlen, -r, "dbus: %s %u: setting up the connection: %s", who, id,
			    strerror(-r));
	r = db_start(d, who, id, err, errlen);
	if (r)
		return r;
	r = sd_bus_request_name(d->bus, own, 0);
	if (r < 0)
		return errf(err, errlen, -r, "dbus: %s %u: RequestName %s: %s", who, id, own,
			    r == -EEXIST ? "owned by another connection" : strerror(-r));
	return db_find_peer(d, who, id, err, errlen);
}

int db_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		   struct tp_endpoint **out, char *err, size_t errlen)
{
	unsigned idx = id * S_PER_CLIENT + (role == TP_SERVER ? S_SERVER : S_CLIENT);
	const char *who = role == TP_SERVER ? "server" : "client";
	bool bus = db_opts(ch)->via == DB_BUS;
	struct tp_endpoint *ep;
	struct db_ep *d;
	int ret, fd;

	ret = tp_check_id(ch, id, err, errlen);
	if (ret)
		return ret;
	ret = bus ? tp_ep_own(ch, -1, -1, 0, &ep, err, errlen)
		  : tp_ep_from_chan(ch, role, id, idx, idx, 0, &ep, err, errlen);
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
	if (bus) {
		ret = db_open_bus(ch, d, who, id, err, errlen);
	} else {
		/* sd-bus closes what it is given: a dup, the channel keeps its own */
		fd = fcntl(ep->rfd, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			ret = errf(err, errlen, errno, "dbus: dup: %s%s", strerror(errno),
				   errno == EMFILE ? " (raise the open-file limit: ulimit -n)" : "");
		else
			ret = db_open_p2p(d, fd, who, id, err, errlen);
	}
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

#endif /* HAVE_SDBUS */
