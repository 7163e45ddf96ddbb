/* SPDX-License-Identifier: MIT */
/* Shared by ipclab serve's files before authentication: serve_auth.c (the
 * handshakes: slots, accepting, reading the hellos, checking the tokens)
 * and serve_throttle.c (the tables of wrong tokens by address and network,
 * and the turns they give the hellos). */
#ifndef IPCLAB_REMOTE_SERVE_AUTH_INT_H
#define IPCLAB_REMOTE_SERVE_AUTH_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "ipclab/netaddr.h"
#include "ipclab/remote.h"
#include "serve_auth.h"

struct sa_conn {
	int fd;			/* -1: a free slot */
	bool read;		/* the hello is read; its token waits for its turn */
	uint64_t t0, deadline;	/* accepted; the hello due by (read: its turn by) */
	struct sockaddr_storage from;
	char peer[NET_ADDR_TEXT];
	uint32_t got, len;
	char buf[4 + SA_HELLO_MAX];
	char token[REMOTE_TOKEN_MAX + 2];
};

/* An address's or a network's wrong tokens. */
struct sa_addr {
	bool used;
	uint8_t key[9];		/* family, then the address's or network's bytes */
	unsigned fails;		/* wrong tokens: in a row (address), lately (network) */
	uint64_t next_ns;	/* address: its next hello checked no sooner;
				 * network: its last wrong token */
};

struct serve_auth {
	const struct serve_opts *o;
	int lfd;
	uint64_t seed;			/* of the tables' hash: a guesser cannot aim */
	struct sa_conn c[SA_SLOTS];
	struct sa_addr addr[SA_ADDRS];
	struct sa_addr net[SA_NETS];
	uint64_t global_next_ns;	/* no waiting token checked before, after a wrong one */
	uint64_t global_said_ns, evict_said_ns;
	unsigned evicted;
};

/* serve_auth.c: told why (a "refused" frame), closed. */
void sa_conn_refuse(struct sa_conn *c, const char *why);

/* serve_throttle.c */
/* An address's key (IPv4, IPv6 /64), or with net its network's (IPv4 /24,
 * IPv6 /48). */
void sa_addr_key(const struct sockaddr_storage *ss, bool net, uint8_t key[9]);
/* The entry of ss (an address, or with net its network); NULL: none,
 * unless make: then a new one. */
struct sa_addr *sa_addr_find(struct serve_auth *a, const struct sockaddr_storage *ss, bool net,
			     bool make, uint64_t now);
/* Neither its address nor its network guessed wrong lately. */
bool sa_is_clean(struct serve_auth *a, const struct sa_conn *c, uint64_t now);
/* When the token of c may be checked. */
uint64_t sa_turn_of(struct serve_auth *a, const struct sa_conn *c, uint64_t now);
/* c's token was wrong: counted against its address and network, c refused. */
void sa_wrong_token(struct serve_auth *a, struct sa_conn *c, bool clean, uint64_t now);
/* The read hello to check next (NULL: none due); those whose turn comes
 * too late are refused on the way. */
struct sa_conn *sa_next_due(struct serve_auth *a, uint64_t now);

#endif
