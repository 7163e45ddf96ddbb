// SPDX-License-Identifier: MIT
/*
 * predictable_names.so - a test helper for tests/faults/names.sh, loaded
 * with LD_PRELOAD: getrandom() returns a counter (the n-th call fills the
 * buffer with n, a little-endian 64-bit word, repeated), so that the
 * unpredictable names ipclab gives shared objects become predictable and
 * the test can plant an object (or a symlink) under a name beforehand, as
 * an attacker who guessed it would. State is per process and not locked:
 * names are made by the parent, single-threaded.
 */
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

ssize_t getrandom(void *buf, size_t len, unsigned int flags);

ssize_t getrandom(void *buf, size_t len, unsigned int flags)
{
	static uint64_t calls;
	uint64_t v = ++calls;
	unsigned char *p = buf;
	size_t i;

	(void)flags;
	for (i = 0; i < len; i++)
		p[i] = (unsigned char)(v >> (8 * (i % sizeof(v))));
	return (ssize_t)len;
}
