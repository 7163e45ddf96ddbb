/* SPDX-License-Identifier: MIT */
/* Private to the environment probe (env.c, env_kernel.c). */
#ifndef IPCLAB_CORE_ENV_PROBE_H
#define IPCLAB_CORE_ENV_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "ipclab/result.h"

/* Copy with runs of blanks squeezed and the ends trimmed. */
void env_squeeze(char *dst, size_t len, const char *src);
/* A small sysfs/procfs file, squeezed, or fallback when unreadable. */
void env_read_or(const char *path, char *buf, size_t len, const char *fallback);
/* Append a word, space-separated, cut to fit. */
void env_add_word(char *buf, size_t len, const char *w);
/* A file holding one integer, or ENV_UNKNOWN. */
int64_t env_read_i64(const char *path);
/* CPUs in a kernel CPU list ("0-3,8"), or 0 when it does not parse. */
int64_t env_cpu_list_count(const char *list);

void env_kconfig(struct env_info *env);	/* preempt, preempt_source, hz, nohz */
void env_caches(struct env_info *env);
void env_limits(struct env_info *env);
void env_warnings(struct env_info *env);

#endif
