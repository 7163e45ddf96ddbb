// SPDX-License-Identifier: MIT
/* --reference: one side's bare loop (reference.c starts and watches the
 * two): placed as the cell's side, then its warm-up and count of plain
 * sends and receives on the reference channel, ping-pong or stream, with
 * the cell's think time; the client of a ping-pong times each RTT and
 * keeps up to REF_MAX_SAMPLES of them, a stream's receiver times its
 * window. What it measured, or its error, goes to the side's ref_out. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ipclab/experiment.h"
#include "ipclab/reference.h"
#include "ref_int.h"

uint64_t ref_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* --think / --think-ns: the cell's busy loop, the same iterations. */
static void ref_think(const struct cell *c)
{
	volatile unsigned int v = 1;
	uint64_t n = c->think ? c->think * c->size : c->think_iters;

	for (uint64_t i = 0; i < n; i++)
		v *= 3;
}

static int put(struct ref_side *s, const char *what, int e)
{
	snprintf(s->out->err[s->role], sizeof(s->out->err[0]), "%s: %s", what,
		 e ? strerror(e) : "end of file");
	s->out->status[s->role] = e ? -e : -EPIPE;
	return -1;
}

/* A REF_OPS channel's call: 0, or the side's error (-1). */
static int ops_call(struct ref_side *s, bool tx)
{
	const char *what = tx ? "send" : "receive";
	int r = tx ? s->ch->ops->send(s->ch, s->role, s->buf, s->c->size, &what) :
		     s->ch->ops->recv(s->ch, s->role, s->buf, s->c->size, &what);

	return r ? put(s, what, r == -EPIPE ? 0 : -r) : 0;
}

/* One message each way; the whole of it on a byte stream. */
static int ref_send(struct ref_side *s)
{
	struct ref_chan *ch = s->ch;
	size_t n = s->c->size, off = 0;

	if (ch->kind == REF_OPS)
		return ops_call(s, true);
	if (ch->kind == REF_MQ)
		return mq_send(ch->mq[s->role == REF_CLIENT ? 0 : 1], s->buf, n, 0) ?
			       put(s, "mq_send", errno) :
			       0;
	while (off < n) {
		ssize_t w = write(ch->fd[s->role][1], (char *)s->buf + off, n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return put(s, "write", w < 0 ? errno : 0);
		off += (size_t)w;
		if (!ch->bytes)
			break;
	}
	return 0;
}

static int ref_recv(struct ref_side *s)
{
	struct ref_chan *ch = s->ch;
	size_t n = s->c->size, off = 0;

	if (ch->kind == REF_OPS)
		return ops_call(s, false);
	if (ch->kind == REF_MQ)
		return mq_receive(ch->mq[s->role == REF_CLIENT ? 1 : 0], s->buf, n, NULL) < 0 ?
			       put(s, "mq_receive", errno) :
			       0;
	while (off < n) {
		ssize_t r = read(ch->fd[s->role][0], (char *)s->buf + off, n - off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return put(s, "read", r < 0 ? errno : 0);
		off += (size_t)r;
		if (!ch->bytes)
			break;
	}
	return 0;
}

/* The cell's CPU and policy, for the calling thread. */
static int ref_place(struct ref_side *s)
{
	const struct cell *c = s->c;
	int cpu = s->role == REF_SERVER ? c->pin.server_cpu : c->pin.client_cpu;

	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			return put(s, "sched_setaffinity", errno);
	}
	if (c->sched.policy != SCHED_OTHER) {
		struct sched_param sp = { .sched_priority = c->sched.prio };

		if (sched_setscheduler(0, c->sched.policy, &sp))
			return put(s, "sched_setscheduler", errno);
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int client_pingpong(struct ref_side *s)
{
	const struct cell *c = s->c;
	uint64_t count = s->count;
	uint64_t stride = (count + REF_MAX_SAMPLES - 1) / REF_MAX_SAMPLES, sum = 0, t0, t1, t;
	bool think = c->think || c->think_iters;
	size_t ns = 0;

	for (uint64_t i = 0; i < c->warmup; i++) {
		if (ref_send(s) || ref_recv(s))
			return -1;
		if (think)
			ref_think(c);
	}
	t0 = t = ref_now();
	for (uint64_t i = 0; i < count; i++) {
		uint64_t u;

		if (ref_send(s) || ref_recv(s))
			return -1;
		u = ref_now();
		sum += u - t;
		if (i % stride == 0 && ns < REF_MAX_SAMPLES)
			s->samples[ns++] = u - t;
		if (think) { /* the cell's RTT starts after its think, too */
			ref_think(c);
			u = ref_now();
		}
		t = u;
	}
	t1 = t;
	qsort(s->samples, ns, sizeof(*s->samples), cmp_u64);
	s->out->msgs_per_s = t1 > t0 ? (double)count * 1e9 / (double)(t1 - t0) : 0;
	s->out->lat_mean_ns = (double)sum / (double)count;
	s->out->lat_p50_ns = ns ? s->samples[ns / 2] : 0;
	return 0;
}

/* udp's stream: what arrives is counted (a full receive buffer drops
 * datagrams), the window opening at the warm-up's count and closing at
 * the sender's zero-length datagram, sent as the cell sends its last
 * message: once, and five more times backing off. */
static int lossy_stream(struct ref_side *s, uint64_t total)
{
	int fd = s->ch->fd[s->role][0];
	uint64_t got = 0, t0 = ref_now(), t1;

	if (s->flood) {
		for (uint64_t i = 0; i < total; i++)
			if (ref_send(s))
				return -1;
		for (unsigned k = 0; k < 6; k++) {
			if (k)
				usleep(500u << k);
			(void)!send(fd, "", 0, 0);
		}
		return 0;
	}
	for (;;) {
		ssize_t r = recv(fd, s->buf, s->c->size, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return put(s, "recv", errno);
		if (r == 0)
			break;
		if (++got == s->c->warmup)
			t0 = ref_now();
	}
	t1 = ref_now();
	got = got > s->c->warmup ? got - s->c->warmup : 0;
	s->out->msgs_per_s = t1 > t0 ? (double)got * 1e9 / (double)(t1 - t0) : 0;
	s->out->lat_mean_ns = NAN;
	return 0;
}

/* A stream through send_n/recv_n, as the cell's common case moves it
 * through a batching transport: runs that never cross the warm-up's end. */
static int batched_stream(struct ref_side *s, uint64_t total)
{
	const struct ref_ops *ops = s->ch->ops;
	const struct cell *c = s->c;
	uint64_t i = 0, t0 = 0, t1;

	while (i < total) {
		uint64_t lim = total - i;
		const char *what = s->flood ? "send" : "receive";
		int r;

		if (!s->flood && i == c->warmup)
			t0 = ref_now();
		if (i < c->warmup && c->warmup - i < lim)
			lim = c->warmup - i;
		if (lim > REF_BATCH_MAX)
			lim = REF_BATCH_MAX;
		r = s->flood ? ops->send_n(s->ch, s->role, c->size, (unsigned)lim, &what) :
			       ops->recv_n(s->ch, s->role, s->buf, c->size, (unsigned)lim, &what);
		if (r <= 0)
			return put(s, what, r == -EPIPE || !r ? 0 : -r);
		i += (uint64_t)r;
	}
	if (!s->flood) {
		t1 = ref_now();
		s->out->msgs_per_s = t1 > t0 ? (double)s->count * 1e9 / (double)(t1 - t0) : 0;
		s->out->lat_mean_ns = NAN;
	}
	return 0;
}

static int side_loop(struct ref_side *s)
{
	const struct cell *c = s->c;
	uint64_t total = c->warmup + s->count, t0 = 0;
	bool think = c->think || c->think_iters;

	if (s->pingpong && s->role == REF_CLIENT)
		return client_pingpong(s);
	if (s->pingpong) {
		for (uint64_t i = 0; i < total; i++) {
			if (ref_recv(s) || ref_send(s))
				return -1;
			if (think)
				ref_think(c);
		}
		return 0;
	}
	if (s->ch->lossy)
		return lossy_stream(s, total);
	/* as the cell's stream takes its batched loops, -d runs too */
	if (s->ch->kind == REF_OPS && s->ch->ops->send_n && s->ch->ops->recv_n && !think &&
	    !(c->rate > 0))
		return batched_stream(s, total);
	/* stream: one side floods, the other times the count after the warm-up */
	for (uint64_t i = 0; i < total; i++) {
		if (!s->flood && i == c->warmup)
			t0 = ref_now();
		if (s->flood ? ref_send(s) : ref_recv(s))
			return -1;
		if (think)
			ref_think(c);
	}
	if (!s->flood) {
		uint64_t t1 = ref_now();

		s->out->msgs_per_s = t1 > t0 ? (double)s->count * 1e9 / (double)(t1 - t0) : 0;
		s->out->lat_mean_ns = NAN;
	}
	return 0;
}

int ref_side_main(struct ref_side *s)
{
	const struct ref_ops *ops = s->ch->kind == REF_OPS ? s->ch->ops : NULL;
	const char *what = "open";
	int r;

	if (ref_place(s))
		return -1;
	if (ops && ops->side_open && (r = ops->side_open(s->ch, s->role, &what)))
		return put(s, what, -r);
	r = side_loop(s);
	if (ops && ops->side_close)
		ops->side_close(s->ch, s->role);
	return r;
}

void *ref_side_thread(void *arg)
{
	struct ref_side *s = arg;

	/* named as the processes are, for ps, perf and top */
	pthread_setname_np(pthread_self(), s->role == REF_SERVER ? "ref-server" : "ref-client");
	ref_side_main(s);
	return NULL;
}
