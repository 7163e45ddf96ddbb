/* SPDX-License-Identifier: MIT */
/* Inside src/reference/: a reference's channel (channels.c makes the
 * descriptor and queue ones, shm.c the shared-memory ones, libs.c libqb's
 * and libipcring's, each named by its transport's .reference), the loop
 * that drives it (loop.c) and its watcher (reference.c). */
#ifndef IPCLAB_REF_INT_H
#define IPCLAB_REF_INT_H

#include <limits.h>
#include <mqueue.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cell;

enum { REF_SERVER, REF_CLIENT };
enum ref_kind { REF_FD, REF_MQ, REF_OPS };

#define REF_BATCH_MAX 64u	/* as TP_BATCH_MAX */

struct ref_chan;

/* A channel that is neither descriptors nor a POSIX queue: its calls. Each
 * returns 0, -EPIPE when the peer ended the stream, or -errno (with the
 * failed call in what). A blocking wait returns now and then to let a
 * thread be cancelled (pthread_testcancel). */
struct ref_ops {
	int (*side_open)(struct ref_chan *ch, int role, const char **what); /* optional */
	int (*send)(struct ref_chan *ch, int role, const void *buf, size_t n, const char **what);
	int (*recv)(struct ref_chan *ch, int role, void *buf, size_t n, const char **what);
	/* Optional, for a stream's common case (as the cell's batching
	 * transports): send up to @max (1..REF_BATCH_MAX) messages of @n
	 * bytes, or receive up to @max; how many moved (>= 1), or as above. */
	int (*send_n)(struct ref_chan *ch, int role, size_t n, unsigned max, const char **what);
	int (*recv_n)(struct ref_chan *ch, int role, void *buf, size_t n, unsigned max,
		      const char **what);
	void (*side_close)(struct ref_chan *ch, int role); /* optional */
	void (*destroy)(struct ref_chan *ch);
};

struct ref_chan {
	enum ref_kind kind;
	bool bytes;    /* a byte stream: read and write until the whole message moved */
	bool lossy;    /* udp: a stream counts what arrives, a zero-length datagram ends it */
	int fd[2][2];  /* [role][0 = receive, 1 = send], -1 = none */
	mqd_t mq[2];   /* client->server, server->client */
	int handle[2]; /* cleanup handles of the named objects (-1 = none) */
	char name[2][PATH_MAX];
	const struct ref_ops *ops; /* REF_OPS */
	void *priv;		   /* REF_OPS: the ops' own state */
};

/* The channel of cell c's transport (its .reference's open): 0, -ENOTSUP
 * (no reference for it), or -errno with why in err. */
int ref_chan_open(struct ref_chan *ch, const struct cell *c, char *err, size_t errlen);
/* Does its reference apply every -O option c sets? false with why. */
bool ref_chan_mirrors(const struct cell *c, char *why, size_t whylen);
/* Close role's descriptors (-1: every one). */
void ref_chan_close(struct ref_chan *ch, int role);
/* Everything, the named objects removed. */
void ref_chan_destroy(struct ref_chan *ch);

/* options.c: the cell's -O values, read through the transport's (or the
 * pattern's) own option table; name must be one of its options. */
uint64_t ref_tp_opt(const struct cell *c, const char *name);
uint64_t ref_pat_opt(const struct cell *c, const char *name);
/* Every -O option set away from its default is one the reference of tp
 * mirrors (in the NULL-terminated list `mirrored`); else false, why says
 * which. The pattern's options likewise. */
bool ref_opts_mirrored(const struct cell *c, const char *const *mirrored, char *why,
		       size_t whylen);
/* The pattern receives in place (peek/release) where the transport can. */
bool ref_zerocopy(const struct cell *c);

/* What a side leaves for the one that started it. */
struct ref_out {
	int status[2]; /* 0 or -errno */
	char err[2][160];
	double msgs_per_s, lat_mean_ns;
	uint64_t lat_p50_ns;
};

struct ref_side {
	const struct cell *c;
	struct ref_chan *ch;
	struct ref_out *out;
	int role;
	bool pingpong;
	bool flood;	   /* stream: this side sends (the client, or the server with dir=s2c) */
	uint64_t count;	   /* measured messages: the cell's, or with -d what the cell moved */
	void *buf;	   /* c->size bytes */
	uint64_t *samples; /* client of a ping-pong: up to REF_MAX_SAMPLES */
};

/* loop.c: CLOCK_MONOTONIC in ns; a side's whole run (placement, its
 * channel's side_open, the loop, side_close): 0, or -1 with its error in
 * s->out; ref_side_thread runs it in a thread named as the processes. */
uint64_t ref_now(void);
int ref_side_main(struct ref_side *s);
void *ref_side_thread(void *arg);

/* A spin's pause, and a look at cancellation every so often. */
static inline void ref_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

#endif
