// SPDX-License-Identifier: MIT
/*
 * consumer.c - the consumer side: poll the next record's commit word
 * (acquire), validate it without trusting the producer, hand it out in
 * place, and publish the consumed space in batches with a seq_cst store of
 * head followed by a waiter check. Also the eventfd (event-loop) helpers.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

/* Bound-check a committed record at r->pos; its size goes to *rs. */
static int rec_check_at(const struct ipcring *r, uint32_t pos, const struct ring_rec *rec,
			uint32_t w, uint32_t *rs)
{
	uint32_t len = w & REC_LEN_MASK, off = pos & r->mask;

	if (rec->w1 != pos)
		return -EBADMSG;
	if (w & REC_PAD) {
		/* only the single mapping pads, and a pad ends at the wrap */
		if (!r->single_map || len + REC_HDR != r->cap - off)
			return -EBADMSG;
		*rs = r->cap - off;
		return 0;
	}
	if (len > r->max_record)
		return -EBADMSG;
	*rs = ring_rec_size(r, len);
	if (r->single_map && off + *rs > r->cap)
		return -EBADMSG;
	return 0;
}

static int rec_check(const struct ipcring *r, const struct ring_rec *rec,
		     uint32_t w, uint32_t *rs)
{
	return rec_check_at(r, r->pos, rec, w, rs);
}

/* The fast path: 1 with a record, 0 if none is committed, -EBADMSG. */
static int cons_next(struct ipcring *r, const void **msg, size_t *len)
{
	struct ring_rec *rec;
	uint32_t w, rs;
	int ret;

	for (;;) {
		rec = ring_rec_at(r, r->pos);
		w = atomic_load_explicit(&rec->w0, memory_order_acquire);
		if (!(w & REC_COMMITTED))
			return 0;
		ret = rec_check(r, rec, w, &rs);
		if (ret)
			return ret;
		if (!(w & REC_PAD))
			break;
		r->pos += rs;
		r->unreleased += rs;
	}
	r->peek_rs = rs;
	r->peek_len = w & REC_LEN_MASK;
	*msg = (const uint8_t *)rec + REC_HDR;
	*len = r->peek_len;
	return 1;
}

/*
 * Empty-path readiness. While spinning, a plain ring watches tail (its own
 * line, written once per flush) rather than the commit word of the record
 * the producer is writing: polling that line makes it bounce between the
 * cores several times per record (measured: ~25% fewer msgs/s, see README).
 * A connection's rings (poll_rec) carry requests and replies, one record
 * at a time: there the commit word is read first, which sees a reply one
 * line transfer sooner (README, "Deviations from RING.md", 1). The
 * seq_cst re-check after announcing sleep reads tail, which the producer's
 * seq_cst flush stored before it read the eventcount, and the commit word,
 * for records committed with IPCRING_MORE. The state is read first: records
 * committed before a close or a death are visible once the state is.
 */
int ring_cons_ready(struct ipcring *r, bool sc)
{
	memory_order mo = sc ? memory_order_seq_cst : memory_order_acquire;
	uint32_t st = atomic_load_explicit(r->peer_state, mo);
	uint32_t tail, w;

	if (r->poll_rec &&
	    (atomic_load_explicit(&ring_rec_at(r, r->pos)->w0, mo) & REC_COMMITTED))
		return 1;
	tail = atomic_load_explicit(&r->shm->tail, mo);
	if (!sc && (int32_t)(tail - r->pos) <= 0 && st <= ST_ALIVE)
		return 0;
	/* read after tail: a flush past pos makes its commit visible here */
	w = atomic_load_explicit(&ring_rec_at(r, r->pos)->w0, mo);
	if (w & REC_COMMITTED)
		return 1;
	if ((int32_t)(tail - r->pos) > 0)
		return -EBADMSG;	/* flushed past pos, yet nothing here */
	if (st == ST_CLOSED)
		return -ESHUTDOWN;
	if (st == ST_DEAD)
		return -EPIPE;
	return 0;
}

void ring_cons_publish(struct ipcring *r)
{
	if (!r->unreleased)
		return;
	r->unreleased = 0;
	stat_add(&r->my_stats->flushes, 1);	/* counted before the producer can see it */
	atomic_store(&r->shm->head, r->pos);	/* seq_cst: StoreLoad before the ec load */
	ring_notify(r);
}

bool ring_cons_more(const struct ipcring *r)
{
	const struct ring_rec *next;

	if (!r->peek_rs)
		return false;
	/* pre-zeroed before the record handed out was committed (acquired):
	 * never a stale commit word of the previous lap */
	next = ring_rec_at(r, r->pos + r->peek_rs);
	return atomic_load_explicit(&next->w0, memory_order_acquire) & REC_COMMITTED;
}

static int cons_wait(struct ipcring *r, const void **msg, size_t *len,
		     int timeout_ms)
{
	uint64_t deadline = ring_deadline(timeout_ms);
	int ret;

	do {
		/* give the space back before waiting: the producer may be full */
		ring_cons_publish(r);
		ret = ring_wait(r, ring_cons_ready, deadline);
		if (ret == -ESHUTDOWN)
			return 0;
		if (ret < 0)
			return ret;
		ret = cons_next(r, msg, len);
	} while (!ret);
	return ret;
}

int ipcring_peek(struct ipcring *r, const void **msg, size_t *len,
		 int timeout_ms)
{
	int ret;

	if (r->role != IPCRING_CONSUMER || !msg || !len)
		return -EINVAL;
	ret = cons_next(r, msg, len);
	if (ret)
		return ret;
	return cons_wait(r, msg, len, timeout_ms);
}

/* Consume the peeked record locally; publish only past the threshold. */
static void cons_consume(struct ipcring *r)
{
	r->pos += r->peek_rs;
	r->unreleased += r->peek_rs;
	r->peek_rs = 0;
	r->bpeek_n = 0;
	stat_add(&r->my_stats->msgs, 1);
	stat_add(&r->my_stats->bytes, r->peek_len);
}

int ipcring_release(struct ipcring *r)
{
	if (!r->peek_rs)
		return -EINVAL;
	cons_consume(r);
	if (r->unreleased >= r->release_threshold)
		ring_cons_publish(r);
	return 0;
}

int ipcring_read(struct ipcring *r, void *buf, size_t cap, size_t *len,
		 int timeout_ms)
{
	const void *msg;
	size_t n;
	int ret;

	ret = ipcring_peek(r, &msg, &n, timeout_ms);
	if (ret <= 0)
		return ret;
	if (len)
		*len = n;
	if (n > cap)
		return -EMSGSIZE;
	if (n)
		memcpy(buf, msg, n);
	return ipcring_release(r) ? -EINVAL : 1;
}

int ipcring_read_batch(struct ipcring *r, ipcring_handler_fn fn, void *ctx,
		       unsigned int max, int timeout_ms)
{
	const void *msg;
	unsigned int n = 0;
	size_t len;
	int ret, stop;

	if (!fn || !max)
		return -EINVAL;
	ret = ipcring_peek(r, &msg, &len, timeout_ms);
	if (ret <= 0)
		return ret;
	do {
		stop = fn(ctx, msg, len);
		cons_consume(r);
		n++;
		if (r->unreleased >= r->release_threshold)
			ring_cons_publish(r);
	} while (!stop && n < max && cons_next(r, &msg, &len) == 1);
	ring_cons_publish(r);
	return (int)(n > INT32_MAX ? INT32_MAX : n);
}

int ipcring_fd(const struct ipcring *r)
{
	if (r->role != IPCRING_CONSUMER || r->wait_efd < 0)
		return -EINVAL;
	return r->wait_efd;
}

int ipcring_prepare_wait(struct ipcring *r)
{
	const void *msg;
	size_t len;
	uint32_t e;

	if (r->role != IPCRING_CONSUMER || r->wait_efd < 0)
		return -EINVAL;
	if (r->peek_rs || cons_next(r, &msg, &len))
		return 1;
	ring_cons_publish(r);
	ring_efd_drain(r->wait_efd);
	e = atomic_fetch_or(r->wait_ec, EC_W) | EC_W;
	if (ring_cons_ready(r, true)) {
		atomic_compare_exchange_strong(r->wait_ec, &e, e & ~EC_W);
		return 1;
	}
	return 0;
}

/* After a peeked first record: the committed ones behind it, at most @max. */
static unsigned int cons_scan(struct ipcring *r, const void *msg, size_t len,
			      struct ipcring_rec *recs, unsigned int max)
{
	uint32_t end = r->peek_rs, rs, w;
	unsigned int n = 1;

	recs[0].buf = (void *)msg;
	recs[0].len = len;
	r->bpeek_end[0] = end;
	r->bpeek_len[0] = (uint32_t)len;
	while (n < max && end < r->cap) {
		struct ring_rec *rec = ring_rec_at(r, r->pos + end);

		w = atomic_load_explicit(&rec->w0, memory_order_acquire);
		if (!(w & REC_COMMITTED) || rec_check_at(r, r->pos + end, rec, w, &rs))
			break;		/* a bad one is reported when it comes first */
		end += rs;
		if (w & REC_PAD)
			continue;
		recs[n].buf = (uint8_t *)rec + REC_HDR;
		recs[n].len = w & REC_LEN_MASK;
		r->bpeek_end[n] = end;
		r->bpeek_len[n] = w & REC_LEN_MASK;
		n++;
	}
	return n;
}

int ipcring_peek_batch(struct ipcring *r, struct ipcring_rec *recs, unsigned int max,
		       int timeout_ms)
{
	const void *msg;
	size_t len;
	int ret;

	if (r->role != IPCRING_CONSUMER || !recs || !max)
		return -EINVAL;
	if (max > IPCRING_BATCH_MAX)
		max = IPCRING_BATCH_MAX;
	ret = ipcring_peek(r, &msg, &len, timeout_ms);
	if (ret <= 0)
		return ret;
	r->bpeek_n = cons_scan(r, msg, len, recs, max);
	return (int)r->bpeek_n;
}

int ipcring_release_batch(struct ipcring *r, unsigned int n)
{
	uint64_t bytes = 0;

	if (r->role != IPCRING_CONSUMER || !n || n > r->bpeek_n)
		return -EINVAL;
	for (unsigned int i = 0; i < n; i++)
		bytes += r->bpeek_len[i];
	r->pos += r->bpeek_end[n - 1];
	r->unreleased += r->bpeek_end[n - 1];
	r->peek_rs = 0;
	r->bpeek_n = 0;
	stat_add(&r->my_stats->msgs, n);
	stat_add(&r->my_stats->bytes, bytes);
	ring_cons_publish(r);
	return 0;
}
