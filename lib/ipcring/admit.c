// SPDX-License-Identifier: MIT
/*
 * admit.c - who may hold a handshake. A client's credentials (SO_PEERCRED,
 * what the kernel recorded at connect) are checked against the server's
 * policy as soon as it is accepted, before its hello: a peer the policy
 * refuses is told why at once and never holds one of the slots where
 * handshakes wait for their hello. The dispatcher also lets one uid hold
 * only hs_per_uid of those slots at a time (a quarter of max_conns, at
 * least 16; there are slots for four such beside max_conns open
 * connections), so a uid the policy allows cannot fill them either.
 */
#include <errno.h>
#include <unistd.h>

#include "internal.h"
#include "ipc.h"

static bool id_in(const uint32_t *v, unsigned int n, uint32_t x)
{
	for (unsigned int i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

int ipc_srv_policy(struct ipcring_server *s, const struct ipcring_cred *p, char *reason,
		   size_t len)
{
	int ret;

	if (s->allow) {
		ret = s->allow(s->allow_ctx, p, reason, len);
		if (ret && reason && !reason[0])
			ipc_reason(reason, len, "uid %u gid %u pid %d refused by the server's policy",
				   p->uid, p->gid, p->pid);
		return ret > 0 ? -EACCES : ret;
	}
	if (p->uid == (uint32_t)geteuid() || id_in(s->uids, s->nuids, p->uid) ||
	    id_in(s->gids, s->ngids, p->gid))
		return 0;
	ipc_reason(reason, len, "uid %u (gid %u, pid %d) is not allowed: this server accepts "
		   "uid %u%s", p->uid, p->gid, p->pid, (unsigned)geteuid(),
		   s->nuids || s->ngids ? " and its listed uids/gids" : " only");
	return -EACCES;
}

/* Refuse a connection just accepted, before its hello, and free it. */
void ipc_srv_refuse_now(struct ipcring_server *s, struct ipcring_conn *c, int err,
			const char *reason)
{
	ipc_srv_refuse_early(c->sock, err, reason);
	ipc_srv_refused(s, &c->peer, err, reason);
	ipc_conn_free(c);
}

static unsigned int srv_uid_pending(const struct ipcring_server *s, uint32_t uid)
{
	unsigned int n = 0, left = s->npending;

	for (unsigned int i = 0; left && i < s->nslots; i++) {
		const struct ipcring_conn *c = s->conns[i];

		if (c && c->state == CONN_PENDING) {
			left--;
			n += c->peer.uid == uid;
		}
	}
	return n;
}

/*
 * At accept, from SO_PEERCRED alone: a peer the policy refuses never holds
 * a handshake slot, and one uid may hold only hs_per_uid of them. True if
 * it may go on to its hello; else it was refused with the reason.
 */
bool ipc_srv_admit(struct ipcring_server *s, struct ipcring_conn *c)
{
	char reason[IPCRING_REASON_MAX] = "";
	int ret = ipc_srv_policy(s, &c->peer, reason, sizeof(reason));

	if (!ret && s->npending >= s->hs_per_uid &&
	    srv_uid_pending(s, c->peer.uid) >= s->hs_per_uid) {
		ipc_reason(reason, sizeof(reason), "uid %u already has %u handshakes in "
			   "progress, the most one uid may have", c->peer.uid, s->hs_per_uid);
		ret = -EUSERS;
	}
	if (!ret)
		return true;
	ipc_srv_refuse_now(s, c, ret, reason);
	return false;
}

/* ipcring_server_accept(): the policy at accept, before any hello; a
 * refused client is told why. */
int ipc_srv_admit_one(struct ipcring_server *s, struct ipcring_conn *c, char *reason,
		      size_t len)
{
	char why[IPCRING_REASON_MAX] = "";
	int ret = ipc_srv_policy(s, &c->peer, why, sizeof(why));

	if (ret) {
		ipc_srv_refuse_early(c->sock, ret, why);
		ipc_reason(reason, len, "%s", why);
	}
	return ret;
}
