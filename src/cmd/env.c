// SPDX-License-Identifier: MIT
/* `ipclab env [-f text|json]`: the machine as result files record it
 * (src/report/envcmd.c builds both forms). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cmd.h"
#include "../report/env_json.h"

static int env_usage(FILE *f)
{
	fputs("usage: ipclab env [-f text|json]\n"
	      "The machine as every result file records it (\"env\"), with warnings for what\n"
	      "distorts measurements here.\n"
	      "  -f, --format FMT   text (default) or json (the \"env\" object of a result file)\n"
	      "  -h, --help\n", f);
	return 0;
}

int cmd_env(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *format = "text";
	struct env_info env;
	int opt, ret;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":f:h", opts, NULL)) != -1) {
		if (opt == 'h')
			return env_usage(stdout);
		if (opt == ':')
			return cmd_usage_error("env", "option '%s' needs a value; see ipclab env --help",
					 argv[optind - 1]);
		if (opt == '?')
			return cmd_usage_error("env", "unknown option '%s'; see ipclab env --help", argv[optind - 1]);
		if (strcmp(optarg, "text") && strcmp(optarg, "json"))
			return cmd_usage_error("env", "-f %s: expected text or json", optarg);
		format = optarg;
	}
	if (optind < argc)
		return cmd_usage_error("env", "unexpected argument '%s'; ipclab env takes options only",
				 argv[optind]);
	env_collect(&env);
	if (!strcmp(format, "json")) {
		json_t *obj = env_json_object(&env);

		ret = !obj || json_dumpf(obj, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
		json_decref(obj);
		ret |= fputc('\n', stdout) == EOF;
	} else {
		ret = env_text(stdout, &env);
	}
	if (fflush(stdout) || ret)
		return say_error("env", "cannot write the report");
	return 0;
}
