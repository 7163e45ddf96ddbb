// SPDX-License-Identifier: MIT
/* libqb-ipc (libqb_ipc.c): the client side. open connects with
 * qb_ipcc_connect (tried again while the server side is not listening
 * yet) and sends the hello with the client's id and the channel's secret;
 * a request is qb_ipcc_sendv, a reply qb_ipcc_recv on the response ring or
 * qb_ipcc_event_recv when no request waits for one; a full ring is tried
 * again, yielding; the end sends the end marker and waits (bounded) for
 * the server's answer before the disconnect. */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "libqb_ipc.h"

#ifdef HAVE_LIBQB

/* One response (want_response) or event into ep->stage: its length, 0 at
 * EOF, -EINTR on a stop, or -errno. */
static ssize_t qi_cli_take(struct tp_endpoint *ep, bool want_response, unsigned max_slices)
{
	for (unsigned i = 0; !max_slices || i < max_slices; i++) {
		ssize_t n = want_response ? qb_ipcc_recv(ep->c, ep->stage, ep->cap, QI_SLICE_MS)
					  : qb_ipcc_event_recv(ep->c, ep->stage, ep->cap, QI_SLICE_MS);

		if (n > 0)
			return n;
		if (n == -EAGAIN || n == -ETIMEDOUT || n == 0) {
			if (QI_STOPPING(ep))
				return -EINTR;
			continue;
		}
		if (qi_peer_gone(n) == -EPIPE) {
			ep->eof = true;
			return 0;
		}
		return n;
	}
	return -ETIMEDOUT;
}

static ssize_t qi_cli_sendv(struct tp_endpoint *ep, struct iovec *iov, size_t niov, size_t total)
{
	for (uint32_t tries = 1;; tries++) {
		ssize_t r = qb_ipcc_sendv(ep->c, iov, niov);

		if (r == (ssize_t)total) {
			ep->outstanding++;
			return (ssize_t)total;
		}
		if (r >= 0)
			return -EIO;
		if (r != -EAGAIN)
			return qi_peer_gone(r);
		sched_yield();
		if (tries % QI_CHECK_EVERY)
			continue;
		if (QI_STOPPING(ep))
			return -EINTR;
		if (!qb_ipcc_is_connected(ep->c))
			return -EPIPE;
	}
}

/* Long: connect, check the buffer, then the hello, each failure with its own fix. */
int qi_cli_open(struct tp_channel *ch, struct qi_chan *qc, unsigned id,
		struct tp_endpoint *ep, char *err, size_t errlen)
{
	struct qi_hello hi = { .magic = QI_MAGIC, .version = QI_VERSION, .id = id };
	struct qb_ipc_request_header rq = { .id = QI_ID_HELLO, .size = sizeof(rq) + sizeof(hi) };
	struct iovec iov[2] = { { &rq, sizeof(rq) }, { &hi, sizeof(hi) } };
	const struct qb_ipc_response_header *rh;
	const struct qi_hello_res *res;
	struct timespec pause = { 0, QI_CONNECT_PAUSE_NS };
	int32_t got;
	ssize_t n;
	int e = ECONNREFUSED;

	for (unsigned t = 0; !ep->c && t < QI_CONNECT_TRIES; t++) {
		ep->c = qb_ipcc_connect(qc->service, qc->buffer);
		if (ep->c)
			break;
		e = errno ? errno : ECONNREFUSED;
		/* the server side has not started listening yet */
		if (e != ECONNREFUSED && e != ENOENT && e != EAGAIN)
			break;
		if (QI_STOPPING(ep))
			return errf(err, errlen, EINTR, "libqb-ipc: client %u: stopped", id);
		nanosleep(&pause, NULL);
	}
	if (!ep->c)
		return errf(err, errlen, e, "libqb-ipc: client %u: qb_ipcc_connect(%s): %s%s", id,
			    qc->service, strerror(e),
			    e == ECONNREFUSED ? " (the server side never listened: did it start?)" :
			    /* the server's own failures in the set-up come back here too */
			    e == EMFILE || e == ENFILE ? " (out of file descriptors, here or in the "
			    "server: raise the open-file limit, ulimit -n)" :
			    e == ENOSPC ? " (/dev/shm, where libqb makes each connection's rings, "
			    "is full: free space there, or raise its size: mount -o remount,size=... "
			    "/dev/shm)" : "");
	got = qb_ipcc_get_buffer_size(ep->c);
	if (got < 0 || (size_t)got < qc->buffer)
		return errf(err, errlen, ENOBUFS, "libqb-ipc: client %u: libqb granted %d bytes per "
			    "ring, less than the %zu asked (-O buffer)", id, (int)got, qc->buffer);
	ep->cap = sizeof(struct qb_ipc_response_header) + ch->cfg->msg_size;
	if (ep->cap < sizeof(struct qb_ipc_response_header) + sizeof(*res))
		ep->cap = sizeof(struct qb_ipc_response_header) + sizeof(*res);
	ep->stage = malloc(ep->cap);
	if (!ep->stage)
		return errf(err, errlen, ENOMEM, "libqb-ipc: out of memory");
	memcpy(hi.secret, qc->secret, sizeof(hi.secret));
	n = qi_cli_sendv(ep, iov, 2, sizeof(rq) + sizeof(hi));
	if (n >= 0)
		n = qi_cli_take(ep, true, QI_START_TICKS);
	ep->outstanding = 0;
	rh = (const void *)ep->stage;
	res = (const void *)(rh + 1);
	if (n == 0)
		return errf(err, errlen, ECONNREFUSED, "libqb-ipc: client %u: the server refused "
			    "the connection (another uid, or a wrong secret)", id);
	if (n < 0)
		return errf(err, errlen, (int)-n, "libqb-ipc: client %u: hello: %s", id,
			    strerror((int)-n));
	if ((size_t)n != sizeof(*rh) + sizeof(*res) || rh->id != QI_ID_HELLO || res->magic != QI_MAGIC)
		return errf(err, errlen, EPROTO, "libqb-ipc: client %u: the server's answer to "
			    "the hello is not ipclab's", id);
	if (res->status)
		return errf(err, errlen, (int)res->status, "libqb-ipc: client %u: the server "
			    "refused the hello: %s", id, strerror((int)res->status));
	return 0;
}

/* The client's end: its end marker, then (bounded) the server's answer to
 * it, so that the server has read every request before the hang-up (see
 * qi_srv_end); then the disconnect. */
void qi_cli_end(struct tp_endpoint *ep)
{
	struct qb_ipc_request_header rq = { .id = QI_ID_EOF, .size = sizeof(rq) };
	struct iovec iov = { &rq, sizeof(rq) };
	const struct qb_ipc_response_header *rh = (const void *)ep->stage;

	if (ep->stage && !QI_STOPPING(ep) && qi_cli_sendv(ep, &iov, 1, sizeof(rq)) > 0)
		for (unsigned i = 0; i < QI_CLOSE_SLICES; i++) {
			ssize_t n = qi_cli_take(ep, true, 1);

			if (n == -ETIMEDOUT)
				continue;
			if (n <= 0 || ((size_t)n == sizeof(*rh) && rh->id == QI_ID_EOF))
				break;
		}
	qb_ipcc_disconnect(ep->c);
}

ssize_t qi_cli_send(struct tp_endpoint *ep, const void *buf, size_t len)
{
	struct qb_ipc_request_header rq = { .id = QI_ID_MSG, .size = (int32_t)(sizeof(rq) + len) };
	struct iovec iov[2] = { { &rq, sizeof(rq) }, { (void *)buf, len } };
	ssize_t r = qi_cli_sendv(ep, iov, 2, sizeof(rq) + len);

	return r < 0 ? r : (ssize_t)len;
}

ssize_t qi_cli_recv(struct tp_endpoint *ep, void *buf, size_t len)
{
	const struct qb_ipc_response_header *rh = (const void *)ep->stage;
	bool response = ep->outstanding > 0;
	ssize_t n;
	size_t body;

	if (ep->eof)
		return 0;
	n = qi_cli_take(ep, response, 0);
	if (n <= 0)
		return n;
	if (response)
		ep->outstanding--;
	if ((size_t)n == sizeof(*rh) && rh->size == n && rh->id == QI_ID_EOF) {
		ep->eof = true;
		return 0;
	}
	if ((size_t)n < sizeof(*rh) || rh->size != n || rh->id != QI_ID_MSG || rh->error)
		return -EPROTO;
	body = (size_t)n - sizeof(*rh);
	if (body > len)
		return -EMSGSIZE;
	memcpy(buf, rh + 1, body);
	return (ssize_t)body;
}

#endif /* HAVE_LIBQB */
