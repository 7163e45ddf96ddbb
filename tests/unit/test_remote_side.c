// SPDX-License-Identifier: MIT
/* Unit tests of a side's record between hosts (src/remote/proto.c): its
 * latency histogram, which lives beside the record (side_stats.hist), is
 * encoded bucket by bucket and decoded into the receiving side's own,
 * unchanged; a side without one encodes none and takes none; a record
 * whose histogram disagrees with itself (counts, min or max outside its
 * buckets, a sum no samples could make, a bucket twice or out of range)
 * is refused with why. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "../../src/remote/proto.h"

static const uint64_t values[] = { 3, 200, 1000, 1001, 65536, 1234567, 1ull << 50 };

static struct side_stats *side_new(bool with_hist)
{
	struct side_stats *st = calloc(1, sizeof(*st));

	assert_non_null(st);
	if (with_hist) {
		st->hist = malloc(sizeof(*st->hist));
		assert_non_null(st->hist);
		hist_init(st->hist);
	}
	return st;
}

static void side_free(struct side_stats *st)
{
	free(st->hist);
	free(st);
}

/* A server's record with a histogram of values[], as JSON. */
static json_t *record(void)
{
	struct side_stats *st = side_new(true);
	json_t *j;

	st->role = TP_SERVER;
	st->msgs = 7;
	st->win_start_ns = 10;
	st->win_end_ns = 20;
	st->has_hist = true;
	for (size_t i = 0; i < ARRAY_SIZE(values); i++)
		hist_add(st->hist, values[i]);
	j = rp_side_json(st);
	assert_non_null(j);
	side_free(st);
	return j;
}

/* j decoded into a side with a histogram: 0, or -EPROTO with why. */
static int parse(const json_t *j, char *err, size_t len)
{
	struct side_stats *st = side_new(true);
	int ret;

	err[0] = '\0';
	ret = rp_side_parse(j, st, err, len);
	side_free(st);
	return ret;
}

static void test_round_trip(void **state)
{
	struct side_stats *st = side_new(true), *sent = side_new(true);
	char err[ERRLEN] = "";
	json_t *j = record();

	(void)state;
	assert_int_equal(rp_side_parse(j, st, err, sizeof(err)), 0);
	for (size_t i = 0; i < ARRAY_SIZE(values); i++)
		hist_add(sent->hist, values[i]);
	assert_true(st->has_hist);
	assert_int_equal(st->hist->count, ARRAY_SIZE(values));
	assert_int_equal(st->hist->min, 3);
	assert_int_equal(st->hist->max, 1ull << 50);
	assert_true(st->hist->sum == sent->hist->sum);
	assert_memory_equal(st->hist->buckets, sent->hist->buckets, sizeof(sent->hist->buckets));
	assert_int_equal(st->msgs, 7);
	json_decref(j);
	side_free(st);
	side_free(sent);
}

static void test_side_without_hist(void **state)
{
	struct side_stats *bare = side_new(false), *back = side_new(false);
	char err[ERRLEN] = "";
	json_t *j;

	(void)state;
	/* it encodes none ... */
	bare->role = TP_CLIENT;
	j = rp_side_json(bare);
	assert_non_null(j);
	assert_false(json_is_true(json_object_get(j, "has_hist")));
	assert_int_equal(json_array_size(json_object_get(j, "buckets")), 0);
	assert_int_equal(rp_side_parse(j, back, err, sizeof(err)), 0);
	assert_false(back->has_hist);
	json_decref(j);
	/* ... and takes none */
	j = record();
	assert_int_equal(rp_side_parse(j, back, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "histogram for a side that records none"));
	json_decref(j);
	side_free(bare);
	side_free(back);
}

/* The record with key set to the JSON text val: refused, err naming what. */
static void refused(const char *key, const char *val, const char *what)
{
	char err[ERRLEN];
	json_t *j = record();

	assert_int_equal(json_object_set_new(j, key, json_loads(val, JSON_DECODE_ANY, NULL)), 0);
	assert_int_equal(parse(j, err, sizeof(err)), -EPROTO);
	if (!strstr(err, what))
		fail_msg("%s=%s: \"%s\", not \"%s\"", key, val, err, what);
	json_decref(j);
}

static void test_hostile_hist(void **state)
{
	json_t *j = record();
	char err[ERRLEN];

	(void)state;
	assert_int_equal(parse(j, err, sizeof(err)), 0);	/* as sent: taken */
	json_decref(j);
	refused("hist_count", "8", "counts disagree");
	refused("hist_count", "6", "counts disagree");
	refused("hist_min", "2", "min or max outside its buckets");
	refused("hist_min", "4", "min or max outside its buckets");
	refused("hist_max", "1000000", "min or max outside its buckets");
	refused("hist_min", "2000000000000000", "counts disagree");	/* over max */
	refused("hist_sum", "1.0", "sum out of range");
	refused("hist_sum", "1e30", "sum out of range");
	refused("hist_sum", "\"many\"", "sum out of range");
	refused("buckets", "[[3,1],[3,6]]", "bucket malformed");
	refused("buckets", "[[3,7,1]]", "bucket malformed");
	refused("buckets", "[[6000,7]]", "bucket malformed");
	refused("buckets", "[[3,-1],[4,8]]", "bucket malformed");
	refused("buckets", "[[3,9223372036854775807],[4,9223372036854775807]]", "counts disagree");
	refused("buckets", "{}", "buckets malformed");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_side_without_hist),
		cmocka_unit_test(test_hostile_hist),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
