// SPDX-License-Identifier: MIT
/*
 * transport.c - ipclab's ring transports (src/transport/ring.c) on the
 * failure paths of create(): when the shared page of pids cannot be mapped,
 * destroy() must close nothing, in particular none of the caller's fds
 * (finding 8 of the review: the fd table was still uninitialised there).
 * mmap() is interposed here to make that one mapping fail.
 *
 * -O batch=N (runs of places reserved with ipcring_reserve_batch and
 * committed at once): a sender thread streams messages of random content
 * to a receiver through a one-page ring, for several N (2, 7, 64: a run of
 * 64 cannot fit and falls back to single reservations; 100: runs of 64),
 * pausing now and then (the receiver sleeps) and every so often waiting
 * for a reply (the run so far must be published before it waits); every
 * message arrives once, in order, intact, and the last ones, short of a
 * batch, arrive at the sender's close, followed by the end of the stream.
 * The same through the batch operations (reserve_n/commit_n, peek_n/
 * release_n), each call asking for a random number of places or records:
 * none hands out more than asked, or more places than the batch has left.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ipclab/transport.h"
#include "tutil.h"

extern const struct transport tp_ring;

static bool fail_anon_shared;

/* The program's mmap: fails anonymous shared mappings when asked. Not
 * instrumented by ThreadSanitizer, whose start-up calls it before its
 * own state exists. */
__attribute__((no_sanitize("thread")))
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (fail_anon_shared && (flags & MAP_ANONYMOUS) && (flags & MAP_SHARED)) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

static void test_pids_map_fails(void)
{
	struct tp_config cfg = { .msg_size = 64, .clients = 2 };
	struct tp_channel ch = { .tp = &tp_ring, .cfg = &cfg };
	int sentinel = open("/dev/null", O_RDONLY | O_CLOEXEC), ret;
	size_t nfd = 2 * 4;		/* clients x the fds of one client */
	char err[256];
	int *seed;

	T_ASSERT(sentinel >= 0);
	/* a freed block of the fd table's size, full of a live fd number: the
	 * allocator is likely to hand it to create() for its fd table */
	seed = malloc(nfd * sizeof(*seed));
	T_ASSERT(seed);
	for (size_t i = 0; i < nfd; i++)
		seed[i] = sentinel;
	free(seed);
	fail_anon_shared = true;
	ret = tp_ring.create(&ch, err, sizeof(err));
	fail_anon_shared = false;
	T_EQ(ret, -ENOMEM);
	tp_ring.destroy(&ch);
	if (fcntl(sentinel, F_GETFD) < 0)
		T_FAIL("destroy() after a failed create() closed fd %d, which the "
		       "transport never opened", sentinel);
	close(sentinel);
}

#define RUN_MSGS 20000u
#define RUN_SIZE 64u
#define RUN_ASK_EVERY 997u	/* the sender waits for a reply after this many */

struct run_test {
	struct tp_endpoint *client, *server;
};

static void run_fill(unsigned char *p, uint32_t i)
{
	memcpy(p, &i, sizeof(i));
	for (unsigned k = sizeof(i); k < RUN_SIZE; k++)
		p[k] = (unsigned char)(i * 31u + k);
}

static void *run_sender(void *arg)
{
	struct run_test *t = arg;
	uint64_t rnd = 0x9e3779b97f4a7c15ull;
	const void *reply;
	void *p;

	for (uint32_t i = 0; i < RUN_MSGS; i++) {
		if (tp_ring.reserve(t->client, &p, RUN_SIZE) != RUN_SIZE)
			T_FAIL("reserve of message %u failed", i);
		run_fill(p, i);
		if (tp_ring.commit(t->client, RUN_SIZE) != RUN_SIZE)
			T_FAIL("commit of message %u failed", i);
		if (t_rand(&rnd) % 4096 == 0)
			usleep(2000);	/* the receiver sleeps meanwhile */
		if (i % RUN_ASK_EVERY == RUN_ASK_EVERY - 1) {
			/* blocks until the receiver has seen message i */
			if (tp_ring.peek(t->client, &reply, RUN_SIZE) != RUN_SIZE)
				T_FAIL("no reply after message %u", i);
			tp_ring.release(t->client);
		}
	}
	tp_ring.close(t->client);	/* publishes the rest, then the end */
	return NULL;
}

/* A ring channel of one client in a 4 KiB ring with -O batch, both ends
 * open (thread endpoints); *opts to free after destroy. */
static void open_batch_pair(const char *batch, struct tp_config *cfg, struct tp_channel *ch,
			    char **opts, struct tp_endpoint **server, struct tp_endpoint **client)
{
	char err[256];

	*opts = calloc(1, tp_ring.opts_size);
	T_ASSERT(*opts);
	*cfg = (struct tp_config){ .msg_size = RUN_SIZE, .clients = 1, .threads = true };
	*ch = (struct tp_channel){ .tp = &tp_ring, .cfg = cfg };
	T_EQ(opt_defaults(tp_ring.options, *opts, err, sizeof(err)), 0);
	T_EQ(opt_set(opt_find(tp_ring.options, "batch"), *opts, batch, err, sizeof(err)), 0);
	T_EQ(opt_set(opt_find(tp_ring.options, "capacity"), *opts, "4096", err, sizeof(err)), 0);
	cfg->opts = *opts;
	if (tp_ring.create(ch, err, sizeof(err)))
		T_FAIL("batch=%s: create: %s", batch, err);
	if (tp_ring.open(ch, TP_SERVER, 0, server, err, sizeof(err)) ||
	    tp_ring.open(ch, TP_CLIENT, 0, client, err, sizeof(err)))
		T_FAIL("batch=%s: open: %s", batch, err);
}

/* open_batch_pair's channel, once the sender thread closed its end */
static void close_batch_pair(struct tp_channel *ch, char *opts, struct tp_endpoint *server)
{
	tp_ring.close(server);
	tp_ring.destroy(ch);
	free(opts);
}

static void test_batch_runs(const char *batch)
{
	unsigned char want[RUN_SIZE];
	struct tp_config cfg;
	struct tp_channel ch;
	struct run_test t;
	const void *msg;
	pthread_t th;
	char *opts;
	ssize_t n;
	uint32_t i;

	open_batch_pair(batch, &cfg, &ch, &opts, &t.server, &t.client);
	T_EQ(pthread_create(&th, NULL, run_sender, &t), 0);
	for (i = 0; i < RUN_MSGS; i++) {
		n = tp_ring.peek(t.server, &msg, RUN_SIZE);
		if (n != RUN_SIZE)
			T_FAIL("batch=%s: message %u: peek gave %zd", batch, i, n);
		run_fill(want, i);
		if (memcmp(msg, want, RUN_SIZE))
			T_FAIL("batch=%s: message %u is not the one sent (out of order, "
			       "lost or torn)", batch, i);
		tp_ring.release(t.server);
		if (i % RUN_ASK_EVERY == RUN_ASK_EVERY - 1) {
			void *p;

			T_EQ(tp_ring.reserve(t.server, &p, RUN_SIZE), RUN_SIZE);
			memset(p, 0, RUN_SIZE);
			T_EQ(tp_ring.commit(t.server, RUN_SIZE), RUN_SIZE);
		}
	}
	n = tp_ring.peek(t.server, &msg, RUN_SIZE);
	if (n != 0)
		T_FAIL("batch=%s: after the last message peek gave %zd, not the end", batch, n);
	T_EQ(pthread_join(th, NULL), 0);
	close_batch_pair(&ch, opts, t.server);
}

struct n_test {
	struct tp_endpoint *client, *server;
	unsigned batch;
};

static void *n_sender(void *arg)
{
	struct n_test *t = arg;
	uint64_t rnd = 0x2545f4914f6cdd1dull;
	void *bufs[TP_BATCH_MAX];
	const void *reply;
	uint32_t i = 0;

	while (i < RUN_MSGS) {
		unsigned max = 1 + (unsigned)(t_rand(&rnd) % TP_BATCH_MAX);
		ssize_t k;

		if (max > RUN_MSGS - i)
			max = RUN_MSGS - i;
		k = tp_ring.reserve_n(t->client, bufs, RUN_SIZE, max);
		if (k < 1 || (unsigned)k > max || (unsigned)k > t->batch)
			T_FAIL("batch=%u: reserve_n(%u) at message %u gave %zd", t->batch, max, i, k);
		for (ssize_t j = 0; j < k; j++)
			run_fill(bufs[j], i + (uint32_t)j);
		if (tp_ring.commit_n(t->client, (unsigned)k, RUN_SIZE))
			T_FAIL("batch=%u: commit_n of messages %u.. failed", t->batch, i);
		for (ssize_t j = 0; j < k; j++, i++)
			if (i % RUN_ASK_EVERY == RUN_ASK_EVERY - 1) {
				if (tp_ring.peek(t->client, &reply, RUN_SIZE) != RUN_SIZE)
					T_FAIL("no reply after message %u", i);
				tp_ring.release(t->client);
			}
		if (t_rand(&rnd) % 1024 == 0)
			usleep(2000);
	}
	tp_ring.close(t->client);
	return NULL;
}

static void test_batch_n(const char *batch)
{
	unsigned char want[RUN_SIZE];
	struct tp_config cfg;
	struct tp_channel ch;
	uint64_t rnd = 0x853c49e6748fea9bull;
	const void *msgs[TP_BATCH_MAX];
	size_t lens[TP_BATCH_MAX];
	/* auto: a run is as long as asked (up to what the ring takes) */
	struct n_test t = { .batch = atoi(batch) ? (unsigned)atoi(batch) : TP_BATCH_MAX };
	pthread_t th;
	uint32_t i = 0;
	char *opts;
	ssize_t k;

	open_batch_pair(batch, &cfg, &ch, &opts, &t.server, &t.client);
	T_EQ(pthread_create(&th, NULL, n_sender, &t), 0);
	while (i < RUN_MSGS) {
		unsigned max = 1 + (unsigned)(t_rand(&rnd) % TP_BATCH_MAX);

		k = tp_ring.peek_n(t.server, msgs, lens, max);
		if (k < 1 || (unsigned)k > max)
			T_FAIL("batch=%s: peek_n(%u) at message %u gave %zd", batch, max, i, k);
		for (ssize_t j = 0; j < k; j++, i++) {
			run_fill(want, i);
			if (lens[j] != RUN_SIZE || memcmp(msgs[j], want, RUN_SIZE))
				T_FAIL("batch=%s: message %u is not the one sent (out of order, "
				       "lost, torn or %zu bytes)", batch, i, lens[j]);
		}
		tp_ring.release_n(t.server, (unsigned)k);
		for (uint32_t m = i - (uint32_t)k; m < i; m++)
			if (m % RUN_ASK_EVERY == RUN_ASK_EVERY - 1) {
				void *p;

				T_EQ(tp_ring.reserve(t.server, &p, RUN_SIZE), RUN_SIZE);
				memset(p, 0, RUN_SIZE);
				T_EQ(tp_ring.commit(t.server, RUN_SIZE), RUN_SIZE);
			}
	}
	k = tp_ring.peek_n(t.server, msgs, lens, TP_BATCH_MAX);
	if (k != 0)
		T_FAIL("batch=%s: after the last message peek_n gave %zd, not the end", batch, k);
	T_EQ(pthread_join(th, NULL), 0);
	close_batch_pair(&ch, opts, t.server);
}

/* -O batch=auto holds nothing back: a message committed alone, and a run
 * committed with commit_n, are visible to the receiver at once, with no
 * further call on the sending end (batch=64 would keep them unpublished
 * and the peek below would wait until alarm() ends the test). */
static void test_auto_publishes(void)
{
	struct tp_endpoint *server, *client;
	const void *msgs[TP_BATCH_MAX];
	size_t lens[TP_BATCH_MAX];
	unsigned char want[RUN_SIZE];
	static const unsigned asks[] = { 1, 2, 3, 17, 64 };
	struct tp_config cfg;
	struct tp_channel ch;
	void *bufs[TP_BATCH_MAX];
	uint32_t seq = 0;
	ssize_t k, got;
	char *opts;

	open_batch_pair("auto", &cfg, &ch, &opts, &server, &client);
	T_ASSERT(tp_ring.runs && tp_ring.runs(client));
	T_EQ(tp_ring.reserve(client, &bufs[0], RUN_SIZE), RUN_SIZE);
	run_fill(bufs[0], seq);
	T_EQ(tp_ring.commit(client, RUN_SIZE), RUN_SIZE);
	T_EQ(tp_ring.peek(server, &msgs[0], RUN_SIZE), RUN_SIZE);
	run_fill(want, seq++);
	if (memcmp(msgs[0], want, RUN_SIZE))
		T_FAIL("batch=auto: a message sent alone is not the one received");
	tp_ring.release(server);
	for (size_t a = 0; a < sizeof(asks) / sizeof(asks[0]); a++) {
		k = tp_ring.reserve_n(client, bufs, RUN_SIZE, asks[a]);
		if (k < 1 || (unsigned)k > asks[a])
			T_FAIL("batch=auto: reserve_n(%u) gave %zd", asks[a], k);
		for (ssize_t j = 0; j < k; j++)
			run_fill(bufs[j], seq + (uint32_t)j);
		T_EQ(tp_ring.commit_n(client, (unsigned)k, RUN_SIZE), 0);
		for (ssize_t seen = 0; seen < k; seen += got) {
			got = tp_ring.peek_n(server, msgs, lens, TP_BATCH_MAX);
			if (got < 1 || seen + got > k)
				T_FAIL("batch=auto: after a run of %zd, peek_n gave %zd", k, got);
			for (ssize_t j = 0; j < got; j++, seq++) {
				run_fill(want, seq);
				if (lens[j] != RUN_SIZE || memcmp(msgs[j], want, RUN_SIZE))
					T_FAIL("batch=auto: message %u is not the one sent", seq);
			}
			tp_ring.release_n(server, (unsigned)got);
		}
	}
	tp_ring.close(client);
	close_batch_pair(&ch, opts, server);
}

int main(void)
{
	alarm(120);	/* a batch left unpublished hangs both threads: end it */
	test_pids_map_fails();
	test_batch_runs("2");
	test_batch_runs("7");
	test_batch_runs("64");
	test_batch_runs("100");
	test_batch_n("1");
	test_batch_n("7");
	test_batch_n("64");
	test_batch_n("100");
	test_batch_runs("auto");
	test_batch_n("auto");
	test_auto_publishes();
	return 0;
}
