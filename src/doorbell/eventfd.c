// SPDX-License-Identifier: MIT
/* eventfd doorbell, counter mode: ring() adds 1 with write(2); wait() reads
 * the whole count with read(2) and keeps what it got beyond one as credit
 * for the next waits, so it still counts rings one by one while a burst
 * costs one read. The fd is non-blocking so that a wait can time out (it
 * polls only when nothing is pending). */
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "ipclab/doorbell.h"

struct eventfd_db {
	int fd;
	uint64_t credit;	/* rings read but not yet consumed; waiter only */
};

static int eventfd_create(void *shm, char *err, size_t errlen)
{
	struct eventfd_db *e = shm;

	e->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (e->fd < 0)
		return errf(err, errlen, errno, "eventfd: %s", strerror(errno));
	return 0;
}

static int eventfd_wait(void *shm, uint64_t timeout_ns, const _Atomic int *stop)
{
	struct eventfd_db *e = shm;
	uint64_t deadline = 0;
	uint64_t v;
	int r;

	if (e->credit) {
		e->credit--;
		return 0;
	}
	for (;;) {
		if (read(e->fd, &v, sizeof(v)) == (ssize_t)sizeof(v)) {
			e->credit = v - 1;
			return 0;
		}
		if (errno != EAGAIN)
			return -errno;
		if (!deadline)
			deadline = db_deadline(timeout_ns);
		r = db_poll_in(e->fd, deadline, stop);
		if (r)
			return r;
	}
}

static int eventfd_ring(void *shm)
{
	struct eventfd_db *e = shm;
	uint64_t one = 1;

	if (write(e->fd, &one, sizeof(one)) != (ssize_t)sizeof(one))
		return -errno;
	return 0;
}

static void eventfd_destroy(void *shm)
{
	struct eventfd_db *e = shm;

	close(e->fd);
	e->fd = -1;
}

const struct doorbell db_eventfd = {
	.name = "eventfd",
	.summary = "eventfd in counter mode: write(1) / read (burst kept as credit)",
	.flags = DB_FD,
	.shm_size = sizeof(struct eventfd_db),
	.create = eventfd_create,
	.wait = eventfd_wait,
	.ring = eventfd_ring,
	.destroy = eventfd_destroy,
};
