/* SPDX-License-Identifier: MIT */
/* Private to the run registry: registry.c writes a run's record,
 * registry_sweep.c reads dead runs' records back. */
#ifndef IPCLAB_REGISTRY_INT_H
#define IPCLAB_REGISTRY_INT_H

#include <stddef.h>

/* The boot id of this boot, or "-" when it cannot be read. */
void registry_boot_id(char *buf, size_t len);

#endif
