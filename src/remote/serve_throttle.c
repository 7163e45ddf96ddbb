// SPDX-License-Identifier: MIT
/* ipclab serve's throttle of token guesses (serve_auth.c accepts, reads
 * the hellos and checks their tokens; serve_auth_int.h holds what the two
 * files share): the tables of the addresses and networks that sent wrong
 * tokens, when a hello's token may be checked, which due hello goes
 * first, and the refusals of a wrong token and of a turn too late.
 *
 * Guessing is slowed down, by where it comes from. A hello from an address
 * with no wrong token lately, in a network (IPv4 /24, IPv6 /48) with fewer
 * than SA_NET_FREE, is checked at once: a flood from fresh addresses
 * elsewhere holds up no such client. Any other hello waits its turn: after
 * the k-th wrong token in a row from its address, no sooner than
 * SA_DELAY0_NS * 2^(k-1) later (at most SA_DELAY_MAX_NS), and no sooner
 * than SA_GLOBAL_GAP_NS after the last wrong token of any waiting hello
 * (at most 10 such guesses a second from all addresses together); those
 * whose addresses guessed wrong fewer times go first. A hello waits up to
 * SA_TURN_NS, at most SA_WAIT_MAX at once; a later turn is refused at once
 * as throttled, its token unread. The wait is before the check, not before
 * the answer: a guesser learns nothing sooner by hanging up. A right token
 * clears its address. The log says when and for how long. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "serve_auth.h"
#include "serve_auth_int.h"

/* ---- addresses, networks and their wrong tokens ---------------------------- */

/* An address's key (IPv4, IPv6 /64), or with net its network's (IPv4 /24,
 * IPv6 /48). */
void sa_addr_key(const struct sockaddr_storage *ss, bool net, uint8_t key[9])
{
	memset(key, 0, 9);
	if (ss->ss_family == AF_INET) {
		key[0] = 4;
		memcpy(key + 1, &((const struct sockaddr_in *)ss)->sin_addr, net ? 3 : 4);
	} else if (ss->ss_family == AF_INET6) {
		key[0] = 6;
		memcpy(key + 1, &((const struct sockaddr_in6 *)ss)->sin6_addr, net ? 6 : 8);
	}
}

static uint64_t key_hash(uint64_t seed, const uint8_t key[9])
{
	uint64_t h = seed ^ 0xcbf29ce484222325ull;	/* FNV-1a, seeded */

	for (int i = 0; i < 9; i++)
		h = (h ^ key[i]) * 0x100000001b3ull;
	return h ^ h >> 29;
}

#define SA_PROBE 8	/* entries a key may sit in, from its hash on */

/* The entry of ss (an address, or with net its network) in its table;
 * NULL: none, unless make: then a new one, in the place of the one of
 * those SA_PROBE whose last turn came longest ago. Entries not used for
 * SA_FORGET_NS are forgotten on the way. */
struct sa_addr *sa_addr_find(struct serve_auth *a, const struct sockaddr_storage *ss, bool net,
			     bool make, uint64_t now)
{
	struct sa_addr *t = net ? a->net : a->addr, *old = NULL;
	unsigned mask = (net ? SA_NETS : SA_ADDRS) - 1;
	uint8_t key[9];
	uint64_t h;

	sa_addr_key(ss, net, key);
	h = key_hash(a->seed, key);
	for (unsigned i = 0; i < SA_PROBE; i++) {
		struct sa_addr *e = &t[(h + i) & mask];

		if (e->used && now > e->next_ns + SA_FORGET_NS)
			e->used = false;
		if (e->used && !memcmp(e->key, key, sizeof(key)))
			return e;
		if (!old || (old->used && (!e->used || e->next_ns < old->next_ns)))
			old = e;
	}
	if (!make)
		return NULL;
	memset(old, 0, sizeof(*old));
	old->used = true;
	memcpy(old->key, key, sizeof(key));
	return old;
}

static unsigned addr_fails(struct serve_auth *a, const struct sockaddr_storage *ss, uint64_t now)
{
	const struct sa_addr *e = sa_addr_find(a, ss, false, false, now);

	return e ? e->fails : 0;
}

/* Neither its address nor its network guessed wrong lately: its token is
 * checked at once. */
bool sa_is_clean(struct serve_auth *a, const struct sa_conn *c, uint64_t now)
{
	const struct sa_addr *n = sa_addr_find(a, &c->from, true, false, now);

	return !addr_fails(a, &c->from, now) && (!n || n->fails < SA_NET_FREE);
}

/* When the token of c may be checked. */
uint64_t sa_turn_of(struct serve_auth *a, const struct sa_conn *c, uint64_t now)
{
	const struct sa_addr *e = sa_addr_find(a, &c->from, false, false, now);
	uint64_t t = a->global_next_ns;

	if (sa_is_clean(a, c, now))
		return now;
	return e && e->next_ns > t ? e->next_ns : t;
}

/* ---- a wrong token, a turn too late, the order of the due ----------------- */

void sa_wrong_token(struct serve_auth *a, struct sa_conn *c, bool clean, uint64_t now)
{
	struct sa_addr *e = sa_addr_find(a, &c->from, false, true, now);
	struct sa_addr *n = sa_addr_find(a, &c->from, true, true, now);
	unsigned shift;
	uint64_t delay;

	e->fails++;
	shift = e->fails - 1 < 20 ? e->fails - 1 : 20;
	delay = SA_DELAY0_NS << shift;
	if (delay > SA_DELAY_MAX_NS)
		delay = SA_DELAY_MAX_NS;
	e->next_ns = now + delay;
	n->fails++;
	n->next_ns = now;
	if (!clean)
		a->global_next_ns = now + SA_GLOBAL_GAP_NS;
	serve_log(a->o, "%s: refused: wrong token (%u in a row from this address); its next hello is checked no sooner than %llu ms from now",
		  c->peer, e->fails, (unsigned long long)(delay / NSEC_PER_MSEC));
	sa_conn_refuse(c, "wrong or missing token (give the server's token with --token-file, IPCLAB_TOKEN or --token)");
}

/* Its turn will not come in time: refused, the token unread. */
static void throttled(struct serve_auth *a, struct sa_conn *c, uint64_t now, uint64_t turn)
{
	const struct sa_addr *e = sa_addr_find(a, &c->from, false, false, now);
	char why[ERRLEN];

	if (e && e->next_ns >= turn)
		snprintf(why, sizeof(why), "throttled: %u wrong tokens in a row from this address; its next hello is checked in %.1f s",
			 e->fails, (double)(turn - now) / 1e9);
	else
		snprintf(why, sizeof(why), "throttled: wrong tokens from addresses and networks that sent some lately are checked at most %d a second; try again in a moment",
			 (int)(NSEC_PER_SEC / SA_GLOBAL_GAP_NS));
	serve_log(a->o, "%s: refused unchecked: %s", c->peer, why);
	sa_conn_refuse(c, why);
}

/* Of two hellos due, the one to check first: a clean one, then the one of
 * the address with fewer wrong tokens, then the older. */
static bool goes_first(struct serve_auth *a, const struct sa_conn *x, const struct sa_conn *y,
		       uint64_t now)
{
	bool cx = sa_is_clean(a, x, now), cy = sa_is_clean(a, y, now);
	unsigned fx, fy;

	if (cx != cy)
		return cx;
	fx = addr_fails(a, &x->from, now);
	fy = addr_fails(a, &y->from, now);
	return fx != fy ? fx < fy : x->t0 < y->t0;
}

/* The read hello to check next (NULL: none due); those whose turn comes
 * too late are refused on the way. */
struct sa_conn *sa_next_due(struct serve_auth *a, uint64_t now)
{
	struct sa_conn *best = NULL;

	for (unsigned i = 0; i < SA_SLOTS; i++) {
		struct sa_conn *c = &a->c[i];
		uint64_t turn;

		if (c->fd < 0 || !c->read)
			continue;
		turn = sa_turn_of(a, c, now);
		if (turn > c->deadline) {
			throttled(a, c, now, turn);
			continue;
		}
		if (turn > now) {
			if (a->global_next_ns >= turn && now - a->global_said_ns > 10 * NSEC_PER_SEC) {
				serve_log(a->o, "wrong tokens: at most %d checked a second from addresses and networks that sent some lately; their hellos wait their turn",
					  (int)(NSEC_PER_SEC / SA_GLOBAL_GAP_NS));
				a->global_said_ns = now;
			}
			continue;
		}
		if (!best || goes_first(a, c, best, now))
			best = c;
	}
	return best;
}
