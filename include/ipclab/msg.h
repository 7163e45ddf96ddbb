/* SPDX-License-Identifier: MIT */
/* The message header every pattern puts at the front of every message, and
 * the payload fill / verify helpers. */
#ifndef IPCLAB_MSG_H
#define IPCLAB_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* 16 bytes, the smallest message. seq counts from 0 per direction; len is
 * the whole message length including this header; ts_ns is the sender's
 * CLOCK_MONOTONIC at send for sampled messages, 0 otherwise. */
struct msg_hdr {
	uint32_t seq;
	uint32_t len;
	uint64_t ts_ns;
};

#define MSG_HDR_SIZE ((size_t)sizeof(struct msg_hdr))
/* Top bit of len: the sender's last message (duration mode). */
#define MSG_F_END 0x80000000u
#define MSG_LEN_MASK 0x7fffffffu

_Static_assert(sizeof(struct msg_hdr) == 16, "message header is 16 bytes");

/* Write the payload (bytes after the header). With verify, a pattern derived
 * from seq that msg_check_payload() recomputes; otherwise one byte store per
 * cache line so the payload is touched on every send at small cost. */
void msg_fill(void *buf, size_t len, uint32_t seq, bool verify);

/* 0 if the payload matches what msg_fill(verify=true) wrote for seq, else the
 * offset + 1 of the first bad byte. */
size_t msg_check_payload(const void *buf, size_t len, uint32_t seq);

/* A message received in place is read as its consumer would read it: one
 * load from every cache line of the payload past the header's, so that
 * each line moves to the receiver's CPU, as a copying receive moves every
 * byte into its buffer. Without it a zero-copy transport's figure would be
 * the cost of passing records, not data. (--verify reads every byte.) */
static inline void msg_read_in_place(const void *msg, size_t len)
{
	const volatile unsigned char *b = msg;

	for (size_t off = 64; off < len; off += 64)
		(void)b[off];
}

#endif
