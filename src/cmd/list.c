// SPDX-License-Identifier: MIT
/* `ipclab list`: every transport and pattern, one line each, with
 * capabilities, the largest message here and private options. Transports
 * come in groups (kernel objects, shared memory, libraries, libipcring),
 * each under a heading indented by one space, so that whatever reads the
 * list keeps finding a transport as a line "  NAME  CAPS ..." in the
 * "transports:" section. */
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

enum tp_group { G_KERNEL, G_SHM, G_LIB, G_RING, G_N };

static const char *const group_names[G_N] = {
	[G_KERNEL] = "kernel objects",
	[G_SHM] = "shared memory",
	[G_LIB] = "libraries",
	[G_RING] = "libipcring",
};

/* A transport's group, by its name: whatever is not named here is a
 * kernel object (a new library transport adds its prefix here). */
static enum tp_group group_of(const struct transport *tp)
{
	static const struct { const char *prefix; enum tp_group g; } by_name[] = {
		{ "shm-", G_SHM }, { "cacheline", G_SHM }, { "barrier", G_SHM },
		{ "zmq-", G_LIB }, { "nng-", G_LIB }, { "libqb-", G_LIB },
		{ "io-uring", G_LIB }, { "dbus", G_LIB },
		{ "ring", G_RING },
	};

	for (size_t i = 0; i < ARRAY_SIZE(by_name); i++)
		if (strncmp(tp->name, by_name[i].prefix, strlen(by_name[i].prefix)) == 0)
			return by_name[i].g;
	return G_KERNEL;
}

static void print_transport(const struct transport *tp)
{
	char caps[160], maxs[32];
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

int cmd_list(int argc, char **argv)
{
	(void)argv;
	if (argc > 1)
		return usage_error("list takes no arguments");

	printf("transports:\n");
	for (int g = 0; g < G_N; g++) {
		bool heading = false;

		for (size_t i = 0; i < n_transports; i++) {
			if (group_of(transports[i]) != (enum tp_group)g)
				continue;
			if (!heading)
				printf(" %s:\n", group_names[g]);
			heading = true;
			print_transport(transports[i]);
		}
	}
	printf("patterns:\n");
	for (size_t i = 0; i < n_patterns; i++) {
		printf("  %-18s latency: %-8s %s\n", patterns[i]->name,
		       lat_kind_key(patterns[i]->lat_kind), patterns[i]->summary);
		print_options(patterns[i]->options);
	}
	return 0;
}
