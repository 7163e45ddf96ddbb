/* SPDX-License-Identifier: MIT */
/* -p cycle in the reports (out.c): the stages[] of a
 * result's metrics, its completion-time series, and the line the text
 * table prints under a cycle row; the reporters reach them through
 * cycle_report (ipclab/result.h: struct pat_report; src/report/pat_reports.c).
 * A result file's are read back through rec.h. */
#ifndef IPCLAB_PATTERN_CYCLE_REPORT_OUT_H
#define IPCLAB_PATTERN_CYCLE_REPORT_OUT_H

#include <jansson.h>
#include <stdio.h>

#include "../cycle.h"
#include "ipclab/result.h"

extern const struct pat_report cycle_report;
/* The keys its json_result adds to a result beside the configuration. */
extern const char *const cycle_result_keys[];

/* From a result file: ipclab report's cycle section (html.c) and
 * ipclab plot's figures, completion over the run and the stages' wait and
 * busy (plot.c; 0 when the file has no cycle result). */
struct html;
struct html_view;
struct plot_ctx;
void html_cycles(struct html *h, const struct html_view *v);
int fig_cycle(struct plot_ctx *ctx);

json_t *cycle_stages_json(const struct cycle_result *cr);
json_t *cycle_series_json(const struct cycle_series *s);
/* metrics.xrun_causes: every xrun's cause (preempted null untraced). */
json_t *cycle_causes_json(const struct cycle_result *cr);
/* The table's line of them, under the cycle line (none without xruns). */
void cycle_causes_line(FILE *f, const struct cycle_result *cr);
void cycle_table_line(FILE *f, const struct cycle_result *cr);

#endif
