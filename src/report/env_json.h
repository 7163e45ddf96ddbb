/* SPDX-License-Identifier: MIT */
/* The "env" object of a result file, also what `ipclab env -f json` prints:
 * one builder, so both carry the same keys (src/report/envcmd.c). */
#ifndef IPCLAB_REPORT_ENV_JSON_H
#define IPCLAB_REPORT_ENV_JSON_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "ipclab/result.h"

/* The scalar keys of the env object, in its order: one table writes them
 * (envcmd.c: JSON and text) and reads them back (rec_env.c). */
enum env_kind {
	EK_STR,		/* char[] */
	EK_UINT,	/* unsigned */
	EK_U64,		/* uint64_t */
	EK_I64,		/* int64_t, ENV_UNKNOWN = null */
	EK_BOOL,	/* int64_t 1/0, ENV_UNKNOWN = null */
	EK_LIMIT,	/* int64_t, ENV_UNLIMITED = "unlimited" */
	EK_DBL,		/* double, NAN = null */
};

struct env_key {
	const char *key;	/* JSON key, unit in the name */
	const char *label;	/* text: where the value comes from */
	const char *group;	/* text: heading it is printed under */
	enum env_kind kind;
	size_t off, size;	/* the member of struct env_info */
};
extern const struct env_key env_keys[];
extern const size_t env_nkeys;

/* A new object, or NULL when out of memory. */
json_t *env_json_object(const struct env_info *e);
/* The same keys as text, one a line, with the warnings: 0 or -1. */
int env_text(FILE *f, const struct env_info *e);

/* The canary ({"start", "end"}) and the floors of a record's env
 * (floors_out.c), as JSON (NULL: out of memory) and as text. A canary
 * argument points at two: [0] the start, [1] the end (a pointer, not
 * an array parameter: GCC 12 under -fsanitize=thread misreads the
 * bound of a struct member passed as one). */
json_t *canary_json(const struct canary *c);
json_t *floors_json(const struct floors *f);
void canary_text(FILE *f, const struct canary *c);
int floors_text(FILE *f, const struct floors *fl);

/* A result file's canary, from its "env": nonzero when it has one
 * (rec_env.c, where result files are read). */
int canary_from_env(const json_t *env, struct canary c[2]);
/* How far a run's start and end canaries are apart (canary_ratio), 0
 * without both; and a run's canary against another's (their start, else
 * their end). */
double canary_drift(const struct canary *c, const char **what);
double canary_between(const struct canary *a, const struct canary *b, const char **what);

/* Each round trip measured across two CPUs put against the report's
 * floors (run --floors), one line each; nothing without floors. */
void floors_against(FILE *f, const struct report *rep);

#endif
