// SPDX-License-Identifier: MIT
/* run --db and suite --db: the store checked before anything runs, then
 * the run's report -- the same JSON -f json writes, read back through the
 * result-file reader -- stored in one transaction with its labels. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/reporter.h"
#include "cli_opt.h"
#include "cmd.h"
#include "dbcmd.h"

int db_args_option(struct db_args *a, int opt, char *arg, int argc, char **argv)
{
	char err[ERRLEN];

	switch (opt) {
	case DB_OPT_DB:
		/* --db URL as well as --db=URL: run and suite take no operand
		 * that could follow it (suite's "seeds" is a word of its own) */
		if (!arg && optind < argc && argv[optind][0] != '-' && strcmp(argv[optind], "seeds"))
			arg = argv[optind++];
		a->on = true;
		a->url = arg;
		return 0;
	case DB_OPT_LABEL:
		if (db_labels_parse(arg, a->labels, &a->nlabels, err, sizeof(err)))
			return usage_error("%s", err);
		return 0;
	case DB_OPT_FAILED:
		a->failed = true;
		return 0;
	case DB_OPT_SHARED:
		a->shared = true;
		return 0;
	}
	return 0;
}

int db_cli_option(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	return db_args_option((struct db_args *)((char *)args + o->offset), o->id, arg, ctx->argc,
			      ctx->argv);
}

int db_cmd_open(const char *url, unsigned flags, const char *cmd, struct db **out)
{
	char buf[4096], err[ERRLEN];
	const char *u = db_default_url(url, flags & DB_OPEN_CREATE, buf, sizeof(buf));
	int ret;

	*out = NULL;
	if (!u)
		return cmd_usage_error(cmd, "--db: no store named and HOME is not set; name one, e.g. --db results.db");
	ret = db_open_url(u, flags, out, err, sizeof(err));
	if (ret)
		return db_exit_status(ret) == 2 ? cmd_usage_error(cmd, "%s", err) :
						  say_error(cmd, "%s", err);
	return 0;
}

int db_args_check(struct db_args *a, const char *cmd)
{
	const char *env = getenv("IPCLAB_DB");
	struct db *db;
	int ret;

	if (!a->on && env && *env)
		a->on = true;
	if (!a->on && (a->nlabels || a->failed || a->shared))
		return cmd_usage_error(cmd, "--label, --db-failed and --db-shared go with --db (or IPCLAB_DB): where should the run be stored?");
	if (!a->on)
		return 0;
	ret = db_cmd_open(a->url, db_open_flags(true, a->shared), cmd, &db);
	db_close(db);
	return ret;
}

/* The report as the JSON reporter writes it, parsed back. */
static json_t *report_tree_of(const struct report *rep, char *err, size_t len)
{
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	json_error_t jerr;
	json_t *root = NULL;

	if (!f) {
		errf(err, len, ENOMEM, "out of memory");
		return NULL;
	}
	if (report_json(f, rep, err, len)) {
		fclose(f);
		free(text);
		return NULL;
	}
	if (fclose(f) == 0)
		root = json_loadb(text, n, 0, &jerr);
	if (!root)
		errf(err, len, EINVAL, "the run's report does not read back: %s", jerr.text);
	free(text);
	return root;
}

int db_store_report(const struct db_args *a, const struct report *rep, int ret, bool quiet,
		    const char *cmd)
{
	char err[ERRLEN];
	struct db *db;
	int64_t id;
	bool dup;
	json_t *root;
	int r;

	if (!a->on || !rep->results || (ret && !a->failed))
		return ret;
	root = report_tree_of(rep, err, sizeof(err));
	if (!root)
		return ret ? ret : say_error(cmd, "--db: %s", err);
	r = db_cmd_open(a->url, db_open_flags(true, a->shared), cmd, &db);
	if (!r && db_store_tree(db, root, a->labels, a->nlabels, &id, &dup, err, sizeof(err)))
		r = say_error(cmd, "--db: the run was not stored: %s", err);
	else if (!r && !quiet)
		say(cmd, "stored as run %" PRId64 " in %s (%zu results)", id, db->where, rep->n);
	db_close(db);
	json_decref(root);
	return ret ? ret : r;
}
