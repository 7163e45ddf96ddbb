// SPDX-License-Identifier: MIT
/*
 * unit.c - single-threaded libipcring tests: options, empty/full at each
 * alignment (double and single mapping), wrap at every offset, lengths 0, 1
 * and max_record, oversize, abort, batching, indices crossing 2^32, close
 * then drain then end of stream, timeouts, stats, the spinning
 * consumer's readiness order.
 */
#include <errno.h>
#include <unistd.h>

#include "internal.h"
#include "tutil.h"

static const uint32_t aligns[] = { 8, 64 };
static const uint32_t maps[] = { 0, IPCRING_F_SINGLE_MAP };

static void fill(uint8_t *p, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7);
}

static void check_bytes(const uint8_t *p, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != (uint8_t)(seed * 131 + i * 7))
			T_FAIL("byte %zu of record %u is wrong", i, seed);
}

static void put(struct ipcring *r, size_t len, uint32_t seed)
{
	void *p;

	T_EQ(ipcring_reserve(r, len, &p, 0), 0);
	fill(p, len, seed);
	T_EQ(ipcring_commit(r, len, 0), 0);
}

static void get(struct ipcring *r, size_t len, uint32_t seed)
{
	const void *m;
	size_t n;

	T_EQ(ipcring_peek(r, &m, &n, 0), 1);
	T_EQ(n, len);
	check_bytes(m, n, seed);
	T_EQ(ipcring_release(r), 0);
}

static void test_opts(void)
{
	struct ipcring_opts o;
	int fd, efd;

	memset(&o, 0, sizeof(o));
	o.capacity = 3000;
	T_EQ(ipcring_create(&o, &fd, NULL), -EINVAL);
	o.capacity = 0x80000000u;
	T_EQ(ipcring_create(&o, &fd, NULL), -EINVAL);
	o.capacity = 1024;
	T_EQ(ipcring_create(&o, &fd, NULL), -EINVAL);
	o.capacity = 8192;
	o.align = 16;
	T_EQ(ipcring_create(&o, &fd, NULL), -EINVAL);
	o.align = 64;
	o.max_record = 8192 / 4 + 1;
	T_EQ(ipcring_create(&o, &fd, NULL), -EINVAL);
	o.max_record = 0;
	o.release_threshold = 8192 / 2 + 1;
	T_EQ(ipcring_create(&o, &fd, NULL), -EINVAL);
	o.release_threshold = 0;
	o.wait_mode = 7;
	T_EQ(ipcring_create(&o, &fd, NULL), -EINVAL);
	o.wait_mode = IPCRING_WAIT_EVENTFD;
	T_EQ(ipcring_create(&o, &fd, NULL), -EINVAL);	/* eventfd out needed */
	o.wait_mode = 0;
	o.flags = 0x100;
	T_EQ(ipcring_create(&o, &fd, NULL), -EINVAL);
	o.flags = 0;
	o.start_index = 8;
	T_EQ(ipcring_create(&o, &fd, NULL), -EINVAL);
	o.start_index = 0;
	o.spin_ns = IPCRING_MAX_SPIN_NS + 1;
	T_EQ(ipcring_create(&o, &fd, NULL), -EINVAL);
	o.spin_ns = 0;
	o.capacity = IPCRING_MAX_CAPACITY;	/* valid; not mapped here */
	T_EQ(ipcring_create(&o, &fd, &efd), 0);
	T_EQ(efd, -1);
	close(fd);
	T_EQ(ipcring_create(NULL, &fd, NULL), 0);
	close(fd);
}

static void test_roles(void)
{
	struct ipcring *x;
	struct t_pair p;
	const void *m;
	size_t n;
	void *v;

	t_pair_open(&p, NULL);
	T_EQ(ipcring_attach(&x, p.memfd, IPCRING_PRODUCER, -1), -EBUSY);
	T_EQ(ipcring_attach(&x, p.memfd, IPCRING_CONSUMER, -1), -EBUSY);
	T_EQ(ipcring_attach(&x, p.memfd, 3, -1), -EINVAL);
	T_EQ(ipcring_reserve(p.cons, 8, &v, 0), -EINVAL);
	T_EQ(ipcring_peek(p.prod, &m, &n, 0), -EINVAL);
	T_EQ(ipcring_commit(p.prod, 0, 0), -EINVAL);
	T_EQ(ipcring_abort(p.prod), -EINVAL);
	T_EQ(ipcring_release(p.cons), -EINVAL);
	T_EQ(ipcring_fd(p.cons), -EINVAL);
	t_pair_close(&p);
}

static uint32_t pos_off(const struct ipcring *r)
{
	return r->pos & r->mask;
}

/* Fill with @len records until full, check the count, drain and check. */
static void empty_full(struct t_pair *p, size_t len)
{
	uint32_t rs = ring_rec_size(p->prod, (uint32_t)len), n, i, expect;
	const void *m;
	size_t ml;
	void *v;

	T_EQ(ipcring_peek(p->cons, &m, &ml, 0), -EAGAIN);
	for (n = 0; ipcring_reserve(p->prod, len, &v, 0) == 0; n++) {
		fill(v, len, n);
		T_EQ(ipcring_commit(p->prod, len, IPCRING_MORE), 0);
	}
	T_EQ(ipcring_reserve(p->prod, len, &v, 0), -EAGAIN);
	T_EQ(ipcring_flush(p->prod), 0);
	/* from an empty ring at offset 0: every record keeps 8 bytes spare */
	expect = p->prod->single_map && pos_off(p->cons) ? 0 : (p->prod->cap - 8) / rs;
	if (expect)
		T_EQ(n, expect);
	for (i = 0; i < n; i++)
		get(p->cons, len, i);
	T_EQ(ipcring_peek(p->cons, &m, &ml, 0), -EAGAIN);
}

static void test_empty_full(void)
{
	static const size_t lens[] = { 0, 1, 8, 56, 57, 100, 1024 };

	for (unsigned a = 0; a < 2; a++)
		for (unsigned s = 0; s < 2; s++)
			for (unsigned l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
				struct ipcring_opts o = { .capacity = 4096,
					.align = aligns[a], .flags = maps[s] };
				struct t_pair p;

				t_pair_open(&p, &o);
				empty_full(&p, lens[l]);
				empty_full(&p, lens[l]);	/* again, wrapped */
				t_pair_close(&p);
			}
}

/* Move both ends to data offset @off with filler records. */
static void advance_to(struct t_pair *p, uint32_t off)
{
	uint32_t gap, rs;

	while (pos_off(p->prod) != off) {
		gap = (off - pos_off(p->prod)) & p->prod->mask;
		rs = gap > 512 ? 512 : gap;
		put(p->prod, rs - REC_HDR, 0);
		get(p->cons, rs - REC_HDR, 0);
	}
}

/* A record that wraps at every offset d (step align) within it. */
static void test_wrap(void)
{
	for (unsigned a = 0; a < 2; a++)
		for (unsigned s = 0; s < 2; s++) {
			struct ipcring_opts o = { .capacity = 4096,
				.align = aligns[a], .flags = maps[s] };
			struct t_pair p;
			uint32_t d, tailbytes;

			t_pair_open(&p, &o);
			for (d = aligns[a]; d + aligns[a] <= 1024; d += aligns[a])
				for (tailbytes = 1; tailbytes <= aligns[a]; tailbytes += 7) {
					advance_to(&p, p.prod->cap - d);
					put(p.prod, d + tailbytes, d);
					if (maps[s])
						T_EQ(pos_off(p.cons), p.prod->cap - d);
					get(p.cons, d + tailbytes, d);
				}
			t_pair_close(&p);
		}
}

static void test_lengths(void)
{
	struct ipcring_opts o = { .capacity = 8192 };
	struct t_pair p;
	uint8_t buf[4096];
	struct iovec iov[3];
	size_t n;
	void *v;

	t_pair_open(&p, &o);
	put(p.prod, 0, 1);
	get(p.cons, 0, 1);
	put(p.prod, 1, 2);
	get(p.cons, 1, 2);
	put(p.prod, 2048, 3);
	get(p.cons, 2048, 3);
	T_EQ(ipcring_reserve(p.prod, 2049, &v, 0), -EMSGSIZE);
	T_EQ(ipcring_write(p.prod, buf, 2049, 0, -1), -EMSGSIZE);
	iov[0] = (struct iovec){ buf, 2000 };
	iov[1] = (struct iovec){ buf, 49 };
	T_EQ(ipcring_writev(p.prod, iov, 2, 0, 0), -EMSGSIZE);
	iov[1].iov_len = 48;
	iov[2] = (struct iovec){ NULL, 0 };
	T_EQ(ipcring_writev(p.prod, iov, 3, 0, 0), 0);
	T_EQ(ipcring_read(p.cons, buf, 100, &n, 0), -EMSGSIZE);
	T_EQ(n, 2048);
	T_EQ(ipcring_read(p.cons, buf, sizeof(buf), &n, 0), 1);
	T_EQ(n, 2048);
	T_EQ(ipcring_read(p.cons, buf, sizeof(buf), &n, 0), -EAGAIN);
	t_pair_close(&p);
}

static void test_abort_shrink(void)
{
	struct t_pair p;
	const void *m1, *m2;
	size_t n1, n2;
	void *v;

	t_pair_open(&p, NULL);
	T_EQ(ipcring_reserve(p.prod, 100, &v, 0), 0);
	memset(v, 0xee, 100);
	T_EQ(ipcring_abort(p.prod), 0);
	T_EQ(ipcring_commit(p.prod, 1, 0), -EINVAL);
	T_EQ(ipcring_peek(p.cons, &m1, &n1, 0), -EAGAIN);
	T_EQ(ipcring_reserve(p.prod, 100, &v, 0), 0);
	fill(v, 10, 9);
	T_EQ(ipcring_commit(p.prod, 101, 0), -EINVAL);
	T_EQ(ipcring_commit(p.prod, 10, 0), 0);
	put(p.prod, 5, 10);
	T_EQ(ipcring_peek(p.cons, &m1, &n1, 0), 1);
	T_EQ(ipcring_peek(p.cons, &m2, &n2, 0), 1);	/* same again */
	T_ASSERT(m1 == m2 && n1 == 10);
	T_EQ(ipcring_release(p.cons), 0);
	T_EQ(ipcring_release(p.cons), -EINVAL);
	get(p.cons, 5, 10);
	t_pair_close(&p);
}

static int count_cb(void *ctx, const void *msg, size_t len)
{
	unsigned int *n = ctx;

	check_bytes(msg, len, *n);
	return ++*n == 7;	/* stop after the 7th */
}

static void test_batch(void)
{
	struct t_pair p;
	const void *m;
	unsigned int seen = 0;
	size_t n;

	t_pair_open(&p, NULL);
	for (uint32_t i = 0; i < 10; i++) {
		void *v;

		T_EQ(ipcring_reserve(p.prod, 33, &v, 0), 0);
		fill(v, 33, i);
		T_EQ(ipcring_commit(p.prod, 33, IPCRING_MORE), 0);
	}
	/* committed but not flushed: visible to a polling consumer, tail not moved */
	T_EQ(atomic_load(&p.prod->shm->tail), 0);
	T_EQ(ipcring_read_batch(p.cons, count_cb, &seen, 4, 0), 4);
	T_EQ(ipcring_read_batch(p.cons, count_cb, &seen, 100, 0), 3);
	T_EQ(ipcring_flush(p.prod), 0);
	T_ASSERT(atomic_load(&p.prod->shm->tail) != 0);
	T_EQ(ipcring_read_batch(p.cons, count_cb, &seen, 100, 0), 3);
	T_EQ(seen, 10);
	T_EQ(ipcring_read_batch(p.cons, count_cb, &seen, 100, 0), -EAGAIN);
	T_EQ(ipcring_peek(p.cons, &m, &n, 0), -EAGAIN);
	t_pair_close(&p);
}

/*
 * The spinning consumer's readiness: a plain ring waits for tail (a record
 * committed with IPCRING_MORE is not ready until it is flushed); a
 * connection's ring (poll_rec) sees the commit word before tail moves. The
 * sleeping re-check (sc) sees the record either way.
 */
static void test_ready_order(void)
{
	struct t_pair p;
	void *v;

	t_pair_open(&p, NULL);
	T_EQ(ring_cons_ready(p.cons, false), 0);
	T_EQ(ipcring_reserve(p.prod, 16, &v, 0), 0);
	fill(v, 16, 1);
	T_EQ(ipcring_commit(p.prod, 16, IPCRING_MORE), 0);
	T_EQ(atomic_load(&p.prod->shm->tail), 0);
	T_EQ(ring_cons_ready(p.cons, false), 0);
	T_EQ(ring_cons_ready(p.cons, true), 1);
	p.cons->poll_rec = true;
	T_EQ(ring_cons_ready(p.cons, false), 1);
	get(p.cons, 16, 1);
	T_EQ(ring_cons_ready(p.cons, false), 0);	/* the next word is pre-zeroed */
	T_EQ(ipcring_flush(p.prod), 0);
	T_EQ(ring_cons_ready(p.cons, false), 0);	/* flushed up to pos: nothing new */
	p.cons->poll_rec = false;
	put(p.prod, 8, 2);
	T_EQ(ring_cons_ready(p.cons, false), 1);	/* flushed: tail moved */
	get(p.cons, 8, 2);
	t_pair_close(&p);
}

/* Start both indices at 0xFFFF0000 and stream well past 2^32. */
static void test_index_wrap(void)
{
	for (unsigned a = 0; a < 2; a++) {
		struct ipcring_opts o = { .capacity = 4096, .align = aligns[a],
					  .start_index = 0xFFFF0000u };
		struct t_pair p;
		uint64_t total = 0;
		uint32_t i;

		t_pair_open(&p, &o);
		T_EQ(p.prod->pos, 0xFFFF0000u);
		for (i = 0; total < 3ull << 16; i++) {
			uint32_t len = (i * 37) % 700;

			put(p.prod, len, i);
			get(p.cons, len, i);
			total += ring_rec_size(p.prod, len);
			if (i % 97 == 0)
				empty_full(&p, len % 300);
		}
		T_ASSERT(p.prod->pos < 0xFFFF0000u);	/* wrapped */
		t_pair_close(&p);
	}
}

static void test_close_eof(void)
{
	struct t_pair p;
	const void *m;
	unsigned int seen = 2;
	size_t n;
	void *v;

	t_pair_open(&p, NULL);
	for (uint32_t i = 0; i < 5; i++)
		put(p.prod, 20, i);
	T_EQ(ipcring_reserve(p.prod, 20, &v, 0), 0);	/* dropped by close */
	ipcring_close(p.prod);
	p.prod = NULL;
	get(p.cons, 20, 0);
	get(p.cons, 20, 1);
	T_EQ(ipcring_read_batch(p.cons, count_cb, &seen, 2, -1), 2);
	get(p.cons, 20, 4);
	T_EQ(ipcring_peek(p.cons, &m, &n, -1), 0);
	T_EQ(ipcring_peek(p.cons, &m, &n, 0), 0);
	T_EQ(ipcring_read_batch(p.cons, count_cb, &seen, 2, -1), 0);
	t_pair_close(&p);

	/* consumer gone: the producer gets -EPIPE */
	t_pair_open(&p, NULL);
	ipcring_close(p.cons);
	p.cons = NULL;
	T_EQ(ipcring_reserve(p.prod, 20, &v, -1), -EPIPE);
	t_pair_close(&p);
}

static void test_timeouts(void)
{
	struct ipcring_opts o = { .capacity = 4096, .spin_ns = 1000 };
	struct t_pair p;
	const void *m;
	uint64_t t0, dt;
	size_t n;
	void *v;

	t_pair_open(&p, &o);
	t0 = t_now_ns();
	T_EQ(ipcring_peek(p.cons, &m, &n, 50), -ETIMEDOUT);
	dt = t_now_ns() - t0;
	T_ASSERT(dt >= 50000000u && dt < 2000000000u);
	while (ipcring_reserve(p.prod, 500, &v, 0) == 0)
		T_EQ(ipcring_commit(p.prod, 500, 0), 0);
	t0 = t_now_ns();
	T_EQ(ipcring_reserve(p.prod, 500, &v, 30), -ETIMEDOUT);
	dt = t_now_ns() - t0;
	T_ASSERT(dt >= 30000000u && dt < 2000000000u);
	/* a dead producer: committed records first, then -EPIPE */
	T_EQ(ipcring_mark_peer_dead(p.cons), 0);
	T_EQ(ipcring_peek(p.cons, &m, &n, -1), 1);
	T_EQ(n, 500);
	t_pair_close(&p);
}

static void test_stats_info(void)
{
	struct ipcring_stats st;
	struct ipcring_info in;
	struct t_pair p;

	t_pair_open(&p, NULL);
	T_EQ(ipcring_info(p.cons, &in), 0);
	T_EQ(in.capacity, IPCRING_DEFAULT_CAPACITY);
	T_EQ(in.max_record, IPCRING_DEFAULT_CAPACITY / 4);
	T_EQ(in.align, 8);
	T_EQ(in.spin_ns, IPCRING_DEFAULT_SPIN_NS);
	T_EQ(in.poll_ms, IPCRING_DEFAULT_POLL_MS);
	T_EQ(in.role, IPCRING_CONSUMER);
	T_EQ(ipcring_set_spin_ns(p.cons, IPCRING_NO_SPIN), 0);
	T_EQ(ipcring_info(p.cons, &in), 0);
	T_EQ(in.spin_ns, IPCRING_NO_SPIN);
	for (uint32_t i = 0; i < 100; i++) {
		put(p.prod, 10, i);
		get(p.cons, 10, i);
	}
	T_EQ(ipcring_stats(p.prod, &st), 0);
	T_EQ(st.producer.msgs, 100);
	T_EQ(st.producer.bytes, 1000);
	T_EQ(st.consumer.msgs, 100);
	T_EQ(st.producer.flushes, 100);
	/* nobody slept, so nobody woke anybody: 0 syscalls per message */
	T_EQ(st.producer.wakes + st.consumer.wakes, 0);
	T_EQ(st.producer.sleeps + st.consumer.sleeps, 0);
	t_pair_close(&p);
}

int main(void)
{
	test_opts();
	test_roles();
	test_empty_full();
	test_wrap();
	test_lengths();
	test_abort_shrink();
	test_batch();
	test_ready_order();
	test_index_wrap();
	test_close_eof();
	test_timeouts();
	test_stats_info();
	return 0;
}
