// SPDX-License-Identifier: MIT
/* `ipclab history -f csv`: the stored runs as change-point tools (Apache
 * Otava, Hunter) read them: a header row, then a row per run and cell, in
 * time order; the columns: time (the run's start, ISO 8601 UTC), one per
 * metric (-m's, else every metric -m takes), then the attributes: run,
 * machine, kernel, the cell's configuration, the run's other labels
 * (label.KEY). RFC 4180 quoting; a text that begins with = + - @ (or a tab
 * or carriage return) gets a ' in front, so that a spreadsheet shows it and
 * does not run it as a formula. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "history.h"

static const char *const all_metrics[] = { "msgs_per_s", "bytes_per_s", "lat_p50_ns",
					   "lat_p99_ns", "lat_max_ns", "cpu_ns_per_msg",
					   "cpu_pct_total", NULL };

/* Keys of a result that are not its configuration, or are columns of
 * their own. */
static bool not_config(const char *k)
{
	static const char *const skip[] = { "machine", "kernel", "run", "time", "status",
					    "error", NULL };

	for (const char *const *s = skip; *s; s++)
		if (!strcmp(k, *s))
			return true;
	return false;
}

static void text(FILE *f, const char *s, bool first)
{
	bool formula = strchr("=+-@\t\r", s[0]) && s[0];
	bool quote = formula || strpbrk(s, ",\"\r\n") || (*s && (s[0] == ' ' || s[strlen(s) - 1] == ' '));

	if (!first)
		fputc(',', f);
	if (quote)
		fputc('"', f);
	if (formula)
		fputc('\'', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	if (quote)
		fputc('"', f);
}

/* A JSON scalar as a cell: numbers as they read back, text quoted. */
static void value(FILE *f, const json_t *v)
{
	fputc(',', f);
	if (json_is_integer(v))
		fprintf(f, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v) && isfinite(json_real_value(v)))
		fprintf(f, "%.15g", json_real_value(v));
	else if (json_is_boolean(v))
		fputs(json_is_true(v) ? "true" : "false", f);
	else if (json_is_string(v))
		text(f, json_string_value(v), true);
}

/* A run's label as a cell: "" when it has none. */
static void label_value(FILE *f, const json_t *labels, const char *key)
{
	const char *l = rec_label(labels, key);

	text(f, l ? l : "", false);
}

/* The union of the keys, in order of first appearance (scalars only). */
static int add_key(json_t *keys, const char *k)
{
	for (size_t i = 0; i < json_array_size(keys); i++)
		if (!strcmp(json_string_value(json_array_get(keys, i)), k))
			return 0;
	return json_array_append_new(keys, json_string(k));
}

struct row {
	const struct hseries *s;
	const struct hpoint *p;
};

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int c = strcmp(x->p->at, y->p->at);

	if (c)
		return c;
	if (x->p->run != y->p->run)
		return x->p->run < y->p->run ? -1 : 1;
	return x->s < y->s ? -1 : x->s > y->s;
}

static void iso_time(char *buf, size_t len, const char *at)
{
	/* stored as 2026-12-06T16:33:26Z or with a space: always the T and Z */
	snprintf(buf, len, "%s", at);
	if (strlen(buf) > 10 && buf[10] == ' ')
		buf[10] = 'T';
	if (buf[0] && buf[strlen(buf) - 1] != 'Z' && !strchr(buf + 10, '+') && strlen(buf) + 1 < len)
		strcat(buf, "Z");
}

int history_csv(FILE *f, const struct history *h)
{
	const char *one[] = { h->metric, NULL };
	const char *const *metrics = h->metric ? one : all_metrics;
	json_t *cfg = json_array(), *lab = json_array();
	struct row *rows;
	size_t n = 0, k = 0;
	char at[40];

	for (size_t i = 0; i < h->n; i++)
		n += h->s[i].n;
	rows = calloc(n + 1, sizeof(*rows));
	if (!rows || !cfg || !lab) {
		free(rows);
		json_decref(cfg);
		json_decref(lab);
		return -1;
	}
	for (size_t i = 0; i < h->n; i++) {
		const char *key;
		json_t *v;

		json_object_foreach(h->s[i].cell, key, v)
			if ((json_is_string(v) || json_is_number(v) || json_is_boolean(v)) &&
			    !not_config(key))
				add_key(cfg, key);
		for (size_t j = 0; j < h->s[i].n; j++) {
			rows[k++] = (struct row){ &h->s[i], &h->s[i].pts[j] };
			json_object_foreach(h->s[i].pts[j].labels, key, v)
				if (json_is_string(v) && strcmp(key, "machine") && strcmp(key, "kernel"))
					add_key(lab, key);
		}
	}
	qsort(rows, n, sizeof(*rows), cmp_row);
	text(f, "time", true);
	for (const char *const *m = metrics; *m; m++)
		text(f, *m, false);
	text(f, "run", false);
	text(f, "machine", false);
	text(f, "kernel", false);
	for (size_t i = 0; i < json_array_size(cfg); i++)
		text(f, json_string_value(json_array_get(cfg, i)), false);
	for (size_t i = 0; i < json_array_size(lab); i++) {
		char name[160];

		snprintf(name, sizeof(name), "label.%s", json_string_value(json_array_get(lab, i)));
		text(f, name, false);
	}
	fputs("\r\n", f);
	for (size_t r = 0; r < n; r++) {
		const struct hpoint *p = rows[r].p;
		const char *kern = rec_label(p->labels, "kernel");

		iso_time(at, sizeof(at), p->at);
		text(f, at, true);
		for (const char *const *m = metrics; *m; m++)
			value(f, rec_field(p->metrics, *m, false));
		fprintf(f, ",%lld", (long long)p->run);
		text(f, rows[r].s->machine, false);
		text(f, kern ? kern : "", false);
		for (size_t i = 0; i < json_array_size(cfg); i++)
			value(f, rec_field(rows[r].s->cell, json_string_value(json_array_get(cfg, i)),
					   true));
		for (size_t i = 0; i < json_array_size(lab); i++)
			label_value(f, p->labels, json_string_value(json_array_get(lab, i)));
		fputs("\r\n", f);
	}
	free(rows);
	json_decref(cfg);
	json_decref(lab);
	return ferror(f) ? -1 : 0;
}
