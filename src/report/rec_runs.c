// SPDX-License-Identifier: MIT
/* run --runs N read back: the record keeps each cell's fold over the runs
 * (its metrics and "repeat", over "runs") and, in the cell's "runs" array,
 * every run's status and metrics; the record's "runs" array holds each
 * run's start and canary. A run is made a record of its own here, so that
 * compare takes a --runs file as that many runs a side. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ipclab/util.h"
#include "rec_runs.h"

size_t rfile_nruns(const struct rfile *rf)
{
	const json_t *runs = json_object_get(rf->root, "runs");
	size_t n = json_is_array(runs) ? json_array_size(runs) : 0;

	if (n < 2)
		return 0;
	for (size_t i = 0; i < rf->n; i++) {
		const json_t *c = json_object_get(rf->cells[i].obj, "runs");

		if (!json_is_array(c) || json_array_size(c) != n)
			return 0;
	}
	return n;
}

/* Cell obj's run j laid over the cell: status, reason, metrics. */
static int cell_as_run(json_t *obj, size_t j)
{
	/* held: deleting the cell's "runs" below would free it */
	json_t *run = json_incref(json_array_get(json_object_get(obj, "runs"), j));
	json_t *st = json_object_get(run, "status"), *m = json_object_get(run, "metrics");
	json_t *why = json_object_get(run, "reason");
	int ret = 0;

	if (!json_is_object(run) || !json_is_string(st)) {
		json_decref(run);
		return -EINVAL;
	}
	json_object_del(obj, "repeat");
	json_object_del(obj, "runs");
	json_object_del(obj, "reason");
	json_object_del(obj, "metrics");
	if (json_object_set(obj, "status", st) ||
	    (json_is_string(why) && json_object_set(obj, "reason", why)) ||
	    (json_is_object(m) && json_object_set(obj, "metrics", m)))
		ret = -ENOMEM;
	json_decref(run);
	return ret;
}

int rfile_run(const struct rfile *rf, size_t j, const char *const *ignore, struct rfile *out,
	      char *err, size_t errlen)
{
	json_t *root = json_deep_copy(rf->root), *results, *env, *canary;
	char name[sizeof(out->path)];
	size_t i;
	json_t *c;

	memset(out, 0, sizeof(*out));
	if (!root)
		return errf(err, errlen, ENOMEM, "%s: out of memory", rf->path);
	snprintf(name, sizeof(name), "%.480s#run%zu", rf->path, j + 1);
	results = json_object_get(root, "results");
	json_array_foreach(results, i, c) {
		if (cell_as_run(c, j)) {
			json_decref(root);
			return errf(err, errlen, EINVAL, "%s: result %zu: no run %zu in its \"runs\"",
				    rf->path, i + 1, j + 1);
		}
	}
	canary = json_object_get(json_array_get(json_object_get(root, "runs"), j), "canary");
	env = json_object_get(root, "env");
	if (json_is_object(env) && json_is_object(canary))
		json_object_set(env, "canary", canary);
	else if (json_is_object(env))
		json_object_del(env, "canary");
	json_object_del(root, "runs");
	return rfile_adopt(out, root, name, ignore, err, errlen);
}
