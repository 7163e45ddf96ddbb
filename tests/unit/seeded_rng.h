/* SPDX-License-Identifier: MIT */
/* A seeded stream of uniform numbers for the unit tests (splitmix64): the
 * same on every machine, so a statistical test's draws are fixed. Set
 * rng_state to seed it. One copy per test program (static). */
#ifndef IPCLAB_TESTS_SEEDED_RNG_H
#define IPCLAB_TESTS_SEEDED_RNG_H

#include <stdint.h>

static uint64_t rng_state;

/* uniform in (0, 1) */
static double uniform01(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

#endif
