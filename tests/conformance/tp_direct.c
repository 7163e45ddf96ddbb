// SPDX-License-Identifier: MIT
/* tp_direct: every registered transport, and the skeleton (which is in no
 * registry), driven through its ops alone (no runner, no pattern), for
 * process and thread endpoints and sizes from 16 B to 1 MiB (clamped to max_msg, plus max_msg itself): messages each way with
 * a sequence and payload check, EOF after the peer's close, -EINTR from a
 * blocked recv, several clients where the transport allows, and nothing
 * left behind (POSIX queues, /dev/shm, SysV objects, the private directory).
 * The server is a thread of this process; clients are threads or forked
 * children. Exit 0 pass, 1 fail, 77 nothing ran; one line per failing case. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipclab/cleanup.h"
#include "ipclab/msg.h"
#include "ipclab/transport.h"
#include "ipclab/util.h"
#include "tp_direct.h"

#define CASE_DEADLINE_NS (60 * NSEC_PER_SEC)

static unsigned n_failed, n_run, n_skipped;

void case_fail(const struct tcase *tc, const char *fmt, ...)
{
	va_list ap;

	printf("FAIL %s: ", tc->name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	n_failed++;
}

/* This test's stop word, handed to the transport in tp_config (a forked
 * client has its own copy, set by its own handler). */
static _Atomic int stop_word;

void stop_clear(void)
{
	atomic_store(&stop_word, 0);
}

void case_begin(void)
{
	n_run++;
}

/* As the runner's stop request: the stop word for spinning transports, the
 * signal itself (no SA_RESTART) for blocking calls. */
static void on_sigusr1(int sig)
{
	(void)sig;
	atomic_store(&stop_word, 1);
}

/* Wait for a thread until deadline; past it, interrupt it with SIGUSR1
 * until it returns (a blocked send/recv must give -EINTR). */
bool join_by(struct side *s, uint64_t deadline)
{
	struct timespec ts;
	bool late = false;
	uint64_t give_up = deadline + 5 * NSEC_PER_SEC;

	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t real = (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
	uint64_t left = deadline > now_ns() ? deadline - now_ns() : 0;

	ts = ns_to_timespec(real + left);
	if (pthread_timedjoin_np(s->th, NULL, &ts) == 0)
		return true;
	late = true;
	while (!__atomic_load_n(&s->done, __ATOMIC_ACQUIRE)) {
		if (now_ns() > give_up) {
			printf("FAIL %s: a thread ignores SIGUSR1; giving up\n", s->tc->name);
			exit(1);
		}
		pthread_kill(s->th, SIGUSR1);
		usleep(1000);
	}
	pthread_join(s->th, NULL);
	return !late;
}

/* Reap forked clients until deadline; past it, kill them. */
static bool reap_by(struct side *cl, unsigned n, uint64_t deadline)
{
	unsigned left = n;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	while (left) {
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG);

		for (unsigned i = 0; pid > 0 && i < n; i++)
			if (cl[i].pid == pid) {
				cl[i].pid = 0, left--;
				if (!WIFEXITED(status) || WEXITSTATUS(status))
					side_fail(&cl[i], "died (status %#x)", status);
			}
		if (pid > 0)
			continue;
		uint64_t now = now_ns();

		if (now >= deadline)
			break;
		struct timespec ts = ns_to_timespec(deadline - now > NSEC_PER_SEC / 10 ?
						    NSEC_PER_SEC / 10 : deadline - now);
		sigtimedwait(&set, NULL, &ts);
	}
	for (unsigned i = 0; i < n; i++)
		if (cl[i].pid > 0) {
			kill(cl[i].pid, SIGKILL);
			waitpid(cl[i].pid, NULL, 0);
			cl[i].pid = 0;
		}
	return left == 0;
}

static int start_clients(struct side *cl, unsigned n, bool threads)
{
	for (unsigned i = 0; i < n; i++) {
		if (threads) {
			if (pthread_create(&cl[i].th, NULL, client_main, &cl[i]))
				return side_fail(&cl[i], "pthread_create failed");
			cl[i].started = true;
			continue;
		}
		cl[i].pid = fork();
		if (cl[i].pid < 0)
			return side_fail(&cl[i], "fork: %s", strerror(errno));
		if (cl[i].pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			client_main(&cl[i]);
			_exit(0);
		}
	}
	return 0;
}

/* One case: create, server thread + clients, exchange, wait, destroy. */
static void run_exchange(struct tcase *tc, struct tp_channel *ch, struct side_res *res)
{
	unsigned n = tc->cfg.clients;
	struct side sides[MAXC + 1];
	uint64_t deadline = now_ns() + CASE_DEADLINE_NS;
	bool in_time = true;

	memset(sides, 0, sizeof(sides));
	for (unsigned i = 0; i <= n; i++) {
		sides[i] = (struct side){ .tc = tc, .ch = ch, .res = &res[i], .all = res,
					  .role = i ? TP_CLIENT : TP_SERVER, .id = i ? i - 1 : 0 };
	}
	/* clients first, while this process has one thread: forked ones
	 * inherit every descriptor before the server's open closes some */
	if (start_clients(&sides[1], n, tc->cfg.threads) == 0 &&
	    pthread_create(&sides[0].th, NULL, server_main, &sides[0]) == 0) {
		sides[0].started = true;
		in_time = join_by(&sides[0], deadline);
	} else {
		deadline = now_ns();	/* interrupt or kill what did start */
	}
	if (tc->cfg.threads) {
		for (unsigned i = 1; i <= n; i++)
			if (sides[i].started)
				in_time &= join_by(&sides[i], deadline);
	} else {
		in_time &= reap_by(&sides[1], n, deadline);
	}
	if (!in_time)
		case_fail(tc, "not done within %llu s (interrupted)",
			  (unsigned long long)(CASE_DEADLINE_NS / NSEC_PER_SEC));
}

static bool skip_by_probe(struct tcase *tc)
{
	char why[ERRLEN] = "";

	if (!tc->tp->probe || tc->tp->probe(&tc->cfg, why, sizeof(why)) == 0)
		return false;
	printf("skip %s: %s\n", tc->name, why);
	n_skipped++;
	return true;
}

void run_case(struct tcase *tc)
{
	struct tp_channel ch = { .tp = tc->tp, .cfg = &tc->cfg };
	size_t rlen = sizeof(struct side_res) * (MAXC + 1);
	struct side_res *res;
	char err[ERRLEN] = "";
	uint64_t lost = 0, dups = 0;

	if (skip_by_probe(tc))
		return;
	n_run++;
	res = mmap(NULL, rlen, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED) {
		case_fail(tc, "mmap: %s", strerror(errno));
		return;
	}
	if (tc->tp->create(&ch, err, sizeof(err))) {
		case_fail(tc, "create: %s", err);
	} else {
		run_exchange(tc, &ch, res);
		if (tc->fault)
			fault_verdict(tc, res);
		for (unsigned i = 0; i <= tc->cfg.clients && !tc->fault; i++) {
			if (res[i].failed)
				case_fail(tc, "%s", res[i].err);
			lost += res[i].lost, dups += res[i].dups;
		}
		if (lost || dups)
			printf("note %s: lossy: %llu of %u lost, %llu duplicate or reordered\n", tc->name,
			       (unsigned long long)lost, 2 * tc->count * tc->cfg.clients,
			       (unsigned long long)dups);
	}
	tc->tp->destroy(&ch);
	atomic_store(&stop_word, 0);
	n_failed += leftovers_report(tc->name, tc->cfg.dir);
	munmap(res, rlen);
}

/* -EINTR: a recv blocked with nothing to receive returns it on a signal
 * (a stop request); with TP_NO_EINTR it returns 0 when the peer closes.
 * The client opens and idles until released, then closes. */
struct intr_ctl {
	struct side srv, cli;
	int opened;		/* atomic: the server's open returned */
	int cli_opened;		/* atomic: the client's open returned (a stop
				 * request before it would end the open, not the recv) */
	ssize_t got;
	int release[2];		/* the client waits for a byte here */
};

/* The batch cases' blocked receive: a peek_n, its run handed back. */
static ssize_t intr_peek_n(const struct transport *tp, struct tp_endpoint *ep)
{
	const void *msgs[TP_BATCH_MAX];
	size_t lens[TP_BATCH_MAX];
	ssize_t k = tp->peek_n(ep, msgs, lens, TP_BATCH_MAX);

	if (k > 0)
		tp->release_n(ep, (unsigned)k);
	return k;
}

static void *intr_server(void *arg)
{
	struct intr_ctl *c = arg;
	struct side *s = &c->srv;
	struct tp_endpoint *ep = NULL;
	unsigned char *buf = side_buf(s->tc);
	char err[ERRLEN];

	if (!buf || s->tc->tp->open(s->ch, TP_SERVER, 0, &ep, err, sizeof(err))) {
		side_fail(s, "open: %s", buf ? err : "out of memory");
	} else {
		__atomic_store_n(&c->opened, 1, __ATOMIC_RELEASE);
		c->got = s->tc->runs ? intr_peek_n(s->tc->tp, ep) :
			 s->tc->tp->recv(ep, buf, s->tc->cfg.msg_size);
		s->tc->tp->close(ep);
	}
	__atomic_store_n(&c->opened, 1, __ATOMIC_RELEASE);
	free(buf);
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *intr_client(void *arg)
{
	struct intr_ctl *c = arg;
	struct tp_endpoint *ep = NULL;
	char err[ERRLEN], b;

	if (c->cli.tc->tp->open(c->cli.ch, TP_CLIENT, 0, &ep, err, sizeof(err)))
		side_fail(&c->cli, "open: %s", err);
	__atomic_store_n(&c->cli_opened, 1, __ATOMIC_RELEASE);
	while (read(c->release[0], &b, 1) < 0 && errno == EINTR)
		;
	if (ep)
		c->cli.tc->tp->close(ep);
	__atomic_store_n(&c->cli.done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* An interrupt case's end: the idling side released, both joined by the
 * deadline (first a, then b), each side's failure reported. */
void release_and_join(struct tcase *tc, int release_fd, struct side *a, struct side *b,
		      const struct side_res res[2], uint64_t deadline)
{
	if (write(release_fd, "x", 1) != 1)
		case_fail(tc, "release: %s", strerror(errno));
	bool a_ok = join_by(a, deadline), b_ok = join_by(b, deadline);

	if (!a_ok || !b_ok)
		case_fail(tc, "not done within 10 s");
	for (unsigned i = 0; i < 2; i++)
		if (res[i].failed)
			case_fail(tc, "%s", res[i].err);
}

void run_intr_case(struct tcase *tc)
{
	struct tp_channel ch = { .tp = tc->tp, .cfg = &tc->cfg };
	struct side_res res[2];
	struct intr_ctl c = { .got = 1 };
	char err[ERRLEN] = "";
	uint64_t deadline = now_ns() + 10 * NSEC_PER_SEC;
	/* TP_NO_EINTR: signals are ignored, the peer's close ends the wait */
	bool no_eintr = tc->tp->caps & TP_NO_EINTR;

	if (skip_by_probe(tc))
		return;
	n_run++;
	memset(res, 0, sizeof(res));
	c.srv = (struct side){ .tc = tc, .ch = &ch, .res = &res[0], .role = TP_SERVER };
	c.cli = (struct side){ .tc = tc, .ch = &ch, .res = &res[1], .role = TP_CLIENT };
	if (pipe(c.release) < 0 || tc->tp->create(&ch, err, sizeof(err))) {
		case_fail(tc, "create: %s", err);
		goto out;
	}
	pthread_create(&c.cli.th, NULL, intr_client, &c);
	pthread_create(&c.srv.th, NULL, intr_server, &c);
	/* signal only once both opens are done, then until recv gives up: a
	 * signal that lands before recv blocks is simply handled, the next one
	 * counts */
	while (!(__atomic_load_n(&c.opened, __ATOMIC_ACQUIRE) &&
		 __atomic_load_n(&c.cli_opened, __ATOMIC_ACQUIRE)) && now_ns() < deadline)
		usleep(1000);
	while (!no_eintr && !__atomic_load_n(&c.srv.done, __ATOMIC_ACQUIRE) &&
	       now_ns() < deadline) {
		pthread_kill(c.srv.th, SIGUSR1);
		usleep(1000);
	}
	release_and_join(tc, c.release[1], &c.srv, &c.cli, res, deadline);
	if (!res[0].failed && c.got != (no_eintr ? 0 : -EINTR))
		case_fail(tc, "a recv blocked until %s returned %zd (%s), expected %s",
			  no_eintr ? "the peer's close" : "a signal", c.got, rstr(c.got),
			  no_eintr ? "0 (EOF)" : "-EINTR");
out:
	tc->tp->destroy(&ch);
	atomic_store(&stop_word, 0);
	close(c.release[0]);
	close(c.release[1]);
	n_failed += leftovers_report(tc->name, tc->cfg.dir);
}

/* Messages each way for one size: 8 MiB of them, 32 to 10000; a
 * transport's own maximum past 1 MiB (dbus's 4 MiB, through its daemon)
 * 8 of them: still more than its buffers hold, a quarter of the bytes.
 * div (-q, IPCLAB_TEST_SCALE) divides the count, never below that floor. */
static unsigned count_for(size_t size, unsigned div)
{
	size_t c = size <= 64 ? 10000 : (8u << 20) / size, least = size > (1u << 20) ? 8 : 32;

	c = c > 10000 ? 10000 : c;
	c /= div;
	return (unsigned)(c < least ? least : c);
}

/* 16 B .. 1 MiB clamped to max_msg, and max_msg itself when finite. */
static unsigned sizes_for(const struct transport *tp, const void *opts, size_t *out)
{
	static const size_t base[] = { 16, 64, 4096, 65536, 1u << 20 };
	size_t max = tp->max_msg ? tp->max_msg(opts) : 0;
	unsigned n = 0;

	for (unsigned i = 0; i < ARRAY_SIZE(base); i++) {
		size_t s = max && base[i] > max ? max : base[i];

		if (s >= MSG_HDR_SIZE && (n == 0 || out[n - 1] != s))
			out[n++] = s;
	}
	if (max >= MSG_HDR_SIZE && out[n - 1] != max)
		out[n++] = max;
	return n;
}

/* Transports run again with one option set: a mode whose code differs
 * from the default's (a bus daemon in between, say), or the skeleton's
 * option, so that its table is exercised as it is copied. */
static const struct {
	const char *tp, *key, *val;
} variants[] = {
	{ "dbus", "via", "bus" },
	{ "ring", "batch", "5" },	/* publication every 5th, runs cut to fit */
	{ "skeleton", "skel-sndbuf", "256k" },
};

/* The defaults, then key=val when given; "name" or "name[key=val]". */
static void *options_for(const struct transport *tp, const char *key, const char *val,
			 char *name, size_t namelen, char *err, size_t errlen)
{
	void *opts = calloc(1, tp->opts_size ? tp->opts_size : 1);
	const struct opt_desc *d;

	snprintf(name, namelen, key ? "%s[%s=%s]" : "%s", tp->name, key, val);
	if (!opts) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (transport_validate(tp, err, errlen) || opt_defaults(tp->options, opts, err, errlen) ||
	    (key && (!(d = opt_find(tp->options, key)) || opt_set(d, opts, val, err, errlen)))) {
		if (key && !err[0])
			snprintf(err, errlen, "no option %s", key);
		free(opts);
		return NULL;
	}
	return opts;
}

static void run_transport(const struct transport *tp, unsigned div, const char *key,
			  const char *val)
{
	static unsigned serial;
	size_t sizes[8];
	char err[ERRLEN] = "", tname[64];
	struct tcase tc = { .tp = tp, .lossy = tp->caps & TP_LOSSY };
	void *opts = options_for(tp, key, val, tname, sizeof(tname), err, sizeof(err));
	unsigned ns;

	if (!opts) {
		printf("FAIL %s: %s\n", tname, err);
		n_failed++;
		return;
	}
	ns = sizes_for(tp, opts, sizes);
	tc.cfg = (struct tp_config){ .opts = opts, .dir = cleanup_private_dir(), .clients = 1,
				    .stop = &stop_word };
	for (int threads = 0; threads < 2; threads++) {
		const char *mode = threads ? "thread" : "process";
		const char *only = getenv("ENDPOINTS");

		if (only && *only && strcmp(only, mode))
			continue;
		if (!threads && (tp->caps & TP_THREAD_ONLY)) {
			printf("skip %s process: thread-only transport\n", tname);
			continue;
		}
		tc.cfg.threads = threads;
		for (unsigned i = 0; i < ns; i++) {
			tc.cfg.msg_size = sizes[i];
			tc.cfg.clients = 1;
			tc.count = count_for(sizes[i], div);
			tc.eof_at_server = serial++ % 2;
			snprintf(tc.name, sizeof(tc.name), "%s %s %zuB", tname, mode, sizes[i]);
			run_case(&tc);
		}
		if (tp->caps & TP_MULTI_CLIENT) {
			tc.cfg.msg_size = 64;
			tc.cfg.clients = MAXC;
			tc.count = 2000 / div;
			tc.eof_at_server = serial++ % 2;
			snprintf(tc.name, sizeof(tc.name), "%s %s 64B x%u clients", tname, mode, MAXC);
			run_case(&tc);
		}
	}
	if (tp->reserve_n && tp->commit_n && tp->peek_n && tp->release_n) {
		snprintf(tc.name, sizeof(tc.name), "%s", tname);
		run_batch_cases(&tc, div);
	}
	tc.cfg.threads = true;
	tc.cfg.clients = 1;
	tc.cfg.msg_size = 64;
	snprintf(tc.name, sizeof(tc.name), "%s thread interrupt", tname);
	run_intr_case(&tc);
	free(opts);
}

static void setup(void)
{
	struct sigaction sa = { .sa_handler = on_sigusr1 };	/* no SA_RESTART */
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	sigset_t set;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	/* RLIMIT_MSGQUEUE counts every queue of this user: other programs
	 * running now must not make posix-mq fail here */
	if (setrlimit(RLIMIT_MSGQUEUE, &rl) < 0 && getrlimit(RLIMIT_MSGQUEUE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_MSGQUEUE, &rl);
	}
	leftovers_init();
	atexit(cleanup_all);
}

/* Transports outside the registry that run here too: the skeleton
 * (src/transport/skeleton.c), the template a new transport is copied
 * from, so that it builds and passes what every registered one passes. */
extern const struct transport tp_skeleton;
static const struct transport *const unlisted[] = { &tp_skeleton };

static const struct transport *find_any(const char *name)
{
	const struct transport *tp = transport_find(name);

	for (size_t i = 0; !tp && i < ARRAY_SIZE(unlisted); i++)
		if (strcmp(unlisted[i]->name, name) == 0)
			tp = unlisted[i];
	return tp;
}

/* Every case of tp (and of its variants), unless others were named. */
static void run_named(const struct transport *tp, unsigned div, int argc, char **argv, unsigned named)
{
	bool want = !named;

	for (int a = 1; a < argc; a++)
		want |= strcmp(argv[a], tp->name) == 0;
	if (!want)
		return;
	run_transport(tp, div, NULL, NULL);
	for (size_t v = 0; v < ARRAY_SIZE(variants); v++)
		if (strcmp(variants[v].tp, tp->name) == 0)
			run_transport(tp, div, variants[v].key, variants[v].val);
}

/* tp_direct [-q] [transport...]: -q runs a tenth of the messages;
 * IPCLAB_TEST_SCALE=P (a percentage, as the shell tests take it; the
 * sanitizer builds' make check sets 25) runs P % of them, each size still
 * at least the count that fills its transport's buffers (count_for's
 * floor); ENDPOINTS=thread or process runs that mode only (TSan: threads). */
int main(int argc, char **argv)
{
	unsigned div = 1, named = 0;

	setup();
	if (!cleanup_private_dir()) {
		printf("FAIL: private directory: %s\n", strerror(errno));
		return 1;
	}
	const char *scale = getenv("IPCLAB_TEST_SCALE");

	if (scale && atoi(scale) >= 1 && atoi(scale) < 100)
		div = 100u / (unsigned)atoi(scale);
	for (int a = 1; a < argc; a++) {
		if (strcmp(argv[a], "-q") == 0) {
			div = 10;
		} else if (!find_any(argv[a])) {
			printf("FAIL: no transport %s\n", argv[a]);
			return 1;
		}
	}
	for (int a = 1; a < argc; a++)
		named += argv[a][0] != '-';
	for (size_t t = 0; t < n_transports; t++)
		run_named(transports[t], div, argc, argv, named);
	for (size_t t = 0; t < ARRAY_SIZE(unlisted); t++)
		run_named(unlisted[t], div, argc, argv, named);
	printf("tp_direct: %u cases, %u failed, %u skipped\n", n_run, n_failed, n_skipped);
	return n_failed ? 1 : n_run ? 0 : 77;
}
