/* SPDX-License-Identifier: MIT */
/*
 * ipcring_pin.h - shared by the ipcring harnesses: keep every shape of
 * mapping an attach made (inode, header size, capacity, single or double)
 * alive for the whole run, so that later attaches of that shape share it,
 * as a second end in one process does, instead of mapping and unmapping
 * (with MAP_POPULATE, and a TLB shootdown while a second thread runs) for
 * every input. Validation runs as before, on each attach's own copy of the
 * header; the mapping code runs the first time each shape is seen.
 */
#ifndef FUZZ_IPCRING_PIN_H
#define FUZZ_IPCRING_PIN_H

#include <stdlib.h>
#include <sys/stat.h>

#include "internal.h"

static inline void pin_map(int fd, const struct ipcring *r)
{
	static struct ring_map *pins[64];
	static unsigned npins;
	struct ring_shm *shm;
	struct ring_map *m;
	struct stat st;
	uint8_t *data;
	size_t len;

	for (unsigned i = 0; i < npins; i++)
		if (pins[i] == r->map)
			return;
	if (npins == sizeof(pins) / sizeof(pins[0]) || fstat(fd, &st) ||
	    ring_map_get(fd, &st, &r->cfg, &m, &shm, &data, &len))
		return;
	if (m != r->map)
		abort();	/* one shape of one inode: one mapping */
	pins[npins++] = m;
}

#endif
