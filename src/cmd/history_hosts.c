// SPDX-License-Identifier: MIT
/* `ipclab history --by machine`: the same cell side by side on every
 * machine. The series of one cell on each machine (history.c keeps them
 * apart, so that each machine's change points and state marks are its
 * own) become one series of that cell with a point per machine, machines
 * by name: the median of the machine's runs, the interval (one run: its own
 * 95 % interval of --repeat; several runs: the range of their values), and
 * the ratio to the first machine. The figure and the page draw these
 * series as they draw any other (history_svg.c). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "history.h"

/* The cell's identity: the series' key less its machine. */
static const char *cell_key(const struct hseries *s)
{
	const char *k = strchr(s->key, '\x1f');

	return k ? k + 1 : s->key;
}

static int cmp_machine(const void *a, const void *b)
{
	const struct hseries *x = *(const struct hseries *const *)a, *y = *(const struct hseries *const *)b;

	return strverscmp(x->machine, y->machine);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One machine's point of a cell, from that machine's series. */
static int host_point(const struct hseries *s, struct hpoint *p)
{
	double *v = malloc((s->n + 1) * sizeof(*v));
	const struct hpoint *last = &s->pts[0];
	unsigned other = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++) {
		v[i] = s->pts[i].value;
		other += s->pts[i].state_why[0] != '\0';
		if (strcmp(s->pts[i].at, last->at) > 0 || (!strcmp(s->pts[i].at, last->at) &&
							    s->pts[i].run > last->run))
			last = &s->pts[i];
	}
	qsort(v, s->n, sizeof(*v), cmp_dbl);
	*p = (struct hpoint){ .run = last->run, .runs = (unsigned)s->n,
			      .value = s->n % 2 ? v[s->n / 2] : (v[s->n / 2 - 1] + v[s->n / 2]) / 2,
			      .lo = s->n == 1 ? last->lo : v[0], .hi = s->n == 1 ? last->hi : v[s->n - 1],
			      .labels = json_pack("{s:s}", "machine", s->machine) };
	free(v);
	snprintf(p->at, sizeof(p->at), "%s", last->at);
	if (p->labels && rec_label(last->labels, "kernel"))
		json_object_set_new(p->labels, "kernel", json_string(rec_label(last->labels, "kernel")));
	if (other)
		snprintf(p->state_why, sizeof(p->state_why), "%u of %zu runs in another state", other,
			 s->n);
	return p->labels ? 0 : -ENOMEM;
}

static void series_free(struct hseries *s)
{
	for (size_t k = 0; k < s->n; k++) {
		json_decref(s->pts[k].labels);
		json_decref(s->pts[k].metrics);
	}
	free(s->pts);
	json_decref(s->cell);
}

/* One cell: its series on each machine (by name) made one. */
static int host_series(struct hseries **mine, size_t n, struct hseries *out)
{
	qsort(mine, n, sizeof(*mine), cmp_machine);
	memset(out, 0, sizeof(*out));
	snprintf(out->key, sizeof(out->key), "%s", cell_key(mine[0]));
	out->cell = json_incref(mine[0]->cell);
	out->metric = mine[0]->metric;
	out->pts = calloc(n, sizeof(*out->pts));
	if (!out->pts)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (host_point(mine[i], &out->pts[i]))
			return -ENOMEM;
		out->n++;
		out->pts[i].ratio = out->pts[0].value ? out->pts[i].value / out->pts[0].value : NAN;
	}
	out->cap = n;
	return 0;
}

int history_hosts(struct history *h)
{
	struct hseries *cells = calloc(h->n + 1, sizeof(*cells)), **mine = calloc(h->n + 1, sizeof(*mine));
	bool *done = calloc(h->n + 1, sizeof(*done));
	size_t nc = 0;
	int ret = cells && mine && done ? 0 : -ENOMEM;

	for (size_t i = 0; !ret && i < h->n; i++) {
		size_t n = 0;

		if (done[i] || !h->s[i].n)
			continue;
		for (size_t j = i; j < h->n; j++)
			if (!done[j] && h->s[j].n && !strcmp(cell_key(&h->s[i]), cell_key(&h->s[j])) &&
			    !strcmp(h->s[i].metric, h->s[j].metric)) {
				done[j] = true;
				mine[n++] = &h->s[j];
			}
		ret = host_series(mine, n, &cells[nc++]);
	}
	for (size_t i = 0; i < h->n; i++)
		series_free(&h->s[i]);
	free(h->s);
	free(mine);
	free(done);
	h->s = cells;
	h->n = h->cap = cells ? nc : 0;
	h->machines = false;
	h->hosts = true;
	return ret;
}

/* Per cell, a row per machine: its median, interval, runs and ratio. */
int history_hosts_table(FILE *f, const struct history *h)
{
	char a[32], b[32], c[72], lab[320], m[64], k[64], name[160];

	for (size_t i = 0; i < h->n; i++) {
		const struct hseries *s = &h->s[i];

		fprintf(f, "%s%s: %s on %zu machine%s\n", i ? "\n" : "",
			db_text_safe(lab, sizeof(lab), s->label),
			history_metric_name(name, sizeof(name), s->metric), s->n,
			s->n == 1 ? "" : "s");
		fprintf(f, "  %-20s  %-24s  %4s  %10s  %-24s  %7s\n", "machine", "kernel", "runs",
			"median", "interval", "ratio");
		for (size_t j = 0; j < s->n; j++) {
			const struct hpoint *p = &s->pts[j];
			const char *kern = rec_label(p->labels, "kernel");

			if (isfinite(p->lo))
				snprintf(c, sizeof(c), "[%s, %s]", history_fmt(a, sizeof(a), s->metric, p->lo),
					 history_fmt(b, sizeof(b), s->metric, p->hi));
			else
				snprintf(c, sizeof(c), "-");
			fprintf(f, "  %-20s  %-24s  %4u  %10s  %-24s  %7.3f%s%s\n",
				db_text_safe(m, sizeof(m),
					     rec_label(p->labels, "machine")),
				db_text_safe(k, sizeof(k), kern ? kern : "-"), p->runs,
				history_fmt(a, sizeof(a), s->metric, p->value), c, p->ratio,
				p->state_why[0] ? "  ! " : "", p->state_why);
		}
	}
	fputs("\nmedian of each machine's runs; interval: one run's 95 % interval (--repeat), or the range of several runs; ratio: to the first machine by name\n",
	      f);
	return ferror(f) ? -1 : 0;
}
