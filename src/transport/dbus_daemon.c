// SPDX-License-Identifier: MIT
/* The private dbus-daemon of a dbus cell (dbus_daemon.h).
 *
 * The config (written 0600 into the cell's private directory) makes a bus
 * that listens on one unix socket there, authenticates with EXTERNAL only
 * and lets nobody but this uid connect; every connected peer may own any
 * name and send to and receive from any other. The daemon runs with
 * --nofork and --print-address=FD: the address it prints on that pipe is
 * the sign that it listens. Its stderr goes to a log file beside the
 * socket, read back when it fails to start.
 *
 * The child between fork and exec: PR_SET_PDEATHSIG (gone with ipclab
 * even after a SIGKILL), its own process group (a terminal's ^C reaches
 * ipclab, which stops the daemon itself), the signal mask and ignored
 * signals reset, nothing but async-signal-safe calls. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ipclab/cleanup.h"
#include "ipclab/util.h"
#include "dbus_daemon.h"

#define DBD_START_MS 10000	/* the daemon's start, at most */
#define DBD_VERSION_MS 5000	/* dbus-daemon --version, at most */
#define DBD_STOP_MS 2000	/* after SIGTERM, before SIGKILL */
#define DBD_SLICE_MS 100	/* a wait's slice: the stop word looked at between */

int dbd_find(char *exe, size_t len)
{
	const char *path = getenv("PATH");
	const char *p = path && *path ? path : "/usr/bin:/bin";

	while (*p) {
		size_t n = strcspn(p, ":");

		if (n && (size_t)snprintf(exe, len, "%.*s/dbus-daemon", (int)n, p) < len &&
		    access(exe, X_OK) == 0)
			return 0;
		p += n + (p[n] == ':');
	}
	exe[0] = '\0';
	return -ENOENT;
}

/* A D-Bus address value: bytes outside [-0-9A-Za-z_/.*] as %xx (which also
 * keeps it safe inside the XML config). */
static int dbd_escape(char *out, size_t len, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		bool plain = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
			     (c >= 'A' && c <= 'Z') || strchr("-_/.*", c);

		if (o + (plain ? 1 : 3) >= len)
			return -ENAMETOOLONG;
		if (plain) {
			out[o++] = (char)c;
		} else {
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = '\0';
	return 0;
}

static int dbd_write_conf(const struct dbd *d, const char *addr, uint64_t max_msg, char *err,
			  size_t errlen)
{
	char buf[4096];
	int fd, n;

	n = snprintf(buf, sizeof(buf),
		     "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
		     " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
		     "<!-- ipclab: a private bus for one cell -->\n"
		     "<busconfig>\n"
		     "  <type>session</type>\n"
		     "  <listen>%s</listen>\n"
		     "  <auth>EXTERNAL</auth>\n"
		     "  <policy context=\"default\">\n"
		     "    <deny user=\"*\"/>\n"
		     "    <allow user=\"%u\"/>\n"
		     "    <allow send_destination=\"*\"/>\n"
		     "    <allow receive_sender=\"*\"/>\n"
		     "    <allow own=\"*\"/>\n"
		     "  </policy>\n"
		     "  <limit name=\"max_message_size\">%llu</limit>\n"
		     "  <limit name=\"max_incoming_bytes\">%llu</limit>\n"
		     "  <limit name=\"max_outgoing_bytes\">%llu</limit>\n"
		     "  <limit name=\"max_replies_per_connection\">1024</limit>\n"
		     "  <limit name=\"reply_timeout\">3600000</limit>\n"
		     "</busconfig>\n",
		     addr, (unsigned)geteuid(), (unsigned long long)max_msg,
		     (unsigned long long)(2 * max_msg), (unsigned long long)(4 * max_msg + 65536));
	if (n < 0 || (size_t)n >= sizeof(buf))
		return errf(err, errlen, ENAMETOOLONG, "dbus: the daemon's config does not fit");
	fd = open(d->conf, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return errf(err, errlen, errno, "dbus: %s: %s", d->conf, strerror(errno));
	if (full_write(fd, buf, (size_t)n) != n) {
		int e = errno ? errno : EIO;

		close(fd);
		return errf(err, errlen, e, "dbus: writing %s: %s", d->conf, strerror(e));
	}
	close(fd);
	return 0;
}

/* In the child, before exec: async-signal-safe calls only. */
static void __attribute__((noreturn))
dbd_child(pid_t parent, int in, int out, int errfd, int addrfd, char *const argv[])
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t none;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);	/* ipclab is gone already */
	setpgid(0, 0);
	for (int s = 1; s < NSIG; s++)
		sigaction(s, &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(errfd, 2) < 0 ||
	    (addrfd >= 0 && dup2(addrfd, 3) < 0))
		_exit(127);
	/* dup2 onto itself keeps close-on-exec: clear it on what exec keeps */
	for (int fd = 0; fd <= (addrfd >= 0 ? 3 : 2); fd++)
		fcntl(fd, F_SETFD, 0);
	execv(argv[0], argv);
	_exit(127);
}

/* Fork and exec argv, registered (CL_PID) before the fork; stdout is
 * `out`, stderr `errfd`, the pipe end addrfd (or -1) its fd 3. */
static int dbd_spawn(char *const argv[], int out, int errfd, int addrfd, int *handle, pid_t *pid)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC), h;
	pid_t me = getpid();
	char name[17] = "";

	if (null < 0)
		return -errno;
	h = cleanup_add_id(CL_PID, -1);
	if (h < 0) {
		close(null);
		return h;
	}
	/* not an endpoint: ps and the fault tests tell it by its name, which
	 * it has from birth (this thread's own name is back at once) */
	prctl(PR_GET_NAME, name);
	prctl(PR_SET_NAME, "ipclab-dbusd");
	*pid = fork();
	if (*pid != 0)
		prctl(PR_SET_NAME, name);
	if (*pid == 0)
		dbd_child(me, null, out < 0 ? null : out, errfd < 0 ? null : errfd, addrfd, argv);
	if (*pid < 0) {
		int e = errno;

		cleanup_forget(h);
		close(null);
		return -e;
	}
	cleanup_set_id(h, *pid);
	close(null);
	*handle = h;
	return 0;
}

/* Read a line (up to len - 1 bytes, without its newline) from fd within
 * ms milliseconds, the stop word looked at every slice. Returns its
 * length, -EPIPE at EOF before a newline, -ETIMEDOUT or -EINTR. */
static ssize_t dbd_read_line(int fd, char *buf, size_t len, unsigned ms, const _Atomic int *stop)
{
	size_t got = 0;

	for (unsigned waited = 0;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char *nl;
		ssize_t n;
		int r;

		if (stop_requested(stop))
			return -EINTR;
		r = poll(&p, 1, DBD_SLICE_MS);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r <= 0) {
			if ((waited += DBD_SLICE_MS) >= ms)
				return -ETIMEDOUT;
			continue;
		}
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		got += (size_t)n;
		buf[got] = '\0';
		nl = strchr(buf, '\n');
		if (nl) {
			*nl = '\0';
			return nl - buf;
		}
		if (got == len - 1)
			return -EMSGSIZE;
	}
}

/* Reap pid within ms: 1 reaped, 0 still running. */
static int dbd_reap(pid_t pid, unsigned ms, int *status)
{
	struct timespec slice = { 0, 5 * 1000000L };
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);

	for (unsigned waited = 0;; waited += 5) {
		pid_t w = waitpid(pid, status, WNOHANG);

		if (w == pid || (w < 0 && errno == ECHILD)) {
			if (pfd >= 0)
				close(pfd);
			return 1;
		}
		if (waited >= ms)
			break;
		if (pfd >= 0) {
			struct pollfd p = { .fd = pfd, .events = POLLIN };

			poll(&p, 1, (int)(ms - waited < 5 ? ms - waited : 5));
		} else {
			nanosleep(&slice, NULL);
		}
	}
	if (pfd >= 0)
		close(pfd);
	return 0;
}

/* dbus-daemon --version, in a child of its own: the number of its first
 * line ("D-Bus Message Bus Daemon 1.14.10"). */
static void dbd_version(struct dbd *d, const _Atomic int *stop)
{
	char *argv[] = { d->exe, (char *)"--version", NULL };
	char line[128];
	int p[2], h = -1, st;
	pid_t pid;

	snprintf(d->version, sizeof(d->version), "unknown");
	if (pipe2(p, O_CLOEXEC) < 0)
		return;
	if (dbd_spawn(argv, p[1], -1, -1, &h, &pid) == 0) {
		close(p[1]);
		if (dbd_read_line(p[0], line, sizeof(line), DBD_VERSION_MS, stop) > 0) {
			const char *v = strrchr(line, ' ');

			snprintf(d->version, sizeof(d->version), "%.31s", v ? v + 1 : line);
		}
		if (dbd_reap(pid, DBD_VERSION_MS, &st))
			cleanup_forget(h);
		else
			cleanup_run_one(h);
	} else {
		close(p[1]);
	}
	close(p[0]);
}

/* The daemon's first words on stderr, for the error of a failed start. */
static void dbd_log_line(const struct dbd *d, char *buf, size_t len)
{
	char text[1024], *s;

	buf[0] = '\0';
	if (read_text_file(d->log, text, sizeof(text)) <= 0)
		return;
	/* skip "dbus-daemon[pid]: " and a warning about the fd limit */
	for (s = strtok(text, "\n"); s; s = strtok(NULL, "\n")) {
		if (strstr(s, "fd limit"))
			continue;
		const char *m = strstr(s, "]: ");

		snprintf(buf, len, ": %s", m ? m + 3 : s);
		return;
	}
}

static int dbd_paths(struct dbd *d, const char *dir, char *err, size_t errlen)
{
	char name[64];

	cleanup_unique_name(name, sizeof(name), "dbus");
	if ((size_t)snprintf(d->sock, sizeof(d->sock), "%s/%s.sock", dir, name) >= sizeof(d->sock))
		return errf(err, errlen, ENAMETOOLONG,
			    "dbus: the bus socket's path %s/%s.sock is longer than a unix socket "
			    "takes (107 bytes); set TMPDIR to a shorter directory", dir, name);
	if ((size_t)snprintf(d->conf, sizeof(d->conf), "%s/%s.conf", dir, name) >= sizeof(d->conf) ||
	    (size_t)snprintf(d->log, sizeof(d->log), "%s/%s.log", dir, name) >= sizeof(d->log))
		return errf(err, errlen, ENAMETOOLONG, "dbus: %s: path too long", dir);
	d->h_sock = cleanup_add(CL_PATH, d->sock);
	d->h_conf = cleanup_add(CL_PATH, d->conf);
	d->h_log = cleanup_add(CL_PATH, d->log);
	if (d->h_sock < 0 || d->h_conf < 0 || d->h_log < 0)
		return errf(err, errlen, ENOMEM, "dbus: cleanup table full");
	return 0;
}

/* Start the daemon; its address read from the pipe. */
static int dbd_launch(struct dbd *d, const _Atomic int *stop, char *err, size_t errlen)
{
	char fdarg[32], confarg[PATH_MAX + 16], why[512];
	char *argv[] = { d->exe, (char *)"--nofork", fdarg, confarg, NULL };
	int p[2], logfd, st = 0, r;
	ssize_t n;

	snprintf(fdarg, sizeof(fdarg), "--print-address=3");
	snprintf(confarg, sizeof(confarg), "--config-file=%s", d->conf);
	logfd = open(d->log, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (logfd < 0)
		return errf(err, errlen, errno, "dbus: %s: %s", d->log, strerror(errno));
	if (pipe2(p, O_CLOEXEC) < 0) {
		r = errno;
		close(logfd);
		return errf(err, errlen, r, "dbus: pipe: %s", strerror(r));
	}
	r = dbd_spawn(argv, -1, logfd, p[1], &d->h_pid, &d->pid);
	close(logfd);
	close(p[1]);
	if (r) {
		close(p[0]);
		return errf(err, errlen, -r, "dbus: starting %s: %s", d->exe, strerror(-r));
	}
	n = dbd_read_line(p[0], d->address, sizeof(d->address), DBD_START_MS, stop);
	close(p[0]);
	if (n > 0)
		return 0;
	if (n == -EINTR)
		return errf(err, errlen, EINTR, "dbus: stopped while dbus-daemon started");
	if (n == -EPIPE && dbd_reap(d->pid, DBD_SLICE_MS, &st)) {
		d->pid = 0;
		cleanup_forget(d->h_pid);
		d->h_pid = -1;
		dbd_log_line(d, why, sizeof(why));
		return errf(err, errlen, ECHILD, "dbus: %s exited (%s %d) before it listened%s",
			    d->exe, WIFSIGNALED(st) ? "signal" : "status",
			    WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), why);
	}
	dbd_log_line(d, why, sizeof(why));
	return errf(err, errlen, n == -ETIMEDOUT ? ETIMEDOUT : -n,
		    "dbus: %s did not print its address within %u s%s", d->exe,
		    DBD_START_MS / 1000, why);
}

int dbd_start(struct dbd *d, const char *dir, uint64_t max_msg, const _Atomic int *stop,
	      char *err, size_t errlen)
{
	char addr[sizeof(d->sock) * 3 + 16], esc[sizeof(d->sock) * 3];
	int ret;

	if (dbd_find(d->exe, sizeof(d->exe)))
		return errf(err, errlen, ENOENT, "dbus: -O via=bus: dbus-daemon not found on PATH; %s",
			    DBD_INSTALL);
	ret = dbd_paths(d, dir, err, errlen);
	if (ret)
		return ret;
	if (dbd_escape(esc, sizeof(esc), d->sock))
		return errf(err, errlen, ENAMETOOLONG, "dbus: %s: path too long", d->sock);
	snprintf(addr, sizeof(addr), "unix:path=%s", esc);
	ret = dbd_write_conf(d, addr, max_msg, err, errlen);
	if (ret)
		return ret;
	dbd_version(d, stop);
	ret = dbd_launch(d, stop, err, errlen);
	if (ret)
		return ret;
	/* the address must be the socket we named: nothing else is trusted */
	if (strncmp(d->address, addr, strlen(addr)) ||
	    (d->address[strlen(addr)] != ',' && d->address[strlen(addr)] != '\0'))
		return errf(err, errlen, EPROTO, "dbus: dbus-daemon printed the address \"%.80s\", "
			    "not %s", d->address, addr);
	/* read at start only: it has done its work */
	cleanup_run_one(d->h_conf);
	d->h_conf = -1;
	return 0;
}

void dbd_stop(struct dbd *d)
{
	int st;

	if (d->pid > 0) {
		kill(d->pid, SIGTERM);
		if (dbd_reap(d->pid, DBD_STOP_MS, &st))
			cleanup_forget(d->h_pid);
		else
			cleanup_run_one(d->h_pid);	/* SIGKILL and reap */
		d->h_pid = -1;
		d->pid = 0;
	} else if (d->h_pid >= 0) {
		cleanup_run_one(d->h_pid);
		d->h_pid = -1;
	}
	/* newest first */
	cleanup_run_one(d->h_log);
	cleanup_run_one(d->h_conf);
	cleanup_run_one(d->h_sock);
	d->h_log = d->h_conf = d->h_sock = -1;
}
