// SPDX-License-Identifier: MIT
/* --pin matrix's report: one CPU x CPU table per group of cells that
 * differ only in their pin (rows: the server's CPU, columns: the client's),
 * CPUs in topology order (node, package, LLC, core) with each row's place
 * and each value's topology class; then the figure per class with its
 * spread across pairs (and across repetitions), and the time per cell.
 * The result file gets the topology and the matrix (order, seed, time). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/topology.h"
#include "fields.h"
#include "matrix.h"

static const char class_mark[TC_N] = { '=', 's', 'l', 'o', 'n' };

static const struct field *matrix_metric(const struct matrix_info *m)
{
	return m->metric ? m->metric : field_find("lat_p50_ns");
}

/* What a group shares: everything but the pin. */
static void group_key(const struct result *r, char *buf, size_t len)
{
	const struct cell *c = &r->cell;

	snprintf(buf, len, "%s %s %llu B %s sched=%s clients=%u think=%llu think_ns=%llu rate=%s %s %s",
		 r->transport, r->pattern, (unsigned long long)c->size,
		 c->threads ? "thread" : "process", c->sched.text, c->clients,
		 (unsigned long long)c->think, (unsigned long long)c->think_ns, c->rate_text,
		 r->tp_opts, r->pat_opts);
}

/* A short label: only what the table cannot take for granted. */
static void group_label(const struct result *r, char *buf, size_t len)
{
	const struct cell *c = &r->cell;

	snprintf(buf, len, "%s/%s %llu B %s%s%s", r->transport, r->pattern,
		 (unsigned long long)c->size, c->threads ? "thread" : "process",
		 c->sched.policy ? " sched=" : "", c->sched.policy ? c->sched.text : "");
}

static int cpu_index(const struct matrix_info *m, int cpu)
{
	for (unsigned i = 0; i < m->ncpu; i++)
		if (m->cpus[i] == cpu)
			return (int)i;
	return -1;
}

struct mgrid {
	double v[MATRIX_MAX_CPUS][MATRIX_MAX_CPUS];	/* NAN: none */
	const struct result *r[MATRIX_MAX_CPUS][MATRIX_MAX_CPUS];
};

static void grid_fill(struct mgrid *g, const struct report *rep, const struct field *f,
		      const char *key)
{
	const struct matrix_info *m = rep->matrix;

	for (unsigned i = 0; i < MATRIX_MAX_CPUS; i++)
		for (unsigned j = 0; j < MATRIX_MAX_CPUS; j++) {
			g->v[i][j] = NAN;
			g->r[i][j] = NULL;
		}
	for (size_t k = 0; k < rep->n; k++) {
		const struct result *r = &rep->results[k];
		char kk[1024];
		int i = cpu_index(m, r->cell.pin.server_cpu), j = cpu_index(m, r->cell.pin.client_cpu);

		group_key(r, kk, sizeof(kk));
		if (i < 0 || j < 0 || strcmp(kk, key))
			continue;
		g->r[i][j] = r;
		if (!field_missing(f, r))
			g->v[i][j] = f->get_num(r);
	}
}

static void fmt_value(char *buf, size_t len, double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (fabs(v) >= 100)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.3g", v);
}

static void cpu_place(const struct topology *t, int cpu, char *buf, size_t len)
{
	const struct topo_cpu *c = topology_cpu(t, cpu);

	if (!c) {
		snprintf(buf, len, "?");
		return;
	}
	snprintf(buf, len, "n%d p%d L%u:%d c%d", c->node, c->package, t->llc_level, c->llc,
		 c->core);
}

static void print_grid(FILE *f, const struct matrix_info *m, const struct mgrid *g)
{
	char place[64], v[32];

	fprintf(f, "%-6s %-18s", "server", "node pkg LLC core");
	for (unsigned j = 0; j < m->ncpu; j++)
		fprintf(f, " %7d ", m->cpus[j]);
	fputc('\n', f);
	for (unsigned i = 0; i < m->ncpu; i++) {
		cpu_place(&m->topo, m->cpus[i], place, sizeof(place));
		fprintf(f, "%-6d %-18s", m->cpus[i], place);
		for (unsigned j = 0; j < m->ncpu; j++) {
			enum topo_class c = topology_class(&m->topo, m->cpus[i], m->cpus[j]);

			fmt_value(v, sizeof(v), g->v[i][j]);
			if (!g->r[i][j])
				snprintf(v, sizeof(v), " ");
			else if (g->r[i][j]->status == RES_FAILED)
				snprintf(v, sizeof(v), "fail");
			else if (g->r[i][j]->status == RES_SKIPPED)
				snprintf(v, sizeof(v), "skip");
			fprintf(f, " %7s%c", v, class_mark[c]);
		}
		fputc('\n', f);
	}
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The run-to-run spread of the metric in one result (--repeat), or NAN. */
static double repeat_spread(const struct result *r, const char *key)
{
	for (unsigned i = 0; r && i < r->n_repeat_stats; i++)
		if (r->repeat[i].key && !strcmp(r->repeat[i].key, key))
			return r->repeat[i].spread_pct;
	return NAN;
}

struct class_stat {
	unsigned n;
	double median, min, max, spread_pct, rep_spread_max;
};

static void class_stats(const struct matrix_info *m, const struct mgrid *g, const char *key,
			struct class_stat *cs)
{
	static double v[MATRIX_MAX_CPUS * MATRIX_MAX_CPUS];

	for (int c = 0; c < TC_N; c++) {
		unsigned n = 0;
		double rs = NAN;

		for (unsigned i = 0; i < m->ncpu; i++)
			for (unsigned j = 0; j < m->ncpu; j++) {
				double s;

				if ((int)topology_class(&m->topo, m->cpus[i], m->cpus[j]) != c ||
				    isnan(g->v[i][j]))
					continue;
				v[n++] = g->v[i][j];
				s = repeat_spread(g->r[i][j], key);
				if (!isnan(s) && (isnan(rs) || s > rs))
					rs = s;
			}
		cs[c] = (struct class_stat){ .n = n, .rep_spread_max = rs };
		if (!n)
			continue;
		qsort(v, n, sizeof(*v), cmp_dbl);
		cs[c].min = v[0];
		cs[c].max = v[n - 1];
		cs[c].median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
		cs[c].spread_pct = cs[c].median ? 100 * (cs[c].max - cs[c].min) / cs[c].median : 0;
	}
}

static void print_summary(FILE *f, const struct matrix_info *m, const struct mgrid *g,
			  const struct field *fd)
{
	struct class_stat cs[TC_N];
	char a[32], b[32], c[32];

	class_stats(m, g, fd->key, cs);
	fprintf(f, "%-13s %5s %10s %10s %10s %8s%s\n", "class", "pairs", "median", "min", "max",
		"spread", m->rounds > 1 ? "  run-to-run (worst pair)" : "");
	for (int k = 0; k < TC_N; k++) {
		if (!cs[k].n)
			continue;
		fmt_value(a, sizeof(a), cs[k].median);
		fmt_value(b, sizeof(b), cs[k].min);
		fmt_value(c, sizeof(c), cs[k].max);
		fprintf(f, "%c %-11s %5u %10s %10s %10s %7.1f%%", class_mark[k],
			topo_class_name((enum topo_class)k), cs[k].n, a, b, c, cs[k].spread_pct);
		if (m->rounds > 1 && !isnan(cs[k].rep_spread_max))
			fprintf(f, "  %7.1f%%", cs[k].rep_spread_max);
		fputc('\n', f);
	}
}

static void print_topology(FILE *f, const struct topology *t)
{
	fprintf(f, "topology: %u CPUs online, %u package%s, %u NUMA node%s, %u LLC group%s (L%u:",
		t->ncpu, t->npkg, t->npkg == 1 ? "" : "s", t->nnode, t->nnode == 1 ? "" : "s",
		t->nllc, t->nllc == 1 ? "" : "s", t->llc_level);
	for (unsigned i = 0; i < t->nllc && i < 8; i++)
		fprintf(f, " %u=%s", i, t->llc_groups[i]);
	fprintf(f, "%s), SMT %s\n", t->nllc > 8 ? " ..." : "",
		t->nsmt < t->ncpu ? "on" : "off (no siblings)");
}

int report_matrix(FILE *f, const struct report *rep)
{
	const struct matrix_info *m = rep->matrix;
	const struct field *fd = matrix_metric(m);
	struct mgrid *g = malloc(sizeof(*g));
	char (*done)[1024] = calloc(rep->n ? rep->n : 1, sizeof(*done));
	size_t ndone = 0, runs = m->ncells * m->rounds;

	if (!g || !done || !fd) {
		free(g);
		free(done);
		return -ENOMEM;
	}
	print_topology(f, &m->topo);
	for (size_t k = 0; k < rep->n; k++) {
		char key[1024], label[256];
		bool seen = false;

		group_key(&rep->results[k], key, sizeof(key));
		for (size_t i = 0; i < ndone && !seen; i++)
			seen = !strcmp(done[i], key);
		if (seen)
			continue;
		snprintf(done[ndone++], sizeof(done[0]), "%s", key);
		group_label(&rep->results[k], label, sizeof(label));
		grid_fill(g, rep, fd, key);
		fprintf(f, "\n%s: %s, rows: server CPU, columns: client CPU%s\n", label, fd->key,
			m->rounds > 1 ? " (median of the rounds)" : "");
		print_grid(f, m, g);
		fputc('\n', f);
		print_summary(f, m, g, fd);
	}
	fprintf(f, "\nclasses: = same CPU, s SMT sibling, l same LLC, o other LLC (same node), n other node or package\n");
	fprintf(f, "%zu cells x %u round%s in %.1f s: %.3f s per cell (pairs shuffled every round, seed %llu)\n",
		m->ncells, m->rounds, m->rounds == 1 ? "" : "s", m->wall_s,
		runs ? m->wall_s / (double)runs : 0.0, (unsigned long long)m->seed);
	free(g);
	free(done);
	return fflush(f) || ferror(f) ? -EIO : 0;
}

/* ---- the result file ----------------------------------------------------------- */

static json_t *topology_json(const struct topology *t)
{
	json_t *cpus = json_array(), *llc = json_array(), *smt = json_array();
	json_t *o;

	for (unsigned i = 0; cpus && i < t->ncpu; i++) {
		const struct topo_cpu *c = &t->cpu[i];

		json_array_append_new(cpus, json_pack("{s:i, s:i, s:i, s:i, s:i, s:s}", "cpu", c->cpu,
						      "core", c->core, "package", c->package,
						      "node", c->node, "llc", c->llc, "smt_siblings",
						      t->smt_groups[c->smt]));
	}
	for (unsigned i = 0; llc && i < t->nllc; i++)
		json_array_append_new(llc, json_string(t->llc_groups[i]));
	for (unsigned i = 0; smt && i < t->nsmt; i++)
		json_array_append_new(smt, json_string(t->smt_groups[i]));
	o = json_pack("{s:s, s:i, s:i, s:i, s:i, s:o, s:o, s:o}", "source", t->root, "cpus_online",
		      (int)t->ncpu, "packages", (int)t->npkg, "nodes", (int)t->nnode, "llc_level",
		      (int)t->llc_level, "llc_groups", llc, "smt_groups", smt, "cpus", cpus);
	return o;
}

static json_t *classes_json(const struct report *rep, const struct field *fd)
{
	const struct matrix_info *m = rep->matrix;
	json_t *pairs = json_object(), *groups = json_array();
	struct mgrid *g = malloc(sizeof(*g));

	for (unsigned i = 0; pairs && i < m->ncpu; i++)
		for (unsigned j = 0; j < m->ncpu; j++) {
			char pin[32];

			snprintf(pin, sizeof(pin), "%d:%d", m->cpus[i], m->cpus[j]);
			json_object_set_new(pairs, pin, json_string(topo_class_key(
						topology_class(&m->topo, m->cpus[i], m->cpus[j]))));
		}
	for (size_t k = 0; g && groups && k < rep->n; k++) {
		char key[1024], label[256];
		struct class_stat cs[TC_N];
		bool seen = false;
		json_t *arr;

		group_key(&rep->results[k], key, sizeof(key));
		for (size_t i = 0; i < k && !seen; i++) {
			char other[1024];

			group_key(&rep->results[i], other, sizeof(other));
			seen = !strcmp(other, key);
		}
		if (seen)
			continue;
		group_label(&rep->results[k], label, sizeof(label));
		grid_fill(g, rep, fd, key);
		class_stats(m, g, fd->key, cs);
		arr = json_array();
		for (int c = 0; arr && c < TC_N; c++)
			if (cs[c].n)
				json_array_append_new(arr, json_pack("{s:s, s:i, s:f, s:f, s:f, s:f}",
					"class", topo_class_key((enum topo_class)c), "pairs", (int)cs[c].n,
					"median", cs[c].median, "min", cs[c].min, "max", cs[c].max,
					"spread_pct", cs[c].spread_pct));
		json_array_append_new(groups, json_pack("{s:s, s:o}", "cells", label, "by_class", arr));
	}
	free(g);
	return json_pack("{s:o, s:o}", "pairs", pairs, "summary", groups);
}

int matrix_json_put(json_t *root, const struct report *rep)
{
	const struct matrix_info *m = rep->matrix;
	const struct field *fd = matrix_metric(m);
	json_t *cpus = json_array(), *order = json_array(), *cls, *mx;
	size_t runs = m->ncells * m->rounds;

	if (!fd)
		return -ENOMEM;
	for (unsigned i = 0; cpus && i < m->ncpu; i++)
		json_array_append_new(cpus, json_integer(m->cpus[i]));
	for (unsigned r = 0; order && m->order && r < m->rounds; r++) {
		json_t *one = json_array();

		for (size_t k = 0; one && k < m->ncells; k++)
			json_array_append_new(one, json_integer(m->order[r * m->ncells + k]));
		json_array_append_new(order, one);
	}
	cls = classes_json(rep, fd);
	mx = json_pack("{s:o, s:s, s:I, s:i, s:o, s:f, s:f}", "cpus", cpus, "metric", fd->key,
		       "seed", (json_int_t)m->seed, "rounds",
		       (int)m->rounds, "order", order, "wall_s", m->wall_s, "per_cell_s",
		       runs ? m->wall_s / (double)runs : 0.0);
	if (!mx || !cls || json_object_update(mx, cls)) {
		json_decref(mx);
		json_decref(cls);
		return -ENOMEM;
	}
	json_decref(cls);
	if (json_object_set_new(root, "topology", topology_json(&m->topo)) ||
	    json_object_set_new(root, "matrix", mx))
		return -ENOMEM;
	return 0;
}
