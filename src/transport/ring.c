// SPDX-License-Identifier: MIT
/* ring, ring-spin, ring-eventfd: ipclab's transports on libipcring (the
 * shared-memory SPSC ring of lib/ipcring/). Per client two rings in sealed
 * memfds, client->server and server->client; the parent creates them, each
 * endpoint attaches its producer and consumer ends in open(). The three
 * transports share every hook and differ only in how a side waits once its
 * spin budget is spent: a futex (ring), sched_yield (ring-spin) or an
 * eventfd (ring-eventfd). Receives are in place (peek/release).
 *
 * The endpoint operations ring-ipc does alike (reserve, commit, send, peek,
 * release and their waits) are ring_ep.h's: every blocking library call is
 * bounded by RING_EP_SLICE_MS, after which a stop request gives -EINTR (the
 * library retries its waits on EINTR by design, so a signal alone does not
 * end them). What is this file's: in process mode each
 * endpoint hands the ring a pidfd of its peer (pids pass through a small
 * shared page), so a SIGKILLed peer is reported as -EPIPE within a poll
 * period (100 ms) instead of a hang.
 *
 * -O batch=N publishes every Nth message. The sender then reserves its
 * messages in runs of up to N (at most IPCRING_BATCH_MAX) with
 * ipcring_reserve_batch(), hands out one place per reserve and commits the
 * run with one ipcring_commit_batch() (IPCRING_MORE until the Nth): the
 * ring's bookkeeping is paid once per run, not per message. Where a run
 * does not fit, a message is reserved alone, as with batch=1 (and the
 * library flushes before it blocks on a full ring). A batch is never left
 * unpublished while its sender waits: this transport commits the run so
 * far and flushes before an endpoint receives, and close() does so at the
 * end of a stream.
 *
 * -O batch=auto (the default) never holds a message back: a message sent
 * alone (ping-pong, --rate, --think, the general loop) is published at
 * once, as with batch=1, and a closed-loop stream, whose sender has the
 * next messages ready at once, moves them through reserve_n/commit_n as
 * runs of up to TP_BATCH_MAX, each published at its commit. */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ipcring.h"
#include "ipclab/reference.h"
#include "ipclab/polling.h"
#include "ipclab/transport.h"
#include "ipclab/util.h"
#include "ring_ep.h"

#define RING_MAX_CLIENTS 1024

struct ring_opts {
	uint64_t capacity;
	int align;		/* choice index: 0 = 8, 1 = 64 */
	uint64_t spin_ns;
	uint64_t batch;
};

/* align defaults to 8 for every mode: measured here, 64 made the 32 B and
 * 64 B ping-pong slower (the pre-zeroed next header then always lands on a
 * fresh line, one more line moving between the CPUs per message). */
static const struct opt_desc ring_options[] = {
	{ .name = "capacity", .type = OPT_SIZE, .offset = offsetof(struct ring_opts, capacity),
	  .def = "1M", .min = 4096, .max = 1u << 30, .flags = OPT_POW2,
	  .help = "data bytes of each ring: a power of two; the largest message is a quarter" },
	{ .name = "align", .type = OPT_CHOICE, .offset = offsetof(struct ring_opts, align),
	  .def = "8", .choices = "8|64",
	  .help = "record alignment: 64 puts a <= 56-byte message and its header in one line" },
	{ .name = "spin-ns", .type = OPT_DURATION, .offset = offsetof(struct ring_opts, spin_ns),
	  .def = "30us", .min = 0, .max = 1000000000,
	  .help = "spin budget before sleeping (ring-spin: before yielding); 0 = none" },
	{ .name = "batch", .type = OPT_UINT, .offset = offsetof(struct ring_opts, batch),
	  .def = "auto", .min = 1, .max = 65536, .zero_word = "auto",
	  .help = "auto: a closed-loop stream moves the messages ready at once as one run, "
		  "published at its end, and any other message is published at once; "
		  "N: publish every Nth message (paced or think runs wait for N)" },
	{ .name = NULL },
};

static const struct ring_opts ring_defaults = {
	.capacity = 1u << 20, .align = 0, .spin_ns = 30000, .batch = 0,	/* auto */
};

/* Rings of one client id, in the channel's fd table. */
enum { RF_C2S, RF_S2C, RF_C2S_EFD, RF_S2C_EFD, RF_PER_CLIENT };

/* The shared page: each side's pid, so that the other can watch it. */
struct ring_pids {
	_Atomic int32_t pid[2];		/* [TP_SERVER], [TP_CLIENT] */
};

struct ring_chan {
	struct ipcring_opts ro;
	uint32_t batch;			/* 0: auto */
	unsigned nclients;
	bool threads;
	int *fd;			/* RF_PER_CLIENT per client, -1 when none */
	struct ring_pids *pids;		/* MAP_SHARED, one per client */
	size_t pids_len;
};

struct tp_endpoint {
	struct ring_ep re;		/* first: re.watch gets &ep->re; its runs too */
	bool run_open;			/* re.run_i's place is handed out, not committed */
	bool peer_known;		/* the rings watch the peer (or need not) */
	int pidfd;			/* the peer's, or -1 */
	_Atomic int32_t *peer_pid;
};

static const struct ring_opts *ring_opts_of(const void *opts)
{
	return opts ? opts : &ring_defaults;
}

static size_t ring_max_msg(const void *opts)
{
	return (size_t)(ring_opts_of(opts)->capacity / 4);
}

static const char *ring_mode_name(uint32_t mode)
{
	return mode == IPCRING_WAIT_SPIN_ONLY ? "spin-only" :
	       mode == IPCRING_WAIT_EVENTFD ? "eventfd" : "futex";
}

/* Library options from ours; every field explicit, so nothing is implied. */
static int ring_make_opts(struct tp_channel *ch, uint32_t mode, struct ipcring_opts *ro,
			  char *err, size_t errlen)
{
	const struct ring_opts *o = ring_opts_of(ch->cfg->opts);
	uint64_t cap = o->capacity;

	if (cap & (cap - 1))
		return errf(err, errlen, EINVAL, "%s: -O capacity=%llu is not a power of two "
			    "(use e.g. 1M or 4M)", ch->tp->name, (unsigned long long)cap);
	if (ch->cfg->msg_size > cap / 4)
		return errf(err, errlen, EMSGSIZE, "%s: a %zu-byte message exceeds max_record "
			    "(capacity/4 = %llu); raise -O capacity", ch->tp->name,
			    ch->cfg->msg_size, (unsigned long long)cap / 4);
	if (ch->cfg->clients > RING_MAX_CLIENTS)
		return errf(err, errlen, EINVAL, "%s: at most %d clients", ch->tp->name,
			    RING_MAX_CLIENTS);
	*ro = (struct ipcring_opts){
		.capacity = (uint32_t)cap,
		.align = o->align ? 64 : 8,
		.max_record = (uint32_t)(cap / 4),
		.release_threshold = (uint32_t)(cap / 4),
		.spin_ns = o->spin_ns ? (uint32_t)o->spin_ns : IPCRING_NO_SPIN,
		.wait_mode = mode,
	};
	return 0;
}

static void ring_settings(struct tp_channel *ch, const struct ring_chan *rc)
{
	const struct ipcring_opts *ro = &rc->ro;

	tp_setting(ch, "mode", "%s", ring_mode_name(ro->wait_mode));
	tp_setting(ch, "capacity_bytes", "%u", ro->capacity);
	tp_setting(ch, "align", "%u", ro->align);
	tp_setting(ch, "max_record_bytes", "%u", ro->max_record);
	tp_setting(ch, "release_threshold_bytes", "%u", ro->release_threshold);
	tp_setting(ch, "spin_ns", "%u", ro->spin_ns == IPCRING_NO_SPIN ? 0 : ro->spin_ns);
	if (rc->batch)
		tp_setting(ch, "batch", "%u", rc->batch);
	else
		tp_setting(ch, "batch", "auto");
	tp_setting(ch, "rings", "%u", 2 * rc->nclients);
}

static int ring_create(struct tp_channel *ch, uint32_t mode, char *err, size_t errlen)
{
	struct ring_chan *rc = calloc(1, sizeof(*rc));
	unsigned nfd;
	int r;

	if (!rc)
		return errf(err, errlen, ENOMEM, "%s: out of memory", ch->tp->name);
	ch->priv = rc;
	rc->nclients = ch->cfg->clients ? ch->cfg->clients : 1;
	rc->threads = ch->cfg->threads;
	rc->batch = (uint32_t)ring_opts_of(ch->cfg->opts)->batch;
	r = ring_make_opts(ch, mode, &rc->ro, err, errlen);
	if (r)
		return r;
	nfd = rc->nclients * RF_PER_CLIENT;
	rc->fd = malloc(nfd * sizeof(*rc->fd));
	/* before anything can fail: destroy() closes every fd that is not -1 */
	for (unsigned i = 0; rc->fd && i < nfd; i++)
		rc->fd[i] = -1;
	rc->pids_len = (rc->nclients * sizeof(struct ring_pids) + 4095) & ~(size_t)4095;
	rc->pids = mmap(NULL, rc->pids_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			-1, 0);
	if (rc->pids == MAP_FAILED)
		rc->pids = NULL;
	if (!rc->fd || !rc->pids)
		return errf(err, errlen, ENOMEM, "%s: out of memory", ch->tp->name);
	for (unsigned i = 0; i < nfd; i += RF_PER_CLIENT)
		for (unsigned d = 0; d < 2; d++) {
			r = ipcring_create(&rc->ro, &rc->fd[i + RF_C2S + d],
					   &rc->fd[i + RF_C2S_EFD + d]);
			if (r)
				return errf(err, errlen, -r, "%s: ipcring_create: %s%s", ch->tp->name,
					    strerror(-r), r == -EMFILE ?
					    " (raise the open-file limit: ulimit -n)" : "");
		}
	ring_settings(ch, rc);
	return 0;
}

static void ring_destroy(struct tp_channel *ch)
{
	struct ring_chan *rc = ch->priv;

	if (!rc)
		return;
	for (unsigned i = 0; rc->fd && i < rc->nclients * RF_PER_CLIENT; i++)
		if (rc->fd[i] >= 0)
			close(rc->fd[i]);
	free(rc->fd);
	if (rc->pids)
		munmap(rc->pids, rc->pids_len);
	free(rc);
	ch->priv = NULL;
}

/* The ring accepted exactly what was asked (it validates on attach). */
static int ring_check_info(struct tp_channel *ch, const struct ipcring *r, char *err,
			   size_t errlen)
{
	const struct ipcring_opts *ro = &((const struct ring_chan *)ch->priv)->ro;
	struct ipcring_info in;

	if (ipcring_info(r, &in))
		return errf(err, errlen, EINVAL, "%s: ipcring_info failed", ch->tp->name);
	if (in.capacity != ro->capacity || in.align != ro->align ||
	    in.max_record != ro->max_record || in.wait_mode != ro->wait_mode ||
	    in.release_threshold != ro->release_threshold || in.spin_ns != ro->spin_ns)
		return errf(err, errlen, EPROTO, "%s: the ring reports capacity %u align %u "
			    "max_record %u spin_ns %u, not what was asked", ch->tp->name,
			    in.capacity, in.align, in.max_record, in.spin_ns);
	return 0;
}

static int ring_attach_ends(struct tp_channel *ch, struct tp_endpoint *ep, enum tp_role role,
			    unsigned id, char *err, size_t errlen)
{
	const struct ring_chan *rc = ch->priv;
	const int *f = rc->fd + (size_t)id * RF_PER_CLIENT;
	/* the client produces on c2s and consumes s2c; the server the reverse */
	int tx = role == TP_CLIENT ? RF_C2S : RF_S2C, rx = role == TP_CLIENT ? RF_S2C : RF_C2S;
	int r;

	r = ipcring_attach(&ep->re.tx, f[tx], IPCRING_PRODUCER, f[tx + RF_C2S_EFD]);
	if (!r)
		r = ipcring_attach(&ep->re.rx, f[rx], IPCRING_CONSUMER, f[rx + RF_C2S_EFD]);
	if (r)
		return errf(err, errlen, -r, "%s: ipcring_attach: %s", ch->tp->name, strerror(-r));
	r = ring_check_info(ch, ep->re.tx, err, errlen);
	return r ? r : ring_check_info(ch, ep->re.rx, err, errlen);
}

/* Commit the messages of the reserved run that were committed to us
 * (dropping the places not handed out); publish unless @more. */
static void ring_free_ep(struct tp_endpoint *ep)
{
	if (ep->re.tx)
		(void)ring_ep_run_end(&ep->re, 0);
	if (ep->pidfd >= 0)
		close(ep->pidfd);
	(void)ipcring_close(ep->re.tx);
	(void)ipcring_close(ep->re.rx);
	free(ep);
}

static void ring_watch(struct ring_ep *re, bool slice_over);

static int ring_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		     struct tp_endpoint **out, char *err, size_t errlen)
{
	struct ring_chan *rc = ch->priv;
	struct tp_endpoint *ep;
	int r;

	if (id >= rc->nclients)
		return errf(err, errlen, EINVAL, "%s: client id %u out of range (%u clients)",
			    ch->tp->name, id, rc->nclients);
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return errf(err, errlen, ENOMEM, "%s: out of memory", ch->tp->name);
	ep->pidfd = -1;
	polling_source(ipcring_thread_poll_ns);	/* its spin is waiting, not work */
	ep->re.stop = ch->cfg->stop;
	ep->re.watch = ring_watch;
	r = ring_attach_ends(ch, ep, role, id, err, errlen);
	if (r) {
		ring_free_ep(ep);
		return r;
	}
	/* auto: one message at a time is published at once (batch 1); a run
	 * of reserve_n/commit_n at its commit */
	ep->re.batch = rc->batch ? rc->batch : 1;
	ep->re.auto_runs = !rc->batch;
	/* threads share one pid: nothing to watch */
	ep->peer_known = rc->threads;
	ep->peer_pid = &rc->pids[id].pid[role == TP_SERVER ? TP_CLIENT : TP_SERVER];
	atomic_store(&rc->pids[id].pid[role], (int32_t)getpid());
	*out = ep;
	return 0;
}

static void ring_mark_dead(struct tp_endpoint *ep)
{
	(void)ipcring_mark_peer_dead(ep->re.tx);
	(void)ipcring_mark_peer_dead(ep->re.rx);
}

/* Slow path only: once the peer has opened, give both rings a pidfd of it
 * (the library polls it every 100 ms while it sleeps on a futex). */
static void ring_watch_peer(struct tp_endpoint *ep)
{
	pid_t pid;

	if (ep->peer_known)
		return;
	pid = atomic_load_explicit(ep->peer_pid, memory_order_acquire);
	if (!pid)
		return;		/* not opened yet: the next wait looks again */
	ep->peer_known = true;
	if (pid == getpid())
		return;
	ep->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (ep->pidfd < 0) {
		if (errno == ESRCH)
			ring_mark_dead(ep);
		return;		/* else: the ring's own pidfd of the header's pid */
	}
	(void)ipcring_set_peer(ep->re.tx, ep->pidfd, IPCRING_PEER_PIDFD);
	(void)ipcring_set_peer(ep->re.rx, ep->pidfd, IPCRING_PEER_PIDFD);
}

/* ring_ep's watch hook: before a wait, and after each slice of it in vain
 * (then also a look at the peer ourselves: a spin-only wait of one slice
 * ends before the library's own check). */
static void ring_watch(struct ring_ep *re, bool slice_over)
{
	struct tp_endpoint *ep = (struct tp_endpoint *)re;
	struct pollfd pfd = { .fd = ep->pidfd, .events = POLLIN };

	ring_watch_peer(ep);
	if (slice_over && ep->pidfd >= 0 && poll(&pfd, 1, 0) > 0)
		ring_mark_dead(ep);	/* exited: the next wait ends in -EPIPE */
}

/* -O batch: the next place of the reserved run, reserving a run of the
 * messages left to the batch's publication when none is open; 0, or
 * -EAGAIN when no run fits now (then the caller reserves one alone). */
static int ring_run_next(struct tp_endpoint *ep, size_t len, void **buf)
{
	if (ep->re.run_i == ep->re.run_n || ep->re.run[ep->re.run_i].len != len) {
		unsigned n = ep->re.batch - ep->re.pending;

		if (ring_ep_run_end(&ep->re, IPCRING_MORE))
			return -EAGAIN;
		if (n > IPCRING_BATCH_MAX)
			n = IPCRING_BATCH_MAX;
		if (n < 2)
			return -EAGAIN;
		ep->re.run_len = 0;	/* reserve_n's lengths: not these */
		for (unsigned i = 0; i < n; i++)
			ep->re.run[i].len = len;
		if (ipcring_reserve_batch(ep->re.tx, ep->re.run, n, 0))
			return -EAGAIN;
		ep->re.run_n = n;
	}
	*buf = ep->re.run[ep->re.run_i].buf;
	ep->run_open = true;
	return 0;
}

/* Zero-copy send: the pattern writes the message where the ring keeps it. */
static ssize_t ring_reserve(struct tp_endpoint *ep, void **buf, size_t len)
{
	if (ep->re.batch > 1 && ring_run_next(ep, len, buf) == 0)
		return (ssize_t)len;
	return ring_ep_reserve(&ep->re, buf, len);
}

static ssize_t ring_commit(struct tp_endpoint *ep, size_t len)
{
	int r;

	if (ep->run_open) {
		ep->run_open = false;
		ep->re.run[ep->re.run_i++].len = len;
		r = 0;
		if (++ep->re.pending >= ep->re.batch)
			r = ring_ep_run_end(&ep->re, 0);
		else if (ep->re.run_i == ep->re.run_n)
			r = ring_ep_run_end(&ep->re, IPCRING_MORE);
		return r ? r : (ssize_t)len;
	}
	return ring_ep_commit(&ep->re, len);
}

static ssize_t ring_send(struct tp_endpoint *ep, const void *buf, size_t len)
{
	return ring_ep_send(ep, buf, len, ring_reserve, ring_commit);
}

static ssize_t ring_peek(struct tp_endpoint *ep, const void **msg, size_t len)
{
	(void)len;
	if (ep->re.pending) {
		/* about to wait for the peer: what we sent must be visible first */
		if (ep->re.run_n)
			(void)ring_ep_run_end(&ep->re, 0);
		ring_ep_flush(&ep->re);
	}
	return ring_ep_peek(&ep->re, msg);	/* 0: the peer closed, all was read */
}

static void ring_release(struct tp_endpoint *ep)
{
	ring_ep_release(&ep->re);
}

static ssize_t ring_reserve_n(struct tp_endpoint *ep, void **bufs, size_t len, unsigned max)
{
	return ring_ep_reserve_n(&ep->re, bufs, len, max);
}

static int ring_commit_n(struct tp_endpoint *ep, unsigned n, size_t len)
{
	return ring_ep_commit_n(&ep->re, n, len);
}

static ssize_t ring_peek_n(struct tp_endpoint *ep, const void **msgs, size_t *lens,
			   unsigned max)
{
	return ring_ep_peek_n(&ep->re, msgs, lens, max);
}

static void ring_release_n(struct tp_endpoint *ep, unsigned n)
{
	ring_ep_release_n(&ep->re, n);
}

static bool ring_runs(const struct tp_endpoint *ep)
{
	return ring_ep_runs(&ep->re);
}

static ssize_t ring_recv(struct tp_endpoint *ep, void *buf, size_t len)
{
	return tp_recv_via_peek(ep, buf, len, ring_peek, ring_release);
}

/* Publishes what was batched and consumed, marks both ends CLOSED and wakes
 * a peer asleep on either ring: it drains, then reads end of stream. */
static void ring_close(struct tp_endpoint *ep)
{
	if (ep->re.peeked)
		ring_ep_release(&ep->re);
	ring_free_ep(ep);
}

#define RING_CAPS (TP_DGRAM | TP_MULTI_CLIENT | TP_ZEROCOPY | TP_ZEROCOPY_SEND)

#define RING_TRANSPORT(id, tpname, text, mode, opts, extra_caps)			\
	static int create_##id(struct tp_channel *ch, char *err, size_t errlen)	\
	{										\
		return ring_create(ch, mode, err, errlen);				\
	}										\
	const struct transport tp_##id = {						\
		.name = tpname, .summary = text, .caps = RING_CAPS | (extra_caps),	\
		.group = TP_GROUP_RING,							\
		.options = opts, .opts_size = sizeof(struct ring_opts),		\
		.max_msg = ring_max_msg, .max_msg_limit = "-O capacity (a message is at most a quarter of the ring)", .create = create_##id, .open = ring_open,	\
		.send = ring_send, .recv = ring_recv, .peek = ring_peek,		\
		.release = ring_release, .reserve = ring_reserve,			\
		.commit = ring_commit, .reserve_n = ring_reserve_n,			\
		.commit_n = ring_commit_n, .peek_n = ring_peek_n,			\
		.release_n = ring_release_n, .runs = ring_runs, .close = ring_close,	\
		.destroy = ring_destroy, .reference = &ref_##id,			\
	}

RING_TRANSPORT(ring, "ring",
	       "libipcring SPSC ring pair per client: spin, then sleep on a futex; -O capacity, align, spin-ns, batch",
	       IPCRING_WAIT_FUTEX, ring_options, 0);
RING_TRANSPORT(ring_spin, "ring-spin",
	       "libipcring, spin-only: spin, then sched_yield, never sleep",
	       IPCRING_WAIT_SPIN_ONLY, ring_options, TP_SPINS);
RING_TRANSPORT(ring_eventfd, "ring-eventfd",
	       "libipcring, the reader sleeps on an eventfd (the event-loop mode) instead of a futex",
	       IPCRING_WAIT_EVENTFD, ring_options, 0);
