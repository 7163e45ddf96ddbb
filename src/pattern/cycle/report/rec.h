/* SPDX-License-Identifier: MIT */
/* -p cycle's part of a result file read back (docs/output.md: cycle_series,
 * period_ns, metrics.deadline_ns, metrics.xruns, metrics.stages,
 * metrics.xrun_causes) into plain structs, for ipclab report and plot.
 * out.c writes these keys; this is the one place that reads them.
 * A file is anyone's: numbers are taken only when finite, arrays only up
 * to a bound, strings only as strings. */
#ifndef IPCLAB_PATTERN_CYCLE_REPORT_REC_H
#define IPCLAB_PATTERN_CYCLE_REPORT_REC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../cycle.h"
#include "../../../report/rfile.h"

/* A cycle cell: status ok, a cycle_series object and a metrics.stages
 * array (ipclab writes both for every -p cycle cell that ran). */
bool rcell_is_cycle(const struct rcell *c);

/* metrics.deadline_ns and metrics.xruns: NAN when absent or not a number. */
double rcell_cycle_deadline_ns(const struct rcell *c);
double rcell_cycle_xruns(const struct rcell *c);

/* The driver's period: period_ns when a number above 0, else
 * metrics.deadline_ns (which ipclab sets to the period by default), else
 * NAN. */
double rcell_cycle_period_ns(const struct rcell *c);

/* Points read of a series: ipclab writes at most CYCLE_SERIES_MAX. */
#define RCYCLE_MAX_POINTS 4096

/* cycle_series: cycles_per_point (a whole number above 0) and the number
 * of points (max_ns and xruns arrays of the same length; at most
 * RCYCLE_MAX_POINTS, the rest not read). false when absent or not so. */
struct rcycle_series {
	uint64_t per;
	size_t n;
};
bool rcell_cycle_series(const struct rcell *c, struct rcycle_series *s);

/* Point i of cycle_series: max_ns[i], the worst completion of its cycles
 * (NAN when null, none of them ran: late starts only; or not a number of
 * 0 or more), xruns[i] (0 unless a whole number above 0) and, where the
 * file has them, xrun_causes[i] (a string; NULL without, borrowed from the
 * file's tree). */
struct rcycle_point {
	double max_ns;
	uint64_t xruns;
	const char *cause;
};
/* The points of a series rcell_cycle_series accepted into out (at most
 * max): their count, 0 when it did not. */
size_t rcell_cycle_points(const struct rcell *c, struct rcycle_point *out, size_t max);

/* Stages read of a cell: ipclab writes at most CYCLE_MAX_STAGES. */
#define RCYCLE_MAX_STAGES 128

/* metrics.stages[k], in graph order: wait_share_pct and busy_share_pct
 * (the p50s as % of the period), xruns_caused, and its xrun_causes
 * stage_wait, stage_busy and preempted. A value absent, null or not a
 * finite number reads 0 (an element that is not an object: all 0). */
struct rcycle_stage {
	double wait_share_pct, busy_share_pct;
	double xruns_caused;
	double by_wait, by_busy, by_preempted;
};
/* The count put into out (at most max and RCYCLE_MAX_STAGES), 0 without
 * a metrics.stages array. */
size_t rcell_cycle_stages(const struct rcell *c, struct rcycle_stage *out, size_t max);

/* metrics.xrun_causes: every xrun's cause, by[k] the count under
 * cycle_cause_name(k) (0 when absent or not a finite number);
 * preempted_known: false only when "preempted" is null (a run without
 * --trace). false when the file has no xrun_causes object. */
struct rcycle_causes {
	double by[XC_N];
	bool preempted_known;
};
bool rcell_xrun_causes(const struct rcell *c, struct rcycle_causes *out);

#endif
