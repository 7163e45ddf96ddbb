// SPDX-License-Identifier: MIT
/* cma: cross-memory attach, the single copy that MPI's shared-memory
 * transports use for large messages. The server does every copy: it reads
 * a client's message straight out of the client's buffer
 * (process_vm_readv) and writes its own messages straight into the buffer
 * the client's recv posted (process_vm_writev). So only the server needs
 * ptrace permission over its clients, never the other way round: each
 * client names the server as its ptracer (PR_SET_PTRACER, what Yama's
 * scope 1 asks for), and the server checks at open that it may read the
 * client, refusing with the fix in one line when it may not.
 *
 * The notification is a futex doorbell on a shared state word per
 * direction: IDLE -> POSTED (the client published address and length) ->
 * CLAIMED (the server copies) -> DONE (the client takes the result) ->
 * IDLE. A message is a rendezvous: send returns once the copy is done, as
 * the single-copy path of an MPI library does. A client that stops while
 * posted withdraws its post (POSTED -> IDLE) unless the server has already
 * claimed it, then it waits for the copy to end: the server never touches
 * a buffer its owner has given up. Waits are futex sleeps of CMA_SLICE_MS,
 * between which the stop request and the peer (a pidfd: readable once it
 * died) are looked at. */
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ipclab/transport.h"
#include "ipclab/util.h"

#define CMA_SLICE_MS 100
#define CMA_OPEN_NAPS 10000	/* 1 ms naps while waiting for the peer's open */
#define YAMA_SCOPE "/proc/sys/kernel/yama/ptrace_scope"

enum { CMA_IDLE, CMA_POSTED, CMA_CLAIMED, CMA_DONE };

/* One direction: the client's buffer and what happened to it. */
struct cma_dir {
	_Atomic uint32_t state;	/* the futex word */
	uint32_t pad;
	uint64_t addr, len;	/* the client's buffer (c2s: message; s2c: room) */
	int64_t result;		/* s2c: bytes written, or -errno */
} __attribute__((aligned(64)));

/* Per client id, in a shared mapping made by create. */
struct cma_ctl {
	struct cma_dir c2s, s2c;
	_Atomic int32_t pid[2];		/* by role, set by each side's open */
	_Atomic uint32_t closed[2];	/* by role */
	_Atomic int32_t ready;		/* the client published pid, probe, ptracer */
	uint64_t probe;			/* a word of the client's the server reads first */
} __attribute__((aligned(64)));

struct cma_chan {
	struct cma_ctl *ctl;
	unsigned n;
};

struct tp_endpoint {
	struct cma_ctl *ctl;
	enum tp_role role;
	bool threads;
	pid_t peer;
	int pidfd;		/* the peer process (process mode), else -1 */
	uint64_t probe;		/* client: the word the server's check reads */
	const _Atomic int *stop;	/* the cell's stop word (tp_config) */
};

static inline bool cma_stopping(const struct tp_endpoint *ep)
{
	return stop_requested(ep->stop);
}

static long cma_futex(_Atomic uint32_t *w, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, w, op, val, ts, NULL, 0);
}

static void cma_wake(_Atomic uint32_t *w)
{
	cma_futex(w, FUTEX_WAKE, INT32_MAX, NULL);
}

static bool cma_peer_dead(const struct tp_endpoint *ep)
{
	struct pollfd p = { .fd = ep->pidfd, .events = POLLIN };

	if (ep->pidfd >= 0)
		return poll(&p, 1, 0) > 0;
	/* no pidfd (ENOSYS, e.g. under valgrind): gone once reaped */
	return !ep->threads && ep->peer != getpid() && kill(ep->peer, 0) < 0 && errno == ESRCH;
}

/* Sleep while *w == cur (one slice at most): 0 to look again, -EINTR on a
 * stop request, -ECONNRESET once the peer has died. */
static int cma_wait(struct tp_endpoint *ep, _Atomic uint32_t *w, uint32_t cur)
{
	const struct timespec slice = { 0, CMA_SLICE_MS * 1000000L };
	long r = cma_futex(w, FUTEX_WAIT, cur, &slice);

	if (cma_stopping(ep))
		return -EINTR;
	if (r < 0 && (errno == ETIMEDOUT || errno == EINTR) && cma_peer_dead(ep))
		return -ECONNRESET;
	return 0;
}

static int cma_yama_scope(void)
{
	char buf[16];
	uint64_t v;

	if (read_text_file(YAMA_SCOPE, buf, sizeof(buf)) < 0 || parse_u64(buf, &v))
		return -1;
	return (int)v;
}

static int cma_create(struct tp_channel *ch, char *err, size_t errlen)
{
	unsigned n = ch->cfg->clients ? ch->cfg->clients : 1;
	struct cma_chan *c = calloc(1, sizeof(*c));
	int scope = cma_yama_scope();

	if (!c)
		return errf(err, errlen, ENOMEM, "cma: out of memory");
	ch->priv = c;
	c->ctl = mmap(NULL, n * sizeof(*c->ctl), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		      -1, 0);
	if (c->ctl == MAP_FAILED) {
		c->ctl = NULL;
		return errf(err, errlen, errno, "cma: mmap: %s", strerror(errno));
	}
	c->n = n;
	tp_setting(ch, "copy", "c2s process_vm_readv, s2c process_vm_writev (by the server)");
	tp_setting(ch, "handshake", "rendezvous: send returns after the copy");
	tp_setting(ch, "doorbell", "futex");
	if (scope < 0)
		tp_setting(ch, "yama_ptrace_scope", "absent");
	else
		tp_setting(ch, "yama_ptrace_scope", "%d", scope);
	tp_setting(ch, "ptracer", "%s", ch->cfg->threads ? "none needed (one process)" :
		   "each client names the server (PR_SET_PTRACER)");
	return 0;
}

static void cma_destroy(struct tp_channel *ch)
{
	struct cma_chan *c = ch->priv;

	if (!c)
		return;
	if (c->ctl)
		munmap(c->ctl, c->n * sizeof(*c->ctl));
	free(c);
	ch->priv = NULL;
}

/* The one-line refusal, with what to change. */
static int cma_refused(int e, unsigned id, pid_t pid, char *err, size_t errlen)
{
	int scope = cma_yama_scope();

	if (scope >= 3)
		return errf(err, errlen, e,
			    "cma: reading client %u's memory (pid %d) refused: kernel.yama.ptrace_scope is 3 (no attach at all, until reboot); boot with it lower, or use another transport",
			    id, (int)pid);
	if (scope == 2)
		return errf(err, errlen, e,
			    "cma: reading client %u's memory (pid %d) refused: kernel.yama.ptrace_scope is 2 (admin only); run as root (CAP_SYS_PTRACE) or: sysctl kernel.yama.ptrace_scope=1",
			    id, (int)pid);
	if (scope == 1)
		return errf(err, errlen, e,
			    "cma: reading client %u's memory (pid %d) refused (%s) although it named the server its ptracer; run as root (CAP_SYS_PTRACE) or: sysctl kernel.yama.ptrace_scope=0",
			    id, (int)pid, strerror(e));
	return errf(err, errlen, e,
		    "cma: reading client %u's memory (pid %d) refused (%s): ptrace permission needed; run both sides as one user, or as root (CAP_SYS_PTRACE)",
		    id, (int)pid, strerror(e));
}

/* Wait for the peer's open to publish what we need (bounded naps). */
static int cma_await(const struct tp_endpoint *ep, _Atomic int32_t *w, unsigned id, const char *what, char *err, size_t errlen)
{
	for (unsigned i = 0; !atomic_load_explicit(w, memory_order_acquire); i++) {
		if (cma_stopping(ep))
			return errf(err, errlen, EINTR, "cma: stopped while waiting for %s %u", what, id);
		if (i >= CMA_OPEN_NAPS)
			return errf(err, errlen, ETIMEDOUT, "cma: %s %u did not open within %d s", what,
				    id, CMA_OPEN_NAPS / 1000);
		usleep(1000);
	}
	return 0;
}

static int cma_pidfd(struct tp_endpoint *ep, char *err, size_t errlen)
{
	ep->pidfd = -1;
	if (ep->threads || ep->peer == getpid())
		return 0;
	ep->pidfd = (int)syscall(SYS_pidfd_open, ep->peer, 0);
	if (ep->pidfd < 0 && errno == ENOSYS)
		return 0;	/* cma_peer_dead falls back to kill(pid, 0) */
	if (ep->pidfd < 0)
		return errf(err, errlen, errno, "cma: pidfd_open(%d): %s%s", (int)ep->peer,
			    strerror(errno), errno == EMFILE ? "; raise it: ulimit -n" : "");
	return 0;
}

static int cma_open_client(struct tp_endpoint *ep, unsigned id, char *err, size_t errlen)
{
	struct cma_ctl *k = ep->ctl;
	int ret;

	atomic_store(&k->pid[TP_CLIENT], (int32_t)getpid());
	ret = cma_await(ep, &k->pid[TP_SERVER], id, "the server for client", err, errlen);
	if (ret)
		return ret;
	ep->peer = atomic_load(&k->pid[TP_SERVER]);
	/* Yama scope 1: a process may be read by its ancestors and by the
	 * one it names; the server is a sibling. EINVAL: no Yama here. */
	if (ep->peer != getpid() && prctl(PR_SET_PTRACER, ep->peer, 0, 0, 0) < 0 &&
	    errno != EINVAL)
		return errf(err, errlen, errno, "cma: client %u: PR_SET_PTRACER: %s", id,
			    strerror(errno));
	ep->probe = 0x69706c6162636d61ull;	/* "iplabcma" */
	k->probe = (uint64_t)(uintptr_t)&ep->probe;
	atomic_store_explicit(&k->ready, 1, memory_order_release);
	return cma_pidfd(ep, err, errlen);
}

static int cma_open_server(struct tp_endpoint *ep, unsigned id, char *err, size_t errlen)
{
	struct cma_ctl *k = ep->ctl;
	uint64_t word = 0;
	struct iovec l = { &word, sizeof(word) }, r;
	int ret;

	atomic_store(&k->pid[TP_SERVER], (int32_t)getpid());
	ret = cma_await(ep, &k->ready, id, "client", err, errlen);
	if (ret)
		return ret;
	ep->peer = atomic_load(&k->pid[TP_CLIENT]);
	r = (struct iovec){ (void *)(uintptr_t)k->probe, sizeof(word) };
	if (process_vm_readv(ep->peer, &l, 1, &r, 1, 0) != (ssize_t)sizeof(word)) {
		if (errno == EPERM || errno == EACCES)
			return cma_refused(errno, id, ep->peer, err, errlen);
		return errf(err, errlen, errno, "cma: reading client %u's memory (pid %d): %s", id,
			    (int)ep->peer, strerror(errno));
	}
	if (word != 0x69706c6162636d61ull)
		return errf(err, errlen, EPROTO, "cma: client %u's probe word reads %#llx", id,
			    (unsigned long long)word);
	return cma_pidfd(ep, err, errlen);
}

static int cma_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		    struct tp_endpoint **out, char *err, size_t errlen)
{
	struct cma_chan *c = ch->priv;
	struct tp_endpoint *ep;
	int ret;

	if (id >= c->n)
		return errf(err, errlen, EINVAL, "cma: client id %u out of range (%u clients)", id,
			    c->n);
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return errf(err, errlen, ENOMEM, "cma: out of memory");
	ep->ctl = &c->ctl[id];
	ep->role = role;
	ep->threads = ch->cfg->threads;
	ep->pidfd = -1;
	ep->stop = ch->cfg->stop;
	ret = role == TP_SERVER ? cma_open_server(ep, id, err, errlen) :
				  cma_open_client(ep, id, err, errlen);
	if (ret) {
		if (ep->pidfd >= 0)
			close(ep->pidfd);
		free(ep);
		return ret;
	}
	*out = ep;
	return 0;
}

/* The server's copy, to or from the client's buffer (partial copies go on). */
static ssize_t cma_copy(struct tp_endpoint *ep, void *buf, uint64_t addr, size_t len, bool write)
{
	size_t done = 0;

	while (done < len) {
		struct iovec l = { (char *)buf + done, len - done };
		struct iovec r = { (void *)(uintptr_t)(addr + done), len - done };
		ssize_t n = write ? process_vm_writev(ep->peer, &l, 1, &r, 1, 0) :
				    process_vm_readv(ep->peer, &l, 1, &r, 1, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == ESRCH ? -ECONNRESET : -errno;
		if (n == 0)
			return -EFAULT;
		done += (size_t)n;
	}
	return (ssize_t)len;
}

/* Server: wait for the client's post on d and claim it. 1 claimed, 0 the
 * client closed, or -errno. */
static int cma_claim(struct tp_endpoint *ep, struct cma_dir *d)
{
	for (;;) {
		uint32_t s = CMA_POSTED;
		int r;

		if (atomic_compare_exchange_strong_explicit(&d->state, &s, CMA_CLAIMED,
							    memory_order_acquire,
							    memory_order_relaxed))
			return 1;
		if (atomic_load_explicit(&ep->ctl->closed[TP_CLIENT], memory_order_acquire))
			return 0;
		r = cma_wait(ep, &d->state, s);
		if (r)
			return r;
	}
}

static void cma_finish(struct cma_dir *d)
{
	atomic_store_explicit(&d->state, CMA_DONE, memory_order_release);
	cma_wake(&d->state);
}

/* Client: post buffer (addr, len) on d and wait for the server's copy. The
 * result, 0 when the server closed first (nothing copied), or -errno. */
static int64_t cma_post(struct tp_endpoint *ep, struct cma_dir *d, const void *buf, size_t len)
{
	d->addr = (uint64_t)(uintptr_t)buf;
	d->len = len;
	d->result = (int64_t)len;
	atomic_store_explicit(&d->state, CMA_POSTED, memory_order_release);
	cma_wake(&d->state);
	for (;;) {
		uint32_t s = atomic_load_explicit(&d->state, memory_order_acquire);
		bool server_closed;
		int r = 0;

		if (s == CMA_DONE) {
			atomic_store_explicit(&d->state, CMA_IDLE, memory_order_relaxed);
			return d->result;
		}
		server_closed = atomic_load_explicit(&ep->ctl->closed[TP_SERVER],
						     memory_order_acquire);
		if (!server_closed)
			r = cma_wait(ep, &d->state, s);
		if (!server_closed && !r)
			continue;
		/* withdraw, unless the server is copying: then wait it out */
		s = CMA_POSTED;
		if (atomic_compare_exchange_strong(&d->state, &s, CMA_IDLE))
			return server_closed ? 0 : r;
		if (r == -ECONNRESET)
			return r;	/* died while copying: nothing touches buf now */
		while (atomic_load(&d->state) == CMA_CLAIMED && !cma_peer_dead(ep))
			cma_futex(&d->state, FUTEX_WAIT, CMA_CLAIMED,
				  &(struct timespec){ 0, CMA_SLICE_MS * 1000000L });
		if (atomic_load(&d->state) == CMA_DONE) {
			atomic_store(&d->state, CMA_IDLE);
			return r ? r : d->result;
		}
		return r ? r : -ECONNRESET;
	}
}

static ssize_t cma_send(struct tp_endpoint *ep, const void *buf, size_t len)
{
	struct cma_dir *d;
	ssize_t n;
	int r;

	if (len == 0)
		return -EINVAL;	/* a zero-length result means the server closed */
	if (ep->role == TP_CLIENT) {
		int64_t res;

		if (atomic_load(&ep->ctl->closed[TP_SERVER]))
			return -EPIPE;
		res = cma_post(ep, &ep->ctl->c2s, buf, len);
		return res == 0 ? -EPIPE : (ssize_t)res;
	}
	d = &ep->ctl->s2c;
	r = cma_claim(ep, d);
	if (r <= 0)
		return r == 0 || r == -ECONNRESET ? -EPIPE : r;
	n = len > d->len ? -EMSGSIZE : cma_copy(ep, (void *)buf, d->addr, len, true);
	d->result = n;
	cma_finish(d);
	return n;
}

static ssize_t cma_recv(struct tp_endpoint *ep, void *buf, size_t len)
{
	struct cma_dir *d;
	ssize_t n;
	int r;

	if (ep->role == TP_CLIENT)
		return (ssize_t)cma_post(ep, &ep->ctl->s2c, buf, len);
	d = &ep->ctl->c2s;
	r = cma_claim(ep, d);
	if (r <= 0)
		return r;
	n = d->len > len ? -EMSGSIZE : cma_copy(ep, buf, d->addr, d->len, false);
	d->result = n;
	cma_finish(d);
	return n;
}

static void cma_close(struct tp_endpoint *ep)
{
	if (!ep)
		return;
	atomic_store_explicit(&ep->ctl->closed[ep->role], 1, memory_order_release);
	cma_wake(&ep->ctl->c2s.state);
	cma_wake(&ep->ctl->s2c.state);
	if (ep->pidfd >= 0)
		close(ep->pidfd);
	free(ep);
}

const struct transport tp_cma = {
	.name = "cma",
	.summary = "cross-memory attach: the server copies straight from/to the client's buffer (process_vm_readv/writev), futex doorbell, one copy",
	.caps = TP_DGRAM | TP_MULTI_CLIENT,
	.group = TP_GROUP_KERNEL,
	.create = cma_create,
	.open = cma_open,
	.send = cma_send,
	.recv = cma_recv,
	.close = cma_close,
	.destroy = cma_destroy,
};
