// SPDX-License-Identifier: MIT
/* Polling, accounted (polling.h). */
#include <stdatomic.h>

#include "ipclab/polling.h"

#define POLLING_SOURCES 8

static _Atomic(polling_fn) sources[POLLING_SOURCES];
static __thread uint64_t own_ns;

int polling_source(polling_fn f)
{
	for (unsigned i = 0; i < POLLING_SOURCES; i++) {
		polling_fn cur = atomic_load(&sources[i]);

		if (cur == f)
			return 1;
		if (!cur) {
			polling_fn none = 0;

			if (atomic_compare_exchange_strong(&sources[i], &none, f) || none == f)
				return 1;
		}
	}
	return 0;
}

uint64_t polling_ns(void)
{
	uint64_t ns = own_ns;

	for (unsigned i = 0; i < POLLING_SOURCES; i++) {
		polling_fn f = atomic_load_explicit(&sources[i], memory_order_relaxed);

		if (f)
			ns += f();
	}
	return ns;
}

void polling_add(uint64_t ns)
{
	own_ns += ns;
}
