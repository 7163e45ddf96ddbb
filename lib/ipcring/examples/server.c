// SPDX-License-Identifier: MIT
/*
 * server.c - ipcring example, an echo server. It listens on NAME and serves
 * every client from one thread with the library's dispatcher: each request
 * is sent back as the reply. When a client goes, it prints what that client
 * sent; with -n it exits after that many clients have gone.
 *
 * Who may connect: the library checks every client's credentials
 * (SO_PEERCRED) as it accepts it and by default lets in only our own uid;
 * -u UID lets that uid in too. A refused client is told why, at once, and
 * the server says so on stderr and goes on serving. A client that stops
 * reading its replies holds up nobody: it is dropped after 5 s.
 *
 *   ipcring-server [-u UID] [-n CLIENTS] NAME &   ipcring-client NAME
 *
 * NAME "@x" is x in the abstract namespace; a name with a '/' is a socket
 * path in a 0700 directory; any other name is a socket in the per-user
 * directory ($XDG_RUNTIME_DIR/ipcring/). SIGINT or SIGTERM stop it; the
 * socket file, if any, is removed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipcring.h"

static volatile sig_atomic_t stop;

struct served {
	unsigned long clients;	/* gone so far */
	unsigned long want;	/* -n, 0 = for ever */
};

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void on_connected(void *ctx, struct ipcring_conn *c)
{
	struct ipcring_cred peer;
	uint64_t tag = 0;

	(void)ctx;
	ipcring_conn_cred(c, &peer);
	ipcring_conn_tag(c, &tag);
	printf("server: client pid %d uid %u (tag %llu) connected\n", (int)peer.pid,
	       (unsigned)peer.uid, (unsigned long long)tag);
	fflush(stdout);
}

/* One request, in place in the request ring: echo it. The reply is
 * committed with IPCRING_MORE; the dispatcher publishes a connection's
 * replies once, after serving its batch of requests. The send never waits
 * here (one client that stops reading must not stall the others): a reply
 * that does not fit in the client's ring is queued, and that client is not
 * served again until it reads; only when its queue is full too is it
 * -EAGAIN, and then this server lets that client go. */
static int on_message(void *ctx, struct ipcring_conn *c, const void *msg, size_t len)
{
	int ret = ipcring_conn_send(c, msg, len, IPCRING_MORE, 0);

	(void)ctx;
	if (ret == -EAGAIN)
		fprintf(stderr, "ipcring-server: a client does not read its replies: dropped\n");
	return ret;
}

static void on_disconnected(void *ctx, struct ipcring_conn *c, int why)
{
	struct served *s = ctx;
	struct ipcring_conn_stats st = { 0 };
	struct ipcring_cred peer;

	ipcring_conn_cred(c, &peer);
	ipcring_conn_stats(c, &st);
	/* -ETIMEDOUT: its replies waited for it to read them for 5 s */
	printf("server: client pid %d gone (%s): %llu requests, %llu bytes, %llu replies\n",
	       (int)peer.pid, why == 0 ? "closed" : why == -EPIPE ? "died" :
	       why == -ETIMEDOUT ? "stopped reading its replies" : strerror(-why),
	       (unsigned long long)st.msgs_in, (unsigned long long)st.bytes_in,
	       (unsigned long long)st.msgs_out);
	fflush(stdout);
	s->clients++;
	if (s->want && s->clients >= s->want)
		stop = 1;
}

static void on_refused(void *ctx, const struct ipcring_cred *peer, int err,
		       const char *reason)
{
	(void)ctx;
	fprintf(stderr, "ipcring-server: refused a client (pid %d): %s (%s)\n", (int)peer->pid,
		reason, strerror(-err));
}

static const struct ipcring_server_ops ops = {
	.connected = on_connected,
	.message = on_message,
	.disconnected = on_disconnected,
	.refused = on_refused,
};

static int parse_ulong(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno || end == s || *end || s[0] == '-' || *out > max ? -EINVAL : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: ipcring-server [-u UID] [-n CLIENTS] NAME\n");
	return 2;
}

/* Long: an example read top to bottom: options, listen, the dispatch loop, close. */
int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART */
	struct ipcring_server_opts so = { 0 };
	struct served served = { 0 };
	struct ipcring_server *srv;
	char why[IPCRING_REASON_MAX];
	unsigned long v;
	uint32_t uid;
	int opt, ret;

	while ((opt = getopt(argc, argv, "u:n:")) != -1) {
		switch (opt) {
		case 'u':
			if (parse_ulong(optarg, UINT32_MAX - 1, &v)) {
				fprintf(stderr, "ipcring-server: -u %s: not a uid; give a number such as 1000\n",
					optarg);
				return 2;
			}
			uid = (uint32_t)v;
			so.uids = &uid;
			so.nuids = 1;
			break;
		case 'n':
			if (parse_ulong(optarg, 1000000, &served.want) || !served.want) {
				fprintf(stderr, "ipcring-server: -n %s: give a number of clients from 1 to 1000000\n",
					optarg);
				return 2;
			}
			break;
		default:
			return usage();
		}
	}
	if (optind != argc - 1)
		return usage();
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	ret = ipcring_listen(&srv, argv[optind], &so, why, sizeof(why));
	if (ret) {
		fprintf(stderr, "ipcring-server: listen on %s: %s (%s)\n", argv[optind], why,
			strerror(-ret));
		return 1;
	}
	ipcring_server_set_ops(srv, &ops, &served);
	printf("server: listening on %s\n", argv[optind]);
	fflush(stdout);
	/* spins over every request ring while clients are busy, sleeps in
	 * epoll when all are quiet; the timeout only bounds how late a signal
	 * that lands just before the sleep is noticed */
	while (!stop) {
		ret = ipcring_server_dispatch(srv, 500);
		if (ret < 0) {
			fprintf(stderr, "ipcring-server: dispatch: %s\n", strerror(-ret));
			break;
		}
	}
	ipcring_server_close(srv);
	return ret < 0 ? 1 : 0;
}
