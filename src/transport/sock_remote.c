// SPDX-License-Identifier: MIT
/* Helpers of the measured connection between hosts (tp_remote.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipclab/netaddr.h"
#include "tp_common.h"
#include "tp_remote.h"

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int tp_remote_parse(const char *tp, const char *listen, const char *connect, const char *secret,
		    struct tp_remote *r, char *err, size_t errlen)
{
	char what[64];
	int ret;

	memset(r, 0, sizeof(*r));
	if (!listen[0] && !connect[0])
		return 0;
	if (listen[0] && connect[0])
		return errf(err, errlen, EINVAL, "%s: -O listen and -O connect exclude each other", tp);
	if (strlen(secret) != 2 * TP_SECRET_BYTES)
		return errf(err, errlen, EINVAL, "%s: -O secret must be %d hex digits", tp,
			    2 * TP_SECRET_BYTES);
	for (int i = 0; i < TP_SECRET_BYTES; i++) {
		int hi = hexval(secret[2 * i]), lo = hexval(secret[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return errf(err, errlen, EINVAL, "%s: -O secret must be hex digits", tp);
		r->secret[i] = (uint8_t)(hi << 4 | lo);
	}
	r->mode = listen[0] ? TPR_SERVER : TPR_CLIENT;
	snprintf(what, sizeof(what), "%s: -O %s", tp, listen[0] ? "listen" : "connect");
	ret = net_parse(what, listen[0] ? listen : connect, listen[0] ? NET_NO_PORT : NET_PORT, 0,
			&r->addr, NULL, err, errlen);
	return ret;
}

int tp_remote_check(const char *tp, const char *listen, const char *connect, const char *secret,
		    char *err, size_t errlen)
{
	struct tp_remote r;
	int ret;

	if (secret[0] && !listen[0] && !connect[0])
		return errf(err, errlen, EINVAL, "%s: -O secret is for a cell between hosts, beside "
			    "-O listen or -O connect (ipclab serve and run --peer set all three)", tp);
	ret = tp_remote_parse(tp, listen, connect, secret, &r, err, errlen);
	if (ret && strlen(err) + 48 < errlen)
		strcat(err, " (ipclab serve and run --peer set these)");
	return ret;
}

void tp_rhello_fill(struct tp_rhello *h, const struct tp_remote *r, unsigned id)
{
	h->magic = TP_RHELLO_MAGIC;
	h->id = id;
	memcpy(h->secret, r->secret, sizeof(h->secret));
}

int tp_rhello_check(const struct tp_rhello *h, const struct tp_remote *r, unsigned n)
{
	unsigned diff = 0;

	for (int i = 0; i < TP_SECRET_BYTES; i++)
		diff |= (unsigned)(h->secret[i] ^ r->secret[i]);
	if (diff || h->magic != TP_RHELLO_MAGIC || h->id >= n)
		return -1;
	return (int)h->id;
}

int tp_remote_poll(int fd, short events, int ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int ret = poll(&p, 1, ms);

	if (ret < 0)
		return -errno;
	return ret;
}

int tp_remote_connect(int fd, const struct sockaddr_storage *sa)
{
	int fl = fcntl(fd, F_GETFL), ret, soerr = 0;

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)sa, net_len(sa)) < 0) {
		if (errno != EINPROGRESS)
			return -errno;
		ret = tp_remote_poll(fd, POLLOUT, TP_REMOTE_WAIT_MS);
		if (ret <= 0)
			return ret ? ret : -ETIMEDOUT;
		ret = tp_sock_get(fd, SO_ERROR, &soerr);
		if (ret || soerr)
			return ret ? ret : -soerr;
	}
	return fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 ? -errno : 0;
}

void tp_remote_unreserve(int *fds, unsigned n)
{
	for (unsigned i = 0; fds && i < n; i++)
		if (fds[i] >= 0) {
			close(fds[i]);
			fds[i] = -1;
		}
}

/* One port held: bound, never listening, SO_REUSEADDR as the libraries'
 * listeners set it: the kernel hands the port to nobody else, the
 * server's own bind may share it. The port, or -errno. */
static int reserve_one(const struct tp_remote *r, int *fd, uint16_t port)
{
	struct sockaddr_storage sa = r->addr;
	socklen_t l = sizeof(sa);
	int one = 1;

	*fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*fd < 0)
		return -errno;
	net_set_port(&sa, port);
	if (setsockopt(*fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(*fd, (struct sockaddr *)&sa, net_len(&sa)) < 0 ||
	    getsockname(*fd, (struct sockaddr *)&sa, &l) < 0)
		return -errno;
	return net_port(&sa);
}

int tp_remote_reserve(const char *tp, const struct tp_remote *r, unsigned n, int *fds, char *err,
		      size_t errlen)
{
	char host[NET_ADDR_TEXT];
	int first = -1, ret = 0;

	for (unsigned i = 0; i < n; i++)
		fds[i] = -1;
	net_format(&r->addr, false, host, sizeof(host));
	for (unsigned t = 0; t < TP_RESERVE_TRIES; t++) {
		tp_remote_unreserve(fds, n);
		first = reserve_one(r, &fds[0], 0);
		if (first < 0)
			return errf(err, errlen, -first, "%s: bind %s: %s", tp, host, strerror(-first));
		ret = 0;
		for (unsigned id = 1; id < n && ret >= 0; id++)
			ret = first + id > 65535 ? -EADDRINUSE :
			      reserve_one(r, &fds[id], (uint16_t)(first + id));
		if (ret >= 0)
			return first;
		if (ret != -EADDRINUSE)
			return errf(err, errlen, -ret, "%s: bind %s: %s", tp, host, strerror(-ret));
	}
	return errf(err, errlen, EADDRINUSE, "%s: no %u consecutive free ports on %s in %d tries", tp,
		    n, host, TP_RESERVE_TRIES);
}

int tp_remote_reserve_block(struct tp_channel *ch, const struct tp_remote *r, unsigned n,
			    int **resv, _Atomic uint32_t *ports, char *err, size_t errlen)
{
	int first;

	*resv = malloc(n * sizeof(**resv));
	if (!*resv)
		return errf(err, errlen, ENOMEM, "%s: out of memory", ch->tp->name);
	first = tp_remote_reserve(ch->tp->name, r, n, *resv, err, errlen);
	if (first < 0)
		return first;
	for (unsigned id = 0; id < n; id++)
		atomic_store_explicit(&ports[id], (uint32_t)first + id, memory_order_relaxed);
	tp_setting(ch, "listen_port", "%d", first);
	tp_setting(ch, "listen_ports", "%d-%d (client id i: %d+i)", first, first + (int)n - 1,
		   first);
	return 0;
}
