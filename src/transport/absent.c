// SPDX-License-Identifier: MIT
/* The hooks of a transport built without its library (absent.h,
 * TP_ABSENT_OPS): probe() already skips its cells with the install line;
 * a cell that reaches create or open anyway gets the same words. */
#include <errno.h>

#include "absent.h"
#include "ipclab/util.h"

int tp_absent_create(struct tp_channel *ch, char *err, size_t errlen)
{
	int ret = ch->tp->probe(ch->cfg, err, errlen);

	return ret ? ret : -ENOTSUP;
}

int tp_absent_open(struct tp_channel *ch, enum tp_role role, unsigned id,
		   struct tp_endpoint **out, char *err, size_t errlen)
{
	return tp_absent_create(ch, err, errlen);
}

ssize_t tp_absent_send(struct tp_endpoint *ep, const void *buf, size_t len)
{
	return -ENOTSUP;
}

ssize_t tp_absent_recv(struct tp_endpoint *ep, void *buf, size_t len)
{
	return -ENOTSUP;
}

void tp_absent_close(struct tp_endpoint *ep)
{
}

void tp_absent_destroy(struct tp_channel *ch)
{
}
