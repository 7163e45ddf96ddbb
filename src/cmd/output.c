// SPDX-License-Identifier: MIT
/* The one atomic output writer: a report goes to a temporary file beside
 * its path, registered for cleanup before it exists, and is renamed over
 * the path only when complete. A reader never sees half a file, and a
 * signal while writing leaves nothing behind. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "ipclab/cleanup.h"
#include "ipclab/reporter.h"

int output_open(struct output *o, const char *path, const char *cmd)
{
	o->f = stdout;
	o->path = path;
	o->cmd = cmd;
	o->handle = -1;
	if (!path)
		return 0;
	/* never shortened: a cut name could be the user's own file */
	if ((size_t)snprintf(o->tmp, sizeof(o->tmp), "%s.tmp-%d", path, (int)getpid()) >=
	    sizeof(o->tmp))
		return cmd_usage_error(cmd, "-o %.64s...: the path is too long; use a shorter one",
				       path);
	/* registered first: a signal while writing must not leave it */
	o->handle = cleanup_add(CL_PATH, o->tmp);
	if (o->handle < 0)
		return say_error(cmd, "cannot write %s: %s", o->tmp, strerror(-o->handle));
	o->f = fopen(o->tmp, "wx");
	if (!o->f) {
		cleanup_forget(o->handle);
		return say_error(cmd, "cannot write %s: %s", o->tmp, strerror(errno));
	}
	return 0;
}

int output_commit(struct output *o, int failed, const char *why)
{
	if (!o->path) {
		fflush(stdout);
		return failed ? 1 : 0;
	}
	if (fclose(o->f) || failed) {
		cleanup_run_one(o->handle);
		return say_error(o->cmd, "writing %s failed%s%s", o->path, why && *why ? ": " : "",
				 why ? why : "");
	}
	if (rename(o->tmp, o->path)) {
		say(o->cmd, "cannot rename %s to %s: %s", o->tmp, o->path, strerror(errno));
		cleanup_run_one(o->handle);
		return 1;
	}
	cleanup_forget(o->handle);
	return 0;
}

int output_report(const char *path, const struct reporter_args *ra, const struct report *rep)
{
	const struct reporter *r = reporter_find(ra->pivot[0] ? "pivot" : ra->format);
	char err[ERRLEN] = "";
	struct output o;
	int ret = output_open(&o, path, NULL);

	if (ret)
		return ret;
	if (!r)
		r = reporter_find("table");
	ret = r->write(o.f, rep, ra, err, sizeof(err));
	return output_commit(&o, ret, err);
}
