/* SPDX-License-Identifier: MIT */
/* tp_direct's parts: what each side of a case does (tp_side.c), the batch
 * operations' cases (tp_batch.c) and the leftover checks (tp_leftover.c);
 * the driver is tp_direct.c. */
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
	bool runs;		/* through reserve_n/commit_n, peek_n/release_n */
	int fault;		/* runs: BF_* spoilt in one side's run */
	bool fault_s2c;		/* ... the server's (to client 0), else the client's */
	uint32_t fault_at;	/* the place (counted from 0) it spoils */
	uint64_t seed;		/* runs: of the random run sizes */
	char name[160];
};

enum { BF_NONE, BF_DROP, BF_DUP, BF_CORRUPT };

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
/* A case's failure, "FAIL <name>: ..." (tp_direct.c). */
void case_fail(const struct tcase *tc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Create, exchange, destroy and check for leftovers (tp_direct.c). */
void run_case(struct tcase *tc);
/* Wait for a side's thread until @deadline; past it, SIGUSR1 it until it
 * returns: false then (tp_direct.c). */
bool join_by(struct side *s, uint64_t deadline);
/* The stop word back to 0 after a case; a case counted as run
 * (tp_direct.c). */
void stop_clear(void);
void case_begin(void);
/* A blocked receive (recv, or peek_n with tc->runs) ends with -EINTR on a
 * stop request (or EOF with TP_NO_EINTR) (tp_direct.c). */
/* An interrupt case's end: the byte on release_fd frees the idling side,
 * a then b joined by the deadline, each side's failure in res reported. */
void release_and_join(struct tcase *tc, int release_fd, struct side *a, struct side *b,
		      const struct side_res res[2], uint64_t deadline);
void run_intr_case(struct tcase *tc);
/* A received message's length, header and payload; its sequence in *seq. */
int check_msg(struct side *s, const unsigned char *buf, ssize_t n, uint32_t *seq);
/* tp_batch.c: the sides' loops through the batch operations, in runs of
 * random sizes mixed with single sends and receives; the fault cases'
 * verdict (the receiver must name the spoilt message); and every batch
 * case of a transport that has the operations. */
int send_runs(struct side *s, struct tp_endpoint *ep, unsigned char *buf);
/* In a fault case: does side @s send (@sending) or receive the spoilt run? */
bool fault_side(const struct side *s, bool sending);
int recv_runs(struct side *s, struct tp_endpoint *ep, unsigned char *buf);
void fault_verdict(const struct tcase *tc, const struct side_res *res);
void run_batch_cases(struct tcase *tc, unsigned div);
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
