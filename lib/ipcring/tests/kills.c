// SPDX-License-Identifier: MIT
/*
 * kills.c - dead clients: a dispatching server outlives 1000 clients that
 * are SIGKILLed at random moments (flooding, asleep in a wait, before or
 * during the handshake) or that exit without closing. Each death of a
 * connected client is reported (-EPIPE) within 100 ms of its reaping, and
 * the server's open descriptors and resident memory are the same after the
 * 1000 kills as after the first 50 (printed). A clean close is 0, not -EPIPE.
 * A closed client's connection is freed (its socket closed) within 100 ms
 * also while a flooding client never lets the server be idle.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tutil.h"

#define KILLS		1000
#define WARMUP		50
#define LIMIT_NS	100000000ull	/* 100 ms */

/* What the hooks saw of the client tagged @want (others: earlier kills
 * whose connections were still in the listen queue). */
struct state {
	uint64_t want;
	int connected;
	int gone;
	int why;
	uint64_t gone_ns;
	int sock;		/* the server's socket of that client */
	ino_t sock_ino;
};

static void on_conn(void *ctx, struct ipcring_conn *c)
{
	struct state *st = ctx;
	uint64_t tag;

	T_EQ(ipcring_conn_tag(c, &tag), 0);
	if (tag == st->want) {
		struct stat sb;

		st->connected = 1;
		st->sock = ipcring_conn_socket(c);
		T_EQ(fstat(st->sock, &sb), 0);
		st->sock_ino = sb.st_ino;
	}
}

static int on_msg(void *ctx, struct ipcring_conn *c, const void *m, size_t len)
{
	(void)ctx, (void)c, (void)m, (void)len;
	return 0;	/* requests are dropped: a flooding client fills its ring */
}

static void on_gone(void *ctx, struct ipcring_conn *c, int why)
{
	struct state *st = ctx;
	uint64_t tag;

	T_EQ(ipcring_conn_tag(c, &tag), 0);
	if (tag != st->want)
		return;
	st->gone = 1;
	st->why = why;
	st->gone_ns = t_now_ns();
}

static const struct ipcring_server_ops ops = {
	.connected = on_conn, .message = on_msg, .disconnected = on_gone,
};

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	T_ASSERT(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;	/* the DIR's own */
}

static long rss_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	T_ASSERT(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* The child: nothing of the server's, then its behaviour until killed. */
static void child(const char *name, int kind, uint64_t tag)
{
	struct ipcring_connect_opts o = { .tag = tag };
	struct ipcring_conn *c;
	char buf[64] = { 0 };
	size_t len;

#ifdef SYS_close_range
	if (syscall(SYS_close_range, 3u, ~0u, 0) < 0)
#endif
		for (int fd = 3; fd < 4096; fd++)
			close(fd);
	if (ipcring_connect(&c, name, &o, NULL, 0))
		_exit(1);
	if (kind == 0)
		for (;;)
			if (ipcring_conn_send(c, buf, sizeof(buf), 0, -1))
				_exit(3);
	if (kind == 3)
		_exit(0);	/* dies without closing */
	if (kind == 4) {
		ipcring_conn_close(c);
		_exit(0);
	}
	if (ipcring_conn_recv(c, buf, sizeof(buf), &len, -1))
		_exit(2);
	_exit(2);
}

static void dispatch_until(struct ipcring_server *s, int *counter, int want, const char *what)
{
	uint64_t end = t_now_ns() + 10000000000ull;

	while (*counter < want) {
		T_ASSERT(ipcring_server_dispatch(s, 10) >= 0);
		if (t_now_ns() > end)
			T_FAIL("%s: not within 10 s", what);
	}
}

/* Kind 0 flood, 1 asleep, 2 killed at once, 3 exit, 4 clean close (a fence:
 * the listen queue is FIFO, so every earlier connection was handled). */
static void one_kill(struct ipcring_server *s, struct state *st, const char *name, int kind,
		     uint64_t tag, uint64_t *rnd, uint64_t *worst)
{
	int status;
	uint64_t t0;
	pid_t pid;

	*st = (struct state){ .want = tag };
	pid = fork();
	T_ASSERT(pid >= 0);
	if (pid == 0)
		child(name, kind, tag);
	if (kind != 2) {
		dispatch_until(s, &st->connected, 1, "connect");
		/* a random moment: up to 2 ms of serving first */
		uint64_t until = t_now_ns() + t_rand(rnd) % 2000000;

		while (t_now_ns() < until)
			T_ASSERT(ipcring_server_dispatch(s, 0) >= 0);
	}
	if (kind < 3)
		T_EQ(kill(pid, SIGKILL), 0);
	T_EQ(waitpid(pid, &status, 0), pid);
	t0 = t_now_ns();
	if (kind == 2)
		return;		/* seen, or not, while the next ones run */
	dispatch_until(s, &st->gone, 1, "death");
	T_EQ(st->why, kind == 4 ? 0 : -EPIPE);
	if (st->gone_ns > t0 && st->gone_ns - t0 > *worst)
		*worst = st->gone_ns - t0;
	if (st->gone_ns > t0 + LIMIT_NS)
		T_FAIL("a dead client was seen after %llu ms",
		       (unsigned long long)(st->gone_ns - t0) / 1000000);
}

/* Every earlier client handled: then nothing of theirs may be left. */
static void fence(struct ipcring_server *s, struct state *st, const char *name, uint64_t tag)
{
	uint64_t rnd = tag, worst = 0;

	one_kill(s, st, name, 4, tag, &rnd, &worst);
	T_EQ(ipcring_server_nconns(s), 0);
}

/* Is @fd still the socket it was (the number may have been reused)? */
static bool open_as(int fd, ino_t ino)
{
	struct stat sb;

	return fstat(fd, &sb) == 0 && sb.st_ino == ino;
}

/*
 * A client that connects and closes while another floods: the server,
 * always busy, still closes what the closed one held within 100 ms.
 */
static void busy_close(struct ipcring_server *s, struct state *st, const char *name,
		       uint64_t tag)
{
	pid_t flood, quick;
	uint64_t t0;
	int status;

	*st = (struct state){ .want = tag };
	flood = fork();
	T_ASSERT(flood >= 0);
	if (flood == 0)
		child(name, 0, tag);
	dispatch_until(s, &st->connected, 1, "flooding client");
	*st = (struct state){ .want = tag + 1 };
	quick = fork();
	T_ASSERT(quick >= 0);
	if (quick == 0)
		child(name, 4, tag + 1);
	dispatch_until(s, &st->connected, 1, "closing client");
	T_ASSERT(st->sock >= 0);
	dispatch_until(s, &st->gone, 1, "close");
	T_EQ(st->why, 0);
	t0 = t_now_ns();
	while (open_as(st->sock, st->sock_ino)) {
		T_ASSERT(ipcring_server_dispatch(s, 0) >= 0);
		if (t_now_ns() > t0 + LIMIT_NS)
			T_FAIL("a closed client's socket was still open after 100 ms");
	}
	T_EQ(waitpid(quick, &status, 0), quick);
	*st = (struct state){ .want = tag };
	T_EQ(kill(flood, SIGKILL), 0);
	T_EQ(waitpid(flood, &status, 0), flood);
	dispatch_until(s, &st->gone, 1, "flooding client's death");
	T_EQ(st->why, -EPIPE);
}

/* Idle for a while first, so that the server has made its channel ahead
 * (after 1 ms idle): both counts then hold it, whichever client last took
 * it. */
static void settle(struct ipcring_server *s)
{
	for (int i = 0; i < 3; i++)
		T_ASSERT(ipcring_server_dispatch(s, 5) >= 0);
}

int main(void)
{
	struct ipcring_server *s;
	struct state st = { 0 };
	char name[64], why[IPCRING_REASON_MAX];
	uint64_t rnd = 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid(), worst = 0;
	int fds0 = 0, fds1;
	long rss0 = 0, rss1;

	signal(SIGPIPE, SIG_IGN);
	snprintf(name, sizeof(name), "@ipcring-kills-%d", (int)getpid());
	T_EQ(ipcring_listen(&s, name, NULL, why, sizeof(why)), 0);
	T_EQ(ipcring_server_set_ops(s, &ops, &st), 0);
	for (int i = 0; i < KILLS; i++) {
		if (i == WARMUP) {
			fence(s, &st, name, KILLS + 1);
			settle(s);
			fds0 = count_fds();
			rss0 = rss_kib();
		}
		one_kill(s, &st, name, (int)(t_rand(&rnd) % 4), (uint64_t)i + 1, &rnd, &worst);
	}
	busy_close(s, &st, name, KILLS + 3);
	fence(s, &st, name, KILLS + 2);
	settle(s);
	fds1 = count_fds();
	rss1 = rss_kib();
	printf("after %d kills: %d fds (%d after %d), RSS %ld KiB (%ld); "
	       "slowest death seen in %llu us\n", KILLS, fds1, fds0, WARMUP, rss1, rss0,
	       (unsigned long long)worst / 1000);
	T_EQ(fds1, fds0);
	/* constant: a leak of one page per client would be ~4 MiB. ASan holds
	 * freed memory in its quarantine (and finds leaks itself) */
#if defined(__SANITIZE_ADDRESS__)
	rss1 = rss0;
#endif
	if (rss1 > rss0 + 1024)
		T_FAIL("RSS grew from %ld to %ld KiB", rss0, rss1);
	T_EQ(ipcring_server_close(s), 0);
	printf("kills: ok\n");
	return 0;
}
