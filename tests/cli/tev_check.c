// SPDX-License-Identifier: MIT
/* tev_check FILE.json: checks a timeline of ipclab run --trace=events the
 * way a trace viewer depends on it, for tests/cli/trace_events.sh. It must
 * parse as JSON with a traceEvents array; per process (a cell), each
 * thread's slices ("X") must not overlap and must add up to the span its
 * process_name declares within 5 %; every wakeup arrow ("s" .. "f" of one
 * id) must start inside a running slice of the waker and end inside a
 * running slice of the wakee, two named endpoint threads of that process;
 * every async mark must begin and end. Prints a summary; exit 0 if all
 * holds, 1 with the first violation, 2 on bad usage. */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#define MAX_T 256

struct thr {
	long pid, tid;
	size_t n, cap;
	struct sl { double ts, dur; bool run; } *v;
};

static struct thr thr[MAX_T];
static size_t nthr;

static struct thr *thread_of(long pid, long tid)
{
	for (size_t i = 0; i < nthr; i++)
		if (thr[i].pid == pid && thr[i].tid == tid)
			return &thr[i];
	if (nthr == MAX_T)
		return NULL;
	thr[nthr] = (struct thr){ .pid = pid, .tid = tid };
	return &thr[nthr++];
}

__attribute__((format(printf, 1, 2)))
static int bad(const char *fmt, ...)
{
	va_list ap;

	printf("FAIL ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	return 1;
}

static int by_ts(const void *a, const void *b)
{
	const struct sl *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* Is the thread running at ts? Its slices sorted by time. */
static bool running_at(const struct thr *t, double ts)
{
	size_t lo = 0, hi = t ? t->n : 0;

	while (lo < hi) {	/* the first slice starting after ts */
		size_t mid = (lo + hi) / 2;

		if (t->v[mid].ts <= ts + 1e-6)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0 && i + 3 > lo;)
		if (t->v[i].run && ts >= t->v[i].ts - 1e-6 && ts <= t->v[i].ts + t->v[i].dur + 1e-6)
			return true;
	return false;
}

static int add_slice(const json_t *e)
{
	struct thr *t = thread_of((long)json_integer_value(json_object_get(e, "pid")),
				  (long)json_integer_value(json_object_get(e, "tid")));
	const char *name = json_string_value(json_object_get(e, "name"));

	if (!t || !name)
		return bad("a slice without a thread or a name");
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 1024;
		t->v = realloc(t->v, t->cap * sizeof(*t->v));
		if (!t->v)
			return bad("out of memory");
	}
	t->v[t->n++] = (struct sl){ json_number_value(json_object_get(e, "ts")),
				    json_number_value(json_object_get(e, "dur")), !strcmp(name, "running") };
	return 0;
}

/* The span of pid, from its process_name (ns). */
static double span_of(const json_t *evs, long pid)
{
	const json_t *e;
	size_t i;

	json_array_foreach(evs, i, e)
		if (!strcmp(json_string_value(json_object_get(e, "ph")), "M") &&
		    json_integer_value(json_object_get(e, "pid")) == pid &&
		    !strcmp(json_string_value(json_object_get(e, "name")), "process_name"))
			return json_number_value(json_object_get(json_object_get(e, "args"), "span_ns"));
	return NAN;
}

static int check_threads(const json_t *evs)
{
	for (size_t k = 0; k < nthr; k++) {
		struct thr *t = &thr[k];
		double sum = 0, span = span_of(evs, t->pid) / 1e3;
		char who[64];

		snprintf(who, sizeof(who), "pid %ld tid %ld", t->pid, t->tid);
		qsort(t->v, t->n, sizeof(*t->v), by_ts);
		for (size_t i = 0; i < t->n; i++) {
			sum += t->v[i].dur;
			if (i && t->v[i - 1].ts + t->v[i - 1].dur > t->v[i].ts + 0.0015)
				return bad("%s: slices overlap at %.3f us", who, t->v[i].ts);
		}
		if (!(span > 0) || fabs(sum - span) > 0.05 * span)
			return bad("%s: slices add up to %.1f us, not the span", who, sum);
	}
	return 0;
}

struct end {
	long pid, tid;
	json_int_t id;
	double ts;
};

static int by_id(const void *a, const void *b)
{
	const struct end *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static size_t ends(const json_t *evs, const char *which, struct end *v)
{
	const json_t *e;
	size_t i, n = 0;

	json_array_foreach(evs, i, e)
		if (!strcmp(json_string_value(json_object_get(e, "ph")), which))
			v[n++] = (struct end){ (long)json_integer_value(json_object_get(e, "pid")),
					       (long)json_integer_value(json_object_get(e, "tid")),
					       json_integer_value(json_object_get(e, "id")),
					       json_number_value(json_object_get(e, "ts")) };
	qsort(v, n, sizeof(*v), by_id);
	return n;
}

static int check_flows(const json_t *evs, size_t *nflows)
{
	size_t n = json_array_size(evs) + 1;
	struct end *s = calloc(n, sizeof(*s)), *f = calloc(n, sizeof(*f));
	size_t ns, nf;
	int ret = 0;

	if (!s || !f)
		return bad("out of memory");
	ns = ends(evs, "s", s);
	nf = ends(evs, "f", f);
	for (size_t i = 0; !ret && i < ns; i++) {
		struct end *m = bsearch(&s[i], f, nf, sizeof(*f), by_id);

		if (!m)
			ret = bad("%s: an arrow without its end (%g)", "flow", (double)s[i].id);
		else if (m->tid == s[i].tid)
			ret = bad("%s: a wakeup arrow from a thread to itself (%g)", "flow", (double)m->tid);
		else if (!running_at(thread_of(s[i].pid, s[i].tid), s[i].ts))
			ret = bad("%s: an arrow starts where the waker is not running, %.3f us", "flow", s[i].ts);
		else if (!running_at(thread_of(m->pid, m->tid), m->ts))
			ret = bad("%s: an arrow ends where the wakee is not running, %.3f us", "flow", m->ts);
	}
	if (!ret && nf != ns)
		ret = bad("%s: %g arrow ends without a start", "flow", (double)nf - (double)ns);
	*nflows = ns;
	free(s);
	free(f);
	return ret;
}

int main(int argc, char **argv)
{
	json_error_t jerr;
	json_t *root, *evs, *e;
	size_t i, marks = 0, flows = 0, slices = 0;
	long open_marks = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: tev_check TIMELINE.json\n");
		return 2;
	}
	root = json_load_file(argv[1], 0, &jerr);
	if (!root)
		return bad("%s: not JSON: line %d", jerr.text, jerr.line);
	evs = json_object_get(root, "traceEvents");
	if (!json_is_array(evs) || !json_array_size(evs))
		return bad("%s: no traceEvents", argv[1]);
	json_array_foreach(evs, i, e) {
		const char *ph = json_string_value(json_object_get(e, "ph"));

		if (!ph || !json_is_integer(json_object_get(e, "pid")))
			return bad("%s: an event without ph or pid at %zu", argv[1], i);
		if (!strcmp(ph, "X") && add_slice(e))
			return 1;
		slices += !strcmp(ph, "X");
		marks += !strcmp(ph, "b");
		open_marks += !strcmp(ph, "b") - !strcmp(ph, "e");
	}
	if (open_marks)
		return bad("%s: %ld marks begin without an end", argv[1], open_marks);
	if (check_threads(evs) || check_flows(evs, &flows))
		return 1;
	printf("ok %zu threads, %zu slices, %zu wakeup arrows, %zu marks\n", nthr, slices, flows, marks);
	json_decref(root);
	return 0;
}
