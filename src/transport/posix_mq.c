// SPDX-License-Identifier: MIT
/* posix-mq: two POSIX message queues per client, one per direction. The
 * parent opens both O_RDWR (so endpoints inherit the descriptors) and
 * unlinks the names at once: nothing is left behind even after SIGKILL.
 * A queue has no EOF: closing an endpoint sends a zero-length message,
 * which the peer's recv returns as 0. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mqueue.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "ipclab/cleanup.h"
#include "ipclab/msg.h"
#include "ipclab/reference.h"
#include "tp_common.h"

#define MQ_MSGSIZE_MAX "/proc/sys/fs/mqueue/msgsize_max"

struct pmq_opts {
	uint64_t maxmsg;
};

static const struct opt_desc pmq_options[] = {
	{ .name = "maxmsg", .type = OPT_UINT, .offset = offsetof(struct pmq_opts, maxmsg),
	  .def = "10", .min = 1, .max = 65536,
	  .help = "messages a queue holds (mq_maxmsg; unprivileged limit /proc/sys/fs/mqueue/msg_max)" },
	{ .name = NULL },
};

/* Per client id: the client->server queue, then server->client. */
enum { Q_C2S, Q_S2C, Q_PER_CLIENT };

static size_t pmq_max_msg(const void *opts)
{
	uint64_t v = 0;

	return tp_sysctl_u64(MQ_MSGSIZE_MAX, &v) == 0 ? (size_t)v : 8192;
}

/* Explain a failed mq_open with the limit that caused it. */
static int pmq_open_error(int e, const struct mq_attr *a, unsigned nq, char *err, size_t errlen)
{
	struct rlimit rl = { 0 };
	/* roughly what the kernel charges: data plus per-message bookkeeping */
	unsigned long long need = (unsigned long long)a->mq_maxmsg * (a->mq_msgsize + 128) * nq;

	getrlimit(RLIMIT_MSGQUEUE, &rl);
	if (e == EMFILE && need > (unsigned long long)rl.rlim_cur)
		return errf(err, errlen, e,
			    "posix-mq: %u queues of %ld x %ld bytes exceed RLIMIT_MSGQUEUE (%llu bytes, shared by all of this user's queues); raise it: ulimit -q %llu (or unlimited), or lower -O maxmsg",
			    nq, a->mq_maxmsg, a->mq_msgsize, (unsigned long long)rl.rlim_cur, need);
	if (e == EMFILE)
		return errf(err, errlen, e,
			    "posix-mq: mq_open: RLIMIT_MSGQUEUE (%llu bytes, shared by all of this user's queues) or the open-file limit reached; raise them: ulimit -q / ulimit -n",
			    (unsigned long long)rl.rlim_cur);
	if (e == EINVAL)
		return errf(err, errlen, e,
			    "posix-mq: mq_open refused maxmsg %ld / msgsize %ld: over /proc/sys/fs/mqueue/msg_max or msgsize_max; raise them: sysctl fs.mqueue.msg_max=%ld",
			    a->mq_maxmsg, a->mq_msgsize, a->mq_maxmsg);
	if (e == ENOSPC)
		return errf(err, errlen, e,
			    "posix-mq: too many queues on the system: /proc/sys/fs/mqueue/queues_max; raise it: sysctl fs.mqueue.queues_max=1024");
	return errf(err, errlen, e, "posix-mq: mq_open: %s", strerror(e));
}

static int pmq_make(struct tp_channel *ch, struct fd_table *c, unsigned idx, struct mq_attr *a,
		    char *err, size_t errlen)
{
	char name[NAME_MAX];
	struct mq_attr got;
	int h;
	mqd_t q;

	cleanup_unique_name(name, sizeof(name), "/ipclab-mq");
	h = cleanup_add(CL_POSIX_MQ, name);
	if (h < 0)
		return errf(err, errlen, ENOMEM, "posix-mq: cleanup table full");
	q = mq_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600, a);
	if (q == (mqd_t)-1) {
		int e = errno;

		cleanup_forget(h);
		return pmq_open_error(e, a, tp_clients(ch) * Q_PER_CLIENT, err, errlen);
	}
	/* both descriptors are open here and inherited: the name can go now */
	cleanup_run_one(h);
	/* an mqd_t is a descriptor on Linux: fd_table_destroy close()s it */
	fd_table_set(c, idx, (int)q, FD_BOTH, idx / Q_PER_CLIENT);
	if (mq_getattr(q, &got) < 0)
		return errf(err, errlen, errno, "posix-mq: mq_getattr: %s", strerror(errno));
	if (got.mq_maxmsg != a->mq_maxmsg || got.mq_msgsize != a->mq_msgsize)
		return errf(err, errlen, ERANGE,
			    "posix-mq: asked for %ld x %ld bytes, the kernel gave %ld x %ld", a->mq_maxmsg,
			    a->mq_msgsize, got.mq_maxmsg, got.mq_msgsize);
	*a = got;
	return 0;
}

static int pmq_create(struct tp_channel *ch, char *err, size_t errlen)
{
	const struct pmq_opts *o = ch->cfg->opts;
	size_t size = ch->cfg->msg_size ? ch->cfg->msg_size : MSG_HDR_SIZE;
	size_t max = pmq_max_msg(NULL);
	unsigned n = tp_clients(ch) * Q_PER_CLIENT;
	struct mq_attr a = { .mq_maxmsg = o ? (long)o->maxmsg : 10, .mq_msgsize = (long)size };
	struct fd_table *c;
	int ret;

	/* enforced for root too, so that a result does not depend on who ran it */
	if (size > max)
		return errf(err, errlen, EMSGSIZE,
			    "posix-mq: message size %zu exceeds " MQ_MSGSIZE_MAX " (%zu); raise it: sysctl fs.mqueue.msgsize_max=%zu",
			    size, max, size);
	c = fd_table_new(ch, n, 0, 0, err, errlen);
	if (!c)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		ret = pmq_make(ch, c, i, &a, err, errlen);
		if (ret)
			return ret;
	}
	tp_setting(ch, "mq_maxmsg", "%ld", a.mq_maxmsg);
	tp_setting(ch, "mq_msgsize", "%ld", a.mq_msgsize);
	return 0;
}

static int pmq_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		    struct tp_endpoint **out, char *err, size_t errlen)
{
	unsigned base = id * Q_PER_CLIENT;
	unsigned r = base + (role == TP_SERVER ? Q_C2S : Q_S2C);
	unsigned w = base + (role == TP_SERVER ? Q_S2C : Q_C2S);
	int ret = tp_ep_from_chan(ch, role, id, r, w, 0, out, err, errlen);

	if (ret)
		return ret;
	(*out)->max = ch->cfg->msg_size ? ch->cfg->msg_size : MSG_HDR_SIZE;
	return 0;
}

static ssize_t pmq_send(struct tp_endpoint *ep, const void *buf, size_t len)
{
	if (len == 0)
		return -EINVAL;	/* a zero-length message means EOF here */
	if (mq_send((mqd_t)ep->wfd, buf, len, 0) < 0)
		return -errno;
	return (ssize_t)len;
}

static ssize_t pmq_recv(struct tp_endpoint *ep, void *buf, size_t len)
{
	ssize_t n;

	/* mq_receive wants room for mq_msgsize whatever the message's length */
	if (len >= ep->max) {
		n = mq_receive((mqd_t)ep->rfd, buf, len, NULL);
		return n < 0 ? -errno : n;
	}
	if (!ep->extra && !(ep->extra = malloc(ep->max)))
		return -ENOMEM;
	n = mq_receive((mqd_t)ep->rfd, ep->extra, ep->max, NULL);
	if (n < 0)
		return -errno;
	if ((size_t)n > len)
		return -EMSGSIZE;
	memcpy(buf, ep->extra, (size_t)n);
	return n;
}

/* The EOF marker, without blocking: an absolute timeout in the past makes
 * mq_timedsend fail at once (ETIMEDOUT) on a full queue. */
static int pmq_marker(int fd)
{
	const struct timespec past = { 0, 0 };

	return mq_timedsend((mqd_t)fd, "", 0, 0, &past);
}

static void pmq_close(struct tp_endpoint *ep)
{
	if (!ep)
		return;
	/* a Linux mqd_t is a descriptor: poll() says when the queue has room */
	tp_marker(ep->wfd, pmq_marker);
	free(ep->extra);
	tp_ep_free(ep);
}

const struct transport tp_posix_mq = {
	.name = "posix-mq",
	.summary = "two POSIX message queues per client (one per direction), whole messages; -O maxmsg",
	.caps = TP_DGRAM | TP_MULTI_CLIENT | TP_POLLABLE,
	.group = TP_GROUP_KERNEL,
	.options = pmq_options,
	.opts_size = sizeof(struct pmq_opts),
	.max_msg = pmq_max_msg, .max_msg_limit = "fs.mqueue.msgsize_max (/proc/sys/fs/mqueue/msgsize_max)",
	.create = pmq_create,
	.open = pmq_open,
	.send = pmq_send,
	.recv = pmq_recv,
	.pollfd = tp_fd_pollfd,
	.close = pmq_close,
	.destroy = fd_table_destroy,
	.reference = &ref_posix_mq,
};
