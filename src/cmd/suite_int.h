/* SPDX-License-Identifier: MIT */
/* Shared by the seed sections (suite_seeds.c, suite_cycle.c): building
 * their specs and finding their results again (suite_common.c). */
#ifndef IPCLAB_CMD_SUITE_INT_H
#define IPCLAB_CMD_SUITE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "suite.h"
#include "ipclab/trace.h"

extern const struct sched_spec seed_sched_other, seed_sched_fifo90;

enum want_ep { EP_ANY, EP_PROCESS, EP_THREAD };

/* Which result a printer wants: unset fields match anything. */
struct want {
	const char *tp, *pin, *sched;
	enum want_ep ep;
	unsigned clients;
	bool by_rate;		/* match rate (0 = flood) */
	double rate;
};

enum prof_group { PG_COPY, PG_WAIT, PG_SYSCALL, PG_WAKE, PG_OTHER, PG_N };

/* Fewer samples than this are noise (a sample a ms of CPU time). */
#define PROF_MIN_SAMPLES 50

void spec_pattern(struct plan_spec *s, const char *name);
void spec_sizes(struct plan_spec *s, uint64_t lo, uint64_t hi);
void spec_thinks(struct plan_spec *s, const uint64_t *t, unsigned n);
int spec_pins(struct plan_spec *s, const char *const *names, char *err, size_t errlen);
bool seed_wanted(const struct result *x, const struct want *w);
const struct result *seed_find(const struct result *r, size_t n, const struct want *w);
bool seed_ok(const struct result *r);
const char *seed_val(char *buf, size_t len, const struct result *r, double v, const char *(*fmt)(char *, size_t, double));
double seed_side_secs(const struct result *r, enum tp_role role);
bool seed_traced(const struct result *r);
bool seed_any_traced(const struct result *r, size_t n);
const struct trace_side *seed_tside(const struct result *r, bool server);
double seed_pct_of(uint64_t part, uint64_t whole);
void seed_trace_cost(const struct result *r, size_t n);
enum prof_group seed_prof_group(const char *sym);
uint64_t seed_prof_groups(const struct result *r, bool server, double pct[PG_N]);

/* --explain (suite_explain.c): each seed's cell that its reading explains
 * (traced, or NULL); seed_explain in suite.h. */
const struct result *pick_000(const struct suite_opts *o, const struct result *r, size_t n);
const struct result *pick_001(const struct suite_opts *o, const struct result *r, size_t n);
const struct result *pick_002(const struct suite_opts *o, const struct result *r, size_t n);
const struct result *pick_003(const struct suite_opts *o, const struct result *r, size_t n);
const struct result *pick_004(const struct suite_opts *o, const struct result *r, size_t n);

/* seed-000-cycle (suite_cycle.c) */
unsigned plan_000_cycle(const struct suite_opts *o, struct plan_spec *s, char *err, size_t errlen);
void print_000_cycle(const struct suite_opts *o, const struct result *r, size_t n);

#endif
