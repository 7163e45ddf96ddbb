// SPDX-License-Identifier: MIT
/* THE list of transports: `ipclab list`, -t all, help and the conformance
 * tests all come from this array. Adding a transport = one line here. */
#include <stdio.h>
#include <string.h>

#include "ipclab/transport.h"
#include "ipclab/util.h"

extern const struct transport tp_null;
extern const struct transport tp_null_zc;
extern const struct transport tp_pipe;
extern const struct transport tp_unix_stream;
extern const struct transport tp_posix_mq;
extern const struct transport tp_fifo;
extern const struct transport tp_unix_dgram;
extern const struct transport tp_unix_seqpacket;
extern const struct transport tp_unix_stream_path;
extern const struct transport tp_tcp;
extern const struct transport tp_udp;
extern const struct transport tp_sysv_mq;
extern const struct transport tp_splice;
extern const struct transport tp_shm_futex;
extern const struct transport tp_shm_eventfd;
extern const struct transport tp_shm_pipe;
extern const struct transport tp_shm_sem;
extern const struct transport tp_shm_cond;
extern const struct transport tp_shm_sysv_sem;
extern const struct transport tp_shm_signal;
extern const struct transport tp_shm_spin;
extern const struct transport tp_barrier;
extern const struct transport tp_cacheline;
extern const struct transport tp_ring;
extern const struct transport tp_ring_spin;
extern const struct transport tp_ring_eventfd;
extern const struct transport tp_ring_ipc;
extern const struct transport tp_libqb_rb;
extern const struct transport tp_libqb_ipc;
extern const struct transport tp_zmq_ipc;
extern const struct transport tp_zmq_tcp;
extern const struct transport tp_zmq_inproc;
extern const struct transport tp_cma;
extern const struct transport tp_io_uring;
extern const struct transport tp_io_uring_msg;
extern const struct transport tp_nng_ipc;
extern const struct transport tp_nng_tcp;
extern const struct transport tp_nng_inproc;
extern const struct transport tp_vsock;
extern const struct transport tp_dbus;

const struct transport *const transports[] = {
	&tp_null,
	&tp_null_zc,
	&tp_pipe,
	&tp_unix_stream,
	&tp_posix_mq,
	&tp_fifo,
	&tp_unix_dgram,
	&tp_unix_seqpacket,
	&tp_unix_stream_path,
	&tp_tcp,
	&tp_udp,
	&tp_sysv_mq,
	&tp_splice,
	&tp_shm_futex,
	&tp_shm_eventfd,
	&tp_shm_pipe,
	&tp_shm_sem,
	&tp_shm_cond,
	&tp_shm_sysv_sem,
	&tp_shm_signal,
	&tp_shm_spin,
	&tp_barrier,
	&tp_cacheline,
	&tp_ring,
	&tp_ring_spin,
	&tp_ring_eventfd,
	&tp_libqb_rb,
	&tp_libqb_ipc,
	&tp_ring_ipc,
	&tp_zmq_ipc,
	&tp_zmq_tcp,
	&tp_zmq_inproc,
	&tp_cma,
	&tp_io_uring,
	&tp_io_uring_msg,
	&tp_nng_ipc,
	&tp_nng_tcp,
	&tp_nng_inproc,
	&tp_vsock,
	&tp_dbus,
};
const size_t n_transports = ARRAY_SIZE(transports);

const struct transport *transport_find(const char *name)
{
	for (size_t i = 0; i < n_transports; i++)
		if (strcmp(transports[i]->name, name) == 0)
			return transports[i];
	return NULL;
}

void tp_setting(struct tp_channel *ch, const char *key, const char *fmt, ...)
{
	va_list ap;

	if (ch->settings.n >= TP_MAX_SETTINGS)
		return;
	snprintf(ch->settings.kv[ch->settings.n].key, sizeof(ch->settings.kv[0].key), "%s", key);
	va_start(ap, fmt);
	vsnprintf(ch->settings.kv[ch->settings.n].val, sizeof(ch->settings.kv[0].val), fmt, ap);
	va_end(ap);
	ch->settings.n++;
}

const char *tp_setting_get(const struct tp_settings *s, const char *key)
{
	for (unsigned i = 0; i < s->n && i < TP_MAX_SETTINGS; i++)
		if (!strcmp(s->kv[i].key, key))
			return s->kv[i].val;
	return NULL;
}

ssize_t tp_recv_via_peek(struct tp_endpoint *ep, void *buf, size_t len,
			 ssize_t (*peek)(struct tp_endpoint *, const void **, size_t),
			 void (*release)(struct tp_endpoint *))
{
	const void *msg;
	ssize_t n = peek(ep, &msg, len);

	if (n <= 0)
		return n;
	if ((size_t)n > len)
		n = -EMSGSIZE;
	else
		memcpy(buf, msg, (size_t)n);
	release(ep);
	return n;
}

ssize_t tp_send_via_reserve(struct tp_endpoint *ep, const void *buf, size_t len,
			    ssize_t (*reserve)(struct tp_endpoint *, void **, size_t),
			    ssize_t (*commit)(struct tp_endpoint *, size_t))
{
	void *p;
	ssize_t r = reserve(ep, &p, len);

	if (r < 0)
		return r;
	memcpy(p, buf, len);
	return commit(ep, len);
}

int transport_validate(const struct transport *tp, char *err, size_t errlen)
{
	const char *missing = NULL;

	if (!tp->name || !tp->summary)
		missing = "name/summary";
	else if (!tp->create)
		missing = "create";
	else if (!tp->open)
		missing = "open";
	else if (!tp->send)
		missing = "send";
	else if (!tp->recv)
		missing = "recv";
	else if (!tp->close)
		missing = "close";
	else if (!tp->destroy)
		missing = "destroy";
	else if ((tp->caps & TP_ZEROCOPY) && (!tp->peek || !tp->release))
		missing = "peek/release (TP_ZEROCOPY)";
	else if ((tp->caps & TP_ZEROCOPY_SEND) && (!tp->reserve || !tp->commit))
		missing = "reserve/commit (TP_ZEROCOPY_SEND)";
	else if (!tp->reserve_n != !tp->commit_n || (tp->reserve_n && !tp->reserve))
		missing = "reserve_n with commit_n, and reserve/commit";
	else if (!tp->peek_n != !tp->release_n || (tp->peek_n && !tp->peek))
		missing = "peek_n with release_n, and peek/release";
	else if (tp->runs && !tp->reserve_n && !tp->peek_n)
		missing = "the batch operations (runs)";
	else if (tp->options && !tp->opts_size)
		missing = "opts_size";
	else if ((unsigned)tp->group >= TP_GROUP_N)
		missing = "a known group";
	if (missing)
		return errf(err, errlen, EINVAL, "transport %s: missing %s", tp->name ? tp->name : "?",
			    missing);
	return 0;
}

int transports_validate(char *err, size_t errlen)
{
	for (size_t i = 0; i < n_transports; i++) {
		int ret = transport_validate(transports[i], err, errlen);

		if (ret)
			return ret;
		for (size_t j = 0; j < i; j++)
			if (strcmp(transports[i]->name, transports[j]->name) == 0)
				return errf(err, errlen, EINVAL, "transport %s: registered twice",
					    transports[i]->name);
	}
	return 0;
}
