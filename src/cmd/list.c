// SPDX-License-Identifier: MIT
/* `ipclab list`: every transport and pattern, one line each, with
 * capabilities, the largest message here and private options. Transports
 * come in their groups (struct transport's group: kernel objects, shared
 * memory, libraries, libipcring, whatever their names), each under a
 * heading indented by one space, so that whatever reads the
 * list keeps finding a transport as a line "  NAME  CAPS ..." in the
 * "transports:" section. -f json: the same as data, with the formats and
 * every command's options, for tools and the completion. */
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli_opt.h"
#include "cmd.h"
#include "ipclab/pattern.h"

static const struct { unsigned bit; const char *name; } cap_names[] = {
		{ TP_STREAM, "stream" }, { TP_DGRAM, "dgram" }, { TP_LOSSY, "lossy" },
		{ TP_MULTI_CLIENT, "multi-client" }, { TP_POLLABLE, "pollable" },
		{ TP_NAMED, "named" }, { TP_ZEROCOPY, "zero-copy" },
		{ TP_THREAD_ONLY, "thread-only" },
		{ TP_IN_PROCESS, "self-test" }, { TP_SPINS, "spins" },
		{ TP_NO_EINTR, "no-eintr" }, { TP_ZEROCOPY_SEND, "zero-copy-send" },
};

static void caps_text(unsigned caps, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(cap_names) && off < len; i++)
		if (caps & cap_names[i].bit)
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? "," : "",
						cap_names[i].name);
}

static void print_options(FILE *f, const struct opt_desc *o)
{
	for (; o && o->name; o++)
		fprintf(f, "      -O %s=%s%s%s  %s\n", o->name, o->def && *o->def ? o->def : "0",
			o->choices ? "  (" : "", o->choices ? o->choices : "", o->help);
}

static const char *const group_names[TP_GROUP_N] = {
	[TP_GROUP_KERNEL] = "kernel objects",
	[TP_GROUP_SHM] = "shared memory",
	[TP_GROUP_LIBRARY] = "libraries",
	[TP_GROUP_RING] = "libipcring",
};

/* The largest message here at the transport's defaults (0: no limit known). */
static size_t max_here(const struct transport *tp)
{
	_Alignas(16) char buf[4096] = { 0 };	/* the transport's defaults */
	char err[ERRLEN];

	if (tp->max_msg && tp->opts_size <= sizeof(buf) &&
	    !opt_defaults(tp->options, buf, err, sizeof(err)))
		return tp->max_msg(buf);
	return 0;
}

static void print_transport(FILE *f, const struct transport *tp)
{
	char caps[160], maxs[32];
	size_t max = max_here(tp);

	caps_text(tp->caps, caps, sizeof(caps));
	if (max)
		fmt_bytes(maxs, sizeof(maxs), (double)max);
	else
		snprintf(maxs, sizeof(maxs), "-");
	fprintf(f, "  %-18s %-44s max %-9s %s\n", tp->name, caps, maxs, tp->summary);
	print_options(f, tp->options);
}

void list_transports(FILE *f, const struct transport *const *tps, size_t n)
{
	fprintf(f, "transports:\n");
	for (int g = 0; g < TP_GROUP_N; g++) {
		bool heading = false;

		for (size_t i = 0; i < n; i++) {
			if (tps[i]->group != (enum tp_group)g)
				continue;
			if (!heading)
				fprintf(f, " %s:\n", group_names[g]);
			heading = true;
			print_transport(f, tps[i]);
		}
	}
}

static void print_text(void)
{
	list_transports(stdout, transports, n_transports);
	printf("patterns:\n");
	for (size_t i = 0; i < n_patterns; i++) {
		printf("  %-18s latency: %-8s %s\n", patterns[i]->name,
		       lat_kind_key(patterns[i]->lat_kind), patterns[i]->summary);
		print_options(stdout, patterns[i]->options);
	}
}

/* ---- -f json: the same, and the formats and each command's options ---- */

/* "a|b|c" as ["a", "b", "c"], or null. */
static json_t *choices_json(const char *c)
{
	json_t *a = c ? json_array() : json_null();

	while (c && *c) {
		size_t l = strcspn(c, "|");

		json_array_append_new(a, json_stringn(c, l));
		c += l + (c[l] == '|');
	}
	return a;
}

static json_t *options_json(const struct opt_desc *o)
{
	static const char *const types[] = { [OPT_BOOL] = "bool", [OPT_UINT] = "count",
		[OPT_SIZE] = "size", [OPT_DURATION] = "duration", [OPT_STRING] = "string",
		[OPT_CHOICE] = "choice" };
	json_t *a = json_array();

	for (; o && o->name; o++)
		json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:I, s:o, s:o, s:s}", "name", o->name,
			"type", types[o->type], "default", o->def && *o->def ? o->def : "0",
			"min", (json_int_t)o->min, "max", o->max ? json_integer((json_int_t)o->max) : json_null(),
			"choices", choices_json(o->choices), "help", o->help));
	return a;
}

static json_t *transport_json(const struct transport *tp)
{
	json_t *caps = json_array();
	size_t max = max_here(tp);

	for (size_t i = 0; i < ARRAY_SIZE(cap_names); i++)
		if (tp->caps & cap_names[i].bit)
			json_array_append_new(caps, json_string(cap_names[i].name));
	return json_pack("{s:s, s:s, s:s, s:o, s:o, s:o}", "name", tp->name, "group",
			 group_names[tp->group], "summary", tp->summary, "caps", caps,
			 "max_msg_bytes", max ? json_integer((json_int_t)max) : json_null(),
			 "options", options_json(tp->options));
}

static json_t *formats_json(void)
{
	static const struct { unsigned bit; const char *name; } fmt_cmds[] = {
		{ FMT_RUN, "run" }, { FMT_SUITE, "suite" }, { FMT_COMPARE, "compare" },
		{ FMT_ENV, "env" }, { FMT_HISTORY, "history" }, { FMT_DB, "db" },
		{ FMT_LIST, "list" },
	};
	json_t *a = json_array();

	for (const struct format_name *f = format_names; f->name; f++) {
		json_t *cmds = json_array();

		for (size_t i = 0; i < ARRAY_SIZE(fmt_cmds); i++)
			if (f->cmds & fmt_cmds[i].bit)
				json_array_append_new(cmds, json_string(fmt_cmds[i].name));
		json_array_append_new(a, json_pack("{s:s, s:o, s:s, s:o}", "name", f->name, "alias",
			f->alias ? json_string(f->alias) : json_null(), "summary", f->summary,
			"commands", cmds));
	}
	return a;
}

static json_t *commands_json(void)
{
	json_t *a = json_array();

	for (const struct cli_command *c = cli_commands; c->name; c++) {
		json_t *opts = json_array();

		for (const struct cli_opt *o = c->opts; o->name; o++) {
			char sh[3] = { '-', o->short_name, '\0' }, help[1024];

			cli_help_text(o, c->formats, help, sizeof(help));
			json_array_append_new(opts, json_pack("{s:s, s:o, s:o, s:o, s:o, s:s}", "name",
				o->name, "short", o->short_name ? json_string(sh) : json_null(),
				"value", o->metavar ? json_string(o->metavar) : json_null(),
				"default", o->def ? json_string(o->def) : json_null(),
				"completes", o->values ? json_string(o->values) : json_null(),
				"help", help));
		}
		json_array_append_new(a, json_pack("{s:s, s:o}", "name", c->name, "options", opts));
	}
	return a;
}

static int print_json(void)
{
	json_t *root = json_object(), *tps = json_array(), *pats = json_array();
	int ret;

	for (size_t i = 0; i < n_transports; i++)
		json_array_append_new(tps, transport_json(transports[i]));
	for (size_t i = 0; i < n_patterns; i++)
		json_array_append_new(pats, json_pack("{s:s, s:s, s:s, s:o}", "name", patterns[i]->name,
			"latency", lat_kind_key(patterns[i]->lat_kind), "summary", patterns[i]->summary,
			"options", options_json(patterns[i]->options)));
	json_object_set_new(root, "transports", tps);
	json_object_set_new(root, "patterns", pats);
	json_object_set_new(root, "formats", formats_json());
	json_object_set_new(root, "commands", commands_json());
	ret = json_dumpf(root, stdout, JSON_INDENT(2)) || fputc('\n', stdout) == EOF;
	json_decref(root);
	return ret;
}

struct list_args {
	const char *format;
};

#define LA(f) offsetof(struct list_args, f)
const size_t list_args_size = sizeof(struct list_args);

static int list_usage(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	(void)o, (void)arg, (void)args, (void)ctx;
	fputs("usage: ipclab list [-f table|json]\n"
	      "Every transport and pattern with capabilities and options; as JSON also the\n"
	      "formats and every command's options (for tools and completion).\n", stdout);
	cli_help(stdout, list_options, FMT_LIST);
	return -1;
}

const struct cli_opt list_options[] = {
	{ .name = "format", .short_name = 'f', .has_arg = required_argument, .metavar = "FMT",
	  .help = "{formats}", .kind = CLI_CALL, .call = cli_opt_format, .id = FMT_LIST,
	  .offset = LA(format), .def = "table", .values = "@formats" },
	{ .name = "help", .short_name = 'h', .has_arg = no_argument, .help = "this text",
	  .kind = CLI_CALL, .call = list_usage },
	{ 0 },
};

int cmd_list(int argc, char **argv)
{
	struct list_args a = { 0 };
	int ret = cli_defaults(list_options, &a) ? 2 : cli_parse(list_options, argc, argv, &a, "list", true);

	if (ret)
		return ret < 0 ? 0 : ret;
	if (optind < argc)
		return usage_error("list takes no arguments");
	if (!strcmp(a.format, "json"))
		ret = print_json();
	else
		print_text();
	if (fflush(stdout) || ret)
		return say_error("list", "cannot write the list");
	return 0;
}
