// SPDX-License-Identifier: MIT
/*
 * examples.c - run the two example programs (found next to this test, in
 * ../examples/): a normal run must end with both exiting 0; with the
 * producer SIGKILLed mid-stream the consumer must exit 1 within 2 s.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tutil.h"

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
