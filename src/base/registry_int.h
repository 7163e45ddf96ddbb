/* SPDX-License-Identifier: MIT */
/* Private to the run registry: registry.c writes a run's record,
 * registry_sweep.c reads dead runs' records back, registry_check.c decides
 * what a record may still remove and removes it. A record is hostile
 * input: a run that no longer exists wrote it, perhaps in another boot,
 * and anything that can write the user's files can have written it. */
#ifndef IPCLAB_REGISTRY_INT_H
#define IPCLAB_REGISTRY_INT_H

#include <stdbool.h>
#include <stddef.h>

#define REG_MAX 1024			/* handles, as cleanup.c's table */
#define REG_FILE_MAX (64u << 20)	/* a record larger than this is not read */

/* The header line: the run's process, where and when it ran. */
struct run_head {
	int pid;
	unsigned long long start;	/* its start time, clock ticks since boot */
	char boot[64];
	unsigned long ipcns, mntns, pidns;	/* pidns 0: not recorded */
	unsigned uid;
	long long wall;			/* its start, seconds since the epoch */
	/* not on disk: whether the sweeper is where the run was */
	bool same_boot, same_ipc, same_mnt, same_pid;
};

struct run_obj {
	bool live;
	int kind;			/* enum cleanup_kind */
	long id;
	unsigned long long start;	/* CL_PID: the child's start time */
	char *name;
};

enum reg_outcome {
	REG_DONE,	/* removed (a dry run: would be) */
	REG_GONE,	/* gone already, or never made: nothing to say */
	REG_KEPT,	/* left alone, *why says why */
	REG_FAILED,	/* it should go but could not: *why is the error */
};

/* Check that o is still what the run made, of a name ipclab makes, this
 * user's and reached without following a link, then remove it (dry: only
 * check). Each check is made on what is then removed (a pidfd, a directory
 * descriptor), so nothing can be swapped in between. */
enum reg_outcome reg_remove(const struct run_head *h, const struct run_obj *o, bool dry,
			    const char **why);

/* The boot id of this boot, or "-" when it cannot be read. */
void registry_boot_id(char *buf, size_t len);

#endif
