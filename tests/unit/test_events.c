// SPDX-License-Identifier: MIT
/* --trace=events' builder (src/trace/events.c) on records of the test's
 * own, no kernel needed: two endpoints passing the CPU back and forth, one
 * woken by the other, one migrated, one preempted. Each thread's slices
 * are the states the records imply, in order, without gap or overlap,
 * from the window's start to its end; each wakeup is an arrow from the
 * running waker to the wakee once it runs; a span shorter than the window
 * keeps its end; a mark outside the span is left out. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "events_int.h"

#define S 100	/* the server's tid */
#define C 200	/* the client's */

static const struct tev_rec recs[] = {
	{ 1000, TEV_SWITCH, 0, C, S, 1, 0 },	/* the client blocks, the server runs */
	{ 1100, TEV_WAKING, 0, S, C, 0, 0 },	/* the server wakes it */
	{ 1200, TEV_SWITCH, 0, S, C, 1, 0 },	/* the server blocks, the client runs */
	{ 1300, TEV_MIGRATE, 0, C, 1, 0, 0 },
	{ 1500, TEV_WAKING, 1, C, S, 0, 0 },	/* the client wakes the server */
	{ 1600, TEV_SWITCH, 1, C, S, 0, 1 },	/* and is preempted by it */
};

static json_t *build(uint64_t span_ns, struct tev_marks *m)
{
	static const int tids[] = { S, C };
	static const uint64_t ws[] = { 900, 900 }, we[] = { 2000, 2000 };
	const struct tev_marks *marks[] = { m, m };
	struct trace_events_opts o = { .span_ns = span_ns };
	struct tev_cell c = { .name = "cell \"x\"", .mark_name = "round trip", .nsides = 2,
			      .tids = tids, .win_start = ws, .win_end = we, .ev = recs,
			      .nev = sizeof(recs) / sizeof(recs[0]), .marks = m ? marks : NULL };
	struct trace_events *ev;
	struct tev_stats st;
	char *buf = NULL;
	size_t len = 0;
	unsigned pid;
	FILE *f = open_memstream(&buf, &len);
	json_t *root;

	assert_non_null(f);
	assert_int_equal(trace_events_begin(f, &o, &ev), 0);
	assert_int_equal(tev_write_cell(ev, &c, &pid, &st), 0);
	assert_int_equal(pid, 1);
	assert_int_equal(st.span_ns, span_ns < 1100 ? span_ns : 1100);
	assert_int_equal(trace_events_end(ev), 0);
	fclose(f);
	root = json_loads(buf, 0, NULL);
	if (!root)
		fail_msg("not JSON: %s", buf);
	free(buf);
	return root;
}

/* "name@ts+dur " for each slice of tid, in order (ts from the span's start, ns) */
static void slices(const json_t *root, int tid, char *out, size_t len)
{
	const json_t *e;
	size_t i, off = 0;

	out[0] = '\0';
	json_array_foreach(json_object_get(root, "traceEvents"), i, e) {
		if (strcmp(json_string_value(json_object_get(e, "ph")), "X") ||
		    json_integer_value(json_object_get(e, "tid")) != tid)
			continue;
		off += (size_t)snprintf(out + off, len - off, "%s@%.0f+%.0f ",
					json_string_value(json_object_get(e, "name")),
					json_number_value(json_object_get(e, "ts")) * 1e3,
					json_number_value(json_object_get(e, "dur")) * 1e3);
	}
}

static unsigned count(const json_t *root, const char *ph, int tid, double ts_ns)
{
	const json_t *e;
	unsigned n = 0;
	size_t i;

	json_array_foreach(json_object_get(root, "traceEvents"), i, e)
		n += !strcmp(json_string_value(json_object_get(e, "ph")), ph) &&
		     (tid < 0 || json_integer_value(json_object_get(e, "tid")) == tid) &&
		     (ts_ns < 0 || fabs(json_number_value(json_object_get(e, "ts")) * 1e3 - ts_ns) < 0.5);
	return n;
}

static void test_states(void **state)
{
	json_t *root = build(1000000, NULL);
	char got[1024];

	(void)state;
	slices(root, S, got, sizeof(got));
	assert_string_equal(got, "runnable (preempted)@0+100 running@100+200 sleeping@300+300 "
				 "runnable (woken)@600+100 running@700+400 ");
	slices(root, C, got, sizeof(got));
	assert_string_equal(got, "running@0+100 sleeping@100+100 runnable (woken)@200+100 "
				 "running@300+400 runnable (preempted)@700+400 ");
	/* arrows: server -> client at the waking (100 ns after 1000), on at its run (+1 ns) */
	assert_int_equal(count(root, "s", S, 200), 1);
	assert_int_equal(count(root, "f", C, 301), 1);
	assert_int_equal(count(root, "s", C, 600), 1);
	assert_int_equal(count(root, "f", S, 701), 1);
	assert_int_equal(count(root, "i", C, 400), 1);	/* the migration */
	json_decref(root);
}

static void test_span_and_marks(void **state)
{
	struct tev_marks *m = calloc(1, sizeof(*m));
	json_t *root;
	char got[1024];

	(void)state;
	assert_non_null(m);
	m->m[0] = (struct tev_mark){ 950, 1050 };	/* before the span */
	m->m[1] = (struct tev_mark){ 1700, 1900 };	/* inside */
	m->n = 2;
	root = build(500, m);			/* the span: 1500 .. 2000 */
	slices(root, S, got, sizeof(got));
	assert_string_equal(got, "runnable (woken)@0+100 running@100+400 ");
	slices(root, C, got, sizeof(got));
	assert_string_equal(got, "running@0+100 runnable (preempted)@100+400 ");
	assert_int_equal(count(root, "b", -1, -1), 2);	/* one mark on each side's track */
	assert_int_equal(count(root, "b", S, 200), 1);
	assert_int_equal(count(root, "e", S, 400), 1);
	/* the arrow of the waking at 1500 is at the span's start: kept */
	assert_int_equal(count(root, "s", C, 0), 1);
	json_decref(root);
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_states),
		cmocka_unit_test(test_span_and_marks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
