// SPDX-License-Identifier: MIT
/*
 * examples.c - run the two example programs (found next to this test, in
 * ../examples/), ipcring-server and ipcring-client, and check what they
 * say and how they end:
 *  - a client's round trips all complete and come back intact (it exits 0
 *    and says so), and the server's count of that client's requests is the
 *    client's count; the server listened on a name in the per-user
 *    directory and removed its socket file when it exited (-n 1);
 *  - two clients at once on the one server thread both complete;
 *  - a client SIGKILLed mid-flood is reported by the server as died, and
 *    the server goes on (and exits after -n clients);
 *  - a server SIGKILLed mid-flood makes its client fail (exit 1) in 2 s;
 *  - bad arguments exit 2 with a usage line.
 * Who may connect (as root, with util-linux's setpriv, on abstract names):
 * a client of uid 65534 is refused by a root server, on both sides with
 * the reason, and the server then serves a root client; a root client
 * refuses a server of uid 65534 (a squatter) unless -u trusts it; a server
 * with -u 65534 serves a client of that uid.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tutil.h"

static char dir[PATH_MAX];
static char tmp[] = "/tmp/ipcring-examples.XXXXXX";
static const char *setpriv;
#define MAX_KIDS 16	/* examples running at once, at most */
static pid_t kids[MAX_KIDS];
static int seq;		/* names: one per server */

/* at exit, a failed check included: no example left running, no file */
static void cleanup(void)
{
	char path[sizeof(tmp) + 300];
	struct dirent *e;
	DIR *d;

	for (unsigned i = 0; i < MAX_KIDS; i++)
		if (kids[i] > 0 && kill(kids[i], SIGKILL) == 0)
			waitpid(kids[i], NULL, 0);
	d = opendir(tmp);
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmp, e->d_name);
		if (unlink(path) && errno == EISDIR)
			rmdir(path);	/* ipcring/, empty once its servers are gone */
	}
	if (d)
		closedir(d);
	rmdir(tmp);
}

#define NOBODY "65534"

/* Start examples/@prog with @argv (argv[0] included); @as_nobody runs it
 * through setpriv as uid/gid 65534; its stdout goes to tmp/@tag.out and
 * its stderr to tmp/@tag.err. */
static pid_t spawn(const char *prog, char *const argv[], int as_nobody, const char *tag)
{
	char path[PATH_MAX + 64], out[sizeof(tmp) + 64], err[sizeof(tmp) + 64];
	char *args[16];
	unsigned k;
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
	snprintf(out, sizeof(out), "%s/%s.out", tmp, tag);
	snprintf(err, sizeof(err), "%s/%s.err", tmp, tag);
	for (k = 0; k < MAX_KIDS && kids[k] > 0; k++)
		;
	T_ASSERT(k < MAX_KIDS);
	pid = fork();
	T_ASSERT(pid >= 0);
	if (pid == 0) {
		/* opened before setpriv drops to uid 65534 */
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (o < 0 || e < 0)
			_exit(126);
		dup2(o, STDOUT_FILENO);
		dup2(e, STDERR_FILENO);
		execv(as_nobody ? setpriv : path, args);
		_exit(127);
	}
	kids[k] = pid;
	return pid;
}

/* exit status of @pid, or -1 if it does not end within @ms */
static int reap(pid_t pid, int ms)
{
	int st, ret = -1;

	for (; ms > 0; ms -= 10) {
		if (waitpid(pid, &st, WNOHANG) == pid) {
			ret = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			break;
		}
		usleep(10000);
	}
	if (ret < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	for (unsigned i = 0; i < MAX_KIDS; i++)
		if (kids[i] == pid)
			kids[i] = 0;
	return ret;
}

/* tmp/@file's text (up to 4 KiB) */
static void slurp(const char *file, char *buf, size_t cap)
{
	char path[sizeof(tmp) + 64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmp, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? 0 : read(fd, buf, cap - 1);
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
}

/* tmp/@file holds @want */
static void expect_text(const char *file, const char *want)
{
	char buf[4096];

	slurp(file, buf, sizeof(buf));
	if (!strstr(buf, want))
		T_FAIL("%s says \"%s\", expected it to say \"%s\"", file, buf, want);
}

/* Wait until tmp/@file holds @want (a program's progress line), for at
 * most @ms; fail naming what it said instead. */
static void await_text(const char *file, const char *want, int ms)
{
	char buf[4096];

	for (; ms > 0; ms -= 10) {
		slurp(file, buf, sizeof(buf));
		if (strstr(buf, want))
			return;
		usleep(10000);
	}
	T_FAIL("%s still says \"%s\" after the deadline, expected \"%s\"", file, buf, want);
}

static void new_name(char *name, size_t cap, int abstract)
{
	snprintf(name, cap, "%sipcring-example-%d-%d", abstract ? "@" : "", (int)getpid(), ++seq);
}

/* One server (-n 1) on a name in the per-user directory, one client. */
static void test_round_trips(void)
{
	char name[64], path[sizeof(tmp) + 128];
	char *sargv[] = { "ipcring-server", "-n", "1", name, NULL };
	char *cargv[] = { "ipcring-client", name, "2000", "100", NULL };
	struct stat st;
	pid_t s, c;

	new_name(name, sizeof(name), 0);
	s = spawn("ipcring-server", sargv, 0, "s1");
	await_text("s1.out", "server: listening on", 10000);
	snprintf(path, sizeof(path), "%s/ipcring/%s", tmp, name);
	T_ASSERT(stat(path, &st) == 0 && S_ISSOCK(st.st_mode));
	c = spawn("ipcring-client", cargv, 0, "c1");
	T_EQ(reap(c, 30000), 0);
	expect_text("c1.out", "client: 2000 round trips of 100 bytes, all replies intact");
	T_EQ(reap(s, 5000), 0);
	expect_text("s1.out", "connected");
	expect_text("s1.out", "gone (closed): 2000 requests, 200000 bytes, 2000 replies");
	if (stat(path, &st) == 0)
		T_FAIL("the server left its socket %s behind", path);
}

/* Two clients at once on one server thread. */
static void test_two_clients(void)
{
	char name[64];
	char *sargv[] = { "ipcring-server", "-n", "2", name, NULL };
	char *cargv[] = { "ipcring-client", name, "20000", "64", NULL };
	pid_t s, c1, c2;

	new_name(name, sizeof(name), 1);
	s = spawn("ipcring-server", sargv, 0, "s2");
	await_text("s2.out", "server: listening on", 10000);
	c1 = spawn("ipcring-client", cargv, 0, "c2a");
	c2 = spawn("ipcring-client", cargv, 0, "c2b");
	T_EQ(reap(c1, 60000), 0);
	T_EQ(reap(c2, 60000), 0);
	expect_text("c2a.out", "client: 20000 round trips of 64 bytes, all replies intact");
	expect_text("c2b.out", "client: 20000 round trips of 64 bytes, all replies intact");
	T_EQ(reap(s, 5000), 0);
	expect_text("s2.out", "gone (closed): 20000 requests");
}

/* A client killed mid-flood: the server says it died, and goes on. */
static void test_client_killed(void)
{
	char name[64];
	char *sargv[] = { "ipcring-server", "-n", "2", name, NULL };
	char *cargv[] = { "ipcring-client", name, "1000000000", "64", NULL };
	char *c2argv[] = { "ipcring-client", name, "100", "64", NULL };
	pid_t s, c;

	new_name(name, sizeof(name), 1);
	s = spawn("ipcring-server", sargv, 0, "s3");
	await_text("s3.out", "server: listening on", 10000);
	c = spawn("ipcring-client", cargv, 0, "c3");
	await_text("s3.out", "connected", 10000);
	kill(c, SIGKILL);
	T_EQ(reap(c, 2000), 128 + SIGKILL);
	await_text("s3.out", "gone (died)", 2000);
	c = spawn("ipcring-client", c2argv, 0, "c3b");
	T_EQ(reap(c, 30000), 0);
	T_EQ(reap(s, 5000), 0);
	expect_text("s3.out", "gone (closed): 100 requests");
}

/* A server killed mid-flood: its client fails within 2 s. */
static void test_server_killed(void)
{
	char name[64];
	char *sargv[] = { "ipcring-server", name, NULL };
	char *cargv[] = { "ipcring-client", name, "1000000000", "64", NULL };
	pid_t s, c;

	new_name(name, sizeof(name), 1);
	s = spawn("ipcring-server", sargv, 0, "s4");
	await_text("s4.out", "server: listening on", 10000);
	c = spawn("ipcring-client", cargv, 0, "c4");
	await_text("s4.out", "connected", 10000);
	kill(s, SIGKILL);
	T_EQ(reap(s, 2000), 128 + SIGKILL);
	T_EQ(reap(c, 2000), 1);
	expect_text("c4.err", "ipcring-client: round trip");
}

static void test_bad_args(void)
{
	char *a1[] = { "ipcring-client", "@x", "many", NULL };
	char *a2[] = { "ipcring-client", "@x", "10", "4", NULL };
	char *a3[] = { "ipcring-server", NULL };
	char *a4[] = { "ipcring-server", "-n", "0", "@x", NULL };
	char *a5[] = { "ipcring-client", "-u", "me", "@x", NULL };

	T_EQ(reap(spawn("ipcring-client", a1, 0, "b1"), 5000), 2);
	expect_text("b1.err", "COUNT many: give a number");
	T_EQ(reap(spawn("ipcring-client", a2, 0, "b2"), 5000), 2);
	expect_text("b2.err", "SIZE 4: give a size from 8");
	T_EQ(reap(spawn("ipcring-server", a3, 0, "b3"), 5000), 2);
	expect_text("b3.err", "usage: ipcring-server");
	T_EQ(reap(spawn("ipcring-server", a4, 0, "b4"), 5000), 2);
	expect_text("b4.err", "-n 0: give a number");
	T_EQ(reap(spawn("ipcring-client", a5, 0, "b5"), 5000), 2);
	expect_text("b5.err", "-u me: not a uid");
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

static void test_who(void)
{
	char name[64];
	char *sargv[] = { "ipcring-server", "-n", "1", name, NULL };
	char *sargv_u[] = { "ipcring-server", "-u", NOBODY, "-n", "1", name, NULL };
	char *sargv_0[] = { "ipcring-server", "-u", "0", "-n", "1", name, NULL };
	char *cargv[] = { "ipcring-client", name, "500", "64", NULL };
	char *cargv_u[] = { "ipcring-client", "-u", NOBODY, name, "500", "64", NULL };
	pid_t s, c;

	/* a root server refuses a client of uid 65534, both say why; then it
	 * serves a root client */
	new_name(name, sizeof(name), 1);
	s = spawn("ipcring-server", sargv, 0, "w1");
	await_text("w1.out", "server: listening on", 10000);
	c = spawn("ipcring-client", cargv, 1, "w1c");
	T_EQ(reap(c, 10000), 1);
	expect_text("w1c.err", "uid 65534 (gid 65534, pid");
	expect_text("w1c.err", "is not allowed: this server accepts uid 0 only");
	await_text("w1.err", "ipcring-server: refused a client (pid", 2000);
	expect_text("w1.err", "is not allowed");
	c = spawn("ipcring-client", cargv, 0, "w1d");
	T_EQ(reap(c, 30000), 0);
	T_EQ(reap(s, 5000), 0);
	expect_text("w1.out", "gone (closed): 500 requests");

	/* a server of uid 65534 on the name (a squatter, to a root client):
	 * refused by the client before it sends anything, unless trusted;
	 * this one would let root in */
	new_name(name, sizeof(name), 1);
	s = spawn("ipcring-server", sargv_0, 1, "w2");
	await_text("w2.out", "server: listening on", 10000);
	c = spawn("ipcring-client", cargv, 0, "w2c");
	T_EQ(reap(c, 10000), 1);
	expect_text("w2c.err", "runs as uid 65534");
	expect_text("w2c.err", "not a trusted uid");
	c = spawn("ipcring-client", cargv_u, 0, "w2d");
	T_EQ(reap(c, 30000), 0);
	T_EQ(reap(s, 5000), 0);	/* the refused client never counted */
	expect_text("w2.out", "gone (closed): 500 requests");

	/* -u on the server lets uid 65534 in */
	new_name(name, sizeof(name), 1);
	s = spawn("ipcring-server", sargv_u, 0, "w3");
	await_text("w3.out", "server: listening on", 10000);
	c = spawn("ipcring-client", cargv, 1, "w3c");
	T_EQ(reap(c, 30000), 0);
	expect_text("w3c.out", "client: 500 round trips of 64 bytes, all replies intact");
	T_EQ(reap(s, 5000), 0);
	expect_text("w3.out", "uid 65534");
}

int main(void)
{
	ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);

	T_ASSERT(n > 0);
	dir[n] = 0;
	dirname(dir);
	T_ASSERT(mkdtemp(tmp));
	chmod(tmp, 0755);	/* the examples run as uid 65534 write their output here */
	atexit(cleanup);
	/* names without '@' go to $XDG_RUNTIME_DIR/ipcring/: ours, here */
	setenv("XDG_RUNTIME_DIR", tmp, 1);

	test_bad_args();
	test_round_trips();
	test_two_clients();
	test_client_killed();
	test_server_killed();

	setpriv = find_setpriv();
	if (geteuid() == 0 && setpriv)
		test_who();
	else
		printf("note: who-may-connect cases skipped (need root and setpriv)\n");
	return 0;
}
