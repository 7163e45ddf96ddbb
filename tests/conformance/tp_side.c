// SPDX-License-Identifier: MIT
/* What each side of a tp_direct case does with its endpoints: send and
 * receive count messages with a sequence and payload check, count losses
 * on a lossy transport, read EOF after the peer's close. */
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/msg.h"
#include "tp_direct.h"

int side_fail(struct side *s, const char *fmt, ...)
{
	va_list ap;
	int off;

	if (s->res->failed++)
		return -1;	/* the first error is the one worth reading */
	off = snprintf(s->res->err, ERRLEN, "%s %u: ", s->role == TP_SERVER ? "server" : "client",
		       s->id);
	va_start(ap, fmt);
	vsnprintf(s->res->err + off, ERRLEN - (size_t)off, fmt, ap);
	va_end(ap);
	return -1;
}

const char *rstr(ssize_t n)
{
	return n < 0 ? strerror((int)-n) : n == 0 ? "EOF" : "short";
}

static int send_n(struct side *s, struct tp_endpoint *ep, unsigned char *buf)
{
	size_t size = s->tc->cfg.msg_size;

	if (s->tc->runs)
		return send_runs(s, ep, buf);

	for (uint32_t seq = 0; seq < s->tc->count; seq++) {
		struct msg_hdr h = { .seq = seq, .len = (uint32_t)size };
		ssize_t n;

		memcpy(buf, &h, sizeof(h));
		msg_fill(buf, size, seq, true);
		n = s->tc->tp->send(ep, buf, size);
		if (n != (ssize_t)size)
			return side_fail(s, "send %u of %u: %zd (%s)", seq, s->tc->count, n, rstr(n));
	}
	if (s->tc->lossy)
		__atomic_store_n(s->role == TP_SERVER ? &s->all[1 + s->id].got_all :
			&s->all[1 + s->id].sent, 1, __ATOMIC_RELEASE);
	return 0;
}

int check_msg(struct side *s, const unsigned char *buf, ssize_t n, uint32_t *seq)
{
	size_t size = s->tc->cfg.msg_size, bad;
	struct msg_hdr h;

	if (n != (ssize_t)size)
		return side_fail(s, "recv returned %zd (%s), expected a %zu-byte message", n, rstr(n),
				 size);
	memcpy(&h, buf, sizeof(h));
	if ((h.len & MSG_LEN_MASK) != size)
		return side_fail(s, "message %u: header says %u bytes, expected %zu", h.seq, h.len,
				 size);
	bad = msg_check_payload(buf, size, h.seq);
	if (bad)
		return side_fail(s, "message %u: payload wrong at byte %zu", h.seq, bad - 1);
	*seq = h.seq;
	return 0;
}

/* The flag a lossy sender sets when it has sent all to the receiver s. */
static int *lossy_flag(struct side *s)
{
	return s->role == TP_SERVER ? &s->all[1 + s->id].sent : &s->all[1 + s->id].got_all;
}

/* Lossy transports: count gaps and duplicates; a phase ends at the last
 * sequence number, or when nothing is readable and the sender has said
 * (through shared memory, not the transport) that it is done. */
static int recv_lossy(struct side *s, struct tp_endpoint *ep, unsigned char *buf)
{
	const struct transport *tp = s->tc->tp;
	int fd = tp->pollfd ? tp->pollfd(ep) : -1;
	uint32_t next = 0, seq;

	while (next < s->tc->count) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (fd >= 0 && poll(&p, 1, LOSSY_POLL_MS) == 0) {
			if (__atomic_load_n(lossy_flag(s), __ATOMIC_ACQUIRE))
				break;
			continue;
		}
		n = tp->recv(ep, buf, s->tc->cfg.msg_size);
		if (n == 0)
			break;
		if (check_msg(s, buf, n, &seq))
			return -1;
		if (seq >= next) {
			s->res->lost += seq - next;
			next = seq + 1;
		} else {
			s->res->dups++;
		}
	}
	s->res->lost += s->tc->count - next;
	return 0;
}

static int recv_n(struct side *s, struct tp_endpoint *ep, unsigned char *buf)
{
	uint32_t seq;

	if (s->tc->runs)
		return recv_runs(s, ep, buf);
	if (s->tc->lossy)
		return recv_lossy(s, ep, buf);
	for (uint32_t want = 0; want < s->tc->count; want++) {
		ssize_t n = s->tc->tp->recv(ep, buf, s->tc->cfg.msg_size);

		if (n <= 0)
			return side_fail(s, "recv %u of %u: %zd (%s)", want, s->tc->count, n, rstr(n));
		if (check_msg(s, buf, n, &seq))
			return -1;
		if (seq != want)
			return side_fail(s, "got message %u, expected %u", seq, want);
	}
	return 0;
}

static int expect_eof(struct side *s, struct tp_endpoint *ep, unsigned char *buf)
{
	ssize_t n = s->tc->tp->recv(ep, buf, s->tc->cfg.msg_size);

	if (n != 0)
		return side_fail(s, "after the peer's close recv returned %zd (%s), expected 0 (EOF)",
				 n, n < 0 ? strerror((int)-n) : "a message");
	return 0;
}

unsigned char *side_buf(const struct tcase *tc)
{
	return aligned_alloc(64, (tc->cfg.msg_size + 63) & ~(size_t)63);
}

void *server_main(void *arg)
{
	struct side *s = arg;
	const struct transport *tp = s->tc->tp;
	struct tp_endpoint *eps[MAXC] = { 0 };
	unsigned n = s->tc->cfg.clients, id;
	unsigned char *buf = side_buf(s->tc);
	char err[ERRLEN];
	int ret = buf ? 0 : side_fail(s, "out of memory");

	for (id = 0; id < n && !ret; id++) {
		s->id = id;
		ret = tp->open(s->ch, TP_SERVER, id, &eps[id], err, sizeof(err));
		if (ret)
			side_fail(s, "open: %s", err);
	}
	for (id = 0; id < n && !ret; id++)
		s->id = id, ret = recv_n(s, eps[id], buf);
	for (id = 0; id < n && !ret && (!s->tc->fault || s->tc->fault_s2c); id++)
		s->id = id, ret = send_n(s, eps[id], buf);
	for (id = 0; id < n && !ret && s->tc->eof_at_server && !s->tc->lossy && !s->tc->fault;
	     id++)
		s->id = id, ret = expect_eof(s, eps[id], buf);
	for (id = 0; id < n; id++)
		if (eps[id])
			tp->close(eps[id]);
	free(buf);
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

void *client_main(void *arg)
{
	struct side *s = arg;
	const struct transport *tp = s->tc->tp;
	struct tp_endpoint *ep = NULL;
	unsigned char *buf = side_buf(s->tc);
	char err[ERRLEN];

	if (!buf)
		side_fail(s, "out of memory");
	else if (tp->open(s->ch, TP_CLIENT, s->id, &ep, err, sizeof(err)))
		side_fail(s, "open: %s", err);
	else if (!send_n(s, ep, buf) && (!s->tc->fault || s->tc->fault_s2c) &&
		 !recv_n(s, ep, buf) && !s->tc->fault && !s->tc->eof_at_server && !s->tc->lossy)
		expect_eof(s, ep, buf);
	if (ep)
		tp->close(ep);
	free(buf);
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
	return NULL;
}
