// SPDX-License-Identifier: MIT
/*
 * death.c - peer death and graceful close across processes. A producer
 * SIGKILLed mid-stream (or mid-record): the consumer gets every committed
 * record, then -EPIPE within 1 s. A consumer that dies while the producer
 * is blocked on a full ring: the producer gets -EPIPE within 1 s. Checked
 * with the automatic pidfd, an explicit pidfd, a socket, in futex, eventfd
 * and spin-only modes; plus exit without close, close then exit (EOF, not
 * EPIPE), and ipcring_mark_peer_dead() from another thread.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tutil.h"

#define LIMIT_NS	1000000000ull

enum watch { W_AUTO, W_PIDFD, W_SOCKET };

struct fixture {
	int memfd;
	int efd;
	int sv[2];		/* socketpair: [0] parent, [1] child */
	int pipefd[2];		/* child -> parent: "ready" and its death time */
	pid_t pid;
};

static void fx_open(struct fixture *f, uint32_t mode, uint32_t cap)
{
	struct ipcring_opts o = { .capacity = cap, .wait_mode = mode };

	f->efd = -1;
	T_EQ(ipcring_create(&o, &f->memfd, &f->efd), 0);
	T_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, f->sv), 0);
	T_EQ(pipe(f->pipefd), 0);
}

static void fx_close(struct fixture *f)
{
	int st;

	if (f->pid > 0) {
		kill(f->pid, SIGKILL);
		waitpid(f->pid, &st, 0);
	}
	close(f->memfd);
	if (f->efd >= 0)
		close(f->efd);
	close(f->sv[0]);
	close(f->pipefd[0]);
}

/* In the child: attach, drop the parent's fds, tell the parent. */
static struct ipcring *child_attach(struct fixture *f, int role)
{
	struct ipcring *r;
	char c = 'r';

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	close(f->sv[0]);
	close(f->pipefd[0]);
	if (ipcring_attach(&r, f->memfd, role, f->efd))
		_exit(3);
	if (write(f->pipefd[1], &c, 1) != 1)
		_exit(3);
	return r;
}

static void parent_wait_ready(struct fixture *f)
{
	char c;

	close(f->sv[1]);
	close(f->pipefd[1]);
	T_EQ(read(f->pipefd[0], &c, 1), 1);
}

static void watch_peer(struct fixture *f, struct ipcring *r, enum watch w)
{
	int pidfd;

	if (w == W_SOCKET) {
		T_EQ(ipcring_set_peer(r, f->sv[0], IPCRING_PEER_SOCKET), 0);
	} else if (w == W_PIDFD) {
		pidfd = (int)syscall(SYS_pidfd_open, f->pid, 0);
		if (pidfd < 0) {
			printf("skip: pidfd_open: %s\n", strerror(errno));
			exit(T_SKIP);
		}
		T_EQ(ipcring_set_peer(r, pidfd, IPCRING_PEER_PIDFD), 0);
		close(pidfd);
	}
}

/* Producer child: @n records, then one reserved but never committed. */
static void producer_child(struct fixture *f, int n)
{
	struct ipcring *r = child_attach(f, IPCRING_PRODUCER);
	uint32_t i;
	void *v;

	for (i = 0; i < (uint32_t)n; i++)
		if (ipcring_write(r, &i, sizeof(i), 0, -1))
			_exit(4);
	if (ipcring_reserve(r, 100, &v, -1))
		_exit(4);
	memset(v, 0xab, 100);
	pause();
	_exit(0);
}

static void expect_records(struct ipcring *r, int n)
{
	uint32_t v;
	size_t len;

	for (uint32_t i = 0; i < (uint32_t)n; i++) {
		T_EQ(ipcring_read(r, &v, sizeof(v), &len, 2000), 1);
		T_EQ(v, i);
	}
}

static void test_producer_killed(uint32_t mode, enum watch w)
{
	struct fixture f;
	struct ipcring *r;
	uint64_t t0, dt;
	uint32_t v;
	size_t len;

	fx_open(&f, mode, 65536);
	f.pid = fork();
	T_ASSERT(f.pid >= 0);
	if (!f.pid)
		producer_child(&f, 10);
	parent_wait_ready(&f);
	T_EQ(ipcring_attach(&r, f.memfd, IPCRING_CONSUMER, f.efd), 0);
	watch_peer(&f, r, w);
	expect_records(r, 3);
	usleep(50000);		/* let the child reach its uncommitted record */
	kill(f.pid, SIGKILL);
	t0 = t_now_ns();
	for (uint32_t i = 3; i < 10; i++) {
		T_EQ(ipcring_read(r, &v, sizeof(v), &len, -1), 1);
		T_EQ(v, i);
	}
	T_EQ(ipcring_read(r, &v, sizeof(v), &len, -1), -EPIPE);
	dt = t_now_ns() - t0;
	if (dt > LIMIT_NS)
		T_FAIL("mode %u watch %d: -EPIPE after %llu ms", mode, w,
		       (unsigned long long)(dt / 1000000));
	T_EQ(ipcring_read(r, &v, sizeof(v), &len, 0), -EPIPE);
	printf("producer killed, mode %u watch %d: -EPIPE after %llu ms\n", mode,
	       w, (unsigned long long)(dt / 1000000));
	ipcring_close(r);
	fx_close(&f);
}

/* Consumer child: read nothing, die at a time it reports to the parent. */
static void consumer_child(struct fixture *f)
{
	struct ipcring *r = child_attach(f, IPCRING_CONSUMER);
	uint64_t t;

	(void)r;
	usleep(250000 + (useconds_t)(getpid() % 97) * 1000);	/* off the slice grid */
	t = t_now_ns();
	if (write(f->pipefd[1], &t, sizeof(t)) != (ssize_t)sizeof(t))
		_exit(3);
	raise(SIGKILL);
	_exit(0);
}

static void test_consumer_killed(uint32_t mode, enum watch w)
{
	struct fixture f;
	struct ipcring *r;
	uint64_t died, dt;
	char buf[512] = { 0 };
	int ret;

	fx_open(&f, mode, 8192);
	f.pid = fork();
	T_ASSERT(f.pid >= 0);
	if (!f.pid)
		consumer_child(&f);
	parent_wait_ready(&f);
	T_EQ(ipcring_attach(&r, f.memfd, IPCRING_PRODUCER, f.efd), 0);
	watch_peer(&f, r, w);
	while ((ret = ipcring_write(r, buf, sizeof(buf), 0, -1)) == 0)
		;		/* blocks on full until the consumer dies */
	T_EQ(ret, -EPIPE);
	dt = t_now_ns();
	T_EQ(read(f.pipefd[0], &died, sizeof(died)), sizeof(died));
	dt -= died;
	if (dt > LIMIT_NS)
		T_FAIL("mode %u watch %d: -EPIPE %llu ms after death", mode, w,
		       (unsigned long long)(dt / 1000000));
	printf("consumer killed, mode %u watch %d: -EPIPE %llu ms after death\n",
	       mode, w, (unsigned long long)(dt / 1000000));
	ipcring_close(r);
	fx_close(&f);
}

/* Exit without close is a death; close then exit is end of stream. */
static void test_exit(bool graceful)
{
	struct fixture f;
	struct ipcring *r;
	uint32_t v;
	size_t len;

	fx_open(&f, IPCRING_WAIT_FUTEX, 8192);
	f.pid = fork();
	T_ASSERT(f.pid >= 0);
	if (!f.pid) {
		r = child_attach(&f, IPCRING_PRODUCER);
		for (v = 0; v < 5; v++)
			if (ipcring_write(r, &v, sizeof(v), 0, -1))
				_exit(4);
		if (graceful)
			ipcring_close(r);
		_exit(0);
	}
	parent_wait_ready(&f);
	T_EQ(ipcring_attach(&r, f.memfd, IPCRING_CONSUMER, f.efd), 0);
	waitpid(f.pid, NULL, 0);	/* reaped: only the pid is left */
	f.pid = 0;
	expect_records(r, 5);
	T_EQ(ipcring_read(r, &v, sizeof(v), &len, 5000), graceful ? 0 : -EPIPE);
	ipcring_close(r);
	fx_close(&f);
}

static void *blocked_reader(void *arg)
{
	const void *m;
	size_t len;

	return (void *)(intptr_t)ipcring_peek(arg, &m, &len, -1);
}

static void test_mark_dead(void)
{
	struct t_pair p;
	pthread_t t;
	void *ret;

	t_pair_open(&p, NULL);
	T_EQ(pthread_create(&t, NULL, blocked_reader, p.cons), 0);
	usleep(100000);
	T_EQ(ipcring_mark_peer_dead(p.cons), 0);
	pthread_join(t, &ret);
	T_EQ((intptr_t)ret, -EPIPE);
	t_pair_close(&p);
}

int main(void)
{
	static const uint32_t modes[] = { IPCRING_WAIT_FUTEX, IPCRING_WAIT_EVENTFD,
					  IPCRING_WAIT_SPIN_ONLY };

	signal(SIGPIPE, SIG_IGN);
	for (unsigned int m = 0; m < 3; m++)
		test_producer_killed(modes[m], W_AUTO);
	test_producer_killed(IPCRING_WAIT_FUTEX, W_PIDFD);
	test_producer_killed(IPCRING_WAIT_FUTEX, W_SOCKET);
	for (unsigned int m = 0; m < 3; m++)
		test_consumer_killed(modes[m], W_AUTO);
	test_consumer_killed(IPCRING_WAIT_FUTEX, W_SOCKET);
	test_consumer_killed(IPCRING_WAIT_FUTEX, W_PIDFD);
	test_exit(false);
	test_exit(true);
	test_mark_dead();
	return 0;
}
