/* SPDX-License-Identifier: MIT */
/* Each seed section's question (suite_question.c): its thread's own claim
 * tested as hypotheses on the section's cells, each a ratio of two cells'
 * figure with its 95 % interval over their kept repetitions, a test's
 * p-value and a verdict; printed as "Question:", "Hypothesis:", "Test:",
 * "Answer:" and "Verdict:" lines and kept in the section (struct
 * report_why) for the result file and the page. Built from the result
 * records alone, so that it can be tested on made-up records. */
#ifndef IPCLAB_CMD_SUITE_QUESTION_H
#define IPCLAB_CMD_SUITE_QUESTION_H

#include "ipclab/result.h"

/* The five verdicts, one string each (compared by address). */
extern const char sq_confirmed[], sq_refuted[], sq_same[], sq_not_here[], sq_noisy[];
#define SQ_CONFIRMED sq_confirmed
#define SQ_REFUTED sq_refuted
#define SQ_SAME sq_same
#define SQ_NOT_HERE sq_not_here
#define SQ_NOISY sq_noisy

/* b over a of key: the medians' ratio, its 95 % interval from the kept
 * repetitions (stats_ratio_ci; NAN without one), the Mann-Whitney p-value,
 * and the verdict on the claim that b's key is larger than a's ("more",
 * true) or smaller: confirmed, refuted, no difference (within +-10 %), too
 * noisy; without an interval, from the repetitions' ranges; with one run
 * each, different only beyond SQ_ONE_RUN_FACTOR either way. "not
 * reproduced here" when a cell is missing or did not run. Returns the
 * verdict. */
#define SQ_ONE_RUN_FACTOR 2.0
const char *sq_test(struct why_test *t, const char *knob, const struct result *a,
		    const struct result *b, const char *key, bool more);
/* For the sections' files (suite_question*.c): a cell that ran ("ok"); the
 * next test of w (NULL when full); w's headline pair from a test. */
bool sq_ran(const struct result *r);
struct why_test *sq_add_test(struct report_why *w);
void sq_compared(struct report_why *w, const struct why_test *t);
/* Context switches per message (the system's, each repetition's
 * switches/s over its msgs/s) of b over a, with its interval over the
 * repetitions: the claim that b switches more. */
const char *sq_test_cs(struct why_test *t, const char *knob, const struct result *a,
		       const struct result *b);
/* A verdict that decides (confirmed, refuted, no difference); a test's
 * ratio as text: "1.57x (95 % 1.50-1.63x, p = 0.008)". */
bool sq_decided(const char *v);
void sq_ratio_text(char *buf, size_t len, const struct why_test *t);
/* Add a hypothesis from a test: reproduced when confirmed; its evidence
 * the ratio, interval, p-value and extra (or NULL). */
struct why_hyp *sq_hyp(struct report_why *w, const char *claim, const char *conditions,
		       const struct why_test *t, const char *extra);

/* The question lines into f. */
void sq_print(FILE *f, const struct report_why *w);

/* Seed 004: processes and threads over a pipe, each [0] unpinned, [1]
 * both on one CPU, [2] on two CPUs (NULL where not run). The thread's
 * claim, processes ahead of threads, is tested in each placement; the
 * headline pair is the first that decides of unpinned, two CPUs, one CPU
 * (unpinned when none does); the verdict is confirmed where any placement confirms it. */
#define SQ_004_PLACES 3
void sq_004(struct report_why *w, const struct result *const procs[SQ_004_PLACES],
	    const struct result *const threads[SQ_004_PLACES]);
/* Seed 000: the pipe's cells under normal scheduling (po) and SCHED_FIFO
 * (pf), unpinned [0], on one CPU [1] and on two [2] (NULL where not run);
 * posix-mq's (qo, qf), unpinned; fifo_why: why SCHED_FIFO did not run (or
 * NULL). The pipe switches per message under a policy when its context
 * switches per message (system-wide, or the trace's where traced) reach
 * SQ_CS_PER_MSG. */
#define SQ_CS_PER_MSG 0.9
#define SQ_000_PLACES 3
void sq_000(struct report_why *w, const struct result *const po[SQ_000_PLACES],
	    const struct result *const pf[SQ_000_PLACES], const struct result *qo,
	    const struct result *qf, const char *fifo_why);
/* Seed 003: one transport's (tp: the client/server ring) 1-client flood
 * cell f1, its paced cells with 1 and 4 clients p1, p4 (rate msg/s). */
void sq_003(struct report_why *w, const char *tp, const struct result *f1, const struct result *p1,
	    const struct result *p4, double rate);
/* Seed 001: the grid's n cells (r): lockstep is a cell whose two sides
 * kept one CPU busy (at least 90 % CPU) but ran at once for at most 10 %
 * of the window; the share both ran at once is at least cpu_pct_total -
 * 100 % (two sides of at most 100 % each). A cell under 90 % did not get
 * its CPUs (others took them): starved, not counted; most cells starved is
 * "not reproduced here". */
#define SQ_LOCKSTEP_PCT 10.0
#define SQ_STARVED_PCT 90.0
void sq_001(struct report_why *w, const struct result *r, size_t n);
/* Seed 002: pipe and unix-stream cells, [0] unpinned, [1] one CPU, [2] two
 * CPUs, under the policy the section reads (sched names it). */
void sq_002(struct report_why *w, const struct result *pipe[3], const struct result *sock[3],
	    const char *sched);

#endif
