/* SPDX-License-Identifier: MIT */
/* ipclab serve before a client is authenticated (serve_auth.c): many
 * handshakes at once on non-blocking connections, each hello read as it
 * comes and due within a short deadline; its token checked at once when
 * neither its address nor its network has guessed wrong lately, else no
 * sooner than its address, and all such addresses together, may make
 * another guess; the session slot is the caller's to give, and only to a
 * client whose token was right. */
#ifndef IPCLAB_REMOTE_SERVE_AUTH_H
#define IPCLAB_REMOTE_SERVE_AUTH_H

#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "ipclab/netaddr.h"
#include "ipclab/remote.h"
#include "ipclab/util.h"

#define SA_SLOTS 64				/* handshakes in progress at once */
#define SA_WAIT_MAX (SA_SLOTS / 2)		/* of them, hellos waiting their turn */
#define SA_HELLO_NS (5 * NSEC_PER_SEC)		/* a whole hello, from the accept */
#define SA_HELLO_MAX 2048			/* bytes of a hello frame */
#define SA_TURN_NS (3 * NSEC_PER_SEC)		/* a read hello waits this long at most for its check */
#define SA_DELAY0_NS (250 * NSEC_PER_MSEC)	/* after an address's first wrong token; doubles */
#define SA_DELAY_MAX_NS (60 * NSEC_PER_SEC)
#define SA_GLOBAL_GAP_NS (100 * NSEC_PER_MSEC)	/* wrong tokens that wait their turn: 10 a second */
#define SA_NET_FREE 4				/* wrong tokens of a network before its hellos wait */
#define SA_FORGET_NS (15 * 60 * NSEC_PER_SEC)	/* wrong tokens are forgotten */
#define SA_ADDRS 4096				/* addresses remembered (a power of 2) */
#define SA_NETS 1024				/* networks remembered (a power of 2) */

struct serve_auth;

/* An authenticated client; its connection is blocking again. */
struct sa_client {
	int fd;
	struct sockaddr_storage from;
	char peer[NET_ADDR_TEXT];
};

/* lfd: the control listener (made non-blocking here). NULL: no memory. */
struct serve_auth *sa_new(const struct serve_opts *o, int lfd);
/* Every pending connection closed, a freed. */
void sa_free(struct serve_auth *a);
/* Poll the listener, the handshakes and fd (for events; -1: none) for at
 * most ms, then accept, read and check what is ready. 1 with *out: a
 * client whose token was right (only when busy is NULL; with busy, each
 * such client is answered busy and closed); 0: none this time (*revents:
 * fd's events, when revents is not NULL); -EINTR: a stop signal. */
int sa_poll(struct serve_auth *a, int fd, short events, int ms, short *revents, const char *busy,
	    struct sa_client *out);

/* One log line "ipclab serve: ..." on o->log (none when quiet). */
void serve_log(const struct serve_opts *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A "refused" frame with reason: 0 or -errno. */
int serve_refuse(int fd, const char *reason);

#endif
