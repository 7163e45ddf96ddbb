// SPDX-License-Identifier: MIT
/*
 * peers.c - only the right peers, with a second uid (65534, through
 * setpriv): the default policy (same uid) refuses it on both sides with a
 * reason; an allowed uid, an allowed gid and a policy callback let it in;
 * a callback's own refusal reason reaches the client; a squatter of uid
 * 65534 that bound the abstract name first is refused by the client, and
 * trusted when the client says so. Needs root and setpriv (else skips).
 *
 * The program runs itself under setpriv as the other uid:
 *   peers --client NAME    connect, one echo, print "rc REASON", exit 0
 *   peers --squat NAME     listen and echo until stdin closes
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tutil.h"

#define OTHER_UID	65534u

static char self[4096];

static int as_client(const char *name)
{
	struct ipcring_conn *c;
	char why[IPCRING_REASON_MAX] = "", buf[8];
	size_t len;
	int r = ipcring_connect(&c, name, NULL, why, sizeof(why));

	if (!r) {
		r = ipcring_conn_send(c, "hi", 3, 0, 2000);
		if (!r)
			r = ipcring_conn_recv(c, buf, sizeof(buf), &len, 2000) == 1 ? 0 : -EIO;
		(void)ipcring_conn_close(c);
	}
	printf("%d %s\n", r, why);
	return 0;
}

static int echo_msg(void *ctx, struct ipcring_conn *c, const void *m, size_t len)
{
	(void)ctx;
	return ipcring_conn_send(c, m, len, 0, 1000);
}

static const struct ipcring_server_ops echo_ops = { .message = echo_msg };

static int allow_any(void *ctx, const struct ipcring_cred *p, char *reason, size_t len)
{
	(void)ctx, (void)p, (void)reason, (void)len;
	return 0;
}

/* A squatter lets anyone in: that is the point of it. */
static int as_squatter(const char *name)
{
	struct ipcring_server_opts any = { .allow = allow_any };
	struct ipcring_server *s;
	char why[IPCRING_REASON_MAX];
	struct pollfd p = { .fd = 0, .events = POLLIN };

	if (ipcring_listen(&s, name, &any, why, sizeof(why)) ||
	    ipcring_server_set_ops(s, &echo_ops, NULL))
		return 1;
	printf("ready\n");
	fflush(stdout);
	while (poll(&p, 1, 0) == 0)
		if (ipcring_server_dispatch(s, 20) < 0)
			return 1;
	ipcring_server_close(s);
	return 0;
}

/* Run this program as the other uid; its stdout line in @out. */
static FILE *spawn_other(const char *mode, const char *name, pid_t *pid, int *in_w)
{
	int out[2], in[2];

	T_EQ(pipe(out), 0);
	T_EQ(pipe(in), 0);
	*pid = fork();
	T_ASSERT(*pid >= 0);
	if (*pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execlp("setpriv", "setpriv", "--reuid", "65534", "--regid", "65534",
		       "--clear-groups", self, mode, name, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	*in_w = in[1];
	return fdopen(out[0], "r");
}

struct srv {
	struct ipcring_server *s;
	_Atomic int stop;
	_Atomic int refused;
	int err;
	struct ipcring_cred who;
	char reason[IPCRING_REASON_MAX];
	pthread_t th;
};

static void on_refused(void *ctx, const struct ipcring_cred *p, int err, const char *r)
{
	struct srv *v = ctx;

	v->err = err;
	v->who = *p;
	snprintf(v->reason, sizeof(v->reason), "%s", r);
	atomic_fetch_add(&v->refused, 1);
}

static const struct ipcring_server_ops srv_ops = { .message = echo_msg, .refused = on_refused };

static void *srv_loop(void *arg)
{
	struct srv *v = arg;

	while (!atomic_load(&v->stop))
		if (ipcring_server_dispatch(v->s, 20) < 0)
			T_FAIL("dispatch");
	return NULL;
}

/* Serve @name with @o; one client of the other uid; its rc and reason. */
static int try_other(const char *name, const struct ipcring_server_opts *o, struct srv *v,
		     char *reason, size_t len)
{
	char line[512] = "";
	pid_t pid;
	int w, st, rc = -1, off = 0;
	FILE *f;

	memset(v, 0, sizeof(*v));
	T_EQ(ipcring_listen(&v->s, name, o, reason, len), 0);
	T_EQ(ipcring_server_set_ops(v->s, &srv_ops, v), 0);
	T_EQ(pthread_create(&v->th, NULL, srv_loop, v), 0);
	f = spawn_other("--client", name, &pid, &w);
	if (!fgets(line, sizeof(line), f))
		T_FAIL("no answer from the client of uid %u", OTHER_UID);
	fclose(f);
	close(w);
	T_EQ(waitpid(pid, &st, 0), pid);
	T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	atomic_store(&v->stop, 1);
	pthread_join(v->th, NULL);
	T_EQ(ipcring_server_close(v->s), 0);
	T_ASSERT(sscanf(line, "%d %n", &rc, &off) == 1);
	line[strcspn(line, "\n")] = '\0';
	snprintf(reason, len, "%s", line + off);
	return rc;
}

static int deny_all(void *ctx, const struct ipcring_cred *p, char *reason, size_t len)
{
	(void)ctx;
	snprintf(reason, len, "uid %u: members only", p->uid);
	return -EACCES;
}

static int allow_other(void *ctx, const struct ipcring_cred *p, char *reason, size_t len)
{
	(void)ctx;
	(void)reason;
	(void)len;
	return p->uid == OTHER_UID ? 0 : -EACCES;
}

static void test_policies(const char *name)
{
	const uint32_t other = OTHER_UID;
	struct ipcring_server_opts uids = { .uids = &other, .nuids = 1 };
	struct ipcring_server_opts gids = { .gids = &other, .ngids = 1 };
	struct ipcring_server_opts cb = { .allow = allow_other };
	struct ipcring_server_opts deny = { .allow = deny_all };
	char why[IPCRING_REASON_MAX];
	struct srv v;

	T_EQ(try_other(name, NULL, &v, why, sizeof(why)), -EACCES);
	printf("refusal (client side): %s\n", why);
	T_ASSERT(strstr(why, "uid 65534") && strstr(why, "not allowed"));
	T_EQ(v.refused, 1);
	T_EQ(v.err, -EACCES);
	T_EQ(v.who.uid, OTHER_UID);
	printf("refusal (server side): %s\n", v.reason);

	T_EQ(try_other(name, &uids, &v, why, sizeof(why)), 0);
	T_EQ(v.refused, 0);
	T_EQ(try_other(name, &gids, &v, why, sizeof(why)), 0);
	T_EQ(try_other(name, &cb, &v, why, sizeof(why)), 0);
	T_EQ(try_other(name, &deny, &v, why, sizeof(why)), -EACCES);
	T_ASSERT(strstr(why, "members only"));
}

static void test_squatter(const char *name)
{
	const uint32_t other = OTHER_UID;
	struct ipcring_connect_opts trust = { .server_uids = &other, .nserver_uids = 1 };
	struct ipcring_conn *c;
	char why[IPCRING_REASON_MAX], line[64];
	pid_t pid;
	int w, st;
	FILE *f = spawn_other("--squat", name, &pid, &w);

	if (!fgets(line, sizeof(line), f) || strcmp(line, "ready\n"))
		T_FAIL("the squatter did not start");
	T_EQ(ipcring_connect(&c, name, NULL, why, sizeof(why)), -EACCES);
	printf("refusal (squatter): %s\n", why);
	T_ASSERT(strstr(why, "uid 65534") && strstr(why, "someone else"));
	/* trusted on purpose: it works */
	T_EQ(ipcring_connect(&c, name, &trust, why, sizeof(why)), 0);
	T_EQ(ipcring_conn_close(c), 0);
	close(w);
	fclose(f);
	T_EQ(waitpid(pid, &st, 0), pid);
	T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(int argc, char **argv)
{
	char name[64];
	ssize_t n;

	signal(SIGPIPE, SIG_IGN);
	if (argc == 3 && !strcmp(argv[1], "--client"))
		return as_client(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "--squat"))
		return as_squatter(argv[2]);
	if (geteuid() != 0) {
		printf("skip: needs root, to run a client as uid %u with setpriv\n", OTHER_UID);
		return T_SKIP;
	}
	if (system("setpriv --version >/dev/null 2>&1") != 0) {
		printf("skip: setpriv not found (util-linux)\n");
		return T_SKIP;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	T_ASSERT(n > 0);
	self[n] = '\0';
	snprintf(name, sizeof(name), "@ipcring-peers-%d", (int)getpid());
	test_policies(name);
	test_squatter(name);
	printf("peers: ok\n");
	return 0;
}
