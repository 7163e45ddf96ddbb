// SPDX-License-Identifier: MIT
/* The smallest honest pipe stream: a writer process on one CPU writes N
 * messages of S bytes, a reader on another CPU reads them, nothing else.
 * bench/fidelity.sh compares ipclab's pipe stream against it.
 * usage: pipe_loop SIZE COUNT WRITER_CPU READER_CPU  -> prints msgs/s */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	if (sched_setaffinity(0, sizeof(s), &s))
		perror("sched_setaffinity"), exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void xfer(int fd, char *buf, size_t len, int writing)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = writing ? write(fd, buf + done, len - done) : read(fd, buf + done, len - done);

		if (n <= 0)
			perror("pipe"), exit(1);
		done += (size_t)n;
	}
}

int main(int argc, char **argv)
{
	if (argc != 5)
		return fprintf(stderr, "usage: %s SIZE COUNT WRITER_CPU READER_CPU\n", argv[0]), 2;
	size_t size = strtoul(argv[1], NULL, 0);
	long count = strtol(argv[2], NULL, 0);
	int p[2];
	char *buf = calloc(1, size);
	double t0;

	if (!buf || pipe(p))
		return perror("setup"), 1;
	pid_t pid = fork();

	if (pid == 0) {
		pin(atoi(argv[3]));
		close(p[0]);
		for (long i = 0; i < count; i++) {
			buf[0] = (char)i;
			xfer(p[1], buf, size, 1);
		}
		_exit(0);
	}
	pin(atoi(argv[4]));
	close(p[1]);
	t0 = now();
	for (long i = 0; i < count; i++)
		xfer(p[0], buf, size, 0);
	double el = now() - t0;

	waitpid(pid, NULL, 0);
	printf("%.0f\n", count / el);
	return 0;
}
