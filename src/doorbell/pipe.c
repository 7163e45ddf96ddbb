// SPDX-License-Identifier: MIT
/* pipe doorbell: one byte per ring (the JACK fifo style). wait() reads what
 * is there, up to a small batch, and keeps the extra bytes as credit, so it
 * still counts rings one by one. Both ends are non-blocking so that a wait
 * can time out and a ring never blocks; the ends stay open in every process
 * (the parent holds them all until destroy, so closing unused ends in a
 * child would not turn a dead peer into EOF anyway). */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "ipclab/doorbell.h"

struct pipe_db {
	int rfd, wfd;
	uint32_t credit;	/* bytes read but not yet consumed; waiter only */
};

static int pipe_create(void *shm, char *err, size_t errlen)
{
	struct pipe_db *p = shm;
	int fds[2];

	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0)
		return errf(err, errlen, errno, "pipe2: %s", strerror(errno));
	p->rfd = fds[0];
	p->wfd = fds[1];
	return 0;
}

static int pipe_wait(void *shm, uint64_t timeout_ns, const _Atomic int *stop)
{
	struct pipe_db *p = shm;
	uint64_t deadline = 0;
	char tok[64];
	ssize_t n;
	int r;

	if (p->credit) {
		p->credit--;
		return 0;
	}
	for (;;) {
		n = read(p->rfd, tok, sizeof(tok));
		if (n > 0) {
			p->credit = (uint32_t)n - 1;
			return 0;
		}
		if (n == 0)
			return -EPIPE;	/* every write end closed */
		if (errno != EAGAIN)
			return -errno;
		if (!deadline)
			deadline = db_deadline(timeout_ns);
		r = db_poll_in(p->rfd, deadline, stop);
		if (r)
			return r;
	}
}

static int pipe_ring(void *shm)
{
	struct pipe_db *p = shm;
	char tok = 1;

	/* EAGAIN means 64 KiB of unconsumed rings: a caller bug, reported. */
	if (write(p->wfd, &tok, 1) != 1)
		return -errno;
	return 0;
}

static void pipe_destroy(void *shm)
{
	struct pipe_db *p = shm;

	close(p->rfd);
	close(p->wfd);
	p->rfd = p->wfd = -1;
}

const struct doorbell db_pipe = {
	.name = "pipe",
	.summary = "pipe with a one-byte token per ring (JACK's fifo style)",
	.flags = DB_FD,
	.shm_size = sizeof(struct pipe_db),
	.create = pipe_create,
	.wait = pipe_wait,
	.ring = pipe_ring,
	.destroy = pipe_destroy,
};
