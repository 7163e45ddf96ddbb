// SPDX-License-Identifier: MIT
/* The machines behind a comparison (compare.h): what differs between the
 * "env" of the two files (kernel, CPU model, CPUs, clocksource, governor,
 * virtualisation, ...), between their "remote_env" (the server host of a
 * run --peer), and inside a --peer file between this host and the server.
 * A ratio across two kernels or two CPUs says something else than one
 * across two builds on one machine: the difference is printed beside the
 * ratios. Readings that change from run to run on one machine (load,
 * current clock frequency, clock read cost, the warnings they cause) are
 * not a difference of machines and are left out (which keys: rec_env.c).
 * Keys and values come from the files: text and markdown show them
 * through the safe printer. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/safe_print.h"
#include "ipclab/util.h"
#include "compare.h"
#include "rec_env.h"

void cmp_env_diff(const json_t *a, const json_t *b, struct cmp_env_diff *d)
{
	d->present = json_is_object(a) && json_is_object(b);
	d->n = d->present ? rec_env_diff(a, b, d->key, d->a, d->b, CMP_ENV_MAX) : 0;
}

void cmp_env_all(const struct rfile *before, const struct rfile *after, struct cmp_envs *e)
{
	const json_t *eb = rfile_env_json(before), *ea = rfile_env_json(after),
		     *rb = rfile_remote_env_json(before), *ra = rfile_remote_env_json(after);

	cmp_env_diff(eb, ea, &e->files);
	cmp_env_diff(rb, ra, &e->servers);
	cmp_env_diff(eb, rb, &e->peer_before);
	cmp_env_diff(ea, ra, &e->peer_after);
	e->server_only = !rb != !ra;
}

/* ---- printing -------------------------------------------------------------- */

/* A value as a short text, shown safely: scalars as written, a list or
 * object compact and cut (at a character), an absent key "-". */
static void val_text(const json_t *v, char *buf, size_t len)
{
	char raw[512];
	char *s;

	if (!v) {
		snprintf(buf, len, "-");
		return;
	}
	if (!json_is_object(v) && !json_is_array(v)) {
		rf_scalar_text(v, raw, sizeof(raw));
		raw[utf8_cut(raw, 95)] = '\0';
	} else {
		s = json_dumps(v, JSON_COMPACT);
		snprintf(raw, sizeof(raw), "%.*s%s", s ? (int)utf8_cut(s, 60) : 1, s ? s : "?",
			 s && strlen(s) > 60 ? "..." : "");
		free(s);
	}
	safe_str(buf, len, raw);
}

struct env_section {
	const struct cmp_env_diff *d;
	const char *title;		/* text */
	const char *json_key;
	const char *a, *b;		/* column names */
};

static void sections(const struct cmp_envs *e, struct env_section s[4])
{
	s[0] = (struct env_section){ &e->files, "environment differs (before -> after)",
				     "before_after", "before", "after" };
	s[1] = (struct env_section){ &e->servers, "server host of --peer differs (before -> after)",
				     "remote_before_after", "before", "after" };
	s[2] = (struct env_section){ &e->peer_before, "before, a --peer run: this host -> server host",
				     "before_peer", "client", "server" };
	s[3] = (struct env_section){ &e->peer_after, "after, a --peer run: this host -> server host",
				     "after_peer", "client", "server" };
}

void cmp_env_text(FILE *f, const struct cmp_envs *e)
{
	struct env_section s[4];
	char a[512], b[512], key[256];

	sections(e, s);
	if (!e->files.n && e->files.present)
		fprintf(f, "environment: no difference between the two files' hosts\n");
	for (unsigned i = 0; i < 4; i++) {
		if (!s[i].d->n)
			continue;
		fprintf(f, "%s:\n", s[i].title);
		for (size_t k = 0; k < s[i].d->n; k++) {
			val_text(s[i].d->a[k], a, sizeof(a));
			val_text(s[i].d->b[k], b, sizeof(b));
			fprintf(f, "  %-16s %s  ->  %s\n", safe_str(key, sizeof(key), s[i].d->key[k]),
				a, b);
		}
	}
	if (e->server_only)
		fprintf(f, "only one file is of a --peer run (remote_env): its server host is not compared\n");
}

static void md_text(FILE *f, const char *text)
{
	char shown[1024];

	for (const char *s = safe_str(shown, sizeof(shown), text); *s; s++) {
		if (strchr("|`*_[]<>\\", *s))
			fputc('\\', f);
		fputc(*s == '\n' ? ' ' : *s, f);
	}
}

/* A list, as the cells found in one file only: the output stays one table. */
void cmp_env_markdown(FILE *f, const struct cmp_envs *e)
{
	struct env_section s[4];
	char a[512], b[512], key[256];

	sections(e, s);
	for (unsigned i = 0; i < 4; i++) {
		if (!s[i].d->n)
			continue;
		fprintf(f, "\n**%c%s:**\n\n", s[i].title[0] - 'a' + 'A', s[i].title + 1);
		for (size_t k = 0; k < s[i].d->n; k++) {
			val_text(s[i].d->a[k], a, sizeof(a));
			val_text(s[i].d->b[k], b, sizeof(b));
			fprintf(f, "- %s: ", safe_str(key, sizeof(key), s[i].d->key[k]));
			md_text(f, a);
			fputs(" -> ", f);
			md_text(f, b);
			fputc('\n', f);
		}
	}
	if (!e->files.n && e->files.present)
		fprintf(f, "\nEnvironment: no difference between the two files' hosts.\n");
	if (e->server_only)
		fprintf(f, "\nOnly one file is of a --peer run (remote_env): its server host is not compared.\n");
}

static json_t *diff_json(const struct env_section *s)
{
	json_t *arr = json_array();

	for (size_t k = 0; arr && k < s->d->n; k++)
		json_array_append_new(arr, json_pack("{s:s, s:O?, s:O?}", "key", s->d->key[k],
						     s->a, s->d->a[k], s->b, s->d->b[k]));
	return arr;
}

json_t *cmp_env_json(const struct cmp_envs *e)
{
	struct env_section s[4];
	json_t *o = json_object();

	sections(e, s);
	for (unsigned i = 0; o && i < 4; i++)
		if (s[i].d->present)
			json_object_set_new(o, s[i].json_key, diff_json(&s[i]));
	return o;
}
