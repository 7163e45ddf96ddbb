/* SPDX-License-Identifier: MIT */
/* A result record (docs/output.md) read by what it holds, not by its keys:
 * one result (an element of "results": its metrics, configuration,
 * repetitions' intervals, status), the file around it (when, which
 * machine, the command line, a suite's sections) and a stored run's labels.
 * The key names live here and in rfile.c only (a trace's and a profile's
 * in rec_trace.c, the machine's in rec_env.c, a pattern's own in its
 * room, src/pattern/NAME/report/rec.c). Files and stores are
 * anyone's: a number read is finite or absent, a name a string of at most
 * REC_STR_MAX bytes or absent. rfile.h's rcell_* read a cell through
 * these; a stored run's result (ipclab history, compare --db), a bare
 * json_t, is read with them directly. */
#ifndef IPCLAB_REPORT_REC_CELL_H
#define IPCLAB_REPORT_REC_CELL_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "ipclab/metrics.h"

#define REC_STR_MAX 4096	/* a longer string reads as absent */

/* ---- one result ---- */

/* A metric (metrics.<key>, aliases as rf_metric_alias) as a number: NAN
 * when absent, not a number, or not finite. */
double rec_metric(const json_t *result, const char *key);
/* metrics.lat_kind (LAT_NONE when absent or unknown). */
enum lat_kind rec_lat_kind(const json_t *result);
/* The metric a result is ranked and tracked by: the median round trip
 * (lat_p50_ns) when its latency is a round trip, else msgs_per_s. */
const char *rec_headline(const json_t *result);
/* A boolean metric (noisy, bimodal): false when absent. */
bool rec_flag(const json_t *result, const char *key);

/* A field of the field table, configuration (top level) or metric, as
 * its scalar: a string, a finite number or a boolean; NULL otherwise. For
 * text that must stay exact (CSV). No aliases. */
const json_t *rec_field(const json_t *result, const char *key, bool config);
/* The same as a number (true 1, false 0); NAN when not a number. */
double rec_field_num(const json_t *result, const char *key, bool config);
/* The same as a string; NULL when not one. */
const char *rec_field_text(const json_t *result, const char *key, bool config);

/* A metric's 95 % interval over the repetitions (repeat.<key>.ci95):
 * false without one (no --repeat, too few rounds). */
bool rec_ci95(const json_t *result, const char *key, double *lo, double *hi);

const char *rec_transport(const json_t *result);
const char *rec_pattern(const json_t *result);
const char *rec_status(const json_t *result);	/* "ok", "skipped", "failed" */
const char *rec_reason(const json_t *result);	/* why not ok; NULL when none */
const char *rec_section(const json_t *result);	/* its suite section; NULL when none */

/* Two results of the same message size (both without one count as one). */
bool rec_same_size(const json_t *a, const json_t *b);

/* A new result holding only result's metrics (what a series keeps of each
 * run, for rec_field and rec_metric); NULL without them or memory. */
json_t *rec_metrics_part(const json_t *result);
/* A new copy of result's configuration: without its metrics, sides,
 * histogram, repetitions and the pattern's and tools' sections. */
json_t *rec_config_copy(const json_t *result);
/* Take out of result the keys that the patterns' own parts of the record
 * add beside its configuration (pat_reports.c: each pattern's list). */
void rec_pat_keys_del(json_t *result);

/* A stored env --calibrate run's drift of one reference cell
 * (calibration.cells[]): the ratio of two runs' medians lay in [lo, hi]. */
struct rec_drift {
	const char *transport, *pattern, *what;	/* what: "" when absent */
	double lo, hi;
};
/* The calibration of a stored run's file (NULL: none). */
const json_t *rec_calibration(const json_t *root);
/* Its cells, in order: those with a transport, a pattern and
 * 0 < lo <= hi finite, at most max; the count. */
size_t rec_drift_cells(const json_t *cal, struct rec_drift *d, size_t max);

/* ---- the file ---- */

/* A suite's section (its "sections"), as the HTML report shows it. */
#define REC_HYP_MAX 8
struct rec_hyp {
	const char *claim, *conditions, *evidence;	/* "" when absent */
	bool reproduced;
};
struct rec_sect {
	const char *title, *text;	/* NULL when absent; text of any length */
	bool why;			/* a question tested: the four below */
	const char *question, *answer, *verdict;	/* "" when absent */
	struct rec_hyp hyp[REC_HYP_MAX];
	size_t nhyp;
};
/* The first section called name into s; all absent when there is none. */
void rec_file_section(const json_t *root, const char *name, struct rec_sect *s);

/* ---- a stored run ---- */

/* One of its labels (commit=abc, machine, kernel, kind): NULL when absent
 * or not a string. */
const char *rec_label(const json_t *labels, const char *name);

#endif
