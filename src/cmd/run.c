// SPDX-License-Identifier: MIT
/* `ipclab run` (and `ipclab` with options or none): its options into
 * run_args, the default comparison, and the run itself (run_exec.c). */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_opt.h"
#include "cmd.h"
#include "run.h"
#include "ipclab/outdir.h"
#include "ipclab/reporter.h"
#include "ipclab/runner.h"
#include "ipclab/profile.h"
#include "ipclab/topology.h"
#include "ipclab/trace.h"

/* ---- options: one row each ---------------------------------------------------- */

#define RA(f) offsetof(struct run_args, f)

static int opt_help(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	(void)o, (void)arg, (void)args, (void)ctx;
	cmd_run_usage(stdout);
	return -1;
}

static int opt_version(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	(void)o, (void)arg, (void)args, (void)ctx;
	printf("ipclab %s (%s)\n", IPCLAB_VERSION, IPCLAB_GIT_REV);
	return -1;
}

/* --repeat N, or auto[=PCT][,max=ROUNDS]; 0 or 2. */
static int parse_repeat_auto(const char *arg, struct run_args *a)
{
	const char *p = arg + 4;
	char *end;
	uint64_t v;

	a->repeat_auto = true;
	a->auto_pct = 5;
	a->repeat = 30;
	if (*p == '=') {
		errno = 0;
		a->auto_pct = strtod(p + 1, &end);
		if (errno || end == p + 1 || !(a->auto_pct > 0 && a->auto_pct <= 100))
			return usage_error("--repeat %s: expected auto=PCT with PCT above 0 and at most 100, e.g. auto=5 or auto=2.5%%",
					   arg);
		p = end + (*end == '%');
	}
	if (!strncmp(p, ",max=", 5)) {
		if (parse_u64(p + 5, &v) || v < 6 || v > 1000)
			return usage_error("--repeat %s: expected max=ROUNDS from 6 (an interval needs 6) to 1000",
					   arg);
		a->repeat = (unsigned)v;
		p += strlen(p);
	}
	if (*p)
		return usage_error("--repeat %s: expected auto, auto=PCT or auto=PCT,max=ROUNDS, e.g. auto=5,max=40",
				   arg);
	return 0;
}

static int opt_repeat(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	struct run_args *a = args;
	uint64_t v;

	(void)o, (void)ctx;
	if (!strncmp(arg, "auto", 4))
		return parse_repeat_auto(arg, a);
	if (parse_u64(arg, &v) || v < 1 || v > 1000)
		return usage_error("--repeat %s: expected a number of repetitions from 1 to 1000, or auto[=PCT][,max=ROUNDS]",
				   arg);
	a->repeat = (unsigned)v;
	a->repeat_auto = false;
	return 0;
}

/* --runs N: from 2 (one run is a plain run) to 100. */
static int opt_runs(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	uint64_t v;

	(void)o, (void)ctx;
	if (parse_u64(arg, &v) || v < 2 || v > 100)
		return usage_error("--runs %s: expected a number of separate runs from 2 to 100, e.g. --runs 5",
				   arg);
	((struct run_args *)args)->runs = (unsigned)v;
	return 0;
}

static int opt_pm_qos(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	uint64_t v;

	(void)o, (void)ctx;
	if (parse_u64(arg, &v) || v > 100000000)
		return usage_error("--pm-qos %s: expected microseconds, e.g. 0 (no deep idle) or 10", arg);
	((struct run_args *)args)->pm_qos_us = (int)v;
	return 0;
}

/* --trace-span: a time (50ms) or a count of events (20k, 100000). */
static int opt_span(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	struct run_args *a = args;
	size_t n = strlen(arg);
	uint64_t v;

	(void)o, (void)ctx;
	if (n && (strchr("0123456789kKM", arg[n - 1]))) {
		if (parse_count(arg, &v) || !v || v > TRACE_EVENTS_MAX)
			return usage_error("--trace-span %s: expected a time (50ms) or a count of events from 1 to 4M (20k)",
					   arg);
		a->trace_span = (struct trace_events_opts){ .max_events = v };
	} else {
		if (parse_duration(arg, &v) || !v)
			return usage_error("--trace-span %s: expected a time above zero (50ms) or a count of events (20k)",
					   arg);
		a->trace_span = (struct trace_events_opts){ .span_ns = v };
	}
	return 0;
}

/* --trace, --trace=syscalls, --trace=events FILE.json (the word after it). */
static int opt_trace(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	struct run_args *a = args;
	char err[ERRLEN];

	(void)o;
	if (arg && !strcmp(arg, "events")) {
		if (optind >= ctx->argc || ctx->argv[optind][0] == '-')
			return usage_error("--trace=events: name the timeline's file, e.g. --trace=events timeline.json");
		if (output_check(ctx->argv[optind], NULL))
			return 2;
		a->trace_events_path = ctx->argv[optind++];
	}
	if (arg && strcmp(arg, "syscalls") && strcmp(arg, "events"))
		return usage_error("--trace=%s: expected --trace, --trace=syscalls (every syscall probed too) or --trace=events FILE.json (a timeline)",
				   arg);
	if (trace_check(err, sizeof(err)))
		return usage_error("%s", err);
	a->trace = true;
	a->trace_syscalls |= arg && !strcmp(arg, "syscalls");
	return 0;
}

/* --explain: --trace, then the largest cause tested. */
static int opt_explain(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	struct run_args *a = args;
	char err[ERRLEN];

	(void)o, (void)arg, (void)ctx;
	if (trace_check(err, sizeof(err)))
		return usage_error("--explain traces the cell: %s", err);
	a->trace = a->explain = true;
	return 0;
}

/* --profile DIR as well as --profile=DIR: run takes no operands. */
static int opt_profile(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	struct run_args *a = args;
	char err[ERRLEN];

	(void)o;
	if (!arg && optind < ctx->argc && ctx->argv[optind][0] != '-')
		arg = ctx->argv[optind++];
	if (profile_check(err, sizeof(err)))
		return usage_error("%s", err);
	/* made (0700) when the first cell opens it */
	if (arg && outdir_check("--profile", arg, err, sizeof(err)))
		return usage_error("%s", err);
	a->profile = true;
	a->profile_dir = arg;
	return 0;
}

/* --plot DIR: made (0700) after the run. */
static int opt_plot(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	char err[ERRLEN];

	(void)o, (void)ctx;
	if (outdir_check("--plot", arg, err, sizeof(err)))
		return usage_error("%s", err);
	((struct run_args *)args)->plot_dir = arg;
	return 0;
}

static int opt_token(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	struct run_args *a = args;

	(void)o, (void)ctx;
	if (strlen(arg) > REMOTE_TOKEN_MAX)
		return usage_error("--token: the token is longer than %d bytes", REMOTE_TOKEN_MAX);
	snprintf(a->token_arg, sizeof(a->token_arg), "%s", arg);
	remote_token_hide(arg);	/* and so in the result's cmdline: "--token ***" */
	a->token = a->token_arg;
	return 0;
}

static int opt_pivot(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	struct run_args *a = args;
	char err[ERRLEN];

	(void)o, (void)ctx;
	if (pivot_parse(arg, a->pivot_spec, err, sizeof(err)))
		return usage_error("%s", err);
	if (a->pivot_spec[2]->kind == F_STR)
		return usage_error("--pivot %s: the metric must be a number, e.g. cpu_pct_total or msgs_per_s", arg);
	a->pivot = arg;
	return 0;
}

static int opt_matrix_metric(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	const struct field *f[3];
	char spec[160], err[ERRLEN];

	(void)o, (void)ctx;
	snprintf(spec, sizeof(spec), "pin,pin,%s", arg);
	if (strchr(arg, ',') || pivot_parse(spec, f, err, sizeof(err)) || f[2]->kind == F_STR)
		return usage_error("--matrix-metric %s: not a numeric metric; use a key of docs/output.md, e.g. lat_p50_ns, p99 or msgs_per_s",
				   arg);
	((struct run_args *)args)->matrix_metric = f[2];
	return 0;
}

static int opt_kv(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	struct run_args *a = args;

	(void)o, (void)ctx;
	if (a->nkv >= MAX_LIST)
		return usage_error("-O: at most %d options", MAX_LIST);
	a->kv[a->nkv++] = arg;
	return 0;
}

static int opt_vmstat(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	(void)o, (void)arg, (void)args, (void)ctx;
	runner_set_tick(vmstat_line);
	return 0;
}

#define REQ required_argument
#define LIST(l, s, f, mv, h, d, v) \
	{ .name = l, .short_name = s, .has_arg = REQ, .metavar = mv, .help = h, .kind = CLI_TEXT, \
	  .offset = RA(f), .def = d, .values = v, .flags = CLI_LIST }
#define TEXT(l, f, mv, h, v) \
	{ .name = l, .has_arg = REQ, .metavar = mv, .help = h, .kind = CLI_TEXT, .offset = RA(f), \
	  .values = v }
#define FLAG(l, f, h) { .name = l, .has_arg = no_argument, .help = h, .kind = CLI_FLAG, .offset = RA(f) }
#define CALL(l, s, ha, mv, h, fn, v) \
	{ .name = l, .short_name = s, .has_arg = ha, .metavar = mv, .help = h, .kind = CLI_CALL, \
	  .call = fn, .values = v }
#define NUM(l, s, f, ty, lo, hi, mv, h, d, b, set) \
	{ .name = l, .short_name = s, .has_arg = REQ, .metavar = mv, .help = h, .kind = CLI_NUMBER, \
	  .type = ty, .offset = RA(f), .min = lo, .max = hi, .def = d, .bad = b, set }
#define SET(f) .set_offset = RA(f), .flags = CLI_MARK_SET

/* `ipclab run`: what --help shows, in its order. */
const struct cli_opt run_options[] = {
	LIST("transport", 't', transports, "LIST", "transports, 'all' or globs ('shm-*')", "all",
	     "@transports"),
	LIST("pattern", 'p', patterns, "LIST", "{patterns} (ipclab list)", "pingpong", "@patterns"),
	LIST("size", 's', sizes, "LIST",
	     "message size in bytes, header (16 B) included: 64, 4k, 1M, 1k..512k\n(ranges double)",
	     "64", NULL),
	NUM("count", 'n', count, OPT_UINT, 1, UINT32_MAX / 2, "N", "measured messages (200k, 1M)", "100k",
	    "expected a count from 1 to 2G, e.g. 200k or 1M", SET(count_set)),
	NUM("duration", 'd', duration_ns, OPT_DURATION, 1, 0, "D",
	    "measure for D (5s, 500ms) instead of a count", NULL,
	    "expected a duration above zero, e.g. 5s or 500ms", .flags = 0),
	NUM("warmup", 0, warmup, OPT_UINT, 0, UINT32_MAX / 2, "N",
	    "messages before the measured window; default count/20, at most 10k", NULL,
	    "expected a count, e.g. 1000 or 10k", SET(warmup_set)),
	LIST("endpoints", 'e', endpoints, "LIST", "process, thread", "process", "list:process thread"),
	LIST("pin", 0, pins, "LIST",
	     "none, same, split, or SERVER_CPU:CLIENT_CPU; or matrix[:CPUS]: every\n"
	     "ordered pair of CPUs, shuffled (a CPU x CPU table); each cell 100 ms after\n"
	     "1000 warm-up messages unless -n, -d, --warmup", "none",
	     "list:none same split 0:1 1:0 matrix matrix:0-3"),
	LIST("sched", 0, scheds, "LIST", "other, fifo:PRIO, rr:PRIO, batch, idle", "other",
	     "list:other fifo:50 rr:50 batch idle"),
	LIST("clients", 0, clients, "LIST", "clients served by one server", "1", NULL),
	CALL("option", 'O', REQ, "KEY=VAL", "a transport's or pattern's own option (see ipclab list);\n"
	     "NAME:KEY=VAL sets it for that transport or pattern only",
	     opt_kv, "@keys"),
	FLAG("verify", verify, "fill every payload with a checked pattern"),
	LIST("think", 0, thinks, "LIST",
	     "busy loop of N iterations per message byte after each message, both\n"
	     "sides (seed 001); ranges double: 1..2048", NULL, NULL),
	LIST("think-ns", 0, think_nss, "LIST",
	     "calibrated busy time after each message instead: 10us, 1us..1ms", NULL, NULL),
	LIST("rate", 0, rates, "LIST",
	     "client sends on a schedule: 1/s, 10k/s, max; latency counts from\n"
	     "the actual send, the sender's lateness beside it (late)", NULL, NULL),
	TEXT("period", period, "P",
	     "-p cycle: the driver's period, a time (1.333ms) or FRAMES@RATE\n"
	     "(64@48000); the deadline too unless -O deadline=", NULL),
	TEXT("peer", peer, "HOST[:PORT]",
	     "run the server side of each cell on HOST (ipclab serve there;\n"
	     "tcp, udp); --pin S:C pins S there; its token: --token-file FILE\n"
	     "(mode 0600), IPCLAB_TOKEN or --token T (every user sees argv)", NULL),
	CALL("token", 0, REQ, "T", "the server's token (see --peer)", opt_token, NULL),
	TEXT("token-file", token_file, "FILE", "the server's token, from FILE (mode 0600)", "@file"),
	CALL("repeat", 0, REQ, "N",
	     "run every cell N times, interleaved; report medians, spread and\n"
	     "(N >= 6) each median's 95 % interval; or auto[=PCT][,max=ROUNDS]:\n"
	     "add rounds until every headline's interval is within PCT % (5)\n"
	     "of its median, at most ROUNDS (30)", opt_repeat, "3 5 10 auto auto=5 auto=2,max=50"),
	CALL("runs", 0, REQ, "N",
	     "run the whole plan N times as separate runs (2..100): each its own\n"
	     "start, canary, endpoints and placement, the cells interleaved run by\n"
	     "run; report each cell's median over the runs and every run's figures\n"
	     "(compare of two such files tests over the runs)", opt_runs, "2 5 10"),
	NUM("budget", 0, budget_ns, OPT_DURATION, 1, 0, "D",
	    "--repeat auto: start no round that would end past D (10min)", NULL,
	    "expected a duration above zero, e.g. 10min or 90s", .flags = 0),
	CALL("pivot", 0, REQ, "ROW,COL,METRIC", "print METRIC as a ROW x COL table (e.g. size,think,cpu_pct)",
	     opt_pivot, "list:size think think_ns rate pin sched clients endpoints transport pattern "
	     "cpu_pct_total msgs_per_s bytes_per_s lat_p50_ns lat_p99_ns cpu_ns_per_msg "
	     "sys_ctx_switches_per_s"),
	CALL("matrix-metric", 0, REQ, "M",
	     "the figure of --pin matrix's table (default lat_p50_ns; p99, msgs_per_s)",
	     opt_matrix_metric, "lat_p50_ns lat_p99_ns msgs_per_s cpu_ns_per_msg"),
	CALL("pm-qos", 0, REQ, "US", "hold /dev/cpu_dma_latency at US microseconds during the run",
	     opt_pm_qos, NULL),
	FLAG("keep-awake", keep_awake, "a SCHED_IDLE busy loop on each endpoint CPU: no idle-exit latency"),
	FLAG("floors", floors,
	     "first measure the machine's floors on the run's CPUs (cache-line\n"
	     "round trip, futex wake-to-run onto an idle and a busy CPU, a\n"
	     "system call) into env.floors; a ping-pong is put against them"),
	FLAG("reference", reference,
	     "after each cell, its bare loop (same calls, sizes, placement), A B\n"
	     "per repetition; reports the ratio and ipclab's overhead"),
	CALL("trace", 0, optional_argument, "[=syscalls]",
	     "per side, from scheduler events: time budget, switches, wakeups; =syscalls\n"
	     "also probes every syscall: exact kernel time, counts, top 3 (docs/trace.md);\n"
	     "=events FILE.json also writes each cell's scheduler timeline (Perfetto)",
	     opt_trace, "syscalls events"),
	CALL("trace-span", 0, REQ, "D|N",
	     "the timeline's span at the window's end: a time (50ms, the default) or\n"
	     "the last N events (20k)", opt_span, NULL),
	CALL("explain", 0, no_argument, NULL,
	     "--trace, then the largest cause tested: the cell run again with the\n"
	     "knob that should remove it, interleaved, 3 pairs (docs/trace.md)", opt_explain, NULL),
	CALL("profile", 0, optional_argument, "[DIR]",
	     "per side, sampled call stacks: the top 15 functions; with DIR,\n"
	     "folded stacks DIR/<cell>-<side>.folded for flame graphs", opt_profile, "@dir"),
	FLAG("dry-run", dry_run, "list the cells the plan holds without running them"),
	CALL("vmstat", 0, no_argument, NULL,
	     "print a line a second while cells run (stderr): context switches,\n"
	     "interrupts, and us/sy/id per CPU and in total (/proc/stat)", opt_vmstat, NULL),
	NUM("timeout", 0, timeout_ns, OPT_DURATION, 0, 0, "D", "fail a cell when no message moves for D",
	    "10s", "expected a duration, e.g. 30s (0 = none)", .flags = 0),
	NUM("max-time", 0, max_time_ns, OPT_DURATION, 0, 0, "D",
	    "end a cell that runs longer than D; default derived from\n"
	    "count, size, rate and think (60 s + 4x the expected time)", NULL,
	    "expected a duration, e.g. 10min (0 = no limit)", SET(max_time_set)),
	{ .name = "format", .short_name = 'f', .has_arg = REQ, .metavar = "FMT",
	  .help = "{formats}\n(ranked: best first per pattern and size)", .kind = CLI_CALL,
	  .call = cli_opt_format, .id = FMT_RUN, .offset = RA(format), .def = "table", .values = "@formats" },
	{ .name = "output", .short_name = 'o', .has_arg = REQ, .metavar = "FILE",
	  .help = "write the report to FILE (atomically) instead of stdout", .kind = CLI_CALL,
	  .call = cli_opt_output, .offset = RA(output), .values = "@file" },
	CALL("plot", 0, REQ, "DIR", "also write DIR/results.json and its figures (gnuplot)", opt_plot,
	     "@dir"),
	DB_CLI_OPTIONS(RA(db)),
	{ .name = "html", .has_arg = REQ, .metavar = "FILE",
	  .help = "also write the report as one HTML page (ipclab report)", .kind = CLI_CALL,
	  .call = cli_opt_output, .offset = RA(html), .values = "@file" },
	{ .name = "quiet", .short_name = 'q', .has_arg = no_argument, .help = "no progress line",
	  .kind = CLI_FLAG, .offset = RA(quiet) },
	CALL("help", 'h', no_argument, NULL, "this text", opt_help, NULL),
	CALL("version", 0, no_argument, NULL, "the version and the git revision", opt_version, NULL),
	{ 0 },
};

/* The help text: made from the table above. */
void cmd_run_usage(FILE *f)
{
	fputs("usage: ipclab [run] [options]     run experiments (no arguments: the default comparison)\n"
	      "       ipclab list                 transports and patterns, with capabilities and options\n", f);
	for (const struct subcommand *sc = subcommands; sc->name; sc++)
		fprintf(f, "       ipclab %-20s %s\n", sc->name, sc->summary);
	fputs("\nLists (a,b,c) run the cartesian product of every listed value.\n", f);
	cli_help(f, run_options, FMT_RUN);
	fputs("Exit status: 0 ok, 1 a cell failed, 2 bad input, 128+N interrupted by signal N.\n", f);
}

void args_defaults(struct run_args *a)
{
	memset(a, 0, sizeof(*a));
	cli_defaults(run_options, a);
	a->repeat = 1;
	a->pm_qos_us = -1;
}

static void save_cmdline(struct run_args *a, int argc, char **argv)
{
	cmdline_redacted(a->cmdline, sizeof(a->cmdline), argc, argv);
}

/* --explain runs each cell in pairs of its own, with one knob changed. */
static int explain_combination(const struct run_args *a)
{
	const char *with = a->repeat > 1 || a->repeat_auto ? "--repeat" :
			   a->trace_events_path ? "--trace=events" : a->peer ? "--peer" :
			   a->pins && matrix_word(a->pins) ? "--pin matrix" : NULL;

	if (!with)
		return 0;
	return usage_error("--explain with %s: --explain runs each cell in interleaved pairs of its own, with one knob changed; drop %s or --explain",
			   with, with);
}

/* --runs N: a run's figures are one value each, taken by this process. */
static int runs_combination(const struct run_args *a)
{
	const char *with = a->repeat > 1 || a->repeat_auto ? "--repeat" :
			   a->peer ? "--peer" : a->explain ? "--explain" :
			   a->pins && matrix_word(a->pins) ? "--pin matrix" :
			   a->reference ? "--reference" :
			   a->trace_events_path ? "--trace=events" :
			   a->profile_dir ? "--profile DIR" : NULL;

	if (!with)
		return 0;
	if (!strcmp(with, "--repeat"))
		return usage_error("--runs with --repeat: each run gives one value per cell, and the median over repetitions inside a run is not kept apart from the runs; drop --repeat (--runs 6 or more gives an interval over the runs)");
	return usage_error("--runs with %s: not supported; drop %s or --runs", with, with);
}

static int parse_args(int argc, char **argv, struct run_args *a)
{
	int ret = cli_parse(run_options, argc, argv, a, NULL, false);

	if (ret)
		return ret;
	if ((a->trace_span.span_ns || a->trace_span.max_events) && !a->trace_events_path)
		return usage_error("--trace-span: only with --trace=events FILE.json");
	if (a->explain && (ret = explain_combination(a)))
		return ret;
	if (a->runs && (ret = runs_combination(a)))
		return ret;
	if (a->budget_ns && !a->repeat_auto)
		return usage_error("--budget bounds the rounds --repeat auto adds; add --repeat auto or drop --budget");
	a->db.on &= !a->dry_run;	/* nothing runs, nothing is stored */
	return a->dry_run ? 0 : db_args_check(&a->db, NULL);
}

/* The default comparison: every transport, stream 4 KiB and ping-pong 64 B,
 * endpoints on different CPUs, about 30 s on two cores. */
static int default_run(struct run_args *base)
{
	static char s4k[] = "4k", s64[] = "64", stream[] = "stream", pp[] = "pingpong";
	static char t1[] = "all", t2[] = "all", split[] = "split", split2[] = "split";
	struct run_args two[2] = { *base, *base };

	two[0].format = /*FRONTDOOR_FMT*/"ranked";

	two[0].patterns = stream;
	two[0].sizes = s4k;
	two[0].transports = t1;
	two[1].patterns = pp;
	two[1].sizes = s64;
	two[1].transports = t2;
	two[0].pins = split;
	two[1].pins = split2;
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		two[0].pins = two[1].pins = base->pins;
	for (int i = 0; i < 2; i++)
		if (!two[i].duration_ns && !two[i].count_set)
			two[i].duration_ns = 400 * NSEC_PER_MSEC;
	return do_run(two, 2);
}

/* The whole command line: ipclab [run] [options]; with no options at all,
 * the default comparison. */
int cmd_run(int argc, char **argv)
{
	struct run_args a = { 0 };
	bool none;
	int ret, run = 0;

	args_defaults(&a);
	if (argc > 1 && strcmp(argv[1], "run") == 0) {
		argv++;
		argc--;
		run = 1;
	}
	none = /*FRONTDOOR_ARGC*/argc == 1;
	ret = parse_args(argc, argv, &a);
	/* after parsing: a token on the command line is "***" by now */
	save_cmdline(&a, argc + run, argv - run);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (none)
		return default_run(&a);
	return do_run(&a, 1);
}
