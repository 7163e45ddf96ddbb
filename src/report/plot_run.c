// SPDX-License-Identifier: MIT
/* Drawing a figure: its four files are made in a fresh private directory
 * inside the output directory (so nothing there, not even a link, can be
 * written through), gnuplot runs in it as a child with a deadline and
 * reads the script from a pipe on its standard input, fed from memory (the
 * NAME.gp beside the figure is for people; gnuplot never opens it), and
 * the files are moved into the output directory once gnuplot succeeded.
 * gnuplot's first error line is the one reported. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ipclab/util.h"
#include "plot.h"

#define GNUPLOT_DEADLINE_MS 60000

/* The script and gnuplot's stderr: written and read as they become ready. */
struct gp_io {
	int in, errfd;			/* gnuplot's stdin (write end), its stderr */
	const char *script;
	size_t len, off;
	char *first;			/* what gnuplot said */
	size_t cap, have;
};

/* One poll round: feed what the pipe takes, keep what gnuplot says. false
 * once gnuplot's stderr closed (it exited). */
static bool gp_io_step(struct gp_io *io, int timeout_ms)
{
	struct pollfd p[2] = { { .fd = io->errfd, .events = POLLIN },
			       { .fd = io->in, .events = POLLOUT } };
	char buf[512];
	ssize_t n;

	if (poll(p, io->in >= 0 ? 2 : 1, timeout_ms) < 0)
		return errno == EINTR;
	if (io->in >= 0 && p[1].revents) {
		n = write(io->in, io->script + io->off, io->len - io->off);
		if (n > 0)
			io->off += (size_t)n;
		/* all fed, or gnuplot stopped reading (an error in the script) */
		if (io->off == io->len || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			close(io->in);
			io->in = -1;
		}
	}
	if (!p[0].revents)
		return true;
	n = read(io->errfd, buf, sizeof(buf));
	if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
		return false;
	for (ssize_t i = 0; i < n && io->have + 1 < io->cap; i++)
		io->first[io->have++] = buf[i];
	io->first[io->have] = '\0';
	return true;
}

/* Feed the script and read stderr until gnuplot exits or the deadline
 * passes (false). SIGPIPE, from a write after gnuplot stopped reading, is
 * held and taken back: EPIPE says it. */
static bool gp_io_run(struct gp_io *io)
{
	uint64_t deadline = now_ns() + GNUPLOT_DEADLINE_MS * NSEC_PER_MSEC;
	struct timespec zero = { 0 };
	sigset_t pipe_set, old;
	bool exited = false;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	fcntl(io->in, F_SETFL, O_NONBLOCK);
	io->first[0] = '\0';
	for (;;) {
		uint64_t now = now_ns();

		if (now >= deadline)
			break;
		if (!gp_io_step(io, (int)((deadline - now) / NSEC_PER_MSEC) + 1)) {
			exited = true;
			break;
		}
	}
	if (io->in >= 0)
		close(io->in);
	io->in = -1;
	while (sigtimedwait(&pipe_set, NULL, &zero) > 0)
		;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return exited;
}

/* The child: in the staging directory, the script on stdin. gnuplot reads
 * /dev/stdin, which is that pipe, as a script file: it stops at the first
 * error and names its line. */
static void exec_gnuplot(int dirfd, int in, int errfd)
{
	int null = open("/dev/null", O_RDWR);

	if (null < 0 || dup2(in, STDIN_FILENO) < 0 || dup2(null, STDOUT_FILENO) < 0 ||
	    dup2(errfd, STDERR_FILENO) < 0 || fchdir(dirfd) < 0)
		_exit(127);
	execlp("gnuplot", "gnuplot", "/dev/stdin", (char *)NULL);
	dprintf(STDERR_FILENO, "cannot run gnuplot: %s\n", strerror(errno));
	_exit(127);
}

/* The message that matters is usually gnuplot's last non-empty line;
 * "/dev/stdin" in it is NAME.gp, which the message names already. */
static void last_line(char *text)
{
	static const char stdin_name[] = "\"/dev/stdin\" ";
	char *end = text + strlen(text), *start;

	while (end > text && (end[-1] == '\n' || end[-1] == ' '))
		*--end = '\0';
	start = strrchr(text, '\n');
	if (start)
		memmove(text, start + 1, strlen(start + 1) + 1);
	if (!strncmp(text, stdin_name, sizeof(stdin_name) - 1))
		memmove(text, text + sizeof(stdin_name) - 1, strlen(text) - sizeof(stdin_name) + 2);
}

static pid_t start_gnuplot(int dirfd, int in[2], int errp[2])
{
	pid_t pid;

	if (pipe2(in, O_CLOEXEC))
		return -1;
	if (pipe2(errp, O_CLOEXEC)) {
		close(in[0]);
		close(in[1]);
		return -1;
	}
	pid = fork();
	if (pid == 0)
		exec_gnuplot(dirfd, in[0], errp[1]);
	close(in[0]);
	close(errp[1]);
	if (pid < 0) {
		close(in[1]);
		close(errp[0]);
	}
	return pid;
}

static int run_gnuplot(struct plot_ctx *ctx, const char *name, int dirfd)
{
	char msg[2048];
	struct gp_io io = { .script = ctx->gpbuf, .len = ctx->gplen, .first = msg,
			    .cap = sizeof(msg) };
	int in[2], errp[2], status = 0;
	bool done;
	pid_t pid = start_gnuplot(dirfd, in, errp);

	if (pid < 0)
		return errf(ctx->err, ctx->errlen, errno, "cannot run gnuplot: %s", strerror(errno));
	io.in = in[1];
	io.errfd = errp[0];
	done = gp_io_run(&io);
	close(errp[0]);
	if (!done)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!done)
		return errf(ctx->err, ctx->errlen, ETIMEDOUT, "gnuplot ran over %d s on %s/%s.gp",
			    GNUPLOT_DEADLINE_MS / 1000, ctx->dir, name);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	last_line(msg);
	return errf(ctx->err, ctx->errlen, EIO, "gnuplot failed on %s/%s.gp: %s", ctx->dir, name,
		    msg[0] ? msg : "no message");
}

int fig_draw(struct plot_ctx *ctx, const char *name)
{
	static const char *const ext[] = { "dat", "gp", "png", "svg" };
	char file[ARRAY_SIZE(ext)][FIG_NAME_MAX + 8];
	struct outstage st;
	int ret = outstage_open(&st, ctx->od, ctx->err, ctx->errlen);

	if (ret)
		return ret;
	for (size_t i = 0; !ret && i < ARRAY_SIZE(ext); i++) {
		snprintf(file[i], sizeof(file[i]), "%s.%s", name, ext[i]);
		ret = outstage_expect(&st, file[i], ctx->err, ctx->errlen);
	}
	if (!ret)
		ret = outstage_write(&st, file[0], ctx->datbuf, ctx->datlen, ctx->err, ctx->errlen);
	if (!ret)
		ret = outstage_write(&st, file[1], ctx->gpbuf, ctx->gplen, ctx->err, ctx->errlen);
	if (!ret)
		ret = run_gnuplot(ctx, name, st.dir.fd);
	if (!ret)
		ret = outstage_commit(&st, ctx->err, ctx->errlen);
	outstage_close(&st);
	return ret;
}
