// SPDX-License-Identifier: MIT
/* Store URLs: which store a run goes to, and how a URL is shown. A
 * password in a URL (postgresql://user:PASSWORD@host/db, ?password=...) is
 * never printed, stored or written to a result file: every message and
 * every command line recorded shows it as ***, and ipclab's argv (what
 * other users read in /proc/PID/cmdline) holds the URL so shown from the
 * start of main on. A password of any length, holding any byte. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "ipclab/util.h"
#include "db.h"

/* mkdir -p of path's directory, the last parts 0700. */
static void make_dirs(char *path)
{
	for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		(void)mkdir(path, 0700);
		*p = '/';
	}
}

const char *db_default_url(const char *url, bool make_dir, char *buf, size_t len)
{
	const char *env = getenv("IPCLAB_DB"), *home = getenv("HOME"), *xdg = getenv("XDG_DATA_HOME");

	if (url && *url)
		return url;
	if (env && *env)
		return env;
	if (xdg && xdg[0] == '/')
		snprintf(buf, len, "%s/ipclab/results.db", xdg);
	else if (home && home[0] == '/')
		snprintf(buf, len, "%s/.local/share/ipclab/results.db", home);
	else
		return NULL;
	if (make_dir)
		make_dirs(buf);
	return buf;
}

/* The user info of a URL: [*ui, *at) from "://" to the word's last '@',
 * since a password may hold '/', '?', '#' and '@' (libpq reads to the
 * first '@' unless a '/' comes first: never further); false when there is
 * none. */
static bool userinfo(const char *url, const char **ui, const char **at)
{
	const char *s = strstr(url, "://");

	if (!s)
		return false;
	*ui = s + 3;
	*at = strrchr(*ui, '@');
	return *at != NULL;
}

/* The password of the user info: [*pw, *end); false when there is none. */
static bool userinfo_password(const char *url, const char **pw, const char **end)
{
	const char *ui, *at, *colon;

	if (!userinfo(url, &ui, &at) || !(colon = memchr(ui, ':', (size_t)(at - ui))))
		return false;
	*pw = colon + 1;
	*end = at;
	return true;
}

static int hex(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Is the parameter at p (up to its '=') key, percent-encoded or not
 * (libpq decodes a parameter's name)? *v: its value. */
static bool param_is(const char *p, const char *key, const char **v)
{
	for (;; key++) {
		int c = (unsigned char)*p++;

		if (c == '%' && hex(p[0]) >= 0 && hex(p[1]) >= 0) {
			c = hex(p[0]) * 16 + hex(p[1]);
			p += 2;
		}
		if (!*key) {
			*v = p;
			return c == '=';
		}
		if (c != *key && !(c >= 'A' && c <= 'Z' && c + 32 == *key))
			return false;
	}
}

/* The value of a password=... or sslpassword=... parameter: [*v, *e),
 * to the next '&' as libpq reads it. */
static bool password_param(const char *from, const char **v, const char **e)
{
	for (const char *p = strpbrk(from, "?&"); p; p = strpbrk(p + 1, "?&")) {
		if (!param_is(p + 1, "password", v) && !param_is(p + 1, "sslpassword", v))
			continue;
		*e = *v + strcspn(*v, "&");
		return true;
	}
	return false;
}

void db_url_redact(const char *url, char *out, size_t len)
{
	const char *pw, *at, *v, *e, *rest = url;
	size_t off = 0;

	if (!len)
		return;
	out[0] = '\0';
	if (userinfo_password(url, &pw, &at)) {
		off += (size_t)snprintf(out, len, "%.*s***", (int)(pw - url), url);
		rest = at;
	}
	while (off < len && password_param(rest, &v, &e)) {
		off += (size_t)snprintf(out + off, len - off, "%.*s***", (int)(v - rest), rest);
		rest = e;
	}
	if (off < len)
		snprintf(out + off, len - off, "%s", rest);
}

int db_url_pg_check(const char *url, const char *where, char *err, size_t len)
{
	const char *pw, *at, *s = strstr(url, "://");
	size_t n = s ? strcspn(s + 3, "@/") : 0;

	/* libpq's user info ends at the first '@', and there is none when a
	 * '/' comes first: what follows would be read as the host, and shown
	 * in libpq's messages */
	if (userinfo_password(url, &pw, &at) && at != s + 3 + n)
		return errf(err, len, EINVAL, "--db %s: the password holds '@' or '/' (or a parameter an '@'), which libpq would read as the host; write them %%40 and %%2F, or better keep the password out of the URL: ~/.pgpass or PGPASSWORD",
			    where);
	return 0;
}

int db_secret_add(struct db *db, const char *s, size_t n)
{
	char *copy;
	unsigned i;

	if (!n)
		return 0;
	for (i = 0; i < db->nsecret; i++)
		if (strlen(db->secret[i]) == n && !memcmp(db->secret[i], s, n))
			return 0;
	if (db->nsecret == DB_MAX_SECRETS || !(copy = strndup(s, n)))
		return -ENOMEM;
	/* longest first: a secret inside another is scrubbed after it */
	for (i = db->nsecret++; i > 0 && strlen(db->secret[i - 1]) < n; i--)
		db->secret[i] = db->secret[i - 1];
	db->secret[i] = copy;
	return 0;
}

int db_url_secrets(struct db *db, const char *url)
{
	const char *pw, *at, *v, *e, *rest = url;
	int ret = 0;

	if (userinfo_password(url, &pw, &at)) {
		ret = db_secret_add(db, pw, (size_t)(at - pw));
		rest = at;
	}
	while (!ret && password_param(rest, &v, &e)) {
		ret = db_secret_add(db, v, (size_t)(e - v));
		rest = e;
	}
	return ret;
}

void db_secrets_free(struct db *db)
{
	for (unsigned i = 0; i < db->nsecret; i++) {
		explicit_bzero(db->secret[i], strlen(db->secret[i]));
		free(db->secret[i]);
		db->secret[i] = NULL;
	}
	db->nsecret = 0;
}

/* Every occurrence of secret in msg as ***, in place. */
static void scrub_one(const char *secret, char *msg, size_t len)
{
	size_t sl = strlen(secret);
	char *p, *from = msg;

	while ((p = strstr(from, secret))) {
		size_t tail = strlen(p + sl) + 1;

		if (sl >= 3) {
			memcpy(p, "***", 3);
			memmove(p + 3, p + sl, tail);
		} else if (p + 3 + tail <= msg + len) {
			memmove(p + 3, p + sl, tail);
			memcpy(p, "***", 3);
		} else {
			memset(p, '*', sl);	/* no room to grow: hidden in place */
			from = p + sl;
			continue;
		}
		from = p + 3;
	}
}

void db_scrub(const struct db *db, char *msg, size_t len)
{
	for (unsigned i = 0; i < db->nsecret; i++)
		scrub_one(db->secret[i], msg, len);
}

void db_url_hide_argv(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		size_t n = strlen(argv[i]), cap = 4 * n + 16;
		char *shown = malloc(cap), *copy;

		if (!shown)
			return;
		db_url_redact(argv[i], shown, cap);
		if (strcmp(shown, argv[i]) && (copy = strdup(argv[i]))) {
			argv_overwrite(argv[i], shown);
			argv[i] = copy;	/* the process's own copy, for its whole life */
		}
		free(shown);
	}
}
