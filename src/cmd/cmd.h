/* SPDX-License-Identifier: MIT */
/* The command layer: one thin front end per subcommand (a file each in src/cmd/). Each
 * turns what the user typed into typed values, calls the engine or a
 * reporter, and alone prints errors and chooses the exit status:
 * 0 ok, 1 the run failed, 2 bad input, 128+N interrupted by signal N
 * (compare also 3: a regression past --fail-above). */
#ifndef IPCLAB_CMD_H
#define IPCLAB_CMD_H

#include <limits.h>
#include <stdio.h>

#include "ipclab/outdir.h"
#include "ipclab/result.h"

/* The command line (commands.c): dispatch by argv[1]. */
int cmd_main(int argc, char **argv);

/* A subcommand: argv[0] is its name; returns the exit status. The table
 * (commands.c) serves dispatch and `ipclab --help`. */
struct subcommand {
	const char *name;
	int (*main)(int argc, char **argv);
	const char *summary;
};
extern const struct subcommand subcommands[];
const struct subcommand *subcommand_find(const char *name);

int cmd_run(int argc, char **argv);	/* run.c: the whole command line */
int cmd_list(int argc, char **argv);	/* list.c */
struct transport;
/* list.c: the "transports:" section of `ipclab list`, tps under the
 * headings of their groups (struct transport's group). */
void list_transports(FILE *f, const struct transport *const *tps, size_t n);
int cmd_suite(int argc, char **argv);	/* suite.c */
int cmd_plot(int argc, char **argv);	/* plot.c */
int cmd_compare(int argc, char **argv);	/* compare.c */
int cmd_env(int argc, char **argv);	/* env.c */
int cmd_clean(int argc, char **argv);	/* clean.c */
int cmd_serve(int argc, char **argv);	/* serve.c */
int cmd_report(int argc, char **argv);	/* report.c */
void cmd_run_usage(FILE *f);		/* run.c: `ipclab --help` */

/* The one error printer (say.c): "ipclab: MSG" or "ipclab CMD: MSG" on
 * stderr, one line whatever the user typed (control bytes are shown
 * escaped). say_error returns 1 (a run or a write failed), usage_error 2
 * (bad input). */
void say(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int say_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int cmd_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The one output writer (output.c), for every file a command writes:
 * output_open gives stdout when path is NULL; for a regular file, a new
 * path or a symbolic link to a file, a temporary file beside it under an
 * unguessable name, registered for cleanup before it exists, which
 * output_commit renames over path (ok) or removes (a link is replaced,
 * never written through); for a device, FIFO or Unix socket named itself
 * (never through a link) the thing itself, written into and never
 * replaced, a FIFO with no reader refused at once; "-", /dev/stdout,
 * /dev/stderr and /dev/fd/N the descriptor itself. output_open_in makes
 * one file in an output directory (outdir.h) and output_commit puts it
 * in place. Both print their own error ("ipclab[ CMD]: ...") and return
 * the exit status: 0, 1 (cannot write) or 2 (a path too long to be safe,
 * a directory, a link to a device, a FIFO no one reads). o must stay
 * where it is until output_commit: o->f may write through it. */
struct output {
	FILE *f;
	const char *path;	/* NULL: stdout; for messages */
	const char *cmd;	/* for messages; NULL for run */
	int handle;		/* cleanup handle of the temporary file */
	bool special;		/* written into what is at path, no rename */
	bool in_dir;		/* a file of an output directory (of) */
	int sig;		/* runner_interrupted when opened */
	int fd;			/* special: what o->f writes to */
	int dfd;		/* the path's directory (output_walk), or -1 */
	const char *name;	/* the path's last component, in dfd */
	struct outfile of;
	char tmp[PATH_MAX];
	char where[PATH_MAX + NAME_MAX + 2];	/* in_dir: DIR/NAME, for messages */
};
/* -o PATH checked when parsed, before any work: not a directory, nor a
 * link to one or to a device, FIFO or socket; its directory exists; not
 * too long. 0, or 2 with the error said. */
int output_check(const char *path, const char *cmd);
/* The directory of an -o path, walked one component at a time, following
 * only the caller's own and root's links on the way (output_walk.c): an
 * O_PATH descriptor with *name its last component, or -errno with err
 * (-EPERM another user's link, -ENOENT/-ENOTDIR no such directory). */
int output_walk(const char *path, const char **name, char *err, size_t errlen);
int output_open(struct output *o, const char *path, const char *cmd);
int output_open_in(struct output *o, const struct outdir *d, const char *name, const char *cmd);
/* failed: the writer failed (why, "" if it said nothing); 0, 1, or 128+N
 * when stop signal N came while the file was written (it is not put in
 * place). */
int output_commit(struct output *o, int failed, const char *why);

/* One report written through the reporter table (report/reporters.c) to
 * path (NULL = stdout), atomically: ra->format's reporter, or the pivot
 * when ra->pivot is set. The exit status (0, 1 or 2). */
struct reporter_args;
int output_report(const char *path, const struct reporter_args *ra, const struct report *rep);

/* run --html, suite --html (report.c): the page of rep (its JSON, read
 * back as a result file) written to path through the output writer; name
 * stands for the results in it, folded_dir holds the profile's stacks (or
 * NULL). The exit status (0, 1 or 2), the error said. */
int report_html_of(const char *path, const char *name, const struct report *rep,
		   const char *folded_dir, const char *cmd);

#endif
