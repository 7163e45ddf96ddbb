// SPDX-License-Identifier: MIT
/*
 * attach.c - ipcring_attach() must refuse a bad segment: every header field
 * corrupted in turn, unsealed or foreign fds, sizes that disagree with the
 * header. A refused attach must leave the segment usable.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "tutil.h"

struct corruption {
	const char *what;
	size_t off;
	uint32_t val;
	int err;
};

#define CFG(f)	offsetof(struct ring_shm, cfg.f)
#define CTL(f)	offsetof(struct ring_shm, ctl.f)

static const struct corruption corruptions[] = {
	{ "magic",		CFG(magic),		0x12345678, -EBADMSG },
	{ "magic hi",		CFG(magic) + 4,		0,	    -EBADMSG },
	{ "version",		CFG(version),		2,	    -EBADMSG },
	{ "hdr_size 0",		CFG(hdr_size),		0,	    -EBADMSG },
	{ "hdr_size odd",	CFG(hdr_size),		4095,	    -EBADMSG },
	{ "hdr_size big",	CFG(hdr_size),		8192,	    -EBADMSG },
	{ "capacity pow2",	CFG(capacity),		12288,	    -EBADMSG },
	{ "capacity size",	CFG(capacity),		16384,	    -EBADMSG },
	{ "capacity 0",		CFG(capacity),		0,	    -EBADMSG },
	{ "capacity huge",	CFG(capacity),		0x80000000u, -EBADMSG },
	{ "mask",		CFG(mask),		8192,	    -EBADMSG },
	{ "max_record",		CFG(max_record),	8192 / 4 + 1, -EBADMSG },
	{ "align 16",		CFG(align),		16,	    -EBADMSG },
	{ "align 0",		CFG(align),		0,	    -EBADMSG },
	{ "flags",		CFG(flags),		0x80,	    -EBADMSG },
	{ "wait_mode",		CFG(wait_mode),		3,	    -EBADMSG },
	{ "spin_ns",		CFG(spin_ns),		2000000000u, -EBADMSG },
	{ "release 0",		CFG(release_threshold),	0,	    -EBADMSG },
	{ "release big",	CFG(release_threshold),	8192 / 2 + 8, -EBADMSG },
	{ "tail unaligned",	offsetof(struct ring_shm, tail), 4, -EBADMSG },
	{ "head unaligned",	offsetof(struct ring_shm, head), 12, -EBADMSG },
	{ "tail too far",	offsetof(struct ring_shm, tail), 8192 + 8, -EBADMSG },
	{ "head ahead",		offsetof(struct ring_shm, head), 64, -EBADMSG },
	{ "prod_state",		CTL(prod_state),	7,	    -EBADMSG },
	{ "cons_state",		CTL(cons_state),	4,	    -EBADMSG },
};

static int make_ring(void)
{
	struct ipcring_opts o = { .capacity = 8192 };
	int fd, ret;

	ret = ipcring_create(&o, &fd, NULL);
	if (ret)
		T_FAIL("create: %s", strerror(-ret));
	return fd;
}

static void poke(int fd, size_t off, uint32_t v)
{
	if (pwrite(fd, &v, sizeof(v), (off_t)off) != (ssize_t)sizeof(v))
		T_FAIL("pwrite: %s", strerror(errno));
}

static void test_fields(void)
{
	for (size_t i = 0; i < sizeof(corruptions) / sizeof(corruptions[0]); i++) {
		const struct corruption *c = &corruptions[i];
		struct ipcring *r = NULL;
		uint32_t old;
		int fd = make_ring(), ret;

		T_EQ(pread(fd, &old, sizeof(old), (off_t)c->off), sizeof(old));
		poke(fd, c->off, c->val);
		for (int role = IPCRING_PRODUCER; role <= IPCRING_CONSUMER; role++) {
			ret = ipcring_attach(&r, fd, role, -1);
			if (ret != c->err)
				T_FAIL("%s: attach gave %d, expected %d", c->what,
				       ret, c->err);
			T_ASSERT(r == NULL);
		}
		poke(fd, c->off, old);		/* repaired: now it attaches */
		T_EQ(ipcring_attach(&r, fd, IPCRING_CONSUMER, -1), 0);
		ipcring_close(r);
		close(fd);
	}
}

/* A copy of a good header in an fd of another size or without seals. */
static int clone_ring(int src, off_t size, unsigned int seals)
{
	char hdr[4096];
	int fd = memfd_create("clone", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	T_ASSERT(fd >= 0);
	T_EQ(pread(src, hdr, sizeof(hdr), 0), sizeof(hdr));
	T_EQ(ftruncate(fd, size), 0);
	T_EQ(pwrite(fd, hdr, size < 4096 ? size : 4096, 0), size < 4096 ? size : 4096);
	if (seals)
		T_EQ(fcntl(fd, F_ADD_SEALS, seals), 0);
	return fd;
}

static void test_fds(void)
{
	const unsigned int sealed = F_SEAL_SHRINK | F_SEAL_GROW;
	struct ipcring *r = NULL;
	int src = make_ring(), fd, pfd[2];

	fd = clone_ring(src, 4096 + 8192, sealed);
	T_EQ(ipcring_attach(&r, fd, IPCRING_CONSUMER, -1), 0);	/* a good clone */
	ipcring_close(r);
	close(fd);
	fd = clone_ring(src, 4096 + 8192, 0);
	T_EQ(ipcring_attach(&r, fd, IPCRING_CONSUMER, -1), -EINVAL);
	close(fd);
	fd = clone_ring(src, 4096 + 8192, F_SEAL_GROW);
	T_EQ(ipcring_attach(&r, fd, IPCRING_CONSUMER, -1), -EINVAL);
	close(fd);
	fd = clone_ring(src, 4096 + 16384, sealed);
	T_EQ(ipcring_attach(&r, fd, IPCRING_CONSUMER, -1), -EBADMSG);
	close(fd);
	fd = clone_ring(src, 2048, sealed);
	T_EQ(ipcring_attach(&r, fd, IPCRING_CONSUMER, -1), -EBADMSG);
	close(fd);
	T_EQ(pipe(pfd), 0);
	T_EQ(ipcring_attach(&r, pfd[0], IPCRING_CONSUMER, -1), -EINVAL);
	close(pfd[0]);
	close(pfd[1]);
	T_EQ(ipcring_attach(&r, -1, IPCRING_CONSUMER, -1), -EBADF);
	close(src);
}

static void test_eventfd_needed(void)
{
	struct ipcring_opts o = { .capacity = 8192,
				  .wait_mode = IPCRING_WAIT_EVENTFD };
	struct ipcring *r = NULL;
	int fd, efd;

	T_EQ(ipcring_create(&o, &fd, &efd), 0);
	T_ASSERT(efd >= 0);
	T_EQ(ipcring_attach(&r, fd, IPCRING_CONSUMER, -1), -EINVAL);
	T_EQ(ipcring_attach(&r, fd, IPCRING_CONSUMER, efd), 0);
	T_EQ(ipcring_fd(r), ipcring_fd(r));
	T_ASSERT(ipcring_fd(r) >= 0 && ipcring_fd(r) != efd);
	ipcring_close(r);
	close(fd);
	close(efd);
}

int main(void)
{
	test_fields();
	test_fds();
	test_eventfd_needed();
	return 0;
}
