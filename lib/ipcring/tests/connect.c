// SPDX-License-Identifier: MIT
/*
 * connect.c - connections by name: an echo server (the dispatcher on a
 * thread) reached through an abstract name, a socket path in a 0700
 * directory and the default per-user directory; the caller-owned accept;
 * refusals with their reasons (another protocol version, a hello that is
 * not one, a full server, a name nobody listens on, a directory others can
 * enter); a stale socket file replaced, a live one kept; a dead server
 * gives the client -EPIPE; a server out of descriptors (at accept, at the
 * channel) refuses with -EMFILE and says so; a connect to a server that
 * never answers ends when its caller cancels it; nothing is left behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tutil.h"

struct echo {
	struct ipcring_server *srv;
	_Atomic int stop;
	_Atomic int connected, disconnected, refused;
	int last_refusal;
	char last_reason[IPCRING_REASON_MAX];
	pthread_t th;
};

static void on_connected(void *ctx, struct ipcring_conn *c)
{
	struct echo *e = ctx;

	(void)c;
	atomic_fetch_add(&e->connected, 1);
}

static int on_message(void *ctx, struct ipcring_conn *c, const void *msg, size_t len)
{
	(void)ctx;
	return ipcring_conn_send(c, msg, len, IPCRING_MORE, 1000);
}

static void on_disconnected(void *ctx, struct ipcring_conn *c, int why)
{
	struct echo *e = ctx;

	(void)c;
	(void)why;
	atomic_fetch_add(&e->disconnected, 1);
}

static void on_refused(void *ctx, const struct ipcring_cred *p, int err, const char *reason)
{
	struct echo *e = ctx;

	(void)p;
	e->last_refusal = err;
	snprintf(e->last_reason, sizeof(e->last_reason), "%s", reason);
	atomic_fetch_add(&e->refused, 1);
}

static const struct ipcring_server_ops echo_ops = {
	.connected = on_connected, .message = on_message,
	.disconnected = on_disconnected, .refused = on_refused,
};

static void *echo_loop(void *arg)
{
	struct echo *e = arg;

	while (!atomic_load(&e->stop))
		if (ipcring_server_dispatch(e->srv, 20) < 0)
			T_FAIL("dispatch failed");
	return NULL;
}

static void echo_start(struct echo *e, const char *name, const struct ipcring_server_opts *o)
{
	char why[IPCRING_REASON_MAX];
	int r;

	memset(e, 0, sizeof(*e));
	r = ipcring_listen(&e->srv, name, o, why, sizeof(why));
	if (r)
		T_FAIL("listen %s: %d %s", name, r, why);
	T_EQ(ipcring_server_set_ops(e->srv, &echo_ops, e), 0);
	T_EQ(pthread_create(&e->th, NULL, echo_loop, e), 0);
}

static void echo_stop(struct echo *e)
{
	atomic_store(&e->stop, 1);
	pthread_join(e->th, NULL);
	T_EQ(ipcring_server_close(e->srv), 0);
}

/* The server thread counts after it answered: wait for it, bounded. */
static void wait_count(_Atomic int *v, int want)
{
	uint64_t end = t_now_ns() + 5000000000ull;

	while (atomic_load(v) < want) {
		if (t_now_ns() > end)
			T_FAIL("the server did not count %d within 5 s", want);
		sched_yield();
	}
}

static void echo_roundtrips(const char *name, int n)
{
	char why[IPCRING_REASON_MAX], buf[64];
	struct ipcring_connect_opts co = { .tag = 42 };
	struct ipcring_conn *c;
	struct ipcring_conn_stats st;
	struct ipcring_cred cred;
	uint64_t tag;
	size_t len;
	int r;

	r = ipcring_connect(&c, name, &co, why, sizeof(why));
	if (r)
		T_FAIL("connect %s: %d %s", name, r, why);
	T_EQ(ipcring_conn_cred(c, &cred), 0);
	T_EQ(cred.uid, geteuid());
	T_EQ(cred.pid, getpid());
	T_EQ(ipcring_conn_tag(c, &tag), 0);
	T_EQ(tag, 42);
	T_ASSERT(ipcring_conn_fd(c) >= 0 && ipcring_conn_socket(c) >= 0);
	for (int i = 0; i < n; i++) {
		snprintf(buf, sizeof(buf), "ping %d", i);
		T_EQ(ipcring_conn_send(c, buf, strlen(buf) + 1, 0, 1000), 0);
		memset(buf, 0, sizeof(buf));
		T_EQ(ipcring_conn_recv(c, buf, sizeof(buf), &len, 2000), 1);
		char want[32];

		snprintf(want, sizeof(want), "ping %d", i);
		T_ASSERT(!strcmp(buf, want));
	}
	T_EQ(ipcring_conn_stats(c, &st), 0);
	T_EQ(st.msgs_out, n);
	T_EQ(st.msgs_in, n);
	T_EQ(ipcring_conn_close(c), 0);
}

static void dir_of(char *dir, size_t len)
{
	snprintf(dir, len, "/tmp/ipcring-test-%d", (int)getpid());
	T_EQ(mkdir(dir, 0700), 0);
}

static void test_names(void)
{
	char dir[64], path[128], name[64];
	struct echo e;
	struct stat st;

	snprintf(name, sizeof(name), "@ipcring-test-%d", (int)getpid());
	echo_start(&e, name, NULL);
	echo_roundtrips(name, 1000);
	echo_roundtrips(name, 10);
	wait_count(&e.disconnected, 2);
	echo_stop(&e);
	T_EQ(e.connected, 2);

	dir_of(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/srv.sock", dir);
	echo_start(&e, path, NULL);
	T_EQ(stat(path, &st), 0);
	T_EQ(st.st_mode & 0777, 0600);
	echo_roundtrips(path, 100);
	echo_stop(&e);
	T_ASSERT(stat(path, &st) < 0 && errno == ENOENT);	/* unlinked */

	/* the default directory: $XDG_RUNTIME_DIR/ipcring */
	setenv("XDG_RUNTIME_DIR", dir, 1);
	snprintf(name, sizeof(name), "plain-%d", (int)getpid());
	echo_start(&e, name, NULL);
	snprintf(path, sizeof(path), "%s/ipcring", dir);
	T_EQ(stat(path, &st), 0);
	T_EQ(st.st_mode & 0777, 0700);
	echo_roundtrips(name, 100);
	echo_stop(&e);
	T_EQ(rmdir(path), 0);
	unsetenv("XDG_RUNTIME_DIR");
	T_EQ(rmdir(dir), 0);
}

/* Long: each refusal in turn (version, junk, full, name taken, nobody, directory, stale). */
static void test_refusals(void)
{
	char name[64], why[IPCRING_REASON_MAX], dir[64], path[128];
	struct ipcring_connect_opts v2 = { .proto_version = 2 };
	struct ipcring_server_opts one = { .max_conns = 1 };
	struct ipcring_conn *c, *c2;
	struct ipcring_server *s2;
	struct echo e;
	int r;

	snprintf(name, sizeof(name), "@ipcring-test-ref-%d", (int)getpid());
	echo_start(&e, name, &one);
	r = ipcring_connect(&c, name, &v2, why, sizeof(why));
	T_EQ(r, -EPROTO);
	T_ASSERT(c == NULL);
	T_ASSERT(strstr(why, "protocol version 2") && strstr(why, "version 1"));
	printf("refusal (version): %s\n", why);
	/* the server was told too */
	wait_count(&e.refused, 1);
	T_EQ(e.last_refusal, -EPROTO);
	T_ASSERT(strstr(e.last_reason, "version 2"));

	/* something that is not a hello */
	{
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		char junk[5] = "junk", back[256];

		memcpy(sa.sun_path + 1, name + 1, strlen(name) - 1);
		T_EQ(connect(fd, (struct sockaddr *)&sa,
			     (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(name))), 0);
		T_EQ(send(fd, junk, sizeof(junk), 0), sizeof(junk));
		T_ASSERT(recv(fd, back, sizeof(back), 0) > 0);	/* a refusal, then EOF */
		T_EQ(recv(fd, back, sizeof(back), 0), 0);
		close(fd);
	}
	/* a full server */
	r = ipcring_connect(&c, name, NULL, why, sizeof(why));
	T_EQ(r, 0);
	r = ipcring_connect(&c2, name, NULL, why, sizeof(why));
	T_EQ(r, -EUSERS);
	T_ASSERT(strstr(why, "full"));
	T_EQ(ipcring_conn_close(c), 0);
	/* a second server on the same live name */
	T_EQ(ipcring_listen(&s2, name, NULL, why, sizeof(why)), -EADDRINUSE);
	echo_stop(&e);

	/* nobody listens */
	r = ipcring_connect(&c, name, NULL, why, sizeof(why));
	T_EQ(r, -ECONNREFUSED);
	T_ASSERT(strstr(why, "is the server running"));

	/* a directory that others can enter */
	dir_of(dir, sizeof(dir));
	T_EQ(chmod(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/srv.sock", dir);
	T_EQ(ipcring_listen(&s2, path, NULL, why, sizeof(why)), -EACCES);
	T_ASSERT(strstr(why, "0700"));
	printf("refusal (directory): %s\n", why);
	T_EQ(chmod(dir, 0700), 0);

	/* a stale socket file (its server died) is replaced */
	{
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

		T_ASSERT(strlen(path) < sizeof(sa.sun_path));
		memcpy(sa.sun_path, path, strlen(path) + 1);
		T_EQ(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
		close(fd);	/* never listened: connecting is refused */
	}
	T_EQ(ipcring_listen(&s2, path, NULL, why, sizeof(why)), 0);
	T_EQ(ipcring_server_close(s2), 0);
	T_EQ(rmdir(dir), 0);
}

/* The caller-owned accept, in a server child that is then SIGKILLed: the
 * client's next wait gives -EPIPE, promptly. */
static void test_accept(void)
{
	char name[64], why[IPCRING_REASON_MAX], buf[16];
	struct ipcring_server *s;
	struct ipcring_conn *sc, *cc;
	uint64_t t0, dt;
	size_t len;
	pid_t pid;
	int st;

	snprintf(name, sizeof(name), "@ipcring-test-acc-%d", (int)getpid());
	T_EQ(ipcring_listen(&s, name, NULL, why, sizeof(why)), 0);
	T_EQ(ipcring_server_accept(s, &sc, why, sizeof(why), 0), -EAGAIN);
	T_EQ(ipcring_server_accept(s, &sc, why, sizeof(why), 10), -ETIMEDOUT);
	pid = fork();
	T_ASSERT(pid >= 0);
	if (pid == 0) {
		if (ipcring_server_accept(s, &sc, why, sizeof(why), 5000))
			_exit(1);
		if (ipcring_conn_recv(sc, buf, sizeof(buf), &len, 2000) != 1 || strcmp(buf, "hi"))
			_exit(2);
		if (ipcring_conn_send(sc, "ho", 3, 0, 1000))
			_exit(3);
		pause();
		_exit(4);
	}
	T_EQ(ipcring_server_close(s), 0);	/* the child keeps its copy */
	T_EQ(ipcring_connect(&cc, name, NULL, why, sizeof(why)), 0);
	T_EQ(ipcring_conn_send(cc, "hi", 3, 0, 1000), 0);
	T_EQ(ipcring_conn_recv(cc, buf, sizeof(buf), &len, 2000), 1);
	T_ASSERT(!strcmp(buf, "ho"));
	T_EQ(kill(pid, SIGKILL), 0);
	T_EQ(waitpid(pid, &st, 0), pid);
	t0 = t_now_ns();
	T_EQ(ipcring_conn_recv(cc, buf, sizeof(buf), &len, 5000), -EPIPE);
	T_EQ(ipcring_conn_send(cc, "x", 1, 0, 1000) < 0, 1);
	dt = t_now_ns() - t0;
	/* the liveness period is 100 ms; allow a loaded machine twice that */
	if (dt > 300000000ull)
		T_FAIL("the dead server was seen after %llu ms", (unsigned long long)(dt / 1000000));
	T_EQ(ipcring_conn_close(cc), 0);
}

/* A server child out of descriptors: first none at all (accept4 fails:
 * the reserved one takes the connection to refuse it), then one (the
 * accept, but not the channel). The client learns -EMFILE and why, each
 * time; the server's accept returns -EMFILE too. */
static void test_no_fds(void)
{
	char name[64], why[IPCRING_REASON_MAX];
	struct ipcring_server *s;
	struct ipcring_conn *sc, *cc;
	struct rlimit rl;
	int st, ready[2];
	pid_t pid;
	char c;

	snprintf(name, sizeof(name), "@ipcring-test-nofd-%d", (int)getpid());
	T_EQ(ipcring_listen(&s, name, NULL, why, sizeof(why)), 0);
	T_EQ(pipe(ready), 0);
	pid = fork();
	T_ASSERT(pid >= 0);
	if (pid == 0) {
		int top = 0, fd;

		close(ready[0]);

		for (fd = 0; fd < 1024; fd++)
			if (fcntl(fd, F_GETFD) >= 0)
				top = fd;
		if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_max < (rlim_t)top + 2)
			_exit(10);
		rl.rlim_cur = (rlim_t)top + 1;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			_exit(10);
		while (dup(ready[1]) >= 0)	/* the holes below the limit filled */
			;
		/* no one connects yet: nobody to refuse, the accept waits */
		if (ipcring_server_accept(s, &sc, why, sizeof(why), 20) != -ETIMEDOUT)
			_exit(14);
		if (write(ready[1], "r", 1) != 1)
			_exit(15);
		if (ipcring_server_accept(s, &sc, why, sizeof(why), 5000) != -EMFILE ||
		    !strstr(why, "accept"))
			_exit(11);
		rl.rlim_cur = (rlim_t)top + 2;	/* room for the accept alone */
		if (setrlimit(RLIMIT_NOFILE, &rl))
			_exit(12);
		if (ipcring_server_accept(s, &sc, why, sizeof(why), 5000) != -EMFILE ||
		    !strstr(why, "making the channel"))
			_exit(13);
		_exit(0);
	}
	T_EQ(ipcring_server_close(s), 0);	/* the child keeps its copy */
	close(ready[1]);
	T_EQ(read(ready[0], &c, 1), 1);	/* the child's limit is set */
	close(ready[0]);
	T_EQ(ipcring_connect(&cc, name, NULL, why, sizeof(why)), -EMFILE);
	printf("refusal (no descriptors at accept): %s\n", why);
	T_ASSERT(strstr(why, "out of file descriptors"));
	T_EQ(ipcring_connect(&cc, name, NULL, why, sizeof(why)), -EMFILE);
	printf("refusal (no descriptors for the channel): %s\n", why);
	T_ASSERT(strstr(why, "making the channel") && strstr(why, "Too many open files"));
	T_EQ(waitpid(pid, &st, 0), pid);
	T_ASSERT(WIFEXITED(st));
	T_EQ(WEXITSTATUS(st), 0);
}

struct canceller {
	const char *name;
	_Atomic int stop, asked;
	int ret;
	char why[IPCRING_REASON_MAX];
};

static int cancel_asked(void *ctx)
{
	struct canceller *k = ctx;

	atomic_fetch_add(&k->asked, 1);
	return atomic_load(&k->stop);
}

static void *cancel_connect(void *arg)
{
	struct canceller *k = arg;
	struct ipcring_connect_opts co = { .timeout_ms = 60000 };
	struct ipcring_conn *c = NULL;

	k->ret = ipcring_connect_cancel(&c, k->name, &co, cancel_asked, k, k->why,
					sizeof(k->why));
	T_ASSERT(!c);
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
}

static int open_fds(void)
{
	int n = 0;

	for (int fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

/* A server that listens but never answers (it accepts nothing): a connect
 * waits for its reply until the caller cancels it, by the flag and a signal
 * (the thread is woken at once), or by the flag alone (seen at the next
 * poll); either way -ECANCELED, with a reason, nothing left open. Without a
 * cancel, ipcring_connect_cancel() is ipcring_connect() (its timeout). */
static void test_cancel(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };	/* no SA_RESTART */
	char name[64], why[IPCRING_REASON_MAX];
	struct ipcring_connect_opts co = { .timeout_ms = 20 };
	struct ipcring_server *s;
	struct ipcring_conn *c;
	pthread_t th;
	int fds;

	sigemptyset(&sa.sa_mask);
	T_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	snprintf(name, sizeof(name), "@ipcring-test-cancel-%d", (int)getpid());
	T_EQ(ipcring_listen(&s, name, NULL, why, sizeof(why)), 0);
	fds = open_fds();
	for (int signal_it = 1; signal_it >= 0; signal_it--) {
		struct canceller k = { .name = name };

		T_EQ(pthread_create(&th, NULL, cancel_connect, &k), 0);
		while (atomic_load(&k.asked) < 1)	/* it is in a wait */
			sched_yield();
		atomic_store(&k.stop, 1);
		if (signal_it)
			T_EQ(pthread_kill(th, SIGUSR1), 0);
		T_EQ(pthread_join(th, NULL), 0);
		T_EQ(k.ret, -ECANCELED);
		printf("cancelled (%s): %s\n", signal_it ? "flag and signal" : "flag", k.why);
		T_ASSERT(strstr(k.why, "cancelled") && strstr(k.why, name));
		T_EQ(open_fds(), fds);
	}
	T_EQ(ipcring_connect_cancel(&c, name, &co, NULL, NULL, why, sizeof(why)), -ETIMEDOUT);
	T_EQ(open_fds(), fds);
	T_EQ(ipcring_server_close(s), 0);
	signal(SIGUSR1, SIG_DFL);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	test_names();
	test_refusals();
	test_accept();
	test_no_fds();
	test_cancel();
	printf("connect: ok\n");
	return 0;
}
