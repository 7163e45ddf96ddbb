/* SPDX-License-Identifier: MIT */
/* Output directories: where ipclab writes several files for its user
 * (plot -o DIR, run --plot DIR, --profile DIR). Such a directory is made
 * 0700, or, when it exists, must belong to the user and be writable by no
 * one else: a directory another user made first (a 0777 /tmp/plots) could
 * hold links to the user's files, or have its files swapped between
 * ipclab writing them and reading them back. It is held open, and every
 * file is made relative to that descriptor: created exclusively, never
 * through a link, under an unpredictable name, then renamed over its own
 * name (a link there is replaced, its target untouched). Temporary names
 * are registered for cleanup before they exist. */
#ifndef IPCLAB_OUTDIR_H
#define IPCLAB_OUTDIR_H

#include <limits.h>
#include <stdio.h>

#include "ipclab/util.h"

struct outdir {
	int fd;				/* the directory, O_DIRECTORY; -1: closed */
	char path[PATH_MAX];		/* as given (trailing slashes dropped), for messages */
	char abs[PATH_MAX];		/* absolute, for the cleanup of temporary names */
};

/* Open path as a private output directory, making it (0700; its parent must
 * exist) when missing. opt names it in messages ("-o", "--plot"). Refused
 * (-EPERM): not a directory, another user's, writable by group or others,
 * or a symbolic link that is not the user's own. 0, or -errno with err
 * filled: one line naming the directory, the problem and the fix. */
int outdir_open(struct outdir *d, const char *opt, const char *path, char *err,
		size_t errlen) MUST_CHECK;
/* The checks of outdir_open on a directory that exists, without making one
 * that does not (option parsing: bad input is found before anything is
 * made); 0 when path does not exist. */
int outdir_check(const char *opt, const char *path, char *err, size_t errlen) MUST_CHECK;
void outdir_close(struct outdir *d);

/* Is name one plain name inside a directory (not empty, ".", "..", no '/')? */
bool outdir_name_ok(const char *name);

/* One file written into d and put in place whole: outfile_open creates a
 * temporary name in d, outfile_commit renames it over name, outfile_abort
 * (or a signal) removes it. */
struct outfile {
	FILE *f;
	const struct outdir *d;
	char name[NAME_MAX + 1], tmp[80];
	int handle;
};
int outfile_open(struct outfile *of, const struct outdir *d, const char *name, char *err,
		 size_t errlen) MUST_CHECK;
int outfile_commit(struct outfile *of, char *err, size_t errlen) MUST_CHECK;
void outfile_abort(struct outfile *of);

/* A fresh private directory inside d (unpredictable name, 0700) for files
 * another program writes, moved into d together once they are complete:
 * outstage_expect registers each name before it exists (here or in a
 * child whose working directory is st->dir), outstage_write makes one
 * exclusively, outstage_commit moves every expected file (a regular file,
 * or it is an error) over its name in d, and outstage_close removes what
 * is left and the directory. */
#define OUTSTAGE_FILES 8

struct outstage {
	struct outdir dir;
	const struct outdir *parent;
	char name[80];
	int handle;
	unsigned n;
	struct {
		char name[NAME_MAX + 1];
		int handle;
	} files[OUTSTAGE_FILES];
};
int outstage_open(struct outstage *st, const struct outdir *d, char *err, size_t errlen) MUST_CHECK;
int outstage_expect(struct outstage *st, const char *name, char *err, size_t errlen) MUST_CHECK;
int outstage_write(struct outstage *st, const char *name, const void *buf, size_t len, char *err,
		   size_t errlen) MUST_CHECK;
int outstage_commit(struct outstage *st, char *err, size_t errlen) MUST_CHECK;
void outstage_close(struct outstage *st);

#endif
