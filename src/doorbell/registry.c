// SPDX-License-Identifier: MIT
/* The list of doorbells and the helpers the fd-backed doorbells share. */
#include <poll.h>
#include <string.h>

#include "ipclab/doorbell.h"

const struct doorbell *const doorbells[] = {
	&db_futex,
	&db_eventfd,
	&db_pipe,
	&db_sem,
	&db_cond,
	&db_sysv_sem,
	&db_signal,
	&db_spin,
};

const size_t n_doorbells = ARRAY_SIZE(doorbells);

const struct doorbell *doorbell_find(const char *name)
{
	for (size_t i = 0; i < n_doorbells; i++)
		if (!strcmp(doorbells[i]->name, name))
			return doorbells[i];
	return NULL;
}

int db_poll_in(int fd, uint64_t deadline, const _Atomic int *stop)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct timespec ts;

	if (stop_requested(stop))
		return -EINTR;
	if (db_time_left(deadline, &ts))
		return -ETIMEDOUT;
	if (ppoll(&pfd, 1, &ts, NULL) < 0)
		return -errno;
	return 0;		/* readable, or time to look at the clock again */
}
