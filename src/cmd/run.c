// SPDX-License-Identifier: MIT
/* `ipclab run` (and `ipclab` with options or none): its options into
 * run_args, the default comparison, and the run itself (run_exec.c). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "run.h"
#include "ipclab/outdir.h"
#include "ipclab/runner.h"
#include "ipclab/profile.h"
#include "ipclab/topology.h"
#include "ipclab/trace.h"

/* ---- options ------------------------------------------------------------------- */

enum { OPT_VERIFY = 256, OPT_TIMEOUT, OPT_MAX_TIME, OPT_PIN, OPT_SCHED, OPT_CLIENTS, OPT_VERSION,
       OPT_WARMUP, OPT_REPEAT, OPT_THINK, OPT_THINK_NS, OPT_RATE, OPT_PERIOD, OPT_PIVOT, OPT_PM_QOS,
       OPT_KEEP_AWAKE, OPT_REFERENCE, OPT_DRY_RUN, OPT_VMSTAT, OPT_PLOT, OPT_TRACE,
       OPT_PROFILE, OPT_MATRIX_METRIC, OPT_PEER, OPT_TOKEN, OPT_BUDGET, OPT_TOKEN_FILE,
       OPT_HTML, OPT_TRACE_SPAN, OPT_EXPLAIN };

static const struct option long_opts[] = {
	{ "transport", required_argument, NULL, 't' },
	{ "pattern", required_argument, NULL, 'p' },
	{ "size", required_argument, NULL, 's' },
	{ "count", required_argument, NULL, 'n' },
	{ "duration", required_argument, NULL, 'd' },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "endpoints", required_argument, NULL, 'e' },
	{ "pin", required_argument, NULL, OPT_PIN },
	{ "sched", required_argument, NULL, OPT_SCHED },
	{ "clients", required_argument, NULL, OPT_CLIENTS },
	{ "format", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' },
	{ "option", required_argument, NULL, 'O' },
	{ "verify", no_argument, NULL, OPT_VERIFY },
	{ "think", required_argument, NULL, OPT_THINK },
	{ "think-ns", required_argument, NULL, OPT_THINK_NS },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "peer", required_argument, NULL, OPT_PEER },
	{ "token", required_argument, NULL, OPT_TOKEN },
	{ "token-file", required_argument, NULL, OPT_TOKEN_FILE },
	{ "period", required_argument, NULL, OPT_PERIOD },
	{ "repeat", required_argument, NULL, OPT_REPEAT },
	{ "budget", required_argument, NULL, OPT_BUDGET },
	{ "pivot", required_argument, NULL, OPT_PIVOT },
	{ "matrix-metric", required_argument, NULL, OPT_MATRIX_METRIC },
	{ "pm-qos", required_argument, NULL, OPT_PM_QOS },
	{ "keep-awake", no_argument, NULL, OPT_KEEP_AWAKE },
	{ "reference", no_argument, NULL, OPT_REFERENCE },
	{ "trace", optional_argument, NULL, OPT_TRACE },
	{ "trace-span", required_argument, NULL, OPT_TRACE_SPAN },
	{ "explain", no_argument, NULL, OPT_EXPLAIN },
	{ "profile", optional_argument, NULL, OPT_PROFILE },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "vmstat", no_argument, NULL, OPT_VMSTAT },
	{ "plot", required_argument, NULL, OPT_PLOT },
	{ "html", required_argument, NULL, OPT_HTML },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "max-time", required_argument, NULL, OPT_MAX_TIME },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	DB_LONG_OPTIONS,
	{ 0 },
};

/* The help text: one string per option, long because there are many. */
void cmd_run_usage(FILE *f)
{
	fputs("usage: ipclab [run] [options]     run experiments (no arguments: the default comparison)\n"
	      "       ipclab list                 transports and patterns, with capabilities and options\n", f);
	for (const struct subcommand *sc = subcommands; sc->name; sc++)
		fprintf(f, "       ipclab %-20s %s\n", sc->name, sc->summary);
	fputs("\n"
	      "Lists (a,b,c) run the cartesian product of every listed value.\n"
	      "  -t, --transport LIST   transports, 'all' or globs ('shm-*'); default all\n"
	      "  -p, --pattern LIST     stream, pingpong; default pingpong\n"
	      "  -s, --size LIST        message size in bytes, header (16 B) included: 64, 4k, 1M, 1k..512k\n"
	      "                         (ranges double); default 64\n"
	      "  -n, --count N          measured messages (200k, 1M); default 100k\n"
	      "  -d, --duration D       measure for D (5s, 500ms) instead of a count\n"
	      "      --warmup N         messages before the measured window; default count/20, at most 10k\n"
	      "  -e, --endpoints LIST   process, thread; default process\n"
	      "      --pin LIST         none, same, split, or SERVER_CPU:CLIENT_CPU; default none; or\n"
	      "                         matrix[:CPUS]: every ordered pair of CPUs, shuffled (a CPU x CPU table);\n"
	      "                         each cell 100 ms after 1000 warm-up messages unless -n, -d, --warmup\n"
	      "      --sched LIST       other, fifo:PRIO, rr:PRIO, batch, idle; default other\n"
	      "      --clients LIST     clients served by one server; default 1\n"
	      "  -O, --option KEY=VAL   a transport's or pattern's own option (see ipclab list)\n"
	      "      --verify           fill every payload with a checked pattern\n"
	      "      --think LIST       busy loop of N iterations per message byte after each message, both\n"
	      "                         sides (seed 001); ranges double: 1..2048\n"
	      "      --think-ns LIST    calibrated busy time after each message instead: 10us, 1us..1ms\n"
	      "      --rate LIST        client sends on a schedule: 1/s, 10k/s, max; latency counts from\n"
	      "                         the actual send, the sender's lateness beside it (late)\n"
	      "      --period P         -p cycle: the driver's period, a time (1.333ms) or FRAMES@RATE\n"
	      "                         (64@48000); the deadline too unless -O deadline=\n"
	      "      --peer HOST[:PORT] run the server side of each cell on HOST (ipclab serve there;\n"
	      "                         tcp, udp); --pin S:C pins S there; its token: --token-file FILE\n"
	      "                         (mode 0600), IPCLAB_TOKEN or --token T (every user sees argv)\n"
	      "      --repeat N         run every cell N times, interleaved; report medians, spread and\n"
	      "                         (N >= 6) each median's 95 % interval; or auto[=PCT][,max=ROUNDS]:\n"
	      "                         add rounds until every headline's interval is within PCT % (5)\n"
	      "                         of its median, at most ROUNDS (30)\n"
	      "      --budget D         --repeat auto: start no round that would end past D (10min)\n"
	      "      --pivot ROW,COL,METRIC  print METRIC as a ROW x COL table (e.g. size,think,cpu_pct)\n"
	      "      --matrix-metric M  the figure of --pin matrix's table (default lat_p50_ns; p99, msgs_per_s)\n"
	      "      --pm-qos US        hold /dev/cpu_dma_latency at US microseconds during the run\n"
	      "      --keep-awake       a SCHED_IDLE busy loop on each endpoint CPU: no idle-exit latency\n"
	      "      --reference        after each cell, its bare loop (same calls, sizes, placement), A B\n"
	      "                         per repetition; reports the ratio and ipclab's overhead\n"
	      "      --trace[=syscalls] per side, from scheduler events: time budget, switches, wakeups; =syscalls\n"
	      "                         also probes every syscall: exact kernel time, counts, top 3 (docs/trace.md);\n"
	      "                         =events FILE.json also writes each cell's scheduler timeline (Perfetto)\n"
	      "      --trace-span D|N   the timeline's span at the window's end: a time (50ms, the default) or\n"
	      "                         the last N events (20k)\n"
	      "      --explain          --trace, then the largest cause tested: the cell run again with the\n"
	      "                         knob that should remove it, interleaved, 3 pairs (docs/trace.md)\n"
	      "      --profile [DIR]    per side, sampled call stacks: the top 15 functions; with DIR,\n"
	      "                         folded stacks DIR/<cell>-<side>.folded for flame graphs\n"
	      "      --dry-run          list the cells the plan holds without running them\n"
	      "      --vmstat           print a line a second while cells run (stderr): context switches,\n"
	      "                         interrupts, and us/sy/id per CPU and in total (/proc/stat)\n"
	      "      --timeout D        fail a cell when no message moves for D; default 10s\n"
	      "      --max-time D       end a cell that runs longer than D; default derived from\n"
	      "                         count, size, rate and think (60 s + 4x the expected time)\n"
	      "  -f, --format FMT       table, ranked (best first per pattern and size), json, csv,\n"
	      "                         markdown; default table\n"
	      "  -o, --output FILE      write the report to FILE (atomically) instead of stdout\n"
	      "      --plot DIR         also write DIR/results.json and its figures (gnuplot)\n"
	      DB_USAGE
	      "      --html FILE        also write the report as one HTML page (ipclab report)\n"
	      "  -q, --quiet            no progress line\n"
	      "  -h, --help, --version\n"
	      "Exit status: 0 ok, 1 a cell failed, 2 bad input, 128+N interrupted by signal N.\n", f);
}

void args_defaults(struct run_args *a)
{
	static char t[] = "all", p[] = "pingpong", s[] = "64", e[] = "process", pin[] = "none",
		    sc[] = "other", c[] = "1";

	memset(a, 0, sizeof(*a));
	a->transports = t;
	a->patterns = p;
	a->sizes = s;
	a->endpoints = e;
	a->pins = pin;
	a->scheds = sc;
	a->clients = c;
	a->count = 100000;
	a->timeout_ns = 10 * NSEC_PER_SEC;
	a->format = "table";
	a->repeat = 1;
	a->pm_qos_us = -1;
}

/* --repeat N, or auto[=PCT][,max=ROUNDS]; 0 or 2. */
static int parse_repeat(const char *arg, struct run_args *a)
{
	const char *p = arg + 4;
	char *end;
	uint64_t v;

	if (strncmp(arg, "auto", 4)) {
		if (parse_u64(arg, &v) || v < 1 || v > 1000)
			return usage_error("--repeat %s: expected a number of repetitions from 1 to 1000, or auto[=PCT][,max=ROUNDS]",
					   arg);
		a->repeat = (unsigned)v;
		a->repeat_auto = false;
		return 0;
	}
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

static int parse_number_arg(int opt, const char *arg, struct run_args *a)
{
	uint64_t v;

	switch (opt) {
	case 'n':
		if (parse_count(arg, &v) || v == 0 || v > UINT32_MAX / 2)
			return usage_error("-n %s: expected a count from 1 to 2G, e.g. 200k or 1M", arg);
		a->count = v;
		a->count_set = true;
		return 0;
	case OPT_WARMUP:
		if (parse_count(arg, &v) || v > UINT32_MAX / 2)
			return usage_error("--warmup %s: expected a count, e.g. 1000 or 10k", arg);
		a->warmup = v;
		a->warmup_set = true;
		return 0;
	case 'd':
		if (parse_duration(arg, &v) || v == 0)
			return usage_error("-d %s: expected a duration above zero, e.g. 5s or 500ms", arg);
		a->duration_ns = v;
		return 0;
	case OPT_PM_QOS:
		if (parse_u64(arg, &v) || v > 100000000)
			return usage_error("--pm-qos %s: expected microseconds, e.g. 0 (no deep idle) or 10", arg);
		a->pm_qos_us = (int)v;
		return 0;
	case OPT_REPEAT:
		return parse_repeat(arg, a);
	case OPT_BUDGET:
		if (parse_duration(arg, &v) || v == 0)
			return usage_error("--budget %s: expected a duration above zero, e.g. 10min or 90s", arg);
		a->budget_ns = v;
		return 0;
	case OPT_TIMEOUT:
		if (parse_duration(arg, &v))
			return usage_error("--timeout %s: expected a duration, e.g. 30s (0 = none)", arg);
		a->timeout_ns = v;
		return 0;
	case OPT_MAX_TIME:
		if (parse_duration(arg, &v))
			return usage_error("--max-time %s: expected a duration, e.g. 10min (0 = no limit)", arg);
		a->max_time_ns = v;
		a->max_time_set = true;
		return 0;
	}
	return 0;
}

/* --trace-span: a time (50ms) or a count of events (20k, 100000). */
static int parse_span(const char *arg, struct run_args *a)
{
	size_t n = strlen(arg);
	uint64_t v;

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

/* One option of `ipclab run` into a: a flat switch over every option, one
 * case each (long, but each case is one line). 0, or 2 for bad input. */
static int parse_one(int opt, char *arg, struct run_args *a)
{
	switch (opt) {
	case 't': a->transports = arg; break;
	case 'p': a->patterns = arg; break;
	case 's': a->sizes = arg; break;
	case 'e': a->endpoints = arg; break;
	case OPT_PIN: a->pins = arg; break;
	case OPT_SCHED: a->scheds = arg; break;
	case OPT_CLIENTS: a->clients = arg; break;
	case OPT_VERIFY: a->verify = true; break;
	case OPT_THINK: a->thinks = arg; break;
	case OPT_KEEP_AWAKE: a->keep_awake = true; break;
	case OPT_REFERENCE: a->reference = true; break;
	case OPT_TRACE: {
		char err[ERRLEN];

		if (arg && strcmp(arg, "syscalls") && strcmp(arg, "events"))
			return usage_error("--trace=%s: expected --trace, --trace=syscalls (every syscall probed too) or --trace=events FILE.json (a timeline)",
					   arg);
		if (trace_check(err, sizeof(err)))
			return usage_error("%s", err);
		a->trace = true;
		a->trace_syscalls |= arg && !strcmp(arg, "syscalls");
		break;
	}
	case OPT_EXPLAIN: {
		char err[ERRLEN];

		if (trace_check(err, sizeof(err)))
			return usage_error("--explain traces the cell: %s", err);
		a->trace = a->explain = true;
		break;
	}
	case OPT_PROFILE: {
		char err[ERRLEN];

		if (profile_check(err, sizeof(err)))
			return usage_error("%s", err);
		/* made (0700) when the first cell opens it */
		if (arg && outdir_check("--profile", arg, err, sizeof(err)))
			return usage_error("%s", err);
		a->profile = true;
		a->profile_dir = arg;
		break;
	}
	case OPT_DRY_RUN: a->dry_run = true; break;
	case OPT_VMSTAT: runner_set_tick(vmstat_line); break;
	case OPT_PLOT: {
		char err[ERRLEN];

		/* made (0700) after the run */
		if (outdir_check("--plot", arg, err, sizeof(err)))
			return usage_error("%s", err);
		a->plot_dir = arg;
		break;
	}
	case OPT_TRACE_SPAN:
		return parse_span(arg, a);
	case OPT_HTML:
		if (output_check(arg, NULL))
			return 2;
		a->html = arg;
		break;
	case OPT_THINK_NS: a->think_nss = arg; break;
	case OPT_RATE: a->rates = arg; break;
	case OPT_PEER: a->peer = arg; break;
	case OPT_TOKEN:
		if (strlen(arg) > REMOTE_TOKEN_MAX)
			return usage_error("--token: the token is longer than %d bytes", REMOTE_TOKEN_MAX);
		snprintf(a->token_arg, sizeof(a->token_arg), "%s", arg);
		remote_token_hide(arg);	/* and so in the result's cmdline: "--token ***" */
		a->token = a->token_arg;
		break;
	case OPT_TOKEN_FILE: a->token_file = arg; break;
	case OPT_PERIOD: a->period = arg; break;
	case OPT_PIVOT: {
		char err[ERRLEN];

		if (pivot_parse(arg, a->pivot_spec, err, sizeof(err)))
			return usage_error("%s", err);
		if (a->pivot_spec[2]->kind == F_STR)
			return usage_error("--pivot %s: the metric must be a number, e.g. cpu_pct_total or msgs_per_s", arg);
		a->pivot = arg;
		break;
	}
	case OPT_MATRIX_METRIC: {
		const struct field *f[3];
		char spec[160], err[ERRLEN];

		snprintf(spec, sizeof(spec), "pin,pin,%s", arg);
		if (strchr(arg, ',') || pivot_parse(spec, f, err, sizeof(err)) || f[2]->kind == F_STR)
			return usage_error("--matrix-metric %s: not a numeric metric; use a key of docs/output.md, e.g. lat_p50_ns, p99 or msgs_per_s",
					   arg);
		a->matrix_metric = f[2];
		break;
	}
	case 'q': a->quiet = true; break;
	case 'o':
		if (output_check(arg, NULL))
			return 2;
		a->output = arg;
		break;
	case 'f':
		if (!reporter_find(arg) || !strcmp(arg, "pivot"))
			return usage_error("-f %s: expected table, ranked, json, csv or markdown", arg);
		a->format = arg;
		break;
	case 'O':
		if (a->nkv >= MAX_LIST)
			return usage_error("-O: at most %d options", MAX_LIST);
		a->kv[a->nkv++] = arg;
		break;
	default:
		return parse_number_arg(opt, arg, a);
	}
	return 0;
}

static void save_cmdline(struct run_args *a, int argc, char **argv)
{
	cmdline_redacted(a->cmdline, sizeof(a->cmdline), argc, argv);
}

/* --trace=events FILE.json: the word after it. */
static int events_file(int argc, char **argv, struct run_args *a)
{
	if (optind >= argc || argv[optind][0] == '-')
		return usage_error("--trace=events: name the timeline's file, e.g. --trace=events timeline.json");
	if (output_check(argv[optind], NULL))
		return 2;
	a->trace_events_path = argv[optind++];
	return 0;
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

static int parse_args(int argc, char **argv, struct run_args *a)
{
	int opt, ret;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":t:p:s:n:d:e:f:o:O:qh", long_opts, NULL)) != -1) {
		if (opt == 'h') {
			cmd_run_usage(stdout);
			return -1;
		}
		if (opt == OPT_VERSION) {
			printf("ipclab %s (%s)\n", IPCLAB_VERSION, IPCLAB_GIT_REV);
			return -1;
		}
		if (opt == '?')
			return usage_error("unknown option '%s'; see ipclab --help", argv[optind - 1]);
		if (opt == ':')
			return usage_error("option '%s' needs a value; see ipclab --help", argv[optind - 1]);
		/* --profile DIR as well as --profile=DIR: run takes no operands */
		if (opt == OPT_PROFILE && !optarg && optind < argc && argv[optind][0] != '-')
			optarg = argv[optind++];
		if (opt == OPT_TRACE && optarg && !strcmp(optarg, "events") &&
		    (ret = events_file(argc, argv, a)))
			return ret;
		if (opt >= DB_OPT_DB && opt <= DB_OPT_FAILED)
			ret = db_args_option(&a->db, opt, optarg, argc, argv);
		else
			ret = parse_one(opt, optarg, a);
		if (ret)
			return ret;
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'; see ipclab --help", argv[optind]);
	if ((a->trace_span.span_ns || a->trace_span.max_events) && !a->trace_events_path)
		return usage_error("--trace-span: only with --trace=events FILE.json");
	if (a->explain && (ret = explain_combination(a)))
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
