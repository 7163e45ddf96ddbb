// SPDX-License-Identifier: MIT
/*
 * batch.c - ipcring_reserve_batch / commit_batch / peek_batch /
 * release_batch: random batches of random lengths through a one-page ring
 * whose indices start just below 2^32 (so they wrap and cross the ring's
 * end many times), double and single mapping; batches committed short (the
 * last record shorter, records dropped), released in part; every byte and
 * the order checked; one index publication per batch on each side; the
 * argument errors; a producer and a consumer thread at full speed; and a
 * run seen whole by a consumer that polls the first record's commit word.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <unistd.h>

#include "internal.h"
#include "tutil.h"

#define MAXLEN	200u

static uint8_t pat(uint64_t seq, size_t i)
{
	return (uint8_t)(seq * 131 + i * 7 + 1);
}

static void fill(void *buf, size_t len, uint64_t seq)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		p[i] = pat(seq, i);
}

static void check(const void *buf, size_t len, size_t want_len, uint64_t seq)
{
	const uint8_t *p = buf;

	if (len != want_len)
		T_FAIL("record %llu: %zu bytes, expected %zu", (unsigned long long)seq, len, want_len);
	for (size_t i = 0; i < len; i++)
		if (p[i] != pat(seq, i))
			T_FAIL("record %llu: byte %zu wrong", (unsigned long long)seq, i);
}

/* The lengths of the records in flight, in order (a small FIFO). */
struct fifo {
	uint32_t len[1u << 12];
	uint64_t head, tail;
};

static void test_errors(void)
{
	struct ipcring_opts o = { .capacity = 4096 };
	struct ipcring_rec r[IPCRING_BATCH_MAX + 1] = { { 0 } };
	struct t_pair p;

	t_pair_open(&p, &o);
	T_EQ(ipcring_reserve_batch(p.prod, r, 0, 0), -EINVAL);
	T_EQ(ipcring_reserve_batch(p.prod, r, IPCRING_BATCH_MAX + 1, 0), -EINVAL);
	T_EQ(ipcring_reserve_batch(p.cons, r, 1, 0), -EINVAL);
	r[0].len = 1024;
	r[1].len = 1024;
	T_EQ(ipcring_reserve_batch(p.prod, r, 2, 0), -EMSGSIZE);	/* > half the ring */
	r[0].len = 2000;
	T_EQ(ipcring_reserve_batch(p.prod, r, 1, 0), -EMSGSIZE);	/* > max_record */
	T_EQ(ipcring_commit_batch(p.prod, r, 1, 0), -EINVAL);		/* nothing reserved */
	r[0].len = 10;
	r[1].len = 20;
	T_EQ(ipcring_reserve_batch(p.prod, r, 2, 0), 0);
	r[0].len = 5;
	T_EQ(ipcring_commit_batch(p.prod, r, 2, 0), -EINVAL);		/* not the last shorter */
	r[0].len = 10;
	r[1].len = 21;
	T_EQ(ipcring_commit_batch(p.prod, r, 2, 0), -EINVAL);		/* longer than reserved */
	T_EQ(ipcring_abort(p.prod), 0);
	T_EQ(ipcring_commit_batch(p.prod, r, 1, 0), -EINVAL);		/* aborted */
	T_EQ(ipcring_peek_batch(p.cons, r, 4, 0), -EAGAIN);
	T_EQ(ipcring_release_batch(p.cons, 1), -EINVAL);
	T_EQ(ipcring_peek_batch(p.prod, r, 4, 0), -EINVAL);
	t_pair_close(&p);
}

/* Producer step: a random batch (or -EAGAIN when full). */
static int produce(struct t_pair *p, struct fifo *f, uint64_t *rnd, uint64_t *commits)
{
	struct ipcring_rec r[8];	/* 8 x 208 bytes: within half the ring */
	unsigned n = 1 + (unsigned)(t_rand(rnd) % 8), keep;
	int ret;

	for (unsigned i = 0; i < n; i++)
		r[i].len = t_rand(rnd) % (MAXLEN + 1);
	ret = ipcring_reserve_batch(p->prod, r, n, 0);
	if (ret)
		return ret;
	keep = 1 + (unsigned)(t_rand(rnd) % n);		/* commit a prefix */
	if (t_rand(rnd) % 4 == 0)
		r[keep - 1].len /= 2;			/* the last one short */
	for (unsigned i = 0; i < keep; i++) {
		fill(r[i].buf, r[i].len, f->tail);
		f->len[f->tail++ % (sizeof(f->len) / sizeof(f->len[0]))] = (uint32_t)r[i].len;
	}
	T_EQ(ipcring_commit_batch(p->prod, r, keep, 0), 0);
	(*commits)++;
	return 0;
}

static int consume(struct t_pair *p, struct fifo *f, uint64_t *rnd, uint64_t *releases)
{
	struct ipcring_rec r[IPCRING_BATCH_MAX];
	unsigned max = 1 + (unsigned)(t_rand(rnd) % IPCRING_BATCH_MAX), k;
	int n = ipcring_peek_batch(p->cons, r, max, 0);

	if (n < 0)
		return n;
	T_ASSERT(n >= 1 && (unsigned)n <= max);
	for (int i = 0; i < n; i++)
		check(r[i].buf, r[i].len,
		      f->len[(f->head + (uint64_t)i) % (sizeof(f->len) / sizeof(f->len[0]))],
		      f->head + (uint64_t)i);
	/* peeking again gives the same records */
	T_EQ(ipcring_peek_batch(p->cons, r, max, 0), n);
	k = 1 + (unsigned)(t_rand(rnd) % (unsigned)n);	/* release a prefix */
	T_EQ(ipcring_release_batch(p->cons, k), 0);
	f->head += k;
	(*releases)++;
	return 0;
}

static void test_wrap(uint32_t flags)
{
	struct ipcring_opts o = { .capacity = 4096, .start_index = 0xFFFFF000u, .flags = flags };
	static struct fifo f;
	struct ipcring_stats st;
	uint64_t rnd = 12345 + flags, commits = 0, releases = 0;
	struct t_pair p;

	memset(&f, 0, sizeof(f));
	t_pair_open(&p, &o);
	while (f.tail < 200000) {
		if (t_rand(&rnd) % 2) {
			if (produce(&p, &f, &rnd, &commits) == -EAGAIN)
				T_EQ(consume(&p, &f, &rnd, &releases), 0);
		} else if (consume(&p, &f, &rnd, &releases) == -EAGAIN) {
			T_EQ(produce(&p, &f, &rnd, &commits), 0);
		}
	}
	while (f.head < f.tail)
		T_EQ(consume(&p, &f, &rnd, &releases), 0);
	T_EQ(ipcring_peek_batch(p.cons, (struct ipcring_rec[1]){ { 0 } }, 1, 0), -EAGAIN);
	T_EQ(ipcring_stats(p.prod, &st), 0);
	T_EQ(st.producer.msgs, f.tail);
	T_EQ(st.consumer.msgs, f.head);
	/* one publication per batch: commits on one side, at most releases on
	 * the other (an empty ring publishes nothing more) */
	T_EQ(st.producer.flushes, commits);
	T_ASSERT(st.consumer.flushes <= releases);
	printf("wrap (%s mapping): %llu records in %llu batches, %llu publications\n",
	       flags ? "single" : "double", (unsigned long long)f.tail,
	       (unsigned long long)commits, (unsigned long long)st.producer.flushes);
	t_pair_close(&p);
}

/* Two threads, blocking batches: order and content survive. */
struct duo {
	struct t_pair p;
	uint64_t n;
	unsigned max_batch;
	bool small;	/* a 4 KiB ring, records of 8-64 bytes at random */
};

static size_t duo_len(const struct duo *d, uint64_t seq)
{
	return d->small ? (size_t)(seq * 0x9e3779b1u >> 7) % 57 : (size_t)(seq % 64);
}

static void *producer(void *arg)
{
	struct duo *d = arg;
	struct ipcring_rec r[IPCRING_BATCH_MAX];
	uint64_t seq = 0, rnd = 99;

	while (seq < d->n) {
		unsigned n = 1 + (unsigned)(t_rand(&rnd) % d->max_batch);

		if (n > d->n - seq)
			n = (unsigned)(d->n - seq);
		for (unsigned i = 0; i < n; i++)
			r[i].len = duo_len(d, seq + i);
		T_EQ(ipcring_reserve_batch(d->p.prod, r, n, 5000), 0);
		for (unsigned i = 0; i < n; i++)
			fill(r[i].buf, r[i].len, seq + i);
		T_EQ(ipcring_commit_batch(d->p.prod, r, n, 0), 0);
		seq += n;
	}
	return NULL;
}

/*
 * With @small, a one-page ring of short records at random offsets: every
 * lap leaves committed headers of the lap before at places a record of this
 * lap may start, and a consumer that never sleeps reads each header as soon
 * as the record before it is committed, so a batch that commits a record
 * before zeroing the header after it is read as a stale record (-EBADMSG
 * or a wrong record) here.
 */
static void test_threads(uint32_t flags, bool small)
{
	struct ipcring_opts o = { .capacity = small ? 4096 : 65536, .flags = flags,
				  .spin_ns = small ? 1000000 : 0 };
	struct ipcring_rec r[IPCRING_BATCH_MAX];
	struct duo d = { .n = small ? 2000000 : 500000, .max_batch = small ? 32 : 8,
			 .small = small };
	uint64_t seq = 0;
	pthread_t th;

	t_pair_open(&d.p, &o);
	T_EQ(pthread_create(&th, NULL, producer, &d), 0);
	while (seq < d.n) {
		int n = ipcring_peek_batch(d.p.cons, r, IPCRING_BATCH_MAX, 5000);

		if (n <= 0)
			T_FAIL("record %llu: peek_batch gave %d", (unsigned long long)seq, n);
		for (int i = 0; i < n; i++)
			check(r[i].buf, r[i].len, duo_len(&d, seq + (uint64_t)i),
			      seq + (uint64_t)i);
		T_EQ(ipcring_release_batch(d.p.cons, (unsigned)n), 0);
		seq += (uint64_t)n;
	}
	pthread_join(th, NULL);
	t_pair_close(&d.p);
	printf("threads: %llu records\n", (unsigned long long)seq);
}

/*
 * A run becomes visible whole: the consumer of a connection's ring polls
 * the first record's commit word (poll_rec) while it spins, and the
 * producer commits a run of RUN records once the consumer has released the
 * one before. Each peek_batch must return the whole run: commit_batch
 * writes the first record's commit word last. Written first to last, the
 * first record was seen before the rest were committed (the consumer then
 * moved runs of a few records, each released on its own: ring-ipc's 64 B
 * stream at 0.82-0.91x ring's in the VM's slow mode).
 */
#define RUN	64u
#define RUNS	10000u

struct whole {
	struct t_pair p;
	_Atomic uint32_t released;	/* runs the consumer has released */
};

static void *whole_producer(void *arg)
{
	struct whole *w = arg;
	struct ipcring_rec r[RUN];

	t_pin(1);
	for (uint32_t k = 0; k < RUNS; k++) {
		/* yields: on a loaded machine the consumer may be waiting for a CPU */
		for (unsigned spins = 0;
		     atomic_load_explicit(&w->released, memory_order_acquire) != k; spins++)
			if (spins % 1024 == 1023)
				sched_yield();
			else
				ring_cpu_relax();
		for (unsigned i = 0; i < RUN; i++)
			r[i].len = 16;
		T_EQ(ipcring_reserve_batch(w->p.prod, r, RUN, 5000), 0);
		for (unsigned i = 0; i < RUN; i++)
			fill(r[i].buf, 16, (uint64_t)k * RUN + i);
		T_EQ(ipcring_commit_batch(w->p.prod, r, RUN, 0), 0);
	}
	return NULL;
}

static void test_whole_runs(void)
{
	/* spins 200 us: a sleeping consumer is woken by the flush, after the
	 * whole run, so only a spinning one can catch a run in part */
	struct ipcring_opts o = { .capacity = 65536, .spin_ns = 200000 };
	struct ipcring_rec r[IPCRING_BATCH_MAX];
	struct whole w = { .released = 0 };
	unsigned partial = 0, smallest = RUN;
	pthread_t th;

	t_pair_open(&w.p, &o);
	w.p.cons->poll_rec = true;
	T_EQ(pthread_create(&th, NULL, whole_producer, &w), 0);
	t_pin(0);
	for (uint32_t k = 0; k < RUNS; k++) {
		unsigned got = 0;

		while (got < RUN) {
			int n = ipcring_peek_batch(w.p.cons, r, IPCRING_BATCH_MAX, 5000);

			if (n <= 0 || got + (unsigned)n > RUN)
				T_FAIL("run %u: peek_batch gave %d after %u records", k, n, got);
			if (!got && (unsigned)n < RUN) {
				partial++;
				smallest = (unsigned)n < smallest ? (unsigned)n : smallest;
			}
			for (int i = 0; i < n; i++)
				check(r[i].buf, r[i].len, 16, (uint64_t)k * RUN + got + (unsigned)i);
			T_EQ(ipcring_release_batch(w.p.cons, (unsigned)n), 0);
			got += (unsigned)n;
		}
		atomic_store_explicit(&w.released, k + 1, memory_order_release);
	}
	pthread_join(th, NULL);
	t_pair_close(&w.p);
	if (partial)
		T_FAIL("%u of %u runs were seen in part (the smallest first part: %u of %u records)",
		       partial, RUNS, smallest, RUN);
	printf("whole runs: %u runs of %u, each seen whole\n", RUNS, RUN);
}

int main(void)
{
	test_errors();
	test_wrap(0);
	test_wrap(IPCRING_F_SINGLE_MAP);
	test_threads(IPCRING_F_SINGLE_MAP, false);
	test_threads(0, true);
	test_threads(IPCRING_F_SINGLE_MAP, true);
	test_whole_runs();
	printf("batch: ok\n");
	return 0;
}
