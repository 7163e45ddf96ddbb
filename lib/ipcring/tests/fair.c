// SPDX-License-Identifier: MIT
/*
 * fair.c - one client's runs cannot starve another's requests. A flooding
 * client commits runs of IPCRING_BATCH_MAX records as fast as it can while
 * a paced client sends one request at a time; the dispatcher serves at
 * most a quantum of a connection per round, so between a paced request's
 * commit and its service at most two quanta of the flood are served (the
 * rest of the round it just missed, and the next, which may begin with the
 * flood). The count is structural, not a time: the server counts the
 * flood records it serves, the paced client reads that count just before
 * and just after it commits, and its request carries the first one; the
 * request's hook takes the difference. Reading and committing are not one
 * step, so each sample's bound grows by what was served between the two
 * reads (a preempted client is not a starved one). Then the same with a
 * flooder that leaves a backlog of 20000 records and closes: what a
 * graceful close left is served in rotation too, not all before the
 * paced request.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <unistd.h>

#include "tutil.h"

#define QUANTUM		16u
#define NPACED		400u
#define BACKLOG		20000u
#define REC_LEN		16u

enum { K_FLOOD = 1, K_PACED = 2 };

struct req {
	uint32_t kind;
	uint32_t idx;
	uint64_t before;	/* K_PACED: the flood count read before commit */
};

struct fair {
	const char *name;
	struct ipcring_server *s;
	_Atomic uint64_t flood_served;
	_Atomic unsigned paced_served;
	uint64_t wait[NPACED];		/* hook: flood served since .before */
	uint64_t unc[NPACED];		/* client: flood served between its reads */
	_Atomic int stop;		/* the flooder ends */
	_Atomic int server_stop;
	unsigned npaced;
	pthread_barrier_t *steps;	/* the backlog case's steps */
	pthread_t th;
};

static int on_req(void *ctx, struct ipcring_conn *c, const void *m, size_t len)
{
	struct fair *f = ctx;
	struct req r;

	if (len < sizeof(r))
		T_FAIL("a %zu-byte request", len);
	memcpy(&r, m, sizeof(r));
	if (r.kind == K_FLOOD) {
		atomic_fetch_add(&f->flood_served, 1);
		return 0;
	}
	if (r.kind != K_PACED || r.idx >= NPACED)
		T_FAIL("request kind %u idx %u", r.kind, r.idx);
	f->wait[r.idx] = atomic_load(&f->flood_served) - r.before;
	atomic_fetch_add(&f->paced_served, 1);
	return ipcring_conn_send(c, &r, sizeof(r), 0, 0);
}

static const struct ipcring_server_ops fair_ops = { .message = on_req };

static struct ipcring_conn *fair_connect(struct fair *f, uint64_t tag)
{
	struct ipcring_connect_opts o = { .tag = tag, .timeout_ms = 10000 };
	char why[IPCRING_REASON_MAX];
	struct ipcring_conn *c;

	if (ipcring_connect(&c, f->name, &o, why, sizeof(why)))
		T_FAIL("client %llu: %s", (unsigned long long)tag, why);
	return c;
}

/* One run of IPCRING_BATCH_MAX flood records; 0, or -ETIMEDOUT (full). */
static int flood_run(struct ipcring *tx)
{
	struct ipcring_rec recs[IPCRING_BATCH_MAX];
	struct req r = { .kind = K_FLOOD };
	int ret;

	for (unsigned i = 0; i < IPCRING_BATCH_MAX; i++)
		recs[i].len = REC_LEN;
	ret = ipcring_reserve_batch(tx, recs, IPCRING_BATCH_MAX, 100);
	if (ret)
		return ret;
	for (unsigned i = 0; i < IPCRING_BATCH_MAX; i++) {
		memset(recs[i].buf, 0, REC_LEN);
		memcpy(recs[i].buf, &r, sizeof(r));
	}
	return ipcring_commit_batch(tx, recs, IPCRING_BATCH_MAX, 0);
}

static void *flooder(void *arg)
{
	struct fair *f = arg;
	struct ipcring_conn *c = fair_connect(f, 0);
	struct ipcring *tx;
	int ret;

	T_EQ(ipcring_conn_rings(c, &tx, NULL), 0);
	while (!atomic_load(&f->stop))
		if ((ret = flood_run(tx)) && ret != -ETIMEDOUT)
			T_FAIL("flood run: %d", ret);
	T_EQ(ipcring_conn_close(c), 0);
	return NULL;
}

/* Send paced request @i, its flood counts read around the commit. */
static void paced_send(struct fair *f, struct ipcring_conn *c, uint32_t i)
{
	struct req r = { .kind = K_PACED, .idx = i };

	r.before = atomic_load(&f->flood_served);
	T_EQ(ipcring_conn_send(c, &r, sizeof(r), 0, 5000), 0);
	f->unc[i] = atomic_load(&f->flood_served) - r.before;
}

static void paced_reply(struct ipcring_conn *c, uint32_t i)
{
	struct req r;
	size_t len;

	T_EQ(ipcring_conn_recv(c, &r, sizeof(r), &len, 10000), 1);
	T_EQ(r.idx, i);
}

static void *server_loop(void *arg)
{
	struct fair *f = arg;

	/* told to stop: until both connections are gone */
	while (!atomic_load(&f->server_stop) || ipcring_server_nconns(f->s) > 0)
		if (ipcring_server_dispatch(f->s, 20) < 0)
			T_FAIL("dispatch");
	return NULL;
}

static void fair_listen(struct fair *f, const char *name)
{
	static const struct ipcring_opts ro = { .capacity = 1u << 20 };
	struct ipcring_server_opts so = { .ring = &ro, .quantum = QUANTUM };
	char why[IPCRING_REASON_MAX];

	f->name = name;
	T_EQ(ipcring_listen(&f->s, name, &so, why, sizeof(why)), 0);
	T_EQ(ipcring_server_set_ops(f->s, &fair_ops, f), 0);
}

/* Wait (bounded) for the flood to be under way. */
static void wait_until(struct fair *f, bool (*cond)(struct fair *), const char *what)
{
	uint64_t end = t_now_ns() + 60000000000ull;

	while (!cond(f))
		if (t_now_ns() > end)
			T_FAIL("not within 60 s: %s", what);
		else
			usleep(1000);
}

static bool flood_going(struct fair *f)
{
	return atomic_load(&f->flood_served) >= 10000;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Every sample within 2 quanta (plus its own uncertainty); the p99. */
static void check_waits(const struct fair *f, unsigned n, const char *what)
{
	uint64_t w[NPACED], slack = 0, worst = 0;

	for (unsigned i = 0; i < n; i++) {
		if (f->wait[i] > 2 * QUANTUM + f->unc[i])
			T_FAIL("%s: paced request %u waited while %llu flood records were served "
			       "(%llu of them between its two reads), more than 2 quanta of %u",
			       what, i, (unsigned long long)f->wait[i],
			       (unsigned long long)f->unc[i], QUANTUM);
		w[i] = f->wait[i] - (f->wait[i] < f->unc[i] ? f->wait[i] : f->unc[i]);
		slack += f->unc[i];
		if (w[i] > worst)
			worst = w[i];
	}
	qsort(w, n, sizeof(w[0]), cmp_u64);
	printf("%s: %u paced requests, flood records served before each: p50 %llu, p99 %llu, "
	       "max %llu (bound %u), %llu counted between the reads in all\n", what, n,
	       (unsigned long long)w[n / 2], (unsigned long long)w[n * 99 / 100],
	       (unsigned long long)worst, 2 * QUANTUM, (unsigned long long)slack);
}

/* A flood of runs and a paced client, both against one server thread. */
static void test_flood(const char *name)
{
	struct fair *f = calloc(1, sizeof(*f));
	struct ipcring_conn *c;
	pthread_t fl;

	T_ASSERT(f);
	fair_listen(f, name);
	T_EQ(pthread_create(&f->th, NULL, server_loop, f), 0);
	T_EQ(pthread_create(&fl, NULL, flooder, f), 0);
	c = fair_connect(f, 1);
	wait_until(f, flood_going, "10000 flood records served");
	for (uint32_t i = 0; i < NPACED; i++) {
		paced_send(f, c, i);
		paced_reply(c, i);
		usleep(100);
	}
	T_EQ(ipcring_conn_close(c), 0);
	atomic_store(&f->stop, 1);
	pthread_join(fl, NULL);
	check_waits(f, NPACED, "flood");
	if (atomic_load(&f->flood_served) < 20000)
		T_FAIL("only %llu flood records served: no flood to be fair against",
		       (unsigned long long)atomic_load(&f->flood_served));
	atomic_store(&f->server_stop, 1);
	pthread_join(f->th, NULL);
	T_EQ(ipcring_server_close(f->s), 0);
	free(f);
}

/* The backlog case's flooder: BACKLOG records, then the close. */
static void *backlogger(void *arg)
{
	struct fair *f = arg;
	struct ipcring_conn *c = fair_connect(f, 0);
	struct ipcring *tx;

	T_EQ(ipcring_conn_rings(c, &tx, NULL), 0);
	pthread_barrier_wait(f->steps);		/* both connected */
	for (unsigned n = 0; n < BACKLOG; n += IPCRING_BATCH_MAX)
		T_EQ(flood_run(tx), 0);		/* the ring holds them all */
	pthread_barrier_wait(f->steps);		/* filled */
	pthread_barrier_wait(f->steps);		/* the paced request sent */
	T_EQ(ipcring_conn_close(c), 0);
	return NULL;
}

static void *paced_one(void *arg)
{
	struct fair *f = arg;
	struct ipcring_conn *c = fair_connect(f, 1);

	pthread_barrier_wait(f->steps);
	pthread_barrier_wait(f->steps);
	paced_send(f, c, 0);
	pthread_barrier_wait(f->steps);
	paced_reply(c, 0);
	T_EQ(ipcring_conn_close(c), 0);
	return NULL;
}

/* A closing client's backlog and a request behind it: the server (this
 * thread) does nothing until the flooder has closed, then serves. */
static void test_backlog(const char *name)
{
	struct fair *f = calloc(1, sizeof(*f));
	pthread_barrier_t steps;
	pthread_t fl, pc;

	T_ASSERT(f);
	T_EQ(pthread_barrier_init(&steps, NULL, 3), 0);
	f->steps = &steps;
	fair_listen(f, name);
	T_EQ(pthread_create(&fl, NULL, backlogger, f), 0);
	T_EQ(pthread_create(&pc, NULL, paced_one, f), 0);
	while (ipcring_server_nconns(f->s) < 2)
		T_ASSERT(ipcring_server_dispatch(f->s, 100) >= 0);
	for (int k = 0; k < 3; k++)
		pthread_barrier_wait(&steps);
	pthread_join(fl, NULL);
	/* past the dispatcher's 1 ms look at the sockets, so that the
	 * hang-up is seen before the round (the order of its worst case;
	 * the bound holds in any order) */
	usleep(2000);
	while (atomic_load(&f->paced_served) < 1 || ipcring_server_nconns(f->s) > 0)
		T_ASSERT(ipcring_server_dispatch(f->s, 100) >= 0);
	pthread_join(pc, NULL);
	T_EQ(atomic_load(&f->flood_served), BACKLOG + IPCRING_BATCH_MAX - 1 -
	     (BACKLOG + IPCRING_BATCH_MAX - 1) % IPCRING_BATCH_MAX);
	check_waits(f, 1, "backlog of a closed client");
	T_EQ(ipcring_server_close(f->s), 0);
	pthread_barrier_destroy(&steps);
	free(f);
}

int main(void)
{
	char name[64];

	signal(SIGPIPE, SIG_IGN);
	snprintf(name, sizeof(name), "@ipcring-fair-%d", (int)getpid());
	test_flood(name);
	test_backlog(name);
	printf("fair: ok\n");
	return 0;
}
