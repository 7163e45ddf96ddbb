// SPDX-License-Identifier: MIT
/* The references' channels, one per transport (each transport names its
 * own, ref_NAME, as its .reference): made here with the plain calls
 * (pipe2, mkfifo, socketpair, a loopback TCP or UDP pair, mq_open,
 * msgget), no ipclab transport code; the cell's -O settings that have a
 * plain equivalent (pipe size, socket buffers, TCP_NODELAY, queue sizes)
 * are applied the same way. The shared-memory and library channels are in
 * shm.c and libs.c. Named objects are registered before they exist. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipclab/cleanup.h"
#include "ipclab/experiment.h"
#include "ipclab/reference.h"
#include "ipclab/transport.h"
#include "ref_int.h"

/* The -O options each reference applies as the cell does. */
static const char *const m_none[] = { NULL };
static const char *const m_pipe[] = { "pipe-size", NULL };
static const char *const m_sock[] = { "sndbuf", "rcvbuf", NULL };
static const char *const m_tcp[] = { "nodelay", "sndbuf", "rcvbuf", NULL };
static const char *const m_mq[] = { "maxmsg", NULL };
static const char *const m_sysv[] = { "qbytes", NULL };

bool ref_chan_mirrors(const struct cell *c, char *why, size_t whylen)
{
	const struct tp_reference *ref = c->tp->reference;

	return ref && ref_opts_mirrored(c, ref->mirrored, why, whylen);
}

static int fail(char *err, size_t errlen, const char *what)
{
	int e = errno;

	snprintf(err, errlen, "reference: %s: %s", what, strerror(e));
	return -e;
}

/* Two one-way channels: rx[0]/tx[0] client->server, rx[1]/tx[1] back. */
static void two_way(struct ref_chan *ch, const int c2s[2], const int s2c[2])
{
	ch->fd[REF_SERVER][0] = c2s[0];
	ch->fd[REF_CLIENT][1] = c2s[1];
	ch->fd[REF_CLIENT][0] = s2c[0];
	ch->fd[REF_SERVER][1] = s2c[1];
}

static int open_fifo(struct ref_chan *ch, int k, int fds[2], char *err, size_t errlen)
{
	const char *dir = cleanup_private_dir();
	char uniq[64];

	if (!dir)
		return fail(err, errlen, "private directory");
	cleanup_unique_name(uniq, sizeof(uniq), "ref-fifo");
	snprintf(ch->name[k], sizeof(ch->name[k]), "%s/%s", dir, uniq);
	if ((ch->handle[k] = cleanup_add(CL_PATH, ch->name[k])) < 0)
		return fail(err, errlen, "cleanup_add");
	if (mkfifo(ch->name[k], 0600))
		return fail(err, errlen, "mkfifo");
	/* the read end first without blocking, then the write end */
	if ((fds[0] = open(ch->name[k], O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
		return fail(err, errlen, "open fifo");
	if ((fds[1] = open(ch->name[k], O_WRONLY | O_CLOEXEC)) < 0) {
		close(fds[0]);
		return fail(err, errlen, "open fifo");
	}
	fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) & ~O_NONBLOCK);
	return 0;
}

static int open_tcp(int sv[2], int nodelay, char *err, size_t errlen)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = nodelay;

	sv[0] = sv[1] = -1;
	if (l < 0)
		return fail(err, errlen, "socket");
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &len))
		goto out;
	if ((sv[1] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    connect(sv[1], (struct sockaddr *)&a, sizeof(a)))
		goto out;
	if ((sv[0] = accept4(l, NULL, NULL, SOCK_CLOEXEC)) < 0)
		goto out;
	close(l);
	setsockopt(sv[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(sv[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
out:;
	int e = fail(err, errlen, "tcp loopback connection");

	close(l);
	if (sv[1] >= 0)
		close(sv[1]);
	sv[1] = -1;
	return e;
}

/* A connected pair of UDP sockets on 127.0.0.1. */
static int open_udp(int sv[2], char *err, size_t errlen)
{
	struct sockaddr_in a[2];

	sv[0] = sv[1] = -1;
	for (int i = 0; i < 2; i++) {
		socklen_t len = sizeof(a[i]);

		a[i] = (struct sockaddr_in){ .sin_family = AF_INET,
					     .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		if ((sv[i] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0 ||
		    bind(sv[i], (struct sockaddr *)&a[i], sizeof(a[i])) ||
		    getsockname(sv[i], (struct sockaddr *)&a[i], &len))
			return fail(err, errlen, "udp socket on 127.0.0.1");
	}
	for (int i = 0; i < 2; i++)
		if (connect(sv[i], (struct sockaddr *)&a[!i], sizeof(a[0])))
			return fail(err, errlen, "udp connect");
	return 0;
}

/* -O sndbuf / rcvbuf as the cell sets them (0 = the kernel's default). */
static int sock_bufs(const struct cell *c, const int sv[2], char *err, size_t errlen)
{
	static const struct {
		const char *name;
		int opt;
	} b[] = { { "sndbuf", SO_SNDBUF }, { "rcvbuf", SO_RCVBUF } };

	for (int k = 0; k < 2; k++) {
		int v = (int)ref_tp_opt(c, b[k].name);

		for (int i = 0; v && i < 2; i++)
			if (setsockopt(sv[i], SOL_SOCKET, b[k].opt, &v, sizeof(v)))
				return fail(err, errlen, b[k].name);
	}
	return 0;
}

static int open_mq(struct ref_chan *ch, const struct cell *c, char *err, size_t errlen)
{
	struct mq_attr at = { .mq_maxmsg = (long)ref_tp_opt(c, "maxmsg"), .mq_msgsize = (long)c->size };

	for (int k = 0; k < 2; k++) {
		cleanup_unique_name(ch->name[k], sizeof(ch->name[k]), "/ipclab-ref-mq");
		if ((ch->handle[k] = cleanup_add(CL_POSIX_MQ, ch->name[k])) < 0)
			return fail(err, errlen, "cleanup_add");
		ch->mq[k] = mq_open(ch->name[k], O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600, &at);
		if (ch->mq[k] == (mqd_t)-1)
			return fail(err, errlen, "mq_open");
	}
	return 0;
}

/* sysv-mq: one queue, the direction in mtype (1 = to the server, 2 = back),
 * each side's message buffer (mtype, then the text) its own. */
struct ref_sysv {
	int qid;
	size_t size;
	struct {
		long mtype;
		char mtext[];
	} *buf[2];
};

static int sysv_send(struct ref_chan *ch, int role, const void *b, size_t n, const char **what)
{
	struct ref_sysv *q = ch->priv;

	(void)b;
	q->buf[role]->mtype = role == REF_CLIENT ? 1 : 2;
	*what = "msgsnd";
	return msgsnd(q->qid, q->buf[role], n, 0) ? -errno : 0;
}

static int sysv_recv(struct ref_chan *ch, int role, void *b, size_t n, const char **what)
{
	struct ref_sysv *q = ch->priv;

	(void)b;
	*what = "msgrcv";
	return msgrcv(q->qid, q->buf[role], n, role == REF_CLIENT ? 2 : 1, 0) < 0 ? -errno : 0;
}

static void sysv_destroy(struct ref_chan *ch)
{
	struct ref_sysv *q = ch->priv;

	for (int i = 0; q && i < 2; i++)
		free(q->buf[i]);
	free(q);
	ch->priv = NULL;
}

static const struct ref_ops sysv_ops = {
	.send = sysv_send, .recv = sysv_recv, .destroy = sysv_destroy,
};

static int open_sysv(struct ref_chan *ch, const struct cell *c, char *err, size_t errlen)
{
	struct ref_sysv *q = calloc(1, sizeof(*q));
	uint64_t qbytes = ref_tp_opt(c, "qbytes");

	ch->kind = REF_OPS;
	ch->ops = &sysv_ops;
	ch->priv = q;
	for (int i = 0; q && i < 2; i++) {
		q->buf[i] = malloc(sizeof(*q->buf[i]) + c->size);
		if (!q->buf[i])
			break;
		memset(q->buf[i]->mtext, 0x5a, c->size);
	}
	if (!q || !q->buf[0] || !q->buf[1]) {
		errno = ENOMEM;
		return fail(err, errlen, "out of memory");
	}
	if ((ch->handle[0] = cleanup_add_id(CL_SYSV_MSG, -1)) < 0)
		return fail(err, errlen, "cleanup_add");
	if ((q->qid = msgget(IPC_PRIVATE, IPC_CREAT | IPC_EXCL | 0600)) < 0)
		return fail(err, errlen, "msgget");
	cleanup_set_id(ch->handle[0], q->qid);
	if (qbytes) {
		struct msqid_ds ds;

		if (msgctl(q->qid, IPC_STAT, &ds))
			return fail(err, errlen, "msgctl IPC_STAT");
		ds.msg_qbytes = (msglen_t)qbytes;
		if (msgctl(q->qid, IPC_SET, &ds))
			return fail(err, errlen, "msgctl IPC_SET msg_qbytes");
	}
	return 0;
}

/* One function per descriptor or queue transport, each a few lines. */
static int open_pipe(struct ref_chan *ch, const struct cell *c, char *err, size_t errlen)
{
	int a[2] = { -1, -1 }, b[2] = { -1, -1 }, ret = 0;
	int sz = (int)ref_tp_opt(c, "pipe-size");

	ch->bytes = true;
	if (pipe2(a, O_CLOEXEC) || pipe2(b, O_CLOEXEC))
		ret = fail(err, errlen, "pipe2");
	else if (sz && (fcntl(a[1], F_SETPIPE_SZ, sz) < 0 || fcntl(b[1], F_SETPIPE_SZ, sz) < 0))
		ret = fail(err, errlen, "F_SETPIPE_SZ");
	two_way(ch, a, b);
	return ret;
}

static int open_fifos(struct ref_chan *ch, const struct cell *c, char *err, size_t errlen)
{
	int a[2] = { -1, -1 }, b[2] = { -1, -1 }, ret;

	(void)c;
	ch->bytes = true;
	ret = open_fifo(ch, 0, a, err, errlen);
	if (!ret)
		ret = open_fifo(ch, 1, b, err, errlen);
	two_way(ch, a, b);
	return ret;
}

/* A connected pair (an AF_UNIX socketpair of type, or tcp on the
 * loopback), one end a side, -O sndbuf/rcvbuf applied. */
static int open_pair(struct ref_chan *ch, const struct cell *c, int type, bool tcp, char *err,
		     size_t errlen)
{
	int a[2] = { -1, -1 }, ret = 0;

	ch->bytes = type == SOCK_STREAM;
	if (tcp)
		ret = open_tcp(a, (int)ref_tp_opt(c, "nodelay"), err, errlen);
	else if (socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, a))
		ret = fail(err, errlen, "socketpair");
	if (!ret)
		ret = sock_bufs(c, a, err, errlen);
	ch->fd[REF_SERVER][0] = ch->fd[REF_SERVER][1] = a[0];
	ch->fd[REF_CLIENT][0] = ch->fd[REF_CLIENT][1] = a[1];
	return ret;
}

static int open_ustream(struct ref_chan *ch, const struct cell *c, char *err, size_t errlen)
{
	return open_pair(ch, c, SOCK_STREAM, false, err, errlen);
}

static int open_udgram(struct ref_chan *ch, const struct cell *c, char *err, size_t errlen)
{
	return open_pair(ch, c, SOCK_DGRAM, false, err, errlen);
}

static int open_useqp(struct ref_chan *ch, const struct cell *c, char *err, size_t errlen)
{
	return open_pair(ch, c, SOCK_SEQPACKET, false, err, errlen);
}

static int open_tcp_pair(struct ref_chan *ch, const struct cell *c, char *err, size_t errlen)
{
	return open_pair(ch, c, SOCK_STREAM, true, err, errlen);
}

static int open_udp_pair(struct ref_chan *ch, const struct cell *c, char *err, size_t errlen)
{
	int a[2] = { -1, -1 }, ret;

	ch->lossy = true;
	ret = open_udp(a, err, errlen);
	if (!ret)
		ret = sock_bufs(c, a, err, errlen);
	ch->fd[REF_SERVER][0] = ch->fd[REF_SERVER][1] = a[0];
	ch->fd[REF_CLIENT][0] = ch->fd[REF_CLIENT][1] = a[1];
	return ret;
}

static int open_mqs(struct ref_chan *ch, const struct cell *c, char *err, size_t errlen)
{
	ch->kind = REF_MQ;
	return open_mq(ch, c, err, errlen);
}

const struct tp_reference ref_pipe = { .open = open_pipe, .mirrored = m_pipe };
const struct tp_reference ref_fifo = { .open = open_fifos, .mirrored = m_none };
const struct tp_reference ref_unix_stream = { .open = open_ustream, .mirrored = m_sock };
const struct tp_reference ref_unix_dgram = { .open = open_udgram, .mirrored = m_sock };
const struct tp_reference ref_unix_seqpacket = { .open = open_useqp, .mirrored = m_sock };
const struct tp_reference ref_tcp = { .open = open_tcp_pair, .mirrored = m_tcp };
const struct tp_reference ref_udp = { .open = open_udp_pair, .mirrored = m_sock };
const struct tp_reference ref_posix_mq = { .open = open_mqs, .mirrored = m_mq };
const struct tp_reference ref_sysv_mq = { .open = open_sysv, .mirrored = m_sysv };

int ref_chan_open(struct ref_chan *ch, const struct cell *c, char *err, size_t errlen)
{
	const struct tp_reference *ref = c->tp->reference;
	int ret;

	memset(ch, 0, sizeof(*ch));
	for (int i = 0; i < 2; i++) {
		ch->fd[i][0] = ch->fd[i][1] = -1;
		ch->mq[i] = (mqd_t)-1;
		ch->handle[i] = -1;
	}
	ch->kind = REF_FD;
	if (!ref)
		return -ENOTSUP;
	ret = ref->open(ch, c, err, errlen);
	if (ret)
		ref_chan_destroy(ch);
	return ret;
}

void ref_chan_close(struct ref_chan *ch, int role)
{
	for (int r = 0; r < 2; r++) {
		if (role >= 0 && r != role)
			continue;
		for (int k = 0; k < 2; k++) {
			int fd = ch->fd[r][k];

			if (fd < 0)
				continue;
			close(fd);
			/* a socket is both ends of its side */
			for (int j = 0; j < 2; j++)
				if (ch->fd[r][j] == fd)
					ch->fd[r][j] = -1;
		}
	}
}

void ref_chan_destroy(struct ref_chan *ch)
{
	ref_chan_close(ch, -1);
	if (ch->kind == REF_OPS && ch->ops && ch->ops->destroy)
		ch->ops->destroy(ch);
	ch->ops = NULL;
	for (int k = 0; k < 2; k++) {
		if (ch->mq[k] != (mqd_t)-1)
			mq_close(ch->mq[k]);
		ch->mq[k] = (mqd_t)-1;
		if (ch->handle[k] >= 0)
			cleanup_run_one(ch->handle[k]);
		ch->handle[k] = -1;
	}
}
