// SPDX-License-Identifier: MIT
/*
 * stuck.c - a client that stops reading its replies holds up nobody else.
 * The server echoes every request with a hook that would wait for room as
 * long as it takes (ipcring_conn_send with timeout -1), which before held
 * the whole dispatcher inside that one client's send.
 *  - One client sends requests and never reads: once the server has made
 *    more replies than its reply ring holds, another client's 1000 round
 *    trips all complete before a 5 s deadline. With the stall limit at
 *    "never" it stays connected meanwhile; with the limit then set to
 *    200 ms it is dropped, the disconnected hook given -ETIMEDOUT, and it
 *    reads the replies that were in its ring, then the end of the stream.
 *  - A client that stops reading for a while, then reads, gets all 2000
 *    replies once, in order, intact: those that did not fit waited in the
 *    queue and went as its ring drained.
 *  - A request whose 400 replies fill the ring and the queue (8 KiB): the
 *    hook's send returns -EAGAIN rather than waiting, and the client,
 *    reading once the hook is done, gets exactly the replies that were
 *    accepted, in order.
 *  - Then, with no reply waiting, the server sleeps in epoll again: over
 *    300 ms idle it wakes (voluntary context switches) far fewer than the
 *    300 times a timer still ticking every millisecond would make.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tutil.h"

#define MSG		256		/* request and reply size */
#define ROUNDS		1000
#define DEADLINE_NS	5000000000ull	/* the other client's round trips */
#define SLOW_N		2000
#define BURST		400		/* replies to one "burst" request */
#define QUEUE_MAX	8192

enum { T_STUCK = 1, T_GOOD, T_SLOW, T_BURST };

struct server {
	struct ipcring_server *s;
	_Atomic int stop;
	_Atomic uint64_t got[5];	/* requests seen, by tag */
	_Atomic int gone[5];		/* disconnected, by tag: why - 1 (so 0 = not yet) */
	_Atomic int burst_ok, burst_eagain, burst_done;
	/* limits for the server's thread to set (the dispatcher is its alone) */
	_Atomic size_t lim_queue;
	_Atomic int lim_stall, lim_gen, lim_done;
	/* the server's voluntary context switches (its sleeps) while idle:
	 * 1 = count from now, 2 = counting, 3 = stop, 4 = counted */
	_Atomic int idle_phase;
	long csw0, csw;
	pthread_t th;
};

static uint64_t tag_of(struct ipcring_conn *c)
{
	uint64_t tag = 0;

	T_EQ(ipcring_conn_tag(c, &tag), 0);
	T_ASSERT(tag >= T_STUCK && tag <= T_BURST);
	return tag;
}

/* Replies to a burst request: BURST of them, numbered, until one fails. */
static void burst(struct server *v, struct ipcring_conn *c)
{
	unsigned char rep[MSG];

	for (int i = 0; i < BURST; i++) {
		memset(rep, i, sizeof(rep));
		int r = ipcring_conn_send(c, rep, sizeof(rep), IPCRING_MORE, -1);

		if (r == -EAGAIN) {
			atomic_store(&v->burst_eagain, 1);
			break;
		}
		T_EQ(r, 0);
		atomic_fetch_add(&v->burst_ok, 1);
	}
	atomic_store(&v->burst_done, 1);
}

static int on_msg(void *ctx, struct ipcring_conn *c, const void *m, size_t len)
{
	struct server *v = ctx;
	uint64_t tag = tag_of(c);

	atomic_fetch_add(&v->got[tag], 1);
	if (tag == T_BURST) {
		burst(v, c);
		return 0;
	}
	return ipcring_conn_send(c, m, len, IPCRING_MORE, -1);
}

static void on_gone(void *ctx, struct ipcring_conn *c, int why)
{
	struct server *v = ctx;

	atomic_store(&v->gone[tag_of(c)], why - 1);
}

static const struct ipcring_server_ops ops = { .message = on_msg, .disconnected = on_gone };

static void *server_loop(void *arg)
{
	struct server *v = arg;

	while (!atomic_load(&v->stop)) {
		int gen = atomic_load(&v->lim_gen);

		if (gen != atomic_load(&v->lim_done)) {
			T_EQ(ipcring_server_set_reply_limits(v->s, atomic_load(&v->lim_queue),
							     atomic_load(&v->lim_stall)), 0);
			atomic_store(&v->lim_done, gen);
		}
		if (ipcring_server_dispatch(v->s, 20) < 0)
			T_FAIL("dispatch");
		gen = atomic_load(&v->idle_phase);
		if (gen == 1 || gen == 3) {
			struct rusage ru;

			T_EQ(getrusage(RUSAGE_THREAD, &ru), 0);
			if (gen == 1)
				v->csw0 = ru.ru_nvcsw;
			else
				v->csw = ru.ru_nvcsw - v->csw0;
			atomic_store(&v->idle_phase, gen + 1);
		}
	}
	return NULL;
}

static void idle_phase(struct server *v, int phase)
{
	uint64_t end = t_now_ns() + 10000000000ull;

	atomic_store(&v->idle_phase, phase);
	while (atomic_load(&v->idle_phase) != phase + 1) {
		if (t_now_ns() > end)
			T_FAIL("the server's thread did not answer within 10 s");
		usleep(1000);
	}
}

/*
 * No reply waits any more: the dispatcher's timer (a tick every 1 ms while
 * one does) has stopped, and over 300 ms idle the server sleeps through
 * each 20 ms dispatch, waking some 15 times, not 300.
 */
static void idle_again(struct server *v)
{
	idle_phase(v, 1);
	usleep(300000);		/* the span counted, not a synchronisation */
	idle_phase(v, 3);
	printf("idle after the backlogs: the server woke %ld times in 300 ms\n", v->csw);
	if (v->csw > 100)
		T_FAIL("the idle server woke %ld times in 300 ms: still ticking", v->csw);
}

/* ipcring_server_set_reply_limits(), on the server's thread. */
static void set_limits(struct server *v, size_t queue, int stall_ms)
{
	uint64_t end = t_now_ns() + 10000000000ull;
	int gen;

	atomic_store(&v->lim_queue, queue);
	atomic_store(&v->lim_stall, stall_ms);
	gen = atomic_fetch_add(&v->lim_gen, 1) + 1;
	while (atomic_load(&v->lim_done) != gen) {
		if (t_now_ns() > end)
			T_FAIL("the server's thread did not set the limits within 10 s");
		usleep(1000);
	}
}

static struct ipcring_conn *connect_tag(const char *name, uint64_t tag)
{
	struct ipcring_connect_opts o = { .tag = tag };
	struct ipcring_conn *c;
	char why[IPCRING_REASON_MAX];
	int r = ipcring_connect(&c, name, &o, why, sizeof(why));

	if (r)
		T_FAIL("connect (tag %llu): %s", (unsigned long long)tag, why);
	return c;
}

/* How many MSG-byte replies the reply ring of @c holds. */
static uint64_t ring_holds(struct ipcring_conn *c)
{
	struct ipcring_info info;
	struct ipcring *rx;
	uint64_t rs;

	T_EQ(ipcring_conn_rings(c, NULL, &rx), 0);
	T_EQ(ipcring_info(rx, &info), 0);
	rs = (8 + MSG + info.align - 1) / info.align * info.align;
	return (info.capacity - 8) / rs;	/* each record keeps 8 bytes free behind it */
}

static void fill(unsigned char *p, uint64_t i)
{
	for (size_t k = 0; k < MSG; k++)
		p[k] = (unsigned char)(k < sizeof(i) ? i >> (8 * k) : i * 31 + k);
}

static void wait_for(_Atomic uint64_t *what, uint64_t want, const char *label)
{
	uint64_t end = t_now_ns() + 10000000000ull;

	while (atomic_load(what) < want) {
		if (t_now_ns() > end)
			T_FAIL("%s: %llu of %llu within 10 s", label,
			       (unsigned long long)atomic_load(what), (unsigned long long)want);
		usleep(1000);
	}
}

static void wait_flag(_Atomic int *flag, const char *label)
{
	uint64_t end = t_now_ns() + 10000000000ull;

	while (!atomic_load(flag)) {
		if (t_now_ns() > end)
			T_FAIL("%s: not done within 10 s", label);
		usleep(1000);
	}
}

static void wait_gone(struct server *v, int tag, int why, const char *label)
{
	uint64_t end = t_now_ns() + 10000000000ull;

	while (!atomic_load(&v->gone[tag])) {
		if (t_now_ns() > end)
			T_FAIL("%s: not dropped within 10 s", label);
		usleep(1000);
	}
	T_EQ(atomic_load(&v->gone[tag]) + 1, why);
}

/* Send until the server has made more replies than the ring holds. */
static void stall(struct server *v, struct ipcring_conn *c, int tag, uint64_t holds)
{
	unsigned char req[MSG];
	uint64_t end = t_now_ns() + 10000000000ull, i = 0;

	while (atomic_load(&v->got[tag]) <= holds) {
		fill(req, i);
		int r = ipcring_conn_send(c, req, sizeof(req), 0, 0);

		if (r == 0)
			i++;
		else if (r != -EAGAIN)
			T_FAIL("stuck client: send: %d", r);
		else if (t_now_ns() > end)
			T_FAIL("stuck client: the server took %llu requests in 10 s",
			       (unsigned long long)atomic_load(&v->got[tag]));
		else
			usleep(100);
	}
}

static void good_round_trips(struct ipcring_conn *c)
{
	unsigned char req[MSG], rep[MSG];
	uint64_t end = t_now_ns() + DEADLINE_NS, now;
	size_t len;

	for (uint64_t i = 0; i < ROUNDS; i++) {
		fill(req, i);
		now = t_now_ns();
		T_EQ(ipcring_conn_send(c, req, sizeof(req), 0, 1000), 0);
		int r = now < end ? ipcring_conn_recv(c, rep, sizeof(rep), &len,
						     (int)((end - now) / 1000000) + 1) : -ETIMEDOUT;

		if (r != 1)
			T_FAIL("beside a stuck client, %llu of %d round trips within 5 s (%d)",
			       (unsigned long long)i, ROUNDS, r);
		T_ASSERT(len == MSG && !memcmp(req, rep, MSG));
	}
}

static void stuck_client(struct server *v, const char *name)
{
	struct ipcring_conn *stuck = connect_tag(name, T_STUCK);
	struct ipcring_conn *good = connect_tag(name, T_GOOD);
	unsigned char rep[MSG];
	uint64_t holds = ring_holds(stuck), t0, n = 0;
	size_t len;
	int r;

	set_limits(v, 0, -1);
	stall(v, stuck, T_STUCK, holds);
	t0 = t_now_ns();
	good_round_trips(good);
	printf("stuck client: %llu requests taken (its ring holds %llu replies); "
	       "the other's %d round trips in %llu ms\n",
	       (unsigned long long)atomic_load(&v->got[T_STUCK]), (unsigned long long)holds,
	       ROUNDS, (unsigned long long)(t_now_ns() - t0) / 1000000);
	T_EQ(atomic_load(&v->gone[T_STUCK]), 0);	/* "never" kept it */
	set_limits(v, 0, 200);
	wait_gone(v, T_STUCK, -ETIMEDOUT, "stuck client");
	while ((r = ipcring_conn_recv(stuck, rep, sizeof(rep), &len, 2000)) == 1) {
		unsigned char want[MSG];

		fill(want, n++);
		T_ASSERT(len == MSG && !memcmp(want, rep, MSG));
	}
	T_EQ(r, 0);		/* the end of the stream */
	T_EQ(n, holds);
	T_EQ(ipcring_conn_close(stuck), 0);
	T_EQ(ipcring_conn_close(good), 0);
	wait_gone(v, T_GOOD, 0, "the other client");
}

struct sender {
	struct ipcring_conn *c;
	pthread_t th;
};

static void *slow_send(void *arg)
{
	struct sender *k = arg;
	unsigned char req[MSG];

	for (uint64_t i = 0; i < SLOW_N; i++) {
		fill(req, i);
		T_EQ(ipcring_conn_send(k->c, req, sizeof(req), 0, 10000), 0);
	}
	return NULL;
}

static void slow_client(struct server *v, const char *name)
{
	struct sender k = { .c = connect_tag(name, T_SLOW) };
	unsigned char rep[MSG], want[MSG];
	uint64_t holds = ring_holds(k.c);
	size_t len;

	set_limits(v, 0, 5000);
	T_EQ(pthread_create(&k.th, NULL, slow_send, &k), 0);
	wait_for(&v->got[T_SLOW], holds + 1, "slow client's requests");
	for (uint64_t i = 0; i < SLOW_N; i++) {
		T_EQ(ipcring_conn_recv(k.c, rep, sizeof(rep), &len, 5000), 1);
		fill(want, i);
		if (len != MSG || memcmp(want, rep, MSG))
			T_FAIL("slow client: reply %llu is not its request", (unsigned long long)i);
	}
	pthread_join(k.th, NULL);
	printf("slow client: %d replies in order, %llu of them beyond its ring\n", SLOW_N,
	       (unsigned long long)(SLOW_N - holds));
	T_EQ(ipcring_conn_close(k.c), 0);
	wait_gone(v, T_SLOW, 0, "slow client");
}

static void burst_client(struct server *v, const char *name)
{
	struct ipcring_conn *c = connect_tag(name, T_BURST);
	unsigned char rep[MSG];
	size_t len;
	int n = 0, r;

	set_limits(v, QUEUE_MAX, 5000);
	T_EQ(ipcring_conn_send(c, "b", 1, 0, 1000), 0);
	wait_flag(&v->burst_done, "the burst hook");
	while ((r = ipcring_conn_recv(c, rep, sizeof(rep), &len, 300)) == 1) {
		T_ASSERT(len == MSG && rep[0] == (unsigned char)n && rep[MSG - 1] == rep[0]);
		n++;
	}
	T_EQ(r, -ETIMEDOUT);
	printf("burst: the hook's send gave -EAGAIN after %d replies (%d read)\n",
	       atomic_load(&v->burst_ok), n);
	T_EQ(atomic_load(&v->burst_eagain), 1);
	T_EQ(n, atomic_load(&v->burst_ok));
	T_ASSERT(n > (int)ring_holds(c) && n < BURST);	/* some were queued */
	T_EQ(ipcring_conn_close(c), 0);
	wait_gone(v, T_BURST, 0, "burst client");
}

int main(void)
{
	struct server v = { 0 };
	char name[64], why[IPCRING_REASON_MAX];

	signal(SIGPIPE, SIG_IGN);
	snprintf(name, sizeof(name), "@ipcring-stuck-%d", (int)getpid());
	T_EQ(ipcring_listen(&v.s, name, NULL, why, sizeof(why)), 0);
	T_EQ(ipcring_server_set_ops(v.s, &ops, &v), 0);
	T_EQ(pthread_create(&v.th, NULL, server_loop, &v), 0);
	stuck_client(&v, name);
	slow_client(&v, name);
	burst_client(&v, name);
	idle_again(&v);
	atomic_store(&v.stop, 1);
	pthread_join(v.th, NULL);
	T_EQ(ipcring_server_close(v.s), 0);
	printf("stuck: ok\n");
	return 0;
}
