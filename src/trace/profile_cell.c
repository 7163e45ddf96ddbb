// SPDX-License-Identifier: MIT
/* --profile around one cell, for the runner: the name a cell's folded
 * stacks are written under, and the profile record of a collected result
 * (the cell's untraced twin and the perturbation are src/trace/cell.c's). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "ipclab/profile.h"
#include "ipclab/result.h"

/* transport-pattern-size-endpoints-pin-sched[-cN][-rR][-thinkT], in the
 * characters a file name takes anywhere. */
void profile_cell_name(const struct cell *c, char *buf, size_t len)
{
	size_t n;

	n = (size_t)snprintf(buf, len, "%s-%s-%llu-%s-%s-%s", c->tp ? c->tp->name : "none",
			     c->pat ? c->pat->name : "none", (unsigned long long)c->size,
			     c->threads ? "thread" : "process", c->pin.text[0] ? c->pin.text : "none",
			     c->sched.text[0] ? c->sched.text : "other");
	if (n < len && c->clients > 1)
		n += (size_t)snprintf(buf + n, len - n, "-c%u", c->clients);
	if (n < len && c->rate > 0)
		n += (size_t)snprintf(buf + n, len - n, "-r%s", c->rate_text);
	if (n < len && (c->think || c->think_ns))
		n += (size_t)snprintf(buf + n, len - n, "-think%llu%s",
				      (unsigned long long)(c->think ? c->think : c->think_ns),
				      c->think ? "" : "ns");
	for (char *s = buf; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '-' && *s != '.' && *s != '_')
			*s = '_';
}

void profile_fill(struct profile *p, struct result *res)
{
	char name[192], err[ERRLEN];

	profile_cell_name(&res->cell, name, sizeof(name));
	if (profile_collect(p, name, &res->profile, err, sizeof(err)) && res->status == RES_OK) {
		res->status = RES_FAILED;
		snprintf(res->reason, sizeof(res->reason), "%s", err);
	}
}
