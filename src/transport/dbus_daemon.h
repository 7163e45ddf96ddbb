/* SPDX-License-Identifier: MIT */
/* The private dbus-daemon of a dbus cell (-O via=bus): started by create in
 * the parent, stopped by destroy. Everything it makes is registered with
 * cleanup before it exists: the daemon's pid (CL_PID, so a SIGKILLed run's
 * daemon is killed by `ipclab clean`), its socket, its config file and its
 * log, all in the cell's private directory. */
#ifndef IPCLAB_DBUS_DAEMON_H
#define IPCLAB_DBUS_DAEMON_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define DBD_INSTALL "install dbus-daemon (make deps)"

struct dbd {
	pid_t pid;			/* 0: none running */
	int h_pid, h_sock, h_conf, h_log;	/* cleanup handles, -1 = none */
	char sock[108];			/* the socket's path (sun_path) */
	char conf[PATH_MAX], log[PATH_MAX];
	char address[PATH_MAX];		/* what the daemon printed: sd_bus_set_address */
	char version[32];		/* dbus-daemon --version's number */
	char exe[PATH_MAX];		/* the binary, found on PATH */
};

static inline void dbd_init(struct dbd *d)
{
	*d = (struct dbd){ .h_pid = -1, .h_sock = -1, .h_conf = -1, .h_log = -1 };
}

/* Where dbus-daemon is (PATH): 0 with exe filled, or -ENOENT. */
int dbd_find(char *exe, size_t len);

/* dbd_init first. Write the config, start the daemon and wait (bounded, the stop word
 * looked at) until it listens. max_msg is its max_message_size; the
 * incoming and outgoing limits are set from it so that a sender is held
 * back before its receiver's queue overflows (a full queue drops). */
int dbd_start(struct dbd *d, const char *dir, uint64_t max_msg, const _Atomic int *stop,
	      char *err, size_t errlen);

/* SIGTERM, a bounded wait for it to exit, then SIGKILL; its files removed.
 * Idempotent; safe after a partial dbd_start. */
void dbd_stop(struct dbd *d);

#endif
