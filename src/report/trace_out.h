/* SPDX-License-Identifier: MIT */
/* --trace in the reports (src/report/trace_out.c): the result's `trace`
 * object and the compact line the text table prints under a traced row. */
#ifndef IPCLAB_REPORT_TRACE_OUT_H
#define IPCLAB_REPORT_TRACE_OUT_H

#include <jansson.h>
#include <stdio.h>

#include "ipclab/trace.h"

json_t *trace_json(const struct trace_result *tr);
void trace_table_line(FILE *f, const struct trace_result *tr);
/* The measured cost of tracing or profiling (TRACE_PAIRS interleaved
 * pairs): its JSON keys beside "perturbation", and its text. */
void perturbation_json(json_t *o, unsigned pairs, double lo, double hi, bool separable);
void perturbation_text(FILE *f, const char *what, double med, unsigned pairs, double lo,
		       double hi, bool separable);

#endif
