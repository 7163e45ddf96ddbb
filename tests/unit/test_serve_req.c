// SPDX-License-Identifier: MIT
/* Unit tests of ipclab serve's request decoding (src/remote/serve_req.c):
 * a "cell" request as run --peer sends it becomes a plan_spec whose one
 * cell plan_build makes, with the server's own listen address and a fresh
 * secret in the transport's options, the client's knobs carried and the
 * limits of the server applied; a request that sets listen, connect or
 * secret itself, or asks past a limit, is refused with why. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "ipclab/engine.h"
#include "ipclab/opt.h"
#include "ipclab/remote.h"
#include "ipclab/transport.h"
#include "../../src/remote/serve_req.h"

static json_t *request(const char *tp_opts, uint64_t size, uint64_t max_time_ns)
{
	json_t *m = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:i,s:b,s:b,s:I,s:I,s:I,s:i}",
			      "type", "cell", "transport", "tcp", "pattern", "pingpong", "tp_opts",
			      tp_opts, "pat_opts", "", "sched", "other", "size_bytes",
			      (json_int_t)size, "count", (json_int_t)5000, "warmup", (json_int_t)7,
			      "duration_ns", (json_int_t)0, "clients", 1, "threads", 1, "verify", 1,
			      "timeout_ns", (json_int_t)3000000000ll, "max_time_ns",
			      (json_int_t)max_time_ns, "think", (json_int_t)2, "server_cpu", 65536);

	assert_non_null(m);
	return m;
}

static void local_addr(struct sockaddr_storage *ss)
{
	struct sockaddr_in *a = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	a->sin_family = AF_INET;
	inet_pton(AF_INET, "127.0.0.1", &a->sin_addr);
}

static void opt_text(const struct cell *c, const char *key, char *buf, size_t len)
{
	const struct opt_desc *d = opt_find(c->tp->options, key);

	assert_non_null(d);
	opt_format(d, c->tp_opts, buf, len);
}

static void test_cell_from_request(void **state)
{
	struct serve_opts o;
	struct sockaddr_storage local;
	struct plan_spec sp;
	struct serve_req rq = { 0 };
	struct plan pl = { 0 };
	char err[ERRLEN] = "", v[OPT_STR_MAX + 8];
	json_t *m = request("nodelay=1", 256, 2000000000ull);
	const struct cell *c;

	(void)state;
	assert_int_equal(serve_opts_defaults(&o, err, sizeof(err)), 0);
	local_addr(&local);
	assert_int_equal(serve_request_spec(&o, &local, m, &sp, &rq, err, sizeof(err)), 0);
	assert_int_equal(plan_build(&sp, &pl, err, sizeof(err)), 0);
	assert_int_equal(pl.n, 1);
	c = &pl.cells[0];
	assert_string_equal(c->tp->name, "tcp");
	assert_string_equal(c->pat->name, "pingpong");
	assert_int_equal(c->size, 256);
	assert_int_equal(c->count, 5000);
	assert_int_equal(c->warmup, 7);
	assert_int_equal(c->think, 2);
	assert_int_equal(c->clients, 1);
	assert_true(c->threads && c->verify);
	assert_int_equal(c->timeout_ns, 3000000000ull);
	assert_int_equal(c->max_time_ns, 2000000000ull);	/* under the limit: the client's */
	assert_int_equal(c->pm_qos_us, -1);
	assert_true(c->rate == 0 && !c->rate_text[0]);
	assert_int_equal(c->pin.server_cpu, -1);
	assert_string_equal(c->pin.text, "none");
	assert_null(c->remote);
	/* the client's option, and the server's own address and secret */
	opt_text(c, "nodelay", v, sizeof(v));
	assert_string_equal(v, "1");
	opt_text(c, "listen", v, sizeof(v));
	assert_string_equal(v, "127.0.0.1");
	opt_text(c, "secret", v, sizeof(v));
	assert_int_equal(strlen(rq.secret), 32);
	assert_string_equal(v, rq.secret);
	plan_free(&pl);
	serve_req_free(&rq);
	json_decref(m);
}

static void test_max_time_capped(void **state)
{
	struct serve_opts o;
	struct sockaddr_storage local;
	struct plan_spec sp;
	struct serve_req rq = { 0 };
	char err[ERRLEN] = "";
	json_t *m = request("", 64, 0);	/* no limit asked: the server's */

	(void)state;
	assert_int_equal(serve_opts_defaults(&o, err, sizeof(err)), 0);
	local_addr(&local);
	assert_int_equal(serve_request_spec(&o, &local, m, &sp, &rq, err, sizeof(err)), 0);
	assert_true(sp.max_time_set);
	assert_int_equal(sp.max_time_ns, o.max_duration_ns + 10 * NSEC_PER_SEC);
	serve_req_free(&rq);
	json_decref(m);
}

static void refused(const char *tp_opts, uint64_t size, const char *why)
{
	struct serve_opts o;
	struct sockaddr_storage local;
	struct plan_spec sp;
	struct serve_req rq = { 0 };
	char err[ERRLEN] = "";
	json_t *m = request(tp_opts, size, 0);

	assert_int_equal(serve_opts_defaults(&o, err, sizeof(err)), 0);
	local_addr(&local);
	assert_int_equal(serve_request_spec(&o, &local, m, &sp, &rq, err, sizeof(err)), -EINVAL);
	if (!strstr(err, why))
		fail_msg("refusal '%s' does not say '%s'", err, why);
	serve_req_free(&rq);
	json_decref(m);
}

static void test_refusals(void **state)
{
	(void)state;
	refused("listen=0.0.0.0:1", 64, "option listen is the server's to set");
	refused("secret=x", 64, "option secret is the server's to set");
	refused("connect=10.0.0.1:1", 64, "option connect is the server's to set");
	refused("", (64ull << 20) + 1, "over this server's limit");
	refused("", 4, "below the header");
	refused("bogus=1", 64, "unknown option 'bogus'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cell_from_request),
		cmocka_unit_test(test_max_time_capped),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
