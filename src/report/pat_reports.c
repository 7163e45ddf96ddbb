// SPDX-License-Identifier: MIT
/* THE list of the patterns' own parts of the result record (struct
 * pat_report): a pattern with fields, JSON sections, table lines or
 * figures of its own has one entry here, naming it and the record keys
 * its json_result adds, and the reporters reach it through pat_report_of
 * (and rec_pat_keys_del). Each part lives in its pattern's room,
 * src/pattern/NAME/report/ (src/pattern/README.md). The report layer
 * names the pattern, never the reverse (tests/cli/layers.sh). */
#include "ipclab/result.h"
#include "rec_cell.h"
#include "../pattern/cycle/report/out.h"

extern const struct pattern pat_cycle;

static const struct {
	const struct pattern *pat;
	const struct pat_report *report;
	const char *const *keys;	/* its json_result's keys, NULL-terminated */
} pat_reports[] = {
	{ &pat_cycle, &cycle_report, cycle_result_keys },
};

const struct pat_report *pat_report_of(const struct pattern *p)
{
	for (size_t i = 0; p && i < ARRAY_SIZE(pat_reports); i++)
		if (pat_reports[i].pat == p)
			return pat_reports[i].report;
	return NULL;
}

void rec_pat_keys_del(json_t *result)
{
	for (size_t i = 0; i < ARRAY_SIZE(pat_reports); i++)
		for (const char *const *k = pat_reports[i].keys; k && *k; k++)
			json_object_del(result, *k);
}
