/* SPDX-License-Identifier: MIT */
/* Private to --profile (src/trace/profile*.c): the sampler's state
 * (profile.c), the symbol tables (profile_sym.c) and the ranking and
 * folded stacks (profile_rank.c). */
#ifndef IPCLAB_TRACE_PROFILE_INT_H
#define IPCLAB_TRACE_PROFILE_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipclab/outdir.h"
#include "ipclab/profile.h"

/* A side's samples, each as: time, misc, ip, nr, ips[nr] (the kernel's
 * call chain, leaf first, with its context markers). */
struct prof_store {
	uint64_t *w;
	size_t len, cap;
};

#define PROFILE_MAX_CPUS 1024

struct prof_cpu {
	int fd;
	void *ring;
	size_t ring_len;
};

struct prof_side {
	int pid, tid;
	char *maps;			/* /proc/PID/maps, read at add */
	size_t maps_len;
	uint64_t win0, win1;
	struct prof_store store;
};

struct profile {
	unsigned nsides, nadded;
	char dir[256];
	struct outdir od;		/* dir, open (fd -1 without one) */
	int stop_fd;
	pthread_t drain;
	bool drain_on;
	uint64_t lost;
	size_t words;			/* in all stores */
	struct prof_side sides[PROFILE_MAX_SIDES];
	unsigned ncpus;
	struct prof_cpu cpus[PROFILE_MAX_CPUS];
};

void profile_stop(struct profile *p);

/* Kernel symbols from /proc/kallsyms. */
struct ksyms;
/* NULL with why filled when the addresses are hidden or unreadable. */
struct ksyms *ksyms_load(char *why, size_t len);
const char *ksyms_find(const struct ksyms *k, uint64_t addr, const char **object);
void ksyms_free(struct ksyms *k);

/* One process's user symbols, from a snapshot of its maps. */
struct usyms;
struct usyms *usyms_open(int pid, const char *maps, size_t maps_len);
/* The function at addr (NULL: none known) and its object (NULL: addr is in
 * no mapping of the process). */
const char *usyms_find(struct usyms *u, uint64_t addr, const char **object);
void usyms_close(struct usyms *u);

#endif
