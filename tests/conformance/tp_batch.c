// SPDX-License-Identifier: MIT
/* tp_direct's cases through the batch operations (reserve_n/commit_n,
 * peek_n/release_n), for every transport that has them (null-zc, the
 * ring transports with their default -O batch=auto, ring-ipc): runs of
 * random sizes (1..TP_BATCH_MAX asked, what the transport gives taken),
 * one message in eight sent or received alone instead (send/recv between
 * runs), every message checked as in the other cases, then EOF. And the
 * checks' own test: a message of a run spoilt just before the run's
 * commit, as null-zc's -O fault does it (lost, sent twice, a payload byte
 * flipped), in the client's runs and in the server's (ring-ipc: the
 * server's ring), which the receiver must name, message and kind, and
 * nothing earlier; and a peek_n blocked on nothing and a reserve_n blocked on a
 * full channel that a stop request ends (-EINTR). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipclab/msg.h"
#include "tp_direct.h"

#define RUN_SINGLE_ONE_IN 8	/* one call in this many moves one message alone */
#define FAULT_COUNT 300		/* messages of a fault case */
#define FAULT_AT 150

static uint32_t next_rand(uint64_t *r)
{
	*r ^= *r << 13;
	*r ^= *r >> 7;
	*r ^= *r << 17;
	return (uint32_t)(*r >> 16);
}

static uint64_t side_seed(const struct side *s)
{
	return (s->tc->seed * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)s->role << 40) ^
	       ((uint64_t)s->id << 20) ^ 1;
}

bool fault_side(const struct side *s, bool sending)
{
	const struct tcase *tc = s->tc;

	if (!tc->fault || s->id)
		return false;
	return (s->role == TP_SERVER) == (sending == tc->fault_s2c);
}

/* The message at place @pos of the run, its sequence number *next
 * (advanced), spoilt as tc->fault asks when @pos is tc->fault_at and
 * @spoil: drop skips a number, dup repeats the one before, corrupt flips
 * the last byte. */
static void place_fill(const struct tcase *tc, unsigned char *p, uint32_t pos, uint32_t *next,
		       bool spoil)
{
	size_t size = tc->cfg.msg_size;
	bool at = spoil && pos == tc->fault_at;
	uint32_t v = *next;
	struct msg_hdr h = { .len = (uint32_t)size };

	if (at && tc->fault == BF_DROP)
		v++;
	else if (at && tc->fault == BF_DUP)
		v--;
	*next = v + 1;
	h.seq = v;
	memcpy(p, &h, sizeof(h));
	msg_fill(p, size, v, true);
	if (at && tc->fault == BF_CORRUPT)
		p[size - 1] = (unsigned char)~p[size - 1];
}

int send_runs(struct side *s, struct tp_endpoint *ep, unsigned char *buf)
{
	const struct transport *tp = s->tc->tp;
	size_t size = s->tc->cfg.msg_size;
	uint32_t pos = 0, next = 0, count = s->tc->count;
	uint64_t rnd = side_seed(s);
	void *bufs[TP_BATCH_MAX];
	bool spoil = fault_side(s, true);

	while (pos < count) {
		unsigned max = 1 + next_rand(&rnd) % TP_BATCH_MAX;
		ssize_t k;
		int r;

		if (max > count - pos)
			max = count - pos;
		if (next_rand(&rnd) % RUN_SINGLE_ONE_IN == 0) {
			place_fill(s->tc, buf, pos, &next, spoil);
			k = tp->send(ep, buf, size);
			if (k != (ssize_t)size)
				return side_fail(s, "send %u of %u: %zd (%s)", pos, count, k, rstr(k));
			pos++;
			continue;
		}
		k = tp->reserve_n(ep, bufs, size, max);
		if (k < 1 || k > (ssize_t)max)
			return side_fail(s, "reserve_n %u of %u (max %u): %zd (%s)", pos, count, max,
					 k, k < 0 ? rstr(k) : "out of range");
		for (unsigned i = 0; i < (unsigned)k; i++)
			place_fill(s->tc, bufs[i], pos + i, &next, spoil);
		r = tp->commit_n(ep, (unsigned)k, size);
		if (r)
			return side_fail(s, "commit_n of %zd at %u: %d (%s)", k, pos, r, rstr(r));
		pos += (uint32_t)k;
	}
	return 0;
}

/* One message of a run (or received alone): checked in order. In a
 * fault case the first bad one is recorded and the rest only read. */
static int take_one(struct side *s, const void *msg, ssize_t n, uint32_t *want, bool *bad,
		    bool faulty)
{
	uint32_t seq;

	if (*bad)
		return 0;
	if (!check_msg(s, msg, n, &seq) && seq != *want)
		side_fail(s, "got message %u, expected %u", seq, *want);
	(*want)++;
	*bad = s->res->failed;
	return *bad && !faulty ? -1 : 0;
}

int recv_runs(struct side *s, struct tp_endpoint *ep, unsigned char *buf)
{
	const struct transport *tp = s->tc->tp;
	const void *msgs[TP_BATCH_MAX];
	size_t lens[TP_BATCH_MAX];
	uint32_t want = 0, count = s->tc->count;
	uint64_t rnd = side_seed(s);
	bool bad = false, faulty = fault_side(s, false);
	int ret = 0;

	/* a fault case reads to the end: the sender may have sent one more */
	while (!ret && (faulty || want < count)) {
		unsigned max = 1 + next_rand(&rnd) % TP_BATCH_MAX;
		ssize_t k;

		if (!faulty && max > count - want)
			max = count - want;
		if (next_rand(&rnd) % RUN_SINGLE_ONE_IN == 0) {
			k = tp->recv(ep, buf, s->tc->cfg.msg_size);
			if (k == 0 && faulty)
				break;
			if (k <= 0)
				return side_fail(s, "recv %u of %u: %zd (%s)", want, count, k, rstr(k));
			ret = take_one(s, buf, k, &want, &bad, faulty);
			continue;
		}
		k = tp->peek_n(ep, msgs, lens, max);
		if (k == 0 && faulty)
			break;
		if (k < 1 || k > (ssize_t)max)
			return side_fail(s, "peek_n %u of %u (max %u): %zd (%s)", want, count, max, k,
					 k < 0 ? rstr(k) : k ? "out of range" : "EOF");
		for (unsigned i = 0; i < (unsigned)k && !ret; i++)
			ret = take_one(s, msgs[i], (ssize_t)lens[i], &want, &bad, faulty);
		tp->release_n(ep, (unsigned)k);
	}
	return ret;
}

/* A fault case passes when the receiver (the server, or client 0 of a
 * spoilt server's run), and only it, named the spoilt message as it was
 * spoilt. */
void fault_verdict(const struct tcase *tc, const struct side_res *res)
{
	const char *who = tc->fault_s2c ? "client" : "server";
	const struct side_res *rx = &res[tc->fault_s2c], *tx = &res[!tc->fault_s2c];
	char want[96];
	uint32_t f = tc->fault_at;

	if (tc->fault == BF_DROP)
		snprintf(want, sizeof(want), "%s 0: got message %u, expected %u", who, f + 1, f);
	else if (tc->fault == BF_DUP)
		snprintf(want, sizeof(want), "%s 0: got message %u, expected %u", who, f - 1, f);
	else
		snprintf(want, sizeof(want), "%s 0: message %u: payload wrong at byte %zu", who, f,
			 tc->cfg.msg_size - 1);
	if (tx->failed)
		case_fail(tc, "the sender failed: %s", tx->err);
	else if (!rx->failed)
		case_fail(tc, "the spoilt message %u went unnoticed", f);
	else if (strcmp(rx->err, want))
		case_fail(tc, "expected \"%s\", the receiver said \"%s\"", want, rx->err);
}

/* reserve_n on a full channel: the client fills it in runs while the
 * server reads nothing, and a stop request (SIGUSR1, as the runner's) ends
 * the reserve_n that waits for room with -EINTR. */
struct fill_ctl {
	struct side srv, cli;
	int opened;		/* atomic: the client's open returned */
	ssize_t got;		/* what ended the client's filling */
	int release[2];		/* the server waits for a byte here */
};

static void *fill_server(void *arg)
{
	struct fill_ctl *c = arg;
	struct tp_endpoint *ep = NULL;
	char err[ERRLEN], b;

	if (c->srv.tc->tp->open(c->srv.ch, TP_SERVER, 0, &ep, err, sizeof(err)))
		side_fail(&c->srv, "open: %s", err);
	while (read(c->release[0], &b, 1) < 0 && errno == EINTR)
		;
	if (ep)
		c->srv.tc->tp->close(ep);
	__atomic_store_n(&c->srv.done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static ssize_t fill_runs(const struct tcase *tc, struct tp_endpoint *ep)
{
	void *bufs[TP_BATCH_MAX];
	uint32_t pos = 0, next = 0;
	ssize_t k;
	int r;

	while ((k = tc->tp->reserve_n(ep, bufs, tc->cfg.msg_size, TP_BATCH_MAX)) > 0) {
		for (unsigned i = 0; i < (unsigned)k; i++)
			place_fill(tc, bufs[i], pos + i, &next, false);
		r = tc->tp->commit_n(ep, (unsigned)k, tc->cfg.msg_size);
		if (r)
			return r;
		pos += (uint32_t)k;
	}
	return k;
}

static void *fill_client(void *arg)
{
	struct fill_ctl *c = arg;
	struct tp_endpoint *ep = NULL;
	char err[ERRLEN];

	if (c->cli.tc->tp->open(c->cli.ch, TP_CLIENT, 0, &ep, err, sizeof(err))) {
		side_fail(&c->cli, "open: %s", err);
		__atomic_store_n(&c->opened, 1, __ATOMIC_RELEASE);
	} else {
		__atomic_store_n(&c->opened, 1, __ATOMIC_RELEASE);
		c->got = fill_runs(c->cli.tc, ep);
		c->cli.tc->tp->close(ep);
	}
	__atomic_store_n(&c->cli.done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void run_fill_case(struct tcase *tc)
{
	struct tp_channel ch = { .tp = tc->tp, .cfg = &tc->cfg };
	struct side_res res[2];
	struct fill_ctl c = { .got = 1, .release = { -1, -1 } };
	char err[ERRLEN] = "";
	uint64_t deadline = now_ns() + 10 * NSEC_PER_SEC;

	unsigned left;

	case_begin();
	memset(res, 0, sizeof(res));
	c.srv = (struct side){ .tc = tc, .ch = &ch, .res = &res[0], .role = TP_SERVER };
	c.cli = (struct side){ .tc = tc, .ch = &ch, .res = &res[1], .role = TP_CLIENT };
	if (pipe(c.release) < 0 || tc->tp->create(&ch, err, sizeof(err))) {
		case_fail(tc, "create: %s", err);
		goto out;
	}
	pthread_create(&c.srv.th, NULL, fill_server, &c);
	pthread_create(&c.cli.th, NULL, fill_client, &c);
	while (!__atomic_load_n(&c.opened, __ATOMIC_ACQUIRE) && now_ns() < deadline)
		usleep(1000);
	/* until the filling ends: a signal before the channel is full is
	 * simply handled, one during the wait for room counts */
	while (!__atomic_load_n(&c.cli.done, __ATOMIC_ACQUIRE) && now_ns() < deadline) {
		pthread_kill(c.cli.th, SIGUSR1);
		usleep(1000);
	}
	release_and_join(tc, c.release[1], &c.cli, &c.srv, res, deadline);
	if (!res[1].failed && c.got != -EINTR)
		case_fail(tc, "a reserve_n waiting for room returned %zd (%s), expected -EINTR",
			  c.got, rstr(c.got));
out:
	tc->tp->destroy(&ch);
	stop_clear();
	if (c.release[0] >= 0) {
		close(c.release[0]);
		close(c.release[1]);
	}
	left = leftovers_report(tc->name, tc->cfg.dir);
	if (left)
		case_fail(tc, "%u objects left behind (listed above)", left);
}

/* Runs each way, process and thread endpoints, 16 B to 4 KiB, one client
 * and MAXC; then each fault, threads, one client, in the client's runs and
 * in the server's; then a peek_n blocked on nothing and a reserve_n on a
 * full channel, interrupted. */
void run_batch_cases(struct tcase *tc, unsigned div)
{
	static const size_t sizes[] = { 16, 64, 4096 };
	static const char *const faults[] = { "", "dropped", "doubled", "corrupted" };
	size_t max = tc->tp->max_msg ? tc->tp->max_msg(tc->cfg.opts) : 0;
	char base[64];
	unsigned serial = 0;

	snprintf(base, sizeof(base), "%.*s", (int)sizeof(base) - 1, tc->name);
	tc->runs = true;
	for (int threads = 0; threads < 2; threads++) {
		const char *mode = threads ? "thread" : "process";
		const char *only = getenv("ENDPOINTS");

		if ((only && *only && strcmp(only, mode)) ||
		    (!threads && (tc->tp->caps & TP_THREAD_ONLY)))
			continue;
		tc->cfg.threads = threads;
		for (unsigned i = 0; i < ARRAY_SIZE(sizes) * 2; i++) {
			tc->cfg.msg_size = sizes[i % ARRAY_SIZE(sizes)];
			tc->cfg.clients = i < ARRAY_SIZE(sizes) ? 1 : MAXC;
			if ((max && tc->cfg.msg_size > max) ||
			    (tc->cfg.clients > 1 && !(tc->tp->caps & TP_MULTI_CLIENT)))
				continue;
			tc->count = (tc->cfg.msg_size > 64 ? 2000 : 6000) / div / tc->cfg.clients;
			tc->eof_at_server = serial % 2;
			tc->seed = ++serial;
			snprintf(tc->name, sizeof(tc->name), "%s %s %zuB x%u runs (seed %llu)", base,
				 mode, tc->cfg.msg_size, tc->cfg.clients, (unsigned long long)tc->seed);
			run_case(tc);
		}
	}
	for (int f = BF_DROP; f <= 2 * BF_CORRUPT && (!getenv("ENDPOINTS") ||
						       !strcmp(getenv("ENDPOINTS"), "thread")); f++) {
		tc->cfg = (struct tp_config){ .opts = tc->cfg.opts, .dir = tc->cfg.dir,
					      .stop = tc->cfg.stop, .clients = 1, .threads = true,
					      .msg_size = 64 };
		tc->count = FAULT_COUNT;
		tc->fault = f > BF_CORRUPT ? f - BF_CORRUPT : f;
		tc->fault_s2c = f > BF_CORRUPT;
		tc->fault_at = FAULT_AT;
		tc->seed = ++serial;
		snprintf(tc->name, sizeof(tc->name), "%s thread %s runs, %s at %u (seed %llu)",
			 base, tc->fault_s2c ? "server's" : "client's", faults[tc->fault], FAULT_AT,
			 (unsigned long long)tc->seed);
		run_case(tc);
	}
	tc->fault = BF_NONE;
	tc->fault_s2c = false;
	tc->cfg.msg_size = 64;
	tc->cfg.clients = 1;
	tc->cfg.threads = true;
	snprintf(tc->name, sizeof(tc->name), "%s thread interrupt of peek_n", base);
	run_intr_case(tc);
	snprintf(tc->name, sizeof(tc->name), "%s thread interrupt of reserve_n (full)", base);
	run_fill_case(tc);
	tc->runs = false;
}
