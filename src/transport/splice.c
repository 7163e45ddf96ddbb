// SPDX-License-Identifier: MIT
/* splice: two pipes per client as `pipe`, but the sender vmsplice()s pages
 * into the pipe instead of write()ing. What is copied, precisely:
 *   - the sender copies the message into its own page-aligned staging ring
 *     (memcpy, user space);
 *   - vmsplice() puts references to those pages into the pipe (no copy);
 *   - the receiver read()s, and the kernel copies the bytes straight out of
 *     the sender's pages (the one kernel copy; a plain pipe makes two, one in
 *     write() and one in read()).
 * The staging copy is what makes send() safe to return: a vmspliced page
 * must not change until it is read. The ring holds the pipe's capacity plus
 * one message (each message starts on a fresh page, and the pipe holds at
 * most one page per slot), so a page is written again only after the pipe
 * has given it up. The receiver does not splice: its bytes have to land in
 * its own buffer, and that is a copy whatever the call. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tp_common.h"

struct splice_opts {
	uint64_t pipe_size;
};

static const struct opt_desc splice_options[] = {
	{ .name = "pipe-size", .type = OPT_SIZE, .offset = offsetof(struct splice_opts, pipe_size),
	  .def = "", .min = 0, .max = 1ull << 31,
	  .help = "F_SETPIPE_SZ of each pipe (0 = kernel default, 64k); the staging ring is this plus one message" },
	{ .name = NULL },
};

enum { P_C2S_R, P_C2S_W, P_S2C_R, P_S2C_W, P_PER_CLIENT };

/* The sender's staging ring, in pages. */
struct splice_ring {
	unsigned char *mem;
	size_t page, pages, msg_pages;
	size_t pos;		/* first page of the next message */
};

static int splice_create(struct tp_channel *ch, char *err, size_t errlen)
{
	const struct splice_opts *o = ch->cfg->opts;
	unsigned n = tp_clients(ch);
	struct fd_table *c = fd_table_new(ch, n * P_PER_CLIENT, 0, 0, err, errlen);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int p[2], size = 0, ret;

	if (!c)
		return -ENOMEM;
	for (unsigned i = 0; i < 2 * n; i++) {
		unsigned id = i / 2, dir = i % 2, base = id * P_PER_CLIENT + 2 * dir;

		if (pipe2(p, O_CLOEXEC) < 0)
			return errf(err, errlen, errno, "splice: pipe2: %s", strerror(errno));
		fd_table_set(c, base, p[0], dir ? FD_CLIENT : FD_SERVER, id);
		fd_table_set(c, base + 1, p[1], dir ? FD_SERVER : FD_CLIENT, id);
		ret = tp_pipe_size("splice", p[1], o ? o->pipe_size : 0, &size, err, errlen);
		if (ret)
			return ret;
	}
	tp_setting(ch, "pipe_size_bytes", "%d", size);
	tp_setting(ch, "staging_bytes", "%zu",
		   (size_t)size + (ch->cfg->msg_size + page - 1) / page * page);
	return 0;
}

static int splice_ring_new(struct tp_endpoint *ep, size_t msg_size, char *err, size_t errlen)
{
	struct splice_ring *r = calloc(1, sizeof(*r));
	int psize = fcntl(ep->wfd, F_GETPIPE_SZ);

	if (!r)
		return errf(err, errlen, ENOMEM, "splice: out of memory");
	ep->extra = r;
	if (psize < 0)
		return errf(err, errlen, errno, "splice: F_GETPIPE_SZ: %s", strerror(errno));
	r->page = (size_t)sysconf(_SC_PAGESIZE);
	r->msg_pages = (msg_size + r->page - 1) / r->page;
	r->pages = (size_t)psize / r->page + r->msg_pages;
	r->mem = mmap(NULL, r->pages * r->page, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r->mem == MAP_FAILED) {
		r->mem = NULL;
		return errf(err, errlen, errno, "splice: staging ring of %zu pages: %s", r->pages,
			    strerror(errno));
	}
	return 0;
}

static void splice_ring_free(struct tp_endpoint *ep)
{
	struct splice_ring *r = ep->extra;

	/* pages still in the pipe stay alive: the pipe holds references */
	if (r && r->mem)
		munmap(r->mem, r->pages * r->page);
	free(r);
	ep->extra = NULL;
}

static int splice_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		       struct tp_endpoint **out, char *err, size_t errlen)
{
	unsigned base = id * P_PER_CLIENT;
	unsigned r = base + (role == TP_SERVER ? P_C2S_R : P_S2C_R);
	unsigned w = base + (role == TP_SERVER ? P_S2C_W : P_C2S_W);
	size_t size = ch->cfg->msg_size ? ch->cfg->msg_size : 1;
	int ret = tp_ep_from_chan(ch, role, id, r, w, 0, out, err, errlen);

	if (ret)
		return ret;
	ret = splice_ring_new(*out, size, err, errlen);
	if (ret) {
		splice_ring_free(*out);
		tp_ep_free(*out);
		*out = NULL;
	}
	return ret;
}

static ssize_t splice_send(struct tp_endpoint *ep, const void *buf, size_t len)
{
	struct splice_ring *r = ep->extra;
	size_t pages = (len + r->page - 1) / r->page;
	size_t first = r->pages - r->pos < pages ? (r->pages - r->pos) * r->page : len;
	struct iovec iov[2] = {
		{ r->mem + r->pos * r->page, first },
		{ r->mem, len - first },
	};
	struct iovec *v = iov;
	int nv = len > first ? 2 : 1;

	if (len == 0 || pages > r->msg_pages)
		return len ? -EMSGSIZE : 0;
	/* a message that reaches the ring's end goes on at its start */
	memcpy(iov[0].iov_base, buf, first);
	memcpy(iov[1].iov_base, (const char *)buf + first, len - first);
	while (nv) {
		ssize_t n = vmsplice(ep->wfd, v, (unsigned long)nv, 0);

		if (n < 0)
			return -errno;
		while (nv && (size_t)n >= v->iov_len) {
			n -= (ssize_t)v->iov_len;
			v++, nv--;
		}
		if (nv) {
			v->iov_base = (char *)v->iov_base + n;
			v->iov_len -= (size_t)n;
		}
	}
	r->pos = (r->pos + pages) % r->pages;
	return (ssize_t)len;
}

static void splice_close(struct tp_endpoint *ep)
{
	if (!ep)
		return;
	splice_ring_free(ep);
	tp_ep_free(ep);
}

const struct transport tp_splice = {
	.name = "splice",
	.summary = "two pipes per client; sender copies to a staging ring and vmsplice()s the pages (no kernel copy), receiver read()s (one copy)",
	.caps = TP_STREAM | TP_MULTI_CLIENT | TP_POLLABLE,
	.group = TP_GROUP_KERNEL,
	.options = splice_options,
	.opts_size = sizeof(struct splice_opts),
	.create = splice_create,
	.open = splice_open,
	.send = splice_send,
	.recv = tp_stream_recv,
	.pollfd = tp_fd_pollfd,
	.close = splice_close,
	.destroy = fd_table_destroy,
};
