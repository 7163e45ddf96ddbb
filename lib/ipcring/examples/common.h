/* SPDX-License-Identifier: MIT */
/*
 * common.h - helpers for the ipcring example programs: an abstract unix
 * socket rendezvous, a check of who is at the other end, and passing one
 * fd with SCM_RIGHTS.
 */
#ifndef IPCRING_EXAMPLE_COMMON_H
#define IPCRING_EXAMPLE_COMMON_H

#include <stddef.h>
#include <sys/types.h>

/* no uid allowed beyond our own */
#define EX_NO_UID ((uid_t)-1)

int ex_listen(const char *name);
int ex_connect(const char *name, int timeout_ms);
/* The peer of a connected unix socket, from SO_PEERCRED (the kernel's
 * record of who connected, not what the peer claims): 0 when it runs as
 * our own effective uid or as @allow (EX_NO_UID: none), else -EACCES with
 * a sentence in @why naming its pid and uid. */
int ex_check_peer(int sock, uid_t allow, char *why, size_t len);
/* Parse the argument of -u: a uid, or -EINVAL. */
int ex_parse_uid(const char *s, uid_t *out);
int ex_send_fd(int sock, int fd);
/* One fd, sent with one byte: the fd (close-on-exec), or -EPROTO for
 * anything else (no fd, several, a truncated control message), with every
 * fd that did arrive closed; -ECONNRESET if the peer closed first. */
int ex_recv_fd(int sock);

#endif
