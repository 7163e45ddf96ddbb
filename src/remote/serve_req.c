// SPDX-License-Identifier: MIT
/* ipclab serve: a client's "cell" request decoded into a plan_spec of one
 * cell (serve_req.h), which the engine's plan_build then makes, as it makes
 * every cell: names looked up, every number bounded by the protocol and by
 * this server's limits, the transport's options the client's plus the
 * server's own listen address and secret, the placement checked against
 * --allow-sched and --allow-cpus. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "ipclab/msg.h"
#include "ipclab/netaddr.h"
#include "ipclab/placement.h"
#include "ipclab/pattern.h"
#include "proto.h"
#include "serve_req.h"

/* The client's "key=value,key=value" into an option block of table d;
 * listen, connect and secret are the server's to set. */
static int parse_kv(const struct opt_desc *d, void *dst, const char *text, char *err, size_t errlen)
{
	char buf[1024], *save = NULL;

	if (strlen(text) >= sizeof(buf))
		return errf(err, errlen, EINVAL, "options too long");
	snprintf(buf, sizeof(buf), "%s", text);
	for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		const struct opt_desc *od;
		int ret;

		if (!eq)
			return errf(err, errlen, EINVAL, "option '%s' without a value", kv);
		*eq = '\0';
		if (!strcmp(kv, "listen") || !strcmp(kv, "connect") || !strcmp(kv, "secret"))
			return errf(err, errlen, EINVAL, "option %s is the server's to set", kv);
		if (!d || !(od = opt_find(d, kv)))
			return errf(err, errlen, EINVAL, "unknown option '%s'", kv);
		if ((ret = opt_set(od, dst, eq + 1, err, errlen)))
			return ret;
	}
	return 0;
}

static void *opts_block(const struct opt_desc *d, size_t size, char *err, size_t errlen)
{
	void *b = calloc(1, size ? size : 1);

	if (b && d && opt_defaults(d, b, err, errlen)) {
		free(b);
		return NULL;
	}
	return b;
}

static int limit(char *err, size_t errlen, const char *what, uint64_t v, uint64_t max, const char *flag)
{
	return errf(err, errlen, EINVAL, "%s %llu is over this server's limit %llu (ipclab serve %s)",
		    what, (unsigned long long)v, (unsigned long long)max, flag);
}

/* The measured connection listens on the control connection's own
 * address, with this cell's secret: the transport's listen and secret
 * options, which only the server sets. */
static int remote_opts(struct serve_req *rq, const struct transport *tp,
		       const struct sockaddr_storage *local, char *err, size_t errlen)
{
	const struct opt_desc *listen = opt_find(tp->options, "listen");
	const struct opt_desc *secret = opt_find(tp->options, "secret");
	char addr[NET_ADDR_TEXT];
	uint8_t rnd[16];
	int ret;

	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		return errf(err, errlen, EIO, "no random bytes for the cell's secret");
	for (int i = 0; i < 16; i++)
		snprintf(rq->secret + 2 * i, 3, "%02x", rnd[i]);
	if (!listen || !secret)
		return errf(err, errlen, EINVAL, "unknown option '%s'", listen ? "secret" : "listen");
	net_format(local, false, addr, sizeof(addr));
	if ((ret = opt_set(listen, rq->tp_opts, addr, err, errlen)))
		return ret;
	return opt_set(secret, rq->tp_opts, rq->secret, err, errlen);
}

/* The server side's placement: a CPU the client named (server_cpu), or
 * for --pin same or split on the client our first allowed CPU; none else. */
static int serve_pin(const json_t *m, uint64_t scpu, struct pin_spec *pin, char *err, size_t errlen)
{
	const char *sp = json_string_value(json_object_get(m, "server_pin"));

	memset(pin, 0, sizeof(*pin));
	pin->mode = scpu < 65536 ? PIN_CPUS : PIN_NONE;
	pin->server_cpu = scpu < 65536 ? (int)scpu : -1;
	pin->client_cpu = -1;
	snprintf(pin->text, sizeof(pin->text), "%s", scpu < 65536 ? "cpus" : "none");
	if (sp && scpu == 65536 && (!strcmp(sp, "same") || !strcmp(sp, "split"))) {
		if (pin_make(PIN_SAME, pin, err, errlen))
			return -EINVAL;
		pin->client_cpu = -1;
		snprintf(pin->text, sizeof(pin->text), "%s", sp);
	} else if (sp) {
		return errf(err, errlen, EINVAL,
			    "--pin: '%.32s' is not a placement this server knows", sp);
	}
	return 0;
}

/* The request's numbers, each bounded (by the protocol, then by this
 * server's limits), into the spec's one-value lists and knobs. */
static int spec_numbers(const struct serve_opts *o, const json_t *m, struct plan_spec *sp,
			uint64_t *scpu, char *err, size_t errlen)
{
	uint64_t size, count, warmup, dur, clients, timeout, maxt, think;

	if (rp_u64(m, "size_bytes", UINT32_MAX, &size, err, errlen) ||
	    rp_u64(m, "count", UINT64_MAX >> 1, &count, err, errlen) ||
	    rp_u64(m, "warmup", UINT64_MAX >> 1, &warmup, err, errlen) ||
	    rp_u64(m, "duration_ns", UINT64_MAX >> 1, &dur, err, errlen) ||
	    rp_u64(m, "clients", MAX_CLIENTS, &clients, err, errlen) ||
	    rp_u64(m, "timeout_ns", 3600 * NSEC_PER_SEC, &timeout, err, errlen) ||
	    rp_u64(m, "max_time_ns", 24 * 3600 * NSEC_PER_SEC, &maxt, err, errlen) ||
	    rp_u64(m, "think", 1000000000ull, &think, err, errlen) ||
	    rp_u64(m, "server_cpu", 65536, scpu, err, errlen))
		return -EINVAL;
	if (size > o->max_size)
		return limit(err, errlen, "message size", size, o->max_size, "--max-size");
	if (count + warmup > o->max_count)
		return limit(err, errlen, "message count", count + warmup, o->max_count, "--max-count");
	if (dur > o->max_duration_ns)
		return limit(err, errlen, "duration (ns)", dur, o->max_duration_ns, "--max-duration");
	if (clients < 1)
		return errf(err, errlen, EINVAL, "clients 0: a cell needs at least 1");
	if (clients > o->max_clients)
		return limit(err, errlen, "clients", clients, o->max_clients, "--max-clients");
	if (size < MSG_HDR_SIZE)
		return errf(err, errlen, EINVAL, "message size %llu below the header",
			    (unsigned long long)size);
	sp->size[sp->nsize++] = size;
	sp->clients[sp->nclients++] = (unsigned)clients;
	sp->think[sp->nthink++] = think;
	sp->count = count;
	sp->warmup = warmup;
	sp->warmup_set = true;
	sp->duration_ns = dur;
	sp->timeout_ns = timeout;
	/* a cell of a count runs at most the duration limit (and slack) here */
	sp->max_time_ns = maxt && maxt < o->max_duration_ns + 10 * NSEC_PER_SEC ?
				  maxt :
				  o->max_duration_ns + 10 * NSEC_PER_SEC;
	sp->max_time_set = true;
	return 0;
}

int serve_request_spec(const struct serve_opts *o, const struct sockaddr_storage *local,
		       const json_t *m, struct plan_spec *sp, struct serve_req *rq, char *err,
		       size_t errlen)
{
	const struct transport *tp;
	const struct pattern *pat;
	char tpn[32], patn[32], tpo[512], pato[512], sched[32];
	uint64_t scpu;
	int ret;

	memset(sp, 0, sizeof(*sp));
	if ((ret = rp_str(m, "transport", tpn, sizeof(tpn), err, errlen)) ||
	    (ret = rp_str(m, "pattern", patn, sizeof(patn), err, errlen)) ||
	    (ret = rp_str(m, "tp_opts", tpo, sizeof(tpo), err, errlen)) ||
	    (ret = rp_str(m, "pat_opts", pato, sizeof(pato), err, errlen)) ||
	    (ret = rp_str(m, "sched", sched, sizeof(sched), err, errlen)))
		return -EINVAL;
	if ((ret = spec_numbers(o, m, sp, &scpu, err, errlen)))
		return ret;
	tp = transport_find(tpn);
	if (!tp || !(tp->caps & TP_REMOTE))
		return errf(err, errlen, EINVAL, "transport '%s' does not run between hosts here", tpn);
	pat = pattern_find(patn);
	if (!pat || pat->channels || pat->periodic)
		return errf(err, errlen, EINVAL, "pattern '%s' does not run between hosts here", patn);
	if (!(rq->tp_opts = opts_block(tp->options, tp->opts_size, err, errlen)) ||
	    !(rq->pat_opts = opts_block(pat->options, pat->opts_size, err, errlen)))
		return -ENOMEM;
	if ((ret = parse_kv(tp->options, rq->tp_opts, tpo, err, errlen)) ||
	    (ret = parse_kv(pat->options, rq->pat_opts, pato, err, errlen)) ||
	    (ret = remote_opts(rq, tp, local, err, errlen)))
		return ret;
	sp->tp[sp->ntp] = tp;
	sp->tp_named[sp->ntp] = true;
	sp->tp_opts[sp->ntp++] = rq->tp_opts;
	sp->pat[sp->npat] = pat;
	sp->pat_opts[sp->npat++] = rq->pat_opts;
	sp->threads[sp->nep++] = json_is_true(json_object_get(m, "threads"));
	sp->verify = json_is_true(json_object_get(m, "verify"));
	sp->nrate = 1;		/* unpaced: rate 0, rate_text "" */
	sp->pm_qos_us = -1;
	if ((ret = serve_pin(m, scpu, &sp->pin[sp->npin++], err, errlen)))
		return ret;
	if (sched_parse(sched, &sp->sched[sp->nsched++], err, errlen))
		return -EINVAL;
	if (sp->pin[0].server_cpu >= 0 && sp->pin[0].server_cpu >= (int)sysconf(_SC_NPROCESSORS_CONF))
		return errf(err, errlen, EINVAL,
			    "--pin: CPU %d does not exist on the server (it has %ld)",
			    sp->pin[0].server_cpu, sysconf(_SC_NPROCESSORS_CONF));
	return allow_check(&o->allow, &sp->sched[0], sp->pin[0].server_cpu, true, err, errlen);
}

void serve_req_free(struct serve_req *rq)
{
	free(rq->tp_opts);
	free(rq->pat_opts);
	rq->tp_opts = rq->pat_opts = NULL;
}
