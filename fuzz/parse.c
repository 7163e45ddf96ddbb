// SPDX-License-Identifier: MIT
/*
 * parse.c - libFuzzer harness: everything that parses what a user types.
 * Byte 0 picks the parser, the rest is its text (NUL-terminated, in a buffer
 * of exactly that size, so that an over-read is seen): parse_size,
 * parse_count, parse_duration, parse_u64, --pin, --sched, one -O option of
 * any transport or pattern (byte 1 picks it), or a whole plan (the lists of
 * `ipclab run`, one a line, then -O key=value lines) built as `ipclab run`
 * builds it. Besides never crashing: what parses, parses back to the same
 * value, and a plan holds only cells within the documented limits.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_internal.h"
#include "ipclab/msg.h"
#include "ipclab/opt.h"
#include "ipclab/pattern.h"
#include "ipclab/placement.h"
#include "ipclab/transport.h"
#include "ipclab/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_number(int (*parse)(const char *, uint64_t *), const char *s)
{
	uint64_t v, w;
	char buf[32];

	if (parse(s, &v))
		return;
	/* the plain decimal form of what parsed reads back the same */
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	if (parse(buf, &w) || w != v)
		abort();
}

static void check_duration(const char *s)
{
	uint64_t v, w;
	char buf[40];

	if (parse_duration(s, &v))
		return;
	snprintf(buf, sizeof(buf), "%lluns", (unsigned long long)v);
	if (parse_duration(buf, &w) || w != v)
		abort();
}

static void check_pin(const char *s)
{
	struct pin_spec p;
	char err[ERRLEN];

	if (pin_parse(s, &p, err, sizeof(err))) {
		if (!err[0] || !memchr(err, '\0', sizeof(err)))
			abort();	/* a refusal always says why */
		return;
	}
	if (p.server_cpu < -1 || p.server_cpu >= CPU_SETSIZE ||
	    p.client_cpu < -1 || p.client_cpu >= CPU_SETSIZE)
		abort();
}

static void check_sched(const char *s)
{
	struct sched_spec sp;
	char err[ERRLEN];

	if (sched_parse(s, &sp, err, sizeof(err))) {
		if (!err[0])
			abort();
		return;
	}
	if ((sp.policy == SCHED_FIFO || sp.policy == SCHED_RR) &&
	    (sp.prio < sched_get_priority_min(sp.policy) ||
	     sp.prio > sched_get_priority_max(sp.policy)))
		abort();
}

/* The n-th option of all transports' and patterns' tables, with its size. */
static const struct opt_desc *nth_option(unsigned n, size_t *blk)
{
	unsigned total = 0, k;
	const struct opt_desc *o;

	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < n_transports + n_patterns; i++) {
			const struct opt_desc *d = i < n_transports ? transports[i]->options
								    : patterns[i - n_transports]->options;
			size_t sz = i < n_transports ? transports[i]->opts_size
						     : patterns[i - n_transports]->opts_size;

			for (o = d, k = 0; o && o->name; o++, k++) {
				if (pass == 1 && total == n) {
					*blk = sz;
					return o;
				}
				total++;
			}
		}
		if (!total)
			return NULL;
		n %= total;
		total = 0;
	}
	return NULL;
}

static size_t field_size(const struct opt_desc *d)
{
	switch (d->type) {
	case OPT_BOOL:
	case OPT_CHOICE:
		return sizeof(int);
	case OPT_STRING:
		return OPT_STR_MAX;
	default:
		return sizeof(uint64_t);
	}
}

static void check_option(unsigned n, const char *s)
{
	const struct opt_desc *d;
	char err[ERRLEN], text[OPT_STR_MAX + 32];
	size_t blk;
	void *a, *b;

	d = nth_option(n, &blk);
	if (!d || !(a = calloc(1, blk)) || !(b = calloc(1, blk)))
		abort();
	if (!opt_set(d, a, s, err, sizeof(err))) {
		/* what is reported (opt_format, a duration with its unit) is
		 * accepted back as the same value */
		opt_format(d, a, text, sizeof(text));
		if (opt_set(d, b, text, err, sizeof(err)) ||
		    memcmp((char *)a + d->offset, (char *)b + d->offset, field_size(d)))
			abort();
	} else if (!err[0]) {
		abort();
	}
	free(a);
	free(b);
}

/* Lines: transports, patterns, sizes, endpoints, pins, scheds, clients,
 * thinks, rates; then -O key=value, one a line. */
static void check_plan(char *s, unsigned flags)
{
	char **fields[9];
	struct run_args a;
	struct plan pl = { 0 };
	int ret;

	args_defaults(&a);
	fields[0] = &a.transports, fields[1] = &a.patterns, fields[2] = &a.sizes;
	fields[3] = &a.endpoints, fields[4] = &a.pins, fields[5] = &a.scheds;
	fields[6] = &a.clients, fields[7] = &a.thinks, fields[8] = &a.rates;
	a.quiet = true;
	a.dry_run = true;
	a.lenient = flags & 1;
	a.verify = flags & 2;
	for (unsigned i = 0; s; i++) {
		char *nl = strchr(s, '\n');

		if (nl)
			*nl = '\0';
		if (i < 9 && *s)
			*fields[i] = s;
		else if (i >= 9 && a.nkv < MAX_LIST)
			a.kv[a.nkv++] = s;
		s = nl ? nl + 1 : NULL;
	}
	ret = build_plan(&a, &pl);
	if (ret != 0 && ret != 2)
		abort();
	for (size_t i = 0; !ret && i < pl.n; i++) {
		const struct cell *c = &pl.cells[i];

		if (!c->tp || !c->pat || c->size < MSG_HDR_SIZE || c->size > (1u << 30) ||
		    c->clients < 1 || c->clients > MAX_CLIENTS)
			abort();
	}
	for (unsigned i = 0; i < pl.nblocks; i++)
		free(pl.opt_blocks[i]);
	free(pl.cells);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (size < 2 || size > 4096)
		return 0;
	s = malloc(size - 1);
	if (!s)
		return 0;
	memcpy(s, data + 2, size - 2);
	s[size - 2] = '\0';
	switch (data[0] % 8) {
	case 0: check_number(parse_size, s); break;
	case 1: check_number(parse_count, s); break;
	case 2: check_duration(s); break;
	case 3: check_number(parse_u64, s); break;
	case 4: check_pin(s); break;
	case 5: check_sched(s); break;
	case 6: check_option(data[1], s); break;
	default: check_plan(s, data[1]); break;
	}
	free(s);
	return 0;
}
