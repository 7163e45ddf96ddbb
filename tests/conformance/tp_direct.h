/* SPDX-License-Identifier: MIT */
/* tp_direct's parts: what each side of a case does (tp_side.c) and the
 * leftover checks (tp_leftover.c); the driver is tp_direct.c. */
#ifndef TP_DIRECT_H
#define TP_DIRECT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ipclab/transport.h"
#include "ipclab/util.h"

#define MAXC 4			/* clients in the multi-client case */
#define LOSSY_POLL_MS 50	/* lossy: how often to look whether the sender is done */

struct tcase {
	const struct transport *tp;
	struct tp_config cfg;
	unsigned count;
	bool eof_at_server;	/* which side reads EOF after the other's close */
	bool lossy;
	char name[96];
};

/* One side's result, in shared memory so forked clients report like threads. */
struct side_res {
	int failed;
	int sent;		/* lossy: this client sent all (atomic) */
	int got_all;		/* lossy: the server sent all to this client */
	uint64_t lost, dups;
	char err[ERRLEN];
};

struct side {
	const struct tcase *tc;
	struct tp_channel *ch;
	enum tp_role role;
	unsigned id;
	struct side_res *res;
	struct side_res *all;	/* [0] server, [1 + id] client id */
	pthread_t th;
	pid_t pid;
	bool started;		/* threads: created */
	int done;		/* threads: set when finished (atomic) */
};

/* Record a side's first failure ("server 0: ..."); returns -1. */
int side_fail(struct side *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "EOF", "short" or strerror for a send/recv result. */
const char *rstr(ssize_t n);
/* A cache-line aligned buffer for one message of the case. */
unsigned char *side_buf(const struct tcase *tc);
/* The sides of an exchange (pthread start routines; clients also run
 * forked): the server opens one endpoint per client and receives count
 * messages from each, then sends count to each; the client sends, then
 * receives. Whichever side tc->eof_at_server names then reads EOF after
 * the other's close. Every message is checked: sequence, length, payload. */
void *server_main(void *arg);
void *client_main(void *arg);

/* Mount the mqueue filesystem on /dev/mqueue if needed (as root). */
void leftovers_init(void);
/* Print "FAIL <name>: left behind: ..." for each object of this process
 * still present (POSIX queues and shm by the pid in their names, SysV
 * objects this process created, anything in dir); returns their number. */
unsigned leftovers_report(const char *name, const char *dir);

#endif
