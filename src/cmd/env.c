// SPDX-License-Identifier: MIT
/* `ipclab env [-f text|json] [--check [--sample D] [--pin P]]`: the machine
 * as result files record it (src/report/envcmd.c builds both forms), or
 * what on it makes figures noisy (src/core/envcheck*.c,
 * src/report/envcheck_out.c). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cmd.h"
#include "ipclab/envcheck.h"
#include "ipclab/placement.h"
#include "../report/env_json.h"
#include "../report/envcheck_out.h"

#define SAMPLE_MAX_NS (60 * NSEC_PER_SEC)

static int env_usage(FILE *f)
{
	fputs("usage: ipclab env [-f text|json] [--check [--sample D] [--pin P]]\n"
	      "The machine as every result file records it (\"env\"), with warnings for what\n"
	      "distorts measurements here.\n"
	      "  -f, --format FMT   text (default) or json (the \"env\" object of a result file)\n"
	      "      --check        instead: what here makes figures noisy (governor, boost, SMT,\n"
	      "                     isolation, irqbalance, idle states, hugepages, RT throttling,\n"
	      "                     timer slack, steal, interrupts, busy tasks), one line each\n"
	      "                     with ok/warn/bad/n/a and the command that fixes it; exit 0\n"
	      "      --sample D     with --check: watch steal and busy tasks for D (default 2s)\n"
	      "      --pin P        with --check: the endpoints' CPUs as run --pin takes them\n"
	      "                     (none, same, split, S:C; default split)\n"
	      "  -h, --help\n", f);
	return 0;
}

struct env_args {
	const char *format;
	bool check;
	uint64_t sample_ns;
	bool sample_set;
	struct pin_spec pin;
	bool pin_set;
};

/* --check: the endpoints' CPUs (split, or same on a machine of one CPU),
 * the watch, and the report; exit 0 whatever it found. */
static int env_check(const struct env_args *a)
{
	struct envc_opts o = { .sys_root = "/sys", .proc_root = "/proc",
			       .sample_ns = a->sample_set ? a->sample_ns : 2 * NSEC_PER_SEC,
			       .pin_text = a->pin.text, .self_pid = (int)getpid(),
			       .cpus = { a->pin.server_cpu, a->pin.client_cpu } };
	struct env_checks ck;
	int ret;

	env_check_run(&o, &ck);
	if (!strcmp(a->format, "json")) {
		json_t *obj = env_check_json(&ck);

		ret = !obj || json_dumpf(obj, stdout, JSON_INDENT(2));
		json_decref(obj);
		ret |= fputc('\n', stdout) == EOF;
	} else {
		ret = env_check_text(stdout, &ck);
	}
	if (fflush(stdout) || ret)
		return say_error("env", "cannot write the report");
	return 0;
}

static int env_option(struct env_args *a, int opt)
{
	char err[ERRLEN];

	switch (opt) {
	case 'f':
		if (strcmp(optarg, "text") && strcmp(optarg, "json"))
			return cmd_usage_error("env", "-f %s: expected text or json", optarg);
		a->format = optarg;
		return 0;
	case 'c':
		a->check = true;
		return 0;
	case 's':
		if (parse_duration(optarg, &a->sample_ns) || !a->sample_ns ||
		    a->sample_ns > SAMPLE_MAX_NS)
			return cmd_usage_error("env", "--sample %s: expected a time from 1ms to 60s, e.g. --sample 500ms",
					       optarg);
		a->sample_set = true;
		return 0;
	case 'p':
		if (pin_parse(optarg, &a->pin, err, sizeof(err)))
			return cmd_usage_error("env", "%s", err);
		if (a->pin.mode == PIN_NONE)
			a->pin.server_cpu = a->pin.client_cpu = -1;
		a->pin_set = true;
		return 0;
	}
	return cmd_usage_error("env", "unknown option; see ipclab env --help");
}

/* split, or same where this process may use one CPU only */
static void default_pin(struct pin_spec *pin)
{
	char err[ERRLEN];

	if (pin_parse("split", pin, err, sizeof(err)))
		(void)!pin_parse("same", pin, err, sizeof(err));
}

int cmd_env(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "check", no_argument, NULL, 'c' },
		{ "sample", required_argument, NULL, 's' },
		{ "pin", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct env_args a = { .format = "text" };
	const char *format;
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
		if ((ret = env_option(&a, opt)))
			return ret;
	}
	if (optind < argc)
		return cmd_usage_error("env", "unexpected argument '%s'; ipclab env takes options only",
				 argv[optind]);
	if ((a.sample_set || a.pin_set) && !a.check)
		return cmd_usage_error("env", "%s goes with --check: ipclab env --check %s ...",
				       a.sample_set ? "--sample" : "--pin", a.sample_set ? "--sample" : "--pin");
	if (a.check) {
		if (!a.pin_set)
			default_pin(&a.pin);
		return env_check(&a);
	}
	format = a.format;
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
