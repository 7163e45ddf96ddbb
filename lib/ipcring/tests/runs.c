// SPDX-License-Identifier: MIT
/*
 * runs.c - the dispatcher's replies to a run of requests move as one run.
 * Two clients each commit a run of random length (1 to 3 quanta) while the
 * server is held between two dispatch calls, then let it go; the message
 * hook echoes each request with flags 0 or IPCRING_MORE at random. Every
 * reply must come, in order, and each client's reply ring must have been
 * published once per turn that served it (ceil(run / quantum)), not once
 * per reply; no more than two quanta of one client are served in a row
 * while the other has requests waiting. Then the faults: a reply ring that fills in
 * the middle of a run (the replies before it published, the rest queued
 * and moved as the client reads), and a hook that fails in the middle of
 * a run (the replies before it published, then the end).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <unistd.h>

#include "tutil.h"

#define QUANTUM		16u
#define ROUNDS		150u
#define MAXRUN		(3 * QUANTUM)
#define NLOG		(2 * MAXRUN)
#define BIG		512u		/* the filling case's reply */
#define FAIL_AT		9u		/* the failing case's bad request */

enum { K_ECHO = 1, K_BIG = 2, K_FAIL = 3 };

struct req {
	uint32_t kind;
	uint32_t idx;
	uint64_t tag;
};

struct srv {
	struct ipcring_server *s;
	_Atomic int park, stop;
	pthread_barrier_t held, go;	/* the server between two dispatch calls */
	uint64_t rnd;
	unsigned nlog;
	uint64_t log[NLOG];		/* tags in the order served */
	pthread_t th;
};

static int on_req(void *ctx, struct ipcring_conn *c, const void *m, size_t len)
{
	struct srv *v = ctx;
	unsigned char big[BIG];
	struct req r;

	if (len < sizeof(r))
		T_FAIL("a %zu-byte request", len);
	memcpy(&r, m, sizeof(r));
	if (v->nlog < NLOG)
		v->log[v->nlog++] = r.tag;
	if (r.kind == K_FAIL)
		return -EPROTO;
	if (r.kind == K_BIG) {
		memset(big, (int)(r.idx & 0xff), sizeof(big));
		memcpy(big, &r, sizeof(r));
		return ipcring_conn_send(c, big, sizeof(big), 0, 0);
	}
	return ipcring_conn_send(c, &r, sizeof(r), t_rand(&v->rnd) & 1 ? IPCRING_MORE : 0, 0);
}

static const struct ipcring_server_ops ops = { .message = on_req };

static void *server_loop(void *arg)
{
	struct srv *v = arg;

	while (!atomic_load(&v->stop) || ipcring_server_nconns(v->s) > 0) {
		if (atomic_load(&v->park)) {
			pthread_barrier_wait(&v->held);
			pthread_barrier_wait(&v->go);
		}
		if (ipcring_server_dispatch(v->s, 1) < 0)
			T_FAIL("dispatch");
	}
	return NULL;
}

static void srv_start(struct srv *v, const char *name, uint32_t capacity)
{
	struct ipcring_opts ro = { .capacity = capacity };
	struct ipcring_server_opts so = { .ring = &ro, .quantum = QUANTUM };
	char why[IPCRING_REASON_MAX];

	memset(v, 0, sizeof(*v));
	v->rnd = 0x9e3779b97f4a7c15ull;
	T_EQ(pthread_barrier_init(&v->held, NULL, 2), 0);
	T_EQ(pthread_barrier_init(&v->go, NULL, 2), 0);
	T_EQ(ipcring_listen(&v->s, name, &so, why, sizeof(why)), 0);
	T_EQ(ipcring_server_set_ops(v->s, &ops, v), 0);
	T_EQ(pthread_create(&v->th, NULL, server_loop, v), 0);
}

static void srv_stop(struct srv *v)
{
	atomic_store(&v->stop, 1);
	pthread_join(v->th, NULL);
	T_EQ(ipcring_server_close(v->s), 0);
	pthread_barrier_destroy(&v->held);
	pthread_barrier_destroy(&v->go);
}

/* The server held between two dispatch calls, then let go. */
static void srv_hold(struct srv *v)
{
	atomic_store(&v->park, 1);
	pthread_barrier_wait(&v->held);
	atomic_store(&v->park, 0);
	v->nlog = 0;
}

static void srv_go(struct srv *v)
{
	pthread_barrier_wait(&v->go);
}

static struct ipcring_conn *conn_open(const char *name, uint64_t tag)
{
	struct ipcring_connect_opts o = { .tag = tag, .timeout_ms = 10000 };
	char why[IPCRING_REASON_MAX];
	struct ipcring_conn *c;

	if (ipcring_connect(&c, name, &o, why, sizeof(why)))
		T_FAIL("client %llu: %s", (unsigned long long)tag, why);
	return c;
}

/* @n requests of @kind committed as one publication. */
static void send_run(struct ipcring_conn *c, uint64_t tag, uint32_t kind, unsigned n)
{
	struct ipcring *tx;

	for (unsigned i = 0; i < n; i++) {
		struct req r = { .kind = kind, .idx = i, .tag = tag };

		T_EQ(ipcring_conn_send(c, &r, sizeof(r), IPCRING_MORE, 1000), 0);
	}
	T_EQ(ipcring_conn_rings(c, &tx, NULL), 0);
	T_EQ(ipcring_flush(tx), 0);
}

static uint64_t reply_flushes(struct ipcring_conn *c)
{
	struct ipcring_stats st;
	struct ipcring *rx;

	T_EQ(ipcring_conn_rings(c, NULL, &rx), 0);
	T_EQ(ipcring_stats(rx, &st), 0);
	return st.producer.flushes;
}

static void take_replies(struct ipcring_conn *c, uint64_t tag, unsigned n, size_t want)
{
	unsigned char buf[BIG];
	struct req r;
	size_t len;

	for (unsigned i = 0; i < n; i++) {
		int ret = ipcring_conn_recv(c, buf, sizeof(buf), &len, 5000);

		if (ret != 1)
			T_FAIL("client %llu: reply %u of %u: %d", (unsigned long long)tag, i, n, ret);
		T_EQ(len, want);
		memcpy(&r, buf, sizeof(r));
		T_EQ(r.idx, i);
		T_EQ(r.tag, tag);
		for (size_t k = sizeof(r); k < len; k++)
			T_EQ(buf[k], i & 0xff);
	}
}

/* No more than two quanta of one client served in a row while the other
 * still had requests waiting (of @n[0] and @n[1]): the end of one round
 * and the start of the next, which the rotation may begin with it. */
static void check_turns(const struct srv *v, const unsigned n[2])
{
	unsigned left[2] = { n[0], n[1] }, streak = 0;

	T_EQ(v->nlog, n[0] + n[1]);
	for (unsigned i = 0; i < v->nlog; i++) {
		unsigned t = (unsigned)v->log[i], o = 1 - t;

		T_ASSERT(t < 2);
		streak = i && v->log[i - 1] == t ? streak + 1 : 1;
		if (streak > 2 * QUANTUM && left[o])
			T_FAIL("%u requests of client %u served in a row while client %u had %u "
			       "waiting (two quanta of %u)", streak, t, o, left[o], QUANTUM);
		left[t]--;
	}
}

static void test_runs(const char *name)
{
	struct srv v;
	struct ipcring_conn *c[2];
	uint64_t rnd = 12345, pubs = 0, replies = 0;

	srv_start(&v, name, 1u << 16);
	for (unsigned k = 0; k < 2; k++)
		c[k] = conn_open(name, k);
	for (unsigned round = 0; round < ROUNDS; round++) {
		unsigned n[2];
		uint64_t before[2];

		srv_hold(&v);
		for (unsigned k = 0; k < 2; k++) {
			n[k] = 1 + (unsigned)(t_rand(&rnd) % MAXRUN);
			before[k] = reply_flushes(c[k]);
			send_run(c[k], k, K_ECHO, n[k]);
		}
		srv_go(&v);
		for (unsigned k = 0; k < 2; k++) {
			uint64_t got, want = (n[k] + QUANTUM - 1) / QUANTUM;

			take_replies(c[k], k, n[k], sizeof(struct req));
			got = reply_flushes(c[k]) - before[k];
			if (got != want)
				T_FAIL("round %u, client %u: %u replies published %llu times, "
				       "expected %llu (one per turn of %u)", round, k, n[k],
				       (unsigned long long)got, (unsigned long long)want, QUANTUM);
			pubs += got;
			replies += n[k];
		}
		check_turns(&v, n);
	}
	for (unsigned k = 0; k < 2; k++)
		T_EQ(ipcring_conn_close(c[k]), 0);
	srv_stop(&v);
	printf("runs: %llu replies in %llu publications\n", (unsigned long long)replies,
	       (unsigned long long)pubs);
}

/* A 4 KiB reply ring fills after a few 512-byte replies of a run: the
 * ones before are published (the client reads them while the rest wait in
 * the connection's queue), and the rest move on as it reads. */
static void test_full(const char *name)
{
	struct srv v;
	struct ipcring_conn *c;

	srv_start(&v, name, 4096);
	c = conn_open(name, 0);
	srv_hold(&v);
	send_run(c, 0, K_BIG, 3 * QUANTUM / 2);
	srv_go(&v);
	take_replies(c, 0, 3 * QUANTUM / 2, BIG);
	T_EQ(ipcring_conn_close(c), 0);
	srv_stop(&v);
}

/* The hook fails at request FAIL_AT of a run: the replies to those before
 * are published, then the client sees the connection end. */
static void test_fail(const char *name)
{
	struct srv v;
	struct ipcring_conn *c;
	struct req r = { .kind = K_FAIL, .idx = FAIL_AT };
	size_t len;
	int ret;

	srv_start(&v, name, 1u << 16);
	c = conn_open(name, 0);
	srv_hold(&v);
	send_run(c, 0, K_ECHO, FAIL_AT);
	T_EQ(ipcring_conn_send(c, &r, sizeof(r), IPCRING_MORE, 1000), 0);
	send_run(c, 0, K_ECHO, 3);
	srv_go(&v);
	take_replies(c, 0, FAIL_AT, sizeof(struct req));
	ret = ipcring_conn_recv(c, &r, sizeof(r), &len, 5000);
	if (ret != 0 && ret != -EPIPE)
		T_FAIL("after the failed request: %d, expected the end (0 or -EPIPE)", ret);
	T_EQ(ipcring_conn_close(c), 0);
	srv_stop(&v);
}

int main(void)
{
	char name[64];

	signal(SIGPIPE, SIG_IGN);
	snprintf(name, sizeof(name), "@ipcring-runs-%d", (int)getpid());
	test_runs(name);
	test_full(name);
	test_fail(name);
	printf("runs: ok\n");
	return 0;
}
