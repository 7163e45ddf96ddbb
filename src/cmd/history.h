/* SPDX-License-Identifier: MIT */
/* `ipclab history`: the series of one metric per cell and machine across
 * stored runs (history.c), their change points, and their output
 * (history_out.c: table and JSON; history_svg.c: the figure and the HTML
 * page). */
#ifndef IPCLAB_CMD_HISTORY_H
#define IPCLAB_CMD_HISTORY_H

#include <stdio.h>

#include "db_filter.h"
#include "../report/changepoint.h"

#define HIST_MAX_CP 16

struct hpoint {
	int64_t run;
	char at[32];			/* the run's created_utc */
	json_t *labels;			/* the run's labels (owned) */
	double value, lo, hi;		/* lo, hi: its 95 % interval, NAN when none */
	struct canary canary[2];	/* the run's env.canary (history_canary.c) */
	double state_ratio;		/* against the series' state, >= 1; 0: unknown */
	char state_why[80];		/* "another state (cache-line RTT 4.3x)"; "" */
	json_t *metrics;		/* its result's metrics only (owned, rec_metrics_part): -f csv */
	unsigned runs;			/* --by machine: the machine's runs of the cell */
	double ratio;			/* --by machine: against the first machine */
};

/* --against: the baseline's and the candidate's values of one series. */
struct hside {
	double *v;
	size_t n, cap;
	double median, lo, hi;		/* lo, hi: one point's own interval (n = 1) */
};

struct hseries {
	char key[RF_KEYLEN + 80];	/* machine, then the cell's identity */
	char label[320];		/* "pipe pingpong 64B process" */
	char machine[64];
	json_t *cell;			/* one of its results (owned), for the label */
	const char *metric;		/* the metrics key */
	struct hpoint *pts;
	size_t n, cap;
	struct cp_change cp[HIST_MAX_CP];
	int ncp;
	struct hside base, cand;	/* --against */
	double ratio, p_value;
	bool changed;
};

struct history {
	struct filter_args fa;
	const char *metric;		/* -m (a metrics key); NULL: each cell's headline */
	const char *by;			/* --by LABEL: points in that label's order */
	const char *format, *output, *figure;
	bool fail_on_change;
	struct cp_opts cp;
	const char *against;		/* --against VALUE or K=V */
	struct db_label base_label, cand_label;
	double threshold_pct;		/* --against: smaller changes are not changes */
	struct hseries *s;
	size_t n, cap;
	bool machines;			/* more than one machine among the series */
	bool hosts;			/* --by machine: a series per cell, a point per machine */
	const char *cmd;		/* in messages: history, report */
	bool allow_empty;		/* no matching result is no error */
};

/* The series of h's filters from db (db.h), analysed, folded by machine
 * with --by machine, named: 0 or an exit status (said). history_free
 * frees what it made. */
struct db;
int history_load(struct history *h, struct db *db);
void history_free(struct history *h);

/* Mark the points of runs measured in another state of the machine than
 * the rest of their series (their canaries): 0, or an exit status. */
int history_canary(struct history *h, struct db *db);
/* --by machine: the series of one cell on each machine made one series
 * of that cell, a point per machine (history_hosts.c): 0 or -ENOMEM. */
int history_hosts(struct history *h);
int history_hosts_table(FILE *f, const struct history *h);
/* -f csv: a row per run and cell, for change-point tools (history_csv.c). */
int history_csv(FILE *f, const struct history *h);
/* The exit status of writing h in h->format (table, json, csv, svg, html). */
int history_write(const struct history *h);
int history_table(FILE *f, const struct history *h);
int history_json(FILE *f, const struct history *h);
int history_svg(FILE *f, const struct history *h, bool in_html);
int history_html(FILE *f, const struct history *h);
/* A metric's value as the field table shows it, with its unit (12.3us,
 * 1.23M/s, 250 MB/s, 45%); a key the table does not have as a number. */
const char *history_fmt(char *buf, size_t len, const char *metric, double v);
/* A metric as the field table names it: "median latency (lat_p50_ns)",
 * "message bytes per second, headers included (bytes_per_s)". */
const char *history_metric_name(char *buf, size_t len, const char *metric);

#endif
