/* SPDX-License-Identifier: MIT */
/* The measured connection of a cell between hosts (ipclab serve / run
 * --peer), for the transports that cross a network (TP_REMOTE): the
 * server's channel listens on an address, the client's connects to it;
 * each client opens with a hello carrying its id and the cell's secret,
 * handed out over the control connection. Whatever arrives without it is
 * foreign: closed or dropped, never measured. */
#ifndef IPCLAB_TP_REMOTE_H
#define IPCLAB_TP_REMOTE_H

#include <netinet/in.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <stdint.h>

#include <stddef.h>

#define TP_RHELLO_MAGIC 0x69706c72u	/* "iplr" */
#define TP_SECRET_BYTES 16
#define TP_REMOTE_WAIT_MS 10000		/* for the peer's connection or hello */
#define TP_REMOTE_MAX_FOREIGN 1024
#define TP_RHELLO_WAIT_MS 2000		/* a whole hello, from its accept */
#define TP_RHELLO_PENDING 32		/* hellos read at once */

struct tp_rhello {
	uint32_t magic, id;
	uint8_t secret[TP_SECRET_BYTES];
};

enum tp_remote_mode { TPR_LOCAL, TPR_SERVER, TPR_CLIENT };

/* Parsed from a transport's options listen=ADDR, connect=ADDR:PORT,
 * secret=HEX (both set by the remote code, never together). */
struct tp_remote {
	enum tp_remote_mode mode;
	struct sockaddr_storage addr;	/* IPv4 or IPv6; server: where to listen (port 0); client: the server's */
	uint8_t secret[TP_SECRET_BYTES];
};

int tp_remote_parse(const char *tp, const char *listen, const char *connect, const char *secret,
		    struct tp_remote *r, char *err, size_t errlen);
/* The listen/connect/secret options of @tp given by hand, checked as create
 * would parse them: 0 or -EINVAL with err (a transport's check_opts). */
int tp_remote_check(const char *tp, const char *listen, const char *connect, const char *secret,
		    char *err, size_t errlen);
void tp_rhello_fill(struct tp_rhello *h, const struct tp_remote *r, unsigned id);
/* A hello of this cell for a client id below n: the id, else -1 (constant
 * time over the secret). */
int tp_rhello_check(const struct tp_rhello *h, const struct tp_remote *r, unsigned n);
/* The server's side of a stream transport: accept on the non-blocking
 * listener lfd until each of n client ids has a connection whose hello
 * carries the cell's secret, all within TP_REMOTE_WAIT_MS. Hellos are
 * read as they come, TP_RHELLO_PENDING at once, each whole within
 * TP_RHELLO_WAIT_MS of its accept (the oldest makes room when all are
 * taken): a stranger that drips bytes, or many, hold up nothing. fds[id]
 * get the connections (blocking); whatever else came is closed and
 * counted in *foreign. 0, or -errno with why (-EINTR: a stop signal). */
int tp_remote_hellos(const char *tp, int lfd, const struct tp_remote *r, unsigned n, int *fds,
		     unsigned *foreign, char *err, size_t errlen);
/* connect() without blocking past TP_REMOTE_WAIT_MS; a signal ends it
 * (-EINTR). 0 or -errno. */
int tp_remote_connect(int fd, const struct sockaddr_storage *sa);
/* The server's ports of a library transport (zmq-tcp, nng-tcp): a block
 * of n consecutive ones, one per client id, held in fds (n of them) until
 * tp_remote_unreserve, so that the control connection hands out one
 * number. The first port, or -errno with why. */
#define TP_RESERVE_TRIES 64
int tp_remote_reserve(const char *tp, const struct tp_remote *r, unsigned n, int *fds, char *err,
		      size_t errlen);
void tp_remote_unreserve(int *fds, unsigned n);
/* The server side of a library transport's channel: tp_remote_reserve into
 * a new *resv (free with tp_remote_unreserve and free), each id's port
 * into ports[id], the block in the channel's settings. 0 or -errno. */
struct tp_channel;
int tp_remote_reserve_block(struct tp_channel *ch, const struct tp_remote *r, unsigned n,
			    int **resv, _Atomic uint32_t *ports, char *err, size_t errlen);
/* poll one fd for events up to ms; 1 ready, 0 timeout, -errno. */
int tp_remote_poll(int fd, short events, int ms);

#endif
