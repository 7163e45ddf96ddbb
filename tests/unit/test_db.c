// SPDX-License-Identifier: MIT
/* The results store's text handling (src/db/url.c, store.c): a password in
 * a URL shown as *** however the URL is spelt, the password scrubbed from
 * any message, the store a URL names, and --label parsing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ipclab/util.h"
#include "db.h"

static void redacts(const char *in, const char *want)
{
	char out[512];

	db_url_redact(in, out, sizeof(out));
	assert_string_equal(out, want);
}

static void test_redact(void **state)
{
	redacts("postgresql://u:pw@h/db", "postgresql://u:***@h/db");
	redacts("postgres://u:p@ss@h:5432/db", "postgres://u:***@h:5432/db");
	redacts("postgresql://u:pa/ss@h/db", "postgresql://u:***@h/db");
	redacts("postgresql://u@h/db?password=x&sslmode=require",
		"postgresql://u@h/db?password=***&sslmode=require");
	redacts("postgresql://u:a@h/db?sslmode=require&PASSWORD=b", "postgresql://u:***@h/db?sslmode=require&PASSWORD=***");
	redacts("--db=postgresql://u:pw@/db?host=/run", "--db=postgresql://u:***@/db?host=/run");
	redacts("postgresql://u@h/db", "postgresql://u@h/db");
	redacts("results.db", "results.db");
	redacts("user:pw@host", "user:pw@host");	/* not a URL: as it is */
}

static void test_secret_scrub(void **state)
{
	struct db db = { .secret = "" };
	char msg[128];

	db_url_secret("postgresql://u:hunter2@h/db", db.secret, sizeof(db.secret));
	assert_string_equal(db.secret, "hunter2");
	snprintf(msg, sizeof(msg), "auth failed for hunter2 (hunter2)");
	db_scrub(&db, msg, sizeof(msg));
	assert_string_equal(msg, "auth failed for *** (***)");
	db_url_secret("postgresql://u@h/db?password=xy", db.secret, sizeof(db.secret));
	assert_string_equal(db.secret, "xy");
	snprintf(msg, sizeof(msg), "xy:xy");	/* shorter than ***: the message grows */
	db_scrub(&db, msg, sizeof(msg));
	assert_string_equal(msg, "***:***");
	snprintf(db.secret, sizeof(db.secret), "*");	/* a secret inside *** ends too */
	snprintf(msg, sizeof(msg), "a*b");
	db_scrub(&db, msg, sizeof(msg));
	assert_string_equal(msg, "a***b");
	db_url_secret("results.db", db.secret, sizeof(db.secret));
	assert_string_equal(db.secret, "");
}

static void test_default_url(void **state)
{
	char buf[256];

	unsetenv("IPCLAB_DB");
	unsetenv("XDG_DATA_HOME");
	setenv("HOME", "/home/x", 1);
	assert_string_equal(db_default_url(NULL, false, buf, sizeof(buf)),
			    "/home/x/.local/share/ipclab/results.db");
	assert_string_equal(db_default_url("a.db", false, buf, sizeof(buf)), "a.db");
	setenv("IPCLAB_DB", "postgresql://h/db", 1);
	assert_string_equal(db_default_url("", false, buf, sizeof(buf)), "postgresql://h/db");
	unsetenv("IPCLAB_DB");
	unsetenv("HOME");
	assert_null(db_default_url(NULL, false, buf, sizeof(buf)));
}

static void test_labels(void **state)
{
	struct db_label l[DB_MAX_LABELS];
	char err[ERRLEN], text[64];
	size_t n = 0;

	assert_int_equal(db_labels_parse("kernel=6.18-rc3,commit=abc123", l, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_string_equal(l[0].key, "kernel");
	assert_string_equal(l[1].value, "abc123");
	assert_int_equal(db_labels_parse("commit=def,note=a b", l, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 3);	/* commit replaced, note added */
	assert_string_equal(l[1].value, "def");
	assert_string_equal(l[2].value, "a b");
	assert_int_equal(db_labels_parse("x", l, &n, err, sizeof(err)), -EINVAL);
	assert_int_equal(db_labels_parse("=v", l, &n, err, sizeof(err)), -EINVAL);
	assert_int_equal(db_labels_parse("k;drop=v", l, &n, err, sizeof(err)), -EINVAL);
	assert_int_equal(db_labels_parse("k=a\nb", l, &n, err, sizeof(err)), -EINVAL);
	assert_int_equal(db_labels_parse("k=\xff", l, &n, err, sizeof(err)), -EINVAL);	/* not UTF-8 */
	n = 0;
	for (int i = 0; i < DB_MAX_LABELS - 2; i++) {
		snprintf(text, sizeof(text), "k%d=v", i);
		assert_int_equal(db_labels_parse(text, l, &n, err, sizeof(err)), 0);
	}
	assert_int_equal(db_labels_parse("one=more", l, &n, err, sizeof(err)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_redact),
		cmocka_unit_test(test_secret_scrub),
		cmocka_unit_test(test_default_url),
		cmocka_unit_test(test_labels),
	};

	return cmocka_run_group_tests_name("results store: URLs and labels", tests, NULL, NULL) ? 1 : 0;
}
