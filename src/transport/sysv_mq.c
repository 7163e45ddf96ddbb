// SPDX-License-Identifier: MIT
/* sysv-mq: one System V message queue per client id, the direction in the
 * message type (1 = client->server, 2 = server->client). One queue for all
 * clients would share its byte limit (msg_qbytes) among them: a server
 * waiting for client 0 could find the queue full of client 1's messages
 * and client 0 unable to send, a deadlock; per client it cannot happen.
 * msgsnd/msgrcv want the type in front of the text, so each side copies
 * through its own buffer (one extra user-space copy per message each way).
 * Closing sends a zero-length message of the peer's type: EOF. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>

#include "ipclab/cleanup.h"
#include "ipclab/msg.h"
#include "ipclab/reference.h"
#include "tp_common.h"

#define SYSV_MSGMAX "/proc/sys/kernel/msgmax"
enum { T_C2S = 1, T_S2C = 2 };

struct sysv_opts {
	uint64_t qbytes;
};

static const struct opt_desc sysv_options[] = {
	{ .name = "qbytes", .type = OPT_SIZE, .offset = offsetof(struct sysv_opts, qbytes),
	  .def = "", .max = 1ull << 31,
	  .help = "msg_qbytes, bytes a queue holds (0 = kernel.msgmnb; above it needs root)" },
	{ .name = NULL },
};

struct sysv_buf {
	long mtype;
	char mtext[];
};

struct sysv_ep {
	int qid;
	long rtype, stype;
	size_t cap;
	struct sysv_buf *buf;
};

static size_t sysv_max_msg(const void *opts)
{
	uint64_t v = 0;

	return tp_sysctl_u64(SYSV_MSGMAX, &v) == 0 ? (size_t)v : 8192;
}

static int sysv_qbytes(int qid, uint64_t want, size_t size, unsigned long *got, char *err,
		       size_t errlen)
{
	struct msqid_ds ds;

	if (msgctl(qid, IPC_STAT, &ds) < 0)
		return errf(err, errlen, errno, "sysv-mq: IPC_STAT: %s", strerror(errno));
	if (want) {
		ds.msg_qbytes = (msglen_t)want;
		if (msgctl(qid, IPC_SET, &ds) < 0)
			return errf(err, errlen, errno,
				    "sysv-mq: -O qbytes=%llu refused (%s): above /proc/sys/kernel/msgmnb only root may go; raise it: sysctl kernel.msgmnb=%llu",
				    (unsigned long long)want, strerror(errno),
				    (unsigned long long)want);
		if (msgctl(qid, IPC_STAT, &ds) < 0)
			return errf(err, errlen, errno, "sysv-mq: IPC_STAT: %s", strerror(errno));
	}
	*got = (unsigned long)ds.msg_qbytes;
	if (size > *got)
		return errf(err, errlen, EMSGSIZE,
			    "sysv-mq: a %zu-byte message never fits a queue of %lu bytes (msg_qbytes); raise -O qbytes=%zu or sysctl kernel.msgmnb=%zu",
			    size, *got, size, size);
	return 0;
}

static int sysv_create(struct tp_channel *ch, char *err, size_t errlen)
{
	const struct sysv_opts *o = ch->cfg->opts;
	size_t size = ch->cfg->msg_size ? ch->cfg->msg_size : MSG_HDR_SIZE;
	size_t max = sysv_max_msg(NULL);
	unsigned n = tp_clients(ch);
	unsigned long qbytes = 0;
	struct fd_table *c;
	int *qid, ret;

	if (size > max)
		return errf(err, errlen, EMSGSIZE,
			    "sysv-mq: message size %zu exceeds " SYSV_MSGMAX " (%zu); raise it: sysctl kernel.msgmax=%zu",
			    size, max, size);
	c = fd_table_new(ch, 0, n, n * sizeof(int), err, errlen);
	if (!c)
		return -ENOMEM;
	qid = c->extra;
	for (unsigned id = 0; id < n; id++) {
		/* IPC_PRIVATE has no name: register a handle, then fill in the id */
		c->cl[id] = cleanup_add_id(CL_SYSV_MSG, -1);
		if (c->cl[id] < 0)
			return errf(err, errlen, ENOMEM, "sysv-mq: cleanup table full");
		qid[id] = msgget(IPC_PRIVATE, IPC_CREAT | IPC_EXCL | 0600);
		if (qid[id] < 0)
			return errf(err, errlen, errno, "sysv-mq: msgget: %s%s", strerror(errno),
				    errno == ENOSPC ? " (too many queues: raise them with sysctl kernel.msgmni, or remove stale ones with ipcrm)" : "");
		cleanup_set_id(c->cl[id], qid[id]);
		ret = sysv_qbytes(qid[id], o ? o->qbytes : 0, size, &qbytes, err, errlen);
		if (ret)
			return ret;
	}
	tp_setting(ch, "msg_qbytes", "%lu", qbytes);
	tp_setting(ch, "msgmax_bytes", "%zu", max);
	return 0;
}

static int sysv_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		     struct tp_endpoint **out, char *err, size_t errlen)
{
	const struct fd_table *c = ch->priv;
	struct sysv_ep *se = calloc(1, sizeof(*se));
	size_t cap = ch->cfg->msg_size > MSG_HDR_SIZE ? ch->cfg->msg_size : MSG_HDR_SIZE;
	int ret = tp_check_id(ch, id, err, errlen);

	if (ret) {
		free(se);
		return ret;
	}
	if (se) {
		se->cap = cap;
		se->buf = malloc(sizeof(struct sysv_buf) + cap);
	}
	if (!se || !se->buf) {
		free(se);
		return errf(err, errlen, ENOMEM, "sysv-mq: out of memory");
	}
	se->qid = ((const int *)c->extra)[id];
	se->rtype = role == TP_SERVER ? T_C2S : T_S2C;
	se->stype = role == TP_SERVER ? T_S2C : T_C2S;
	/* no descriptor: the queue id is valid in every process */
	ret = tp_ep_own(ch, -1, -1, 0, out, err, errlen);
	if (ret) {
		free(se->buf);
		free(se);
		return ret;
	}
	(*out)->extra = se;
	return 0;
}

static ssize_t sysv_send(struct tp_endpoint *ep, const void *buf, size_t len)
{
	struct sysv_ep *se = ep->extra;

	if (len == 0)
		return -EINVAL;	/* a zero-length message means EOF here */
	if (len > se->cap)
		return -EMSGSIZE;
	se->buf->mtype = se->stype;
	memcpy(se->buf->mtext, buf, len);
	return msgsnd(se->qid, se->buf, len, 0) < 0 ? -errno : (ssize_t)len;
}

static ssize_t sysv_recv(struct tp_endpoint *ep, void *buf, size_t len)
{
	struct sysv_ep *se = ep->extra;
	ssize_t n = msgrcv(se->qid, se->buf, se->cap, se->rtype, 0);

	if (n < 0)
		return errno == E2BIG ? -EMSGSIZE : -errno;
	if ((size_t)n > len)
		return -EMSGSIZE;
	memcpy(buf, se->buf->mtext, (size_t)n);
	return n;
}

static void sysv_close(struct tp_endpoint *ep)
{
	struct sysv_ep *se;

	if (!ep)
		return;
	se = ep->extra;
	se->buf->mtype = se->stype;
	/* IPC_NOWAIT: close never blocks. A zero-length message fits any
	 * queue that is not full by count (msg_qbytes messages), so this only
	 * fails on a queue nobody reads. */
	(void)msgsnd(se->qid, se->buf, 0, IPC_NOWAIT);
	free(se->buf);
	free(se);
	tp_ep_free(ep);
}

const struct transport tp_sysv_mq = {
	.name = "sysv-mq",
	.summary = "a System V message queue per client, direction in mtype, whole messages; -O qbytes",
	.caps = TP_DGRAM | TP_MULTI_CLIENT,
	.group = TP_GROUP_KERNEL,
	.options = sysv_options,
	.opts_size = sizeof(struct sysv_opts),
	.max_msg = sysv_max_msg, .max_msg_limit = "kernel.msgmax (/proc/sys/kernel/msgmax)",
	.create = sysv_create,
	.open = sysv_open,
	.send = sysv_send,
	.recv = sysv_recv,
	.close = sysv_close,
	.destroy = fd_table_destroy,
	.reference = &ref_sysv_mq,
};
