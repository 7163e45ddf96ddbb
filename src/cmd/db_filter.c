// SPDX-License-Identifier: MIT
/* Filters over the store for `ipclab history` and `ipclab db`: the cell
 * options as run spells them, and labels, a start time, a machine, runs. */
#include <ctype.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ipclab/safe_print.h"
#include "cli_opt.h"
#include "cmd.h"
#include "db_filter.h"

const char *db_text_safe(char *buf, size_t len, const char *s)
{
	return safe_str(buf, len, s);
}

/* The words of a comma list into vals (at most DB_MAX_LIST). */
static int split(char *arg, const char **vals, unsigned *n, const char *what, const char *cmd)
{
	char *save = NULL;

	for (char *w = strtok_r(arg, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		if (*n >= DB_MAX_LIST)
			return cmd_usage_error(cmd, "%s: at most %d values", what, DB_MAX_LIST);
		vals[(*n)++] = w;
	}
	if (!*n)
		return cmd_usage_error(cmd, "%s: expected a comma-separated list", what);
	return 0;
}

static int sizes(struct filter_args *fa, char *arg, const char *cmd)
{
	const char *words[DB_MAX_LIST];
	unsigned n = 0;
	uint64_t v;

	if (split(arg, words, &n, "-s", cmd))
		return 2;
	if (fa->f.nsize + n > DB_MAX_LIST)
		return cmd_usage_error(cmd, "-s: at most %d sizes", DB_MAX_LIST);
	for (unsigned i = 0; i < n; i++) {
		if (parse_size(words[i], &v))
			return cmd_usage_error(cmd, "-s %s: expected sizes in bytes, e.g. 64,4k,1M", words[i]);
		snprintf(fa->sizes[fa->f.nsize], sizeof(fa->sizes[0]), "%" PRIu64, v);
		fa->f.size[fa->f.nsize] = fa->sizes[fa->f.nsize];
		fa->f.nsize++;
	}
	return 0;
}

static int tp_words(struct filter_args *fa, char *arg, const char *cmd)
{
	const char *words[DB_MAX_LIST];
	unsigned n = 0;

	if (split(arg, words, &n, "-t", cmd))
		return 2;
	if (fa->f.ntransport + fa->ntglob + n > DB_MAX_LIST)
		return cmd_usage_error(cmd, "-t: at most %d transports", DB_MAX_LIST);
	for (unsigned i = 0; i < n; i++) {
		if (strpbrk(words[i], "*?["))
			fa->tglob[fa->ntglob++] = words[i];
		else
			fa->f.transport[fa->f.ntransport++] = words[i];
	}
	if (fa->ntglob) {	/* globs are matched here, so every word is */
		for (unsigned i = 0; i < fa->f.ntransport; i++)
			fa->tglob[fa->ntglob++] = fa->f.transport[i];
		fa->f.ntransport = 0;
	}
	return 0;
}

bool filter_transport_ok(const struct filter_args *fa, const char *transport)
{
	for (unsigned i = 0; i < fa->ntglob; i++)
		if (!fnmatch(fa->tglob[i], transport, 0))
			return true;
	return fa->ntglob == 0;
}

/* 2025-06-30[THH[:MM[:SS]]][Z] as it is, or 7d / 12h / 30min / 2w ago. */
static int since(struct filter_args *fa, const char *arg, const char *cmd)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd";
	size_t n = strlen(arg), i;
	char *end;
	double v;

	for (i = 0; i < n && i < sizeof(shape) - 1; i++)
		if (shape[i] == 'd' ? !isdigit((unsigned char)arg[i]) : arg[i] != shape[i])
			break;
	if (i >= 10 && (i == n || (i == sizeof(shape) - 1 && !strcmp(arg + i, "Z")))) {
		snprintf(fa->since, sizeof(fa->since), "%.*s", (int)i, arg);
		fa->f.since = fa->since;
		return 0;
	}
	v = strtod(arg, &end);
	if (end == arg || !(v >= 0) || v > 1e6 || !*end)
		goto bad;
	if (!strcmp(end, "w"))
		v *= 7 * 86400;
	else if (!strcmp(end, "d"))
		v *= 86400;
	else if (!strcmp(end, "h"))
		v *= 3600;
	else if (!strcmp(end, "min") || !strcmp(end, "m"))
		v *= 60;
	else if (strcmp(end, "s"))
		goto bad;
	time_t t = time(NULL) - (time_t)v;
	struct tm tm;

	strftime(fa->since, sizeof(fa->since), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
	fa->f.since = fa->since;
	return 0;
bad:
	return cmd_usage_error(cmd, "--since %s: expected a date (2025-06-30, 2025-06-30T12:00, UTC) or an age (7d, 12h, 30min, 2w)",
			       arg);
}

static int run_ids(struct filter_args *fa, char *arg, const char *cmd)
{
	const char *words[DB_MAX_LIST];
	unsigned n = 0;
	uint64_t v;

	if (split(arg, words, &n, "--run", cmd))
		return 2;
	for (unsigned i = 0; i < n; i++) {
		if (parse_u64(words[i], &v) || !v || v > INT64_MAX || fa->f.nrun_ids >= DB_MAX_LIST)
			return cmd_usage_error(cmd, "--run %s: expected run numbers as ipclab db ls lists them", words[i]);
		fa->f.run_ids[fa->f.nrun_ids++] = (int64_t)v;
	}
	return 0;
}

int filter_cli_option(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	return filter_option((struct filter_args *)((char *)args + o->offset), o->id, arg, ctx->cmd);
}

int filter_option(struct filter_args *fa, int opt, char *arg, const char *cmd)
{
	struct db_filter *f = &fa->f;
	char err[ERRLEN];

	switch (opt) {
	case 't': return tp_words(fa, arg, cmd);
	case 'p': return split(arg, f->pattern, &f->npattern, "-p", cmd);
	case 'e': return split(arg, f->endpoints, &f->nendpoints, "-e", cmd);
	case FO_PIN: return split(arg, f->pin, &f->npin, "--pin", cmd);
	case FO_SCHED: return split(arg, f->sched, &f->nsched, "--sched", cmd);
	case FO_CLIENTS: return split(arg, f->clients, &f->nclients, "--clients", cmd);
	case 's': return sizes(fa, arg, cmd);
	case FO_SINCE: return since(fa, arg, cmd);
	case FO_RUN: return run_ids(fa, arg, cmd);
	case FO_DB:
		fa->url = arg;
		return 0;
	case FO_MACHINE:
		f->machine = arg;
		return 0;
	case FO_LABEL:
		if (db_labels_parse(arg, f->labels, &f->nlabels, err, sizeof(err)))
			return cmd_usage_error(cmd, "%s", err);
		return 0;
	}
	return 0;
}
