/* SPDX-License-Identifier: MIT */
/*
 * common.h - helpers for the ipcring example programs: an abstract unix
 * socket rendezvous and passing one fd with SCM_RIGHTS.
 */
#ifndef IPCRING_EXAMPLE_COMMON_H
#define IPCRING_EXAMPLE_COMMON_H

int ex_listen(const char *name);
int ex_connect(const char *name, int timeout_ms);
int ex_send_fd(int sock, int fd);
/* One fd, sent with one byte: the fd (close-on-exec), or -EPROTO for
 * anything else (no fd, several, a truncated control message), with every
 * fd that did arrive closed; -ECONNRESET if the peer closed first. */
int ex_recv_fd(int sock);

#endif
