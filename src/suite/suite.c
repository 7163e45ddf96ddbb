// SPDX-License-Identifier: MIT
/* `ipclab suite seeds`: each experiment the project grew from (the rows of
 * seeds[], suite_seeds.c) run as one plan and laid out the way its seed
 * laid it out, with a one-sentence reading computed from this machine's
 * numbers; -f json or csv also writes every result as one report. */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../cmd/cli_opt.h"
#include "../cmd/cmd.h"
#include "../cmd/run.h"
#include "suite.h"
#include "suite_int.h"
#include "ipclab/outdir.h"
#include "ipclab/profile.h"
#include "ipclab/trace.h"
#include "ipclab/util.h"

void seed_spec(const struct suite_opts *o, struct plan_spec *s, const char *section)
{
	plan_spec_defaults(s);
	s->section = section;
	s->lenient = true;
	s->think_per_ns = run_think_per_ns;
	s->think_arg = (void *)&o->quiet;
	s->trace = o->trace;
	s->profile = o->profile;
	s->profile_dir = o->profile_dir;
}

static void probe_fifo(struct suite_opts *o)
{
	pid_t pid = fork();
	int status = 1;

	if (pid == 0) {
		struct sched_param sp = { .sched_priority = 1 };

		_exit(sched_setscheduler(0, SCHED_FIFO, &sp) ? 1 : 0);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	o->fifo_ok = pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
	if (!o->fifo_ok)
		snprintf(o->fifo_why, sizeof(o->fifo_why),
			 "SCHED_FIFO is not permitted here (needs CAP_SYS_NICE or RLIMIT_RTPRIO): normal scheduling only");
}
/* --section seed-000 selects seed-000 and its parts (seed-000-cycle). */
static bool seed_selected(const struct seed *sd, const char *only)
{
	size_t l = strlen(only);

	return !strncmp(sd->name, only, l) && (sd->name[l] == '\0' || sd->name[l] == '-');
}

/* The seed's transports that exist here, as named; say which do not. */
static void seed_transports(const struct seed *sd, struct plan_spec *s, unsigned n)
{
	char missing[256] = "";

	for (unsigned i = 0; i < n; i++)
		s[i].ntp = 0;
	for (const char *const *t = sd->transports; *t; t++) {
		const struct transport *tp = transport_find(*t);
		size_t l = strlen(missing);

		if (!tp) {
			snprintf(missing + l, sizeof(missing) - l, "%s%s", l ? "," : "", *t);
			continue;
		}
		for (unsigned i = 0; i < n && s[i].ntp < PLAN_MAX_LIST; i++) {
			s[i].tp_named[s[i].ntp] = true;
			s[i].tp[s[i].ntp++] = tp;
		}
	}
	if (missing[0])
		printf("  (not built here, so not measured: %s)\n", missing);
}

static double cell_size(const struct result *r)
{
	return (double)r->cell.size;
}

/* A cell of --dry-run: its configuration, each value after its name. */
static const struct field dry_size = { .key = "size_bytes", .label = "size", .kind = F_U64,
				       .unit = U_COUNT, .get_num = cell_size, .config = true };
static const struct rows_col dry_cols[] = {
	{ .key = "transport", .width = -12 }, { .key = "pattern", .width = -9 },
	{ .own = &dry_size, .width = 7 }, { .key = "endpoints", .width = -7, .gap = " B  " },
	{ .key = "pin", .width = -5, .gap = " pin " }, { .key = "sched", .width = -7, .gap = " sched " },
	{ .key = "clients", .gap = " clients " }, { .key = "think", .gap = " think " },
	{ .label = "rate", .gap = " rate " }, { .label = "skipped", .gap = "" },
};
static const struct rows dry_table = { .cols = dry_cols, .ncols = ARRAY_SIZE(dry_cols) };

static void print_dry_run(const struct result *r, size_t n)
{
	char why[ERRLEN + 16];

	for (size_t i = 0; i < n; i++) {
		const char *text[ARRAY_SIZE(dry_cols)] = { [8] = r[i].cell.rate_text, [9] = why };

		snprintf(why, sizeof(why), "%s%s", strcmp(r[i].reason, "dry run") ? "  skipped: " : "",
			 strcmp(r[i].reason, "dry run") ? r[i].reason : "");
		rows_line_of(stdout, &dry_table, &r[i], text);
	}
}

/* The specs of one seed (s: two) into a plan (their option blocks too),
 * and where each spec's cells begin in it (c); 0 or 2. */
static int seed_plan(const struct suite_opts *o, const struct seed *sd, struct plan_spec *s,
		     struct plan *pl, struct seed_cells *c)
{
	char err[ERRLEN];
	unsigned n = sd->plan(o, s, err, sizeof(err));
	int ret = 0;

	seed_transports(sd, s, n);
	if (!n)
		ret = usage_error("%s", err);
	c->spec = s;
	for (unsigned i = 0; i < n && !ret; i++) {
		c->first[i] = pl->n;
		c->nspec = i + 1;
		if (!s[i].ntp)
			ret = usage_error("-t: no transport named; e.g. -t pipe,unix-stream or -t all");
		else if (run_spec_default_options(&s[i], pl))
			ret = 2;
		else if (plan_build(&s[i], pl, err, sizeof(err)))
			ret = usage_error("%s", err);
	}
	return ret;
}

/* What the suite ran: every result, and each section's text. */
struct suite_out {
	struct result *all;
	size_t nall;
	struct report_section sec[16];
	size_t nsec;
	struct env_info env;
};

struct print_args {
	const struct suite_opts *o;
	const struct seed *sd;
	const struct seed_cells *c;
};

static void print_section(void *arg)
{
	const struct print_args *p = arg;

	if (p->o->dry_run)
		print_dry_run(p->c->r, p->c->n);
	else
		p->sd->print(p->o, p->c);
}

/* Run one seed; append its results and text to out. Returns 0, 2 or 128+N. */
static int run_seed(struct suite_opts *o, const struct seed *sd, struct suite_out *out)
{
	struct session_opts so = { .repeat = o->dry_run ? 1 : o->repeat_set ? (unsigned)o->repeat :
					      o->quick ? sd->repeat_quick : sd->repeat,
				   .dry_run = o->dry_run, .pm_qos_us = -1 };
	struct report rep = { .cmdline = o->cmdline };
	struct plan_spec *s = calloc(2, sizeof(*s));
	struct seed_cells c = { 0 };
	struct print_args pa = { o, sd, &c };
	struct plan pl = { 0 };
	char *text;
	int ret;

	printf("\n== %s: %s\n", sd->name, sd->title);
	ret = s ? seed_plan(o, sd, s, &pl, &c) : usage_error("out of memory");
	fflush(stdout);
	if (!ret)
		ret = run_session(&pl, &so, o->quiet, &rep);
	c.r = rep.results;
	c.n = rep.n;
	if (!ret && o->explain && !o->dry_run && rep.results)
		ret = seed_explain(o, sd, &c, rep.results);
	plan_free(&pl);
	if (!rep.results)
		return free(s), ret;
	out->env = rep.env;
	c.why = o->dry_run ? NULL : calloc(1, sizeof(*c.why));
	text = suite_capture(print_section, &pa);
	free(s);
	if (c.why && !c.why->question[0])
		c.why = (free(c.why), NULL);
	if (out->nsec < ARRAY_SIZE(out->sec))
		out->sec[out->nsec++] = (struct report_section){ sd->name, sd->title, text, c.why };
	else
		free(text), free(c.why);
	struct result *grown = realloc(out->all, (out->nall + rep.n) * sizeof(*out->all));

	if (grown) {
		memcpy(grown + out->nall, rep.results, rep.n * sizeof(*rep.results));
		out->all = grown;
		out->nall += rep.n;
	}
	free(rep.results);
	return ret;
}

/* What the options fill: the suite's options and --section. */
struct suite_cli {
	struct suite_opts o;
	const char *only;
};

#define SU(f) offsetof(struct suite_cli, f)

static int suite_usage(const struct cli_opt *opt, char *arg, void *args, struct cli_ctx *ctx)
{
	(void)opt, (void)arg, (void)args, (void)ctx;
	fputs("usage: ipclab suite seeds [--quick] [--dry-run] [--section seed-00N] [--trace] [--explain]\n"
	      "                          [--repeat N] [--profile[=DIR]]\n"
	      "                          [-f table|json|csv] [-o FILE] [--html FILE] [-q]\n"
	      "                          [--db[=URL] [--label K=V] [--db-failed]]\n"
	      "  runs each seed's experiment and prints one section per seed, shaped like the seed's\n"
	      "  own output, with its question tested. Cells repeat 5 times, --quick too where the\n"
	      "  answer is a ratio with its interval (seeds 000, 001, 002, 004), the cycle once,\n"
	      "  seed-003 once, 6 s paced at 1/s (1 s at 20/s).\n"
	      "  --quick with --trace --explain: about 7-9 minutes on 2 quiet cores.\n", stdout);
	cli_help(stdout, suite_options, FMT_SUITE);
	fputs("       ipclab suite fidelity [--quick] [--repeat N]: ipclab against its references;\n"
	      "  see ipclab suite fidelity --help\n", stdout);
	return -1;
}

/* --profile[=DIR]: 0, or 2 (said). */
static int suite_profile(const struct cli_opt *opt, char *dir, void *args, struct cli_ctx *ctx)
{
	struct suite_opts *o = args;
	char err[ERRLEN];

	(void)opt, (void)ctx;
	if (profile_check(err, sizeof(err)))
		return usage_error("%s", err);
	/* the user's own directory, or none yet (made 0700 at the first write) */
	if (dir && outdir_check("--profile", dir, err, sizeof(err)))
		return usage_error("%s", err);
	o->profile = true;
	o->profile_dir = dir;
	return 0;
}

/* --trace, and --explain (which traces too). */
static int suite_trace(const struct cli_opt *opt, char *arg, void *args, struct cli_ctx *ctx)
{
	char err[ERRLEN];
	bool explain = !strcmp(opt->name, "explain");

	(void)arg, (void)ctx;
	if (trace_check(err, sizeof(err)))
		return explain ? usage_error("--explain traces the cell: %s", err) : usage_error("%s", err);
	((struct suite_opts *)args)->trace = true;
	((struct suite_opts *)args)->explain |= explain;
	return 0;
}

#define SU_FLAG(l, f, h) { .name = l, .has_arg = no_argument, .help = h, .kind = CLI_FLAG, \
			   .offset = SU(f) }

const struct cli_opt suite_options[] = {
	SU_FLAG("quick", o.quick, "shorter cells, fewer repetitions where no interval needs them"),
	SU_FLAG("dry-run", o.dry_run, "list each section's cells without running them"),
	{ .name = "repeat", .has_arg = required_argument, .metavar = "N", .kind = CLI_NUMBER,
	  .type = OPT_UINT, .offset = SU(o.repeat), .min = 1, .max = 30, .set_offset = SU(o.repeat_set),
	  .flags = CLI_MARK_SET, .bad = "expected 1 to 30 repetitions, e.g. --repeat 5",
	  .help = "every section's cells N times instead (under 4: no headline\n"
		  "interval, the answer says too few repetitions)", .values = "1 5 10" },
	{ .name = "section", .has_arg = required_argument, .metavar = "seed-00N",
	  .help = "only this section", .kind = CLI_TEXT, .offset = SU(only),
	  .values = "seed-000 seed-001 seed-002 seed-003 seed-004" },
	{ .name = "trace", .has_arg = no_argument, .kind = CLI_CALL, .call = suite_trace,
	  .help = "as for run, on every cell; a reading from the trace in each section" },
	{ .name = "explain", .has_arg = no_argument, .kind = CLI_CALL, .call = suite_trace,
	  .help = "--trace, and the cell each reading explains run again with its largest\n"
		  "cause tested by one knob (as run --explain; about 12 runs of that cell)" },
	{ .name = "profile", .has_arg = optional_argument, .metavar = "[=DIR]", .kind = CLI_CALL,
	  .call = suite_profile, .help = "as for run, on every cell; its reading in each section" },
	{ .name = "format", .short_name = 'f', .has_arg = required_argument, .metavar = "FMT",
	  .help = "{formats}: of the report on stdout\n(the sections go to stderr)",
	  .kind = CLI_CALL, .call = cli_opt_format, .id = FMT_SUITE, .offset = SU(o.format),
	  .def = "table", .values = "@formats" },
	{ .name = "output", .short_name = 'o', .has_arg = required_argument, .metavar = "FILE",
	  .help = "write -f's report to FILE (atomically)", .kind = CLI_CALL,
	  .call = cli_opt_output, .offset = SU(o.output), .values = "@file" },
	{ .name = "html", .has_arg = required_argument, .metavar = "FILE",
	  .help = "also one HTML page (as ipclab report): a section per seed,\n"
		  "its table, its reading and its figures", .kind = CLI_CALL,
	  .call = cli_opt_output, .offset = SU(o.html), .values = "@file" },
	DB_CLI_OPTIONS(SU(o.db)),
	{ .name = "quiet", .short_name = 'q', .has_arg = no_argument, .help = "no progress line",
	  .kind = CLI_FLAG, .offset = SU(o.quiet) },
	{ .name = "help", .short_name = 'h', .has_arg = no_argument, .help = "this text",
	  .kind = CLI_CALL, .call = suite_usage },
	{ 0 },
};
const size_t suite_args_size = sizeof(struct suite_cli);

static int suite_args(int argc, char **argv, struct suite_cli *c)
{
	const char *only;
	int ret = cli_defaults(suite_options, c) ? 2 : cli_parse(suite_options, argc, argv, c, "suite", true);

	if (ret)
		return ret;
	only = c->only;
	if (optind != argc - 1 || strcmp(argv[optind], "seeds"))
		return usage_error("suite: expected 'ipclab suite seeds [options]'; see ipclab suite --help");
	for (size_t i = 0; only && i < n_seeds; i++)
		if (seed_selected(&seeds[i], only))
			return 0;
	if (only)
		return usage_error("suite: no section '%s'; expected seed-000 ... seed-004", only);
	return c->o.dry_run ? 0 : db_args_check(&c->o.db, "suite");
}

/* After the sections: -f's report, --html's page and the store (--db).
 * @ret is the status so far; the status after. */
static int suite_reports(const struct suite_opts *o, struct suite_out *out, int ret)
{
	struct report rep = { .cmdline = o->cmdline, .env = out->env, .results = out->all,
			      .n = out->nall, .sections = out->sec, .nsections = out->nsec,
			      .created = time(NULL) };
	int w = 0;

	if (ret == 2)
		return ret;
	if (strcmp(o->format, "table")) {
		struct reporter_args ra = { .format = o->format };

		w = output_report(o->output, &ra, &rep);
	}
	if (o->html && !w)
		w = report_html_of(o->html, "ipclab suite seeds", &rep, o->profile_dir, "suite");
	ret = ret ? ret : w;
	if (!o->dry_run && ret != 2)
		ret = db_store_report(&o->db, &rep, ret, o->quiet, "suite");
	return ret;
}

int cmd_suite(int argc, char **argv)
{
	struct suite_cli c = { 0 };
	struct suite_opts o;
	struct suite_out *out = calloc(1, sizeof(*out));
	const char *only;
	int ret, saved = -1;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "fidelity"))
			return free(out), cmd_suite_fidelity(argc, argv);
	if (!out)
		return usage_error("out of memory");
	ret = suite_args(argc, argv, &c);
	if (ret) {
		free(out);
		return ret < 0 ? 0 : ret;
	}
	o = c.o;
	only = c.only;
	snprintf(o.cmdline, sizeof(o.cmdline), "ipclab suite seeds%s%s%s%s", o.quick ? " --quick" : "",
		 o.dry_run ? " --dry-run" : "", o.explain ? " --explain" : o.trace ? " --trace" : "",
		 o.profile ? " --profile" : "");
	probe_fifo(&o);
	if (strcmp(o.format, "table") && !o.output) {
		fflush(stdout);		/* sections go to stderr, data to stdout */
		saved = dup(STDOUT_FILENO);
		dup2(STDERR_FILENO, STDOUT_FILENO);
	}
	uint64_t t_all = now_ns();
	unsigned ran = 0;

	/* each section's time, and the suite's, said as it ends */
	for (size_t i = 0; i < n_seeds && !ret; i++) {
		uint64_t t0 = now_ns();

		if (only && !seed_selected(&seeds[i], only))
			continue;
		ret = run_seed(&o, &seeds[i], out);
		ran++;
		if (!o.dry_run && !ret)
			printf("(%s took %.0f s)\n", seeds[i].name, (double)(now_ns() - t0) / 1e9);
	}
	if (!o.dry_run && !ret)
		printf("\nsuite seeds%s: %u section%s in %.1f min\n", o.quick ? " --quick" : "", ran,
		       ran == 1 ? "" : "s", (double)(now_ns() - t_all) / 60e9);
	fflush(stdout);
	if (saved >= 0) {
		dup2(saved, STDOUT_FILENO);
		close(saved);
	}
	ret = suite_reports(&o, out, ret);
	for (size_t i = 0; i < out->nsec; i++)
		free(out->sec[i].text), free((void *)out->sec[i].why);
	free(out->all);
	free(out);
	if (ret > 128)
		say(NULL, "interrupted by signal %d", ret - 128);
	return ret;
}
