/* SPDX-License-Identifier: MIT */
/* Helpers shared by the kernel-object transports (pipe, sockets, queues):
 * one channel layout (descriptors tagged with the side that uses them,
 * cleanup handles), one endpoint layout, and the send/recv/close functions
 * that several transports use as their ops directly. */
#ifndef IPCLAB_TP_COMMON_H
#define IPCLAB_TP_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "ipclab/transport.h"
#include "ipclab/util.h"

/* Who uses a descriptor the channel created: in process mode an endpoint
 * closes every descriptor it does not use, so that only the peer (and the
 * parent, see docs/transports.md) keeps the other end. */
enum fd_owner {
	FD_SERVER = TP_SERVER,
	FD_CLIENT = TP_CLIENT,
	FD_BOTH,		/* both sides of one client id (a queue) */
};

struct tp_fd {
	int fd;
	unsigned char owner;	/* enum fd_owner */
	unsigned id;		/* client id */
};

/* ch->priv of these transports: descriptors, cleanup handles and a
 * transport's own extra area, in one allocation freed by fd_table_destroy. */
struct fd_table {
	unsigned nfd, ncl;
	struct tp_fd *fd;	/* nfd entries, fd -1 when closed */
	int *cl;		/* ncl cleanup handles, -1 when unused */
	void *extra;		/* extra_size bytes, zeroed */
};

struct fd_table *fd_table_new(struct tp_channel *ch, unsigned nfd, unsigned ncl,
			    size_t extra_size, char *err, size_t errlen);
/* The destroy op: close every descriptor, run every cleanup handle. */
void fd_table_destroy(struct tp_channel *ch);
void fd_table_set(struct fd_table *c, unsigned idx, int fd, enum fd_owner owner, unsigned id);
/* Process mode: close the channel's descriptors this role and id do not use. */
void fd_table_drop_others(struct tp_channel *ch, enum tp_role role, unsigned id);

static inline unsigned tp_clients(const struct tp_channel *ch)
{
	return ch->cfg->clients ? ch->cfg->clients : 1;
}

/* An id past the channel's clients is the caller's bug: say so. */
static inline int tp_check_id(const struct tp_channel *ch, unsigned id, char *err, size_t errlen)
{
	if (id < tp_clients(ch))
		return 0;
	return errf(err, errlen, EINVAL, "%s: client id %u out of range (%u clients)",
		    ch->tp->name, id, tp_clients(ch));
}

/* Endpoint flags. */
enum {
	TP_EP_SHUTDOWN = 1u << 0,	/* close: shutdown(SHUT_WR) so the peer reads EOF */
	TP_EP_MARKER = 1u << 1,	/* close: send a zero-length message = EOF */
};

/* The endpoint of every descriptor-based transport here. */
struct tp_endpoint {
	int rfd, wfd;			/* receive / send descriptor (a socket: both) */
	struct tp_fd *rslot, *wslot;	/* the channel's entries, NULL = ours alone */
	bool threads;
	unsigned flags;			/* TP_EP_* */
	size_t max;			/* largest message the channel was made for */
	void *extra;			/* a transport's own state, freed by its close */
	const _Atomic int *stop;	/* the cell's stop word (tp_config) */
};

/* Make an endpoint over channel entries ridx/widx; in process mode, first
 * close the descriptors this role and id do not use. */
int tp_ep_from_chan(struct tp_channel *ch, enum tp_role role, unsigned id, unsigned ridx,
		    unsigned widx, unsigned flags, struct tp_endpoint **out, char *err,
		    size_t errlen);
/* An endpoint over a descriptor it owns alone (accepted, connected, opened). */
int tp_ep_own(struct tp_channel *ch, int rfd, int wfd, unsigned flags, struct tp_endpoint **out,
	      char *err, size_t errlen);
/* Close the endpoint's descriptors (those shared by both sides of a queue only
 * in process mode) and free it; the caller sent any EOF marker before. */
void tp_ep_free(struct tp_endpoint *ep);

/* Ops shared as they are. */
ssize_t tp_stream_send(struct tp_endpoint *ep, const void *buf, size_t len);
ssize_t tp_stream_recv(struct tp_endpoint *ep, void *buf, size_t len);
ssize_t tp_dgram_send(struct tp_endpoint *ep, const void *buf, size_t len);
ssize_t tp_dgram_recv(struct tp_endpoint *ep, void *buf, size_t len);
int tp_fd_pollfd(const struct tp_endpoint *ep);
/* close op for sockets and pipes: shutdown or EOF marker per flags. */
void tp_fd_close(struct tp_endpoint *ep);

/* The zero-length EOF marker of a transport without EOF. try_send sends it
 * without blocking (0, or -1 with errno). While there is no room, wait for
 * POLLOUT (the receiver may still be draining what we sent), up to
 * TP_MARKER_WAIT_MS at a time: a receiver that stopped reading gets no
 * marker, and close never blocks for good. A signal ends the wait. */
#define TP_MARKER_WAIT_MS 1000
void tp_marker(int fd, int (*try_send)(int fd));

/* Read an unsigned number from a /proc/sys file. */
int tp_sysctl_u64(const char *path, uint64_t *out);

/* F_SETPIPE_SZ (size 0 = leave the default) and F_GETPIPE_SZ into *got;
 * a refused or reduced size is an error naming /proc/sys/fs/pipe-max-size. */
int tp_pipe_size(const char *tp, int fd, uint64_t size, int *got, char *err, size_t errlen);

/* SO_SNDBUF/SO_RCVBUF (0 = leave the default); the kernel doubles a request
 * and caps it at net.core.wmem_max/rmem_max: a capped value is an error. */
int tp_sock_bufs(const char *tp, int fd, uint64_t snd, uint64_t rcv, char *err, size_t errlen);
/* Report SO_SNDBUF/SO_RCVBUF of fd as settings sndbuf_bytes/rcvbuf_bytes. */
void tp_sock_report(struct tp_channel *ch, int fd);
int tp_sock_get(int fd, int opt, int *val);

/* The hello a connecting client sends first, so the server knows its id. */
#define TP_HELLO_MAGIC 0x69706c62u	/* "iplb" */
int tp_hello_send(int fd, unsigned id);
int tp_hello_check(const char *tp, int fd, unsigned id, char *err, size_t errlen);

/* Connection transports (unix-stream-path, tcp): one listening socket per
 * client id, made by create. The client connects and sends its hello; the
 * server accepts on that id's socket and checks it. setup applies the
 * transport's socket options to each connected socket. */
typedef int (*tp_sock_setup_fn)(struct tp_channel *ch, int fd, char *err, size_t errlen);
int tp_conn_client(struct tp_channel *ch, unsigned id, const struct sockaddr *sa, socklen_t salen,
		   tp_sock_setup_fn setup, struct tp_endpoint **out, char *err, size_t errlen);
int tp_conn_server(struct tp_channel *ch, unsigned id, int lfd, tp_sock_setup_fn setup,
		   struct tp_endpoint **out, char *err, size_t errlen);

#endif
