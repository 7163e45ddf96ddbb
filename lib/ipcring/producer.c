// SPDX-License-Identifier: MIT
/*
 * producer.c - the producer side: reserve (with the full path), commit with
 * a release store of the record's commit word after pre-zeroing the next
 * header, flush with a seq_cst store of tail followed by a waiter check, and
 * the copying helpers.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

/* Full-path readiness: enough free bytes for r->need, or the consumer gone. */
static int prod_ready(struct ipcring *r, bool sc)
{
	memory_order mo = sc ? memory_order_seq_cst : memory_order_acquire;
	uint32_t st = atomic_load_explicit(r->peer_state, mo);
	uint32_t head, used;

	if (st == ST_CLOSED || st == ST_DEAD)
		return -EPIPE;
	head = atomic_load_explicit(&r->shm->head, mo);
	used = r->pos - head;
	if (used > r->cap || (head & (r->align - 1)))
		return -EBADMSG;
	r->head_cache = head;
	return r->cap - used >= r->need ? 1 : 0;
}

static int prod_make_room(struct ipcring *r, uint32_t need, int timeout_ms)
{
	int ret;

	r->need = need;
	ret = prod_ready(r, false);
	if (ret)
		return ret < 0 ? ret : 0;
	/* Never wait with unflushed records: the consumer may sleep on them. */
	ipcring_flush(r);
	ret = ring_wait(r, prod_ready, ring_deadline(timeout_ms));
	return ret < 0 ? ret : 0;
}

/* Single mapping: a record that would cross the end is preceded by a pad. */
static uint32_t prod_pad_len(const struct ipcring *r, uint32_t rs)
{
	uint32_t off = r->pos & r->mask;

	if (!r->single_map || off + rs <= r->cap)
		return 0;
	return r->cap - off;
}

static void prod_put_pad(struct ipcring *r, uint32_t pad)
{
	struct ring_rec *rec = ring_rec_at(r, r->pos);

	atomic_store_explicit(&ring_rec_at(r, r->pos + pad)->w0, 0,
			      memory_order_relaxed);
	rec->w1 = r->pos;
	atomic_store_explicit(&rec->w0, REC_COMMITTED | REC_PAD | (pad - REC_HDR),
			      memory_order_release);
	r->pos += pad;
	r->unflushed = true;
}

int ipcring_reserve(struct ipcring *r, size_t len, void **buf, int timeout_ms)
{
	uint32_t rs, pad, need;
	int ret;

	if (r->role != IPCRING_PRODUCER || !buf)
		return -EINVAL;
	if (len > r->max_record)
		return -EMSGSIZE;
	if (atomic_load_explicit(r->peer_state, memory_order_acquire) >= ST_CLOSED)
		return -EPIPE;
	rs = ring_rec_size(r, (uint32_t)len);
	pad = prod_pad_len(r, rs);
	/* room for the record and the next, pre-zeroed, header */
	need = pad + rs + REC_HDR;
	if (need > r->cap - (r->pos - r->head_cache)) {
		ret = prod_make_room(r, need, timeout_ms);
		if (ret)
			return ret;
	}
	if (pad)
		prod_put_pad(r, pad);
	r->res_len = (uint32_t)len;
	r->reserved = true;
	r->bres_n = 0;
	*buf = r->data + (r->pos & r->mask) + REC_HDR;
	return 0;
}

int ipcring_commit(struct ipcring *r, size_t len, unsigned int flags)
{
	struct ring_rec *rec;
	uint32_t rs;

	if (!r->reserved || len > r->res_len)
		return -EINVAL;
	rs = ring_rec_size(r, (uint32_t)len);
	rec = ring_rec_at(r, r->pos);
	/* pre-zero the next header; ordered before the commit by the release */
	atomic_store_explicit(&ring_rec_at(r, r->pos + rs)->w0, 0,
			      memory_order_relaxed);
	rec->w1 = r->pos;
	atomic_store_explicit(&rec->w0, REC_COMMITTED | (uint32_t)len,
			      memory_order_release);
	r->pos += rs;
	r->reserved = false;
	r->unflushed = true;
	stat_add(&r->my_stats->msgs, 1);
	stat_add(&r->my_stats->bytes, len);
	if (flags & IPCRING_MORE)
		return 0;
	return ipcring_flush(r);
}

int ipcring_abort(struct ipcring *r)
{
	if (!r->reserved && !r->bres_n)
		return -EINVAL;
	r->reserved = false;
	r->bres_n = 0;
	return 0;
}

/*
 * A batch is one contiguous run of records: room for all of them and the
 * pre-zeroed header after the last is made at once. Its first header was
 * zeroed by the commit before it. commit_batch() zeroes the header after
 * the last record first, then writes the records' headers from the last to
 * the first, the first one's commit word last of all with a release store:
 * a consumer that polls the first record's commit word (a connection's
 * rings, poll_rec) sees the whole run at once, not one record at a time
 * while the run is being committed (small runs, each released on its own,
 * and the lines being written read by the other CPU meanwhile). The
 * consumer reads a header only after the record before it was committed
 * (acquired), so it never sees a later record's header of the previous
 * lap: every header of the run is written before the first record's commit
 * word. Nothing is written to the ring before the commit: each line is
 * first written by whoever fills the record.
 */
int ipcring_reserve_batch(struct ipcring *r, struct ipcring_rec *recs, unsigned int n,
			  int timeout_ms)
{
	uint32_t total = 0, pad, need, off;
	unsigned int i;
	int ret;

	if (r->role != IPCRING_PRODUCER || !recs || !n || n > IPCRING_BATCH_MAX)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (recs[i].len > r->max_record)
			return -EMSGSIZE;
		total += ring_rec_size(r, (uint32_t)recs[i].len);
		if (total > r->cap / 2 - REC_HDR)
			return -EMSGSIZE;
	}
	if (atomic_load_explicit(r->peer_state, memory_order_acquire) >= ST_CLOSED)
		return -EPIPE;
	pad = prod_pad_len(r, total);
	need = pad + total + REC_HDR;
	if (need > r->cap - (r->pos - r->head_cache)) {
		ret = prod_make_room(r, need, timeout_ms);
		if (ret)
			return ret;
	}
	if (pad)
		prod_put_pad(r, pad);
	for (i = 0, off = 0; i < n; i++) {
		recs[i].buf = r->data + ((r->pos + off) & r->mask) + REC_HDR;
		r->bres_len[i] = (uint32_t)recs[i].len;
		off += ring_rec_size(r, (uint32_t)recs[i].len);
	}
	r->reserved = false;
	r->bres_n = n;
	return 0;
}

int ipcring_commit_batch(struct ipcring *r, const struct ipcring_rec *recs,
			 unsigned int n, unsigned int flags)
{
	uint64_t bytes = 0;
	unsigned int i;

	if (!r->bres_n || n > r->bres_n || (n && !recs))
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (recs[i].len > r->bres_len[i] ||
		    (i + 1 < n && recs[i].len != r->bres_len[i]))
			return -EINVAL;
	if (n) {
		uint32_t off[IPCRING_BATCH_MAX], end = 0;

		for (i = 0; i < n; i++) {
			off[i] = end;
			end += ring_rec_size(r, (uint32_t)recs[i].len);
			bytes += recs[i].len;
		}
		/* the header after the run first; ordered before the commit by
		 * the first record's release store, as every header of the run */
		atomic_store_explicit(&ring_rec_at(r, r->pos + end)->w0, 0, memory_order_relaxed);
		for (i = n; i-- > 0;) {
			struct ring_rec *rec = ring_rec_at(r, r->pos + off[i]);

			rec->w1 = r->pos + off[i];
			atomic_store_explicit(&rec->w0, REC_COMMITTED | (uint32_t)recs[i].len,
					      i ? memory_order_relaxed : memory_order_release);
		}
		r->pos += end;
	}
	r->bres_n = 0;
	if (!n)
		return 0;
	r->unflushed = true;
	stat_add(&r->my_stats->msgs, n);
	stat_add(&r->my_stats->bytes, bytes);
	if (flags & IPCRING_MORE)
		return 0;
	return ipcring_flush(r);
}

int ipcring_flush(struct ipcring *r)
{
	if (r->role != IPCRING_PRODUCER)
		return -EINVAL;
	if (!r->unflushed)
		return 0;
	r->unflushed = false;
	/* counted before the tail moves: a consumer that sees the records
	 * also sees the publication that carried them counted */
	stat_add(&r->my_stats->flushes, 1);
	atomic_store(&r->shm->tail, r->pos);	/* seq_cst: StoreLoad before the ec load */
	ring_notify(r);
	return 0;
}

int ipcring_write(struct ipcring *r, const void *buf, size_t len,
		  unsigned int flags, int timeout_ms)
{
	void *p;
	int ret;

	ret = ipcring_reserve(r, len, &p, timeout_ms);
	if (ret)
		return ret;
	if (len)
		memcpy(p, buf, len);
	return ipcring_commit(r, len, flags);
}

int ipcring_writev(struct ipcring *r, const struct iovec *iov, int iovcnt,
		   unsigned int flags, int timeout_ms)
{
	size_t total = 0;
	uint8_t *p;
	void *v;
	int i, ret;

	if (iovcnt < 0 || (iovcnt && !iov))
		return -EINVAL;
	for (i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len > r->max_record - total)
			return -EMSGSIZE;
		total += iov[i].iov_len;
	}
	ret = ipcring_reserve(r, total, &v, timeout_ms);
	if (ret)
		return ret;
	for (p = v, i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len)
			memcpy(p, iov[i].iov_base, iov[i].iov_len);
		p += iov[i].iov_len;
	}
	return ipcring_commit(r, total, flags);
}
