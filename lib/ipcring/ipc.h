/* SPDX-License-Identifier: MIT */
/*
 * ipc.h - libipcring's connection layer, private: the handshake messages
 * exchanged over the SOCK_SEQPACKET control socket, the connection handle,
 * name resolution and the socket helpers shared by client.c and server.c,
 * and the server's state shared by server.c, dispatch.c and conns.c.
 */
#ifndef IPCRING_IPC_H
#define IPCRING_IPC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include "ipcring.h"

#define HS_HELLO_MAGIC	0x4f4c4c4548525049ULL	/* "IPRHELLO" */
#define HS_REPLY_MAGIC	0x594c504552525049ULL	/* "IPRREPLY" */
#define HS_NFDS		4			/* req memfd, req efd, rep memfd, rep efd */

/* client -> server, the first and only message the client sends */
struct hs_hello {
	uint64_t magic;
	uint32_t version;	/* IPCRING_PROTO_VERSION of the client */
	uint32_t flags;		/* 0 */
	uint64_t tag;		/* the client's, for the server (ipcring_conn_tag) */
};

/* server -> client: a refusal (status < 0, no fds) or the channel */
struct hs_reply {
	uint64_t magic;
	uint32_t version;	/* IPCRING_PROTO_VERSION of the server */
	int32_t status;		/* 0 or -errno */
	uint64_t conn_id;	/* the server's number for this connection */
	char reason[IPCRING_REASON_MAX];	/* NUL-terminated when status < 0 */
};

enum conn_state { CONN_PENDING = 0, CONN_OPEN = 1, CONN_DEAD = 2 };

/* Replies the dispatcher could not write at once (reply.c): records of a
 * uint32_t length and the bytes, the waiting ones at [off, off + len). */
struct ipc_outq {
	uint8_t *buf;
	size_t off, len, cap;
	uint64_t moved_ns;		/* when it was last started or moved */
	bool counted;			/* in the server's nbacklog */
};

struct ipcring_conn {
	struct ipcring *tx, *rx;	/* client: tx = requests; server: tx = replies */
	int sock;			/* the control socket: HUP when the peer dies */
	struct ipcring_cred peer;
	uint64_t tag;
	uint64_t id;
	/* server side only */
	struct ipcring_server *srv;
	unsigned slot;			/* index in the server's table */
	uint32_t gen;			/* generation in the epoll keys */
	unsigned oidx;			/* index in the server's open list */
	int state;			/* enum conn_state */
	uint64_t since_ns;		/* when accepted (hello deadline) */
	uint64_t batches;		/* dispatch rounds that served it */
	struct ipc_outq q;		/* replies waiting for room in tx */
};

struct ipc_addr {
	struct sockaddr_un sa;
	socklen_t len;
	bool abstract;
};

/* name.c */
int ipc_resolve(const char *name, struct ipc_addr *a, bool create_dir,
		char *reason, size_t len);
void ipc_reason(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int ipc_peer_cred(int sock, struct ipcring_cred *c);
int ipc_wait_fd(int fd, short events, int timeout_ms);
int ipc_wait_fd_cancel(int fd, short events, int timeout_ms, ipcring_cancel_fn cancel,
		       void *ctx);
int ipc_conn_attach(struct ipcring_conn *c, int req_fd, int req_efd, int rep_fd,
		    int rep_efd, bool server);
void ipc_conn_free(struct ipcring_conn *c);
int ipc_timeout(int timeout_ms, int def_ms);

/* the server (server.c, dispatch.c, conns.c) */
#define SRV_SPARE_IDLE_MS	1		/* idle this long: make a channel ahead */
#define SRV_STALL_MS		5000u		/* replies that wait this long: drop */
#define SRV_TICK_NS		1000000u	/* retry waiting replies every 1 ms */

struct ipcring_server {
	int lfd;
	int epfd;			/* made on first use (dispatch, server_fd) */
	int tfd;			/* timerfd in epfd: ticks while replies wait */
	int reserve_fd;			/* let go to refuse a client when out of fds */
	struct ipc_addr addr;
	dev_t dev;
	ino_t ino;
	pid_t owner;			/* the process that unlinks the file */
	struct ipcring_opts ring;
	uint32_t *uids, *gids;
	unsigned int nuids, ngids;
	ipcring_allow_fn allow;
	void *allow_ctx;
	unsigned int max_conns, handshake_ms, quantum;
	unsigned int hs_per_uid;	/* handshakes one uid may have at a time */
	size_t q_max;			/* bytes of replies a connection may queue */
	uint64_t stall_ns;		/* queued replies unmoved this long: drop; 0 never */
	unsigned int nbacklog;		/* connections with replies queued */
	bool ticked;			/* the last epoll saw only the timer */
	bool rearm;			/* a queue emptied: its ring is not armed */
	uint64_t spin_ns;
	struct ipcring_server_ops ops;
	void *ops_ctx;
	struct ipcring_conn **conns;	/* max_conns slots, by epoll key */
	struct ipcring_conn **open;	/* the open ones, dense: nopen */
	unsigned int nslots, nconns, npending, nopen, rr;
	uint64_t next_id;
	uint32_t gen;			/* epoll keys: slot + generation */
	uint64_t last_check_ns;
	struct ipcring_conn *cur;	/* in a hook */
	bool drop_cur;
	bool in_msg;			/* cur's message hook: a run's replies */
	struct {			/* a channel made ahead (rx NULL: none) */
		struct ipcring *rx, *tx;
		int fds[HS_NFDS];
		pid_t pid;		/* made by this process (not a forked copy) */
	} spare;
};

/* server.c */
/* One connection off the listening socket: 0, -EAGAIN or -errno; with
 * @refuse_nofd a client that finds no descriptor free is refused, with the
 * reason (else the caller may free some and try again). */
int ipc_srv_accept_one(struct ipcring_server *s, struct ipcring_conn **out, bool refuse_nofd);
int ipc_srv_handshake(struct ipcring_server *s, struct ipcring_conn *c, bool full,
		      char *reason, size_t len);
void ipc_srv_refuse(int sock, int err, const char *reason);
/* Refuse before the hello: one that came already is read first (a socket
 * closed with data unread resets its peer before it reads the refusal). */
void ipc_srv_refuse_early(int sock, int err, const char *reason);
void ipc_srv_refused(struct ipcring_server *s, const struct ipcring_cred *p, int err,
		     const char *reason);
void ipc_srv_spare_make(struct ipcring_server *s);

/* admit.c: the policy on the peer's credentials (0, or -EACCES or the
 * callback's -errno with @reason), applied at accept */
int ipc_srv_policy(struct ipcring_server *s, const struct ipcring_cred *p, char *reason,
		   size_t len);
bool ipc_srv_admit(struct ipcring_server *s, struct ipcring_conn *c);
int ipc_srv_admit_one(struct ipcring_server *s, struct ipcring_conn *c, char *reason,
		      size_t len);
void ipc_srv_refuse_now(struct ipcring_server *s, struct ipcring_conn *c, int err,
			const char *reason);

/* conns.c: the dispatcher's connections, from accept to free */
/* The epoll fd, with the listening socket and the timer in it. */
int ipc_srv_epoll(struct ipcring_server *s);
/* Out of epoll and of the rotation, the disconnected hook; an open one
 * kept as CONN_DEAD until ipc_srv_reap frees it. */
void ipc_srv_drop(struct ipcring_server *s, struct ipcring_conn *c, int why);
/* Free the dropped connections that died at least @age_ns ago. */
void ipc_srv_reap(struct ipcring_server *s, uint64_t age_ns);
/* Nothing to serve: make the next channel ahead, then free what the
 * dropped connections held, if no client waits for the loop. */
void ipc_srv_idle(struct ipcring_server *s);
/* Handle what epoll reports (waiting up to @timeout_ms); the events but ticks. */
int ipc_srv_events(struct ipcring_server *s, int timeout_ms);
/* The dropped connections not freed yet (CONN_DEAD). */
static inline unsigned int ipc_srv_ndead(const struct ipcring_server *s)
{
	return s->nconns - s->npending - s->nopen;
}

/* reply.c: the dispatcher's replies never wait */
int ipc_srv_send(struct ipcring_conn *c, const void *buf, size_t len, unsigned int flags);
int ipc_srv_outq_flush(struct ipcring_server *s, struct ipcring_conn *c);
void ipc_srv_outq_clear(struct ipcring_server *s, struct ipcring_conn *c);

#endif /* IPCRING_IPC_H */
