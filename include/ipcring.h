/* SPDX-License-Identifier: MIT */
/*
 * ipcring.h - libipcring: a single-producer/single-consumer ring of
 * variable-length records in a sealed memfd, shared between two processes
 * (or two threads). Zero-copy reserve/commit and peek/release, explicit
 * batching, and blocking that spins for a bounded time and then sleeps on a
 * shared futex (or an eventfd) with a waiter-bit eventcount, so that a side
 * makes a wake syscall only when the other side has announced that it sleeps.
 *
 * Conventions:
 *  - every function returns 0 (or a count) on success and -errno on failure;
 *    the library never prints and never raises signals;
 *  - timeout_ms: 0 = non-blocking (-EAGAIN), < 0 = wait forever,
 *    > 0 = give up after that many milliseconds (-ETIMEDOUT);
 *  - -EPIPE means the peer died (or, for the producer, that the consumer
 *    closed its end); a consumer whose producer closed gracefully first gets
 *    every committed record, then 0 (end of stream);
 *  - one handle belongs to one thread at a time; the two ends may live in two
 *    processes or in two threads of one process (attach the same memfd twice).
 *
 * The shared layout, the protocol and the memory orders are described in
 * lib/ipcring/README.md.
 *
 * Trust. The two ends share memory, and anyone holding the memfd (or the
 * eventfd) can write it at any time. The library copies and validates the
 * header on attach and bounds every index and length it reads, so a broken
 * or hostile peer can make calls fail (-EBADMSG, -EPIPE, -ETIMEDOUT) but not
 * make the library read or write outside its mappings. What it cannot do:
 *  - records are handed out in place (ipcring_peek(), ipcring_read_batch()):
 *    *msg points into the shared data area, and a hostile producer can
 *    change those bytes (and the record's header) after the library
 *    validated the record and while the caller reads them. *len is the
 *    library's validated copy and [*msg, *msg + *len) stays inside the
 *    mapping, but the content is not stable: copy it out (ipcring_read(),
 *    or memcpy) before validating or trusting it, and never read a field
 *    twice expecting the same value. Likewise a hostile consumer can read
 *    (or scribble on) a reservation before it is committed;
 *  - waits. A wait with timeout_ms < 0 ends only with data (or space), end
 *    of stream, a dead peer, or an error. A peer that keeps changing the
 *    eventcount (or writing the eventfd) without publishing anything wakes
 *    the waiter each time: the wait then costs a futex (or ppoll) call and a
 *    re-check of the ring per change, i.e. it burns CPU at the rate the peer
 *    chooses, and it does not return while the peer stays alive (liveness
 *    is still checked once per poll_ms). Against a peer that is not trusted,
 *    use finite timeouts.
 */
#ifndef IPCRING_H
#define IPCRING_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IPCRING_VERSION_MAJOR	1
#define IPCRING_VERSION_MINOR	1

#if defined(__GNUC__)
#define IPCRING_MUST_CHECK	__attribute__((warn_unused_result))
#else
#define IPCRING_MUST_CHECK
#endif

struct ipcring;

enum ipcring_role {
	IPCRING_PRODUCER = 1,
	IPCRING_CONSUMER = 2,
};

/* How a side waits once its spin budget is spent (a property of the ring). */
enum ipcring_wait_mode {
	IPCRING_WAIT_FUTEX = 0,		/* FUTEX_WAIT on the shared eventcount */
	IPCRING_WAIT_EVENTFD = 1,	/* consumer sleeps on an eventfd (epoll-able);
					 * a full producer still uses the futex */
	IPCRING_WAIT_SPIN_ONLY = 2,	/* never sleep: spin, then sched_yield() */
};

/* What ipcring_set_peer() is given. */
enum ipcring_peer_kind {
	IPCRING_PEER_PIDFD = 1,		/* pidfd_open() of the peer: readable on exit */
	IPCRING_PEER_SOCKET = 2,	/* connected stream/seqpacket socket: HUP on death */
};

/* ipcring_commit() / ipcring_write() flags */
#define IPCRING_MORE		0x1u	/* batch: do not publish/wake yet; call
					 * ipcring_flush() (or commit without it) */

/* struct ipcring_opts.flags */
#define IPCRING_F_SINGLE_MAP	0x1u	/* map the data area once (the producer
					 * pads at the wrap); for sanitizers */

#define IPCRING_DEFAULT_CAPACITY	(1u << 20)
#define IPCRING_MAX_CAPACITY		(1u << 30)
#define IPCRING_DEFAULT_SPIN_NS		30000u	/* 30 us, see README */
#define IPCRING_NO_SPIN			UINT32_MAX	/* spin_ns: sleep at once */
#define IPCRING_MAX_SPIN_NS		1000000000u
#define IPCRING_DEFAULT_POLL_MS		100u	/* liveness check period while asleep */
#define IPCRING_ATTACH_POLLS		100u	/* attach deadline, in liveness periods:
						 * see ipcring_set_peer() */

/* Creation options. A zeroed struct (or NULL) gives the defaults; a field
 * left 0 takes the default written next to it. */
struct ipcring_opts {
	uint32_t capacity;		/* data bytes: a power of two, >= the page
					 * size, <= 2^30; 0 = 1 MiB */
	uint32_t align;			/* record alignment: 8 or 64; 0 = 8.
					 * 64 puts a <= 56-byte record and its
					 * header in one cache line */
	uint32_t max_record;		/* largest payload, <= capacity/4;
					 * 0 = capacity/4 */
	uint32_t release_threshold;	/* the consumer publishes its index after
					 * this many bytes (and whenever it finds
					 * the ring empty), <= capacity/2;
					 * 0 = capacity/4 */
	uint32_t spin_ns;		/* spin budget before sleeping; 0 = default
					 * (30 us), IPCRING_NO_SPIN = none */
	uint32_t wait_mode;		/* enum ipcring_wait_mode */
	uint32_t flags;			/* IPCRING_F_* */
	uint32_t start_index;		/* testing aid: initial value of both
					 * free-running indices (multiple of 64),
					 * e.g. 0xFFFF0000 to cross 2^32 early */
};

/* Per-side counters, kept in the shared header (relaxed, for diagnostics). */
struct ipcring_side_stats {
	uint64_t msgs;			/* records committed / released */
	uint64_t bytes;			/* payload bytes committed / released */
	uint64_t flushes;		/* index publications (tail / head) */
	uint64_t spins;			/* wait episodes that had to spin */
	uint64_t sleeps;		/* FUTEX_WAIT (or eventfd poll) calls */
	uint64_t wakes;			/* FUTEX_WAKE (or eventfd write) calls */
};

struct ipcring_stats {
	struct ipcring_side_stats producer;
	struct ipcring_side_stats consumer;
};

struct ipcring_info {
	uint32_t capacity;
	uint32_t max_record;
	uint32_t align;
	uint32_t hdr_size;		/* the data area starts at this offset */
	uint32_t release_threshold;
	uint32_t spin_ns;		/* this handle's spin budget */
	uint32_t poll_ms;		/* this handle's liveness period */
	uint32_t wait_mode;
	uint32_t flags;
	int role;			/* enum ipcring_role */
};

/*
 * ipcring_create - make a new ring: a memfd holding a 4 KiB header and the
 * data area, sealed against shrinking and growing (F_SEAL_SHRINK|GROW|SEAL).
 * @opts: options, or NULL for the defaults.
 * @memfd: receives the memfd (O_CLOEXEC); pass it to both ends (fork, or
 *         SCM_RIGHTS), then attach. The caller closes it.
 * @eventfd: with IPCRING_WAIT_EVENTFD, receives the eventfd both ends must
 *           attach with (O_CLOEXEC|O_NONBLOCK); else set to -1. May be NULL
 *           in the other modes.
 * The whole segment is written here (its pages allocated now, not at the
 * first attach): short of memory, this fails with -ENOMEM or -ENOSPC.
 * Returns 0, -EINVAL for a bad option, or the errno of a failed syscall.
 */
IPCRING_MUST_CHECK
int ipcring_create(const struct ipcring_opts *opts, int *memfd, int *eventfd);

/*
 * ipcring_attach - map a ring and take one role in it.
 * The header is copied and validated (magic, version, header size, capacity
 * a power of two matching the fd's size, mask, max_record, align, indices)
 * and never trusted: a bad segment gives -EBADMSG, an fd that is not a
 * sealed memfd -EINVAL, a failed syscall its -errno (-EBADF, -ENOMEM...).
 * Each role can be taken once (-EBUSY after).
 * Attaching the same memfd twice in one process shares one mapping, if the
 * two validated headers give it the same shape (header size, capacity,
 * single or double mapping); else each end gets its own.
 * A failed attach leaves the role as it found it.
 * @eventfd: the eventfd from ipcring_create() in IPCRING_WAIT_EVENTFD mode
 *           (duplicated; the caller keeps its own), else -1. It must be an
 *           eventfd (checked with fstat and /proc/self/fdinfo where /proc is
 *           mounted), open read-write, non-blocking (O_NONBLOCK, as
 *           ipcring_create() makes it) and not EFD_SEMAPHORE, else -EINVAL.
 *           The library never changes its file status flags (they belong to
 *           the open file description the caller and the peer share).
 */
IPCRING_MUST_CHECK
int ipcring_attach(struct ipcring **ring, int memfd, enum ipcring_role role,
		   int eventfd);

/*
 * ipcring_close - end this side and free the handle. The producer flushes
 * and the consumer publishes what it consumed; the side's state becomes
 * CLOSED and both eventcounts are bumped so that a sleeping peer wakes.
 * A NULL ring is a no-op. Returns 0.
 */
int ipcring_close(struct ipcring *ring);

/*
 * ipcring_set_peer - give the ring an fd that tells when the peer dies: a
 * pidfd (readable when the peer exits) or a connected unix socket (hangup).
 * The fd is duplicated. Without one, the ring opens a pidfd for the pid the
 * peer recorded in the header the first time it checks (which can race with
 * pid reuse if the peer died long before; give a pidfd to be exact).
 * Liveness is checked every poll_ms while a side waits (also when the wait
 * is woken early, at most once per poll_ms), and on every 64th failed
 * non-blocking call at most once per poll_ms.
 *
 * Attach deadline: a peer that dies before it attaches leaves nothing to
 * watch. So, without a peer fd, a side whose peer has still not attached
 * IPCRING_ATTACH_POLLS liveness periods after this side attached (100 x
 * poll_ms: 10 s by default) takes the peer for dead: its waits return
 * -EPIPE (a consumer has nothing to drain then), and the role is marked
 * dead in the segment, so that a peer attaching later gets -EBUSY. A side
 * that expects its peer later must give a peer fd (a pidfd, or the socket
 * the memfd came through), or raise poll_ms; with a peer fd there is no
 * attach deadline.
 */
int ipcring_set_peer(struct ipcring *ring, int fd, enum ipcring_peer_kind kind);

/* ipcring_mark_peer_dead - declare the peer dead from outside (e.g. after
 * SIGCHLD), waking this side; its waits then return -EPIPE (a consumer first
 * drains committed records). Safe to call from another thread. */
int ipcring_mark_peer_dead(struct ipcring *ring);

/* Per-handle tunables. spin_ns as in struct ipcring_opts (0 = ring default). */
int ipcring_set_spin_ns(struct ipcring *ring, uint32_t spin_ns);
int ipcring_set_poll_ms(struct ipcring *ring, uint32_t poll_ms);

int ipcring_info(const struct ipcring *ring, struct ipcring_info *info);
/* Both sides' counters, read from the shared header. */
int ipcring_stats(const struct ipcring *ring, struct ipcring_stats *stats);
/* The time the calling thread has spent polling a ring for its peer (the
 * spin before a sleep, and a spin-only wait's spinning and yielding), in
 * ns since the thread started: a waiting side's CPU time that is waiting,
 * not work. Per thread, no lock, no system call. (Since 1.4.) */
uint64_t ipcring_thread_poll_ns(void);

/* ---- producer ---- */

/*
 * ipcring_reserve - reserve room for a record of up to @len payload bytes
 * and return a pointer to it in *@buf (contiguous, 8-byte aligned). Fill it,
 * then ipcring_commit() or ipcring_abort(). Blocks per @timeout_ms while the
 * ring is full; flushes first. Errors: -EMSGSIZE (len > max_record),
 * -EAGAIN, -ETIMEDOUT, -EPIPE (consumer closed or died), -EBADMSG
 * (corrupted indices), -EINVAL (not the producer).
 */
IPCRING_MUST_CHECK
int ipcring_reserve(struct ipcring *ring, size_t len, void **buf, int timeout_ms);

/*
 * ipcring_commit - publish the reserved record with @len (<= reserved) bytes.
 * Without IPCRING_MORE it also flushes. Returns 0 or -EINVAL (no reservation).
 */
int ipcring_commit(struct ipcring *ring, size_t len, unsigned int flags);

/* ipcring_abort - drop the current reservation. */
int ipcring_abort(struct ipcring *ring);

/* ipcring_flush - publish committed records (one seq_cst store) and wake the
 * consumer if, and only if, it announced that it sleeps. */
int ipcring_flush(struct ipcring *ring);

/* Copying helpers: reserve + copy + commit(flags). */
IPCRING_MUST_CHECK
int ipcring_write(struct ipcring *ring, const void *buf, size_t len,
		  unsigned int flags, int timeout_ms);
IPCRING_MUST_CHECK
int ipcring_writev(struct ipcring *ring, const struct iovec *iov, int iovcnt,
		   unsigned int flags, int timeout_ms);

/* ---- consumer ---- */

/*
 * ipcring_peek - return the next record in place: *@msg, *@len. Returns 1
 * with a record, 0 at end of stream (producer closed, all drained), or
 * -EAGAIN, -ETIMEDOUT, -EPIPE (producer died; committed records come
 * first), -EBADMSG (corrupted record). The bytes stay valid until
 * ipcring_release(); peeking again without releasing returns the same record.
 * They are the producer's shared memory, not a copy: see "Trust" above.
 */
IPCRING_MUST_CHECK
int ipcring_peek(struct ipcring *ring, const void **msg, size_t *len,
		 int timeout_ms);

/*
 * ipcring_release - consume the peeked record. Space goes back to the
 * producer in batches of release_threshold bytes, at the end of
 * ipcring_read_batch(), and whenever the consumer finds the ring empty.
 */
int ipcring_release(struct ipcring *ring);

/*
 * ipcring_read - copy the next record out. Returns 1 and sets *@len, 0 at
 * end of stream, or -errno as ipcring_peek(); -EMSGSIZE when @cap is too
 * small (*@len says how much is needed; the record stays in the ring).
 */
IPCRING_MUST_CHECK
int ipcring_read(struct ipcring *ring, void *buf, size_t cap, size_t *len,
		 int timeout_ms);

/* Return non-zero to stop the batch after this record (it is consumed). */
typedef int (*ipcring_handler_fn)(void *ctx, const void *msg, size_t len);

/*
 * ipcring_read_batch - wait (per @timeout_ms) for at least one record, then
 * hand up to @max available records to @fn in place, and publish the space
 * once. Returns the number handled, 0 at end of stream, or -errno.
 */
IPCRING_MUST_CHECK
int ipcring_read_batch(struct ipcring *ring, ipcring_handler_fn fn, void *ctx,
		       unsigned int max, int timeout_ms);

/*
 * Event-loop use (IPCRING_WAIT_EVENTFD, consumer): put ipcring_fd() in
 * epoll/poll for reading. Drain with non-blocking peek/read until -EAGAIN,
 * then call ipcring_prepare_wait(): 0 means the sleep is announced and the
 * loop may block on the fd; 1 means records (or end of stream, or a dead
 * peer) are already there: drain again. The producer writes the eventfd
 * only when the consumer announced sleep. The fd does not report peer death:
 * add the peer's pidfd to the loop too, or use a loop timeout.
 */
int ipcring_fd(const struct ipcring *ring);
int ipcring_prepare_wait(struct ipcring *ring);

/* Connections by name (IPCRING_2 to _4): ipcring_listen, ipcring_connect,
 * the dispatcher and ipcring_conn_*, in a header of their own. */
#include "ipcring_ipc.h"

/* ======================================================================
 * Batches (IPCRING_2): several records with one index publication.
 * ====================================================================== */

#define IPCRING_BATCH_MAX	64u

/* One record of a batch: where it is and how long. */
struct ipcring_rec {
	void *buf;
	size_t len;
};

/*
 * ipcring_reserve_batch - reserve room for @n (1..IPCRING_BATCH_MAX)
 * records, recs[i].len bytes each, all or none; recs[i].buf receives each
 * one's place. Fill them in any order, then ipcring_commit_batch(). Blocks
 * per @timeout_ms while the ring is too full. Errors as ipcring_reserve(),
 * and -EMSGSIZE if the batch could never fit (more than half the ring).
 */
IPCRING_MUST_CHECK
int ipcring_reserve_batch(struct ipcring *ring, struct ipcring_rec *recs,
			  unsigned int n, int timeout_ms);

/*
 * ipcring_commit_batch - commit the first @n reserved records with
 * recs[i].len (<= reserved) bytes and drop the rest; publish once (unless
 * IPCRING_MORE). Returns 0 or -EINVAL.
 */
int ipcring_commit_batch(struct ipcring *ring, const struct ipcring_rec *recs,
			 unsigned int n, unsigned int flags);

/*
 * ipcring_peek_batch - wait (per @timeout_ms) for at least one record,
 * then return up to @max (<= IPCRING_BATCH_MAX) available records in place.
 * Returns the count, 0 at end of stream, or -errno as ipcring_peek(). They
 * stay valid until ipcring_release_batch(); peeking again first returns
 * the same records.
 */
IPCRING_MUST_CHECK
int ipcring_peek_batch(struct ipcring *ring, struct ipcring_rec *recs,
		       unsigned int max, int timeout_ms);

/* ipcring_release_batch - consume the first @n peeked records (the rest
 * stay, to be peeked again) and publish the space once. -EINVAL if @n is
 * more than was peeked. */
int ipcring_release_batch(struct ipcring *ring, unsigned int n);

#ifdef __cplusplus
}
#endif

#endif /* IPCRING_H */
