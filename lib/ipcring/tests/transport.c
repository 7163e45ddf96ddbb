// SPDX-License-Identifier: MIT
/*
 * transport.c - ipclab's ring transports (src/transport/ring.c) on the
 * failure paths of create(): when the shared page of pids cannot be mapped,
 * destroy() must close nothing, in particular none of the caller's fds
 * (finding 8 of the review: the fd table was still uninitialised there).
 * mmap() is interposed here to make that one mapping fail.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ipclab/transport.h"
#include "tutil.h"

extern const struct transport tp_ring;

static bool fail_anon_shared;

/* The program's mmap: fails anonymous shared mappings when asked. */
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (fail_anon_shared && (flags & MAP_ANONYMOUS) && (flags & MAP_SHARED)) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

static void test_pids_map_fails(void)
{
	struct tp_config cfg = { .msg_size = 64, .clients = 2 };
	struct tp_channel ch = { .tp = &tp_ring, .cfg = &cfg };
	int sentinel = open("/dev/null", O_RDONLY | O_CLOEXEC), ret;
	size_t nfd = 2 * 4;		/* clients x the fds of one client */
	char err[256];
	int *seed;

	T_ASSERT(sentinel >= 0);
	/* a freed block of the fd table's size, full of a live fd number: the
	 * allocator is likely to hand it to create() for its fd table */
	seed = malloc(nfd * sizeof(*seed));
	T_ASSERT(seed);
	for (size_t i = 0; i < nfd; i++)
		seed[i] = sentinel;
	free(seed);
	fail_anon_shared = true;
	ret = tp_ring.create(&ch, err, sizeof(err));
	fail_anon_shared = false;
	T_EQ(ret, -ENOMEM);
	tp_ring.destroy(&ch);
	if (fcntl(sentinel, F_GETFD) < 0)
		T_FAIL("destroy() after a failed create() closed fd %d, which the "
		       "transport never opened", sentinel);
	close(sentinel);
}

int main(void)
{
	test_pids_map_fails();
	return 0;
}
