// SPDX-License-Identifier: MIT
/* The option tables at work: defaults, getopt_long's tables made from a
 * command's rows, each value into its field, and --help (cli_opt.h). The
 * dumps for the completion and the man page's check are in cli_dump.c. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli_opt.h"
#include "cmd.h"
#include "ipclab/pattern.h"
#include "ipclab/util.h"

#define CLI_MAX 96	/* rows in one table */

/* What getopt_long returns for row i: its short name, else 256 + i. */
static int row_val(const struct cli_opt *t, size_t i)
{
	return t[i].short_name ? t[i].short_name : 256 + (int)i;
}

static const struct cli_opt *row_of(const struct cli_opt *t, int val)
{
	for (size_t i = 0; t[i].name; i++)
		if (row_val(t, i) == val)
			return &t[i];
	return NULL;
}

const char *cli_shown(const struct cli_opt *o)
{
	static char buf[80];

	if (o->short_name)
		snprintf(buf, sizeof(buf), "-%c", o->short_name);
	else
		snprintf(buf, sizeof(buf), "--%s", o->name);
	return buf;
}

static int say_bad(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int say_bad(const char *cmd, const char *fmt, ...)
{
	char msg[ERRLEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return cmd ? cmd_usage_error(cmd, "%s", msg) : usage_error("%s", msg);
}

static int parse_typed(enum opt_type type, const char *s, uint64_t *v)
{
	switch (type) {
	case OPT_DURATION:
		return parse_duration(s, v);
	case OPT_SIZE:
		return parse_size(s, v);
	default:
		return parse_count(s, v);
	}
}

int cli_defaults(const struct cli_opt *t, void *args)
{
	struct cli_ctx none = { 0, NULL, NULL };
	int ret = 0;

	for (; t->name; t++) {
		char *field = (char *)args + t->offset;
		uint64_t v = 0;

		if (!t->def)
			continue;
		if (t->kind == CLI_TEXT) {
			memcpy(field, &t->def, sizeof(t->def));	/* never written: lists are copied */
		} else if (t->kind == CLI_NUMBER) {
			if (parse_typed(t->type, t->def, &v))
				ret = -EINVAL;
			memcpy(field, &v, sizeof(v));
		} else if (t->kind == CLI_CALL && t->call(t, (char *)t->def, args, &none)) {
			ret = -EINVAL;	/* its parser takes the text as it is */
		}
	}
	return ret;
}

static int set_number(const struct cli_opt *o, const char *arg, void *args, const char *cmd)
{
	uint64_t v;

	if (parse_typed(o->type, arg, &v) || v < o->min || (o->max && v > o->max))
		return say_bad(cmd, "%s %s: %s", cli_shown(o), arg, o->bad);
	memcpy((char *)args + o->offset, &v, sizeof(v));
	if (o->flags & CLI_MARK_SET)
		*(bool *)((char *)args + o->set_offset) = true;
	return 0;
}

static int apply(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	switch (o->kind) {
	case CLI_TEXT:
		memcpy((char *)args + o->offset, &arg, sizeof(arg));
		return 0;
	case CLI_FLAG:
		*(bool *)((char *)args + o->offset) = true;
		return 0;
	case CLI_NUMBER:
		return set_number(o, arg, args, ctx->cmd);
	case CLI_CALL:
		return o->call(o, arg, args, ctx);
	}
	return 0;
}

int cli_opt_format(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	const char *name = format_pick((unsigned)o->id, arg, ctx->cmd);

	if (!name)
		return 2;
	memcpy((char *)args + o->offset, &name, sizeof(name));
	return 0;
}

int cli_opt_output(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	if (output_check(arg, ctx->cmd))
		return 2;
	memcpy((char *)args + o->offset, &arg, sizeof(arg));
	return 0;
}

/* getopt_long's tables of t; false if t has too many rows. */
static bool make_getopt(const struct cli_opt *t, bool posix, struct option *lo, char *shorts)
{
	size_t n = 0, s = 0;

	if (posix)
		shorts[s++] = '+';
	shorts[s++] = ':';
	for (; t[n].name; n++) {
		if (n >= CLI_MAX)
			return false;
		lo[n] = (struct option){ t[n].name, t[n].has_arg, NULL, row_val(t, n) };
		if (!t[n].short_name)
			continue;
		shorts[s++] = t[n].short_name;
		if (t[n].has_arg != no_argument)
			shorts[s++] = ':';
		if (t[n].has_arg == optional_argument)
			shorts[s++] = ':';
	}
	lo[n] = (struct option){ 0 };
	shorts[s] = '\0';
	return true;
}

int cli_parse(const struct cli_opt *t, int argc, char **argv, void *args, const char *cmd,
	      bool operands)
{
	struct cli_how how = { .cmd = cmd, .operands = operands };

	return cli_parse_how(t, argc, argv, args, &how);
}

int cli_parse_how(const struct cli_opt *t, int argc, char **argv, void *args,
		  const struct cli_how *how)
{
	struct option lo[CLI_MAX + 1];
	char shorts[3 * CLI_MAX + 3];
	const char *cmd = how->cmd, *sp = cmd ? " " : "", *cn = cmd ? cmd : "";
	struct cli_ctx ctx = { argc, argv, cmd };
	int opt, ret;

	if (!make_getopt(t, how->posix, lo, shorts))
		return say_bad(cmd, "internal: more than %d options in one table", CLI_MAX);
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		const struct cli_opt *o = row_of(t, opt);

		if ((opt == ':' || opt == '?' || !o) && how->bad)
			return how->bad(argv[optind - 1]);
		if (opt == ':')
			return say_bad(cmd, "option '%s' needs a value; see ipclab%s%s --help",
				       argv[optind - 1], sp, cn);
		if (opt == '?' || !o)
			return say_bad(cmd, "unknown option '%s'; see ipclab%s%s --help",
				       argv[optind - 1], sp, cn);
		ret = apply(o, optarg, args, &ctx);
		if (ret)
			return ret;
	}
	if (!how->operands && optind < argc)
		return say_bad(cmd, "unexpected argument '%s'; see ipclab%s%s --help", argv[optind],
			       sp, cn);
	return 0;
}

/* help's text, {patterns} and {formats} replaced, lines after the first
 * indented to the column of the first. */
static void put_help(FILE *f, const char *h, unsigned formats, int col)
{
	char names[256];

	for (; *h; h++) {
		if (*h == '\n') {
			fprintf(f, "\n%*s", col, "");
		} else if (!strncmp(h, "{patterns}", 10)) {
			for (size_t i = 0; i < n_patterns; i++)
				fprintf(f, "%s%s", i ? ", " : "", patterns[i]->name);
			h += 9;
		} else if (!strncmp(h, "{formats}", 9)) {
			format_list(formats, ", ", ", ", names, sizeof(names));
			fputs(names, f);
			h += 8;
		} else {
			fputc(*h, f);
		}
	}
}

void cli_help_text(const struct cli_opt *o, unsigned formats, char *buf, size_t len)
{
	FILE *f = fmemopen(buf, len, "w");

	buf[0] = '\0';
	if (!f)
		return;
	put_help(f, o->help ? o->help : "", formats, 0);
	fclose(f);
	for (char *p = buf; (p = strchr(p, '\n'));)
		*p = ' ';
}

#define HELP_COL 25

void cli_help(FILE *f, const struct cli_opt *t, unsigned formats)
{
	for (; t->name; t++) {
		char label[96];
		int n;

		n = snprintf(label, sizeof(label), "  %s%c%s--%s%s%s", t->short_name ? "-" : " ",
			     t->short_name ? t->short_name : ' ', t->short_name ? ", " : "  ",
			     t->name, t->metavar && strncmp(t->metavar, "[=", 2) ? " " : "",
			     t->metavar ? t->metavar : "");
		if (n < HELP_COL - 1)
			fprintf(f, "%-*s", HELP_COL, label);
		else
			fprintf(f, "%s  ", label);
		put_help(f, t->help ? t->help : "", formats, HELP_COL);
		if (t->def && !(t->flags & CLI_HIDE_DEFAULT))
			fprintf(f, "; default %s", t->def);
		fputc('\n', f);
	}
}
