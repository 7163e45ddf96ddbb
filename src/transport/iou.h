/* SPDX-License-Identifier: MIT */
/* What the io_uring transports (io_uring.c, io_uring_msg.c) share. */
#ifndef IPCLAB_TP_IOU_H
#define IPCLAB_TP_IOU_H

#include <stddef.h>

#define IOU_INSTALL "install liburing-dev (make deps)"

/* why: the error of making a ring (errno e, during what), with its fix:
 * kernel.io_uring_disabled, no io_uring in the kernel, sqpoll refused,
 * file or locked-memory limits. Returns -e. */
int iou_ring_error(int e, const char *what, char *why, size_t len);

#endif
