// SPDX-License-Identifier: MIT
/*
 * examples.c - run the two example programs (found next to this test, in
 * ../examples/): a normal run must end with both exiting 0; with the
 * producer SIGKILLed mid-stream the consumer must exit 1 within 2 s.
 *
 * Who may connect (as root, with util-linux's setpriv): a producer run as
 * uid 65534 against our consumer is refused with a message naming its uid,
 * and the consumer then serves our own producer; our producer refuses a
 * consumer run as uid 65534; -u on both sides lets them work together.
 *
 * The fd passing itself (ex_recv_fd, linked in from ../examples/common.c):
 * exactly one fd is taken; no fd, two fds, or so many that the control
 * message is truncated (MSG_CTRUNC) are refused, and every fd that did
 * arrive is closed: the number of open fds is unchanged.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tutil.h"
#include "examples/common.h"

static char dir[PATH_MAX];
static char tmp[] = "/tmp/ipcring-examples.XXXXXX";
static const char *setpriv;
#define MAX_KIDS 8	/* examples running at once, at most */
static pid_t kids[MAX_KIDS];
static unsigned nkids;

/* at exit, a failed check included: no example left running, no file */
static void cleanup(void)
{
	static const char *const files[] = { "consumer.err", "producer.err" };
	char path[sizeof(tmp) + 64];

	for (unsigned i = 0; i < MAX_KIDS; i++)
		if (kids[i] > 0 && kill(kids[i], SIGKILL) == 0)
			waitpid(kids[i], NULL, 0);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", tmp, files[i]);
		unlink(path);
	}
	rmdir(tmp);
}

#define NOBODY "65534"

/* Start examples/@prog with @argv (argv[0] included); @as_nobody runs it
 * through setpriv as uid/gid 65534; stderr goes to tmp/@err if given. */
static pid_t spawn(const char *prog, char *const argv[], int as_nobody, const char *err)
{
	char path[PATH_MAX + 64], epath[sizeof(tmp) + 64];
	char *args[16];
	int n = 0;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/../examples/%s", dir, prog);
	if (access(path, X_OK)) {
		printf("skip: %s not built\n", path);
		exit(T_SKIP);
	}
	if (as_nobody) {
		args[n++] = "setpriv";
		args[n++] = "--reuid=" NOBODY;
		args[n++] = "--regid=" NOBODY;
		args[n++] = "--clear-groups";
	}
	args[n++] = path;
	for (int i = 1; argv[i] && n < 15; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	snprintf(epath, sizeof(epath), "%s/%s", tmp, err ? err : "");
	pid = fork();
	T_ASSERT(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		if (err) {
			/* opened before setpriv drops to uid 65534 */
			int fd = open(epath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

			if (fd < 0)
				_exit(126);
			dup2(fd, STDERR_FILENO);
		}
		execv(as_nobody ? setpriv : path, args);
		_exit(127);
	}
	kids[nkids++ % MAX_KIDS] = pid;
	return pid;
}

/* exit status of @pid, or -1 if it does not end within @ms */
static int reap(pid_t pid, int ms)
{
	int st;

	for (; ms > 0; ms -= 10) {
		if (waitpid(pid, &st, WNOHANG) == pid) {
			for (unsigned i = 0; i < MAX_KIDS; i++)
				if (kids[i] == pid)
					kids[i] = 0;
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		}
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

/* tmp/@name's text, and that it holds @want */
static void expect_text(const char *name, const char *want)
{
	char path[sizeof(tmp) + 64], buf[1024];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	T_ASSERT(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	T_ASSERT(n >= 0);
	buf[n] = 0;
	if (!strstr(buf, want))
		T_FAIL("%s says \"%s\", expected it to say \"%s\"", name, buf, want);
	unlink(path);
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	T_ASSERT(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* Send one byte with @nfd copies of /dev/null in one SCM_RIGHTS message. */
static void send_fds(int sock, int nfd)
{
	char byte = 'R';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(32 * sizeof(int))];
	} u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	int fds[32];

	T_ASSERT(nfd <= 32);
	memset(&u, 0, sizeof(u));
	for (int i = 0; i < nfd; i++) {
		fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		T_ASSERT(fds[i] >= 0);
	}
	if (nfd) {
		struct cmsghdr *c;

		msg.msg_control = u.buf;
		msg.msg_controllen = CMSG_SPACE(nfd * sizeof(int));
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfd * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfd * sizeof(int));
	}
	T_EQ(sendmsg(sock, &msg, MSG_NOSIGNAL), 1);
	for (int i = 0; i < nfd; i++)
		close(fds[i]);
}

static void test_recv_fd(void)
{
	static const int counts[] = { 2, 3, 4, 5, 16, 32 };
	int sv[2], before, fd;

	T_ASSERT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	before = open_fds();

	send_fds(sv[0], 1);
	fd = ex_recv_fd(sv[1]);
	T_ASSERT(fd >= 0);
	T_ASSERT(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	T_EQ(open_fds(), before);

	send_fds(sv[0], 0);
	T_EQ(ex_recv_fd(sv[1]), -EPROTO);
	T_EQ(open_fds(), before);

	/* two fds fit the buffer and arrive; 16 and 32 do not (MSG_CTRUNC) */
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		send_fds(sv[0], counts[i]);
		fd = ex_recv_fd(sv[1]);
		if (fd != -EPROTO)
			T_FAIL("%d fds in one message: ex_recv_fd gave %d, expected -EPROTO", counts[i],
			       fd);
		if (open_fds() != before)
			T_FAIL("%d fds in one message: %d fds left open", counts[i],
			       open_fds() - before);
	}

	close(sv[0]);
	T_EQ(ex_recv_fd(sv[1]), -ECONNRESET);
	close(sv[1]);
}

/* setpriv on the PATH, or NULL */
static const char *find_setpriv(void)
{
	static const char *const where[] = { "/usr/bin/setpriv", "/bin/setpriv",
					     "/usr/sbin/setpriv", "/sbin/setpriv" };

	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++)
		if (access(where[i], X_OK) == 0)
			return where[i];
	return NULL;
}

static void test_who(const char *name)
{
	char *cargv[] = { "ipcring-consumer", (char *)name, NULL };
	char *pargv[] = { "ipcring-producer", (char *)name, "20000", "100", NULL };
	char *cargv_u[] = { "ipcring-consumer", "-u", NOBODY, (char *)name, NULL };
	char *cargv_0[] = { "ipcring-consumer", "-u", "0", (char *)name, NULL };
	pid_t c, p;

	char *pargv_0[] = { "ipcring-producer", "-u", "0", (char *)name, "20000", "100", NULL };

	/* a foreign producer (which itself would accept us) is refused; ours
	 * is served after it */
	c = spawn("ipcring-consumer", cargv, 0, "consumer.err");
	p = spawn("ipcring-producer", pargv_0, 1, "producer.err");
	T_EQ(reap(p, 10000), 1);
	expect_text("producer.err", "closed the connection without sending the ring");
	p = spawn("ipcring-producer", pargv, 0, NULL);
	T_EQ(reap(p, 30000), 0);
	T_EQ(reap(c, 5000), 0);
	expect_text("consumer.err", "refused a producer: pid");
	/* (the consumer's message is complete before it closes the socket) */

	/* a foreign consumer (which itself would accept us) gets nothing from
	 * our producer */
	c = spawn("ipcring-consumer", cargv_0, 1, "consumer.err");
	p = spawn("ipcring-producer", pargv, 0, "producer.err");
	T_EQ(reap(p, 10000), 1);
	expect_text("producer.err", "refused the consumer on @");
	T_EQ(reap(c, 5000), 1);	/* its producer went away */

	/* -u on both sides */
	c = spawn("ipcring-consumer", cargv_u, 0, NULL);
	p = spawn("ipcring-producer", pargv_0, 1, NULL);
	T_EQ(reap(p, 30000), 0);
	T_EQ(reap(c, 5000), 0);
}

int main(int argc, char **argv)
{
	char name[64], *cargv[3], *pargv[5];
	ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	pid_t c, p;

	T_ASSERT(n > 0);
	dir[n] = 0;
	dirname(dir);
	T_ASSERT(mkdtemp(tmp));
	chmod(tmp, 0755);	/* the examples run as uid 65534 write their stderr here */
	atexit(cleanup);
	snprintf(name, sizeof(name), "ipcring-example-%d", (int)getpid());
	cargv[0] = "ipcring-consumer", cargv[1] = name, cargv[2] = NULL;
	pargv[0] = "ipcring-producer", pargv[1] = name;
	pargv[2] = "200000", pargv[3] = "100", pargv[4] = NULL;

	test_recv_fd();

	c = spawn("ipcring-consumer", cargv, 0, NULL);
	p = spawn("ipcring-producer", pargv, 0, NULL);
	T_EQ(reap(p, 30000), 0);
	T_EQ(reap(c, 5000), 0);

	setpriv = find_setpriv();
	if (geteuid() == 0 && setpriv)
		test_who(name);
	else
		printf("note: who-may-connect cases skipped (need root and setpriv)\n");

	pargv[2] = "1000000000000";
	c = spawn("ipcring-consumer", cargv, 0, NULL);
	p = spawn("ipcring-producer", pargv, 0, NULL);
	usleep(300000);
	kill(p, SIGKILL);
	T_EQ(reap(p, 1000), 128 + SIGKILL);
	T_EQ(reap(c, 2000), 1);
	return 0;
}
