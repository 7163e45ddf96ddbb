// SPDX-License-Identifier: MIT
/* `ipclab env --calibrate [--runs N] [--db URL]`: this machine's run-to-run
 * drift. What differs between two runs of one plan is the run (where the
 * scheduler puts an unpinned pair, the mode the machine is in when it
 * starts), which the repetitions inside one run do not see. So: N separate
 * runs (each its own process, placement and start, the reference cells
 * interleaved) of a null ping-pong unpinned and a pipe ping-pong split,
 * each run's median p50, and the interval an A/A pair of runs may differ
 * by: [min/max, max/min] of those medians. It is stored as a run labelled
 * kind=calibration on this machine, and compare uses it when each side is
 * one run: a change within it is "within run-to-run noise". */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "cmd.h"
#include "dbcmd.h"
#include "env_calibrate.h"

#define CAL_COUNT "10k"

static const struct cal_cell {
	const char *transport, *pin, *what;
} cal_cells[] = {
	{ "null", "none", "null pingpong 64B unpinned" },
	{ "pipe", "split", "pipe pingpong 64B pin=split" },
};
#define NCELLS (sizeof(cal_cells) / sizeof(cal_cells[0]))

/* One separate run of a cell into path: 0, or -1 (the run failed). */
static int cal_run(const struct cal_cell *c, const char *path)
{
	char *argv[] = { "ipclab", "run", "-q", "-t", (char *)c->transport, "-p", "pingpong", "-s",
			 "64", "-n", CAL_COUNT, "--pin", (char *)c->pin, "-f", "json", "-o",
			 (char *)path, NULL };
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			dup2(null, STDOUT_FILENO);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

/* The run's p50 (its first result's median): its tree kept in *keep and
 * that result in *res (borrowed from *keep), when the file has one. */
static double cal_p50(const char *path, json_t **keep, json_t **res)
{
	struct rfile rf;
	char err[ERRLEN];
	double v;

	if (rfile_load(&rf, path, NULL, err, sizeof(err)))
		return NAN;
	if (!rf.n) {
		rfile_free(&rf);
		return NAN;
	}
	v = rcell_metric(&rf.cells[0], "lat_p50_ns");
	json_decref(*keep);
	*keep = json_incref(rf.root);
	*res = rf.cells[0].obj;
	rfile_free(&rf);
	return v > 0 ? v : NAN;
}

static int cal_store(const char *url, bool shared, json_t *root)
{
	struct db_label label[1];
	size_t nl = 0;
	char err[ERRLEN];
	struct db *db;
	int64_t id;
	bool dup;
	int ret = db_labels_parse("kind=calibration", label, &nl, err, sizeof(err)) ? 2 :
		  db_cmd_open(url, db_open_flags(true, shared), "env", &db);

	if (ret)
		return ret;
	if (db_store_tree(db, root, label, nl, &id, &dup, err, sizeof(err)))
		ret = say_error("env", "--calibrate: not stored: %s", err);
	else
		printf("stored in %s as run %lld (label kind=calibration)\n", db->where, (long long)id);
	db_close(db);
	return ret;
}

int env_calibrate(const char *url, bool shared, unsigned runs)
{
	double p50[NCELLS][64];
	size_t n[NCELLS] = { 0 };
	json_t *keep[NCELLS] = { NULL }, *res[NCELLS] = { NULL }, *root = NULL;
	json_t *cells = json_array(), *results = json_array();
	char dir[] = "/tmp/ipclab-calibrate.XXXXXX", path[64];
	int ret = 0;

	if (!mkdtemp(dir) || !cells || !results) {
		json_decref(cells);
		json_decref(results);
		return say_error("env", "--calibrate: cannot make a temporary directory: %s", strerror(errno));
	}
	snprintf(path, sizeof(path), "%s/run.json", dir);
	for (unsigned r = 0; r < runs; r++)
		for (size_t c = 0; c < NCELLS; c++) {	/* interleaved: A B A B ... */
			fprintf(stderr, "\rcalibrating: run %u of %u, %s   ", r + 1, runs, cal_cells[c].what);
			if (!cal_run(&cal_cells[c], path)) {
				double v = cal_p50(path, &keep[c], &res[c]);

				if (isfinite(v))
					p50[c][n[c]++] = v;
			}
			unlink(path);
		}
	fputc('\n', stderr);
	rmdir(dir);
	printf("run-to-run drift of this machine (%u separate runs of each cell, each run's median p50):\n", runs);
	for (size_t c = 0; c < NCELLS; c++) {
		double lo = INFINITY, hi = 0;

		for (size_t i = 0; i < n[c]; i++) {
			lo = fmin(lo, p50[c][i]);
			hi = fmax(hi, p50[c][i]);
		}
		if (n[c] < 3) {
			printf("  %-30s only %zu of %u runs ran: not calibrated\n", cal_cells[c].what, n[c], runs);
			continue;
		}
		printf("  %-30s medians %.0f..%.0f ns: two runs differ by %.3f..%.3f\n", cal_cells[c].what,
		       lo, hi, lo / hi, hi / lo);
		json_array_append_new(cells, json_pack("{s:s, s:s, s:s, s:s, s:i, s:f, s:f}", "transport",
						       cal_cells[c].transport, "pattern", "pingpong",
						       "pin", cal_cells[c].pin, "what", cal_cells[c].what,
						       "runs", (int)n[c], "lo", lo / hi, "hi", hi / lo));
		json_array_append(results, res[c]);
	}
	if (!json_array_size(cells)) {
		ret = say_error("env", "--calibrate: too few runs ran to measure the drift (see ipclab run -t null -p pingpong)");
	} else {
		root = json_deep_copy(keep[0] ? keep[0] : keep[1]);
		if (!root || json_object_set(root, "results", results) ||
		    json_object_set_new(root, "calibration",
					json_pack("{s:i, s:s, s:O}", "runs", (int)runs, "metric",
						  "lat_p50_ns", "cells", cells)))
			ret = say_error("env", "out of memory");
		else
			ret = cal_store(url, shared, root);
	}
	for (size_t c = 0; c < NCELLS; c++)
		json_decref(keep[c]);
	json_decref(root);
	json_decref(cells);
	json_decref(results);
	return ret;
}
