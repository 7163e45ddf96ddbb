// SPDX-License-Identifier: MIT
/* skeleton: the least a transport needs, as a template. It is built and
 * run by the conformance test (tests/conformance/tp_direct.c), so that it
 * keeps working, but it is in no registry: `ipclab list` and -t do not
 * know it. Copy it to src/transport/NAME.c. One AF_UNIX stream socketpair per
 * client: the server keeps one end, the client the other; a byte stream,
 * so messages are framed by their size (tp_stream_send/recv loop on short
 * reads and writes).
 *
 * To add a transport (docs/architecture.md, "Adding things"):
 *   1. this file, as src/transport/NAME.c, with `const struct transport
 *      tp_NAME` at the end (the Makefile builds every src/ file);
 *   2. one `extern` and one line in the transports[] list of
 *      src/transport/registry.c;
 *   3. a section in docs/transports.md: what it measures, its limits, its
 *      options.
 * Nothing else: `ipclab list`, `-t all`, `-t 'glob*'`, the conformance
 * tests (tests/conformance/tp_direct.c over every registered transport x
 * sizes x process/thread, and engine.sh through the whole engine) and the
 * start-up check (transports_validate: the hooks its caps need) all walk
 * the registry.
 *
 * The rules: a transport moves whole messages and knows nothing about
 * time. It never reads a clock, prints, exits, or keeps static state
 * (endpoints may be threads of one process). Errors: return -errno and
 * fill err with one line that names the fix. Every named object (path,
 * queue name, SysV id) is registered with cleanup_add() before it exists
 * (see posix_mq.c); descriptors need nothing (the fd_table closes them). */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#include "tp_common.h"

/* Private options, -O key=value: a typed, ranged, defaulted table that
 * `ipclab list` prints and the one option parser fills (base/opt.c). */
struct skel_opts {
	uint64_t sndbuf;
};

static const struct opt_desc skel_options[] = {
	{ .name = "skel-sndbuf", .type = OPT_SIZE, .offset = offsetof(struct skel_opts, sndbuf),
	  .def = "", .min = 0, .max = 1ull << 30,
	  .help = "SO_SNDBUF of each socket (0 = kernel default)" },
	{ .name = NULL },
};

/* Channel entries per client id: the server's end, then the client's. */
enum { S_SERVER, S_CLIENT, S_PER_CLIENT };

/* In the parent, before the endpoints start: make every kernel object and
 * report what the kernel granted (tp_setting). On failure the runner still
 * calls destroy, which frees what was made. */
static int skel_create(struct tp_channel *ch, char *err, size_t errlen)
{
	const struct skel_opts *o = ch->cfg->opts;
	unsigned n = tp_clients(ch);
	struct fd_table *c = fd_table_new(ch, n * S_PER_CLIENT, 0, 0, err, errlen);
	int sv[2], ret;

	if (!c)
		return -ENOMEM;
	for (unsigned id = 0; id < n; id++) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
			return errf(err, errlen, errno, "skeleton: socketpair: %s%s", strerror(errno),
				    errno == EMFILE ? " (raise the open-file limit: ulimit -n)" : "");
		fd_table_set(c, id * S_PER_CLIENT + S_SERVER, sv[0], FD_SERVER, id);
		fd_table_set(c, id * S_PER_CLIENT + S_CLIENT, sv[1], FD_CLIENT, id);
		for (int k = 0; k < 2; k++) {
			ret = tp_sock_bufs("skeleton", sv[k], o ? o->sndbuf : 0, 0, err, errlen);
			if (ret)
				return ret;
		}
	}
	tp_sock_report(ch, c->fd[0].fd);
	return 0;
}

/* In the endpoint (a child process or a thread): its end of client id's
 * pair, for both directions. In process mode tp_ep_from_chan first closes
 * what this side does not use, so that a dead peer reads as EOF. */
static int skel_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		     struct tp_endpoint **out, char *err, size_t errlen)
{
	unsigned idx = id * S_PER_CLIENT + (role == TP_SERVER ? S_SERVER : S_CLIENT);

	return tp_ep_from_chan(ch, role, id, idx, idx, TP_EP_SHUTDOWN, out, err, errlen);
}

/* Every field of struct transport (include/ipclab/transport.h), in its
 * order. transports_validate checks at start-up those marked required and
 * those a cap or another hook needs (tests/cli/skeleton.sh checks that
 * this list names them all).
 *   name, summary          required: what -t takes; one line for `ipclab list`
 *   caps                   what the planner and the patterns may ask of it:
 *                          TP_MULTI_CLIENT (--clients > 1), TP_THREAD_ONLY,
 *                          TP_SPINS, TP_LOSSY, TP_NO_EINTR, TP_IN_PROCESS,
 *                          TP_REMOTE (-O listen/connect/secret: ipclab serve,
 *                          run --peer), TP_ZEROCOPY and TP_ZEROCOPY_SEND (the
 *                          hooks below), TP_POLLABLE; TP_STREAM, TP_DGRAM and
 *                          TP_NAMED are shown by `ipclab list`
 *   group                  its heading in `ipclab list`: TP_GROUP_KERNEL,
 *                          TP_GROUP_SHM, TP_GROUP_LIBRARY, TP_GROUP_RING
 *   options, opts_size     -O key=value: the table above, the size of its block
 *   max_msg, max_msg_limit optional: a kernel limit on one message, and what
 *                          raises it (for the error)
 *   check_opts             optional: -O values one table cannot judge alone
 *                          (an address): bad input before anything runs
 *   probe                  optional: can it run here? else the cell is skipped
 *                          with the reason
 *   create, destroy        required: the kernel objects, in the parent; destroy
 *                          always, once, after a partial create too
 *   open, close            required: one endpoint, in its child or thread
 *   send, recv             required: one whole message each; recv returns 0
 *                          when the peer closed
 *   peek, release          with TP_ZEROCOPY: receive in place
 *   reserve, commit        with TP_ZEROCOPY_SEND: send in place
 *   reserve_n, commit_n    optional, with reserve/commit: several messages
 *                          published by one index update (ring -O batch)
 *   peek_n, release_n      optional, with peek/release: the same on receive
 *   runs                   optional, with the batch operations: does this
 *                          endpoint move its messages in runs?
 *   pollfd                 with TP_POLLABLE: a descriptor for poll/epoll
 *   ready                  optional, with pollfd: can recv return at once?
 *                          (a fan-in server spins over its clients, then arms
 *                          them all and sleeps in epoll)
 *   reference              optional: --reference's bare loop, the same calls
 *                          made without this file's code (a struct
 *                          tp_reference in src/reference/; none: the cell
 *                          says it has no reference)
 * A blocking send/recv returns -EINTR when the runner's signal interrupts
 * it; a wait that a signal does not end (a spin, a library's timed wait)
 * looks at the cell's stop word, stop_requested(ch->cfg->stop), between
 * slices instead. */
const struct transport tp_skeleton = {
	.name = "skeleton",
	.summary = "an AF_UNIX stream socketpair per client (the template of docs/architecture.md)",
	.caps = TP_STREAM | TP_MULTI_CLIENT | TP_POLLABLE,
	.group = TP_GROUP_KERNEL,
	.options = skel_options,
	.opts_size = sizeof(struct skel_opts),
	.create = skel_create,
	.open = skel_open,
	.send = tp_stream_send,
	.recv = tp_stream_recv,
	.pollfd = tp_fd_pollfd,
	.close = tp_fd_close,
	.destroy = fd_table_destroy,
};
