/* SPDX-License-Identifier: MIT */
/* Reading result files back (the JSON of docs/output.md) for plot and
 * compare: cells, their configuration, metrics, spread and histogram. */
#ifndef IPCLAB_REPORT_RFILE_H
#define IPCLAB_REPORT_RFILE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "ipclab/metrics.h"
#include "rec_cell.h"

#define RF_KEYLEN 1024

/* One result of a file. */
struct rcell {
	json_t *obj;			/* borrowed from the file's tree */
	const char *transport, *pattern;
	bool ok;			/* status "ok": metrics present */
	char match[RF_KEYLEN];		/* configuration that identifies the cell */
};

struct rfile {
	char path[512];
	json_t *root;
	struct rcell *cells;
	size_t n;
};

/* Configuration keys left out of rf->cells[].match by default: they say how
 * long or how carefully a cell ran, not what ran. */
extern const char *const rf_unmatched_keys[];

/* Load a result file. ignore: extra configuration keys to leave out of the
 * match (NULL-terminated, may be NULL). 0 or -errno with err filled. */
int rfile_load(struct rfile *rf, const char *path, const char *const *ignore, char *err,
	       size_t errlen);
/* The same from a file's text in memory; name stands for its path. */
int rfile_load_text(struct rfile *rf, const char *name, const char *text, size_t len,
		    const char *const *ignore, char *err, size_t errlen);
/* The same from a tree already parsed (a stored run, a report just made);
 * path names it in messages. The tree is the rfile's from here on, freed
 * by rfile_free, on an error too. */
int rfile_adopt(struct rfile *rf, json_t *root, const char *path, const char *const *ignore,
		char *err, size_t errlen);
/* The same (run --html: the run's own report). */
int rfile_from_tree(struct rfile *rf, json_t *root, const char *path, const char *const *ignore,
		    char *err, size_t errlen);
void rfile_free(struct rfile *rf);

/* Its metrics.lat_kind (LAT_NONE when absent or unknown). */
enum lat_kind rcell_lat_kind(const struct rcell *c);

/* A metric ("metrics" object) as a number, NAN when absent or null. */
double rcell_metric(const struct rcell *c, const char *key);

/* A parameter as text: a configuration key (aliases: size), server_cpu and
 * client_cpu (from pin S:C), or a transport or pattern option. -ENOENT when
 * the cell has none. */
int rcell_param(const struct rcell *c, const char *name, char *buf, size_t len);
/* Do a and b have the same value of each of names but skip (NULL: none),
 * whole, as rcell_label would name them: whether two cells are one series
 * or group (a label is cut to its buffer, two values are not). */
bool rcell_same_label(const struct rcell *a, const struct rcell *b, const char *const *names, size_t n,
		      const char *skip);

/* Run-to-run spread of a metric ("repeat" object, --repeat): false when the
 * file has none for it. */
bool rcell_spread(const struct rcell *c, const char *key, double *min, double *max,
		  double *spread_pct);

/* The repetitions of a metric (repeat.<key>.values, at most
 * REPF_MAX_VALUES, each finite or null: checked when the file was loaded)
 * into out, nulls left out; the count, 0 without them (an older file, or
 * one repetition). */
#define REPF_MAX_VALUES 64
size_t rcell_values(const struct rcell *c, const char *key, double *out, size_t max);

/* A metric's two clusters (repeat.<key>.modes, checked at load): false
 * without. */
struct rcell_modes {
	double low_median, high_median, split;
};
bool rcell_modes(const struct rcell *c, const char *key, struct rcell_modes *m);

/* A boolean metric (noisy, bimodal): false when absent. */
bool rcell_flag(const struct rcell *c, const char *key);

/* The cell's latency histogram rebuilt from its buckets (min and max from
 * the exact metrics), so that hist_quantile gives the run's own percentiles.
 * 0, -ENOENT without a histogram, -EINVAL when malformed. */
int rcell_hist(const struct rcell *c, struct hist *h);

/* Metric name aliases shared with run --pivot (p50, cpu_pct, ...). */
const char *rf_metric_alias(const char *name);

/* Parameters whose value is not the same in every cell of these files (a
 * cell without an option does not count against it): what a label must show
 * to tell cells apart; with lead, transport, pattern, size_bytes and
 * endpoints whether they vary or not. Fills names (borrowed from the trees);
 * returns the count. Order: those four, then as found. */
size_t rf_varying(const struct rfile *const *files, size_t nfiles, bool lead, const char **names,
		  size_t max);

/* "pipe pingpong 64B process pin=split": the transport, pattern, size and
 * endpoints as bare words, other parameters as key=value; names as from
 * rf_varying; skip: a parameter to leave out (a plot's axis), or NULL. */
void rcell_label(const struct rcell *c, const char *const *names, size_t n, const char *skip,
		 char *buf, size_t len);

/* A short text for a JSON scalar: strings as is, numbers exact, true/false. */
void rf_scalar_text(const json_t *v, char *buf, size_t len);

#endif
