// SPDX-License-Identifier: MIT
/* `ipclab compare before.json after.json`: cells matched by configuration,
 * per metric both values, the ratio, and whether the difference is beyond
 * the cells' run-to-run spread (from --repeat). With --fail-above PCT the
 * exit status is 3 when a metric got worse by more than PCT percent (lower
 * latency and CPU are better, higher throughput is better), so that CI can
 * gate a kernel or library change on it. Printing is in compare_out.c. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipclab/util.h"
#include "commands.h"
#include "compare.h"

const struct cmp_metric cmp_metrics[CMP_NMETRICS] = {
	{ "msgs_per_s", "msgs/s", true, CU_PER_S },
	{ "bytes_per_s", "bytes/s", true, CU_BYTES_PER_S },
	{ "lat_p50_ns", "p50", false, CU_NS },
	{ "lat_p99_ns", "p99", false, CU_NS },
	{ "lat_max_ns", "max", false, CU_NS },
	{ "cpu_ns_per_msg", "CPU/msg", false, CU_NS },
	{ "cpu_pct_total", "CPU%", false, CU_PCT },
	{ "sys_ctx_switches_per_s", "cs/s", false, CU_PER_S },
};

int cmp_parse_metrics(const char *list, unsigned *mask, char *err, size_t errlen)
{
	char buf[512], *save = NULL;

	*mask = 0;
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		const char *key = rf_metric_alias(w);
		unsigned i;

		for (i = 0; i < CMP_NMETRICS; i++)
			if (!strcmp(cmp_metrics[i].key, key) || !strcmp(cmp_metrics[i].label, key))
				break;
		if (i == CMP_NMETRICS)
			return errf(err, errlen, EINVAL, "--metrics %s: unknown metric '%s'; expected some of msgs_per_s, bytes_per_s, lat_p50_ns, lat_p99_ns, lat_max_ns, cpu_ns_per_msg, cpu_pct_total, sys_ctx_switches_per_s",
				    list, w);
		*mask |= 1u << i;
	}
	if (!*mask)
		return errf(err, errlen, EINVAL, "--metrics: no metric named; e.g. --metrics lat_p50_ns,msgs_per_s");
	return 0;
}

/* Spread of the two cells: with data on both sides the difference is real
 * when their [min, max] ranges do not overlap; with one side only, when it
 * is wider than that side's range. */
static enum cmp_spread spread_of(const struct cmp_row *row, const char *key, double before,
				 double after)
{
	double amin, amax, bmin, bmax, sp;
	bool a = rcell_spread(row->before, key, &amin, &amax, &sp);
	bool b = rcell_spread(row->after, key, &bmin, &bmax, &sp);

	if (a && b)
		return amax < bmin || bmax < amin ? CMP_BEYOND : CMP_WITHIN;
	if (a)
		return fabs(after - before) > amax - amin ? CMP_BEYOND : CMP_WITHIN;
	if (b)
		return fabs(after - before) > bmax - bmin ? CMP_BEYOND : CMP_WITHIN;
	return CMP_NO_SPREAD;
}

static bool compare_value(struct cmp_row *row, unsigned m, const struct cmp_opts *o)
{
	const struct cmp_metric *cm = &cmp_metrics[m];
	struct cmp_value *v = &row->v[m];

	v->before = rcell_metric(row->before, cm->key);
	v->after = rcell_metric(row->after, cm->key);
	v->ratio = v->change_pct = v->worse_pct = NAN;
	v->spread = CMP_NO_SPREAD;
	v->regressed = false;
	if (isnan(v->before) || isnan(v->after))
		return false;
	if (v->before != 0) {
		v->ratio = v->after / v->before;
		v->change_pct = (v->ratio - 1) * 100;
	} else if (v->after == 0) {
		v->ratio = 1;
		v->change_pct = 0;
	}
	v->worse_pct = cm->higher_better ? -v->change_pct : v->change_pct;
	v->spread = spread_of(row, cm->key, v->before, v->after);
	v->regressed = !isnan(o->fail_above_pct) && (o->metric_mask & (1u << m)) &&
		       (v->before == 0 ? v->after != 0 && !cm->higher_better :
					 v->worse_pct > o->fail_above_pct) &&
		       v->spread != CMP_WITHIN;
	return v->regressed;
}

static void compare_row(struct cmp_row *row, const struct cmp_opts *o, unsigned *regressions)
{
	bool any = false;

	row->comparable = row->before->ok && row->after->ok;
	for (unsigned m = 0; row->comparable && m < CMP_NMETRICS; m++)
		any |= compare_value(row, m, o);
	*regressions += any;
}

/* The k-th cell of a configuration in after, matching the k-th in before. */
static const struct rcell *find_match(const struct rfile *after, const struct rcell *c,
				      bool *used)
{
	for (size_t j = 0; j < after->n; j++)
		if (!used[j] && !strcmp(after->cells[j].match, c->match)) {
			used[j] = true;
			return &after->cells[j];
		}
	return NULL;
}

static int alloc_result(const struct rfile *a, const struct rfile *b, struct cmp_result *r)
{
	memset(r, 0, sizeof(*r));
	r->before = a;
	r->after = b;
	r->rows = calloc(a->n + 1, sizeof(*r->rows));
	r->only_before = calloc(a->n + 1, sizeof(*r->only_before));
	r->only_after = calloc(b->n + 1, sizeof(*r->only_after));
	r->only_before_label = calloc(a->n + 1, sizeof(*r->only_before_label));
	r->only_after_label = calloc(b->n + 1, sizeof(*r->only_after_label));
	if (!r->rows || !r->only_before || !r->only_after || !r->only_before_label ||
	    !r->only_after_label) {
		compare_free(r);
		return -ENOMEM;
	}
	return 0;
}

int compare_files(const struct rfile *before, const struct rfile *after,
		  const struct cmp_opts *o, struct cmp_result *r)
{
	const struct rfile *files[2] = { before, after };
	const char *names[64];
	size_t nn = rf_varying(files, 2, true, names, ARRAY_SIZE(names));
	bool *used = calloc(after->n + 1, sizeof(*used));

	if (!used || alloc_result(before, after, r)) {
		free(used);
		return -ENOMEM;
	}
	for (size_t i = 0; i < before->n; i++) {
		const struct rcell *c = &before->cells[i], *m = find_match(after, c, used);

		if (!m) {
			rcell_label(c, names, nn, NULL, r->only_before_label[r->nonly_before], 256);
			r->only_before[r->nonly_before++] = c;
			continue;
		}
		r->rows[r->nrows] = (struct cmp_row){ .before = c, .after = m };
		rcell_label(c, names, nn, NULL, r->rows[r->nrows].label, sizeof(r->rows[0].label));
		compare_row(&r->rows[r->nrows++], o, &r->regressions);
	}
	for (size_t j = 0; j < after->n; j++)
		if (!used[j]) {
			rcell_label(&after->cells[j], names, nn, NULL,
				    r->only_after_label[r->nonly_after], 256);
			r->only_after[r->nonly_after++] = &after->cells[j];
		}
	free(used);
	return 0;
}

void compare_free(struct cmp_result *r)
{
	free(r->rows);
	free(r->only_before);
	free(r->only_after);
	free(r->only_before_label);
	free(r->only_after_label);
	memset(r, 0, sizeof(*r));
}

/* ---- the subcommand ------------------------------------------------------------------ */

static int cmp_usage(FILE *f)
{
	fputs("usage: ipclab compare [options] BEFORE.json AFTER.json\n"
	      "Match the cells of two result files by configuration and compare their metrics.\n"
	      "  -f, --format FMT        text (default), markdown or json\n"
	      "  -m, --metrics LIST      metrics to compare (default all): msgs_per_s, bytes_per_s,\n"
	      "                          lat_p50_ns, lat_p99_ns, lat_max_ns, cpu_ns_per_msg,\n"
	      "                          cpu_pct_total, sys_ctx_switches_per_s\n"
	      "      --fail-above PCT    exit 3 when a metric got worse by more than PCT %\n"
	      "                          (and not within the run-to-run spread)\n"
	      "      --ignore LIST       configuration keys not to match on, e.g. keep_awake\n"
	      "  -o, --output FILE       write the comparison to FILE instead of stdout\n"
	      "  -h, --help\n"
	      "Exit status: 0 ok, 2 bad input, 3 a regression past --fail-above.\n", f);
	return 0;
}

static int cmp_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int cmp_error(const char *fmt, ...)
{
	va_list ap;

	fputs("ipclab compare: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 2;
}

struct cmp_args {
	struct cmp_opts o;
	const char *format, *output;
	char *ignore_buf;
	const char *ignore[32];
};

static int cmp_option(int opt, char *arg, struct cmp_args *a)
{
	char err[ERRLEN], *end, *save = NULL;
	unsigned n = 0;

	switch (opt) {
	case 'f':
		if (strcmp(arg, "text") && strcmp(arg, "markdown") && strcmp(arg, "json"))
			return cmp_error("-f %s: expected text, markdown or json", arg);
		a->format = arg;
		return 0;
	case 'm':
		return cmp_parse_metrics(arg, &a->o.metric_mask, err, sizeof(err)) ?
			       cmp_error("%s", err) : 0;
	case 'F':
		errno = 0;
		a->o.fail_above_pct = strtod(arg, &end);
		if (errno || end == arg || (*end && strcmp(end, "%")) || !(a->o.fail_above_pct >= 0))
			return cmp_error("--fail-above %s: expected a percentage, e.g. 5 or 12.5", arg);
		return 0;
	case 'I':
		for (char *w = strtok_r(arg, ",", &save); w && n < ARRAY_SIZE(a->ignore) - 1;
		     w = strtok_r(NULL, ",", &save))
			a->ignore[n++] = w;
		a->ignore[n] = NULL;
		return 0;
	case 'o':
		a->output = arg;
		return 0;
	}
	return 0;
}

static int cmp_args_parse(int argc, char **argv, struct cmp_args *a)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "metrics", required_argument, NULL, 'm' },
		{ "fail-above", required_argument, NULL, 'F' },
		{ "ignore", required_argument, NULL, 'I' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int opt, ret;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":f:m:o:h", opts, NULL)) != -1) {
		if (opt == 'h')
			return cmp_usage(stdout), -1;
		if (opt == ':')
			return cmp_error("option '%s' needs a value; see ipclab compare --help",
					 argv[optind - 1]);
		if (opt == '?')
			return cmp_error("unknown option '%s'; see ipclab compare --help",
					 argv[optind - 1]);
		ret = cmp_option(opt, optarg, a);
		if (ret)
			return ret;
	}
	if (argc - optind != 2)
		return cmp_error("expected two result files, BEFORE.json AFTER.json (got %d); see ipclab compare --help",
				 argc - optind);
	return 0;
}

/* Via a temporary file and rename, as run -o: never half-written. */
static int cmp_write(const struct cmp_args *a, const struct cmp_result *r)
{
	char tmp[1100];
	FILE *f = stdout;
	int ret;

	if (a->output) {
		snprintf(tmp, sizeof(tmp), "%s.tmp-%d", a->output, (int)getpid());
		f = fopen(tmp, "wx");
		if (!f)
			return fprintf(stderr, "ipclab compare: cannot write %s: %s\n", tmp,
				       strerror(errno)), 1;
	}
	ret = compare_print(f, r, &a->o, a->format);
	if (f == stdout)
		return fflush(stdout) || ret ? 1 : 0;
	if (fclose(f) || ret || rename(tmp, a->output)) {
		fprintf(stderr, "ipclab compare: writing %s failed: %s\n", a->output,
			strerror(errno ? errno : EIO));
		unlink(tmp);
		return 1;
	}
	return 0;
}

int cmd_compare(int argc, char **argv)
{
	struct cmp_args a = { .o = { .fail_above_pct = NAN, .metric_mask = (1u << CMP_NMETRICS) - 1 },
			      .format = "text" };
	struct rfile before, after;
	struct cmp_result r;
	char err[ERRLEN];
	int ret = cmp_args_parse(argc, argv, &a);

	if (ret)
		return ret < 0 ? 0 : ret;
	if (rfile_load(&before, argv[optind], a.ignore, err, sizeof(err)))
		return cmp_error("%s", err);
	if (rfile_load(&after, argv[optind + 1], a.ignore, err, sizeof(err))) {
		rfile_free(&before);
		return cmp_error("%s", err);
	}
	if (compare_files(&before, &after, &a.o, &r)) {
		ret = cmp_error("out of memory");
	} else {
		ret = cmp_write(&a, &r);
		if (!ret && r.regressions)
			ret = 3;
		compare_free(&r);
	}
	rfile_free(&before);
	rfile_free(&after);
	return ret;
}
