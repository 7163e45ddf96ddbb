// SPDX-License-Identifier: MIT
/* nng-ipc, nng-inproc (nng.c): nng's errors as errno values, the options
 * every socket of a cell gets, the settings read back at create and the
 * probe. In process mode the parent never starts nng (a child forked after
 * that aborts in its first nng call), so both read back and probe run in a
 * short helper child (nn_in_child). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipclab/cleanup.h"
#include "ipclab/transport.h"
#include "ipclab/util.h"
#include "nng_probe.h"
#include "tp_remote.h"

#ifdef HAVE_NNG

#include <nng/protocol/pair0/pair.h>

/* What a socket set up as the endpoints' really has (read back). */
struct nn_report {
	int rv;			/* 0, or the nng error of the failing step */
	int recvbuf, sendbuf;
	size_t recvmax;
	int recvtimeo, sendtimeo;
	int nodelay, keepalive;	/* nng-tcp: what a dialer of the socket gets */
};

/* nng's errors as errno values (where nng says "system error", its errno). */
int nn_errno(int rv)
{
	if (rv & NNG_ESYSERR)
		return rv & ~NNG_ESYSERR;
	switch (rv) {
	case NNG_EINTR: return EINTR;
	case NNG_ENOMEM: return ENOMEM;
	case NNG_EINVAL: return EINVAL;
	case NNG_EBUSY: return EBUSY;
	case NNG_ETIMEDOUT: return ETIMEDOUT;
	case NNG_ECONNREFUSED: return ECONNREFUSED;
	case NNG_ECLOSED: return EPIPE;
	case NNG_EAGAIN: return EAGAIN;
	case NNG_ENOTSUP: return ENOTSUP;
	case NNG_EADDRINUSE: return EADDRINUSE;
	case NNG_EMSGSIZE: return EMSGSIZE;
	case NNG_ECONNABORTED: return ECONNABORTED;
	case NNG_ECONNRESET: return ECONNRESET;
	case NNG_ENOENT: return ENOENT;
	case NNG_EPERM: return EPERM;
	case NNG_ENOSPC: return ENOSPC;
	case NNG_ENOFILES: return EMFILE;
	case NNG_EADDRINVAL: return EADDRNOTAVAIL;
	default: return EIO;
	}
}

int nn_err(char *err, size_t errlen, const char *tp, const char *what, int rv)
{
	int e = nn_errno(rv);

	if (e == EMFILE || e == ENFILE)
		return errf(err, errlen, e, "%s: %s: %s; raise the open-file limit: ulimit -n", tp,
			    what, nng_strerror(rv));
	return errf(err, errlen, e, "%s: %s: %s", tp, what, nng_strerror(rv));
}

/* The largest message nng accepts on a socket of this cell: the cell's
 * size, or a hello (nng-tcp between hosts: the remote one) where that is
 * larger. */
static size_t nn_recvmax(const struct tp_config *cfg)
{
	size_t h = sizeof(struct nn_hello) > sizeof(struct tp_rhello) ? sizeof(struct nn_hello) :
									 sizeof(struct tp_rhello);

	return cfg->msg_size > h ? cfg->msg_size : h;
}

/* The options every socket of the cell gets. */
int nn_setup(nng_socket s, const struct tp_config *cfg)
{
	const struct nn_opts *o = cfg->opts;
	int rv;

	if ((rv = nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, NN_SLICE_MS)) ||
	    (rv = nng_socket_set_ms(s, NNG_OPT_SENDTIMEO, NN_SLICE_MS)) ||
	    (rv = nng_socket_set_size(s, NNG_OPT_RECVMAXSZ, nn_recvmax(cfg))))
		return rv;
	if (o && o->buf &&
	    ((rv = nng_socket_set_int(s, NNG_OPT_RECVBUF, (int)o->buf)) ||
	     (rv = nng_socket_set_int(s, NNG_OPT_SENDBUF, (int)o->buf))))
		return rv;
	return 0;
}

/* TCP's options as nng sets them on its connections (a dialer made, never
 * started, tells them). */
static void nn_read_tcp(nng_socket s, struct nn_report *r)
{
	nng_dialer d;
	bool v;

	if (nng_dialer_create(&d, s, "tcp://127.0.0.1:1"))
		return;
	if (nng_dialer_get_bool(d, NNG_OPT_TCP_NODELAY, &v) == 0)
		r->nodelay = v;
	if (nng_dialer_get_bool(d, NNG_OPT_TCP_KEEPALIVE, &v) == 0)
		r->keepalive = v;
	nng_dialer_close(d);
}

static void nn_read_report(const struct tp_config *cfg, struct nn_report *r)
{
	nng_socket s;
	nng_duration d;

	memset(r, 0, sizeof(*r));
	r->recvbuf = r->sendbuf = r->recvtimeo = r->sendtimeo = r->nodelay = r->keepalive = -1;
	r->rv = nng_pair0_open(&s);
	if (r->rv)
		return;
	r->rv = nn_setup(s, cfg);
	if (!r->rv) {
		nng_socket_get_int(s, NNG_OPT_RECVBUF, &r->recvbuf);
		nng_socket_get_int(s, NNG_OPT_SENDBUF, &r->sendbuf);
		nng_socket_get_size(s, NNG_OPT_RECVMAXSZ, &r->recvmax);
		if (nng_socket_get_ms(s, NNG_OPT_RECVTIMEO, &d) == 0)
			r->recvtimeo = d;
		if (nng_socket_get_ms(s, NNG_OPT_SENDTIMEO, &d) == 0)
			r->sendtimeo = d;
		nn_read_tcp(s, r);
	}
	nng_close(s);
}

/* Run fn in a short child of this process (which must not start nng
 * itself): the child writes len bytes of its answer to a pipe. Returns 0,
 * -ENOTRECOVERABLE when the child aborted (nng's abort when it was started
 * in this process before the fork), -ECHILD when another signal killed it,
 * or -errno. */
static int nn_in_child(const struct tp_config *cfg, void (*fn)(const struct tp_config *, void *),
		       void *out, size_t len)
{
	int p[2], h, st = 0;
	char name[17] = "";
	pid_t pid;
	ssize_t got = 0;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	h = cleanup_add_id(CL_PID, -1);
	if (h < 0) {
		close(p[0]);
		close(p[1]);
		return h;
	}
	/* not an endpoint: ps and the fault tests tell it by its name, which
	 * it has from birth (this thread's own name is back at once) */
	prctl(PR_GET_NAME, name);
	prctl(PR_SET_NAME, "ipclab-nng");
	pid = fork();
	if (pid != 0)
		prctl(PR_SET_NAME, name);
	if (pid < 0) {
		int e = errno;

		cleanup_forget(h);
		close(p[0]);
		close(p[1]);
		return -e;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		/* gone with the parent, as the endpoints are */
		prctl(PR_SET_PDEATHSIG, SIGKILL);

		/* nng's abort message is the parent's to explain */
		if (null >= 0)
			dup2(null, 2);
		signal(SIGPIPE, SIG_IGN);
		close(p[0]);
		fn(cfg, out);
		_exit(write(p[1], out, len) == (ssize_t)len ? 0 : 1);
	}
	cleanup_set_id(h, pid);
	close(p[1]);
	for (size_t off = 0; off < len;) {
		ssize_t n = read(p[0], (char *)out + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
		got = (ssize_t)off;
	}
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	cleanup_forget(h);
	if (WIFSIGNALED(st))
		return WTERMSIG(st) == SIGABRT ? -ENOTRECOVERABLE : -ECHILD;
	return got == (ssize_t)len && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

static void nn_child_report(const struct tp_config *cfg, void *out)
{
	nn_read_report(cfg, out);
}

static void nn_child_try(const struct tp_config *cfg, void *out)
{
	nng_socket s;
	int *rv = out;

	(void)cfg;
	*rv = nng_pair0_open(&s);
	if (!*rv)
		nng_close(s);
}

#define NN_FORKED_WHY                                                                     \
	"nng was already started in this process (by an nng endpoint run as a thread of it), and nng " \
	"aborts in a child forked after that (it is not fork-safe): run process-mode "  \
	"nng cells in an ipclab run of their own"

int nn_probe(const struct tp_config *cfg, char *why, size_t len)
{
	int rv = 0, ret;

	if (cfg->threads)
		return 0;
	ret = nn_in_child(cfg, nn_child_try, &rv, sizeof(rv));
	if (ret == -ENOTRECOVERABLE)
		return errf(why, len, ENOTRECOVERABLE, "%s", NN_FORKED_WHY);
	if (ret)
		return errf(why, len, -ret, "cannot check nng in a child process: %s",
			    strerror(-ret));
	if (rv)
		return errf(why, len, nn_errno(rv), "nng cannot open a pair0 socket: %s%s",
			    nng_strerror(rv), nn_errno(rv) == EMFILE || nn_errno(rv) == ENFILE ?
			    "; raise the open-file limit: ulimit -n" : "");
	return 0;
}

int nn_report(struct tp_channel *ch, bool tcp, char *err, size_t errlen)
{
	struct nn_report r;
	int ret = 0;

	if (ch->cfg->threads)
		nn_read_report(ch->cfg, &r);
	else
		ret = nn_in_child(ch->cfg, nn_child_report, &r, sizeof(r));
	if (ret == -ENOTRECOVERABLE)
		return errf(err, errlen, ENOTRECOVERABLE, "%s: %s", ch->tp->name, NN_FORKED_WHY);
	if (ret)
		return errf(err, errlen, -ret, "%s: reading the settings back in a child: %s",
			    ch->tp->name, strerror(-ret));
	if (r.rv)
		return nn_err(err, errlen, ch->tp->name, "setting up a pair0 socket", r.rv);
	tp_setting(ch, "nng_version", "%s", nng_version());
	tp_setting(ch, "nng_socket", "pair0 per client");
	tp_setting(ch, "recvbuf_msgs", "%d", r.recvbuf);
	tp_setting(ch, "sendbuf_msgs", "%d", r.sendbuf);
	tp_setting(ch, "recv_max_bytes", "%zu", r.recvmax);
	tp_setting(ch, "timeout_slice_ms", "%d/%d", r.recvtimeo, r.sendtimeo);
	if (tcp) {
		tp_setting(ch, "tcp_nodelay", "%d", r.nodelay);
		tp_setting(ch, "tcp_keepalive", "%d", r.keepalive);
	}
	return 0;
}
#endif /* HAVE_NNG */
