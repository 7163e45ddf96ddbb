// SPDX-License-Identifier: MIT
/* `ipclab plot RESULTS.json -o DIR`: figures from a stored result file.
 * Every figure is three files a person can keep working with: NAME.dat (the
 * numbers, tab-separated, a header row), NAME.gp (a gnuplot script that only
 * reads NAME.dat) and the NAME.png and NAME.svg it draws. gnuplot runs as a
 * child with a deadline; its first error line is the one reported. The
 * figures themselves are in plot_fig.c. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipclab/report.h"
#include "ipclab/util.h"
#include "plot.h"

#define GNUPLOT_DEADLINE_MS 60000

int plot_parse_pivot(const char *spec, struct plot_pivot *pv, char *err, size_t errlen)
{
	char buf[256], *w[4], *save = NULL;
	unsigned n = 0;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (char *t = strtok_r(buf, ",", &save); t && n < 4; t = strtok_r(NULL, ",", &save))
		w[n++] = t;
	if (n != 3)
		return errf(err, errlen, EINVAL, "--pivot %s: expected ROW,COL,METRIC, e.g. --pivot size,pin,cpu_pct_total",
			    spec);
	snprintf(pv->row, sizeof(pv->row), "%s", rf_metric_alias(w[0]));
	snprintf(pv->col, sizeof(pv->col), "%s", rf_metric_alias(w[1]));
	snprintf(pv->metric, sizeof(pv->metric), "%s", rf_metric_alias(w[2]));
	return 0;
}

/* gnuplot in PATH, checked before anything is written. */
static bool have_gnuplot(void)
{
	const char *path = getenv("PATH");
	char buf[4096], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path ? path : "/usr/bin:/bin");
	for (char *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		char exe[4200];

		snprintf(exe, sizeof(exe), "%s/gnuplot", *d ? d : ".");
		if (access(exe, X_OK) == 0)
			return true;
	}
	return false;
}

/* ---- figure files --------------------------------------------------------------- */

static FILE *open_in(const struct plot_ctx *ctx, const char *name, const char *ext)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s.%s", ctx->dir, name, ext);
	return fopen(path, "we");
}

int fig_open(struct plot_ctx *ctx, const char *name, FILE **dat, FILE **gp)
{
	*dat = open_in(ctx, name, "dat");
	*gp = *dat ? open_in(ctx, name, "gp") : NULL;
	if (*gp)
		return 0;
	if (*dat)
		fclose(*dat);
	return errf(ctx->err, ctx->errlen, errno, "cannot write %s/%s.dat or .gp: %s", ctx->dir,
		    name, strerror(errno));
}

void fig_script_head(const struct plot_ctx *ctx, FILE *gp, const char *name, const char *what)
{
	fprintf(gp, "# ipclab plot: %s\n"
		"# from %s; the numbers are in %s.dat (tab-separated, header row).\n"
		"# Restyle freely, then redraw %s.png and %s.svg with: gnuplot %s.gp\n"
		"W = %u\nH = %u\n"
		"set datafile separator \"\\t\"\n"
		"set datafile missing \"NaN\"\n"
		"set grid\n"
		"set key outside right top noenhanced\n",
		what, ctx->rf->path, name, name, name, name, ctx->o->width, ctx->o->height);
}

/* PNG by cairo where this gnuplot has it (smoother), else libgd. */
void fig_script_begin_output(FILE *gp, const char *name)
{
	fprintf(gp, "do for [fmt in \"png svg\"] {\n"
		"\tif (fmt eq \"svg\") {\n"
		"\t\tset terminal svg size W,H noenhanced background \"white\"\n"
		"\t} else {\n"
		"\t\tif (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n"
		"\t\t\tset terminal pngcairo size W,H noenhanced\n"
		"\t\t} else {\n"
		"\t\t\tset terminal png size W,H noenhanced\n"
		"\t\t}\n"
		"\t}\n"
		"\tset output \"%s.\" . fmt\n", name);
}

void fig_script_end_output(FILE *gp)
{
	fprintf(gp, "\tset output\n}\n");
}

/* Read the child's stderr until it closes (the child exited) or the
 * deadline passes; keep the first line for the error message. */
static bool drain_stderr(int fd, char *first, size_t len)
{
	uint64_t deadline = now_ns() + GNUPLOT_DEADLINE_MS * NSEC_PER_MSEC;
	size_t have = 0;
	char buf[512];

	first[0] = '\0';
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t now = now_ns();
		ssize_t n;

		if (now >= deadline)
			return false;
		if (poll(&p, 1, (int)((deadline - now) / NSEC_PER_MSEC) + 1) < 0 && errno != EINTR)
			return false;
		n = read(fd, buf, sizeof(buf));
		if (n == 0)
			return true;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return true;
		}
		for (ssize_t i = 0; i < n && have + 1 < len; i++)
			first[have++] = buf[i];
		first[have] = '\0';
	}
}

static void exec_gnuplot(const char *dir, const char *script, int errfd)
{
	int null = open("/dev/null", O_RDWR);

	if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(null, STDOUT_FILENO) < 0 ||
	    dup2(errfd, STDERR_FILENO) < 0 || chdir(dir) < 0)
		_exit(127);
	execlp("gnuplot", "gnuplot", script, (char *)NULL);
	dprintf(STDERR_FILENO, "cannot run gnuplot: %s\n", strerror(errno));
	_exit(127);
}

/* The message that matters is usually gnuplot's last non-empty line. */
static void last_line(char *text)
{
	char *end = text + strlen(text), *start;

	while (end > text && (end[-1] == '\n' || end[-1] == ' '))
		*--end = '\0';
	start = strrchr(text, '\n');
	if (start)
		memmove(text, start + 1, strlen(start + 1) + 1);
}

static int run_gnuplot(struct plot_ctx *ctx, const char *name)
{
	char script[160], msg[2048];
	int pfd[2], status = 0;
	bool done;
	pid_t pid;

	snprintf(script, sizeof(script), "%s.gp", name);
	if (pipe2(pfd, O_CLOEXEC))
		return errf(ctx->err, ctx->errlen, errno, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return errf(ctx->err, ctx->errlen, errno, "fork: %s", strerror(errno));
	}
	if (pid == 0)
		exec_gnuplot(ctx->dir, script, pfd[1]);
	close(pfd[1]);
	done = drain_stderr(pfd[0], msg, sizeof(msg));
	close(pfd[0]);
	if (!done)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!done)
		return errf(ctx->err, ctx->errlen, ETIMEDOUT, "gnuplot ran over %d s on %s/%s",
			    GNUPLOT_DEADLINE_MS / 1000, ctx->dir, script);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	last_line(msg);
	return errf(ctx->err, ctx->errlen, EIO, "gnuplot failed on %s/%s: %s", ctx->dir, script,
		    msg[0] ? msg : "no message");
}

int fig_finish(struct plot_ctx *ctx, const char *name, FILE *dat, FILE *gp)
{
	bool bad = ferror(dat) || ferror(gp);

	bad |= fclose(dat) != 0;
	bad |= fclose(gp) != 0;
	if (bad)
		return errf(ctx->err, ctx->errlen, EIO, "cannot write %s/%s.dat or .gp", ctx->dir,
			    name);
	if (run_gnuplot(ctx, name))
		return -EIO;
	ctx->nfigs++;
	if (ctx->o->list)
		fprintf(ctx->o->list, "%s/%s.png %s/%s.svg (%s.dat, %s.gp)\n", ctx->dir, name,
			ctx->dir, name, name, name);
	return 0;
}

/* ---- whole files ------------------------------------------------------------------ */

static int make_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;

	if (mkdir(dir, 0755) == 0)
		return 0;
	if (errno == EEXIST && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	return errf(err, errlen, errno == EEXIST ? ENOTDIR : errno,
		    "-o %s: cannot create the directory: %s", dir,
		    strerror(errno == EEXIST ? ENOTDIR : errno));
}

/* The --pivot options of the run that wrote the file, so that a run with
 * --pivot --plot draws its own heatmap. */
static void pivots_from_cmdline(const struct rfile *rf, struct plot_opts *o)
{
	const char *cmd = json_string_value(json_object_get(rf->root, "cmdline"));
	char buf[1024], *save = NULL, err[ERRLEN];
	bool next = false;

	snprintf(buf, sizeof(buf), "%s", cmd ? cmd : "");
	for (char *w = strtok_r(buf, " ", &save); w && o->npivots < PLOT_MAX_PIVOTS;
	     w = strtok_r(NULL, " ", &save)) {
		const char *spec = next ? w : !strncmp(w, "--pivot=", 8) ? w + 8 : NULL;

		next = !strcmp(w, "--pivot");
		if (spec && !plot_parse_pivot(spec, &o->pivots[o->npivots], err, sizeof(err)))
			o->npivots++;
	}
}

static bool any_ok(const struct rfile *rf)
{
	for (size_t i = 0; i < rf->n; i++)
		if (rf->cells[i].ok)
			return true;
	return false;
}

/* -ENOENT: gnuplot missing; -EINVAL: bad input; others: plotting failed. */
int plot_file(const char *json_path, const char *dir, struct plot_opts *o, char *err,
		     size_t errlen)
{
	struct plot_ctx ctx = { .o = o, .dir = dir, .err = err, .errlen = errlen };
	const struct rfile *files[1];
	struct rfile rf;
	int ret;

	if (!have_gnuplot())
		return errf(err, errlen, ENOENT, "gnuplot not found in PATH; install it: apt-get install %s",
			    GNUPLOT_PKG);
	ret = rfile_load(&rf, json_path, NULL, err, errlen);
	if (ret)
		return -EINVAL;
	if (!any_ok(&rf)) {
		rfile_free(&rf);
		return errf(err, errlen, EINVAL, "%s: no result ran (all skipped or failed): nothing to plot",
			    json_path);
	}
	if (!o->npivots)
		pivots_from_cmdline(&rf, o);
	ctx.rf = files[0] = &rf;
	ctx.nnames = rf_varying(files, 1, false, ctx.names, ARRAY_SIZE(ctx.names));
	for (unsigned i = 0; !ret && i < o->npivots; i++)
		ret = fig_check_pivot(&ctx, &o->pivots[i]);
	if (!ret)
		ret = make_dir(dir, err, errlen);
	if (!ret)
		ret = fig_latency(&ctx);
	if (!ret)
		ret = fig_throughput(&ctx);
	if (!ret)
		ret = fig_cpu(&ctx);
	if (!ret)
		ret = fig_matrix(&ctx);
	if (!ret)
		ret = fig_cycle(&ctx);
	for (unsigned i = 0; !ret && i < o->npivots; i++)
		ret = fig_heatmap(&ctx, &o->pivots[i]);
	rfile_free(&rf);
	return ret;
}

int plot_report_file(const char *json_path, const char *dir, char *err, size_t errlen)
{
	struct plot_opts o = { .width = 1000, .height = 600 };

	return plot_file(json_path, dir, &o, err, errlen);
}
