/* SPDX-License-Identifier: MIT */
/* Inside src/reference/: a reference's channel (channels.c makes one per
 * transport) and the loop that drives it (reference.c). */
#ifndef IPCLAB_REF_INT_H
#define IPCLAB_REF_INT_H

#include <limits.h>
#include <mqueue.h>
#include <stdbool.h>
#include <stddef.h>

enum { REF_SERVER, REF_CLIENT };
enum ref_kind { REF_FD, REF_MQ };

struct ref_chan {
	enum ref_kind kind;
	bool bytes;    /* a byte stream: read and write until the whole message moved */
	int fd[2][2];  /* [role][0 = receive, 1 = send], -1 = none */
	mqd_t mq[2];   /* client->server, server->client */
	int handle[2]; /* cleanup handles of the named objects (-1 = none) */
	char name[2][PATH_MAX];
};

/* The channel of transport `tp` for messages of `size` bytes: 0, -ENOTSUP
 * (no reference for it), or -errno with why in err. */
int ref_chan_open(struct ref_chan *ch, const char *tp, size_t size, char *err, size_t errlen);
/* Names of the transports ref_chan_open knows, for "no reference" reasons. */
bool ref_chan_known(const char *tp);
/* Close role's descriptors (-1: every one). */
void ref_chan_close(struct ref_chan *ch, int role);
/* Everything, the named objects removed. */
void ref_chan_destroy(struct ref_chan *ch);

#endif
