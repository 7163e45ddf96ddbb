// SPDX-License-Identifier: MIT
/* The results store's text handling (src/db/url.c, store.c): a password in
 * a URL shown as *** however the URL is spelt, the password scrubbed from
 * any message, the store a URL names, and --label parsing. */
#include <errno.h>
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
	redacts("postgresql://u:a?b#c@h/db", "postgresql://u:***@h/db");
	redacts("postgresql://u@h/db?password=a#b&x=1", "postgresql://u@h/db?password=***&x=1");
	redacts("postgresql://u@h/db?pass%77ord=a", "postgresql://u@h/db?pass%77ord=***");
	redacts("postgresql://u@h/db?sslpassword=k", "postgresql://u@h/db?sslpassword=***");
	redacts("postgresql://u@h/db", "postgresql://u@h/db");
	redacts("results.db", "results.db");
	redacts("user:pw@host", "user:pw@host");	/* not a URL: as it is */
}

/* The secrets db_url_secrets finds in url, longest first, joined by '|'. */
static void secrets(const char *url, const char *want)
{
	struct db db = { 0 };
	char got[1024] = "";

	assert_int_equal(db_url_secrets(&db, url), 0);
	for (unsigned i = 0; i < db.nsecret; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? "|" : "", db.secret[i]);
	assert_string_equal(got, want);
	db_secrets_free(&db);
}

static void test_secret_scrub(void **state)
{
	struct db db = { 0 };
	char msg[128], url[512], pw[320], out[512];

	secrets("postgresql://u:hunter2@h/db", "hunter2");
	secrets("postgresql://u@h/db?password=xy", "xy");
	secrets("postgresql://u:a?b#c@h/db", "a?b#c");	/* libpq reads to the '@' */
	secrets("postgresql://u@h/db?sslmode=require&password=a#b", "a#b");
	secrets("postgresql://u@h/db?pass%77ord=xyz&sslpassword=k", "xyz|k");
	secrets("results.db", "");
	assert_int_equal(db_secret_add(&db, "hunter2", 7), 0);
	snprintf(msg, sizeof(msg), "auth failed for hunter2 (hunter2)");
	db_scrub(&db, msg, sizeof(msg));
	assert_string_equal(msg, "auth failed for *** (***)");
	db_secrets_free(&db);
	assert_int_equal(db_secret_add(&db, "xy", 2), 0);
	snprintf(msg, sizeof(msg), "xy:xy");	/* shorter than ***: the message grows */
	db_scrub(&db, msg, sizeof(msg));
	assert_string_equal(msg, "***:***");
	db_secrets_free(&db);
	assert_int_equal(db_secret_add(&db, "*", 1), 0);	/* a secret inside *** ends too */
	snprintf(msg, sizeof(msg), "a*b");
	db_scrub(&db, msg, sizeof(msg));
	assert_string_equal(msg, "a***b");
	db_secrets_free(&db);
	/* a password past 255 bytes, whole */
	memset(pw, 'q', 300);
	memcpy(pw + 290, "TAILSECRET", 11);
	snprintf(url, sizeof(url), "postgresql://u:%s@h/db", pw);
	assert_int_equal(db_url_secrets(&db, url), 0);
	assert_string_equal(db.secret[0], pw);
	snprintf(out, sizeof(out), "said %s.", pw);
	db_scrub(&db, out, sizeof(out));
	assert_string_equal(out, "said ***.");
	db_url_redact(url, out, sizeof(out));
	assert_string_equal(out, "postgresql://u:***@h/db");
	db_secrets_free(&db);
}

static void test_pg_check(void **state)
{
	char err[256];

	assert_int_equal(db_url_pg_check("postgresql://u:p?w#d@h/db", "x", err, sizeof(err)), 0);
	assert_int_equal(db_url_pg_check("postgresql://u:p%40w%2Fd@h/db", "x", err, sizeof(err)), 0);
	assert_int_equal(db_url_pg_check("postgresql://u@h/db?host=/run", "x", err, sizeof(err)), 0);
	assert_int_equal(db_url_pg_check("postgresql://u:p@w@h/db", "x", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "%40"));
	assert_int_equal(db_url_pg_check("postgresql://u:p/w@h/db", "x", err, sizeof(err)), -EINVAL);
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
		cmocka_unit_test(test_pg_check),
		cmocka_unit_test(test_default_url),
		cmocka_unit_test(test_labels),
	};

	return cmocka_run_group_tests_name("results store: URLs and labels", tests, NULL, NULL) ? 1 : 0;
}
