// SPDX-License-Identifier: MIT
/*
 * segment.c - creating the sealed memfd, validating a segment on attach
 * (never trusting it), taking a role, closing, and the per-handle settings.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "internal.h"

#define SEALS_REQUIRED	(F_SEAL_SHRINK | F_SEAL_GROW)

static bool is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

static bool spin_ok(uint32_t spin_ns)
{
	return spin_ns == IPCRING_NO_SPIN || spin_ns <= IPCRING_MAX_SPIN_NS;
}

/* Fill @cfg from @o with defaults; -EINVAL on a bad option. */
static int cfg_from_opts(struct ring_cfg *cfg, const struct ipcring_opts *o,
			 long page)
{
	static const struct ipcring_opts defaults;
	uint32_t cap;

	if (!o)
		o = &defaults;
	cap = o->capacity ? o->capacity : IPCRING_DEFAULT_CAPACITY;
	memset(cfg, 0, sizeof(*cfg));
	cfg->magic = RING_MAGIC;
	cfg->version = RING_VERSION;
	cfg->hdr_size = page > (long)RING_HDR_MIN ? (uint32_t)page : RING_HDR_MIN;
	cfg->capacity = cap;
	cfg->mask = cap - 1;
	cfg->max_record = o->max_record ? o->max_record : cap / 4;
	cfg->align = o->align ? o->align : 8;
	cfg->flags = o->flags;
	cfg->wait_mode = o->wait_mode;
	cfg->spin_ns = o->spin_ns ? o->spin_ns : IPCRING_DEFAULT_SPIN_NS;
	cfg->release_threshold = o->release_threshold ? o->release_threshold
						       : cap / 4;
	cfg->creator_pid = (uint32_t)getpid();
	cfg->start_index = o->start_index;
	if (!is_pow2(cap) || cap < (uint32_t)page || cap > IPCRING_MAX_CAPACITY ||
	    cfg->max_record > cap / 4 || (cfg->align != 8 && cfg->align != 64) ||
	    (cfg->flags & ~RING_KNOWN_FLAGS) ||
	    cfg->wait_mode > IPCRING_WAIT_SPIN_ONLY || !spin_ok(cfg->spin_ns) ||
	    cfg->release_threshold > cap / 2 || (cfg->start_index & 63))
		return -EINVAL;
	return 0;
}

/*
 * Write the header, then zeroes up to @size: every page of the segment is
 * allocated here, zeroed and up to date, in a few calls (~1 us a page), and
 * each attach's MAP_POPULATE then maps them with fault-around, many pages a
 * fault. A first MAP_POPULATE of holes allocates them one fault each,
 * ~2.3 us a page. The memfd is nobody else's yet.
 */
static int seg_fill(int fd, const struct ring_shm *h, size_t size)
{
	static const char zero[4096];
	struct iovec iov[64];
	size_t off = 0;

	while (off < size) {
		size_t want = 0;
		int k = 0;
		ssize_t n;

		if (off < sizeof(*h)) {
			iov[k].iov_base = (char *)h + off;
			iov[k++].iov_len = want = sizeof(*h) - off;
		}
		while (k < 64 && off + want < size) {
			size_t l = size - off - want < sizeof(zero) ? size - off - want
								    : sizeof(zero);

			iov[k].iov_base = (void *)zero;
			iov[k++].iov_len = l;
			want += l;
		}
		n = pwritev(fd, iov, k, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		off += (size_t)n;
	}
	return 0;
}

static int seg_init(int fd, const struct ring_cfg *cfg)
{
	size_t size = (size_t)cfg->hdr_size + cfg->capacity;
	struct ring_shm h;
	int ret;

	memset(&h, 0, sizeof(h));
	h.cfg = *cfg;
	atomic_init(&h.tail, cfg->start_index);
	atomic_init(&h.head, cfg->start_index);
	if (ftruncate(fd, (off_t)size) < 0)
		return -errno;
	ret = seg_fill(fd, &h, size);
	if (ret)
		return ret;
	if (fcntl(fd, F_ADD_SEALS, SEALS_REQUIRED | F_SEAL_SEAL) < 0)
		return -errno;
	return 0;
}

int ipcring_create(const struct ipcring_opts *opts, int *memfd, int *eventfd_out)
{
	long page = sysconf(_SC_PAGESIZE);
	struct ring_cfg cfg;
	int fd, efd = -1, ret;

	if (!memfd)
		return -EINVAL;
	ret = cfg_from_opts(&cfg, opts, page);
	if (ret)
		return ret;
	if (cfg.wait_mode == IPCRING_WAIT_EVENTFD && !eventfd_out)
		return -EINVAL;
	fd = memfd_create("ipcring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	ret = seg_init(fd, &cfg);
	if (!ret && cfg.wait_mode == IPCRING_WAIT_EVENTFD) {
		efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (efd < 0)
			ret = -errno;
	}
	if (ret) {
		close(fd);
		return ret;
	}
	*memfd = fd;
	if (eventfd_out)
		*eventfd_out = efd;
	return 0;
}

static bool idx_ok(uint32_t idx, const struct ring_cfg *c)
{
	return !(idx & (c->align - 1));
}

/* Validate a private copy of a header against the fd's size. */
int ring_validate(const struct ring_shm *h, uint64_t fd_size, long page)
{
	const struct ring_cfg *c = &h->cfg;
	uint32_t tail = atomic_load_explicit(&h->tail, memory_order_relaxed);
	uint32_t head = atomic_load_explicit(&h->head, memory_order_relaxed);

	if (c->magic != RING_MAGIC || c->version != RING_VERSION)
		return -EBADMSG;
	if (c->hdr_size < RING_HDR_MIN || c->hdr_size % page ||
	    c->hdr_size > (1u << 20))
		return -EBADMSG;
	if (!is_pow2(c->capacity) || c->capacity < (uint64_t)page ||
	    c->capacity > IPCRING_MAX_CAPACITY || c->mask != c->capacity - 1)
		return -EBADMSG;
	if (fd_size != (uint64_t)c->hdr_size + c->capacity)
		return -EBADMSG;
	if (c->max_record > c->capacity / 4 || (c->align != 8 && c->align != 64))
		return -EBADMSG;
	if ((c->flags & ~RING_KNOWN_FLAGS) || c->wait_mode > IPCRING_WAIT_SPIN_ONLY ||
	    !spin_ok(c->spin_ns) || !c->release_threshold ||
	    c->release_threshold > c->capacity / 2)
		return -EBADMSG;
	if (!idx_ok(tail, c) || !idx_ok(head, c) || tail - head > c->capacity)
		return -EBADMSG;
	if (atomic_load_explicit(&h->ctl.prod_state, memory_order_relaxed) > ST_DEAD ||
	    atomic_load_explicit(&h->ctl.cons_state, memory_order_relaxed) > ST_DEAD)
		return -EBADMSG;
	return 0;
}

/* Check the fd (*@st) and read a private copy of its header. */
static int seg_read(int fd, struct ring_shm *h, struct stat *st)
{
	long page = sysconf(_SC_PAGESIZE);
	ssize_t n;
	int seals;

	if (fstat(fd, st) < 0)
		return -errno;
	if (!S_ISREG(st->st_mode))
		return -EINVAL;
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || (seals & SEALS_REQUIRED) != SEALS_REQUIRED)
		return -EINVAL;
	if (st->st_size < (off_t)RING_HDR_MIN)
		return -EBADMSG;
	n = pread(fd, h, sizeof(*h), 0);
	if (n < 0)
		return -errno;
	if (n != (ssize_t)sizeof(*h))
		return -EBADMSG;
	return ring_validate(h, (uint64_t)st->st_size, page);
}

static void handle_init(struct ipcring *r, const struct ring_cfg *c, int role)
{
	struct ring_shm *s = r->shm;
	bool prod = role == IPCRING_PRODUCER;

	r->cfg = *c;
	r->mask = c->mask;
	r->cap = c->capacity;
	r->align = c->align;
	r->max_record = c->max_record;
	r->single_map = c->flags & IPCRING_F_SINGLE_MAP;
	r->release_threshold = c->release_threshold;
	r->role = role;
	r->wait_mode = c->wait_mode;
	r->spin_ns = c->spin_ns == IPCRING_NO_SPIN ? 0 : c->spin_ns;
	r->poll_ns = IPCRING_DEFAULT_POLL_MS * RING_MS_NS;
	r->my_stats = prod ? &s->pstats : &s->cstats;
	r->my_state = prod ? &s->ctl.prod_state : &s->ctl.cons_state;
	r->peer_state = prod ? &s->ctl.cons_state : &s->ctl.prod_state;
	r->peer_pid = prod ? &s->ctl.cons_pid : &s->ctl.prod_pid;
	r->wait_ec = prod ? &s->space_ec : &s->data_ec;
	r->notify_ec = prod ? &s->data_ec : &s->space_ec;
	r->wait_efd = prod ? -1 : r->efd;
	r->notify_efd = prod ? r->efd : -1;
	r->peer_fd = -1;
	r->auto_pidfd = -1;
	r->attach_ns = ring_now_ns();
}

/* Claim the role (INIT -> ALIVE) and load the starting position. */
static int handle_claim(struct ipcring *r)
{
	struct ring_shm *s = r->shm;
	_Atomic uint32_t *pid = r->role == IPCRING_PRODUCER ? &s->ctl.prod_pid
							    : &s->ctl.cons_pid;
	uint32_t st = ST_INIT;

	if (!atomic_compare_exchange_strong(r->my_state, &st, ST_ALIVE))
		return -EBUSY;
	atomic_store(pid, (uint32_t)getpid());
	r->head_cache = atomic_load_explicit(&s->head, memory_order_acquire);
	r->pos = r->role == IPCRING_PRODUCER ?
		 atomic_load_explicit(&s->tail, memory_order_acquire) : r->head_cache;
	if ((r->pos & (r->align - 1)) || r->pos - r->head_cache > r->cap) {
		/* the indices changed since they were validated: give the role
		 * back, so that to the peer this side never attached */
		atomic_store(pid, 0);
		st = ST_ALIVE;
		atomic_compare_exchange_strong(r->my_state, &st, ST_INIT);
		return -EBADMSG;
	}
	return 0;
}

/*
 * Is @fd a genuine, non-semaphore, non-blocking eventfd open for reading
 * and writing? Its open file description is shared with the caller (and
 * the peer), so the library never changes its flags: a blocking one is
 * refused rather than switched to O_NONBLOCK. /proc/self/fdinfo tells an
 * eventfd from the other anonymous-inode fds (epoll, timerfd, signalfd)
 * and shows the semaphore flag; without /proc, an anonymous inode that
 * answers like an eventfd is accepted, and the drain is still one read.
 */
static int efd_check(int fd)
{
	char path[64], info[1024];
	struct stat st;
	ssize_t n;
	int fl, ifd;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (st.st_mode & S_IFMT)	/* an anonymous inode has no file type */
		return -EINVAL;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		return -errno;
	if ((fl & O_ACCMODE) != O_RDWR || !(fl & O_NONBLOCK))
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	ifd = open(path, O_RDONLY | O_CLOEXEC);
	if (ifd < 0)
		return errno == ENOENT || errno == EACCES ? 0 : -errno;
	n = read(ifd, info, sizeof(info) - 1);
	close(ifd);
	if (n <= 0)
		return -EINVAL;
	info[n] = '\0';
	if (!strstr(info, "\neventfd-count:") ||
	    strstr(info, "\neventfd-semaphore: 1"))
		return -EINVAL;
	return 0;
}

/* @own: the eventfd that ipcring_create() made in this process for this
 * ring, not yet handed to anyone: it is what efd_check() looks for. */
static int efd_setup(struct ipcring *r, const struct ring_cfg *c, int eventfd, bool own)
{
	int ret;

	r->efd = -1;
	if (c->wait_mode != IPCRING_WAIT_EVENTFD)
		return 0;
	if (eventfd < 0)
		return -EINVAL;
	ret = own ? 0 : efd_check(eventfd);
	if (ret)
		return ret;
	r->efd = fcntl(eventfd, F_DUPFD_CLOEXEC, 0);
	if (r->efd < 0)
		return -errno;
	return 0;
}

static void handle_free(struct ipcring *r)
{
	if (r->efd >= 0)
		close(r->efd);
	if (r->peer_fd >= 0)
		close(r->peer_fd);
	if (r->auto_pidfd >= 0)
		close(r->auto_pidfd);
	if (r->map)
		ring_map_put(r->map);
	free(r);
}

int ipcring_attach(struct ipcring **ring, int memfd, enum ipcring_role role,
		   int eventfd)
{
	return ring_attach(ring, memfd, role, eventfd, false);
}

int ring_attach(struct ipcring **ring, int memfd, enum ipcring_role role, int eventfd,
		bool own_efd)
{
	struct ring_shm h;
	struct ipcring *r;
	struct stat st;
	int ret;

	if (!ring || (role != IPCRING_PRODUCER && role != IPCRING_CONSUMER))
		return -EINVAL;
	*ring = NULL;
	/* from here on only this validated copy (and st) is used, never the
	 * shared header, which the peer may rewrite at any time */
	ret = seg_read(memfd, &h, &st);
	if (ret)
		return ret;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->peer_fd = r->auto_pidfd = -1;
	ret = efd_setup(r, &h.cfg, eventfd, own_efd);
	if (!ret)
		ret = ring_map_get(memfd, &st, &h.cfg, &r->map, &r->shm,
				   &r->data, &r->data_len);
	if (!ret) {
		handle_init(r, &h.cfg, role);
		ret = handle_claim(r);
	}
	if (ret) {
		handle_free(r);
		return ret;
	}
	*ring = r;
	return 0;
}

int ipcring_close(struct ipcring *r)
{
	uint32_t st = ST_ALIVE;

	if (!r)
		return 0;
	if (r->role == IPCRING_PRODUCER) {
		r->reserved = false;
		ipcring_flush(r);
	} else {
		ring_cons_publish(r);
	}
	atomic_compare_exchange_strong(r->my_state, &st, ST_CLOSED);
	ring_wake_all(r);
	handle_free(r);
	return 0;
}

int ipcring_set_peer(struct ipcring *r, int fd, enum ipcring_peer_kind kind)
{
	int nfd;

	if (kind != IPCRING_PEER_PIDFD && kind != IPCRING_PEER_SOCKET)
		return -EINVAL;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (nfd < 0)
		return -errno;
	if (r->peer_fd >= 0)
		close(r->peer_fd);
	r->peer_fd = nfd;
	r->peer_kind = kind;
	return 0;
}

int ipcring_mark_peer_dead(struct ipcring *r)
{
	uint32_t st = atomic_load(r->peer_state);

	while (st == ST_INIT || st == ST_ALIVE)
		if (atomic_compare_exchange_weak(r->peer_state, &st, ST_DEAD))
			break;
	ring_wake_all(r);
	return 0;
}

int ipcring_set_spin_ns(struct ipcring *r, uint32_t spin_ns)
{
	if (!spin_ok(spin_ns))
		return -EINVAL;
	if (!spin_ns)
		spin_ns = r->cfg.spin_ns;
	r->spin_ns = spin_ns == IPCRING_NO_SPIN ? 0 : spin_ns;
	return 0;
}

int ipcring_set_poll_ms(struct ipcring *r, uint32_t poll_ms)
{
	if (!poll_ms)
		poll_ms = IPCRING_DEFAULT_POLL_MS;
	r->poll_ns = poll_ms * RING_MS_NS;
	return 0;
}

int ipcring_info(const struct ipcring *r, struct ipcring_info *info)
{
	if (!r || !info)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	info->capacity = r->cap;
	info->max_record = r->max_record;
	info->align = r->align;
	info->hdr_size = r->cfg.hdr_size;
	info->release_threshold = r->release_threshold;
	info->spin_ns = r->spin_ns ? (uint32_t)r->spin_ns : IPCRING_NO_SPIN;
	info->poll_ms = (uint32_t)(r->poll_ns / RING_MS_NS);
	info->wait_mode = r->wait_mode;
	info->flags = r->cfg.flags;
	info->role = r->role;
	return 0;
}

static void side_stats(const struct ring_side_stats *s,
		       struct ipcring_side_stats *o)
{
	o->msgs = atomic_load_explicit(&s->msgs, memory_order_relaxed);
	o->bytes = atomic_load_explicit(&s->bytes, memory_order_relaxed);
	o->flushes = atomic_load_explicit(&s->flushes, memory_order_relaxed);
	o->spins = atomic_load_explicit(&s->spins, memory_order_relaxed);
	o->sleeps = atomic_load_explicit(&s->sleeps, memory_order_relaxed);
	o->wakes = atomic_load_explicit(&s->wakes, memory_order_relaxed);
}

int ipcring_stats(const struct ipcring *r, struct ipcring_stats *stats)
{
	if (!r || !stats)
		return -EINVAL;
	side_stats(&r->shm->pstats, &stats->producer);
	side_stats(&r->shm->cstats, &stats->consumer);
	return 0;
}
