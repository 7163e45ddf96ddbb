// SPDX-License-Identifier: MIT
/* Unit tests for the core helpers: histogram error bound against exact
 * percentiles, size/count/duration parsing, option tables, placement
 * parsing, message fill and check, the transport table's check of the
 * batch operations. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "ipclab/metrics.h"
#include "ipclab/msg.h"
#include "ipclab/opt.h"
#include "ipclab/placement.h"
#include "ipclab/trace.h"
#include "ipclab/transport.h"
#include "ipclab/util.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted data. */
static uint64_t exact_q(const uint64_t *v, size_t n, double q)
{
	size_t rank = (size_t)(q * (double)n + 0.999999999);

	if (rank < 1)
		rank = 1;
	return v[rank - 1];
}

static void check_against_exact(uint64_t *v, size_t n)
{
	static const double qs[] = { 0.01, 0.5, 0.9, 0.99, 0.999, 0.9999 };
	struct hist *h = malloc(sizeof(*h));

	assert_non_null(h);
	hist_init(h);
	for (size_t i = 0; i < n; i++)
		hist_add(h, v[i]);
	qsort(v, n, sizeof(*v), cmp_u64);
	assert_int_equal(h->count, n);
	assert_int_equal(h->min, v[0]);
	assert_int_equal(h->max, v[n - 1]);
	for (size_t i = 0; i < ARRAY_SIZE(qs); i++) {
		double want = (double)exact_q(v, n, qs[i]), got = (double)hist_quantile(h, qs[i]);
		double rel = want ? (got - want) / want : got;

		if (rel < 0)
			rel = -rel;
		if (rel > 0.01)
			fail_msg("q=%g: exact %.0f, histogram %.0f (error %.3f%% > 1%%)", qs[i], want,
				 got, 100 * rel);
	}
	free(h);
}

static void test_hist_error_bound(void **state)
{
	enum { N = 200000 };
	uint64_t *v = malloc(N * sizeof(*v));

	(void)state;
	srand(12345);
	/* log-uniform from 1 ns to ~10 s */
	for (size_t i = 0; i < N; i++) {
		double e = (double)rand() / RAND_MAX * 33.0;

		v[i] = (uint64_t)__builtin_exp2(e) + (uint64_t)(rand() % 7);
	}
	check_against_exact(v, N);
	/* a narrow, realistic latency cluster with a tail */
	for (size_t i = 0; i < N; i++)
		v[i] = 5000 + (uint64_t)(rand() % 3000) + (i % 1000 == 0 ? 1000000 : 0);
	check_against_exact(v, N);
	free(v);
}

static void test_hist_buckets(void **state)
{
	(void)state;
	/* buckets tile the axis: each starts where the previous ends */
	for (unsigned i = 1; i < HIST_BUCKETS; i++)
		assert_int_equal(hist_bucket_lower(i), hist_bucket_lower(i - 1) + hist_bucket_width(i - 1));
	/* every value lands in the bucket that contains it */
	for (uint64_t v = 0; v < (1ull << 40); v = v * 3 / 2 + 1) {
		unsigned i = hist_index(v);

		assert_true(v >= hist_bucket_lower(i));
		assert_true(v < hist_bucket_lower(i) + hist_bucket_width(i));
		/* width at most 1/128 of the lower bound above the exact range */
		if (i >= HIST_EXACT)
			assert_true(hist_bucket_width(i) * 128 <= hist_bucket_lower(i));
	}
	assert_int_equal(hist_index(UINT64_MAX), HIST_BUCKETS - 1);
}

static void test_hist_merge_empty(void **state)
{
	struct hist *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));

	(void)state;
	hist_init(a);
	hist_init(b);
	assert_int_equal(hist_quantile(a, 0.5), 0);
	hist_add(b, 100);
	hist_add(b, 300);
	hist_merge(a, b);
	assert_int_equal(a->count, 2);
	assert_int_equal(a->min, 100);
	assert_int_equal(a->max, 300);
	assert_true(hist_mean(a) == 200.0);
	free(a);
	free(b);
}

static void test_parse_numbers(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(parse_size("64", &v), 0);
	assert_int_equal(v, 64);
	assert_int_equal(parse_size("4k", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(parse_size("1M", &v), 0);
	assert_int_equal(v, 1048576);
	assert_int_equal(parse_size("4KiB", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(parse_count("200k", &v), 0);
	assert_int_equal(v, 200000);
	assert_int_equal(parse_count("1M", &v), 0);
	assert_int_equal(v, 1000000);
	assert_int_not_equal(parse_size("", &v), 0);
	assert_int_not_equal(parse_size("-1", &v), 0);
	assert_int_not_equal(parse_size("4x", &v), 0);
	assert_int_not_equal(parse_size("k", &v), 0);
	assert_int_not_equal(parse_size("99999999999999999999", &v), 0);
	assert_int_not_equal(parse_size("20000000000000000k", &v), 0);
	assert_int_equal(parse_duration("5s", &v), 0);
	assert_int_equal(v, 5000000000ull);
	assert_int_equal(parse_duration("250ms", &v), 0);
	assert_int_equal(v, 250000000ull);
	assert_int_equal(parse_duration("2", &v), 0);
	assert_int_equal(v, 2000000000ull);
	assert_int_equal(parse_duration("1.5us", &v), 0);
	assert_int_equal(v, 1500);
	assert_int_not_equal(parse_duration("5 s", &v), 0);
	assert_int_not_equal(parse_duration("5parsecs", &v), 0);
}

struct test_opts {
	uint64_t size;
	int flag;
	int mode;
	char name[OPT_STR_MAX];
};

static const struct opt_desc test_desc[] = {
	{ .name = "size", .type = OPT_SIZE, .offset = offsetof(struct test_opts, size),
	  .def = "4k", .min = 16, .max = 1 << 20, .help = "a size" },
	{ .name = "flag", .type = OPT_BOOL, .offset = offsetof(struct test_opts, flag), .def = "1" },
	{ .name = "mode", .type = OPT_CHOICE, .offset = offsetof(struct test_opts, mode),
	  .def = "b", .choices = "a|b|c" },
	{ .name = "name", .type = OPT_STRING, .offset = offsetof(struct test_opts, name), .def = "x" },
	{ 0 },
};

static void test_opt_table(void **state)
{
	struct test_opts o;
	char err[ERRLEN], buf[64];

	(void)state;
	assert_int_equal(opt_defaults(test_desc, &o, err, sizeof(err)), 0);
	assert_int_equal(o.size, 4096);
	assert_int_equal(o.flag, 1);
	assert_int_equal(o.mode, 1);
	assert_string_equal(o.name, "x");
	assert_int_equal(opt_set(opt_find(test_desc, "size"), &o, "1M", err, sizeof(err)), 0);
	assert_int_equal(o.size, 1 << 20);
	assert_int_equal(opt_set(opt_find(test_desc, "size"), &o, "2M", err, sizeof(err)), -ERANGE);
	assert_non_null(strstr(err, "out of range"));
	assert_int_equal(opt_set(opt_find(test_desc, "mode"), &o, "d", err, sizeof(err)), -EINVAL);
	assert_int_equal(opt_set(opt_find(test_desc, "mode"), &o, "c", err, sizeof(err)), 0);
	opt_format(opt_find(test_desc, "mode"), &o, buf, sizeof(buf));
	assert_string_equal(buf, "c");
	assert_int_equal(opt_set(opt_find(test_desc, "flag"), &o, "maybe", err, sizeof(err)), -EINVAL);
	assert_null(opt_find(test_desc, "nope"));
}

/* A number option with a word for 0 (-O batch=auto): the word sets 0 and
 * is shown back, numbers keep their range, anything else is refused. */
struct word_opts {
	uint64_t batch;
};
static const struct opt_desc word_desc[] = {
	{ .name = "batch", .type = OPT_UINT, .offset = offsetof(struct word_opts, batch),
	  .def = "auto", .min = 1, .max = 100, .zero_word = "auto" },
	{ .name = NULL },
};

static void test_opt_zero_word(void **state)
{
	struct word_opts o = { .batch = 7 };
	char err[ERRLEN], buf[64];

	(void)state;
	assert_int_equal(opt_defaults(word_desc, &o, err, sizeof(err)), 0);
	assert_int_equal(o.batch, 0);
	opt_format(&word_desc[0], &o, buf, sizeof(buf));
	assert_string_equal(buf, "auto");
	assert_int_equal(opt_set(&word_desc[0], &o, "64", err, sizeof(err)), 0);
	assert_int_equal(o.batch, 64);
	opt_format(&word_desc[0], &o, buf, sizeof(buf));
	assert_string_equal(buf, "64");
	assert_int_equal(opt_set(&word_desc[0], &o, "0", err, sizeof(err)), -ERANGE);
	assert_int_equal(opt_set(&word_desc[0], &o, "often", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "or auto"));
	assert_int_equal(opt_set(&word_desc[0], &o, "auto", err, sizeof(err)), 0);
	assert_int_equal(o.batch, 0);
}

/* msg_read_in_place loads from every cache line of the payload up to its
 * length: a message whose last line lies in an unreadable page faults
 * (in a child), one that ends before that page does not. */
static int read_in_place_child(const unsigned char *msg, size_t len)
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);	/* cmocka's handler would catch it */
		msg_read_in_place(msg, len);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFSIGNALED(st) ? WTERMSIG(st) : 0;
}

static void test_msg_read_in_place(void **state)
{
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char *m = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)state;
	assert_true(m != MAP_FAILED);
	assert_int_equal(mprotect(m + pg, (size_t)pg, PROT_NONE), 0);
	/* a 4 KiB message starting 128 bytes into the page: its last line is past it */
	assert_int_equal(read_in_place_child(m + 128, 4096), SIGSEGV);
	assert_int_equal(read_in_place_child(m + 128, (size_t)pg - 128), 0);
	assert_int_equal(read_in_place_child(m + pg - 64, 64), 0);	/* the header's line only */
	munmap(m, 2 * (size_t)pg);
}

/* The cost of tracing from interleaved pairs: the median of the pairs'
 * ratios, their spread, and separable only when every pair agrees on the
 * side of 1. */
static void test_trace_perturbation(void **state)
{
	struct trace_result tr = { .on = true };
	const double slower[3] = { 1.20, 1.10, 1.15 }, mixed[3] = { 0.92, 1.31, 1.05 },
		     faster[2] = { 0.8, 0.9 };

	(void)state;
	trace_perturbation(&tr, slower, 3);
	assert_true(fabs(tr.perturbation - 1.15) < 1e-9);
	assert_true(fabs(tr.perturbation_lo - 1.10) < 1e-9 && fabs(tr.perturbation_hi - 1.20) < 1e-9);
	assert_int_equal(tr.perturbation_pairs, 3);
	assert_true(tr.perturbation_separable);
	trace_perturbation(&tr, mixed, 3);
	assert_true(fabs(tr.perturbation - 1.05) < 1e-9);
	assert_false(tr.perturbation_separable);
	trace_perturbation(&tr, faster, 2);
	assert_true(fabs(tr.perturbation - 0.85) < 1e-9);
	assert_true(tr.perturbation_separable);
	tr = (struct trace_result){ .on = false };
	trace_perturbation(&tr, slower, 3);
	assert_int_equal(tr.perturbation_pairs, 0);	/* not traced: nothing to say */
}

static void test_placement_parse(void **state)
{
	struct pin_spec pin;
	struct sched_spec s;
	char err[ERRLEN];

	(void)state;
	assert_int_equal(pin_parse("none", &pin, err, sizeof(err)), 0);
	assert_int_equal(pin.mode, PIN_NONE);
	assert_int_equal(pin_parse("same", &pin, err, sizeof(err)), 0);
	assert_int_equal(pin.server_cpu, pin.client_cpu);
	assert_int_equal(pin_parse("0:0", &pin, err, sizeof(err)), 0);
	assert_int_not_equal(pin_parse("0:4000", &pin, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "CPU 4000"));
	assert_int_not_equal(pin_parse("bogus", &pin, err, sizeof(err)), 0);
	assert_int_equal(sched_parse("fifo:50", &s, err, sizeof(err)), 0);
	assert_int_equal(s.prio, 50);
	assert_int_not_equal(sched_parse("fifo", &s, err, sizeof(err)), 0);
	assert_int_not_equal(sched_parse("fifo:100", &s, err, sizeof(err)), 0);
	assert_int_not_equal(sched_parse("other:3", &s, err, sizeof(err)), 0);
	assert_int_not_equal(sched_parse("deadline", &s, err, sizeof(err)), 0);
}

static void test_msg_fill_check(void **state)
{
	unsigned char buf[333];

	(void)state;
	for (size_t len = MSG_HDR_SIZE; len <= sizeof(buf); len += 37) {
		msg_fill(buf, len, 42, true);
		assert_int_equal(msg_check_payload(buf, len, 42), 0);
		if (len > MSG_HDR_SIZE) {
			assert_int_not_equal(msg_check_payload(buf, len, 43), 0);
			buf[len - 1] ^= 1;
			assert_int_equal(msg_check_payload(buf, len, 42), len);
		}
	}
}

static void test_edit_distance(void **state)
{
	(void)state;
	assert_int_equal(edit_distance("pipe", "pipe"), 0);
	assert_int_equal(edit_distance("pip", "pipe"), 1);
	assert_int_equal(edit_distance("unix-strem", "unix-stream"), 1);
	assert_int_equal(edit_distance("abc", "xyz"), 3);
}

/* transport_validate: the batch operations come in pairs, on top of the
 * one-message operations they batch; every registered transport passes. */
static void test_transport_batch_ops(void **state)
{
	const struct transport *ring = transport_find("ring"), *nzc = transport_find("null-zc");
	struct transport t;
	char err[256];

	(void)state;
	assert_non_null(ring);
	assert_non_null(nzc);
	assert_int_equal(transports_validate(err, sizeof(err)), 0);
	t = *ring;
	t.commit_n = NULL;
	assert_int_equal(transport_validate(&t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "reserve_n with commit_n"));
	t = *ring;
	t.release_n = NULL;
	assert_int_equal(transport_validate(&t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "peek_n with release_n"));
	t = *nzc;
	t.caps &= ~TP_ZEROCOPY;
	t.peek = NULL;
	t.release = NULL;
	assert_int_equal(transport_validate(&t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "peek_n with release_n, and peek/release"));
	t = *ring;
	t.reserve_n = NULL;
	t.commit_n = NULL;
	t.peek_n = NULL;
	t.release_n = NULL;
	assert_int_equal(transport_validate(&t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "(runs)"));
	t.runs = NULL;
	assert_int_equal(transport_validate(&t, err, sizeof(err)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hist_error_bound),
		cmocka_unit_test(test_hist_buckets),
		cmocka_unit_test(test_hist_merge_empty),
		cmocka_unit_test(test_parse_numbers),
		cmocka_unit_test(test_opt_table),
		cmocka_unit_test(test_opt_zero_word),
		cmocka_unit_test(test_msg_read_in_place),
		cmocka_unit_test(test_trace_perturbation),
		cmocka_unit_test(test_placement_parse),
		cmocka_unit_test(test_msg_fill_check),
		cmocka_unit_test(test_edit_distance),
		cmocka_unit_test(test_transport_batch_ops),
	};

	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
