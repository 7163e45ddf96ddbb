// SPDX-License-Identifier: MIT
/*
 * examples.c - run the two example programs (found next to this test, in
 * ../examples/): a normal run must end with both exiting 0; with the
 * producer SIGKILLed mid-stream the consumer must exit 1 within 2 s.
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
#include <sys/wait.h>
#include <unistd.h>

#include "tutil.h"
#include "examples/common.h"

static char dir[PATH_MAX];

static pid_t spawn(const char *prog, char *const argv[])
{
	char path[PATH_MAX + 64];
	pid_t pid;

	snprintf(path, sizeof(path), "%s/../examples/%s", dir, prog);
	if (access(path, X_OK)) {
		printf("skip: %s not built\n", path);
		exit(T_SKIP);
	}
	pid = fork();
	T_ASSERT(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		execv(path, argv);
		_exit(127);
	}
	return pid;
}

/* exit status of @pid, or -1 if it does not end within @ms */
static int reap(pid_t pid, int ms)
{
	int st;

	for (; ms > 0; ms -= 10) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
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

int main(int argc, char **argv)
{
	char name[64], *cargv[3], *pargv[5];
	ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	pid_t c, p;

	T_ASSERT(n > 0);
	dir[n] = 0;
	dirname(dir);
	snprintf(name, sizeof(name), "ipcring-example-%d", (int)getpid());
	cargv[0] = "ipcring-consumer", cargv[1] = name, cargv[2] = NULL;
	pargv[0] = "ipcring-producer", pargv[1] = name;
	pargv[2] = "200000", pargv[3] = "100", pargv[4] = NULL;

	test_recv_fd();

	c = spawn("ipcring-consumer", cargv);
	p = spawn("ipcring-producer", pargv);
	T_EQ(reap(p, 30000), 0);
	T_EQ(reap(c, 5000), 0);

	pargv[2] = "1000000000000";
	c = spawn("ipcring-consumer", cargv);
	p = spawn("ipcring-producer", pargv);
	usleep(300000);
	kill(p, SIGKILL);
	T_EQ(reap(p, 1000), 128 + SIGKILL);
	T_EQ(reap(c, 2000), 1);
	return 0;
}
