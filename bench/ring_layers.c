// SPDX-License-Identifier: MIT
/*
 * ring_layers.c - where ipclab's 64 B ring stream spends its time beyond
 * the bare ring: the same stream (producer thread on CPU 0, consumer on
 * CPU 1, one publish per 32 records) with one layer added at a time:
 *   0. bare: reserve + memset in place + commit; read_batch (= ring_bare)
 *   1. the consumer peeks and releases one record at a time
 *   2. the producer copies each message from a buffer (a send() API)
 *   3. through the ring transport's ops (tp->send, tp->peek/release)
 *   4. plus the pattern's kind of per-message work (payload touch, header,
 *      progress store, stop and think checks, header check)
 * Every repetition runs all five back to back, so each sees the same state
 * of a noisy machine; the ratio to variant 0 is taken per repetition and
 * the median printed. Not a test. Usage: ring_layers [reps] [messages]
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipcring.h"
#include "ipclab/msg.h"
#include "ipclab/opt.h"
#include "ipclab/transport.h"
#include "ipclab/util.h"

#define SIZE 64
#define BATCH 32
#define MAX_REPS 64

struct layer {
	int prod, cons;		/* levels, as above */
	const char *name;
};

static const struct layer layers[] = {
	{ 0, 0, "bare: reserve, memset in place, commit; read_batch (= ring_bare)" },
	{ 0, 1, "+ consumer: peek/release one at a time" },
	{ 1, 1, "+ producer: copy each message from a buffer" },
	{ 2, 2, "+ the ring transport's ops (batch=32)" },
	{ 3, 3, "+ pattern-like work per message" },
};
#define NL (sizeof(layers) / sizeof(layers[0]))

struct run {
	const struct layer *l;
	uint64_t n;
	int memfd;
	const struct transport *tp;
	struct tp_channel ch;
	_Alignas(64) _Atomic uint64_t progress;
};

static volatile int stop_flag;
static volatile uint64_t sink;	/* keeps the consumer's reads */

static void pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	sched_setaffinity(0, sizeof(s), &s);
}

static void die(const char *what)
{
	fprintf(stderr, "ring_layers: %s\n", what);
	exit(1);
}

/* Out of line, as the runner's services are. */
__attribute__((noinline)) static int stopping(void)
{
	return stop_flag;
}

__attribute__((noinline)) static void think(void)
{
	if (stop_flag > 1)
		abort();
}

static void produce_bare(struct run *r)
{
	_Alignas(64) unsigned char buf[SIZE] = { 0 };
	struct ipcring *ring;
	void *p;

	if (ipcring_attach(&ring, r->memfd, IPCRING_PRODUCER, -1))
		die("attach");
	for (uint64_t i = 0; i < r->n; i++) {
		if (ipcring_reserve(ring, SIZE, &p, -1))
			die("reserve");
		if (r->l->prod == 0) {
			memset(p, (int)i, SIZE);
		} else {
			buf[0] = (unsigned char)i;
			memcpy(p, buf, SIZE);
		}
		ipcring_commit(ring, SIZE, (i + 1) % BATCH ? IPCRING_MORE : 0);
	}
	ipcring_close(ring);
}

static void produce_tp(struct run *r)
{
	_Alignas(64) unsigned char buf[SIZE] = { 0 };
	struct msg_hdr *h = (struct msg_hdr *)buf;
	struct tp_endpoint *ep;
	char err[ERRLEN];

	if (r->tp->open(&r->ch, TP_CLIENT, 0, &ep, err, sizeof(err)))
		die(err);
	for (uint64_t i = 0; i < r->n; i++) {
		if (r->l->prod == 3) {
			msg_fill(buf, SIZE, (uint32_t)i, false);
			h->seq = (uint32_t)i;
			h->len = SIZE;
			h->ts_ns = 0;
		} else {
			buf[0] = (unsigned char)i;
		}
		if (r->tp->send(ep, buf, SIZE) != SIZE)
			die("send");
		if (r->l->prod == 3) {
			atomic_store_explicit(&r->progress, i + 1, memory_order_relaxed);
			think();
			if (stopping())
				die("stopped");
		}
	}
	r->tp->close(ep);
}

static void *producer(void *arg)
{
	struct run *r = arg;

	pin(0);
	if (r->l->prod <= 1)
		produce_bare(r);
	else
		produce_tp(r);
	return NULL;
}

static int fold(void *ctx, const void *msg, size_t len)
{
	const uint64_t *w = msg;

	for (size_t i = 0; i < len / 8; i++)
		*(uint64_t *)ctx += w[i];
	return 0;
}

static uint64_t consume_bare(struct run *r)
{
	struct ipcring *ring;
	uint64_t got = 0, sum = 0;
	const void *m;
	size_t len;
	int k;

	if (ipcring_attach(&ring, r->memfd, IPCRING_CONSUMER, -1))
		die("attach");
	if (r->l->cons == 0) {
		while ((k = ipcring_read_batch(ring, fold, &sum, 256, -1)) > 0)
			got += (uint64_t)k;
	} else {
		while (ipcring_peek(ring, &m, &len, -1) == 1) {
			sum += *(const uint64_t *)m;
			ipcring_release(ring);
			got++;
		}
	}
	ipcring_close(ring);
	sink = sum;
	return got;
}

static uint64_t consume_tp(struct run *r)
{
	struct tp_endpoint *ep;
	char err[ERRLEN];
	const void *m;
	uint64_t i;

	if (r->tp->open(&r->ch, TP_SERVER, 0, &ep, err, sizeof(err)))
		die(err);
	for (i = 0; i < r->n; i++) {
		if (r->tp->peek(ep, &m, SIZE) != SIZE)
			die("peek");
		if (r->l->cons == 3) {
			const struct msg_hdr *h = m;

			if (h->seq != (uint32_t)i || (h->len & MSG_LEN_MASK) != SIZE)
				die("bad message");
			think();
		}
		r->tp->release(ep);
	}
	r->tp->close(ep);
	return i;
}

/* One stream; M msgs/s. */
static double run_one(struct run *r)
{
	struct ipcring_opts o = { .capacity = 1u << 20 };
	char err[ERRLEN];
	uint64_t t0, got;
	pthread_t t;

	r->ch.priv = NULL;
	r->ch.settings.n = 0;
	if (r->l->prod <= 1 ? ipcring_create(&o, &r->memfd, NULL) != 0 :
			      r->tp->create(&r->ch, err, sizeof(err)) != 0)
		die("create");
	pin(1);
	t0 = now_ns();
	pthread_create(&t, NULL, producer, r);
	got = r->l->cons <= 1 ? consume_bare(r) : consume_tp(r);
	t0 = now_ns() - t0;
	pthread_join(t, NULL);
	if (got != r->n)
		die("lost messages");
	if (r->l->prod <= 1)
		close(r->memfd);
	else
		r->tp->destroy(&r->ch);
	return (double)r->n / (double)t0 * 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 11;
	uint64_t n = argc > 2 ? strtoull(argv[2], NULL, 10) : 2000000;
	static double rate[NL][MAX_REPS], ratio[NL][MAX_REPS];
	struct tp_config cfg = { .msg_size = SIZE, .clients = 1, .threads = true };
	struct run r = { .n = n, .tp = transport_find("ring") };
	char err[ERRLEN];
	void *opts;

	if (reps < 1 || reps > MAX_REPS || !r.tp)
		die("usage: ring_layers [reps (1-64)] [messages]");
	opts = calloc(1, r.tp->opts_size);
	if (!opts || opt_defaults(r.tp->options, opts, err, sizeof(err)) ||
	    opt_set(opt_find(r.tp->options, "batch"), opts, "32", err, sizeof(err)))
		die("ring options");
	cfg.opts = opts;
	r.ch = (struct tp_channel){ .tp = r.tp, .cfg = &cfg };
	for (int k = 0; k < reps; k++)
		for (size_t i = 0; i < NL; i++) {
			r.l = &layers[i];
			rate[i][k] = run_one(&r);
			ratio[i][k] = rate[0][k] / rate[i][k];	/* time_i / time_bare */
		}
	printf("ring_layers: 64 B stream, %llu messages, %d repetitions, CPU 0 -> CPU 1\n",
	       (unsigned long long)n, reps);
	for (size_t i = 0; i < NL; i++) {
		double m = median(rate[i], reps);

		printf("%-66s %6.2f M/s %6.1f ns/msg  time/bare %.3f\n", layers[i].name, m, 1e3 / m,
		       median(ratio[i], reps));
	}
	free(opts);
	return 0;
}
