// SPDX-License-Identifier: MIT
/* CSV reporter: a header row, then one row per result. The columns are the
 * field table's keys in order, then the lists the table cannot hold
 * (csv_extra_keys). Quoting follows RFC 4180 so any CSV reader gets back the
 * exact text; numbers are written so that they read back to the same value.
 * Metrics of a result that did not run are empty cells. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "ipclab/reporter.h"
#include "ipclab/result.h"
#include "ipclab/util.h"
#include "fields.h"
#include "intf_out.h"

#define LIST_LEN 2048

static void csv_cell(FILE *f, const char *s, bool first)
{
	size_t n = strlen(s);
	bool quote = strpbrk(s, ",\"\r\n") || (n && (s[0] == ' ' || s[n - 1] == ' '));

	if (!first)
		fputc(',', f);
	if (!quote) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void csv_header(FILE *f)
{
	for (size_t i = 0; i < n_result_fields; i++)
		csv_cell(f, result_fields[i].key, i == 0);
	for (size_t i = 0; i < n_csv_extra_keys; i++)
		csv_cell(f, csv_extra_keys[i], false);
	fputc('\n', f);
}

/* Appends to a fixed buffer; a list that does not fit is cut, never overrun. */
static void append(char *buf, size_t len, const char *sep, const char *s)
{
	size_t used = strlen(buf);

	if (used)
		snprintf(buf + used, len - used, "%s%s", sep, s);
	else
		snprintf(buf, len, "%s", s);
}

/* Per-CPU busy %, ';'-separated (no quoting needed); a CPU whose window
 * held no clock tick is an empty item, so positions stay CPU numbers. */
static void cpu_busy_list(const struct result *r, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	if (r->status != RES_OK)
		return;
	for (unsigned i = 0; i < r->ncpu && i < SYS_MAX_CPUS && off < len; i++) {
		char num[32] = "";

		if (isfinite(r->cpu_busy_pct[i]))
			fmt_double_exact(num, sizeof(num), r->cpu_busy_pct[i]);
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ";" : "", num);
	}
}

/* Effective settings in -O syntax: key=value,key=value. */
static void settings_list(const struct tp_settings *s, char *buf, size_t len)
{
	char kv[128];

	buf[0] = '\0';
	for (unsigned i = 0; i < s->n && i < TP_MAX_SETTINGS; i++) {
		snprintf(kv, sizeof(kv), "%s=%s", s->kv[i].key, s->kv[i].val);
		append(buf, len, ",", kv);
	}
}

static void csv_row(FILE *f, const struct result *r)
{
	char buf[LIST_LEN];

	for (size_t i = 0; i < n_result_fields; i++) {
		field_text(&result_fields[i], r, buf, sizeof(buf));
		csv_cell(f, buf, i == 0);
	}
	cpu_busy_list(r, buf, sizeof(buf));
	csv_cell(f, buf, false);
	settings_list(&r->settings, buf, sizeof(buf));
	csv_cell(f, buf, false);
	csv_cell(f, r->tp_opts, false);
	csv_cell(f, r->pat_opts, false);
	for (size_t k = 0; k < INTF_CSV_COLUMNS; k++) {
		buf[0] = '\0';
		if (r->status == RES_OK)
			intf_csv_value(&r->intf, k, buf, sizeof(buf));
		csv_cell(f, buf, false);
	}
	fputc('\n', f);
}

int report_csv(FILE *f, const struct report *rep)
{
	csv_header(f);
	for (size_t i = 0; i < rep->n; i++)
		csv_row(f, &rep->results[i]);
	if (fflush(f) || ferror(f))
		return -EIO;
	return 0;
}
