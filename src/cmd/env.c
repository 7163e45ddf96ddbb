// SPDX-License-Identifier: MIT
/* `ipclab env [-f table|json] [--check [--sample D] | --floors] [--pin P]`:
 * the machine as result files record it (src/report/envcmd.c builds both
 * forms), what on it makes figures noisy (src/core/envcheck*.c,
 * src/report/envcheck_out.c), or its floors (src/core/floors*.c). */
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli_opt.h"
#include "cmd.h"
#include "ipclab/envcheck.h"
#include "ipclab/floors.h"
#include "ipclab/placement.h"
#include "../report/env_json.h"
#include "../report/envcheck_out.h"
#include "dbcmd.h"
#include "env_calibrate.h"

#define SAMPLE_MAX_NS (60 * NSEC_PER_SEC)

struct env_args {
	const char *format;
	bool check, floors;
	uint64_t sample_ns;
	bool sample_set;
	struct pin_spec pin;
	bool pin_set;
	bool calibrate, db_shared;	/* --calibrate, --db-shared */
	uint64_t runs;			/* --runs */
	bool runs_set;
	const char *db;			/* --db */
};

#define EA(f) offsetof(struct env_args, f)
const size_t env_args_size = sizeof(struct env_args);

static int env_usage(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	(void)o, (void)arg, (void)args, (void)ctx;
	fputs("usage: ipclab env [-f table|json] [--check [--sample D] | --floors] [--pin P]\n"
	      "       ipclab env --calibrate [--runs N] [--db URL]\n"
	      "The machine as every result file records it (\"env\"), with warnings for what\n"
	      "distorts measurements here.\n", stdout);
	cli_help(stdout, env_options, FMT_ENV);
	return -1;
}

static int env_pin(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	struct env_args *a = args;
	char err[ERRLEN];

	(void)o, (void)ctx;
	if (pin_parse(arg, &a->pin, err, sizeof(err)))
		return cmd_usage_error("env", "%s", err);
	if (a->pin.mode == PIN_NONE)
		a->pin.server_cpu = a->pin.client_cpu = -1;
	a->pin_set = true;
	return 0;
}

const struct cli_opt env_options[] = {
	{ .name = "format", .short_name = 'f', .has_arg = required_argument, .metavar = "FMT",
	  .help = "{formats} (json: the \"env\" object of a result file)", .kind = CLI_CALL,
	  .call = cli_opt_format, .id = FMT_ENV, .offset = EA(format), .def = "table",
	  .values = "@formats" },
	{ .name = "check", .has_arg = no_argument, .kind = CLI_FLAG, .offset = EA(check),
	  .help = "instead: what here makes figures noisy (governor, boost, SMT,\n"
		  "isolation, irqbalance, idle states, hugepages, RT throttling,\n"
		  "timer slack, steal, interrupts, busy tasks), one line each\n"
		  "with ok/warn/bad/n/a and the command that fixes it; exit 0" },
	{ .name = "floors", .has_arg = no_argument, .kind = CLI_FLAG, .offset = EA(floors),
	  .help = "instead: the floors on the endpoints' CPUs (median, p10, p90):\n"
		  "cache-line round trip, futex wake-to-run onto an idle CPU\n"
		  "and onto a busy one, a system call (-f json: the record's\n"
		  "env.floors, as run --floors writes it)" },
	{ .name = "sample", .has_arg = required_argument, .metavar = "D", .kind = CLI_NUMBER,
	  .type = OPT_DURATION, .offset = EA(sample_ns), .min = 1, .max = SAMPLE_MAX_NS,
	  .set_offset = EA(sample_set), .flags = CLI_MARK_SET,
	  .bad = "expected a time from 1ms to 60s, e.g. --sample 500ms",
	  .help = "with --check: watch steal and busy tasks for D (default 2s)",
	  .values = "500ms 2s 10s" },
	{ .name = "pin", .has_arg = required_argument, .metavar = "P", .kind = CLI_CALL,
	  .call = env_pin, .values = "none same split 0:1",
	  .help = "with --check or --floors: the endpoints' CPUs as run --pin\n"
		  "takes them (none, same, split, S:C; default split)" },
	{ .name = "calibrate", .has_arg = no_argument, .kind = CLI_FLAG, .offset = EA(calibrate),
	  .help = "instead: this machine's run-to-run drift, from separate runs\n"
		  "of a null ping-pong unpinned and a pipe ping-pong split (each\n"
		  "run's median), stored labelled kind=calibration; compare of one\n"
		  "run a side calls a change within it run-to-run noise" },
	{ .name = "runs", .has_arg = required_argument, .metavar = "N", .kind = CLI_NUMBER,
	  .type = OPT_UINT, .offset = EA(runs), .min = 3, .max = 64, .set_offset = EA(runs_set),
	  .flags = CLI_MARK_SET, .bad = "expected 3 to 64 runs, e.g. --runs 6",
	  .help = "with --calibrate: separate runs of each cell (default 6)", .values = "6 12" },
	{ .name = "db", .has_arg = required_argument, .metavar = "URL", .kind = CLI_TEXT,
	  .offset = EA(db), .values = "@file",
	  .help = "with --calibrate: the store (default $IPCLAB_DB or the default file)" },
	DB_SHARED_ROW(.kind = CLI_FLAG, .offset = EA(db_shared)),
	{ .name = "help", .short_name = 'h', .has_arg = no_argument, .help = "this text",
	  .kind = CLI_CALL, .call = env_usage },
	{ 0 },
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

/* split, or same where this process may use one CPU only */
static void default_pin(struct pin_spec *pin)
{
	char err[ERRLEN];

	if (pin_make(PIN_SPLIT, pin, err, sizeof(err)))
		(void)!pin_make(PIN_SAME, pin, err, sizeof(err));
}

/* The two CPUs of --pin (split by default) that floors and canary use. */
static void env_cpus(const struct env_args *a, int cpus[2])
{
	struct pin_spec pin = a->pin;
	int want[2];

	if (!a->pin_set)
		default_pin(&pin);
	want[0] = pin.server_cpu;
	want[1] = pin.client_cpu;
	floors_pick_cpus(want, 2, cpus);
}

/* --floors: measured on the endpoints' CPUs; -f json the record's env.floors. */
static int env_floors(const struct env_args *a)
{
	struct floors fl;
	int cpus[2], ret;

	env_cpus(a, cpus);
	floors_measure(cpus, &fl);
	if (!strcmp(a->format, "json")) {
		json_t *obj = floors_json(&fl);

		ret = !obj || json_dumpf(obj, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
		json_decref(obj);
		ret |= fputc('\n', stdout) == EOF;
	} else {
		ret = floors_text(stdout, &fl);
	}
	if (fflush(stdout) || ret)
		return say_error("env", "cannot write the report");
	return 0;
}

/* Options that go together, and with what. */
static int env_args_check(const struct env_args *a)
{
	if (a->calibrate && (a->check || a->floors || a->pin_set))
		return cmd_usage_error("env", "--calibrate runs its own cells; leave out --check, --floors and --pin");
	if ((a->runs_set || a->db || a->db_shared) && !a->calibrate)
		return cmd_usage_error("env", "--runs, --db and --db-shared go with --calibrate: ipclab env --calibrate --runs 6");
	if (a->check && a->floors)
		return cmd_usage_error("env", "--check and --floors are two reports; ask for one at a time");
	if (a->sample_set && !a->check)
		return cmd_usage_error("env", "--sample goes with --check: ipclab env --check --sample ...");
	if (a->pin_set && !a->check && !a->floors)
		return cmd_usage_error("env", "--pin goes with --check or --floors: ipclab env --floors --pin ...");
	return 0;
}

int cmd_env(int argc, char **argv)
{
	struct env_args a = { 0 };
	const char *format;
	struct env_info env;
	int cpus[2];
	int ret = cli_defaults(env_options, &a) ? 2 : cli_parse(env_options, argc, argv, &a, "env", true);

	if (ret)
		return ret < 0 ? 0 : ret;
	if (optind < argc)
		return cmd_usage_error("env", "unexpected argument '%s'; ipclab env takes options only",
				 argv[optind]);
	ret = env_args_check(&a);
	if (ret)
		return ret;
	if (a.calibrate)
		return env_calibrate(a.db, a.db_shared, a.runs_set ? (unsigned)a.runs : CAL_RUNS_DEFAULT);
	if (a.floors)
		return env_floors(&a);
	if (a.check) {
		if (!a.pin_set)
			default_pin(&a.pin);
		return env_check(&a);
	}
	format = a.format;
	env_collect(&env);
	env_cpus(&a, cpus);
	canary_measure(cpus, &env.canary[0]);	/* as a run records it at its start */
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
