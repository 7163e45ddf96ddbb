// SPDX-License-Identifier: MIT
/* The run and its machine read back from a result file (rec_env.h): every
 * key name of the file-level fields, "env" and "remote_env" that a reader
 * needs is here, or in the writer's own table (env_keys, envcmd.c), so
 * that report, compare and history never look keys up themselves. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ipclab/util.h"
#include "env_json.h"
#include "rec_env.h"

#define RUN_STR_MAX 64		/* created_utc, ipclab_version, ipclab_git_rev */
#define CMDLINE_MAX 4096	/* run writes at most 1023 bytes */

/* v as a string of at most max bytes with no NUL inside, else NULL. */
static const char *str_ok(const json_t *v, size_t max)
{
	const char *s = json_string_value(v);
	size_t len = json_string_length(v);

	return s && len <= max && strlen(s) == len ? s : NULL;
}

/* v copied into buf[size] when it is a string that fits; else false. */
static bool str_copy(const json_t *v, char *buf, size_t size)
{
	const char *s = str_ok(v, size - 1);

	if (s)
		memcpy(buf, s, strlen(s) + 1);
	return s;
}

/* ---- the run ---- */

const char *rfile_created(const struct rfile *rf)
{
	return str_ok(json_object_get(rf->root, "created_utc"), RUN_STR_MAX);
}

const char *rfile_cmdline(const struct rfile *rf)
{
	return str_ok(json_object_get(rf->root, "cmdline"), CMDLINE_MAX);
}

const char *rfile_version(const struct rfile *rf)
{
	return str_ok(json_object_get(rf->root, "ipclab_version"), RUN_STR_MAX);
}

const char *rfile_git_rev(const struct rfile *rf)
{
	return str_ok(json_object_get(rf->root, "ipclab_git_rev"), RUN_STR_MAX);
}

bool rfile_interleaved(const struct rfile *rf)
{
	for (size_t i = 0; i < rf->n; i++) {
		const json_t *rep = json_object_get(rf->cells[i].obj, "repeat");
		const json_t *rounds = json_object_get(rep, "rounds");

		if (!json_is_integer(rounds) || json_integer_value(rounds) < 2)
			return false;
	}
	return rf->n > 0;
}

/* ---- the machine ---- */

static const json_t *object_at(const json_t *root, const char *key)
{
	const json_t *o = json_object_get(root, key);

	return json_is_object(o) ? o : NULL;
}

const json_t *rfile_env_json(const struct rfile *rf)
{
	return object_at(rf->root, "env");
}

const json_t *rfile_remote_env_json(const struct rfile *rf)
{
	return object_at(rf->root, "remote_env");
}

const char *rfile_hostname(const struct rfile *rf)
{
	return str_ok(json_object_get(rfile_env_json(rf), "hostname"),
		      sizeof(((struct env_info *)0)->hostname) - 1);
}

/* ---- the canary ---- */

/* A number (jansson holds finite ones only), else NAN. */
static double num_at(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) && isfinite(json_number_value(v)) ? json_number_value(v) : NAN;
}

/* A CPU number: 0..INT_MAX, else -1 (written as null). */
static int cpu_at(const json_t *arr, size_t i)
{
	const json_t *v = json_array_get(arr, i);

	return json_is_integer(v) && json_integer_value(v) >= 0 &&
			       json_integer_value(v) <= INT_MAX ? (int)json_integer_value(v) : -1;
}

/* {"cacheline_rtt_ns", "pipe_rtt_ns", "cpus": [a, b]}: on when either
 * round trip is there. */
static void canary_read(const json_t *o, struct canary *c)
{
	const json_t *cpus = json_object_get(o, "cpus");

	*c = (struct canary){ .cpus = { -1, -1 } };
	if (!json_is_object(o))
		return;
	c->cacheline_rtt_ns = num_at(o, "cacheline_rtt_ns");
	c->pipe_rtt_ns = num_at(o, "pipe_rtt_ns");
	for (int k = 0; k < 2; k++)
		c->cpus[k] = cpu_at(cpus, (size_t)k);
	c->on = isfinite(c->cacheline_rtt_ns) || isfinite(c->pipe_rtt_ns);
}

int canary_from_env(const json_t *env, struct canary c[2])
{
	const json_t *o = json_object_get(env, "canary");

	canary_read(json_object_get(o, "start"), &c[0]);
	canary_read(json_object_get(o, "end"), &c[1]);
	return c[0].on || c[1].on;
}

int rec_canary(const json_t *root, struct canary c[2])
{
	return canary_from_env(json_object_get(root, "env"), c);
}

int rfile_canary(const struct rfile *rf, struct canary c[2])
{
	return rec_canary(rf->root, c);
}

/* ---- env into struct env_info ---- */

static void *member(struct env_info *e, const struct env_key *k)
{
	return (char *)e + k->off;
}

/* An int64_t key: ENV_UNKNOWN (written as null) where v is not of its kind. */
static int64_t i64_read(const json_t *v, enum env_kind kind)
{
	if (kind == EK_BOOL)
		return json_is_boolean(v) ? json_is_true(v) : ENV_UNKNOWN;
	if (kind == EK_LIMIT && json_is_string(v) && !strcmp(json_string_value(v), "unlimited"))
		return ENV_UNLIMITED;
	return json_is_integer(v) ? (int64_t)json_integer_value(v) : ENV_UNKNOWN;
}

/* One key of env_keys, by its kind; what does not read as that kind is
 * unknown, as env_collect leaves what it cannot read. */
static void key_read(const json_t *v, const struct env_key *k, struct env_info *e)
{
	json_int_t i = json_integer_value(v);	/* 0 when not an integer */

	switch (k->kind) {
	case EK_STR:
		if (!str_copy(v, member(e, k), k->size))
			*(char *)member(e, k) = '\0';
		break;
	case EK_UINT:
		*(unsigned *)member(e, k) = i >= 0 && i <= UINT_MAX ? (unsigned)i : 0;
		break;
	case EK_U64:
		*(uint64_t *)member(e, k) = i >= 0 ? (uint64_t)i : 0;
		break;
	case EK_DBL:
		*(double *)member(e, k) = json_is_number(v) ? json_number_value(v) : NAN;
		break;
	case EK_I64:
	case EK_BOOL:
	case EK_LIMIT:
		*(int64_t *)member(e, k) = i64_read(v, k->kind);
		break;
	}
}

/* caches[]: {"level", "type", "size_bytes" (null: unknown), "line_bytes",
 * "shared_cpus"}; one that is not an object, or whose strings do not fit,
 * is left out. */
static void caches_read(const json_t *arr, struct env_info *e)
{
	const json_t *o;
	size_t i;

	json_array_foreach(arr, i, o) {
		struct env_cache *c = &e->caches[e->ncaches];
		json_int_t level = json_integer_value(json_object_get(o, "level"));
		json_int_t line = json_integer_value(json_object_get(o, "line_bytes"));
		const json_t *size = json_object_get(o, "size_bytes");

		if (e->ncaches == ENV_MAX_CACHES)
			break;
		if (!json_is_object(o) || !str_copy(json_object_get(o, "type"), c->type, sizeof(c->type)) ||
		    !str_copy(json_object_get(o, "shared_cpus"), c->shared_cpus, sizeof(c->shared_cpus))) {
			memset(c, 0, sizeof(*c));
			continue;
		}
		c->level = level >= 0 && level <= UINT_MAX ? (unsigned)level : 0;
		c->line_bytes = line > 0 && line <= UINT_MAX ? (unsigned)line : 0;
		c->size_bytes = json_integer_value(size) >= 0 && json_is_integer(size) ?
					(int64_t)json_integer_value(size) : -1;
		e->ncaches++;
	}
}

static void warnings_read(const json_t *arr, struct env_info *e)
{
	const json_t *w;
	size_t i;

	json_array_foreach(arr, i, w)
		if (e->nwarnings < ENV_MAX_WARNINGS &&
		    str_copy(w, e->warnings[e->nwarnings], sizeof(e->warnings[0])))
			e->nwarnings++;
}

bool rec_env(const json_t *env, struct env_info *e)
{
	memset(e, 0, sizeof(*e));
	for (size_t i = 0; i < env_nkeys; i++)
		key_read(json_object_get(env, env_keys[i].key), &env_keys[i], e);
	caches_read(json_object_get(env, "caches"), e);
	warnings_read(json_object_get(env, "warnings"), e);
	canary_from_env(env, e->canary);
	return json_is_object(env);
}

bool rfile_env(const struct rfile *rf, struct env_info *e)
{
	return rec_env(rfile_env_json(rf), e);
}

/* ---- what differs between two machines ---- */

/* Readings that change from run to run on one machine: not a difference
 * of machines. */
static const char *const env_volatile[] = { "loadavg_1min", "cpu_mhz", "clock_cost_ns",
					    "warnings", "canary", "floors", NULL };
/* What a reader looks for first. */
static const char *const env_first[] = { "hostname", "kernel", "cpu_model", "cpus_online",
					 "clocksource", "governor", "virtualization", NULL };

static bool in_list(const char *const *l, const char *k)
{
	for (; *l; l++)
		if (!strcmp(*l, k))
			return true;
	return false;
}

struct env_diff {
	const json_t *a, *b;
	const char **key;
	const json_t **va, **vb;
	size_t n, max;
};

static void add_key(struct env_diff *d, const char *k)
{
	const json_t *va = json_object_get(d->a, k), *vb = json_object_get(d->b, k);

	if (d->n >= d->max || in_list(env_volatile, k) || json_equal(va, vb))
		return;
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->key[i], k))
			return;
	d->key[d->n] = k;
	d->va[d->n] = va;
	d->vb[d->n] = vb;
	d->n++;
}

size_t rec_env_diff(const json_t *a, const json_t *b, const char **key, const json_t **va,
		    const json_t **vb, size_t max)
{
	struct env_diff d = { a, b, key, va, vb, 0, max };
	const char *k;
	json_t *v;

	for (unsigned i = 0; env_first[i]; i++)
		if (json_object_get(a, env_first[i]) || json_object_get(b, env_first[i]))
			add_key(&d, env_first[i]);
	json_object_foreach((json_t *)a, k, v)
		add_key(&d, k);
	json_object_foreach((json_t *)b, k, v)
		add_key(&d, k);
	return d.n;
}
