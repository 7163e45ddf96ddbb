/* SPDX-License-Identifier: MIT */
/*
 * ipcring_ipc.h - libipcring's connections by name (ipcring_listen,
 * ipcring_connect, the dispatcher, ipcring_conn_*). Part of <ipcring.h>,
 * which includes it: include that one.
 */
#ifndef IPCRING_PUBLIC_IPC_H
#define IPCRING_PUBLIC_IPC_H

#ifndef IPCRING_H
#error "include <ipcring.h>, not <ipcring_ipc.h>"
#endif

/* ======================================================================
 * Connections by name (IPCRING_2): a server listens on a name, a client
 * connects to it and receives a duplex channel, two rings made by the
 * server for that connection: requests (client -> server) and replies
 * (server -> client), both in IPCRING_WAIT_EVENTFD mode, their memfds and
 * eventfds passed with SCM_RIGHTS over a SOCK_SEQPACKET control socket and
 * validated at attach like any other ring. The control socket stays open:
 * its hangup tells either side that the other died.
 *
 * Names: "@NAME" is NAME in the abstract socket namespace (no file; anyone
 * can bind any abstract name first, so the client's server check below is
 * what makes it safe); a name containing '/' is a socket path, whose
 * directory must be a directory owned by this euid with no group or other
 * access (0700); any other name is $XDG_RUNTIME_DIR/ipcring/NAME, or
 * /tmp/ipcring-EUID/NAME without XDG_RUNTIME_DIR, that directory made 0700
 * by the server if missing.
 *
 * Peers. The server reads SO_PEERCRED on every connection as it accepts
 * it and refuses a peer its policy does not allow at once, before reading
 * anything from it; the dispatcher also lets one uid have only a quarter of
 * max_conns handshakes (at least 16) waiting for their hello at a time,
 * and refuses more (-EUSERS), so no uid can hold every handshake slot. The
 * client reads the server's SO_PEERCRED and refuses a server whose uid it
 * does not trust (a squatter that bound the name first). Either policy
 * refusal is -EACCES with a reason; another protocol version
 * is -EPROTO with a reason. A server that cannot make the channel refuses
 * with that error (-EMFILE out of descriptors, -ENOMEM) and a reason; it
 * keeps one descriptor in reserve so that even a full descriptor table can
 * take a waiting client to refuse it (-EMFILE). A client that cannot take
 * the channel's descriptors itself gets -EMFILE. Reasons are NUL-terminated
 * strings of at most IPCRING_REASON_MAX bytes, for the caller to show.
 * ====================================================================== */

#define IPCRING_PROTO_VERSION	1u
#define IPCRING_REASON_MAX	160

struct ipcring_server;
struct ipcring_conn;

/* A peer's credentials as the kernel reported them (SO_PEERCRED). */
struct ipcring_cred {
	int32_t pid;
	uint32_t uid;
	uint32_t gid;
};

/*
 * Server policy callback: return 0 to accept the peer, or -errno (e.g.
 * -EACCES) to refuse it, optionally writing why into @reason (sent to the
 * client). When given, it alone decides. It is called as the connection is
 * accepted, before the client's hello (so before its tag is known).
 */
typedef int (*ipcring_allow_fn)(void *ctx, const struct ipcring_cred *peer,
				char *reason, size_t len);

struct ipcring_server_opts {
	const struct ipcring_opts *ring; /* each connection's rings; NULL = defaults,
					  * but capacity 0 = 64 KiB here (set-up
					  * time grows with it: the rings are
					  * prefaulted); wait_mode is always
					  * IPCRING_WAIT_EVENTFD */
	const uint32_t *uids;		/* also allowed: these uids ... */
	unsigned int nuids;
	const uint32_t *gids;		/* ... and peers whose primary gid is here */
	unsigned int ngids;
	ipcring_allow_fn allow;		/* or this callback alone decides */
	void *allow_ctx;
	unsigned int max_conns;		/* 0 = 1024; more are refused (-EUSERS);
					 * at most 2^24 */
	unsigned int handshake_ms;	/* a client's hello must come within; 0 = 1000 */
	unsigned int quantum;		/* dispatch: records per connection per round;
					 * 0 = 16 */
	uint32_t spin_ns;		/* dispatch: spin over all rings before
					 * sleeping in epoll; 0 = the ring's spin_ns,
					 * IPCRING_NO_SPIN = none */
};

struct ipcring_connect_opts {
	const uint32_t *server_uids;	/* trusted server uids; NULL = this euid and 0 */
	unsigned int nserver_uids;
	int timeout_ms;			/* connect + handshake; 0 = 5000, < 0 = forever */
	uint64_t tag;			/* given to the server: ipcring_conn_tag() */
	uint32_t proto_version;		/* 0 = IPCRING_PROTO_VERSION (a testing aid) */
};

/* Per-connection counters (dispatch keeps batches; the rest are the rings'). */
struct ipcring_conn_stats {
	uint64_t msgs_in, bytes_in;	/* records this side consumed */
	uint64_t msgs_out, bytes_out;	/* records this side committed */
	uint64_t wakes;			/* wakes this side made (both rings) */
	uint64_t sleeps;		/* sleeps this side made (both rings) */
	uint64_t batches;		/* server dispatch: rounds that served it */
};

/* What ipcring_server_dispatch() calls; any hook may be NULL. */
struct ipcring_server_ops {
	/* a new connection, after the policy accepted it */
	void (*connected)(void *ctx, struct ipcring_conn *conn);
	/* one request, in place (see "Trust"); reply with ipcring_conn_send(),
	 * which never waits here (see ipcring_server_set_reply_limits()).
	 * Return 0, or -errno to drop the connection. */
	int (*message)(void *ctx, struct ipcring_conn *conn, const void *msg,
		       size_t len);
	/* the connection is gone: @why 0 = closed by the client, -EPIPE = it
	 * died, -ETIMEDOUT = its replies waited for room longer than the stall
	 * limit (it stopped reading them), else the error that dropped it.
	 * The handle is freed after; replies sent now are not queued. */
	void (*disconnected)(void *ctx, struct ipcring_conn *conn, int why);
	/* a connection was refused: @err and the reason sent to the client */
	void (*refused)(void *ctx, const struct ipcring_cred *peer, int err,
			const char *reason);
};

/*
 * ipcring_listen - bind and listen on @name (see "Names"). A socket file
 * left by a dead server is replaced; one with a live server gives
 * -EADDRINUSE. @reason (may be NULL) says what went wrong.
 */
IPCRING_MUST_CHECK
int ipcring_listen(struct ipcring_server **srv, const char *name,
		   const struct ipcring_server_opts *opts, char *reason,
		   size_t reason_len);

/*
 * ipcring_server_close - close every connection the dispatcher owns, the
 * listening socket and the epoll fd; the process that listened unlinks the
 * socket file (a forked child that inherited the server does not). NULL is
 * a no-op. Returns 0.
 */
int ipcring_server_close(struct ipcring_server *srv);

/*
 * ipcring_server_accept - take the next connection yourself: wait (per
 * @timeout_ms) for a client, read its hello, apply the policy, make its two
 * rings and send them. Returns 0 with *@conn (closed with
 * ipcring_conn_close()), or -EACCES / -EPROTO / -EUSERS (refused; the
 * client was told @reason), -EAGAIN, -ETIMEDOUT, or another -errno.
 * Connections taken so are not part of ipcring_server_dispatch().
 */
IPCRING_MUST_CHECK
int ipcring_server_accept(struct ipcring_server *srv, struct ipcring_conn **conn,
			  char *reason, size_t reason_len, int timeout_ms);

/* ipcring_server_set_ops - the hooks ipcring_server_dispatch() calls. */
int ipcring_server_set_ops(struct ipcring_server *srv,
			   const struct ipcring_server_ops *ops, void *ctx);

/*
 * Replies on the dispatcher's connections never wait: a client that stops
 * reading must not hold up the others. ipcring_conn_send() on such a
 * connection (from a hook, or between dispatch calls, on the dispatcher's
 * thread) ignores its timeout: a reply that fits in the client's reply
 * ring is written at once, as ever; one that does not is copied into that
 * connection's queue and 0 returned, and the dispatcher then serves none
 * of that client's requests until the queue is in its ring (moved as the
 * client reads, looked at every round and every millisecond). A reply
 * that does not fit in the queue either is -EAGAIN, nothing queued: the
 * hook decides (drop the reply and return 0, or return the error to drop
 * the connection). A connection whose queue has not moved for the stall
 * limit is dropped, its disconnected hook called with -ETIMEDOUT.
 *
 * ipcring_server_set_reply_limits - the queue's bound, @max_queued bytes
 * (each reply counts 4 bytes more than its length; 0 = the reply ring's
 * capacity, 64 KiB by default; at most 1 GiB), and the stall limit,
 * @stall_ms (0 = 5000, < 0 = never drop). Returns 0 or -EINVAL.
 * Since libipcring 1.3 (symbol version IPCRING_4).
 */
int ipcring_server_set_reply_limits(struct ipcring_server *srv, size_t max_queued,
				    int stall_ms);

/*
 * ipcring_server_dispatch - one turn of the server loop, for any number of
 * connections on one thread: accept and refuse, serve every connection's
 * requests in rotation (at most quantum records each per round, so none
 * starves), detect dead clients (their socket's hangup, at once) and free
 * them. When every ring is empty it spins for spin_ns, then announces sleep
 * on every request ring and sleeps in epoll until a request, a connection
 * or a hangup comes, or @timeout_ms passes. The replies the message hook
 * sends to a run of one client's requests are published as one run: a
 * reply while that client's next request already waits is committed as
 * with IPCRING_MORE, and the reply to the last one waiting (or the end of
 * its turn) publishes them all, with at most one wake. Returns the number
 * of records served (0 on timeout), or -errno. While replies wait in a queue (see
 * ipcring_server_set_reply_limits()), a timer in its epoll set ticks every
 * millisecond, so that they move on as their client reads.
 * Set-up: the server keeps one channel made ahead (two rings, its ends
 * attached; six descriptors), handed to the next client at once and made
 * again after 1 ms of idleness (here, or in ipcring_server_accept()).
 */
IPCRING_MUST_CHECK
int ipcring_server_dispatch(struct ipcring_server *srv, int timeout_ms);

/*
 * ipcring_server_fd - an fd for an existing event loop (poll/epoll,
 * qb_loop, libevent, GLib): readable when ipcring_server_dispatch() has
 * something to do. Call ipcring_server_dispatch(srv, 0) when it is; it
 * returns with everything re-armed, so the loop may sleep again.
 */
int ipcring_server_fd(const struct ipcring_server *srv);

/* Connections the dispatcher holds now. */
int ipcring_server_nconns(const struct ipcring_server *srv);

/*
 * ipcring_connect - connect to the server listening on @name, check its
 * credentials, send the hello, receive and attach the channel. Returns 0
 * with *@conn, or -ENOENT / -ECONNREFUSED (nobody listens), -EACCES (the
 * server refused us, or we refused a server of an untrusted uid), -EPROTO
 * (another protocol version), -EBADMSG (a bad reply or bad rings),
 * -ETIMEDOUT, or another -errno; @reason (may be NULL) says why.
 */
IPCRING_MUST_CHECK
int ipcring_connect(struct ipcring_conn **conn, const char *name,
		    const struct ipcring_connect_opts *opts, char *reason,
		    size_t reason_len);

/*
 * ipcring_connect_cancel - ipcring_connect() whose waits (for the socket to
 * connect, for the server's reply) can be given up: @cancel(@ctx) is asked
 * before each wait, whenever a signal interrupts one, and at least every
 * IPCRING_CANCEL_POLL_MS while one lasts; once it returns nonzero the call
 * cleans up and returns -ECANCELED, @reason saying so. A thread that wants
 * to stop another at once sets what @cancel reads, then signals it (a
 * handler without SA_RESTART). @cancel NULL: exactly ipcring_connect().
 * Since libipcring 1.2 (symbol version IPCRING_3).
 */
#define IPCRING_CANCEL_POLL_MS	50
typedef int (*ipcring_cancel_fn)(void *ctx);
IPCRING_MUST_CHECK
int ipcring_connect_cancel(struct ipcring_conn **conn, const char *name,
			   const struct ipcring_connect_opts *opts,
			   ipcring_cancel_fn cancel, void *ctx, char *reason,
			   size_t reason_len);

/*
 * ipcring_conn_close - close both ends (the peer drains what was sent,
 * then reads end of stream) and the control socket. NULL is a no-op. Only
 * for connections from ipcring_connect() or ipcring_server_accept(); the
 * dispatcher closes its own with ipcring_conn_drop().
 */
int ipcring_conn_close(struct ipcring_conn *conn);

/* Inside a dispatch hook: drop this connection after the hook returns. */
int ipcring_conn_drop(struct ipcring_conn *conn);

/*
 * ipcring_conn_rings - this side's two ends, for the whole ring API
 * (zero-copy reserve/commit, peek/release, batches, prepare_wait): @tx is
 * where this side produces (client: requests; server: replies), @rx where
 * it consumes. Either may be NULL. The handles belong to the connection.
 */
int ipcring_conn_rings(struct ipcring_conn *conn, struct ipcring **tx,
		       struct ipcring **rx);

/* Copying helpers: ipcring_write() on tx, ipcring_read() on rx. On a
 * connection the dispatcher owns, ipcring_conn_send() never waits and may
 * queue the reply (see ipcring_server_set_reply_limits()). */
IPCRING_MUST_CHECK
int ipcring_conn_send(struct ipcring_conn *conn, const void *buf, size_t len,
		      unsigned int flags, int timeout_ms);
IPCRING_MUST_CHECK
int ipcring_conn_recv(struct ipcring_conn *conn, void *buf, size_t cap,
		      size_t *len, int timeout_ms);

/*
 * ipcring_conn_fd - the rx ring's eventfd, for an event loop: readable once
 * ipcring_prepare_wait() on rx returned 0 and records came (or the peer
 * closed). ipcring_conn_socket - the control socket (POLLHUP / POLLRDHUP:
 * the peer is gone).
 */
int ipcring_conn_fd(const struct ipcring_conn *conn);
int ipcring_conn_socket(const struct ipcring_conn *conn);

/* The peer's credentials (for the client: the server's). */
int ipcring_conn_cred(const struct ipcring_conn *conn, struct ipcring_cred *peer);
/* The tag the client sent (server side), or its own (client side). */
int ipcring_conn_tag(const struct ipcring_conn *conn, uint64_t *tag);
int ipcring_conn_stats(const struct ipcring_conn *conn,
		       struct ipcring_conn_stats *stats);

#endif /* IPCRING_PUBLIC_IPC_H */
