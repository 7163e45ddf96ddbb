// SPDX-License-Identifier: MIT
/* Fixtures of the reporter tests: a hand-made report whose every value is
 * known, so that what the reporters write can be checked value by value. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ipclab/result.h"
#include "ipclab/util.h"
#include "report_fixture.h"

const char skip_reason[] = "mq_open: \"mqueue\" missing, mount it; see docs";
const uint64_t lat_values[] = { 100, 100, 300, 5000, 123456, 123457 };
const size_t n_lat_values = ARRAY_SIZE(lat_values);

void fill_ok(struct result *r)
{
	snprintf(r->transport, sizeof(r->transport), "pipe");
	snprintf(r->pattern, sizeof(r->pattern), "pingpong");
	r->cell.size = 64;
	r->cell.count = 1000;
	r->cell.warmup = 10;
	r->cell.clients = 1;
	r->cell.timeout_ns = 5 * NSEC_PER_SEC;
	snprintf(r->cell.pin.text, sizeof(r->cell.pin.text), "split");
	snprintf(r->cell.sched.text, sizeof(r->cell.sched.text), "other");
	r->status = RES_OK;
	r->settings.n = 2;
	snprintf(r->settings.kv[0].key, 32, "pipe_size_bytes");
	snprintf(r->settings.kv[0].val, 64, "65536");
	snprintf(r->settings.kv[1].key, 32, "mode");
	snprintf(r->settings.kv[1].val, 64, "0600");
	snprintf(r->tp_opts, sizeof(r->tp_opts), "nonblock=1,label=a b");
	snprintf(r->pat_opts, sizeof(r->pat_opts), "think=0");
	r->elapsed_ns = NSEC_PER_SEC + 7;
	r->msgs = 1000;
	r->bytes = 64000;
	r->msgs_per_s = 1000.0 / 3;
	r->bytes_per_s = 64000.0 / 3;
	r->lat_kind = LAT_RTT;
	hist_init(&r->hist);
	for (size_t i = 0; i < ARRAY_SIZE(lat_values); i++)
		hist_add(&r->hist, lat_values[i]);
	r->lat_samples = r->hist.count;
	r->lat_min_ns = 100;
	r->lat_mean_ns = hist_mean(&r->hist);
	r->lat_p50_ns = 300;
	r->lat_p90_ns = r->lat_p99_ns = r->lat_p99_9_ns = r->lat_p99_99_ns = 123456;
	r->lat_max_ns = 123457;
	r->sample_every = 1;
	r->cpu_pct_total = 150.25;
	r->cpu_ns_per_msg = 1502500.5;
	r->sys_ctx_switches_per_s = 2000.5;
	r->sys_intr_per_s = 0.1;
	r->sys_busy_pct = 75.5;
	r->ncpu = 2;
	r->cpu_busy_pct[0] = 80;
	r->cpu_busy_pct[1] = 71.25;
	r->zerocopy = true;
	r->nsides = 2;
	r->sides[0] = (struct side_result){ .role = TP_SERVER, .user_ns = 5, .sys_ns = 6,
					    .cpu_pct = 75.5, .msgs = 1000, .bytes = 64000,
					    .elapsed_ns = NSEC_PER_SEC };
	r->sides[1] = r->sides[0];
	r->sides[1].role = TP_CLIENT;
}

void fill_skipped(struct result *r)
{
	snprintf(r->transport, sizeof(r->transport), "posix-mq");
	snprintf(r->pattern, sizeof(r->pattern), "pingpong");
	r->cell.size = 4096;
	r->cell.threads = true;
	r->cell.clients = 2;
	r->cell.verify = true;
	snprintf(r->cell.pin.text, sizeof(r->cell.pin.text), "none");
	snprintf(r->cell.sched.text, sizeof(r->cell.sched.text), "fifo:50");
	snprintf(r->section, sizeof(r->section), "seed-000");
	r->status = RES_SKIPPED;
	snprintf(r->reason, sizeof(r->reason), "%s", skip_reason);
	r->lat_kind = LAT_RTT;
	hist_init(&r->hist);
}

void fill_env(struct env_info *e)
{
	snprintf(e->kernel, sizeof(e->kernel), "6.1.0 #1 SMP x86_64");
	snprintf(e->cpu_model, sizeof(e->cpu_model), "Test CPU @ 1GHz");
	snprintf(e->clocksource, sizeof(e->clocksource), "tsc");
	snprintf(e->virtualization, sizeof(e->virtualization), "kvm");
	snprintf(e->governor, sizeof(e->governor), "none");
	snprintf(e->hostname, sizeof(e->hostname), "lab");
	e->cpus_online = 2;
	e->clock = (struct clock_info){ .cost_ns = 21.5, .resolution_ns = 1 };
}

int setup(void **state)
{
	struct report *rep = calloc(1, sizeof(*rep));

	assert_non_null(rep);
	rep->results = calloc(2, sizeof(*rep->results));
	assert_non_null(rep->results);
	rep->n = 2;
	rep->cmdline = "ipclab run -t pipe,posix-mq -O label=\"a b\"";
	fill_env(&rep->env);
	fill_ok(&rep->results[0]);
	fill_skipped(&rep->results[1]);
	*state = rep;
	return 0;
}

int teardown(void **state)
{
	struct report *rep = *state;

	free(rep->results);
	free(rep);
	return 0;
}

char *capture(int (*fn)(FILE *, const struct report *), const struct report *rep)
{
	FILE *f = tmpfile();
	char *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fn(f, rep), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}


const char *line_of(const char *text, size_t n, char *buf, size_t len)
{
	const char *end;

	while (n-- && text)
		text = (text = strchr(text, '\n')) ? text + 1 : NULL;
	if (!text || !*text)
		return NULL;
	end = strchr(text, '\n');
	snprintf(buf, len, "%.*s", (int)(end ? end - text : (ptrdiff_t)strlen(text)), text);
	return buf;
}
