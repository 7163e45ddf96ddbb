// SPDX-License-Identifier: MIT
/* ipclab serve: the server side of cells for remote clients (remote.h).
 *
 * One client session at a time on the control listener. Handshakes run
 * beside it, many at once (serve_auth.c): hello (protocol, version, token
 * compared in constant time, wrong guesses slowed down); a client whose
 * token was right gets the session slot, or is answered "busy" (why) and
 * closed when a session runs. A session: welcome (our environment and
 * limits); then any number of "time" probes (the client measures the
 * clock offset) and "cell" requests, each decoded into a plan_spec and
 * checked against the limits (serve_req.c), made into a cell by plan_build
 * and run in a child process of its own, so whatever a cell leaves (memory,
 * descriptors) ends with it. The child tells the client where the
 * measured connection listens ("ready"), runs the server side, and sends
 * its side's record ("done"). Meanwhile this process watches the control
 * connection: a client that vanishes or speaks out of turn gets its cell
 * stopped (SIGTERM, then SIGKILL) and its session dropped; serving goes on. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipclab/cleanup.h"
#include "ipclab/engine.h"
#include "ipclab/netaddr.h"
#include "ipclab/result.h"
#include "ipclab/runner.h"
#include "../report/env_json.h"
#include "proto.h"
#include "serve_auth.h"
#include "serve_req.h"

int serve_opts_defaults(struct serve_opts *o, char *err, size_t errlen)
{
	memset(o, 0, sizeof(*o));
	snprintf(o->listen, sizeof(o->listen), "0.0.0.0:%d", REMOTE_DEFAULT_PORT);
	o->max_size = 64ull << 20;
	o->max_count = 100000000ull;
	o->max_duration_ns = 60 * NSEC_PER_SEC;
	o->max_clients = REMOTE_MAX_CLIENTS;
	o->idle_timeout_ns = 60 * NSEC_PER_SEC;
	if (allow_sched_parse("other,batch,idle", &o->allow, err, errlen))
		return -EINVAL;
	return allow_cpus_own(&o->allow, err, errlen);
}

struct serve {
	const struct serve_opts *o;
	int lfd;		/* control listener */
	int cfd;		/* the session's control connection, or -1 */
	char peer[NET_ADDR_TEXT];
	struct sockaddr_storage local;	/* the control connection's own address */
	struct serve_auth *auth;	/* the handshakes beside the session */
	uint64_t since_ns;		/* the session's start */
	json_t *env;
	unsigned cells;
};

/* Wait for the control connection to be readable (or closed); meanwhile
 * the handshakes go on, and a client whose token is right is told the
 * server is busy: 1 readable, 0 timeout, -EINTR (stop signal). */
static int wait_control(struct serve *s, int ms)
{
	char busy[ERRLEN];
	struct sa_client cl;
	short rev = 0;
	int r;

	snprintf(busy, sizeof(busy), "busy: this server runs one client at a time, and the session of %s has run for %.0f s; try again when it ends",
		 s->peer, (double)(now_ns() - s->since_ns) / 1e9);
	r = sa_poll(s->auth, s->cfd, POLLIN | POLLRDHUP, ms, &rev, busy, &cl);
	if (r < 0)
		return r;
	return rev ? 1 : 0;
}

static int do_listen(struct serve *s, char *err, size_t errlen)
{
	struct sockaddr_storage sa;
	int one = 1, ret;

	/* IPV4:PORT, [IPV6]:PORT, or an address alone on the default port */
	ret = net_parse("--listen", s->o->listen, NET_PORT_ANY, REMOTE_DEFAULT_PORT, &sa, NULL, err,
			errlen);
	if (ret)
		return ret;
	s->lfd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->lfd < 0)
		return errf(err, errlen, errno, "socket: %s", strerror(errno));
	setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* a deep queue: the handshakes take connections as fast as they come */
	if (bind(s->lfd, (struct sockaddr *)&sa, net_len(&sa)) < 0 || listen(s->lfd, 128) < 0)
		return errf(err, errlen, errno, "cannot listen on %s: %s", s->o->listen,
			    strerror(errno));
	return 0;
}

/* ---- the welcome ------------------------------------------------------- */

static int welcome(struct serve *s)
{
	const struct remote_allow *al = &s->o->allow;
	json_t *w = json_pack("{s:s,s:i,s:O,s:{s:I,s:I,s:I,s:i,s:s,s:s}}", "type", "welcome",
			      "version", REMOTE_VERSION, "env", s->env, "limits",
			      "max_size_bytes", (json_int_t)s->o->max_size,
			      "max_count", (json_int_t)s->o->max_count,
			      "max_duration_ns", (json_int_t)s->o->max_duration_ns,
			      "max_clients", (int)s->o->max_clients, "allow_sched", al->sched_text,
			      "allow_cpus", al->cpus_text);
	int ret = w ? rp_send(s->cfd, w) : -ENOMEM;

	json_decref(w);
	return ret;
}

/* ---- one cell -------------------------------------------------------------- */

struct serve_cell {
	struct serve_req req;		/* the request decoded: its option blocks, secret */
	struct plan plan;		/* its one cell (plan_build) */
	struct cell cell;
	struct cell_remote hooks;
	struct serve *s;
	json_t *side;			/* the server side's record (sides_done), NULL until then */
};

/* The request's one cell, made by plan_build as every other cell is. */
static int cell_from_request(struct serve_cell *sc, const json_t *m, char *err, size_t errlen)
{
	struct plan_spec sp;
	int ret = serve_request_spec(sc->s->o, &sc->s->local, m, &sp, &sc->req, err, errlen);

	if (!ret)
		ret = plan_build(&sp, &sc->plan, err, errlen);
	if (!ret && sc->plan.n != 1)
		ret = errf(err, errlen, EPROTO, "the request made %zu cells, not one", sc->plan.n);
	if (!ret)
		sc->cell = sc->plan.cells[0];
	return ret;
}

/* The cell's process on the allowed CPUs only (those it may use of
 * them): unpinned it stays there, and same/split pick the first. */
static int confine(const struct remote_allow *a, char *err, size_t errlen)
{
	cpu_set_t set;
	bool any = false;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return errf(err, errlen, errno, "sched_getaffinity: %s", strerror(errno));
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (CPU_ISSET(c, &set) && (c >= REMOTE_MAX_CPUS || !a->cpus[c]))
			CPU_CLR(c, &set);
		any |= CPU_ISSET(c, &set);
	}
	if (!any)
		return errf(err, errlen, EINVAL, "none of this server's CPUs %s may be used now (ipclab serve --allow-cpus)",
			    a->cpus_text);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		return errf(err, errlen, errno, "sched_setaffinity: %s", strerror(errno));
	return 0;
}

static int hook_created(const struct cell *c, struct tp_channel *ch, char *err, size_t errlen)
{
	const struct serve_cell *sc = c->remote->arg;
	const char *port = tp_setting_get(&ch->settings, "listen_port");
	json_t *o;
	int ret;

	if (!port)
		return errf(err, errlen, EPROTO, "%s: no listening port to hand out", c->tp->name);
	o = json_pack("{s:s,s:i,s:s,s:i}", "type", "ready", "port", atoi(port), "secret",
		      sc->req.secret, "server_cpu", c->pin.server_cpu);
	ret = o ? rp_send(sc->s->cfd, o) : -ENOMEM;
	json_decref(o);
	return ret ? errf(err, errlen, -ret, "control connection: %s", strerror(-ret)) : 0;
}

static int hook_sides_done(const struct cell *c, struct side_stats *sides, unsigned n, char *err,
			   size_t errlen)
{
	struct serve_cell *sc = c->remote->arg;

	(void)n;
	/* now: its histogram is in memory the runner unmaps when the cell ends */
	json_decref(sc->side);
	sc->side = rp_side_json(&sides[0]);
	return sc->side ? 0 : errf(err, errlen, ENOMEM, "out of memory");
}

static json_t *settings_json(const struct tp_settings *st)
{
	json_t *o = json_object();

	for (unsigned i = 0; o && i < st->n; i++)
		json_object_set_new(o, st->kv[i].key, json_string(st->kv[i].val));
	return o;
}

/* The child: run the cell, clean up, say how it went. */
static void cell_child(struct serve_cell *sc, const json_t *req)
{
	struct result *res = calloc(1, sizeof(*res));
	char err[ERRLEN] = "";
	json_t *o;
	int ret;

	prctl(PR_SET_PDEATHSIG, SIGTERM);
	close(sc->s->lfd);
	sa_free(sc->s->auth);	/* the parent's handshakes: its descriptors only */
	sc->s->auth = NULL;
	ret = res ? confine(&sc->s->o->allow, err, sizeof(err)) : -ENOMEM;
	if (!ret)
		ret = cell_from_request(sc, req, err, sizeof(err));
	if (ret) {
		o = json_pack("{s:s,s:s}", "type", "refused", "reason", err[0] ? err : strerror(-ret));
	} else {
		sc->hooks = (struct cell_remote){ .local = CELL_SIDES_SERVER, .created = hook_created,
						  .sides_done = hook_sides_done, .arg = sc };
		sc->cell.remote = &sc->hooks;
		res->cell = sc->cell;
		ret = run_cell(&sc->cell, res);
		cleanup_all();
		o = json_pack("{s:s,s:s,s:s,s:o,s:o*}", "type", "done",
			      "status", res->status == RES_OK ? "ok" : res->status == RES_SKIPPED ? "skipped" : "failed",
			      "reason", res->reason, "settings", settings_json(&res->settings),
			      "side", sc->side);
		sc->side = NULL;	/* the frame holds it */
	}
	if (o)
		(void)rp_send(sc->s->cfd, o);
	json_decref(o);
	free(res);
	plan_free(&sc->plan);
	serve_req_free(&sc->req);
	_exit(ret == -EINTR ? 128 + SIGTERM : 0);
}

/* Stop a cell whose client is gone: TERM, then KILL after 3 s. */
static void stop_child(pid_t pid)
{
	int status;

	kill(pid, SIGTERM);
	for (int i = 0; i < 300; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
}

/* Run one requested cell; 0 to go on with the session, -1 to drop it. */
static int serve_cell(struct serve *s, const json_t *req)
{
	struct serve_cell sc = { .s = s };
	int status, h;
	pid_t pid;

	fflush(NULL);
	h = cleanup_add_id(CL_PID, -1);
	pid = fork();
	if (pid < 0) {
		cleanup_forget(h);
		serve_refuse(s->cfd, "the server cannot fork");
		return 0;
	}
	if (pid == 0)
		cell_child(&sc, req);
	cleanup_set_id(h, pid);
	s->cells++;
	for (;;) {
		int r = wait_control(s, 50);

		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		if (r == -EINTR || r == 1) {
			/* data while the cell runs: the child may just have
			 * sent "done" and be exiting; else the client is gone
			 * or out of turn */
			for (int i = 0; r == 1 && i < 200; i++) {
				if (waitpid(pid, &status, WNOHANG) == pid)
					goto reaped;
				usleep(10000);
			}
			stop_child(pid);
			cleanup_forget(h);
			serve_log(s->o, "%s: cell %u stopped: %s", s->peer, s->cells,
			     r == -EINTR ? "signal" : "client gone or out of turn");
			return -1;
		}
	}
reaped:
	cleanup_forget(h);
	serve_log(s->o, "%s: cell %u %s", s->peer, s->cells,
	     WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "done" : "ended abnormally");
	return 0;
}

static int answer_time(struct serve *s)
{
	json_t *o = json_pack("{s:s,s:I}", "type", "time", "t_ns", (json_int_t)now_ns());
	int ret = o ? rp_send(s->cfd, o) : -ENOMEM;

	json_decref(o);
	return ret;
}

/* The next frame of the session, read as it arrives, the handshakes
 * served meanwhile: a client that sends half a frame and stalls holds up
 * no one else; whole within RP_HANDSHAKE_NS. As rp_recv: 0 with *m,
 * -ETIMEDOUT, -ECONNRESET, -EPROTO (why in err), -EINTR. */
static int session_recv(struct serve *s, json_t **m, char *err, size_t errlen)
{
	uint64_t deadline = now_ns() + RP_HANDSHAKE_NS;
	uint32_t len = 0, got = 0;
	unsigned char hdr[4];
	char *buf = NULL;
	int ret = 0;

	*m = NULL;
	while (!ret) {
		uint32_t want = got < 4 ? 4 : 4 + len;
		ssize_t n = recv(s->cfd, got < 4 ? (char *)hdr + got : buf + got - 4, want - got,
				 MSG_DONTWAIT);

		if (n > 0) {
			got += (uint32_t)n;
			if (got == 4) {
				len = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 |
				      (uint32_t)hdr[2] << 8 | hdr[3];
				if (len == 0 || len > RP_MAX_FRAME)
					ret = errf(err, errlen, EPROTO, "control frame of %u bytes (at most %u)",
						   len, RP_MAX_FRAME);
				else if (!(buf = malloc(len)))
					ret = -ENOMEM;
			} else if (got == 4 + len) {
				ret = rp_parse(buf, len, m, err, errlen);
				break;
			}
		} else if (n == 0) {
			ret = -ECONNRESET;
		} else if (errno != EAGAIN && errno != EINTR) {
			ret = -errno;
		} else if (now_ns() >= deadline) {
			ret = -ETIMEDOUT;
		} else {
			int r = wait_control(s, 100);

			ret = r < 0 ? r : 0;
		}
	}
	free(buf);
	return ret;
}

static void session(struct serve *s)
{
	socklen_t l = sizeof(s->local);
	/* an answer that cannot be written in 10 s: the client stopped
	 * reading; without this, serve would wait for it forever */
	struct timeval tv = { .tv_sec = RP_HANDSHAKE_NS / NSEC_PER_SEC };
	int one = 1, sndbuf = 64 << 10;	/* answers are small: one not read fills it soon */

	setsockopt(s->cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(s->cfd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(s->cfd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	if (getsockname(s->cfd, (struct sockaddr *)&s->local, &l) < 0 || welcome(s))
		return;
	/* a dual-stack listener sees an IPv4 client as ::ffff:a.b.c.d: the
	 * measured connection listens on the plain IPv4 address */
	net_unmap(&s->local);
	s->since_ns = now_ns();
	serve_log(s->o, "%s: session open", s->peer);
	for (;;) {
		char err[ERRLEN];
		json_t *m = NULL;
		uint64_t t0 = now_ns();
		int r;

		do
			r = wait_control(s, 100);
		while (r == 0 && now_ns() - t0 < s->o->idle_timeout_ns);
		if (r <= 0) {
			serve_log(s->o, "%s: %s", s->peer, r ? "stopped by a signal" : "idle too long, dropped");
			return;
		}
		r = session_recv(s, &m, err, sizeof(err));
		if (r) {
			serve_log(s->o, "%s: session closed (%s)", s->peer,
				  r == -ECONNRESET ? "client left" : r == -EPROTO ? err :
				  r == -ETIMEDOUT ? "a frame not whole within 10 s" : strerror(-r));
			if (r == -EPROTO)	/* told why */
				serve_refuse(s->cfd, err);
			return;
		}
		if (!strcmp(rp_type(m), "time"))
			r = answer_time(s);
		else if (!strcmp(rp_type(m), "cell"))
			r = serve_cell(s, m);
		else if (!strcmp(rp_type(m), "bye"))
			r = -1;
		else {
			serve_refuse(s->cfd, "unknown request");
			r = -1;
		}
		json_decref(m);
		if (r) {
			if (r != -1)
				serve_log(s->o, "%s: session closed (an answer: %s)", s->peer,
					  r == -EAGAIN ? "not read by the client within 10 s" : strerror(-r));
			return;
		}
	}
}

/* Handshakes until a client's token is right, then its session; again
 * (once: one session). */
static int serve_loop(struct serve *s)
{
	while (!runner_interrupted) {
		struct sa_client cl;
		int r = sa_poll(s->auth, -1, 0, 500, NULL, NULL, &cl);

		if (r <= 0)
			continue;
		s->cfd = cl.fd;
		memcpy(s->peer, cl.peer, sizeof(s->peer));
		session(s);
		close(s->cfd);
		s->cfd = -1;
		if (s->o->once)
			break;
	}
	return runner_interrupted ? 128 + runner_interrupted : 0;
}

int remote_serve(const struct serve_opts *o, char *err, size_t errlen)
{
	struct serve s = { .o = o, .lfd = -1, .cfd = -1 };
	struct env_info *env = calloc(1, sizeof(*env));
	int ret;

	if (!env)
		return -ENOMEM;
	env_collect(env);
	s.env = env_json_object(env);
	free(env);
	if (!s.env)
		return -ENOMEM;
	ret = do_listen(&s, err, errlen);
	if (!ret && !(s.auth = sa_new(o, s.lfd)))
		ret = errf(err, errlen, ENOMEM, "out of memory");
	if (!ret) {
		serve_log(o, "listening on %s", o->listen);
		ret = serve_loop(&s);
	}
	sa_free(s.auth);
	if (s.lfd >= 0)
		close(s.lfd);
	json_decref(s.env);
	return ret;
}
