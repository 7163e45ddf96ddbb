// SPDX-License-Identifier: MIT
/*
 * ipcring_records.c - libFuzzer harness: a hostile peer writing the shared
 * ring. A valid ring is reset, its indices and the peer's state set from
 * the input, and the data area filled with input bytes (the records the
 * consumer will find: commit words, lengths, stamps). One side is attached
 * and driven by the rest of the input, a list of operations: peek, release,
 * read, read_batch (consumer) or reserve, commit, write, writev (producer), mixed
 * with the peer's hostile writes (its index, its state, any word of the
 * data area) between calls. Every call must return data or an error (-EBADMSG
 * for a corrupt record), never crash, and every byte it hands out must lie
 * inside the mapping (checked against the handle, hence internal.h).
 *
 * Input: [variant][head 4][tail 4][peer state][data area...][ops...]; the
 * data area takes min(rest / 2, capacity) bytes, starting at head.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NV 16
static int fds[NV], efd = -1;
static uint8_t pristine[NV][RING_HDR_MIN];
static uint32_t hdr_sizes[NV];

struct cursor {
	const uint8_t *p;
	size_t n;
};

static uint32_t take(struct cursor *c, unsigned bytes)
{
	uint32_t v = 0;

	for (unsigned i = 0; i < bytes && c->n; i++, c->n--)
		v |= (uint32_t)*c->p++ << (8 * i);
	return v;
}

/* variant bits: 0 align 64, 1 single map, 2 eventfd mode, 3 capacity 8 KiB */
static int variant_fd(unsigned v)
{
	struct ipcring_opts o = {
		.capacity = v & 8 ? 8192 : 4096,
		.align = v & 1 ? 64 : 8,
		.flags = v & 2 ? IPCRING_F_SINGLE_MAP : 0,
		.wait_mode = v & 4 ? IPCRING_WAIT_EVENTFD : IPCRING_WAIT_FUTEX,
		.spin_ns = IPCRING_NO_SPIN,
	};
	int fd, e;

	if (fds[v] > 0)
		return fds[v];
	if (ipcring_create(&o, &fd, &e))
		abort();
	if (e >= 0)
		close(e);
	if (pread(fd, pristine[v], RING_HDR_MIN, 0) != RING_HDR_MIN)
		abort();
	hdr_sizes[v] = ((struct ring_shm *)pristine[v])->cfg.hdr_size;
	fds[v] = fd;
	return fd;
}

/* Bytes handed out must lie inside the data mapping. */
static void check_span(const struct ipcring *r, const void *p, size_t len)
{
	const uint8_t *b = p, *lo = r->data;
	const uint8_t *hi = lo + (r->single_map ? r->cap : 2 * (size_t)r->cap);

	if (len > r->max_record || b < lo || b > hi || len > (size_t)(hi - b))
		abort();
	for (size_t i = 0; i < len; i += 64)	/* touch: a hole would fault */
		(void)*(volatile const uint8_t *)(b + i);
}

static int on_record(void *ctx, const void *msg, size_t len)
{
	check_span(ctx, msg, len);
	return 0;
}

/* The peer's hostile writes, between calls. */
static void peer_write(struct ipcring *r, struct cursor *c, unsigned op)
{
	struct ring_shm *s = r->shm;
	uint32_t v = take(c, 4);

	switch (op) {
	case 0:
		atomic_store(r->role == IPCRING_CONSUMER ? &s->tail : &s->head, v);
		break;
	case 1:
		atomic_store(r->peer_state, v % 5);
		break;
	default: {
		uint32_t off = take(c, 2) & (r->cap - 4) & ~3u;

		memcpy(r->data + off, &v, 4);
	}
	}
}

static void consumer_ops(struct ipcring *r, struct cursor *c)
{
	static uint8_t buf[1 << 14];
	const void *msg;
	size_t len;
	int ret;

	for (int i = 0; i < 64 && c->n; i++) {
		unsigned op = take(c, 1) % 8;

		if (op >= 5) {
			peer_write(r, c, op - 5);
			continue;
		}
		if (op == 0 || op == 1) {
			ret = ipcring_peek(r, &msg, &len, 0);
			if (ret == 1)
				check_span(r, msg, len);
			if (ret == 1 && op == 1 && ipcring_release(r))
				abort();
		} else if (op == 2) {
			ret = ipcring_read(r, buf, take(c, 2) % sizeof(buf), &len, 0);
		} else if (op == 3) {
			ret = ipcring_read_batch(r, on_record, r, 1 + take(c, 1) % 16, 0);
		} else {
			ret = ipcring_prepare_wait(r);
			if (ret == -EINVAL)
				ret = 0;
		}
		if (ret < 0 && ret != -EAGAIN && ret != -EBADMSG && ret != -EPIPE &&
		    ret != -EMSGSIZE && ret != -EINVAL)
			abort();
	}
}

static void producer_ops(struct ipcring *r, struct cursor *c)
{
	void *buf;
	int ret = 0;

	for (int i = 0; i < 64 && c->n; i++) {
		unsigned op = take(c, 1) % 8;
		size_t len = take(c, 2) % (r->max_record + 16);

		if (op >= 5) {
			peer_write(r, c, op - 5);
			continue;
		}
		if (op <= 1) {
			ret = ipcring_reserve(r, len, &buf, 0);
			if (!ret) {
				check_span(r, buf, len);
				memset(buf, 0x5a, len);
				ret = op ? ipcring_abort(r) : ipcring_commit(r, len / 2, IPCRING_MORE);
			}
		} else if (op == 2) {
			static uint8_t src[1 << 14];

			ret = ipcring_write(r, src, len % sizeof(src), 0, 0);
		} else if (op == 3) {
			static uint8_t src[1 << 14];
			struct iovec iov[2] = {
				{ src, len % sizeof(src) }, { src, take(c, 2) % sizeof(src) },
			};

			ret = ipcring_writev(r, iov, 2, IPCRING_MORE, 0);
		} else {
			ret = ipcring_flush(r);
		}
		if (ret < 0 && ret != -EAGAIN && ret != -EBADMSG && ret != -EPIPE &&
		    ret != -EMSGSIZE)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cursor c = { data, size };
	unsigned v = take(&c, 1), role = v & 16;
	uint32_t head, tail, st, cap, align, n;
	struct ring_shm h;
	struct ipcring *r;
	int fd;

	v %= NV;
	fd = variant_fd(v);
	if (efd < 0 && (efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
		abort();
	memcpy(&h, pristine[v], sizeof(h));
	cap = h.cfg.capacity;
	align = h.cfg.align;
	/* indices that attach accepts; later ops may set any value */
	head = take(&c, 4) & ~(align - 1);
	tail = head + ((take(&c, 4) % (cap + 1)) & ~(align - 1));
	st = take(&c, 1) % 4;
	atomic_store(&h.head, head);
	atomic_store(&h.tail, tail);
	atomic_store(role ? &h.ctl.cons_state : &h.ctl.prod_state, st);
	if (pwrite(fd, pristine[v], RING_HDR_MIN, 0) != RING_HDR_MIN ||
	    pwrite(fd, &h, sizeof(h), 0) != sizeof(h))
		abort();
	/* the data area: zeroed, then the input's bytes from head on */
	n = (uint32_t)(c.n / 2 < cap ? c.n / 2 : cap);
	{
		static uint8_t area[8192];

		memset(area, 0, cap);
		for (uint32_t i = 0; i < n; i++)
			area[(head + i) & (cap - 1)] = c.p[i];
		if (pwrite(fd, area, cap, hdr_sizes[v]) != (ssize_t)cap)
			abort();
		c.p += n;
		c.n -= n;
	}
	if (ipcring_attach(&r, fd, role ? IPCRING_PRODUCER : IPCRING_CONSUMER, efd))
		return 0;
	if (role)
		producer_ops(r, &c);
	else
		consumer_ops(r, &c);
	ipcring_close(r);
	return 0;
}
