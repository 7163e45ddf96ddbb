// SPDX-License-Identifier: MIT
/*
 * strangers.c - nobody takes our clients' places in the handshake. A
 * process of another uid (65534: forked, then setresuid) opens 128
 * connections to a dispatching server (max_conns 8, a hello may take 5 s)
 * and never sends a hello; then a client of ours (uid 0, the server's)
 * connects behind them, which before meant a full table of handshakes and
 * a reset.
 *  - The policy allows only our uid: every one of the 128 is refused at
 *    accept, before its hello (-EACCES with the reason, all within 3 s,
 *    not at the hello deadline), and the refused hook counts 128; our
 *    client connects and exchanges a message within 2 s.
 *  - uid 65534 is allowed too: it may have only 16 handshakes waiting
 *    (max(16, max_conns / 4)); the other 112 are refused at accept
 *    (-EUSERS), and our client still connects and exchanges within 2 s.
 * Needs root (else skips).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipc.h"
#include "tutil.h"

#define OTHER		65534u
#define NSTRANGE	128
#define MAX_CONNS	8
#define PER_UID		16	/* max(16, MAX_CONNS / 4) */
#define HELLO_MS	5000
#define REFUSED_MS	3000	/* every stranger refused by then */
#define OURS_MS		2000	/* our connect and round trip */

struct seen {			/* what the server's refused hook saw */
	int eacces, eusers, other;
};

static void on_refused(void *ctx, const struct ipcring_cred *p, int err, const char *r)
{
	struct seen *v = ctx;

	(void)r;
	if (p->uid != OTHER)
		v->other++;
	else if (err == -EACCES)
		v->eacces++;
	else if (err == -EUSERS)
		v->eusers++;
	else
		v->other++;
}

static int echo(void *ctx, struct ipcring_conn *c, const void *m, size_t len)
{
	(void)ctx;
	return ipcring_conn_send(c, m, len, 0, 0);
}

static const struct ipcring_server_ops ops = { .message = echo, .refused = on_refused };

/* What one stranger's socket got: its reply's status, 1 = nothing yet,
 * 2 = closed without a word. */
static int stranger_reply(int fd, uint64_t deadline, char *why, size_t len)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct hs_reply rep;
	uint64_t now = t_now_ns();
	ssize_t n;

	if (poll(&p, 1, now >= deadline ? 0 : (int)((deadline - now) / 1000000)) != 1)
		return 1;
	memset(&rep, 0, sizeof(rep));
	n = recv(fd, &rep, sizeof(rep), MSG_DONTWAIT);
	if (n != (ssize_t)sizeof(rep) || rep.magic != HS_REPLY_MAGIC)
		return 2;
	if (!why[0])
		snprintf(why, len, "%.*s", (int)sizeof(rep.reason) - 1, rep.reason);
	return rep.status;
}

/* The child: uid 65534, NSTRANGE connections, no hello; one line when all
 * are queued, one with what they got. */
static void stranger(const char *name, int out)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(name));
	int fds[NSTRANGE], eacces = 0, eusers = 0, none = 0, closed = 0;
	char why[IPCRING_REASON_MAX] = "";
	uint64_t deadline;

	memcpy(sa.sun_path + 1, name + 1, strlen(name) - 1);
	if (setgroups(0, NULL) || setresgid(OTHER, OTHER, OTHER) ||
	    setresuid(OTHER, OTHER, OTHER))
		_exit(3);
	for (int i = 0; i < NSTRANGE; i++) {
		fds[i] = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		if (fds[i] < 0 || connect(fds[i], (struct sockaddr *)&sa, sl) < 0)
			_exit(4);
	}
	dprintf(out, "queued\n");
	deadline = t_now_ns() + REFUSED_MS * 1000000ull;
	for (int i = 0; i < NSTRANGE; i++) {
		int st = stranger_reply(fds[i], deadline, why, sizeof(why));

		eacces += st == -EACCES;
		eusers += st == -EUSERS;
		none += st == 1;
		closed += st == 2;
	}
	dprintf(out, "%d %d %d %d %s\n", eacces, eusers, none, closed, why);
	_exit(0);
}

/* The child: our client, after the strangers; its result in one line. */
static void ours(const char *name, int out)
{
	struct ipcring_connect_opts o = { .timeout_ms = OURS_MS };
	char why[IPCRING_REASON_MAX] = "", buf[8];
	struct ipcring_conn *c;
	uint64_t t0 = t_now_ns();
	size_t len = 0;
	int r = ipcring_connect(&c, name, &o, why, sizeof(why));

	if (!r)
		r = ipcring_conn_send(c, "hi", 3, 0, OURS_MS);
	if (!r)
		r = ipcring_conn_recv(c, buf, sizeof(buf), &len, OURS_MS) == 1 &&
		    len == 3 && !memcmp(buf, "hi", 3) ? 0 : -EIO;
	dprintf(out, "%d %llu %s\n", r, (unsigned long long)(t_now_ns() - t0) / 1000000, why);
	_exit(0);
}

struct child {
	pid_t pid;
	int fd;			/* its lines, non-blocking */
	char buf[512];
	size_t len;
	int status;
	bool done;
};

static void spawn(struct child *k, void (*fn)(const char *, int), const char *name)
{
	int p[2];

	memset(k, 0, sizeof(*k));
	T_EQ(pipe2(p, O_CLOEXEC), 0);
	k->pid = fork();
	T_ASSERT(k->pid >= 0);
	if (k->pid == 0) {
		close(p[0]);
		fn(name, p[1]);
	}
	close(p[1]);
	k->fd = p[0];
	T_EQ(fcntl(k->fd, F_SETFL, O_NONBLOCK), 0);
}

/* Read what it wrote so far; reap it once it exited. */
static void look(struct child *k)
{
	ssize_t n;

	while (k->len < sizeof(k->buf) - 1 &&
	       (n = read(k->fd, k->buf + k->len, sizeof(k->buf) - 1 - k->len)) > 0)
		k->len += (size_t)n;
	k->buf[k->len] = '\0';
	if (!k->done && waitpid(k->pid, &k->status, WNOHANG) == k->pid)
		k->done = true;
}

/* Serve until @k has written @lines lines (and, with @exited, exited). */
static void serve_until(struct ipcring_server *s, struct child *k, int lines, bool exited,
			const char *what)
{
	uint64_t end = t_now_ns() + 10000000000ull;

	for (;;) {
		int n = 0;

		look(k);
		for (const char *p = k->buf; (p = strchr(p, '\n')); p++)
			n++;
		if (n >= lines && (!exited || k->done))
			break;
		if (t_now_ns() > end)
			T_FAIL("%s: nothing within 10 s (it wrote '%s')", what, k->buf);
		T_ASSERT(ipcring_server_dispatch(s, 5) >= 0);
	}
}

static void run(const char *label, const struct ipcring_server_opts *so, int want_err)
{
	struct child str, our;
	struct seen seen = { 0 };
	struct ipcring_server *s;
	char name[64], why[IPCRING_REASON_MAX] = "", reason[IPCRING_REASON_MAX] = "";
	int eacces, eusers, none, closed, r;
	unsigned long long ms;

	snprintf(name, sizeof(name), "@ipcring-strangers-%d", (int)getpid());
	T_EQ(ipcring_listen(&s, name, so, why, sizeof(why)), 0);
	T_EQ(ipcring_server_set_ops(s, &ops, &seen), 0);
	spawn(&str, stranger, name);
	serve_until(s, &str, 1, false, "the stranger's connections");
	spawn(&our, ours, name);	/* queued behind all of the stranger's */
	serve_until(s, &our, 1, true, "our client");
	serve_until(s, &str, 2, true, "the stranger's refusals");
	T_ASSERT(WIFEXITED(our.status) && WEXITSTATUS(our.status) == 0);
	T_ASSERT(WIFEXITED(str.status) && WEXITSTATUS(str.status) == 0);
	T_EQ(sscanf(strchr(str.buf, '\n') + 1, "%d %d %d %d %159[^\n]", &eacces, &eusers,
		    &none, &closed, reason) >= 4, 1);
	T_EQ(sscanf(our.buf, "%d %llu %159[^\n]", &r, &ms, why) >= 2, 1);
	printf("%s: stranger's %d connections: %d refused -EACCES, %d -EUSERS, %d waiting, "
	       "%d closed unanswered (\"%s\"); refused hook: %d, %d; our client: %d in %llu ms\n",
	       label, NSTRANGE, eacces, eusers, none, closed, reason, seen.eacces, seen.eusers,
	       r, ms);
	if (r)
		T_FAIL("%s: our client behind the stranger's connections: %s (%s)", label,
		       strerror(-r), why);
	T_ASSERT(ms < OURS_MS);
	if (want_err == -EACCES) {
		T_EQ(eacces, NSTRANGE);
		T_EQ(seen.eacces, NSTRANGE);
		T_ASSERT(strstr(reason, "is not allowed"));
	} else {
		T_EQ(eusers, NSTRANGE - PER_UID);
		T_EQ(seen.eusers, NSTRANGE - PER_UID);
		T_EQ(none, PER_UID);	/* still waiting for their hello */
		T_ASSERT(strstr(reason, "handshakes in progress"));
	}
	T_EQ(seen.other, 0);
	close(str.fd);
	close(our.fd);
	T_EQ(ipcring_server_close(s), 0);
}

int main(void)
{
	uint32_t other = OTHER;
	struct ipcring_server_opts only_ours = { .max_conns = MAX_CONNS, .handshake_ms = HELLO_MS };
	struct ipcring_server_opts with_other = {
		.max_conns = MAX_CONNS, .handshake_ms = HELLO_MS, .uids = &other, .nuids = 1,
	};

	if (geteuid() != 0) {
		printf("skip: needs root, to run a process as uid %u\n", OTHER);
		return T_SKIP;
	}
	signal(SIGPIPE, SIG_IGN);
	run("refused uid", &only_ours, -EACCES);
	run("allowed uid", &with_other, -EUSERS);
	printf("strangers: ok\n");
	return 0;
}
