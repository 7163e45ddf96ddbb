/* SPDX-License-Identifier: MIT */
/* The run registry: what a run created, on disk, for the case no handler
 * sees (SIGKILL of ipclab itself, a crash, a power cut of the process).
 *
 * Each ipclab process that registers something for cleanup (cleanup.h) also
 * appends it to its own file in a per-user directory that only that user can
 * write: ${IPCLAB_STATE_DIR:-${TMPDIR:-/tmp}/.ipclab-runs-UID}. The file
 * names the process (pid and start time, boot id, IPC, mount and pid
 * namespaces) and lists every object it created and every one it removed
 * since. A run that ends in any way its handlers see removes its file.
 *
 * registry_sweep() reads every file there whose process is gone (nobody
 * holds its lock) and removes what it still lists, each object only after
 * checking that it is still the run's (src/base/registry_check.c): child
 * processes (same start time, killed through a pidfd), POSIX queues and
 * shared memory and libqb rings (under ipclab's names of the run's pid),
 * SysV objects (this user's, private, mode 0600, created after the run
 * started), the run's private directory, what lies in ipclab's directories
 * and output temporary files (reached without a symbolic link). It never
 * touches a live run's objects nor another user's, skips objects in
 * another IPC, mount or pid namespace, and a file of another boot removes
 * nothing but itself. A file is hostile input: bounded, validated, its
 * names printed escaped. `ipclab clean` calls it and says what it removed;
 * every run calls it quietly when it first registers something. */
#ifndef IPCLAB_REGISTRY_H
#define IPCLAB_REGISTRY_H

#include <stdbool.h>
#include <stdio.h>

#include "ipclab/cleanup.h"

/* Called by cleanup.c: an entry was added (handle h), got its id, or is
 * gone. Quiet: a registry that cannot be written is reported once on
 * stderr and the run goes on without it. Async-signal-safe: note_gone. */
void registry_note_add(int h, enum cleanup_kind kind, long id, const char *name);
void registry_note_id(int h, long id);
void registry_note_gone(int h);
/* Every entry of this process is gone: remove its file (normal exit). */
void registry_close(void);

struct sweep_report {
	unsigned dead_runs;	/* files of runs no longer alive */
	unsigned live_runs;	/* left alone */
	unsigned removed;	/* objects removed (processes killed included) */
	unsigned skipped;	/* listed but not ours any more, or elsewhere */
};

/* Remove what dead runs left behind. out (NULL = quiet) gets one line per
 * object removed or skipped; dry_run only says what it would remove.
 * Returns 0, or -errno when the directory cannot be read (err says why). */
int registry_sweep(FILE *out, bool dry_run, struct sweep_report *rep, char *err, size_t errlen);

/* The registry directory of this user (not created). */
const char *registry_dir(void);

#endif
