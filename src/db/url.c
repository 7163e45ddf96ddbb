// SPDX-License-Identifier: MIT
/* Store URLs: which store a run goes to, and how a URL is shown. A
 * password in a URL (postgresql://user:PASSWORD@host/db, ?password=...) is
 * never printed, stored or written to a result file: every message and
 * every command line recorded shows it as ***. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

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

/* The user info of a URL: [*ui, *at) between "://" and the last '@' before
 * the query; false when there is none. */
static bool userinfo(const char *url, const char **ui, const char **at)
{
	const char *s = strstr(url, "://"), *end;

	if (!s)
		return false;
	s += 3;
	end = s + strcspn(s, "?#");
	*at = NULL;
	for (const char *p = s; p < end; p++)
		if (*p == '@')
			*at = p;
	*ui = s;
	return *at != NULL;
}

/* The value of a password=... parameter: [*v, *e). */
static bool password_param(const char *from, const char **v, const char **e)
{
	for (const char *p = strpbrk(from, "?&"); p; p = strpbrk(p + 1, "?&")) {
		if (strncasecmp(p + 1, "password=", 9))
			continue;
		*v = p + 10;
		*e = *v + strcspn(*v, "&#");
		return true;
	}
	return false;
}

void db_url_redact(const char *url, char *out, size_t len)
{
	const char *ui, *at, *colon, *v, *e, *rest = url;
	size_t off = 0;

	if (!len)
		return;
	out[0] = '\0';
	if (userinfo(url, &ui, &at) && (colon = memchr(ui, ':', (size_t)(at - ui)))) {
		off += (size_t)snprintf(out, len, "%.*s:***", (int)(colon - url), url);
		rest = at;
	}
	while (off < len && password_param(rest, &v, &e)) {
		off += (size_t)snprintf(out + off, len - off, "%.*s***", (int)(v - rest), rest);
		rest = e;
	}
	if (off < len)
		snprintf(out + off, len - off, "%s", rest);
}

void db_url_secret(const char *url, char *out, size_t len)
{
	const char *ui, *at, *colon, *v, *e;

	snprintf(out, len, "%s", "");
	if (userinfo(url, &ui, &at) && (colon = memchr(ui, ':', (size_t)(at - ui))))
		snprintf(out, len, "%.*s", (int)(at - colon - 1), colon + 1);
	else if (password_param(url, &v, &e))
		snprintf(out, len, "%.*s", (int)(e - v), v);
}

void db_scrub(const struct db *db, char *msg, size_t len)
{
	size_t sl = strlen(db->secret);
	char *p, *from = msg;

	if (!sl)
		return;
	while ((p = strstr(from, db->secret))) {
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
