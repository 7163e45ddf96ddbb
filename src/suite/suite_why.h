/* SPDX-License-Identifier: MIT */
/* The seeds' readings from the trace (suite_why.c): why the figure a seed
 * compared differs between two of its cells, told by the cells' cause
 * splits (trace.cause), the machine's share and who took it
 * (preempted_by), the repetitions' spread, and --explain's test. Built
 * from the result records alone, into a buffer, so that it can be tested
 * on made-up records. */
#ifndef IPCLAB_CMD_SUITE_WHY_H
#define IPCLAB_CMD_SUITE_WHY_H

#include <stdbool.h>
#include <stddef.h>

#include "ipclab/result.h"

/* A share this much of a figure or more that others took: the machine's. */
#define WHY_MACHINE_PCT 20.0

/* Two cells of a seed and the figure it compared between them. */
struct why_pair {
	const struct result *a, *b;	/* a: the cell the seed asks about */
	const char *a_name, *b_name;	/* "two CPUs (pipe)", "paced", ... */
	const char *key;		/* the figure: "msgs_per_s", "lat_p50_ns", "cpu_pct_total" */
	bool by_pct;			/* shares compared as % of each cell's figure (the
					 * cells' figures are of different work: seed 001) */
	const char *note;		/* said after a's split, or NULL */
};

/* "Why (trace): ..." (no newline) into buf; "" when neither cell has a
 * cause split (not traced). Returns strlen(buf). */
size_t why_pair(char *buf, size_t len, const struct why_pair *p);

/* buf (n of it) on a line of stdout, when n > 0. */
void why_print(size_t n, const char *buf);
#define WHY_LEN 2048	/* the longest reading: causes, a stage, the split, who, --explain */

/* Each seed's comparison (the cells its reading compares) into buf: "" when
 * a cell is missing, did not run or has no cause split. */
size_t why_000(char *buf, size_t len, const struct result *best, const struct result *worst);
size_t why_001(char *buf, size_t len, const struct result *low, const struct result *high);
size_t why_002(char *buf, size_t len, const struct result *same, const struct result *split);
size_t why_003(char *buf, size_t len, const struct result *flood, const struct result *paced);
size_t why_004(char *buf, size_t len, const struct result *procs, const struct result *threads);

/* Its parts, each appended at buf[*n] (bounded, always terminated; *n grows):
 * text; */
void why_add(char *buf, size_t len, size_t *n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* p->a's largest shares and those that differ most from p->b's (or b's
 * alone, said so, when a has no cause split); */
void why_split(char *buf, size_t len, size_t *n, const struct why_pair *p);
/* why_machine on a then b, then why_explain on a or else b, each ending "; "; */
void why_others(char *buf, size_t len, size_t *n, const struct why_pair *p);
/* the end: the last "; " dropped, "." added; returns *n (= strlen(buf)); */
size_t why_end(char *buf, size_t len, size_t *n);
/* and:
 * the statistical verdict: true (and said) when a and b's key is the same
 * within +-10 % ("no difference", from the interval of their ratio over the
 * kept repetitions), or too noisy to tell (that interval holds 1 and reaches
 * past the margin; without kept repetitions, the medians' intervals overlap
 * or their spread is wider than the difference); false when they differ;
 * the ratio said as the larger cell over the smaller, each by its name; */
bool why_noise(char *buf, size_t len, size_t *n, const struct result *a, const char *a_name,
	       const struct result *b, const char *b_name,
	       const char *key);
/* the machine's share of r's figure, when WHY_MACHINE_PCT or more, and who
 * took it (comm, pid): true when said; */
bool why_machine(char *buf, size_t len, size_t *n, const struct result *r, const char *name);
/* what --explain measured on r, when it ran: true when said. */
bool why_explain(char *buf, size_t len, size_t *n, const struct result *r, const char *name);

#endif
