// SPDX-License-Identifier: MIT
/* `ipclab list` puts a transport under the heading of its group (struct
 * transport's group), whatever its name: a transport named like another
 * group's lands in its own, a group with no transport has no heading, and
 * a group out of range is refused at start-up (transport_validate). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ipclab/transport.h"
#include "ipclab/util.h"
#include "../../src/cmd/cmd.h"

static const struct transport odd_kernel = { .name = "shm-but-a-socket", .summary = "k",
					     .caps = TP_STREAM, .group = TP_GROUP_KERNEL };
static const struct transport odd_shm = { .name = "zz-fast", .summary = "s", .caps = TP_DGRAM,
					  .group = TP_GROUP_SHM };
static const struct transport odd_lib = { .name = "ringo", .summary = "l", .caps = TP_DGRAM,
					  .group = TP_GROUP_LIBRARY };
static const struct transport odd_ring = { .name = "aaa", .summary = "r", .caps = TP_DGRAM,
					   .group = TP_GROUP_RING };

/* The list of tps, as `ipclab list` prints it (owned by the caller). */
static char *listed(const struct transport *const *tps, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	list_transports(f, tps, n);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* The heading the line of transport name is under, in text. */
static void assert_under(const char *text, const char *name, const char *heading)
{
	char want[64], line[96];
	const char *at, *h, *p;

	snprintf(line, sizeof(line), "\n  %s ", name);
	at = strstr(text, line);
	assert_non_null(at);
	for (h = NULL, p = text; (p = strstr(p, "\n ")) && p < at; p++)
		if (p[2] != ' ')
			h = p + 2;
	assert_non_null(h);
	snprintf(want, sizeof(want), "%s:\n", heading);
	if (strncmp(h, want, strlen(want)))
		fail_msg("%s is under '%.*s', expected '%s'", name, (int)strcspn(h, "\n"), h, heading);
}

static void test_group_not_name(void **state)
{
	const struct transport *const tps[] = { &odd_ring, &odd_lib, &odd_shm, &odd_kernel };
	char *text = listed(tps, ARRAY_SIZE(tps));
	const char *k, *s, *l, *r;

	(void)state;
	assert_under(text, "shm-but-a-socket", "kernel objects");
	assert_under(text, "zz-fast", "shared memory");
	assert_under(text, "ringo", "libraries");
	assert_under(text, "aaa", "libipcring");
	/* the groups in their order, whatever the order of tps */
	k = strstr(text, "\n kernel objects:\n");
	s = strstr(text, "\n shared memory:\n");
	l = strstr(text, "\n libraries:\n");
	r = strstr(text, "\n libipcring:\n");
	assert_true(!strncmp(text, "transports:\n", 12) && k && k < s && s < l && l < r);
	free(text);
}

static void test_empty_group_no_heading(void **state)
{
	const struct transport *const tps[] = { &odd_lib, &odd_kernel };
	char *text = listed(tps, ARRAY_SIZE(tps));

	(void)state;
	assert_null(strstr(text, "shared memory:"));
	assert_null(strstr(text, "libipcring:"));
	assert_under(text, "ringo", "libraries");
	free(text);
}

/* Every registered transport has a known group; one out of range is refused. */
static void test_group_checked(void **state)
{
	struct transport t = *transport_find("pipe");
	char err[ERRLEN];

	(void)state;
	for (size_t i = 0; i < n_transports; i++)
		assert_true((unsigned)transports[i]->group < TP_GROUP_N);
	assert_int_equal(transport_validate(&t, err, sizeof(err)), 0);
	t.group = TP_GROUP_N;
	assert_int_equal(transport_validate(&t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "group"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_group_not_name),
		cmocka_unit_test(test_empty_group_no_heading),
		cmocka_unit_test(test_group_checked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
