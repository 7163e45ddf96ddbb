// SPDX-License-Identifier: MIT
/* Payload fill and check. Without --verify one byte per cache line is
 * stored (the patterns do it for a message written in place, so that its
 * lines come to the sender as a real producer's would, at a cost far below
 * a copy); with --verify it writes a pattern
 * derived from the sequence number into every byte and the receiver
 * recomputes it: stronger than a checksum, and it names the bad offset. */
#include "ipclab/msg.h"

static inline uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

void msg_fill(void *buf, size_t len, uint32_t seq, bool verify)
{
	unsigned char *p = (unsigned char *)buf + MSG_HDR_SIZE;
	size_t n = len > MSG_HDR_SIZE ? len - MSG_HDR_SIZE : 0;

	if (!verify) {
		for (size_t i = 0; i < n; i += 64)
			p[i] = (unsigned char)seq;
		return;
	}
	uint64_t w = mix(seq + 0x9e3779b97f4a7c15ull);
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t v = w + i;

		memcpy(p + i, &v, 8);
	}
	for (; i < n; i++)
		p[i] = (unsigned char)(w >> (8 * (i & 7)));
}

size_t msg_check_payload(const void *buf, size_t len, uint32_t seq)
{
	const unsigned char *p = (const unsigned char *)buf + MSG_HDR_SIZE;
	size_t n = len > MSG_HDR_SIZE ? len - MSG_HDR_SIZE : 0;
	uint64_t w = mix(seq + 0x9e3779b97f4a7c15ull);
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t v = w + i, got;

		memcpy(&got, p + i, 8);
		if (got != v) {
			for (unsigned b = 0; b < 8; b++)
				if (((got >> (8 * b)) & 0xff) != ((v >> (8 * b)) & 0xff))
					return MSG_HDR_SIZE + i + b + 1;
		}
	}
	for (; i < n; i++)
		if (p[i] != (unsigned char)(w >> (8 * (i & 7))))
			return MSG_HDR_SIZE + i + 1;
	return 0;
}
