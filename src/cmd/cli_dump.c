// SPDX-License-Identifier: MIT
/* What else the option tables make: the bash completion's functions, the
 * list the man page is checked against, and the tables' own check. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli_opt.h"
#include "cmd.h"
#include "run.h"
#include "ipclab/reporter.h"
#include "ipclab/util.h"

static const size_t run_args_size = sizeof(struct run_args);

const struct cli_command cli_commands[] = {
	{ "run", "_ipclab_run", "RUN OPTIONS", run_options, &run_args_size, FMT_RUN, false },
	{ "compare", "_ipclab_compare", "COMPARE OPTIONS", compare_options, &compare_args_size,
	  FMT_COMPARE, true },
	{ "env", "_ipclab_env", "ENV OPTIONS", env_options, &env_args_size, FMT_ENV, false },
	{ "list", "_ipclab_list", "LIST OPTIONS", list_options, &list_args_size, FMT_LIST, false },
	{ "plot", "_ipclab_plot", "PLOT OPTIONS", plot_options, &plot_args_size, 0, true },
	{ "report", "_ipclab_report", "REPORT OPTIONS", report_options, &report_args_size, 0, true },
	{ "history", "_ipclab_history", "HISTORY OPTIONS", history_options, &history_args_size,
	  FMT_HISTORY, true },
	{ "db", "_ipclab_db_options", "DB OPTIONS", db_options, &db_args_size, FMT_DB, true },
	{ "suite seeds", "_ipclab_suite", "SUITE OPTIONS", suite_options, &suite_args_size, FMT_SUITE,
	  false },
	{ "suite fidelity", "_ipclab_suite_fidelity", "SUITE FIDELITY OPTIONS", fidelity_options,
	  &fidelity_args_size, FMT_SUITE, false },
	{ "serve", "_ipclab_serve", "SERVE OPTIONS", serve_options, &serve_args_size, 0, false },
	{ "clean", "_ipclab_clean", "CLEAN OPTIONS", clean_options, &clean_args_size, 0, false },
	{ NULL, NULL, NULL, NULL, 0, 0, false },
};

/* Does the row write its value at its offset (so that no other may)? */
static bool stores(const struct cli_opt *o)
{
	return o->kind != CLI_CALL || o->call == cli_opt_format || o->call == cli_opt_output;
}

static int check_row(const struct cli_opt *t, const struct cli_opt *o, char *err, size_t errlen)
{
	for (const struct cli_opt *p = t; p < o; p++) {
		if (stores(p) && stores(o) && p->offset == o->offset)
			return errf(err, errlen, EINVAL, "--%s and --%s: one field", p->name, o->name);
		if (!strcmp(p->name, o->name))
			return errf(err, errlen, EINVAL, "--%s: two rows", o->name);
		if (o->short_name && p->short_name == o->short_name)
			return errf(err, errlen, EINVAL, "-%c: two rows", o->short_name);
	}
	if (o->kind == CLI_CALL && !o->call)
		return errf(err, errlen, EINVAL, "--%s: no parser", o->name);
	if (o->call == cli_opt_format && (o->id & FMT_RUN))
		for (const struct format_name *f = format_names; f->name; f++)
			if ((f->cmds & FMT_RUN) && !reporter_find(f->name))
				return errf(err, errlen, EINVAL, "format %s: no reporter", f->name);
	if (o->kind == CLI_NUMBER && !o->bad)
		return errf(err, errlen, EINVAL, "--%s: no error text", o->name);
	if ((o->kind == CLI_FLAG) != (o->has_arg == no_argument) && o->kind != CLI_CALL)
		return errf(err, errlen, EINVAL, "--%s: a flag takes no value, others one", o->name);
	if ((o->has_arg == no_argument) != !o->metavar)
		return errf(err, errlen, EINVAL, "--%s: a value and its name go together", o->name);
	return 0;
}

int cli_check(char *err, size_t errlen)
{
	for (const struct cli_command *c = cli_commands; c->name; c++) {
		void *scratch = calloc(1, *c->size);
		int ret = scratch ? 0 : -ENOMEM;

		for (const struct cli_opt *o = c->opts; !ret && o->name; o++)
			ret = check_row(c->opts, o, err, errlen);
		if (!ret && cli_defaults(c->opts, scratch))
			ret = errf(err, errlen, EINVAL, "%s: a default does not parse", c->name);
		free(scratch);
		if (ret)
			return ret;
	}
	return 0;
}

void cli_dump_options(FILE *f)
{
	for (const struct cli_command *c = cli_commands; c->name; c++)
		for (const struct cli_opt *o = c->opts; o->name; o++)
			fprintf(f, "%s\t%s\t%s%c\t--%s\n", c->name, c->man, o->short_name ? "-" : "",
				o->short_name ? o->short_name : '-', o->name);
}

/* The bash that completes o's value (the arm of `case $prev`), or "". */
static void value_action(const struct cli_opt *o, unsigned formats, char *buf, size_t len)
{
	const char *v = o->values;
	char names[160];

	buf[0] = '\0';
	if (o->has_arg == no_argument)
		return;
	if (o->has_arg == optional_argument) {
		/* only a file or directory may come as the next word */
		if (!v || (strcmp(v, "@file") && strcmp(v, "@dir")))
			return;
	}
	if (!v)
		snprintf(buf, len, "return ;;");
	else if (!strcmp(v, "@transports") || !strcmp(v, "@transport-names"))
		snprintf(buf, len, "_ipclab_comma_list \"$cur\" \"%s$(_ipclab_list_names \"$exe\" transports)\"; return ;;",
			 strcmp(v, "@transports") ? "" : "all ");
	else if (!strcmp(v, "@patterns"))
		snprintf(buf, len, "_ipclab_comma_list \"$cur\" \"$(_ipclab_list_names \"$exe\" patterns)\"; return ;;");
	else if (!strcmp(v, "@keys"))
		snprintf(buf, len, "COMPREPLY=($(compgen -W \"$(_ipclab_option_keys \"$exe\")\" -- \"$cur\"))\n"
			 "\t\tcompopt -o nospace 2>/dev/null; return ;;");
	else if (!strcmp(v, "@file"))
		snprintf(buf, len, "COMPREPLY=($(compgen -f -- \"$cur\")); return ;;");
	else if (!strcmp(v, "@dir"))
		snprintf(buf, len, "COMPREPLY=($(compgen -d -- \"$cur\")); return ;;");
	else if (!strcmp(v, "@formats") && (format_list(formats, " ", " ", names, sizeof(names)), 1))
		snprintf(buf, len, "COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return ;;", names);
	else if (!strncmp(v, "list:", 5))
		snprintf(buf, len, "_ipclab_comma_list \"$cur\" \"%s\"; return ;;", v + 5);
	else
		snprintf(buf, len, "COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return ;;", v);
}

/* `case $prev in`: one arm per distinct action, its options joined by |
 * (none: no case). */
static void dump_arms(FILE *f, const struct cli_command *c)
{
	char a[512], b[512];
	bool any = false;

	for (const struct cli_opt *o = c->opts; o->name && !any; o++) {
		value_action(o, c->formats, a, sizeof(a));
		any = a[0] != '\0';
	}
	if (!any)
		return;
	fputs("\tcase $prev in\n", f);

	for (const struct cli_opt *o = c->opts; o->name; o++) {
		bool first = true;

		value_action(o, c->formats, a, sizeof(a));
		if (!a[0])
			continue;
		for (const struct cli_opt *p = c->opts; p < o && first; p++) {
			value_action(p, c->formats, b, sizeof(b));
			first = strcmp(a, b) != 0;
		}
		if (!first)
			continue;
		fputc('\t', f);
		for (const struct cli_opt *p = o; p->name; p++) {
			value_action(p, c->formats, b, sizeof(b));
			if (strcmp(a, b))
				continue;
			if (p->short_name)
				fprintf(f, "%s-%c", p == o ? "" : "|", p->short_name);
			fprintf(f, "%s--%s", p == o && !p->short_name ? "" : "|", p->name);
		}
		fprintf(f, ")\n\t\t%s\n", a);
	}
	fputs("\tesac\n", f);
}

/* The words of the options' list, lines kept under 100 columns. */
struct words {
	FILE *f;
	size_t col;
	bool first;
};

static void word(struct words *w, const char *a, const char *b)
{
	size_t n = strlen(a) + strlen(b);

	if (!w->first && w->col + n + 1 > 96) {
		fputs("\n\t\t", w->f);
		w->col = 16;
	} else if (!w->first) {
		fputc(' ', w->f);
		w->col++;
	}
	fprintf(w->f, "%s%s", a, b);
	w->col += n;
	w->first = false;
}

static void dump_words(FILE *f, const struct cli_command *c)
{
	struct words w = { f, 33, true };
	char s[4];

	fputs("\tCOMPREPLY=($(compgen -W \"", f);
	for (const struct cli_opt *o = c->opts; o->name; o++) {
		const char *v = o->values;

		if (o->short_name && snprintf(s, sizeof(s), "-%c", o->short_name))
			word(&w, s, "");
		word(&w, "--", o->name);
		if (o->has_arg != optional_argument || !v || v[0] == '@')
			continue;
		for (const char *p = v + strspn(v, " "); *p; p += strspn(p, " ")) {
			char one[160];
			size_t l = strcspn(p, " ");

			snprintf(one, sizeof(one), "--%s=%.*s", o->name, (int)l, p);
			word(&w, one, "");
			p += l;
		}
	}
	fputs("\" -- \"$cur\"))\n", f);
}

void cli_dump_completion(FILE *f)
{
	fputs("# BEGIN made by ipclab --dump-completion from the option tables (make completion)\n", f);
	for (const struct cli_command *c = cli_commands; c->name; c++) {
		fprintf(f, "%s()\n{\n\tlocal exe=$1 cur=$2 prev=$3\n", c->fn);
		dump_arms(f, c);
		if (c->json_operands)
			fputs("\tif [[ $cur != -* ]]; then\n"
			      "\t\tCOMPREPLY=($(compgen -f -X '!*.json' -- \"$cur\") $(compgen -d -- \"$cur\"))\n"
			      "\t\treturn\n\tfi\n", f);
		dump_words(f, c);
		fputs("}\n", f);
	}
	fputs("# END made by ipclab --dump-completion\n", f);
}
