// SPDX-License-Identifier: MIT
/* `ipclab db import|export|ls`: result files into the store (the JSON
 * stays the exchange format), stored runs back out as the files they
 * were, and the runs listed with their labels. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_opt.h"
#include "cmd.h"
#include "db_filter.h"

static void db_usage(void)
{
	fputs("usage: ipclab db import [--db URL] [--label K=V]... FILE.json...\n"
	      "       ipclab db export [--db URL] [filters] [-o FILE | --dir DIR]\n"
	      "       ipclab db ls [--db URL] [filters] [-f table|json]\n"
	      "The results store (docs/history.md). import stores result files (ipclab run -f json),\n"
	      "each as one run, with the labels given, the machine and the kernel release; a file\n"
	      "already stored is not stored again. export writes stored runs back as result files:\n"
	      "one run to -o FILE (or stdout), several into DIR/run-ID.json. ls lists the runs.\n",
	      stdout);
	cli_help(stdout, db_options, FMT_DB);
	fputs("Exit status: 0 ok, 1 the store could not be reached or written, 2 bad input.\n", stdout);
}

static int db_help(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	(void)o, (void)arg, (void)args, (void)ctx;
	db_usage();
	return -1;
}

/* --dir checked when parsed, before the store is opened: an existing
 * directory must be the user's own (ipclab/outdir.h). */
static int db_opt_dir(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	char err[ERRLEN];

	(void)ctx;
	if (outdir_check("--dir", arg, err, sizeof(err)))
		return cmd_usage_error("db", "export %s", err);
	memcpy((char *)args + o->offset, &arg, sizeof(arg));
	return 0;
}

struct db_cmd {
	struct filter_args fa;
	const char *output, *dir, *format;
	bool quiet;
};

#define DA(f) offsetof(struct db_cmd, f)
const size_t db_args_size = sizeof(struct db_cmd);

const struct cli_opt db_options[] = {
	FILTER_CLI_OPTIONS(DA(fa)),
	{ .name = "output", .short_name = 'o', .has_arg = required_argument, .metavar = "FILE",
	  .help = "export: the file (atomically); ls: the listing", .kind = CLI_CALL,
	  .call = cli_opt_output, .offset = DA(output), .values = "@file" },
	{ .name = "dir", .has_arg = required_argument, .metavar = "DIR",
	  .help = "export: every run that matches, one file each",
	  .kind = CLI_CALL, .call = db_opt_dir, .offset = DA(dir), .values = "@dir" },
	{ .name = "format", .short_name = 'f', .has_arg = required_argument, .metavar = "FMT",
	  .help = "ls: {formats}", .kind = CLI_CALL, .call = cli_opt_format, .id = FMT_DB,
	  .offset = DA(format), .def = "table", .values = "@formats" },
	{ .name = "quiet", .short_name = 'q', .has_arg = no_argument,
	  .help = "import: say nothing of what was stored", .kind = CLI_FLAG, .offset = DA(quiet) },
	{ .name = "help", .short_name = 'h', .has_arg = no_argument, .help = "this text",
	  .kind = CLI_CALL, .call = db_help },
	{ 0 },
};

/* After the subcommand (argv[1]); optind is argv's. */
static int db_args(int argc, char **argv, struct db_cmd *a)
{
	int ret = cli_defaults(db_options, a) ? 2 : cli_parse(db_options, argc - 1, argv + 1, a, "db", true);

	optind++;
	return ret;
}

/* ---- import ---- */

static int db_import(struct db_cmd *a, int nfiles, char **files)
{
	struct rfile *rf = calloc((size_t)nfiles, sizeof(*rf));
	char err[ERRLEN];
	struct db *db = NULL;
	int ret = rf ? 0 : cmd_usage_error("db", "out of memory"), i;

	if (!nfiles)
		ret = cmd_usage_error("db", "import: expected result files, e.g. ipclab db import results.json");
	/* every file read and checked before any is stored */
	for (i = 0; !ret && i < nfiles; i++)
		if (rfile_load(&rf[i], files[i], NULL, err, sizeof(err)))
			ret = cmd_usage_error("db", "import %s", err);
	if (!ret)
		ret = db_cmd_open(a->fa.url, db_open_flags(true, a->fa.shared), "db", &db);
	for (int k = 0; !ret && k < nfiles; k++) {
		int64_t id;
		bool dup;

		if (db_store_tree(db, rf[k].root, a->fa.f.labels, a->fa.f.nlabels, &id, &dup, err,
				  sizeof(err)))
			ret = say_error("db", "import %s: not stored: %s", files[k], err);
		else if (!a->quiet)
			printf("%s: %s run %" PRId64 " (%zu results)\n", files[k],
			       dup ? "already stored as" : "stored as", id, rf[k].n);
	}
	for (int k = 0; rf && k < nfiles; k++)
		rfile_free(&rf[k]);
	free(rf);
	db_close(db);
	return ret;
}

/* ---- export ---- */

struct ids {
	int64_t *v;
	size_t n, cap;
};

static int got_run_id(void *arg, const struct db_run_row *row)
{
	struct ids *ids = arg;

	if (ids->n == ids->cap) {
		size_t cap = ids->cap ? ids->cap * 2 : 64;
		int64_t *v = realloc(ids->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		ids->v = v;
		ids->cap = cap;
	}
	ids->v[ids->n++] = row->id;
	return 0;
}

/* One stored run as its result file: to path (-o, or stdout), or into d
 * as run-ID.json (--dir). */
static int export_one(struct db *db, int64_t id, const char *path, const struct outdir *d)
{
	char err[ERRLEN], *text, name[64];
	struct output out;
	json_t *root;
	int ret = db_load_run(db, id, &root, err, sizeof(err));

	if (ret)
		return db_exit_status(ret) == 2 ? cmd_usage_error("db", "export: %s", err) :
						  say_error("db", "export: %s", err);
	text = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
	json_decref(root);
	if (!text)
		return say_error("db", "export: out of memory");
	snprintf(name, sizeof(name), "run-%" PRId64 ".json", id);
	ret = d ? output_open_in(&out, d, name, "db") : output_open(&out, path, "db");
	if (!ret) {
		int bad = fputs(text, out.f) == EOF || fputc('\n', out.f) == EOF;

		ret = output_commit(&out, bad, strerror(errno ? errno : EIO));
	}
	free(text);
	return ret;
}

static int db_export(struct db_cmd *a, struct db *db)
{
	struct outdir od = { .fd = -1 };
	struct ids ids = { 0 };
	char err[ERRLEN];
	int ret = 0;

	if (db_query_runs(db, &a->fa.f, got_run_id, &ids, err, sizeof(err)))
		ret = say_error("db", "export: %s", err);
	else if (!ids.n)
		ret = cmd_usage_error("db", "export: no stored run matches; see ipclab db ls");
	else if (a->dir && a->output)
		ret = cmd_usage_error("db", "export: -o FILE or --dir DIR, not both");
	else if (ids.n > 1 && !a->dir)
		ret = cmd_usage_error("db", "export: %zu runs match; name one with --run ID, or write them all with --dir DIR",
				      ids.n);
	/* a directory of the user's own, as plot -o DIR (ipclab/outdir.h) */
	else if (a->dir && outdir_open(&od, "--dir", a->dir, err, sizeof(err)))
		ret = cmd_usage_error("db", "export %s", err);
	for (size_t i = 0; !ret && i < ids.n; i++)
		ret = export_one(db, ids.v[i], a->output, a->dir ? &od : NULL);
	outdir_close(&od);
	free(ids.v);
	return ret;
}

/* ---- ls ---- */

/* What the store holds came from files: shown with control bytes as '?'. */
static int ls_row(void *arg, const struct db_run_row *r)
{
	json_t *labels = json_loads(r->labels_json, 0, NULL), *v;
	char t[4][256], kv[2][256];
	FILE *f = arg;
	const char *k;
	bool first = true;

	fprintf(f, "%6" PRId64 "  %-20s  %-16s  %-24s  %7u  %s ", r->id,
		db_text_safe(t[0], 256, r->created_utc), db_text_safe(t[1], 256, r->machine),
		db_text_safe(t[2], 256, r->kernel), r->nresults, db_text_safe(t[3], 256, r->git_rev));
	json_object_foreach(labels, k, v) {
		if (strcmp(k, "machine") && strcmp(k, "kernel") && json_is_string(v))
			fprintf(f, "%s%s=%s", first ? " " : ",", db_text_safe(kv[0], 256, k),
				db_text_safe(kv[1], 256, json_string_value(v)));
		first &= !strcmp(k, "machine") || !strcmp(k, "kernel");
	}
	fputc('\n', f);
	json_decref(labels);
	return 0;
}

static int ls_json_row(void *arg, const struct db_run_row *r)
{
	json_t *labels = json_loads(r->labels_json, 0, NULL);

	return json_array_append_new(arg, json_pack("{s:I, s:s, s:s, s:s, s:s, s:s, s:i, s:o}",
			"run", (json_int_t)r->id, "created_utc", r->created_utc, "machine", r->machine,
			"kernel", r->kernel, "ipclab_version", r->version, "ipclab_git_rev", r->git_rev,
			"results", (int)r->nresults, "labels", labels ? labels : json_object()));
}

static int db_ls(struct db_cmd *a, struct db *db)
{
	bool json = a->format && !strcmp(a->format, "json");
	json_t *arr = json ? json_array() : NULL;
	char err[ERRLEN];
	struct output out;
	int ret = output_open(&out, a->output, "db"), q;

	if (ret)
		return ret;
	if (!json)
		fprintf(out.f, "%6s  %-20s  %-16s  %-24s  %7s  %s  %s\n", "run", "created_utc", "machine",
			"kernel", "results", "git_rev", "labels");
	q = db_query_runs(db, &a->fa.f, json ? ls_json_row : ls_row, json ? (void *)arr : out.f,
			  err, sizeof(err));
	if (!q && json) {
		char *text = json_dumps(arr, JSON_INDENT(2));

		q = !text || fputs(text, out.f) == EOF || fputc('\n', out.f) == EOF;
		free(text);
	}
	json_decref(arr);
	ret = output_commit(&out, q != 0, q < 0 ? err : "");
	return ret;
}

int cmd_db(int argc, char **argv)
{
	struct db_cmd a = { 0 };
	const char *what = argc > 1 ? argv[1] : "";
	struct db *db;
	int ret;

	if (!strcmp(what, "-h") || !strcmp(what, "--help"))
		return db_usage(), 0;
	if (strcmp(what, "import") && strcmp(what, "export") && strcmp(what, "ls"))
		return cmd_usage_error("db", "expected import, export or ls; see ipclab db --help");
	ret = db_args(argc, argv, &a);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (!strcmp(what, "import"))
		return db_import(&a, argc - optind, argv + optind);
	if (optind < argc)
		return cmd_usage_error("db", "%s: unexpected argument '%s'", what, argv[optind]);
	ret = db_cmd_open(a.fa.url, db_open_flags(false, a.fa.shared), "db", &db);
	if (!ret)
		ret = !strcmp(what, "ls") ? db_ls(&a, db) : db_export(&a, db);
	db_close(db);
	return ret;
}
