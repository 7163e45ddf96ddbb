/* SPDX-License-Identifier: MIT */
/* Result records and the reporters that print them. One field table
 * (src/report/fields.c) drives the human table, JSON and CSV. */
#ifndef IPCLAB_REPORT_H
#define IPCLAB_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ipclab/metrics.h"
#include "ipclab/pattern.h"
#include "ipclab/transport.h"

#define SCHEMA_VERSION 1

enum result_status { RES_OK, RES_SKIPPED, RES_FAILED };

struct side_result {
	enum tp_role role;
	unsigned id;
	uint64_t user_ns, sys_ns;
	double cpu_pct;
	uint64_t vol_cs, invol_cs;
	uint64_t msgs, bytes;
	uint64_t elapsed_ns;
};

/* Everything one cell produced. */
struct result {
	struct cell cell;		/* full configuration */
	char transport[32], pattern[32];
	char section[32];		/* suite section, "" if none */
	enum result_status status;
	char reason[ERRLEN];
	struct tp_settings settings;	/* effective, read back */
	char tp_opts[256];		/* "key=value,..." private options in force */
	char pat_opts[256];

	/* metrics */
	uint64_t elapsed_ns;
	uint64_t msgs, bytes;
	double msgs_per_s, bytes_per_s;
	const char *lat_kind;		/* "rtt" | "one_way" */
	uint64_t lat_min_ns, lat_p50_ns, lat_p90_ns, lat_p99_ns, lat_p99_9_ns,
		lat_p99_99_ns, lat_max_ns;
	double lat_mean_ns;
	uint64_t lat_samples;
	uint32_t sample_every;		/* one-way: every Nth message carried a timestamp */
	double cpu_pct_total;		/* all sides, of one CPU (200 = two CPUs busy) */
	double cpu_ns_per_msg;		/* user+sys of all sides per message */
	double sys_ctx_switches_per_s;
	double sys_intr_per_s;
	double sys_busy_pct;		/* all CPUs, of all CPUs */
	unsigned ncpu;
	double cpu_busy_pct[SYS_MAX_CPUS];	/* per CPU */
	uint64_t lost, dups, reorders;
	bool zerocopy;

	unsigned nsides;
	struct side_result sides[MAX_SIDES];
	struct hist hist;		/* merged latency histogram */
};

/* Environment every result file carries. */
struct env_info {
	char kernel[128], cpu_model[128], clocksource[32], virtualization[32];
	char governor[32], hostname[64];
	unsigned cpus_online;
	struct clock_info clock;
};
void env_collect(struct env_info *env);

/* A run's output: header + results. */
struct report {
	const char *cmdline;
	struct env_info env;
	struct result *results;
	size_t n;
};

enum field_kind { F_U64, F_DBL, F_STR, F_BOOL };	/* F_BOOL: get_num gives 0/1 */
enum field_unit { U_NONE, U_NS, U_BYTES, U_PER_S, U_BYTES_PER_S, U_PCT, U_COUNT };

/* One metric or configuration column. */
struct field {
	const char *key;	/* JSON key / CSV column, unit in the name */
	const char *label;	/* human table header */
	enum field_kind kind;
	enum field_unit unit;
	const char *(*get_str)(const struct result *r);
	double (*get_num)(const struct result *r);
	bool config;		/* configuration (top level) vs metrics */
	bool table;		/* shown in the human table */
	const char *doc;	/* one line for docs/output.md */
};
extern const struct field result_fields[];
extern const size_t n_result_fields;

int report_table(FILE *f, const struct report *rep);
int report_json(FILE *f, const struct report *rep, char *err, size_t errlen);
int report_csv(FILE *f, const struct report *rep);
int report_markdown(FILE *f, const struct report *rep);
/* Rows sorted within each (pattern, size) by the headline metric. */
int report_table_ranked(FILE *f, const struct report *rep);

#endif
