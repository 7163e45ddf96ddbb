/* SPDX-License-Identifier: MIT */
/* Placement: CPU pinning and scheduling policy, per endpoint. */
#ifndef IPCLAB_PLACEMENT_H
#define IPCLAB_PLACEMENT_H

#include "ipclab/pattern.h"

/* "none", "same", "split", "A:B" (server CPU:client CPU). */
int pin_parse(const char *s, struct pin_spec *out, char *err, size_t errlen);
/* The same from the mode, for code that sets a placement itself: PIN_NONE,
 * PIN_SAME or PIN_SPLIT (its CPUs: the first usable ones). */
int pin_make(enum pin_mode mode, struct pin_spec *out, char *err, size_t errlen);
/* "other", "fifo:PRIO", "rr:PRIO", "batch", "idle". */
int sched_parse(const char *s, struct sched_spec *out, char *err, size_t errlen);
/* The same from a policy (SCHED_*) and, for fifo and rr, a priority the
 * caller knows to be in range; its text as sched_parse reads it. */
void sched_make(int policy, int prio, struct sched_spec *out);
/* In the endpoint itself (process or thread): apply the cell's placement. */
int placement_apply(const struct cell *c, enum tp_role role, unsigned id, char *err,
		    size_t errlen);
/* The CPU an endpoint is pinned to, or -1. */
int placement_cpu(const struct cell *c, enum tp_role role, unsigned id);

#endif
