// SPDX-License-Identifier: MIT
/* The library references: libqb's ring (qb_rb_chunk_write to send,
 * qb_rb_chunk_read to receive, as qbrb.h documents them; -O capacity and
 * wait as the cell) and libipcring's pair of rings (reserve, commit, peek,
 * release; -O capacity, align, spin-ns, batch and the transport's wait
 * mode as the cell; with batch, runs of reservations committed at once,
 * as the transport makes them). No closed word, no end-of-stream marker, no stop
 * flag, no peer watch: only the calls that move a message, the waits
 * ending now and then so that a thread can be cancelled. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipcring.h"
#include "ipclab/msg.h"
#include "ipclab/cleanup.h"
#include "ipclab/experiment.h"
#include "ipclab/reference.h"
#include "ref_int.h"

#ifdef HAVE_LIBQB
#include <qb/qbrb.h>
#endif

#define REF_SLICE_MS 100     /* a library wait's longest slice */
#define REF_CANCEL_EVERY 256 /* retries between looks at cancellation */
#define REF_YIELD_AFTER 2048 /* retries in vain before each look also yields, as the cells */

static int nomem(char *err, size_t errlen)
{
	snprintf(err, errlen, "reference: out of memory");
	return -ENOMEM;
}

#ifdef HAVE_LIBQB

/* One retry of a spin: a pause; every REF_CANCEL_EVERY retries a look at
 * cancellation, and a yield once REF_YIELD_AFTER went in vain. */
static void retry(uint32_t *n)
{
	ref_relax();
	if (++*n % REF_CANCEL_EVERY)
		return;
	pthread_testcancel();
	if (*n >= REF_YIELD_AFTER) {
		sched_yield();
		*n = REF_YIELD_AFTER;
	}
}

enum { QW_SEM, QW_POLL, QW_NOSEM }; /* the order of -O wait's choices */

struct ref_qb {
	qb_ringbuffer_t *rb[2]; /* client -> server, server -> client */
	int wait;
};

static int qb_send(struct ref_chan *ch, int role, const void *buf, size_t n, const char **what)
{
	struct ref_qb *q = ch->priv;
	qb_ringbuffer_t *rb = q->rb[role == REF_CLIENT ? 0 : 1];
	uint32_t tries = 0;
	ssize_t w;

	while ((w = qb_rb_chunk_write(rb, buf, n)) < 0) {
		if (w != -EAGAIN) {
			*what = "qb_rb_chunk_write";
			return (int)w;
		}
		retry(&tries); /* full: again at once */
	}
	return 0;
}

static int qb_recv(struct ref_chan *ch, int role, void *buf, size_t n, const char **what)
{
	struct ref_qb *q = ch->priv;
	qb_ringbuffer_t *rb = q->rb[role == REF_CLIENT ? 1 : 0];
	int timeout = q->wait == QW_SEM ? 1000 : 0;
	uint32_t polls = 0;

	for (;;) {
		ssize_t r = qb_rb_chunk_read(rb, buf, n, timeout);

		if (r > 0)
			return 0;
		if (r != -ETIMEDOUT && r != -EAGAIN && r != -EBADMSG && r != -ENOMSG) {
			*what = "qb_rb_chunk_read";
			return r ? (int)r : -EPROTO;
		}
		if (q->wait == QW_SEM)
			pthread_testcancel();
		else
			retry(&polls);
	}
}

static void qb_destroy(struct ref_chan *ch)
{
	struct ref_qb *q = ch->priv;

	for (int i = 0; q && i < 2; i++)
		if (q->rb[i])
			qb_rb_close(q->rb[i]);
	free(q);
	ch->priv = NULL;
}

static const struct ref_ops qb_ops = {
	.send = qb_send,
	.recv = qb_recv,
	.destroy = qb_destroy,
};

/* Both rings in a private directory in /dev/shm, their files removed as
 * soon as they exist: the sides use the handles they inherit. */
static int qb_make(struct ref_qb *q, size_t cap, char *err, size_t errlen)
{
	char name[64], dir[96], base[128], path[2][160];
	int hd, e = 0;

	cleanup_unique_name(name, sizeof(name), "ipclab-ref-qb");
	snprintf(dir, sizeof(dir), "/dev/shm/%s", name);
	if ((hd = cleanup_add(CL_DIR, dir)) < 0)
		return nomem(err, errlen);
	if (mkdir(dir, 0700)) {
		e = errno;
		cleanup_forget(hd);
		snprintf(err, errlen, "reference: mkdir %s: %s", dir, strerror(e));
		return -e;
	}
	for (int i = 0; !e && i < 2; i++) {
		int h[2];

		snprintf(base, sizeof(base), "%s/r%d", dir, i);
		snprintf(path[0], sizeof(path[0]), "%s-header", base);
		snprintf(path[1], sizeof(path[1]), "%s-data", base);
		h[0] = cleanup_add(CL_PATH, path[0]);
		h[1] = cleanup_add(CL_PATH, path[1]);
		errno = 0;
		if (h[0] >= 0 && h[1] >= 0)
			q->rb[i] =
				qb_rb_open(base, cap,
					   QB_RB_FLAG_CREATE | QB_RB_FLAG_SHARED_PROCESS |
						   (q->wait == QW_NOSEM ? QB_RB_FLAG_NO_SEMAPHORE : 0),
					   0);
		if (!q->rb[i])
			e = errno ? errno : EIO;
		for (int k = 0; k < 2; k++)
			if (h[k] >= 0)
				cleanup_run_one(h[k]);
	}
	cleanup_run_one(hd);
	if (e)
		snprintf(err, errlen, "reference: qb_rb_open: %s", strerror(e));
	return -e;
}

static int libqb_open(struct ref_chan *ch, const struct cell *c, char *err, size_t errlen)
{
	struct ref_qb *q = calloc(1, sizeof(*q));

	ch->kind = REF_OPS;
	ch->ops = &qb_ops;
	ch->priv = q;
	if (!q)
		return nomem(err, errlen);
	q->wait = (int)ref_tp_opt(c, "wait");
	return qb_make(q, (size_t)ref_tp_opt(c, "capacity"), err, errlen);
}

static const char *const m_qb[] = { "capacity", "wait", NULL };

const struct tp_reference ref_libqb_rb = { .open = libqb_open, .mirrored = m_qb };

#endif /* HAVE_LIBQB: without it, libqb-rb has no reference */

/* ---- libipcring ---- */

/* One side's own state, on lines of its own: with thread endpoints both
 * sides share the struct, and a counter the sender bumps every message
 * beside what the receiver reads would bounce a line between the CPUs. */
struct ref_ring_side {
	alignas(64) struct ipcring *tx, *rx; /* attached by the side itself */
	uint32_t pending;
	/* -O batch: runs of places, as the transport reserves them */
	unsigned run_n, run_i;
	struct ipcring_rec run[IPCRING_BATCH_MAX];
};

struct ref_ring {
	int memfd[2], efd[2]; /* client -> server, server -> client */
	uint32_t batch;
	bool auto_runs; /* -O batch=auto: send_n's runs, each published */
	bool zerocopy;
	struct ref_ring_side side[2]; /* [role] */
};

/* Commit the run's messages written so far; publish unless IPCRING_MORE. */
static int ring_run_end(struct ref_ring *g, int role, unsigned int flags)
{
	unsigned n = g->side[role].run_i;

	if (!g->side[role].run_n)
		return 0;
	g->side[role].run_n = g->side[role].run_i = 0;
	if (!(flags & IPCRING_MORE))
		g->side[role].pending = 0;
	return ipcring_commit_batch(g->side[role].tx, g->side[role].run, n, flags);
}

/* One message into the reserved run (reserving one when none is open):
 * 0, an error, or -EAGAIN when no run fits (then it is sent alone). */
static int ring_run_send(struct ref_ring *g, int role, size_t len)
{
	struct ipcring_rec *run = g->side[role].run;
	unsigned i = g->side[role].run_i;
	unsigned char *p;

	if (i == g->side[role].run_n || run[i].len != len) {
		unsigned k = g->batch - g->side[role].pending;

		if (ring_run_end(g, role, IPCRING_MORE))
			return -EAGAIN;
		if (k > IPCRING_BATCH_MAX)
			k = IPCRING_BATCH_MAX;
		if (k < 2)
			return -EAGAIN;
		for (unsigned j = 0; j < k; j++)
			run[j].len = len;
		if (ipcring_reserve_batch(g->side[role].tx, run, k, 0))
			return -EAGAIN;
		g->side[role].run_n = k;
		i = 0;
	}
	p = run[i].buf;
	memset(p, (unsigned char)g->side[role].pending, len);
	g->side[role].run_i = i + 1;
	if (++g->side[role].pending >= g->batch)
		return ring_run_end(g, role, 0);
	if (g->side[role].run_i == g->side[role].run_n)
		return ring_run_end(g, role, IPCRING_MORE);
	return 0;
}

static int ring_side_open(struct ref_chan *ch, int role, const char **what)
{
	struct ref_ring *g = ch->priv;
	int t = role == REF_CLIENT ? 0 : 1, r;

	*what = "ipcring_attach";
	r = ipcring_attach(&g->side[role].tx, g->memfd[t], IPCRING_PRODUCER, g->efd[t]);
	return r ? r : ipcring_attach(&g->side[role].rx, g->memfd[!t], IPCRING_CONSUMER, g->efd[!t]);
}

static void ring_side_close(struct ref_chan *ch, int role)
{
	struct ref_ring *g = ch->priv;

	if (g->side[role].tx)
		(void)ring_run_end(g, role, 0);
	(void)ipcring_close(g->side[role].tx);
	(void)ipcring_close(g->side[role].rx);
	g->side[role].tx = g->side[role].rx = NULL;
}

/* In place, as the cell: the message written whole where the ring keeps
 * it (every byte stored, as ipclab's cell copies a payload into place). */
static int ring_send(struct ref_chan *ch, int role, const void *buf, size_t n, const char **what)
{
	struct ref_ring *g = ch->priv;
	void *p;
	int r;

	(void)buf;
	if (g->batch > 1) {
		r = ring_run_send(g, role, n);
		if (r != -EAGAIN) {
			if (r)
				*what = "ipcring_commit_batch";
			return r;
		}
	}
	r = ipcring_reserve(g->side[role].tx, n, &p, 0);
	while (r == -EAGAIN || r == -ETIMEDOUT) {
		pthread_testcancel();
		r = ipcring_reserve(g->side[role].tx, n, &p, REF_SLICE_MS);
	}
	if (r) {
		*what = "ipcring_reserve";
		return r;
	}
	memset(p, (unsigned char)g->side[role].pending, n);
	if (++g->side[role].pending < g->batch)
		return ipcring_commit(g->side[role].tx, n, IPCRING_MORE);
	g->side[role].pending = 0;
	return ipcring_commit(g->side[role].tx, n, 0);
}

static int ring_recv(struct ref_chan *ch, int role, void *buf, size_t n, const char **what)
{
	struct ref_ring *g = ch->priv;
	const void *msg;
	size_t len;
	int r;

	if (g->side[role].pending) { /* what was batched, out before waiting */
		(void)ring_run_end(g, role, 0);
		g->side[role].pending = 0;
		(void)ipcring_flush(g->side[role].tx);
	}
	r = ipcring_peek(g->side[role].rx, &msg, &len, 0);
	while (r == -EAGAIN || r == -ETIMEDOUT) {
		pthread_testcancel();
		r = ipcring_peek(g->side[role].rx, &msg, &len, REF_SLICE_MS);
	}
	if (r <= 0) {
		*what = "ipcring_peek";
		return r ? r : -EPIPE;
	}
	if (!g->zerocopy)
		memcpy(buf, msg, len < n ? len : n);
	else
		msg_read_in_place(msg, len);
	return ipcring_release(g->side[role].rx);
}

/* Up to @max messages as one run (at most what the batch has left before
 * its publication), reserved and committed at once, as the transport's
 * reserve_n/commit_n; one alone where no run fits. */
static int ring_send_n(struct ref_chan *ch, int role, size_t n, unsigned max, const char **what)
{
	struct ref_ring *g = ch->priv;
	struct ref_ring_side *sd = &g->side[role];
	unsigned k = g->auto_runs ? max : g->batch - sd->pending;
	bool publish;
	int r;

	if (sd->run_n && ring_run_end(g, role, IPCRING_MORE)) {
		*what = "ipcring_commit_batch";
		return -EPROTO;
	}
	if (k > max)
		k = max;
	if (k > IPCRING_BATCH_MAX)
		k = IPCRING_BATCH_MAX;
	if (k >= 2) {
		for (unsigned j = 0; j < k; j++)
			sd->run[j].len = n;
		if (ipcring_reserve_batch(sd->tx, sd->run, k, 0) == 0) {
			for (unsigned j = 0; j < k; j++)
				memset(sd->run[j].buf, (unsigned char)j, n);
			sd->pending += k;
			publish = g->auto_runs || sd->pending >= g->batch;
			if (publish)
				sd->pending = 0;
			r = ipcring_commit_batch(sd->tx, sd->run, k, publish ? 0 : IPCRING_MORE);
			if (r)
				*what = "ipcring_commit_batch";
			return r ? r : (int)k;
		}
	}
	r = ring_send(ch, role, NULL, n, what);
	return r ? r : 1;
}

/* What is committed, up to @max, with one peek_batch and one release_batch
 * (copied out unless the cell receives in place); when nothing is, the
 * wait of ring_recv. */
static int ring_recv_n(struct ref_chan *ch, int role, void *buf, size_t n, unsigned max,
		       const char **what)
{
	struct ref_ring *g = ch->priv;
	struct ref_ring_side *sd = &g->side[role];
	struct ipcring_rec *got = sd->run;	/* a receiving side reserves no runs */
	const void *msg;
	size_t len;
	int k, r;

	if (sd->pending) {
		(void)ring_run_end(g, role, 0);
		sd->pending = 0;
		(void)ipcring_flush(sd->tx);
	}
	k = ipcring_peek_batch(sd->rx, got, max, 0);
	if (k == -EAGAIN) {
		r = ipcring_peek(sd->rx, &msg, &len, REF_SLICE_MS);
		while (r == -EAGAIN || r == -ETIMEDOUT) {
			pthread_testcancel();
			r = ipcring_peek(sd->rx, &msg, &len, REF_SLICE_MS);
		}
		if (r <= 0) {
			*what = "ipcring_peek";
			return r ? r : -EPIPE;
		}
		k = ipcring_peek_batch(sd->rx, got, max, 0);
	}
	if (k <= 0) {
		*what = "ipcring_peek_batch";
		return k ? k : -EPIPE;
	}
	for (int j = 0; j < k; j++) {
		if (!g->zerocopy)
			memcpy(buf, got[j].buf, got[j].len < n ? got[j].len : n);
		else
			msg_read_in_place(got[j].buf, got[j].len);
	}
	r = ipcring_release_batch(sd->rx, (unsigned)k);
	if (r)
		*what = "ipcring_release_batch";
	return r ? r : k;
}

static void ring_destroy(struct ref_chan *ch)
{
	struct ref_ring *g = ch->priv;

	if (!g)
		return;
	for (int i = 0; i < 2; i++) {
		ring_side_close(ch, i); /* a cancelled thread's */
		if (g->memfd[i] >= 0)
			close(g->memfd[i]);
		if (g->efd[i] >= 0)
			close(g->efd[i]);
	}
	free(g);
	ch->priv = NULL;
}

static const struct ref_ops ring_ops = {
	.side_open = ring_side_open,
	.send = ring_send,
	.recv = ring_recv,
	.side_close = ring_side_close,
	.destroy = ring_destroy,
};

/* -O batch > 1: a stream in runs, as the cell's (see transport.h's runs) */
static const struct ref_ops ring_ops_runs = {
	.side_open = ring_side_open,
	.send = ring_send,
	.recv = ring_recv,
	.send_n = ring_send_n,
	.recv_n = ring_recv_n,
	.side_close = ring_side_close,
	.destroy = ring_destroy,
};

/* The ring's, in the wait mode of its transport (ring, ring-spin,
 * ring-eventfd: the wrappers below). */
static int ring_open(struct ref_chan *ch, const struct cell *c, uint32_t mode, char *err, size_t errlen)
{
	/* its sides' lines aligned: not calloc's 16 bytes */
	struct ref_ring *g = aligned_alloc(64, (sizeof(*g) + 63) & ~(size_t)63);
	uint32_t cap = (uint32_t)ref_tp_opt(c, "capacity"), spin = (uint32_t)ref_tp_opt(c, "spin-ns");
	struct ipcring_opts ro = {
		.capacity = cap,
		.align = ref_tp_opt(c, "align") ? 64 : 8,
		.max_record = cap / 4,
		.release_threshold = cap / 4,
		.spin_ns = spin ? spin : IPCRING_NO_SPIN,
		.wait_mode = mode,
	};

	ch->kind = REF_OPS;
	ch->ops = &ring_ops;
	ch->priv = g;
	if (!g)
		return nomem(err, errlen);
	memset(g, 0, sizeof(*g));
	g->memfd[0] = g->memfd[1] = g->efd[0] = g->efd[1] = -1;
	g->batch = (uint32_t)ref_tp_opt(c, "batch");
	g->auto_runs = !g->batch;
	g->batch = g->batch ? g->batch : 1;
	if (g->batch > 1 || g->auto_runs)
		ch->ops = &ring_ops_runs;
	g->zerocopy = ref_zerocopy(c);
	for (int i = 0; i < 2; i++) {
		int r = ipcring_create(&ro, &g->memfd[i], &g->efd[i]);

		if (r) {
			snprintf(err, errlen, "reference: ipcring_create: %s", strerror(-r));
			return r;
		}
	}
	return 0;
}

static int ring_open_futex(struct ref_chan *ch, const struct cell *c, char *err, size_t errlen)
{
	return ring_open(ch, c, IPCRING_WAIT_FUTEX, err, errlen);
}

static int ring_open_spin(struct ref_chan *ch, const struct cell *c, char *err, size_t errlen)
{
	return ring_open(ch, c, IPCRING_WAIT_SPIN_ONLY, err, errlen);
}

static int ring_open_eventfd(struct ref_chan *ch, const struct cell *c, char *err, size_t errlen)
{
	return ring_open(ch, c, IPCRING_WAIT_EVENTFD, err, errlen);
}

static const char *const m_ring[] = { "capacity", "align", "spin-ns", "batch", NULL };

const struct tp_reference ref_ring = { .open = ring_open_futex, .mirrored = m_ring };
const struct tp_reference ref_ring_spin = { .open = ring_open_spin, .mirrored = m_ring };
const struct tp_reference ref_ring_eventfd = { .open = ring_open_eventfd, .mirrored = m_ring };
