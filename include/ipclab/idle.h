/* SPDX-License-Identifier: MIT */
/* Idle-state knobs: what a halted CPU's exit latency does to every wakeup.
 * --pm-qos holds /dev/cpu_dma_latency at a value for the run (as cyclictest
 * --latency does); --keep-awake runs a SCHED_IDLE busy loop on each CPU the
 * endpoints use, so the CPU never halts but yields at once to real work. */
#ifndef IPCLAB_IDLE_H
#define IPCLAB_IDLE_H

#include <stdint.h>

/* Open /dev/cpu_dma_latency and write us; returns the fd (keep it open for
 * the run) or -errno with a message. */
int pm_qos_hold(int32_t us, char *err, size_t errlen);

/* Start one SCHED_IDLE spinner per CPU in cpus (n of them), registered for
 * cleanup; returns 0 or -errno with a message. */
int keep_awake_start(const int *cpus, unsigned n, char *err, size_t errlen);
void keep_awake_stop(void);
/* The running spinners' pids and CPUs (up to max); their count. Their time
 * on an endpoint CPU is ipclab's, not another task's (interference.h). */
unsigned keep_awake_tasks(int *pids, int *cpus, unsigned max);

#endif
