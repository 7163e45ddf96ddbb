/* SPDX-License-Identifier: MIT */
/* --profile: where each endpoint's CPU time goes, from sampled call stacks
 * (src/trace/profile*.c). Like --trace, the runner is the only caller: it
 * opens a profile before the sides start, adds each side's thread once it
 * is up (a software clock event per thread, user and kernel stacks), and
 * after the cell hands over each side's measured window and collects a
 * plain record: the top symbols per side, and folded stacks on disk when
 * asked. Patterns and transports know nothing of it. */
#ifndef IPCLAB_PROFILE_H
#define IPCLAB_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROFILE_MAX_SIDES 65	/* = MAX_SIDES */
#define PROFILE_TOP 15
#define PROFILE_HZ 999		/* samples per second of a side's CPU time */

struct profile;

struct profile_entry {
	char symbol[64];		/* "think_loop", "copy_user_generic"; "[unknown]" */
	char object[32];		/* "ipclab", "libc.so.6", "[kernel.kallsyms]" */
	uint64_t samples;
	double pct;			/* of the side's samples */
	bool skid;			/* an interrupt-enable point (profile_skid_symbol) */
};

struct profile_side {
	bool server;
	unsigned id;
	uint64_t samples;		/* inside the side's window */
	uint64_t kernel_samples;	/* of which the sampled instruction was the kernel's */
	unsigned ntop;
	struct profile_entry top[PROFILE_TOP];	/* by samples, the sampled (leaf) function */
	uint64_t skid_samples;		/* of samples, at interrupt-enable points */
};

/* A timer-sampled profile (a clock event, all a guest without a hardware
 * PMU has) takes a tick that fell while interrupts were off when they come
 * back on: its samples pile up where the kernel re-enables them
 * (_raw_spin_unlock_irqrestore, finish_task_switch, __do_softirq,
 * native_safe_halt, ...), which are then skid, not hot functions. True
 * for such a symbol. */
bool profile_skid_symbol(const char *symbol);
/* A side whose samples pile up there (PROFILE_SKID_PCT or more): the table
 * says so. */
#define PROFILE_SKID_PCT 20.0

struct profile_result {
	bool on;
	unsigned nsides;
	unsigned hz;
	uint64_t lost_samples;		/* the kernel's PERF_RECORD_LOST, and samples over the store's limit */
	bool kernel_symbols;		/* kernel addresses named from /proc/kallsyms */
	char kernel_symbols_why[160];	/* when not: why, and the fix */
	bool folded;			/* folded stacks written */
	char folded_dir[256];
	char folded_name[192];		/* their names' cell part: DIR/<name>-<side>.folded */
	double perturbation;		/* profiled / unprofiled headline, as the trace's */
	const char *perturbation_of;	/* "lat_p50_ns" or "msgs_per_s" */
	double perturbation_lo, perturbation_hi;
	unsigned perturbation_pairs;
	bool perturbation_separable;
	struct profile_side sides[PROFILE_MAX_SIDES];
};

/* Can --profile work here (built with elfutils, perf_event_open, the
 * privilege to sample kernel stacks)? 0, or -errno with one line naming
 * what is missing and the fix. */
int profile_check(char *err, size_t len);

/* nsides endpoints; folded_dir: where to write folded stacks (NULL: none).
 * 0 or -errno (err filled). */
int profile_open(unsigned nsides, const char *folded_dir, struct profile **out,
		 char *err, size_t len);
/* The runner, once side i's thread exists (pid: its process). Sampling
 * starts here; only samples inside the side's window are kept. */
int profile_add_tid(struct profile *p, unsigned side, int pid, int tid, char *err, size_t len);
/* After the sides are gone: side i's window, CLOCK_MONOTONIC ns. */
void profile_window(struct profile *p, unsigned side, uint64_t start_ns, uint64_t end_ns);
/* Symbolise, rank, and write DIR/<name>-<role>.folded when asked; 0, or
 * -errno with err filled (the record is still filled). */
int profile_collect(struct profile *p, const char *name, struct profile_result *out,
		    char *err, size_t len);
void profile_close(struct profile *p);

/* The runner's side (src/trace/profile_cell.c): the file name of a cell's
 * folded stacks, and the record from a collected result. */
struct cell;
struct result;
void profile_cell_name(const struct cell *c, char *buf, size_t len);
void profile_fill(struct profile *p, struct result *res);

#endif
