// SPDX-License-Identifier: MIT
/* libqb-rb: Debian libqb's shared-memory ring buffer (qb_rb_*), the ring
 * seed 003 measured, so that it runs beside ipcring. Two rings per client
 * (client->server, server->client), made by the parent with
 * QB_RB_FLAG_CREATE | QB_RB_FLAG_SHARED_PROCESS. libqb backs each ring with
 * two files, <name>-header and <name>-data; here <name> lies in a private
 * 0700 directory in /dev/shm made for the channel (an unpredictable name
 * from cleanup_unique_name), every path is registered with cleanup before
 * libqb creates it, and the files and the directory are removed as soon as
 * the rings exist: endpoints use the inherited handle and mappings (fork
 * shares them; threads share the handle), so nobody opens a ring by name
 * and even a SIGKILLed run leaves nothing in /dev/shm.
 *
 * libqb used the way qbrb.h documents it: send is qb_rb_chunk_write (which
 * posts the ring's process-shared semaphore once per message), and a full
 * ring is tried again at once (pause, then yield only once the reader seems
 * not to run); receive is qb_rb_chunk_read, which copies the chunk out and
 * reclaims it. Not in place (qb_rb_chunk_peek) on purpose: a reader that
 * skips the copy catches up with the writer, finds the semaphore at zero
 * and sleeps in the kernel, and every post then has to wake it; the
 * copying reader keeps a backlog and rarely sleeps (issue 12: see
 * docs/transports.md and bench/fidelity_libqb.sh). -O wait picks how the
 * reader waits: sem (block in sem_timedwait, sliced so that a stop request
 * is seen), poll (busy-poll with sem_trywait) or nosem
 * (QB_RB_FLAG_NO_SEMAPHORE: no semaphore at all, poll the chunk header).
 * libqb has no end-of-stream, so each ring's shared user area holds a
 * closed word (on a cache line of its own), and close() also writes a
 * zero-length chunk (real messages are never shorter than 16 bytes) that
 * wakes a reader asleep on the semaphore. Built only with libqb-dev. */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ipclab/cleanup.h"
#include "ipclab/reference.h"
#include "ipclab/transport.h"
#include "ipclab/util.h"

#ifdef HAVE_LIBQB
#include <sched.h>
#include <qb/qbrb.h>
#endif

struct qbrb_opts {
	uint64_t capacity;
	int wait;		/* QW_* */
};

enum { QW_SEM, QW_POLL, QW_NOSEM };

static const struct opt_desc qbrb_options[] = {
	{ .name = "capacity", .type = OPT_SIZE, .offset = offsetof(struct qbrb_opts, capacity),
	  .def = "1M", .min = 4096, .max = 1u << 30,
	  .help = "bytes of each ring (qb_rb_open's size: the largest message; libqb adds a margin and rounds up to pages)" },
	{ .name = "wait", .type = OPT_CHOICE, .offset = offsetof(struct qbrb_opts, wait),
	  .def = "sem", .choices = "sem|poll|nosem",
	  .help = "reader: sem_timedwait (sem), busy-poll with sem_trywait (poll), or no semaphore at all, polling the chunk header (nosem)" },
	{ .name = NULL },
};

static const struct qbrb_opts qbrb_defaults = { .capacity = 1u << 20, .wait = QW_SEM };

static const struct qbrb_opts *qbrb_opts_of(const void *opts)
{
	return opts ? opts : &qbrb_defaults;
}

static size_t qbrb_max_msg(const void *opts)
{
	return (size_t)qbrb_opts_of(opts)->capacity;
}

#ifdef HAVE_LIBQB

#define QB_SLICE_MS 100		/* longest semaphore wait between stop checks */
#define QB_CHECK_EVERY 256	/* polls between looks at closed / stop */
#define QB_YIELD_AFTER 2048	/* polls in vain before each look yields */

/* In each ring's shared user area, on a cache line of its own: libqb puts
 * the area right after the ring's semaphore, which both ends write for
 * every message, so a closed word beside it would cost the writer a cache
 * miss per send. The area is asked for one line larger than needed and the
 * word placed at the first line boundary inside it. */
struct qbrb_shared {
	_Atomic uint32_t closed;	/* either end closed */
};

#define QB_LINE 64
#define QB_USER_SIZE (2 * QB_LINE)

static struct qbrb_shared *qbrb_shared_of(qb_ringbuffer_t *rb)
{
	uintptr_t p = (uintptr_t)qb_rb_shared_user_data_get(rb);

	return (struct qbrb_shared *)((p + QB_LINE - 1) & ~(uintptr_t)(QB_LINE - 1));
}

struct qbrb_chan {
	qb_ringbuffer_t **rb;	/* 2 per client: [2 id] c2s, [2 id + 1] s2c */
	unsigned nrb;
	int wait;
	int dir_handle;		/* cleanup handle of dir while it exists, or -1 */
	char dir[96];		/* private directory in /dev/shm for the files */
};

struct tp_endpoint {
	qb_ringbuffer_t *tx, *rx;
	struct qbrb_shared *txs, *rxs;
	int wait;
	bool eof;
	const _Atomic int *stop;	/* the cell's stop word (tp_config) */
};

static const char *const qbrb_wait_names[] = { "sem", "poll", "nosem" };

/* libqb is not instrumented: TSan cannot see its ring indices order the
 * reader's reclaim before the writer's reuse (nor, with nosem, the commit
 * before the read). Tell it, from the points where libqb has decided. */
#ifdef IPCLAB_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#endif

static inline void qbrb_hb_acquire(void *rb)
{
#ifdef IPCLAB_TSAN
	__tsan_acquire(rb);
#endif
}

static inline void qbrb_hb_release(void *rb)
{
#ifdef IPCLAB_TSAN
	__tsan_release(rb);
#endif
}

static ssize_t qbrb_write(qb_ringbuffer_t *rb, const void *buf, size_t len)
{
#ifdef IPCLAB_TSAN
	void *p = qb_rb_chunk_alloc(rb, len);	/* qb_rb_chunk_write's body, split */
	int r;

	if (!p)
		return -errno;
	qbrb_hb_acquire(rb);
	memcpy(p, buf, len);
	qbrb_hb_release(rb);
	r = qb_rb_chunk_commit(rb, len);
	return r < 0 ? r : (ssize_t)len;
#else
	return qb_rb_chunk_write(rb, buf, len);
#endif
}

/* A private 0700 directory in /dev/shm (the tmpfs libqb keeps its rings
 * on), made exclusively under an unpredictable name, so that nobody else
 * can plant or guess a file in it. Given an absolute name, libqb creates
 * <name>-header and <name>-data right there (O_EXCL) and never falls back
 * to another directory, as it does for a bare name it finds taken. */
static int qbrb_mkdir(struct qbrb_chan *qc, char *err, size_t errlen)
{
	char name[64];
	int e;

	cleanup_unique_name(name, sizeof(name), "ipclab-qb");
	snprintf(qc->dir, sizeof(qc->dir), "/dev/shm/%s", name);
	qc->dir_handle = cleanup_add(CL_DIR, qc->dir);
	if (qc->dir_handle < 0)
		return errf(err, errlen, ENOMEM, "libqb-rb: cleanup table full");
	if (mkdir(qc->dir, 0700) == 0)
		return 0;
	e = errno;
	cleanup_forget(qc->dir_handle);
	qc->dir_handle = -1;
	return errf(err, errlen, e, "libqb-rb: mkdir %s: %s (libqb needs a writable tmpfs "
		    "on /dev/shm)", qc->dir, strerror(e));
}

/* Ring i: register both files, create, and unlink them at once: endpoints
 * use the handle and mappings they inherit, nobody opens a ring by name. */
static int qbrb_make(struct tp_channel *ch, struct qbrb_chan *qc, unsigned i, char *err,
		     size_t errlen)
{
	const struct qbrb_opts *o = qbrb_opts_of(ch->cfg->opts);
	uint32_t flags = QB_RB_FLAG_CREATE | QB_RB_FLAG_SHARED_PROCESS;
	char base[128], hdr[144], data[144];
	int h_hdr, h_data, e;

	snprintf(base, sizeof(base), "%s/r%u", qc->dir, i);
	snprintf(hdr, sizeof(hdr), "%s-header", base);
	snprintf(data, sizeof(data), "%s-data", base);
	h_hdr = cleanup_add(CL_PATH, hdr);
	h_data = cleanup_add(CL_PATH, data);
	if (h_hdr < 0 || h_data < 0) {
		cleanup_forget(h_hdr);
		cleanup_forget(h_data);
		return errf(err, errlen, ENOMEM, "libqb-rb: cleanup table full");
	}
	if (o->wait == QW_NOSEM)
		flags |= QB_RB_FLAG_NO_SEMAPHORE;
	errno = 0;
	qc->rb[i] = qb_rb_open(base, (size_t)o->capacity, flags, QB_USER_SIZE);
	e = errno ? errno : EIO;
	cleanup_run_one(h_hdr);
	cleanup_run_one(h_data);
	if (!qc->rb[i])
		return errf(err, errlen, e, "libqb-rb: qb_rb_open(%s): %s%s", base, strerror(e),
			    e == ENOSPC ? " (/dev/shm is full: free space there, or raise its size: "
					  "mount -o remount,size=... /dev/shm)" : "");
	return 0;
}

static int qbrb_create(struct tp_channel *ch, char *err, size_t errlen)
{
	const struct qbrb_opts *o = qbrb_opts_of(ch->cfg->opts);
	struct qbrb_chan *qc = calloc(1, sizeof(*qc));
	unsigned n = ch->cfg->clients ? ch->cfg->clients : 1;
	int r;

	if (!qc)
		return errf(err, errlen, ENOMEM, "libqb-rb: out of memory");
	ch->priv = qc;
	qc->wait = o->wait;
	qc->dir_handle = -1;
	if (ch->cfg->msg_size > o->capacity)
		return errf(err, errlen, EMSGSIZE, "libqb-rb: a %zu-byte message exceeds the ring "
			    "(%llu bytes); raise -O capacity", ch->cfg->msg_size,
			    (unsigned long long)o->capacity);
	qc->rb = calloc(2 * n, sizeof(*qc->rb));
	if (!qc->rb)
		return errf(err, errlen, ENOMEM, "libqb-rb: out of memory");
	r = qbrb_mkdir(qc, err, errlen);
	for (; !r && qc->nrb < 2 * n; qc->nrb++)
		r = qbrb_make(ch, qc, qc->nrb, err, errlen);
	/* empty now: remove it (destroy's qb_rb_close finds nothing to unlink) */
	cleanup_run_one(qc->dir_handle);
	qc->dir_handle = -1;
	if (r)
		return r;
	tp_setting(ch, "wait", "%s", qbrb_wait_names[o->wait]);
	tp_setting(ch, "capacity_bytes", "%llu", (unsigned long long)o->capacity);
	/* what libqb made of it: the free space of an empty ring */
	tp_setting(ch, "ring_bytes", "%zd", qb_rb_space_free(qc->rb[0]));
	tp_setting(ch, "semaphore", "%s", o->wait == QW_NOSEM ? "none" : "posix-pshared");
	tp_setting(ch, "rings", "%u", qc->nrb);
	return 0;
}

static void qbrb_destroy(struct tp_channel *ch)
{
	struct qbrb_chan *qc = ch->priv;

	if (!qc)
		return;
	for (unsigned i = 0; i < qc->nrb; i++)
		if (qc->rb[i])
			qb_rb_close(qc->rb[i]);
	free(qc->rb);
	free(qc);
	ch->priv = NULL;
}

static int qbrb_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		     struct tp_endpoint **out, char *err, size_t errlen)
{
	struct qbrb_chan *qc = ch->priv;
	struct tp_endpoint *ep;
	qb_ringbuffer_t *c2s, *s2c;

	if (2 * id + 1 >= qc->nrb)
		return errf(err, errlen, EINVAL, "libqb-rb: client id %u out of range", id);
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return errf(err, errlen, ENOMEM, "libqb-rb: out of memory");
	c2s = qc->rb[2 * id];
	s2c = qc->rb[2 * id + 1];
	ep->tx = role == TP_CLIENT ? c2s : s2c;
	ep->rx = role == TP_CLIENT ? s2c : c2s;
	ep->txs = qbrb_shared_of(ep->tx);
	ep->rxs = qbrb_shared_of(ep->rx);
	ep->wait = qc->wait;
	ep->stop = ch->cfg->stop;
	*out = ep;
	return 0;
}

/* A wait in vain: 1 to look again, 0 at end of stream, -EINTR on a stop.
 * Polling modes spin and look at closed/stop every QB_CHECK_EVERY polls. */
static int qbrb_idle(struct tp_endpoint *ep, uint32_t *polls)
{
	if (ep->wait != QW_SEM) {
		cpu_relax();
		if (++*polls % QB_CHECK_EVERY)
			return 1;
		if (*polls >= QB_YIELD_AFTER) {
			sched_yield();
			*polls = QB_YIELD_AFTER;	/* a multiple of the check period */
		}
	}
	if (stop_requested(ep->stop))
		return -EINTR;
	/* the closer's last chunk was committed before closed was set */
	if (atomic_load(&ep->rxs->closed) && qb_rb_space_used(ep->rx) == 0)
		return 0;
	return 1;
}

static ssize_t qbrb_send(struct tp_endpoint *ep, const void *buf, size_t len)
{
	/* the closed word has a line of its own: a local hit until a close */
	if (atomic_load_explicit(&ep->txs->closed, memory_order_acquire))
		return -EPIPE;
	for (uint32_t tries = 1;; tries++) {
		ssize_t n = qbrb_write(ep->tx, buf, len);

		if (n != -EAGAIN)
			return n < 0 || (size_t)n == len ? n : -EIO;
		/* full (libqb never blocks a writer): try again at once, as
		 * qbrb.h's writer does; look at stop and closed now and then,
		 * and yield once the reader seems not to be running */
		cpu_relax();
		if (tries % QB_CHECK_EVERY)
			continue;
		if (stop_requested(ep->stop))
			return -EINTR;
		if (atomic_load_explicit(&ep->txs->closed, memory_order_acquire))
			return -EPIPE;
		if (tries >= QB_YIELD_AFTER) {
			sched_yield();
			tries = QB_YIELD_AFTER;	/* a multiple of the check period */
		}
	}
}

#ifdef IPCLAB_TSAN
/* For ThreadSanitizer only: qb_rb_chunk_read split in two (wait and look,
 * then copy and reclaim) so that the order libqb keeps can be told. */
static ssize_t qbrb_peek(struct tp_endpoint *ep, const void **msg, size_t len)
{
	int timeout = ep->wait == QW_SEM ? QB_SLICE_MS : 0;
	uint32_t polls = 0;
	ssize_t n;
	void *d;
	int r;

	if (ep->eof)
		return 0;
	for (;;) {
		d = NULL;
		n = qb_rb_chunk_peek(ep->rx, &d, timeout);
		/* without a semaphore, libqb says "no committed chunk here" so */
		if (n == -EBADMSG && ep->wait == QW_NOSEM)
			n = 0;
		else if (n < 0)
			return n;
		if (d) {
			if (n == 0) {		/* the close marker */
				ep->eof = true;
				return 0;
			}
			qbrb_hb_acquire(ep->rx);
			*msg = d;
			return n;
		}
		r = qbrb_idle(ep, &polls);
		if (r <= 0)
			return r;
	}
}

static void qbrb_release(struct tp_endpoint *ep)
{
	qbrb_hb_release(ep->rx);
	qb_rb_chunk_reclaim(ep->rx);
}
#endif

/* The plain documented read: qb_rb_chunk_read copies the chunk out and
 * reclaims it, after the semaphore wait (a slice, so that a stop is seen),
 * or after a sem_trywait (poll), or with no semaphore at all (nosem).
 * Not in place on purpose: see the head of the file. */
static ssize_t qbrb_recv(struct tp_endpoint *ep, void *buf, size_t len)
{
#ifdef IPCLAB_TSAN
	return tp_recv_via_peek(ep, buf, len, qbrb_peek, qbrb_release);
#else
	int timeout = ep->wait == QW_SEM ? QB_SLICE_MS : 0;
	uint32_t polls = 0;
	void *d;
	int r;

	if (ep->eof)
		return 0;
	for (;;) {
		ssize_t n = qb_rb_chunk_read(ep->rx, buf, len, timeout);

		if (n > 0)
			return n;
		if (n == 0) {			/* the close marker */
			ep->eof = true;
			return 0;
		}
		if (n == -ENOBUFS) {
			/* longer than buf: libqb kept it and gave its count
			 * back; drop it, as every transport does */
			if (qb_rb_chunk_peek(ep->rx, &d, 0) > 0)
				qb_rb_chunk_reclaim(ep->rx);
			return -EMSGSIZE;
		}
		/* nothing yet: the slice ran out (sem), the semaphore was
		 * zero (poll), or no committed chunk (nosem, or a count
		 * without one) */
		if (n != -ETIMEDOUT && n != -EAGAIN && n != -EBADMSG && n != -ENOMSG)
			return n;
		r = qbrb_idle(ep, &polls);
		if (r <= 0)
			return r;
	}
#endif
}

static void qbrb_close(struct tp_endpoint *ep)
{
	atomic_store(&ep->txs->closed, 1);
	atomic_store(&ep->rxs->closed, 1);
	/* wakes a reader asleep on the semaphore; a full ring gets none, and
	 * its reader sees closed after its next slice */
	(void)qbrb_write(ep->tx, "", 0);
	free(ep);
}

static int qbrb_probe(const struct tp_config *cfg, char *why, size_t len)
{
	return 0;
}

#else /* !HAVE_LIBQB: registered, and skipped with the reason */

struct tp_endpoint {
	int unused;
};

static int qbrb_probe(const struct tp_config *cfg, char *why, size_t len)
{
	return errf(why, len, ENOTSUP, "built without libqb-dev (apt-get install libqb-dev)");
}

static int qbrb_create(struct tp_channel *ch, char *err, size_t errlen)
{
	return qbrb_probe(ch->cfg, err, errlen);
}

static void qbrb_destroy(struct tp_channel *ch)
{
}

static int qbrb_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		     struct tp_endpoint **out, char *err, size_t errlen)
{
	return qbrb_probe(ch->cfg, err, errlen);
}

static ssize_t qbrb_send(struct tp_endpoint *ep, const void *buf, size_t len)
{
	return -ENOTSUP;
}

static ssize_t qbrb_recv(struct tp_endpoint *ep, void *buf, size_t len)
{
	return -ENOTSUP;
}

static void qbrb_close(struct tp_endpoint *ep)
{
}

#endif /* HAVE_LIBQB */

const struct transport tp_libqb_rb = {
	.name = "libqb-rb",
	.summary = "libqb's shared-memory ring buffer (qb_rb_*), a pair per client; -O wait=sem|poll|nosem",
	.caps = TP_DGRAM | TP_MULTI_CLIENT | TP_NAMED,	/* files, briefly */
	.options = qbrb_options,
	.group = TP_GROUP_LIBRARY,
	.opts_size = sizeof(struct qbrb_opts),
	.max_msg = qbrb_max_msg, .max_msg_limit = "-O capacity",
	.probe = qbrb_probe,
	.create = qbrb_create,
	.open = qbrb_open,
	.send = qbrb_send,
	.recv = qbrb_recv,
	.close = qbrb_close,
	.destroy = qbrb_destroy,
#ifdef HAVE_LIBQB
	.reference = &ref_libqb_rb,
#endif
};
