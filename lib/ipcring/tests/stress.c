// SPDX-License-Identifier: MIT
/*
 * stress.c - libipcring stress: threads and processes, futex, eventfd and
 * spin-only modes, random sizes carrying a sequence number and a checksum,
 * random batching and pauses (so both the empty and the full path sleep),
 * and a lost-wakeup detector: liveness slices are set longer than the wait
 * timeouts, so a wakeup that is lost shows up as a timed wait that expires
 * while data (or space) is there, which fails the run. Ping-pong cells
 * sleep on every message. Usage: ipcring-stress [-n total] [-v]
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "tutil.h"

#define WAIT_MS		10000	/* any wait longer than this is a failure */
#define SLICE_MS	60000	/* liveness slices longer than WAIT_MS */
#define MSG_HDR		16u

struct cell {
	const char *name;
	bool procs;
	bool pingpong;
	bool epoll;
	uint32_t mode;
	uint32_t align;
	uint32_t spin_ns;
	uint32_t cap;
	uint32_t share;		/* parts per 1000 of the total */
};

static const struct cell cells[] = {
	{ "thread/futex/a8", false, false, false, IPCRING_WAIT_FUTEX, 8, 0, 65536, 250 },
	{ "thread/spin/a64", false, false, false, IPCRING_WAIT_SPIN_ONLY, 64, 0, 16384, 150 },
	{ "thread/eventfd/a8", false, false, true, IPCRING_WAIT_EVENTFD, 8, 2000, 65536, 150 },
	{ "proc/futex/a64", true, false, false, IPCRING_WAIT_FUTEX, 64, 0, 32768, 250 },
	{ "proc/spin/a8", true, false, false, IPCRING_WAIT_SPIN_ONLY, 8, 0, 65536, 150 },
	{ "thread/pingpong/nospin", false, true, false, IPCRING_WAIT_FUTEX, 8,
	  IPCRING_NO_SPIN, 4096, 3 },
	{ "proc/pingpong/spin1us", true, true, false, IPCRING_WAIT_FUTEX, 64, 1000, 4096, 3 },
};

struct side {
	const struct cell *c;
	int memfd[2];
	int efd[2];
	uint64_t count;
	uint64_t seed;
	uint64_t expect;	/* consumer: next sequence number */
	struct ipcring_stats st;	/* as the consumer saw them at the end */
	char why[160];
};

struct msg_hdr {
	uint64_t seq;
	uint32_t sum;
	uint32_t len;
};

static uint32_t fill_payload(uint8_t *p, uint32_t len, uint64_t seq)
{
	uint64_t x = (seq + 1) * 0x9E3779B97F4A7C15ull, h = 0;
	uint32_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(p + i, &x, 8);
		h = (h ^ x) * 0x100000001b3ull;
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	}
	for (; i < len; i++) {
		p[i] = (uint8_t)(x >> (8 * (i & 7)));
		h = (h ^ p[i]) * 0x100000001b3ull;
	}
	return (uint32_t)(h ^ (h >> 32));
}

static uint32_t sum_payload(const uint8_t *p, uint32_t len)
{
	uint64_t h = 0, x;
	uint32_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&x, p + i, 8);
		h = (h ^ x) * 0x100000001b3ull;
	}
	for (; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return (uint32_t)(h ^ (h >> 32));
}

static uint32_t pick_len(uint64_t *rng, uint32_t max)
{
	uint64_t v = t_rand(rng);
	uint32_t k = (uint32_t)(v % 1000), len;

	if (k < 900)
		len = MSG_HDR + (uint32_t)(v >> 20) % 112;
	else if (k < 990)
		len = 128 + (uint32_t)(v >> 20) % 1920;
	else
		len = MSG_HDR + (uint32_t)(v >> 20) % (max - MSG_HDR + 1);
	return len > max ? max : len;
}

static void maybe_pause(uint64_t *rng, unsigned int per_million)
{
	if (t_rand(rng) % 1000000 < per_million)
		usleep((useconds_t)(t_rand(rng) % 2000));
}

__attribute__((format(printf, 2, 3)))
static int fail(struct side *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->why, sizeof(s->why), fmt, ap);
	va_end(ap);
	return 1;
}

static unsigned long long ull(uint64_t v)
{
	return v;
}

static int verify(void *ctx, const void *msg, size_t len)
{
	struct side *s = ctx;
	struct msg_hdr h;

	if (len < MSG_HDR || s->why[0])
		goto bad;
	memcpy(&h, msg, sizeof(h));
	if (h.seq != s->expect || h.len != len ||
	    h.sum != sum_payload((const uint8_t *)msg + MSG_HDR, (uint32_t)len - MSG_HDR))
		goto bad;
	s->expect++;
	return 0;
bad:
	if (!s->why[0])
		snprintf(s->why, sizeof(s->why), "bad record at seq %llu (len %zu)",
			 (unsigned long long)s->expect, len);
	return 1;
}

/* A timed wait expired: was it a lost wakeup (data or space present)? */
static int timed_out(struct side *s, struct ipcring *r)
{
	uint32_t tail = atomic_load(&r->shm->tail), head = atomic_load(&r->shm->head);

	if (r->role == IPCRING_CONSUMER && (int32_t)(tail - r->pos) > 0)
		return fail(s, "LOST WAKEUP: consumer timed out with flushed data at %llu",
			    ull(s->expect));
	if (r->role == IPCRING_PRODUCER && r->cap - (r->pos - head) >= r->need)
		return fail(s, "LOST WAKEUP: producer timed out with space free");
	return fail(s, "stall: timed out at %llu", ull(s->expect));
}

static int send_one(struct side *s, struct ipcring *r, uint64_t seq,
		    uint32_t len, unsigned int flags, uint64_t *rng)
{
	uint8_t buf[IPCRING_DEFAULT_CAPACITY / 64];
	struct msg_hdr h = { .seq = seq, .len = len };
	uint8_t *p = buf;
	void *v = NULL;
	int ret = 0;

	if (len > sizeof(buf) || t_rand(rng) % 8) {
		ret = ipcring_reserve(r, len, &v, WAIT_MS);
		p = v;
	}
	if (ret == -ETIMEDOUT)
		return timed_out(s, r);
	if (ret)
		return fail(s, "reserve: %s at %llu", strerror(-ret), ull(seq));
	h.sum = fill_payload(p + MSG_HDR, len - MSG_HDR, seq);
	memcpy(p, &h, sizeof(h));
	if (p == buf)
		ret = ipcring_write(r, buf, len, flags, WAIT_MS);
	else
		ret = ipcring_commit(r, len, flags);
	if (ret == -ETIMEDOUT)
		return timed_out(s, r);
	return ret ? fail(s, "write: %s at %llu", strerror(-ret), ull(seq)) : 0;
}

static int attach(struct side *s, struct ipcring **r, int i, int role)
{
	int ret = ipcring_attach(r, s->memfd[i], role, s->efd[i]);

	if (ret)
		return fail(s, "attach: %s (role %d)", strerror(-ret), role);
	ipcring_set_poll_ms(*r, SLICE_MS);
	return 0;
}

static int producer(struct side *s)
{
	uint64_t rng = s->seed, seq = 0;
	struct ipcring *r;
	uint32_t max, batch, k;
	int ret = attach(s, &r, 0, IPCRING_PRODUCER);

	max = r ? r->max_record : 0;
	while (!ret && seq < s->count) {
		batch = 1 + (uint32_t)(t_rand(&rng) % 16);
		for (k = 0; !ret && k < batch && seq < s->count; k++, seq++)
			ret = send_one(s, r, seq, pick_len(&rng, max),
				       k + 1 < batch ? IPCRING_MORE : 0, &rng);
		maybe_pause(&rng, 20);
	}
	ipcring_close(r);
	return ret;
}

static int recv_some(struct side *s, struct ipcring *r, uint64_t *rng, int tmo)
{
	uint8_t buf[IPCRING_DEFAULT_CAPACITY / 4];
	const void *m;
	size_t len;
	int ret;

	switch (t_rand(rng) % 4) {
	case 0:
		ret = ipcring_peek(r, &m, &len, tmo);
		if (ret == 1 && (verify(s, m, len) || ipcring_release(r)))
			return -EBADMSG;
		return ret;
	case 1:
		ret = ipcring_read(r, buf, sizeof(buf), &len, tmo);
		if (ret == 1 && verify(s, buf, len))
			return -EBADMSG;
		return ret;
	default:
		ret = ipcring_read_batch(r, verify, s, 1 + (unsigned int)(t_rand(rng) % 64), tmo);
		return s->why[0] ? -EBADMSG : ret;
	}
}

/* Event-loop consumer: drain, announce, poll the eventfd. */
static int recv_epoll(struct side *s, struct ipcring *r, uint64_t *rng)
{
	struct pollfd pfd = { .fd = ipcring_fd(r), .events = POLLIN };
	int ret = recv_some(s, r, rng, 0);

	if (ret != -EAGAIN)
		return ret;
	if (ipcring_prepare_wait(r))
		return 1;
	if (poll(&pfd, 1, WAIT_MS) == 0)
		return -ETIMEDOUT;
	return 1;
}

static int consumer(struct side *s)
{
	uint64_t rng = s->seed ^ 0x5555;
	struct ipcring *r;
	int ret = attach(s, &r, 0, IPCRING_CONSUMER);

	while (!ret && s->expect < s->count) {
		ret = s->c->epoll ? recv_epoll(s, r, &rng) : recv_some(s, r, &rng, WAIT_MS);
		if (ret == -ETIMEDOUT)
			ret = timed_out(s, r);
		else if (ret == 0)
			ret = fail(s, "early end of stream at %llu", ull(s->expect));
		else if (ret < 0)
			ret = s->why[0] ? 1 : fail(s, "consumer: %s at %llu", strerror(-ret), ull(s->expect));
		else
			ret = 0;
		maybe_pause(&rng, 20);
	}
	if (!ret && ipcring_peek(r, &(const void *){ NULL }, &(size_t){ 0 }, WAIT_MS) != 0)
		ret = fail(s, "no end of stream after %llu", ull(s->expect));
	ipcring_stats(r, &s->st);
	ipcring_close(r);
	return ret;
}

/* Ping-pong: ring 0 carries pings to the server, ring 1 the pongs back. */
static int pp_client(struct side *s)
{
	struct ipcring *out = NULL, *in = NULL;
	uint8_t buf[64];
	uint64_t seq;
	size_t len;
	int ret = attach(s, &out, 0, IPCRING_PRODUCER);

	if (!ret)
		ret = attach(s, &in, 1, IPCRING_CONSUMER);
	for (seq = 0; !ret && seq < s->count; seq++) {
		ret = ipcring_write(out, &seq, sizeof(seq), 0, WAIT_MS);
		if (!ret)
			ret = ipcring_read(in, buf, sizeof(buf), &len, WAIT_MS);
		if (ret == -ETIMEDOUT)
			ret = timed_out(s, in);
		else if (ret == 1 && (len != sizeof(seq) || memcmp(buf, &seq, len)))
			ret = fail(s, "pong mismatch at %llu", ull(seq));
		else if (ret < 0 || (ret == 0 && seq < s->count))
			ret = fail(s, "client: %s at %llu", strerror(ret ? -ret : EPIPE), ull(seq));
		else
			ret = 0;
	}
	s->expect = seq;
	ipcring_stats(in, &s->st);
	ipcring_close(out);
	ipcring_close(in);
	return ret;
}

static int pp_server(struct side *s)
{
	struct ipcring *in = NULL, *out = NULL;
	uint8_t buf[64];
	size_t len;
	int ret = attach(s, &in, 0, IPCRING_CONSUMER);

	if (!ret)
		ret = attach(s, &out, 1, IPCRING_PRODUCER);
	while (!ret) {
		ret = ipcring_read(in, buf, sizeof(buf), &len, WAIT_MS);
		if (ret == 0)
			break;		/* end of stream */
		if (ret == -ETIMEDOUT)
			ret = timed_out(s, in);
		else if (ret < 0)
			ret = fail(s, "server: %s at %llu", strerror(-ret), ull(s->expect));
		else
			ret = ipcring_write(out, buf, len, 0, WAIT_MS) ?
			      fail(s, "server write failed at %llu", ull(s->expect)) : 0;
		s->expect++;
	}
	ipcring_close(in);
	ipcring_close(out);
	return ret;
}

static void *thread_main(void *arg)
{
	struct side *s = arg;

	return (void *)(intptr_t)(s->c->pingpong ? pp_server(s) : producer(s));
}

static int run_threads(struct side *s)
{
	struct side peer = *s;
	pthread_t t;
	void *pret;
	int ret;

	if (pthread_create(&t, NULL, thread_main, &peer))
		T_FAIL("pthread_create");
	ret = s->c->pingpong ? pp_client(s) : consumer(s);
	pthread_join(t, &pret);
	if (pret && !s->why[0])
		snprintf(s->why, sizeof(s->why), "peer: %.150s", peer.why);
	return ret || pret;
}

static int run_procs(struct side *s)
{
	pid_t pid = fork();
	int ret, st;

	if (pid < 0)
		T_FAIL("fork: %s", strerror(errno));
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		ret = thread_main(s) != NULL;
		if (ret)
			fprintf(stderr, "child: %s\n", s->why);
		_exit(ret);
	}
	ret = s->c->pingpong ? pp_client(s) : consumer(s);
	if (ret)
		kill(pid, SIGKILL);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		ret = ret ? ret : fail(s, "child failed (status %d)", st);
	return ret;
}

static void cell_open(struct side *s, const struct cell *c)
{
	struct ipcring_opts o = {
		.capacity = c->cap, .align = c->align, .spin_ns = c->spin_ns,
		.wait_mode = c->mode,
	};

#ifdef IPCLAB_TSAN
	o.flags |= IPCRING_F_SINGLE_MAP;	/* one address per byte for TSan */
#endif
	for (int i = 0; i < 2; i++) {
		s->efd[i] = -1;
		if (ipcring_create(&o, &s->memfd[i], &s->efd[i]))
			T_FAIL("create %s", c->name);
	}
}

static void cell_close(struct side *s)
{
	for (int i = 0; i < 2; i++) {
		close(s->memfd[i]);
		if (s->efd[i] >= 0)
			close(s->efd[i]);
	}
}

static int run_cell(const struct cell *c, uint64_t count, uint64_t seed, bool verbose)
{
	struct side s = { .c = c, .count = count, .seed = seed };
	struct ipcring_side_stats *p = &s.st.producer, *q = &s.st.consumer;
	uint64_t t0 = t_now_ns(), dt;
	int ret;

	cell_open(&s, c);
	ret = c->procs ? run_procs(&s) : run_threads(&s);
	cell_close(&s);
	dt = t_now_ns() - t0;
	if (ret) {
		printf("FAIL %s: %s\n", c->name, s.why);
		return 1;
	}
	if (c->pingpong && c->spin_ns == IPCRING_NO_SPIN && !q->sleeps) {
		printf("FAIL %s: the sleep path was never taken\n", c->name);
		return 1;
	}
	if (verbose)
		printf("ok %-24s %9llu msgs %6.2f s %7.2f M/s  P spins %llu sleeps %llu wakes %llu"
		       "  C spins %llu sleeps %llu wakes %llu\n", c->name,
		       (unsigned long long)count, dt / 1e9, count / (dt / 1e3),
		       (unsigned long long)p->spins, (unsigned long long)p->sleeps,
		       (unsigned long long)p->wakes, (unsigned long long)q->spins,
		       (unsigned long long)q->sleeps, (unsigned long long)q->wakes);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t total = 10000000, seed = t_now_ns() | 1;
	bool verbose = false;
	int opt, ret = 0;

	while ((opt = getopt(argc, argv, "n:s:v")) != -1) {
		if (opt == 'n')
			total = strtoull(optarg, NULL, 0);
		else if (opt == 's')
			seed = strtoull(optarg, NULL, 0) | 1;
		else
			verbose = true;
	}
#ifdef IPCLAB_TSAN
	total /= 5;	/* TSan runs ~10x slower */
#endif
	if (verbose)
		printf("seed %llu total %llu\n", (unsigned long long)seed,
		       (unsigned long long)total);
	for (size_t i = 0; i < sizeof(cells) / sizeof(cells[0]); i++) {
		uint64_t n = total / 1000 * cells[i].share;

#ifdef IPCLAB_TSAN
		if (cells[i].procs)
			continue;	/* TSan does not see across processes */
#endif
		ret |= run_cell(&cells[i], n ? n : 1, seed + i, verbose);
	}
	if (ret)
		printf("stress failed (seed %llu)\n", (unsigned long long)seed);
	return ret;
}
