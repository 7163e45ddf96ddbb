/* SPDX-License-Identifier: MIT */
/* The run and its machine as a result file records them (docs/output.md),
 * read back typed and checked: the file-level keys created_utc, cmdline,
 * ipclab_version and ipclab_git_rev, the "env" object (its scalars through
 * the writer's own key table, env_keys in envcmd.c; its caches, warnings
 * and canary) and "remote_env". A result file is anyone's: a string over
 * its bound or with a NUL inside, a number of the wrong type or out of
 * range reads as absent, never as a cut or wrapped value. Strings returned
 * are borrowed from the file's tree. */
#ifndef IPCLAB_REPORT_REC_ENV_H
#define IPCLAB_REPORT_REC_ENV_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "ipclab/result.h"
#include "rfile.h"

/* ---- the run ---- */

/* created_utc (when the file was written): NULL when absent, not a string
 * or over 64 bytes. */
const char *rfile_created(const struct rfile *rf);
/* cmdline (the command that wrote it): NULL when absent, not a string or
 * over 4096 bytes. */
const char *rfile_cmdline(const struct rfile *rf);
/* ipclab_version and ipclab_git_rev (the build that wrote it): NULL when
 * absent, not a string or over 64 bytes. */
const char *rfile_version(const struct rfile *rf);
const char *rfile_git_rev(const struct rfile *rf);

/* Whether the run's cells ran in interleaved rounds (--repeat: A B A B
 * ...): true when it has cells and each has results[].repeat.rounds, an
 * integer of at least 2; one state change of the machine then fell on
 * them all alike. */
bool rfile_interleaved(const struct rfile *rf);

/* ---- the machine ---- */

/* env, and remote_env (the server host of a run --peer), as objects of
 * keys as written, for showing and comparing every key, unknown ones too:
 * NULL when absent or not an object. */
const json_t *rfile_env_json(const struct rfile *rf);
const json_t *rfile_remote_env_json(const struct rfile *rf);

/* env.hostname: NULL when absent, not a string or longer than the
 * writer's struct env_info holds (63 bytes). */
const char *rfile_hostname(const struct rfile *rf);

/* env read back into the writer's own struct: every key of env_keys (a
 * string that does not fit its member reads as "", a number as unknown:
 * ENV_UNKNOWN, NAN, 0), caches (at most ENV_MAX_CACHES), warnings (at
 * most ENV_MAX_WARNINGS strings that fit, the others left out) and the
 * canary; not the floors (floors.on false). False, with *e so filled
 * from nothing, when the file has no env object. */
bool rfile_env(const struct rfile *rf, struct env_info *e);
bool rec_env(const json_t *env, struct env_info *e);

/* env.canary.start into c[0], .end into c[1] (cacheline_rtt_ns and
 * pipe_rtt_ns NAN, cpus -1 where absent or not numbers; .on when either
 * time is): nonzero when either is on. rec_canary: the same from a run's
 * whole tree (a stored run's header). */
int rfile_canary(const struct rfile *rf, struct canary c[2]);
int rec_canary(const json_t *root, struct canary c[2]);

/* The keys whose values differ between two env objects (a and b, checked
 * to be objects by the caller): those a reader looks for first (hostname,
 * kernel, cpu_model, ...) where either has them, then a's, then b's, each
 * once; the readings that change from run to run on one machine (load,
 * current clock frequency, clock read cost, warnings, canary, floors)
 * left out. key[i], va[i] and vb[i] borrowed from the trees, va or vb
 * NULL where absent; the count, at most max. */
size_t rec_env_diff(const json_t *a, const json_t *b, const char **key, const json_t **va,
		    const json_t **vb, size_t max);

#endif
