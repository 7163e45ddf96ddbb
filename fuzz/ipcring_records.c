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
 * The high bits of the first byte add what a single thread with timeouts
 * of 0 never reaches:
 *  - bit 5, a hostile thread: while the calls run, a second thread replays
 *    a script taken from the input over and over, writing the shared
 *    header (indices, eventcounts, states, the configuration block), words
 *    of the data area and the eventfd;
 *  - bit 6, both ends in one process: the other role is attached too (one
 *    shared mapping) and two more operations drive it;
 *  - bit 7, short timeouts: blocking calls wait 1-3 ms, so the spin, yield
 *    and sleep paths run (a call must return within its timeout plus a
 *    generous slack, and every input is bounded by a watchdog); once
 *    MAX_TIMEOUTS calls of an input have timed out, the rest do not block.
 *    The fuzzing build's millisecond is 10 us (RING_MS_NS, mk/fuzz.mk).
 * The high bits of the peer-state byte choose how a side waits: the
 * variant's mode, spin-only, a 2 us spin, or no spin at all.
 *
 * Input: [variant][head 4][tail 4][peer state][data area...][ops...]; the
 * data area takes min(rest / 2, capacity) bytes, starting at head. With the
 * hostile thread, the last 7 * (1 + byte) bytes of the ops (at most 16
 * entries) are its script: [op][value 4][offset 2] each.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "internal.h"
#include "ipcring_pin.h"

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

/* Bytes handed out (or written) must lie inside the data mapping itself. */
static void check_raw(const struct ipcring *r, const void *p, size_t len)
{
	const uint8_t *b = p, *lo = r->data, *hi = lo + r->data_len;

	if (b < lo || b > hi || len > (size_t)(hi - b))
		abort();
	for (size_t i = 0; i < len; i += 64)	/* touch: a hole would fault */
		(void)*(volatile const uint8_t *)(b + i);
}

static void check_span(const struct ipcring *r, const void *p, size_t len)
{
	if (len > r->max_record)
		abort();
	check_raw(r, p, len);
}

/*
 * A reservation: its header and payload, contiguous, and the next header
 * that commit pre-zeroes (at the start again when the record ends exactly
 * at the end of a single mapping).
 */
static void check_reservation(const struct ipcring *r, void *buf, size_t len)
{
	uint32_t rs = ring_rec_size(r, (uint32_t)len);

	check_span(r, buf, len);
	check_raw(r, (uint8_t *)buf - REC_HDR, rs);
	check_raw(r, ring_rec_at(r, r->pos + rs), REC_HDR);
}

/* ---- timing: short timeouts must stay short ---- */

#define SLACK_NS	5000000000ull	/* a loaded, shared 2-CPU machine stalls */
#define WATCHDOG_NS	10000000000ull	/* one input, at most */

static _Atomic uint64_t input_start;
static int timeout_ms;			/* of this input's blocking calls */
/* Calls of one input that may still wait out their timeout: the spin,
 * yield and sleep paths run that often; later calls do not block. */
#define MAX_TIMEOUTS	8
static unsigned timeouts_left;

static void *watchdog(void *arg)
{
	(void)arg;
	for (;;) {
		uint64_t t0 = atomic_load(&input_start);

		if (t0 && ring_now_ns() - t0 > WATCHDOG_NS) {
			fprintf(stderr, "ipcring_records: one input ran for more "
				"than %llu s\n", WATCHDOG_NS / 1000000000ull);
			abort();
		}
		usleep(100000);
	}
	return NULL;
}

static uint64_t call_start(int *tmo)
{
	*tmo = timeouts_left ? timeout_ms : 0;
	return ring_now_ns();
}

static void call_end(uint64_t t0, int tmo, int ret)
{
	if (ring_now_ns() - t0 > (uint64_t)tmo * 1000000u + SLACK_NS)
		abort();	/* a wait that its timeout did not bound */
	if (ret == -ETIMEDOUT && timeouts_left)
		timeouts_left--;
}

/* ---- the hostile thread ---- */

struct hostile {
	struct ring_shm *shm;
	uint8_t *data;
	uint32_t cap;
	int efd;
	const uint8_t *script;
	size_t n;			/* entries of 7 bytes */
	_Atomic bool stop;
	pthread_t th;
	bool running;
};

static uint32_t le32(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static void hostile_write(struct hostile *h, const uint8_t *e)
{
	struct ring_shm *s = h->shm;
	uint32_t v = le32(e + 1), off = (uint32_t)e[5] | (uint32_t)e[6] << 8;
	uint64_t ev = v ? v : 1;
	_Atomic uint32_t *cfgw = (_Atomic uint32_t *)(void *)s->b0;

	switch (e[0] % 10) {
	case 0: atomic_store(&s->tail, v); break;
	case 1: atomic_store(&s->head, v); break;
	case 2: atomic_store(&s->data_ec, v); break;
	case 3: atomic_store(&s->space_ec, v); break;
	case 4: atomic_store(&s->ctl.prod_state, v % 5); break;
	case 5: atomic_store(&s->ctl.cons_state, v % 5); break;
	case 6: atomic_store(&cfgw[off % (sizeof(struct ring_cfg) / 4)], v); break;
	case 7:
		atomic_store_explicit((_Atomic uint32_t *)(void *)
				      (h->data + (off & (h->cap - 4) & ~3u)), v,
				      memory_order_relaxed);
		break;
	case 8:
		if (h->efd >= 0 && write(h->efd, &ev, sizeof(ev)) < 0) {
			/* full: fine */
		}
		break;
	default:
		atomic_fetch_xor(off & 1 ? &s->space_ec : &s->data_ec, v | EC_W);
	}
}

static void *hostile_run(void *arg)
{
	struct hostile *h = arg;

	while (!atomic_load_explicit(&h->stop, memory_order_relaxed))
		for (size_t i = 0; i < h->n; i++) {
			const uint8_t *e = h->script + 7 * i;

			hostile_write(h, e);
			for (unsigned k = e[1] & 63; k; k--)
				ring_cpu_relax();
			if (e[2] & 1)
				sched_yield();
		}
	return NULL;
}

static void hostile_start(struct hostile *h, const struct ipcring *r,
			  struct cursor *c)
{
	size_t n;

	if (!c->n)
		return;
	n = 1 + c->p[c->n - 1] % 16;
	if (7 * n + 1 > c->n)
		n = (c->n - 1) / 7;
	if (!n)
		return;
	h->shm = r->shm;
	h->data = r->data;
	h->cap = r->cap;
	h->script = c->p + c->n - 1 - 7 * n;
	h->n = n;
	c->n -= 7 * n + 1;		/* the ops end where the script begins */
	atomic_store(&h->stop, false);
	if (pthread_create(&h->th, NULL, hostile_run, h))
		abort();
	h->running = true;
}

static void hostile_stop(struct hostile *h)
{
	if (!h->running)
		return;
	atomic_store(&h->stop, true);
	pthread_join(h->th, NULL);
	h->running = false;
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

static void producer_op(struct ipcring *r, struct cursor *c, unsigned op);
static void consumer_op(struct ipcring *r, struct cursor *c, unsigned op);

/* Both ends in this process: ops 8 and 9 drive the other end. */
static void other_end_op(struct ipcring *other, struct cursor *c, unsigned op)
{
	unsigned sub = take(c, 1) % 5;

	if (other->role == IPCRING_PRODUCER)
		producer_op(other, c, op == 8 ? (sub ? 2 : 0) : sub);
	else
		consumer_op(other, c, op == 8 ? (sub ? 3 : 0) : sub);
}

static void consumer_ops(struct ipcring *r, struct ipcring *other,
			 struct cursor *c)
{
	for (int i = 0; i < 64 && c->n; i++) {
		unsigned op = take(c, 1) % (other ? 10 : 8);

		if (op >= 8)
			other_end_op(other, c, op);
		else if (op >= 5)
			peer_write(r, c, op - 5);
		else
			consumer_op(r, c, op);
	}
}

static void consumer_op(struct ipcring *r, struct cursor *c, unsigned op)
{
	static uint8_t buf[1 << 14];
	const void *msg;
	int tmo;
	uint64_t t0 = call_start(&tmo);
	size_t len;
	int ret;

	{
		if (op == 0 || op == 1) {
			ret = ipcring_peek(r, &msg, &len, tmo);
			if (ret == 1)
				check_span(r, msg, len);
			if (ret == 1 && op == 1 && ipcring_release(r))
				abort();
		} else if (op == 2) {
			ret = ipcring_read(r, buf, take(c, 2) % sizeof(buf), &len, tmo);
		} else if (op == 3) {
			ret = ipcring_read_batch(r, on_record, r, 1 + take(c, 1) % 16, tmo);
		} else {
			ret = ipcring_prepare_wait(r);
			if (ret == -EINVAL)
				ret = 0;
		}
		if (ret < 0 && ret != -EAGAIN && ret != -EBADMSG && ret != -EPIPE &&
		    ret != -EMSGSIZE && ret != -EINVAL && ret != -ETIMEDOUT)
			abort();
		call_end(t0, tmo, ret);
	}
}

static void producer_ops(struct ipcring *r, struct ipcring *other,
			 struct cursor *c)
{
	for (int i = 0; i < 64 && c->n; i++) {
		unsigned op = take(c, 1) % (other ? 10 : 8);

		if (op >= 8)
			other_end_op(other, c, op);
		else if (op >= 5)
			peer_write(r, c, op - 5);
		else
			producer_op(r, c, op);
	}
}

static void producer_op(struct ipcring *r, struct cursor *c, unsigned op)
{
	int tmo;
	uint64_t t0 = call_start(&tmo);
	void *buf;
	int ret = 0;

	{
		size_t len = take(c, 2) % (r->max_record + 16);

		if (op <= 1) {
			ret = ipcring_reserve(r, len, &buf, tmo);
			if (!ret) {
				check_reservation(r, buf, len);
				memset(buf, 0x5a, len);
				ret = op ? ipcring_abort(r) : ipcring_commit(r, len / 2, IPCRING_MORE);
			}
		} else if (op == 2) {
			static uint8_t src[1 << 14];

			ret = ipcring_write(r, src, len % sizeof(src), 0, tmo);
		} else if (op == 3) {
			static uint8_t src[1 << 14];
			struct iovec iov[2] = {
				{ src, len % sizeof(src) }, { src, take(c, 2) % sizeof(src) },
			};

			ret = ipcring_writev(r, iov, 2, IPCRING_MORE, tmo);
		} else {
			ret = ipcring_flush(r);
		}
		if (ret < 0 && ret != -EAGAIN && ret != -EBADMSG && ret != -EPIPE &&
		    ret != -EMSGSIZE && ret != -ETIMEDOUT)
			abort();
		call_end(t0, tmo, ret);
	}
}

static const uint32_t spin_choices[] = { 0, 0, 2000, IPCRING_NO_SPIN };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static pthread_t wd;
	struct cursor c = { data, size };
	unsigned v = take(&c, 1), role = v & 16, stb;
	uint32_t head, tail, st, cap, align, n;
	struct hostile hs = { .efd = -1 };
	struct ipcring *r, *other = NULL;
	struct ring_shm h;
	int fd;

	if (!wd && pthread_create(&wd, NULL, watchdog, NULL))
		abort();
	v %= 256;
	fd = variant_fd(v % NV);
	if (efd < 0 && (efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
		abort();
	memcpy(&h, pristine[v % NV], sizeof(h));
	cap = h.cfg.capacity;
	align = h.cfg.align;
	/* indices that attach accepts; later ops may set any value */
	head = take(&c, 4) & ~(align - 1);
	tail = head + ((take(&c, 4) % (cap + 1)) & ~(align - 1));
	stb = take(&c, 1);
	st = stb % 4;
	if (((stb >> 4) & 3) == 1)
		h.cfg.wait_mode = IPCRING_WAIT_SPIN_ONLY;
	atomic_store(&h.head, head);
	atomic_store(&h.tail, tail);
	atomic_store(role ? &h.ctl.cons_state : &h.ctl.prod_state, st);
	if (pwrite(fd, pristine[v % NV], RING_HDR_MIN, 0) != RING_HDR_MIN ||
	    pwrite(fd, &h, sizeof(h), 0) != sizeof(h))
		abort();
	/* the data area: zeroed, then the input's bytes from head on */
	n = (uint32_t)(c.n / 2 < cap ? c.n / 2 : cap);
	{
		static uint8_t area[8192];

		memset(area, 0, cap);
		for (uint32_t i = 0; i < n; i++)
			area[(head + i) & (cap - 1)] = c.p[i];
		if (pwrite(fd, area, cap, hdr_sizes[v % NV]) != (ssize_t)cap)
			abort();
		c.p += n;
		c.n -= n;
	}
	if (ipcring_attach(&r, fd, role ? IPCRING_PRODUCER : IPCRING_CONSUMER, efd))
		return 0;
	pin_map(fd, r);
	atomic_store(&input_start, ring_now_ns());
	timeout_ms = v & 128 ? 1 + (int)(stb >> 6) % 3 : 0;
	timeouts_left = MAX_TIMEOUTS;
	if (spin_choices[(stb >> 4) & 3])
		ipcring_set_spin_ns(r, spin_choices[(stb >> 4) & 3]);
	ipcring_set_poll_ms(r, 1);
	if ((v & 64) && ipcring_attach(&other, fd, role ? IPCRING_CONSUMER
						       : IPCRING_PRODUCER, efd))
		other = NULL;	/* the peer's role was not free */
	if (other) {
		ipcring_set_poll_ms(other, 1);
		if (spin_choices[(stb >> 4) & 3])
			ipcring_set_spin_ns(other, spin_choices[(stb >> 4) & 3]);
	}
	if (v & 32) {
		hs.efd = h.cfg.wait_mode == IPCRING_WAIT_EVENTFD ? efd : -1;
		hostile_start(&hs, r, &c);
	}
	if (role)
		producer_ops(r, other, &c);
	else
		consumer_ops(r, other, &c);
	hostile_stop(&hs);
	ipcring_close(other);
	ipcring_close(r);
	atomic_store(&input_start, 0);
	return 0;
}
