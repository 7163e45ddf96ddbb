/* SPDX-License-Identifier: MIT */
/* What dbus.c (create, send, recv, close) and dbus_open.c (open: an
 * endpoint's connection) share: the options, the names, an endpoint. */
#ifndef IPCLAB_DBUS_EP_H
#define IPCLAB_DBUS_EP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipclab/transport.h"
#include "ipclab/util.h"

enum { DB_P2P, DB_BUS };

struct db_opts {
	int via;		/* DB_P2P, DB_BUS */
	uint64_t max_message;	/* via=bus: the daemon's max_message_size */
};

#ifdef HAVE_SDBUS
#include <systemd/sd-bus.h>

#define DB_SLICE_USEC 100000ull		/* a wait's longest slice */
#define DB_START_SLICES 100		/* open: slices for the handshake */
#define DB_PEER_SLICES 300		/* open, via=bus: slices for the peer's name */
#define DB_CALL_USEC 10000000ull	/* open, via=bus: a call to the daemon */
#define DB_PATH "/org/ipclab/Msg"
#define DB_IFACE "org.ipclab.Msg"
#define DB_NAME "org.ipclab.Msg"	/* + ".S<id>" or ".C<id>" */
#define DB_DBUS "org.freedesktop.DBus"
#define DB_DBUS_PATH "/org/freedesktop/DBus"

/* Channel entries per client id: the server's end, then the client's. */
enum { S_SERVER, S_CLIENT, S_PER_CLIENT };

/* ep->extra */
struct db_ep {
	sd_bus *bus;
	sd_bus_message *pending;	/* server: the last call not yet answered */
	enum tp_role role;
	int fd;				/* p2p: the channel's socket (shut down on close) */
	const _Atomic int *stop;	/* the cell's stop word (tp_config) */
	/* via=bus */
	bool via_bus, peer_gone;
	uint64_t awaiting;		/* client: the cookie of its call awaiting a reply */
	sd_bus_slot *watch;		/* NameOwnerChanged of the peer's name */
	char peer[64];			/* the peer's well-known name */
	char peer_unique[64];		/* its owner's unique name ("" = none yet) */
	/* messages read while a send waited to write: recv takes them first */
	sd_bus_message **held;
	size_t n_held, cap_held, first_held;
};

static inline bool db_stopping(const struct db_ep *d)
{
	return stop_requested(d->stop);
}

static inline const struct db_opts *db_opts(const struct tp_channel *ch)
{
	return ch->cfg->opts;
}

/* ep->extra freed: what it holds, and its connection closed. */
void db_ep_free(struct db_ep *d);
int db_open(struct tp_channel *ch, enum tp_role role, unsigned id,
	    struct tp_endpoint **out, char *err, size_t errlen);

#endif /* HAVE_SDBUS */

#endif
