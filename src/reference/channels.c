// SPDX-License-Identifier: MIT
/* The references' channels, one per transport: made here with the plain
 * calls (pipe2, mkfifo, socketpair, a loopback TCP connection, mq_open), no
 * ipclab transport code. Named objects are registered before they exist. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipclab/cleanup.h"
#include "ref_int.h"

static const char *const known[] = {
	"pipe", "fifo", "unix-stream", "unix-dgram", "unix-seqpacket", "tcp", "posix-mq",
};

bool ref_chan_known(const char *tp)
{
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(tp, known[i]))
			return true;
	return false;
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

static int open_tcp(int sv[2], char *err, size_t errlen)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

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

static int open_mq(struct ref_chan *ch, size_t size, char *err, size_t errlen)
{
	struct mq_attr at = { .mq_maxmsg = 10, .mq_msgsize = (long)size };

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

int ref_chan_open(struct ref_chan *ch, const char *tp, size_t size, char *err, size_t errlen)
{
	int a[2] = { -1, -1 }, b[2] = { -1, -1 }, ret = 0;

	memset(ch, 0, sizeof(*ch));
	for (int i = 0; i < 2; i++) {
		ch->fd[i][0] = ch->fd[i][1] = -1;
		ch->mq[i] = (mqd_t)-1;
		ch->handle[i] = -1;
	}
	ch->kind = REF_FD;
	if (!strcmp(tp, "pipe")) {
		ch->bytes = true;
		if (pipe2(a, O_CLOEXEC) || pipe2(b, O_CLOEXEC))
			ret = fail(err, errlen, "pipe2");
		two_way(ch, a, b);
	} else if (!strcmp(tp, "fifo")) {
		ch->bytes = true;
		ret = open_fifo(ch, 0, a, err, errlen);
		if (!ret)
			ret = open_fifo(ch, 1, b, err, errlen);
		two_way(ch, a, b);
	} else if (!strcmp(tp, "unix-stream") || !strcmp(tp, "unix-dgram") ||
		   !strcmp(tp, "unix-seqpacket") || !strcmp(tp, "tcp")) {
		int type = !strcmp(tp, "unix-dgram")	 ? SOCK_DGRAM :
			   !strcmp(tp, "unix-seqpacket") ? SOCK_SEQPACKET :
							   SOCK_STREAM;

		ch->bytes = type == SOCK_STREAM;
		if (!strcmp(tp, "tcp"))
			ret = open_tcp(a, err, errlen);
		else if (socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, a))
			ret = fail(err, errlen, "socketpair");
		ch->fd[REF_SERVER][0] = ch->fd[REF_SERVER][1] = a[0];
		ch->fd[REF_CLIENT][0] = ch->fd[REF_CLIENT][1] = a[1];
	} else if (!strcmp(tp, "posix-mq")) {
		ch->kind = REF_MQ;
		ret = open_mq(ch, size, err, errlen);
	} else {
		return -ENOTSUP;
	}
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
	for (int k = 0; k < 2; k++) {
		if (ch->mq[k] != (mqd_t)-1)
			mq_close(ch->mq[k]);
		ch->mq[k] = (mqd_t)-1;
		if (ch->handle[k] >= 0)
			cleanup_run_one(ch->handle[k]);
		ch->handle[k] = -1;
	}
}
