/* SPDX-License-Identifier: MIT */
/* A transport built without its library (absent.c): every hook refuses with
 * the words of its probe(), which names the package to install. */
#ifndef IPCLAB_TP_ABSENT_H
#define IPCLAB_TP_ABSENT_H

#include <sys/types.h>

#include "ipclab/transport.h"

int tp_absent_create(struct tp_channel *ch, char *err, size_t errlen);
int tp_absent_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		   struct tp_endpoint **out, char *err, size_t errlen);
ssize_t tp_absent_send(struct tp_endpoint *ep, const void *buf, size_t len);
ssize_t tp_absent_recv(struct tp_endpoint *ep, void *buf, size_t len);
void tp_absent_close(struct tp_endpoint *ep);
void tp_absent_destroy(struct tp_channel *ch);
#define TP_ABSENT_OPS                                                            \
	.create = tp_absent_create, .open = tp_absent_open, .send = tp_absent_send, \
	.recv = tp_absent_recv, .close = tp_absent_close, .destroy = tp_absent_destroy

#endif
