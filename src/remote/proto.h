/* SPDX-License-Identifier: MIT */
/* The control connection's frames (src/remote/proto.c): a 4-byte
 * big-endian length and a JSON object with a "type", at most
 * RP_MAX_FRAME bytes; every read has a deadline. And the records both
 * ends exchange: a cell, a side's stats. */
#ifndef IPCLAB_REMOTE_PROTO_H
#define IPCLAB_REMOTE_PROTO_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "ipclab/experiment.h"
#include "ipclab/remote.h"

#define RP_MAX_FRAME (1u << 20)
#define RP_HANDSHAKE_NS (10 * NSEC_PER_SEC)

/* Send obj (not consumed): 0 or -errno. */
int rp_send(int fd, json_t *obj);
/* One frame by the deadline (CLOCK_MONOTONIC ns): 0 with *out (an object
 * with a string "type"), -ETIMEDOUT, -ECONNRESET (closed), -EPROTO (not a
 * frame of ours: why in err). */
int rp_recv(int fd, uint64_t deadline_ns, json_t **out, char *err, size_t errlen);
/* A frame's body (len bytes, no length prefix) into *out, as rp_recv
 * checks it: 0 or -EPROTO with why. */
int rp_parse(const char *buf, size_t len, json_t **out, char *err, size_t errlen);
const char *rp_type(const json_t *o);
/* Bounded getters: 0, or -EPROTO naming the key. */
int rp_u64(const json_t *o, const char *key, uint64_t max, uint64_t *v, char *err, size_t errlen);
int rp_str(const json_t *o, const char *key, char *buf, size_t len, char *err, size_t errlen);
/* Equal tokens, in time independent of where they differ. */
bool rp_token_equal(const char *a, const char *b);

json_t *rp_side_json(const struct side_stats *st);
/* Fill st from j: every field checked. 0 or -EPROTO. */
int rp_side_parse(const json_t *j, struct side_stats *st, char *err, size_t errlen);
/* An env object with only bounded scalars kept (NULL: not an object). */
json_t *rp_env_sanitize(const json_t *env);

#endif
