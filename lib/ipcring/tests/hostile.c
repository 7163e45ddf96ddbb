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
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
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

/*
 * Run @fn(@arg) in a child killed after @secs: a call that never returns
 * fails the test instead of hanging it. The child exits with fn's status.
 */
static int bounded(int (*fn)(void *), void *arg, unsigned secs)
{
	pid_t pid = fork();
	int st;

	T_ASSERT(pid >= 0);
	if (!pid) {
		alarm(secs);
		_exit(fn(arg));
	}
	T_EQ(waitpid(pid, &st, 0), pid);
	if (WIFSIGNALED(st)) {
		fprintf(stderr, "the child was killed by signal %d (a call did not "
			"return within %u s)\n", WTERMSIG(st), secs);
		return -1;
	}
	return WEXITSTATUS(st);
}

struct efd_case {
	const char *what;
	int memfd;
	int efd;
	int role;
};

/* In the child: a fake eventfd must be refused; if not, one short wait. */
static int efd_refused(void *arg)
{
	const struct efd_case *k = arg;
	int fl = fcntl(k->efd, F_GETFL), ret;
	struct ipcring *r;
	const void *m;
	size_t n;
	void *w;

	ret = ipcring_attach(&r, k->memfd, k->role, k->efd);
	if (fcntl(k->efd, F_GETFL) != fl) {
		fprintf(stderr, "%s: attach changed the caller's file status flags\n",
			k->what);
		return 3;
	}
	if (ret == -EINVAL)
		return 0;
	fprintf(stderr, "%s: attach gave %d, not -EINVAL\n", k->what, ret);
	if (!ret && k->role == IPCRING_CONSUMER) {
		ret = ipcring_peek(r, &m, &n, 50);	/* must come back */
	} else if (!ret) {
		while (!(ret = ipcring_reserve(r, 64, &w, 0)))
			ipcring_commit(r, 64, 0);
	}
	return 2;
}

/* Finding 7: what is passed as the eventfd is checked, never trusted. */
static void test_fake_eventfds(void)
{
	struct ipcring_opts o = { .capacity = 8192, .wait_mode = IPCRING_WAIT_EVENTFD,
				  .spin_ns = IPCRING_NO_SPIN };
	int memfd, efd, pfd[2], fakes[5];
	const char *names[5] = { "/dev/zero", "pipe", "epoll fd",
				 "semaphore eventfd with a huge count",
				 "blocking eventfd" };
	uint64_t huge = (uint64_t)1 << 40;
	int bad = 0;

	fakes[0] = open("/dev/zero", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	T_EQ(pipe2(pfd, O_NONBLOCK | O_CLOEXEC), 0);
	fakes[1] = pfd[0];
	fakes[2] = epoll_create1(EPOLL_CLOEXEC);
	fakes[3] = eventfd(0, EFD_SEMAPHORE | EFD_NONBLOCK | EFD_CLOEXEC);
	T_EQ(write(fakes[3], &huge, sizeof(huge)), sizeof(huge));
	fakes[4] = eventfd(0, EFD_CLOEXEC);
	for (int i = 0; i < 5; i++) {
		T_ASSERT(fakes[i] >= 0);
		for (int role = IPCRING_PRODUCER; role <= IPCRING_CONSUMER; role++) {
			struct efd_case k = { names[i], -1, fakes[i], role };
			int ret;

			T_EQ(ipcring_create(&o, &memfd, &efd), 0);	/* a fresh ring */
			k.memfd = memfd;
			ret = bounded(efd_refused, &k, 3);
			close(memfd);
			close(efd);

			if (ret) {
				fprintf(stderr, "%s (%s) was not refused: %s\n", names[i],
					role == IPCRING_PRODUCER ? "producer" : "consumer",
					ret < 0 ? "a call did not return" : "attached");
				bad++;
			}
		}
		close(fakes[i]);
	}
	close(pfd[1]);
	if (bad)
		T_FAIL("%d fake eventfds accepted", bad);
}

static _Atomic bool kicking;

static void *kicker(void *arg)
{
	uint64_t v = (uint64_t)1 << 40;

	while (atomic_load(&kicking))
		if (write(*(int *)arg, &v, sizeof(v)) < 0)
			sched_yield();
	return NULL;
}

/* The genuine eventfd, written by a hostile peer before and during a wait. */
static int busy_efd_wait(void *arg)
{
	struct ipcring_opts o = { .capacity = 8192, .wait_mode = IPCRING_WAIT_EVENTFD,
				  .spin_ns = 1000 };
	uint64_t huge = ((uint64_t)1 << 62), t0;
	struct ipcring *c;
	pthread_t th;
	const void *m;
	size_t n;
	int memfd, efd, ret;

	(void)arg;
	T_EQ(ipcring_create(&o, &memfd, &efd), 0);
	T_EQ(write(efd, &huge, sizeof(huge)), sizeof(huge));
	T_EQ(ipcring_attach(&c, memfd, IPCRING_CONSUMER, efd), 0);
	t0 = t_now_ns();
	T_EQ(ipcring_peek(c, &m, &n, 50), -ETIMEDOUT);
	atomic_store(&kicking, true);
	T_EQ(pthread_create(&th, NULL, kicker, &efd), 0);
	T_EQ(ipcring_peek(c, &m, &n, 50), -ETIMEDOUT);
	atomic_store(&kicking, false);
	pthread_join(th, NULL);
	ret = t_now_ns() - t0 < 1000000000ull ? 0 : 4;
	ipcring_close(c);
	close(memfd);
	close(efd);
	return ret;
}

static void test_busy_eventfd(void)
{
	if (bounded(busy_efd_wait, NULL, 5))
		T_FAIL("a wait on a busy eventfd was not bounded by its timeout");
}

struct flipper {
	struct ring_shm *shm;
	_Atomic bool stop;
};

static void spin_ns(uint64_t ns)
{
	uint64_t end = t_now_ns() + ns;

	while (t_now_ns() < end)
		;
}

/*
 * The peer: tail good for a random 0-60 us (an attach validates it), then
 * unaligned for 2 us (the attach claims the role and reads it again).
 */
static void *flip_tail(void *arg)
{
	struct flipper *f = arg;
	uint64_t seed = 0x9e3779b97f4a7c15ull;

	while (!atomic_load_explicit(&f->stop, memory_order_relaxed)) {
		atomic_store(&f->shm->tail, 64);
		spin_ns(t_rand(&seed) % 60000);
		atomic_store(&f->shm->tail, 4);
		spin_ns(2000);
	}
	atomic_store(&f->shm->tail, 0);
	return NULL;
}

/*
 * Finding 8, first part: an attach that fails after claiming its role
 * (the indices changed between the validation and the claim) leaves the
 * role free, not ALIVE: the peer must not wait for a side that never came.
 */
static void test_failed_attach_gives_role_back(void)
{
	struct ipcring_opts o = { .capacity = 8192 };
	struct flipper f;
	struct ipcring *p;
	pthread_t th;
	unsigned failed = 0, ok = 0;
	uint64_t end;
	int fd, ret;

	T_EQ(ipcring_create(&o, &fd, NULL), 0);
	f.shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	T_ASSERT(f.shm != MAP_FAILED);
	atomic_store(&f.stop, false);
	T_EQ(pthread_create(&th, NULL, flip_tail, &f), 0);
	end = t_now_ns() + 1500000000ull;
	while (t_now_ns() < end && failed < 3000) {
		ret = ipcring_attach(&p, fd, IPCRING_PRODUCER, -1);
		if (!ret) {
			ok++;
			ipcring_close(p);
			/* the peer resets the role, so that it can be taken again */
			atomic_store(&f.shm->ctl.prod_pid, 0);
			atomic_store(&f.shm->ctl.prod_state, ST_INIT);
			continue;
		}
		T_EQ(ret, -EBADMSG);
		failed++;
		if (atomic_load(&f.shm->ctl.prod_state) != ST_INIT)
			T_FAIL("attach failed (%d) after %u good and %u failed ones, "
			       "and left the producer's state %u, not INIT", ret, ok,
			       failed, atomic_load(&f.shm->ctl.prod_state));
		T_EQ(atomic_load(&f.shm->ctl.prod_pid), 0);
	}
	atomic_store(&f.stop, true);
	pthread_join(th, NULL);
	/* quiet again: the role is free and the ring works */
	atomic_store(&f.shm->ctl.prod_state, ST_INIT);
	T_EQ(ipcring_attach(&p, fd, IPCRING_PRODUCER, -1), 0);
	ipcring_close(p);
	munmap(f.shm, 4096);
	close(fd);
	printf("failed-attach: %u attaches failed, %u succeeded\n", failed, ok);
}

/* In the child: one side alone, its peer never attaches. */
static int alone(void *arg)
{
	struct ipcring_opts o = { .capacity = 8192, .spin_ns = 1000 };
	int role = *(int *)arg, fd, ret;
	struct ipcring *r, *late;
	uint64_t t0, ms;
	const void *m;
	size_t n;
	void *w;

	T_EQ(ipcring_create(&o, &fd, NULL), 0);
	t0 = t_now_ns();
	T_EQ(ipcring_attach(&r, fd, role, -1), 0);
	T_EQ(ipcring_set_poll_ms(r, 10), 0);		/* deadline: 100 x 10 ms */
	if (role == IPCRING_CONSUMER) {
		ret = ipcring_peek(r, &m, &n, -1);
	} else {
		while (!(ret = ipcring_reserve(r, 512, &w, 0)))
			T_EQ(ipcring_commit(r, 512, 0), 0);
		T_EQ(ret, -EAGAIN);
		ret = ipcring_reserve(r, 512, &w, -1);
	}
	ms = (t_now_ns() - t0) / 1000000u;
	if (ret != -EPIPE || ms < 900 || ms > 3000) {
		fprintf(stderr, "alone: wait gave %d after %llu ms, expected -EPIPE "
			"after about 1000 ms\n", ret, (unsigned long long)ms);
		return 1;
	}
	/* the peer is marked dead: a late attach is refused */
	T_EQ(ipcring_attach(&late, fd, role == IPCRING_CONSUMER ?
			    IPCRING_PRODUCER : IPCRING_CONSUMER, -1), -EBUSY);
	ipcring_close(r);
	close(fd);
	return 0;
}

/* With a peer fd there is no attach deadline. */
static int alone_watched(void *arg)
{
	struct ipcring_opts o = { .capacity = 8192, .spin_ns = 1000 };
	struct ipcring *r;
	const void *m;
	size_t n;
	int fd, sv[2];

	(void)arg;
	T_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	T_EQ(ipcring_create(&o, &fd, NULL), 0);
	T_EQ(ipcring_attach(&r, fd, IPCRING_CONSUMER, -1), 0);
	T_EQ(ipcring_set_poll_ms(r, 5), 0);
	T_EQ(ipcring_set_peer(r, sv[0], IPCRING_PEER_SOCKET), 0);
	T_EQ(ipcring_peek(r, &m, &n, 1200), -ETIMEDOUT);
	ipcring_close(r);
	close(fd);
	close(sv[0]);
	close(sv[1]);
	return 0;
}

/*
 * Finding 8, second part: a peer that dies before it attaches (here: never
 * attaches), with no peer fd given, is detected by the attach deadline.
 */
static void test_peer_never_attaches(void)
{
	for (int role = IPCRING_PRODUCER; role <= IPCRING_CONSUMER; role++)
		if (bounded(alone, &role, 5))
			T_FAIL("a %s whose peer never attached was not told",
			       role == IPCRING_PRODUCER ? "producer" : "consumer");
	if (bounded(alone_watched, NULL, 5))
		T_FAIL("a side with a peer fd was held to the attach deadline");
}

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
	{ "remap", test_header_rewritten_between_attaches },
	{ "fake-eventfd", test_fake_eventfds },
	{ "busy-eventfd", test_busy_eventfd },
	{ "failed-attach", test_failed_attach_gives_role_back },
	{ "never-attached", test_peer_never_attaches },
};

/* With arguments, run only the tests named. */
int main(int argc, char **argv)
{
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		bool run = argc < 2;

		for (int a = 1; a < argc; a++)
			run |= !strcmp(argv[a], tests[i].name);
		if (run)
			tests[i].fn();
	}
	return 0;
}
