// SPDX-License-Identifier: MIT
/* ipclab's own work per ping-pong exchange (what the pattern adds around
 * send and recv: two clock reads, filling and checking two 16-byte headers
 * and payloads, one histogram entry, the progress and stop checks), timed
 * without any IPC, against a bare pipe round trip between two processes
 * pinned to one CPU measured in the same run. Prints both and the ratio.
 * usage: overhead [SIZE] [ITERS] */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipclab/metrics.h"
#include "ipclab/msg.h"
#include "ipclab/util.h"

static void pin0(void)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(0, &s);
	sched_setaffinity(0, sizeof(s), &s);
}

/* The harness side of one exchange, both ends, as the patterns do it. */
static double harness_ns(size_t size, long iters)
{
	static _Alignas(64) unsigned char req[4096], rep[4096];
	static struct hist h;
	volatile uint64_t progress = 0, stop = 0;
	uint64_t t0 = now_ns();

	hist_init(&h);
	for (long i = 0; i < iters; i++) {
		uint64_t a = now_ns();
		struct msg_hdr *q = (void *)req, *r = (void *)rep;

		msg_fill(req, size, (uint32_t)i, false);	/* client request */
		q->seq = (uint32_t)i, q->len = (uint32_t)size, q->ts_ns = 0;
		if (q->seq != (uint32_t)i || q->len != size)	/* server checks */
			abort();
		msg_fill(rep, size, (uint32_t)i, false);	/* server reply */
		r->seq = (uint32_t)i, r->len = (uint32_t)size, r->ts_ns = 0;
		progress = (uint64_t)i;
		if (r->seq != (uint32_t)i || r->len != size || stop)	/* client checks */
			abort();
		hist_add(&h, now_ns() - a);
		progress = (uint64_t)i + 1;
	}
	(void)progress;
	return (double)(now_ns() - t0) / (double)iters;
}

static double pipe_rtt_ns(long iters)
{
	int a[2], b[2];
	char c = 0;

	if (pipe(a) || pipe(b))
		return 0;
	pid_t pid = fork();

	if (pid == 0) {
		pin0();
		for (long i = 0; i < iters; i++)
			if (read(a[0], &c, 1) != 1 || write(b[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	uint64_t t0 = now_ns();

	for (long i = 0; i < iters; i++)
		if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1)
			return 0;
	double ns = (double)(now_ns() - t0) / (double)iters;

	waitpid(pid, NULL, 0);
	return ns;
}

int main(int argc, char **argv)
{
	size_t size = argc > 1 ? strtoul(argv[1], NULL, 0) : 16;
	long iters = argc > 2 ? strtol(argv[2], NULL, 0) : 200000;

	if (size < MSG_HDR_SIZE || size > 4096)
		return fprintf(stderr, "overhead: SIZE from 16 to 4096\n"), 2;
	pin0();
	double h = harness_ns(size, iters), p = pipe_rtt_ns(iters / 4);

	printf("harness per exchange %.1f ns, pipe round trip (one CPU) %.0f ns, ratio %.2f %%\n",
	       h, p, 100 * h / p);
	return 0;
}
