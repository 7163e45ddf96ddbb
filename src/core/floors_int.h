/* SPDX-License-Identifier: MIT */
/* Private to the floors (floors.c, floors_wake.c). */
#ifndef IPCLAB_CORE_FLOORS_INT_H
#define IPCLAB_CORE_FLOORS_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "ipclab/floors.h"

/* Pin the calling thread to cpu: 0 or -errno. */
int floors_pin_self(int cpu);
/* Median and 10th/90th percentiles of v (sorted in place). */
void floors_stat(uint64_t *v, unsigned n, struct floor_stat *s);
/* Join both threads by deadline_ns from now, else set *stop, then cancel. */
int floors_join2(pthread_t t[2], _Atomic int *stop, uint64_t deadline_ns);
/* A futex wake-to-run: a thread on cpus[1] woken from cpus[0], its CPU idle
 * or (busy) kept busy by a spinning thread of the same policy. */
void floors_wake(const int cpus[2], bool busy, struct floor_stat *s);
/* A minimal system call (getppid) on cpu. */
void floors_syscall(int cpu, struct floor_stat *s);

#endif
