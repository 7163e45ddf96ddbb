/* SPDX-License-Identifier: MIT */
/* A transport moves whole messages between a server and its clients. It
 * knows nothing about time: it never reads a clock, prints, exits or keeps
 * static state (endpoints may be threads of one process). */
#ifndef IPCLAB_TRANSPORT_H
#define IPCLAB_TRANSPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "ipclab/opt.h"

enum tp_caps {
	TP_STREAM = 1u << 0,	   /* byte stream: messages framed by size */
	TP_DGRAM = 1u << 1,	   /* message boundaries kept by the kernel */
	TP_LOSSY = 1u << 2,	   /* may drop, duplicate or reorder (counted, not an error) */
	TP_MULTI_CLIENT = 1u << 3, /* one server endpoint per client id */
	TP_POLLABLE = 1u << 4,	   /* pollfd() gives an fd for poll/epoll */
	TP_NAMED = 1u << 5,	   /* creates named objects (paths, queue names) */
	TP_ZEROCOPY = 1u << 6,	   /* peek/release receive in place */
	TP_THREAD_ONLY = 1u << 7,  /* endpoints must be threads of one process */
	TP_IN_PROCESS = 1u << 9,   /* no kernel object: a lab self-test */
	TP_SPINS = 1u << 10,	   /* waits by spinning: needs its own CPU under SCHED_FIFO */
	TP_ZEROCOPY_SEND = 1u << 12, /* reserve/commit: build a message in place */
	TP_NO_EINTR = 1u << 11,	   /* a blocked recv ignores signals: only the peer's close ends it */
	TP_REMOTE = 1u << 13,	   /* crosses hosts: -O listen/connect/secret (ipclab serve, run --peer) */
};

/* Where `ipclab list` shows a transport: what kind of thing carries its
 * messages (whatever its name). */
enum tp_group {
	TP_GROUP_KERNEL = 0,	/* kernel objects: pipes, sockets, queues */
	TP_GROUP_SHM,		/* shared memory and a way to wait */
	TP_GROUP_LIBRARY,	/* a library's IPC (libqb, ZeroMQ, nng, io_uring, sd-bus) */
	TP_GROUP_RING,		/* libipcring */
	TP_GROUP_N,
};

enum tp_role { TP_SERVER = 0, TP_CLIENT = 1 };

#define TP_BATCH_MAX 64u	/* most messages one reserve_n/peek_n hands out */

struct tp_config {
	size_t msg_size;	/* every message of the cell has this size */
	unsigned clients;	/* number of client endpoints (ids 0..clients-1) */
	bool threads;		/* endpoints are threads (else forked processes) */
	const void *opts;	/* the transport's parsed private options */
	const char *dir;	/* private 0700 directory for named objects */
	/* The cell's stop word (stop_requested() in util.h): waits that can
	 * block look at it before blocking and spin loops poll it; both then
	 * return -EINTR. Shared by every endpoint of the cell; may be NULL. */
	const _Atomic int *stop;
};

#define TP_MAX_SETTINGS 16

/* Effective settings, read back from the kernel, reported with the result. */
struct tp_settings {
	unsigned n;
	struct {
		char key[32];
		char val[64];
	} kv[TP_MAX_SETTINGS];
};

struct tp_channel {
	const struct transport *tp;
	const struct tp_config *cfg;
	struct tp_settings settings;
	void *priv;		/* the transport's own state */
};

struct tp_endpoint;		/* defined by each transport */
struct tp_reference;		/* --reference's bare loop (include/ipclab/reference.h) */

struct transport {
	const char *name;	/* what -t takes */
	const char *summary;	/* one line for `ipclab list` */
	unsigned caps;
	enum tp_group group;	/* its heading in `ipclab list` */
	const struct opt_desc *options;	/* -O key=value; NULL-name terminated, or NULL */
	size_t opts_size;
	/* Largest message this transport can carry here (kernel limits); 0 =
	 * no limit. Optional: leave it out when there is none. */
	size_t (*max_msg)(const void *opts);
	/* What sets that limit and how to raise it, for the error (optional). */
	const char *max_msg_limit;
	/* The -O values together, before anything runs (what one option's own
	 * table cannot tell, e.g. an address): 0, or -EINVAL with err naming
	 * the option and the fix; the run is then bad input (exit 2). Optional. */
	int (*check_opts)(const void *opts, char *err, size_t errlen);
	/* Usable here? 0, or -errno with why filled (the cell is skipped). Optional. */
	int (*probe)(const struct tp_config *cfg, char *why, size_t len);
	/* In the parent, before endpoints start: make the kernel objects. Fills
	 * ch->priv and ch->settings. On failure, destroy() is still called. */
	int (*create)(struct tp_channel *ch, char *err, size_t errlen);
	/* In the endpoint (child process or thread). In process mode it may close
	 * what this role does not use. */
	int (*open)(struct tp_channel *ch, enum tp_role role, unsigned id,
		    struct tp_endpoint **out, char *err, size_t errlen);
	/* Server endpoints of multi-client transports are opened once per client
	 * id; clients open their own id. */
	ssize_t (*send)(struct tp_endpoint *ep, const void *buf, size_t len);
	/* Receive one message of at most len bytes; stream transports read
	 * exactly len. Returns its length, 0 when the peer closed, or -errno
	 * (-EINTR when interrupted by a stop request). */
	ssize_t (*recv)(struct tp_endpoint *ep, void *buf, size_t len);
	/* TP_ZEROCOPY: receive in place, then hand the space back. */
	ssize_t (*peek)(struct tp_endpoint *ep, const void **msg, size_t len);
	void (*release)(struct tp_endpoint *ep);
	/* TP_ZEROCOPY_SEND: send in place. reserve() hands out room for one
	 * message of len bytes (returns len or -errno, like send); commit()
	 * sends what was written there. */
	ssize_t (*reserve)(struct tp_endpoint *ep, void **buf, size_t len);
	ssize_t (*commit)(struct tp_endpoint *ep, size_t len);
	/* Optional, with reserve/commit: places for up to @max (1..TP_BATCH_MAX)
	 * messages of @len bytes at once, for a transport that publishes
	 * several with one index update (ring -O batch). Returns how many it
	 * reserved (1..max; fewer where its batch or the free room ends) with
	 * bufs[] filled, or -errno like send. commit_n() then sends all @n in
	 * order: 0 or -errno. A stream's common case uses these where present. */
	ssize_t (*reserve_n)(struct tp_endpoint *ep, void **bufs, size_t len, unsigned max);
	int (*commit_n)(struct tp_endpoint *ep, unsigned n, size_t len);
	/* Optional, with peek/release: up to @max (1..TP_BATCH_MAX) received
	 * messages in place, msgs[i] of lens[i] bytes, waiting for the first;
	 * the count, 0 when the peer closed and all was read, or -errno.
	 * release_n() hands all @n of them back at once. */
	ssize_t (*peek_n)(struct tp_endpoint *ep, const void **msgs, size_t *lens, unsigned max);
	void (*release_n)(struct tp_endpoint *ep, unsigned n);
	/* Optional, with the batch operations: does @ep move its messages in
	 * runs (ring: -O batch > 1)? Where it does not, a stream sends and
	 * receives one message per call (measured: a ring publishing every
	 * message ran 0.6-0.9x as fast through the batched loops). Absent:
	 * always. */
	bool (*runs)(const struct tp_endpoint *ep);
	int (*pollfd)(const struct tp_endpoint *ep);	/* -1 if none; optional */
	/* Optional, with pollfd, for the server of several clients: can recv
	 * on @ep return at once (a message, the end or an error is waiting)?
	 * 1 or 0, without blocking and without a system call while nothing
	 * waits. With @arm, a 0 also arms pollfd() so that it turns readable
	 * when a message comes (for a ring: announce the sleep). A fan-in
	 * server that uses it spins over every client with @arm false, then
	 * arms them all and sleeps in epoll, as a ring server's own loop does;
	 * pollfd() then needs to be readable only after an arm. */
	int (*ready)(struct tp_endpoint *ep, bool arm);
	void (*close)(struct tp_endpoint *ep);
	/* In the parent, always, once, after partial create too. */
	void (*destroy)(struct tp_channel *ch);
	/* Optional: --reference's bare loop for this transport, the same
	 * calls made plainly, with none of this file's code (src/reference/).
	 * Absent: its cells have no reference, and say so. */
	const struct tp_reference *reference;
};

/* The registry: THE list of transports (src/transport/registry.c). */
extern const struct transport *const transports[];
extern const size_t n_transports;
const struct transport *transport_find(const char *name);

/* Record an effective setting (helper for create). */
void tp_setting(struct tp_channel *ch, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A setting's value by key (the first of that key), NULL without one. */
const char *tp_setting_get(const struct tp_settings *s, const char *key);

/* send() for a transport that sends in place: reserve, copy in, commit. */
ssize_t tp_send_via_reserve(struct tp_endpoint *ep, const void *buf, size_t len,
			    ssize_t (*reserve)(struct tp_endpoint *, void **, size_t),
			    ssize_t (*commit)(struct tp_endpoint *, size_t));

/* recv() for a zero-copy transport: peek, copy out, release (-EMSGSIZE,
 * releasing the message, if it is longer than len). */
ssize_t tp_recv_via_peek(struct tp_endpoint *ep, void *buf, size_t len,
			 ssize_t (*peek)(struct tp_endpoint *, const void **, size_t),
			 void (*release)(struct tp_endpoint *));

/* For library transports (src/transport/sock_common.c). tp_fds_free: are
 * n descriptors free here (taken and given back)? 0, or the errno of the
 * one that could not be had (EMFILE: ulimit -n), for a library that fails
 * badly without them (libqb's loop, libzmq). tp_ipc_socket_path: path
 * (PATH_MAX bytes) = "<private dir>/<unique prefix name>.<id>", a unix
 * socket for an ipc:// address; 0, or -ENAMETOOLONG with the fix in err. */
int tp_fds_free(unsigned n);
int tp_ipc_socket_path(const struct tp_channel *ch, const char *prefix, unsigned id, char *path,
		       char *err, size_t errlen);

/* Check a transport's ops for missing hooks; -EINVAL with the hook's name. */
int transport_validate(const struct transport *tp, char *err, size_t errlen);
/* Every registered transport, and no name twice: run at start-up, so a
 * broken registration fails at once (0 or -EINVAL with why). */
int transports_validate(char *err, size_t errlen);

#endif
