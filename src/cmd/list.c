// SPDX-License-Identifier: MIT
/* `ipclab list`: every transport and pattern, one line each, with
 * capabilities, the largest message here and private options. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "ipclab/pattern.h"

static void caps_text(unsigned caps, char *buf, size_t len)
{
	static const struct { unsigned bit; const char *name; } names[] = {
		{ TP_STREAM, "stream" }, { TP_DGRAM, "dgram" }, { TP_LOSSY, "lossy" },
		{ TP_MULTI_CLIENT, "multi-client" }, { TP_POLLABLE, "pollable" },
		{ TP_NAMED, "named" }, { TP_ZEROCOPY, "zero-copy" },
		{ TP_THREAD_ONLY, "thread-only" },
		{ TP_IN_PROCESS, "self-test" }, { TP_SPINS, "spins" },
		{ TP_NO_EINTR, "no-eintr" }, { TP_ZEROCOPY_SEND, "zero-copy-send" },
	};
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(names) && off < len; i++)
		if (caps & names[i].bit)
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? "," : "",
						names[i].name);
}

static void print_options(const struct opt_desc *o)
{
	for (; o && o->name; o++)
		printf("      -O %s=%s%s%s  %s\n", o->name, o->def && *o->def ? o->def : "0",
		       o->choices ? "  (" : "", o->choices ? o->choices : "", o->help);
}

int cmd_list(int argc, char **argv)
{
	char caps[160], maxs[32];

	(void)argv;
	if (argc > 1)
		return usage_error("list takes no arguments");

	printf("transports:\n");
	for (size_t i = 0; i < n_transports; i++) {
		const struct transport *tp = transports[i];
		size_t max = 0;

		if (tp->max_msg) {
			_Alignas(16) char buf[4096] = { 0 };	/* the transport's defaults */
			char err[ERRLEN];

			if (tp->opts_size <= sizeof(buf) && !opt_defaults(tp->options, buf, err, sizeof(err)))
				max = tp->max_msg(buf);
		}
		caps_text(tp->caps, caps, sizeof(caps));
		if (max)
			fmt_bytes(maxs, sizeof(maxs), (double)max);
		else
			snprintf(maxs, sizeof(maxs), "-");
		printf("  %-18s %-44s max %-9s %s\n", tp->name, caps, maxs, tp->summary);
		print_options(tp->options);
	}
	printf("patterns:\n");
	for (size_t i = 0; i < n_patterns; i++) {
		printf("  %-18s latency: %-8s %s\n", patterns[i]->name, patterns[i]->lat_kind,
		       patterns[i]->summary);
		print_options(patterns[i]->options);
	}
	return 0;
}
