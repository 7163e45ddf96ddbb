// SPDX-License-Identifier: MIT
/* `ipclab suite seeds`: each experiment the project grew from, run as one
 * plan and laid out the way its seed laid it out, with a one-sentence
 * reading computed from this machine's numbers. */
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "cli_internal.h"
#include "ipclab/runner.h"

struct suite_opts {
	bool quick, dry_run, quiet;
	const char *format, *output;
	char cmdline[512];
	bool fifo_ok;
	char fifo_why[128];
};

/* One section: its run_args and how to print it. */
struct section {
	const char *name, *title;
	unsigned (*plan)(const struct suite_opts *o, struct run_args *a);
	void (*print)(const struct suite_opts *o, const struct result *r, size_t n);
};

/* ---- helpers --------------------------------------------------------------- */

static const struct result *find(const struct result *r, size_t n, const char *section,
				 const char *tp, const char *pin, const char *sched, int threads,
				 unsigned clients, double rate)
{
	for (size_t i = 0; i < n; i++) {
		const struct result *x = &r[i];

		if (strcmp(x->section, section) || (tp && strcmp(x->transport, tp)) ||
		    (pin && strcmp(x->cell.pin.text, pin)) || (sched && strcmp(x->cell.sched.text, sched)) ||
		    (threads >= 0 && x->cell.threads != (threads == 1)) ||
		    (clients && x->cell.clients != clients) || (rate >= 0 && x->cell.rate != rate))
			continue;
		return x;
	}
	return NULL;
}

static bool ok(const struct result *r)
{
	return r && r->status == RES_OK;
}

static const char *val(char *buf, size_t len, const struct result *r, double v,
		       const char *(*fmt)(char *, size_t, double))
{
	if (!r)
		return "-";
	if (r->status == RES_SKIPPED)
		return "skipped";
	if (r->status == RES_FAILED)
		return "failed";
	return fmt(buf, len, v);
}

static double side_secs(const struct result *r, enum tp_role role)
{
	for (unsigned i = 0; i < r->nsides; i++)
		if (r->sides[i].role == role)
			return (double)r->sides[i].elapsed_ns / 1e9;
	return NAN;
}

static void base_args(const struct suite_opts *o, struct run_args *a, const char *section)
{
	args_defaults(a);
	a->section = section;
	a->lenient = true;
	a->quiet = o->quiet;
	a->dry_run = o->dry_run;
	snprintf(a->cmdline, sizeof(a->cmdline), "%s", o->cmdline);
}

/* Can this process use SCHED_FIFO? Tried in a child, which then exits. */
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

/* Seeds 000 and 002: a 4 KiB stream over kernel transports, normal
 * scheduling and SCHED_FIFO where permitted. */
static unsigned kernel_stream_4k(const struct suite_opts *o, struct run_args *a,
				 const char *section, char *tps)
{
	static char p[] = "stream", s[] = "4k", sc[] = "other,fifo:90", sc1[] = "other";

	base_args(o, a, section);
	a->transports = tps;
	a->patterns = p;
	a->sizes = s;
	a->scheds = o->fifo_ok ? sc : sc1;
	a->count = o->quick ? 20000 : 100000;
	a->count_set = true;
	return 1;
}

/* ---- seed 000: pipe vs posix-mq vs unix-stream, 4 KiB, normal vs FIFO ----------- */

static unsigned plan_000(const struct suite_opts *o, struct run_args *a)
{
	static char t[] = "pipe,posix-mq,unix-stream";

	return kernel_stream_4k(o, a, "seed-000", t);
}

static void print_000(const struct suite_opts *o, const struct result *r, size_t n)
{
	static const char *const tps[] = { "pipe", "posix-mq", "unix-stream" };
	static const char *const scheds[] = { "other", "fifo:90" };
	const struct result *best[2] = { NULL, NULL }, *worst = NULL;
	char b1[32], b2[32], b3[32], b4[32];

	printf("Sending a 4096 byte message %llu times (per side: time from its first to its last measured message)\n",
	       (unsigned long long)(o->quick ? 20000 : 100000));
	printf("  %-8s %-12s %10s %10s %10s %10s\n", "sched", "transport", "send time", "recv time",
	       "msgs/s", "cs/s");
	for (int k = 0; k < 2; k++) {
		if (k && !o->fifo_ok) {
			printf("  %s\n", o->fifo_why);
			break;
		}
		for (size_t i = 0; i < ARRAY_SIZE(tps); i++) {
			const struct result *x = find(r, n, "seed-000", tps[i], NULL, scheds[k], -1, 0, -1);

			if (ok(x) && (!best[k] || x->msgs_per_s > best[k]->msgs_per_s))
				best[k] = x;
			if (ok(x) && !k && (!worst || x->msgs_per_s < worst->msgs_per_s))
				worst = x;
			snprintf(b1, sizeof(b1), "%.3fs", ok(x) ? side_secs(x, TP_CLIENT) : 0);
			snprintf(b2, sizeof(b2), "%.3fs", ok(x) ? side_secs(x, TP_SERVER) : 0);
			printf("  %-8s %-12s %10s %10s %10s %10s\n", scheds[k], tps[i],
			       ok(x) ? b1 : val(b1, 0, x, 0, NULL), ok(x) ? b2 : "", 
			       ok(x) ? fmt_count(b3, sizeof(b3), x->msgs_per_s) : "",
			       ok(x) ? fmt_count(b4, sizeof(b4), x->sys_ctx_switches_per_s) : "");
		}
	}
	if (!best[0]) {
		printf("Reading: no transport completed here.\n");
		return;
	}
	const struct result *pipe0 = find(r, n, "seed-000", "pipe", NULL, "other", -1, 0, -1);
	const struct result *pipe1 = find(r, n, "seed-000", "pipe", NULL, "fifo:90", -1, 0, -1);

	printf("Reading: under normal scheduling %s moved 4 KiB messages fastest, %.2fx the slowest (%s)",
	       best[0]->transport, best[0]->msgs_per_s / worst->msgs_per_s, worst->transport);
	if (ok(pipe0) && ok(pipe1))
		printf("; SCHED_FIFO made pipe %.2fx as fast and its context switches/s %.2gx",
		       pipe1->msgs_per_s / pipe0->msgs_per_s,
		       pipe1->sys_ctx_switches_per_s / (pipe0->sys_ctx_switches_per_s ? pipe0->sys_ctx_switches_per_s : 1));
	printf(".\n");
}

/* ---- seed 001: CPU % over write size x think, pipe --------------------------------- */

static unsigned plan_001(const struct suite_opts *o, struct run_args *a)
{
	static char t[] = "pipe", p[] = "stream", s[] = "1k..128k", sq[] = "1k..16k";
	static char k[] = "1,2,4,16,32,64,128,256,1024,2048", kq[] = "1,16,256", pin[] = "none";

	base_args(o, a, "seed-001");
	a->transports = t;
	a->patterns = p;
	a->sizes = o->quick ? sq : s;
	a->thinks = o->quick ? kq : k;
	a->pins = pin;
	a->duration_ns = (o->quick ? 60 : 150) * NSEC_PER_MSEC;
	a->warmup = 2;
	a->warmup_set = true;
	return 1;
}

static void print_001(const struct suite_opts *o, const struct result *r, size_t n)
{
	const struct field *spec[3];
	struct report rep = { .results = (struct result *)r, .n = n };
	unsigned both = 0, cells = 0;
	const struct result *low = NULL;
	char err[ERRLEN];

	(void)o;
	if (pivot_parse("size,think,cpu_pct", spec, err, sizeof(err)))
		return;
	printf("CPU %% of two processes piping data with think iterations per byte between writes (200 %% = both CPUs busy)\n");
	report_pivot(stdout, &rep, spec, "table");
	for (size_t i = 0; i < n; i++) {
		if (!ok(&r[i]))
			continue;
		cells++;
		both += r[i].cpu_pct_total >= 180;
		if (!low || r[i].cpu_pct_total < low->cpu_pct_total)
			low = &r[i];
	}
	if (low)
		printf("Reading: both CPUs were busy (>= 180 %%) in %u of %u cells; the pipe parallelised worst at %llu B and think %llu (%.0f %%).\n",
		       both, cells, (unsigned long long)low->cell.size, (unsigned long long)low->cell.think,
		       low->cpu_pct_total);
}

/* ---- seed 002: same CPU vs different CPUs, realtime or not ---------------------------- */

static unsigned plan_002(const struct suite_opts *o, struct run_args *a)
{
	static char t[] = "pipe,unix-stream,posix-mq", pin[] = "same,split";

	kernel_stream_4k(o, a, "seed-002", t);
	a->pins = pin;
	return 1;
}

static void print_002(const struct suite_opts *o, const struct result *r, size_t n)
{
	static const char *const tps[] = { "pipe", "unix-stream", "posix-mq" };
	static const char *const cols[][2] = {
		{ "other", "same" }, { "other", "split" }, { "fifo:90", "same" }, { "fifo:90", "split" },
	};
	const struct result *best_same = NULL, *best_split = NULL;
	const char *sched = o->fifo_ok ? "fifo:90" : "other";
	char b[32];

	printf("4 KiB messages/s, both processes on one CPU (same) or on different CPUs (split)\n");
	printf("  %-12s %14s %14s %14s %14s\n", "transport", "other/same", "other/split",
	       "fifo/same", "fifo/split");
	for (size_t i = 0; i < ARRAY_SIZE(tps); i++) {
		printf("  %-12s", tps[i]);
		for (size_t c = 0; c < ARRAY_SIZE(cols); c++) {
			const struct result *x = find(r, n, "seed-002", tps[i], cols[c][1], cols[c][0], -1, 0, -1);

			printf(" %14s", x ? val(b, sizeof(b), x, x->msgs_per_s, fmt_count) :
					    (c >= 2 && !o->fifo_ok ? "not permitted" : "-"));
			if (ok(x) && !strcmp(x->cell.sched.text, sched)) {
				const struct result **bp = !strcmp(cols[c][1], "same") ? &best_same : &best_split;

				if (!*bp || x->msgs_per_s > (*bp)->msgs_per_s)
					*bp = x;
			}
		}
		printf("\n");
	}
	if (!o->fifo_ok)
		printf("  %s\n", o->fifo_why);
	if (best_same && best_split)
		printf("Reading: under %s, %s was fastest on one CPU and %s across two; the best across two CPUs moved %.2fx the best on one.\n",
		       sched, best_same->transport, best_split->transport,
		       best_split->msgs_per_s / best_same->msgs_per_s);
}

/* ---- seed 003: shared-memory ring latency, 1 msg/s vs flood, 1 vs 4 clients -------- */

static unsigned plan_003(const struct suite_opts *o, struct run_args *a)
{
	static char t[] = "ring,libqb-rb,shm-futex,shm-eventfd,shm-sem,unix-stream";
	static char p[] = "pingpong", s[] = "64", c[] = "1,4", r1[] = "1/s", rq[] = "20/s", pin[] = "none";

	for (int i = 0; i < 2; i++) {
		base_args(o, &a[i], "seed-003");
		a[i].transports = t;
		a[i].patterns = p;
		a[i].sizes = s;
		a[i].clients = c;
		a[i].pins = pin;
	}
	a[0].rates = o->quick ? rq : r1;
	a[0].duration_ns = (o->quick ? 1 : 6) * NSEC_PER_SEC;
	a[0].warmup = 1;
	a[0].warmup_set = true;
	a[1].count = o->quick ? 5000 : 20000;
	a[1].count_set = true;
	return 2;
}

static void print_003(const struct suite_opts *o, const struct result *r, size_t n)
{
	static const char *const tps[] = { "ring", "libqb-rb", "shm-futex", "shm-eventfd",
					   "shm-sem", "unix-stream" };
	const double rate = o->quick ? 20 : 1;
	const struct result *fast = NULL;
	char b[4][32];

	printf("64 B ping-pong round trip: paced at %.0f msg/s (the reader sleeps between messages) vs flood\n",
	       rate);
	printf("  %-12s %7s %12s %12s %12s %12s\n", "transport", "clients", "paced p50", "paced p99",
	       "flood p50", "flood exch/s");
	for (size_t i = 0; i < ARRAY_SIZE(tps); i++) {
		for (unsigned c = 1; c <= 4; c += 3) {
			const struct result *p = find(r, n, "seed-003", tps[i], NULL, NULL, -1, c, rate);
			const struct result *f = find(r, n, "seed-003", tps[i], NULL, NULL, -1, c, 0);

			if (!p && !f)
				continue;
			if (p && p->status == RES_SKIPPED && c == 1) {
				printf("  %-12s %7u  skipped: %s\n", tps[i], c, p->reason);
				continue;
			}
			if (p && p->status == RES_SKIPPED)
				continue;
			printf("  %-12s %7u %12s %12s %12s %12s\n", tps[i], c,
			       val(b[0], 32, p, ok(p) ? (double)p->lat_p50_ns : 0, fmt_ns),
			       val(b[1], 32, p, ok(p) ? (double)p->lat_p99_ns : 0, fmt_ns),
			       val(b[2], 32, f, ok(f) ? (double)f->lat_p50_ns : 0, fmt_ns),
			       val(b[3], 32, f, ok(f) ? f->msgs_per_s : 0, fmt_count));
			if (ok(f) && c == 1 && (!fast || f->lat_p50_ns < fast->lat_p50_ns))
				fast = f;
		}
	}
	if (!fast)
		return;
	const struct result *fp = find(r, n, "seed-003", fast->transport, NULL, NULL, -1, 1, rate);
	const struct result *f4 = find(r, n, "seed-003", fast->transport, NULL, NULL, -1, 4, rate);

	printf("Reading: %s had the lowest flood round trip (%s)", fast->transport,
	       fmt_ns(b[0], 32, (double)fast->lat_p50_ns));
	if (ok(fp))
		printf("; paced at %.0f/s its round trip was %.1fx the flood one", rate,
		       (double)fp->lat_p50_ns / (double)fast->lat_p50_ns);
	if (ok(fp) && ok(f4))
		printf(", and 4 paced clients gave %.2fx the p50 of 1", (double)f4->lat_p50_ns /
								       (double)fp->lat_p50_ns);
	printf(".\n");
}

/* ---- seed 004: ping-pong exchanges, processes vs threads, pipe vs barrier -------- */

static unsigned plan_004(const struct suite_opts *o, struct run_args *a)
{
	static char t[] = "pipe,barrier", p[] = "pingpong", s[] = "16", e[] = "process,thread";
	static char pin[] = "none,same,split";

	base_args(o, a, "seed-004");
	a->transports = t;
	a->patterns = p;
	a->sizes = s;
	a->endpoints = e;
	a->pins = pin;
	a->count = o->quick ? 10000 : 50000;
	a->count_set = true;
	return 1;
}

static void print_004(const struct suite_opts *o, const struct result *r, size_t n)
{
	static const struct { const char *tp, *label; int threads; } rows[] = {
		{ "pipe", "processes synchronised by a pipe", 0 },
		{ "pipe", "threads synchronised by a pipe", 1 },
		{ "barrier", "threads synchronised by a pthread_barrier", 1 },
	};
	static const char *const pins[] = { "none", "same", "split" };
	const struct result *pp = find(r, n, "seed-004", "pipe", "none", NULL, 0, 0, -1);
	const struct result *pt = find(r, n, "seed-004", "pipe", "none", NULL, 1, 0, -1);
	const struct result *ps = find(r, n, "seed-004", "pipe", "same", NULL, 0, 0, -1);
	char b[32];

	(void)o;
	printf("Exchanges/second (a 16 B request answered by a 16 B reply)\n");
	printf("  %-44s %12s %12s %12s\n", "", "unpinned", "same CPU", "two CPUs");
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		printf("  %-44s", rows[i].label);
		for (size_t k = 0; k < ARRAY_SIZE(pins); k++) {
			const struct result *x = find(r, n, "seed-004", rows[i].tp, pins[k], NULL,
						      rows[i].threads, 0, -1);

			printf(" %12s", val(b, sizeof(b), x, ok(x) ? x->msgs_per_s : 0, fmt_count));
		}
		printf("\n");
	}
	if (ok(pp) && ok(pt))
		printf("Reading: unpinned, threads exchanged %.2fx as often as processes over a pipe",
		       pt->msgs_per_s / pp->msgs_per_s);
	if (ok(pp) && ok(ps))
		printf("; pinning both processes to one CPU gave %.2fx the unpinned rate",
		       ps->msgs_per_s / pp->msgs_per_s);
	if (ok(pp))
		printf(".\n");
}

/* ---- driver -------------------------------------------------------------------------- */

static const struct section sections[] = {
	{ "seed-000", "pipes vs POSIX message queues vs unix sockets, 4 KiB, normal vs SCHED_FIFO",
	  plan_000, print_000 },
	{ "seed-001", "two processes piping data with compute between writes: CPU % over size x think",
	  plan_001, print_001 },
	{ "seed-002", "pipe / socket / queue, same CPU vs different CPUs, realtime and not",
	  plan_002, print_002 },
	{ "seed-003", "shared-memory ring latency: 1 msg/s vs flood, 1 vs 4 clients, wakeup kinds",
	  plan_003, print_003 },
	{ "seed-004", "ping-pong exchanges: processes vs threads, pipe vs barrier, placement",
	  plan_004, print_004 },
};

/* Keep the transports of a -t list that exist here; name the others. */
static void keep_existing(struct run_args *a, unsigned n, char *store, size_t len)
{
	char missing[256] = "", kept[256] = "", copy[256];

	snprintf(copy, sizeof(copy), "%s", a[0].transports);
	for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *dst = transport_find(t) ? kept : missing;
		size_t l = strlen(dst);

		snprintf(dst + l, sizeof(kept) - l, "%s%s", l ? "," : "", t);
	}
	snprintf(store, len, "%s", kept);
	for (unsigned i = 0; i < n; i++)
		a[i].transports = store;
	if (missing[0])
		printf("  (not built here, so not measured: %s)\n", missing);
}

static void print_dry_run(const struct result *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		printf("  %-12s %-9s %7llu B  %-7s pin %-5s sched %-7s clients %u think %llu rate %s%s%s\n",
		       r[i].transport, r[i].pattern, (unsigned long long)r[i].cell.size,
		       r[i].cell.threads ? "thread" : "process", r[i].cell.pin.text, r[i].cell.sched.text,
		       r[i].cell.clients, (unsigned long long)r[i].cell.think, r[i].cell.rate_text,
		       strcmp(r[i].reason, "dry run") ? "  skipped: " : "",
		       strcmp(r[i].reason, "dry run") ? r[i].reason : "");
}

/* Run one section; append its results to *all. Returns 0 or 128+N. */
static int run_section(struct suite_opts *o, const struct section *sec, struct result **all,
		       size_t *nall, struct env_info *env)
{
	struct run_args a[2];
	struct report rep = { 0 };
	struct result *res = NULL;
	char tps[256];
	unsigned na = sec->plan(o, a);
	int ret;

	for (unsigned i = 0; i < na; i++)
		a[i].repeat = o->dry_run ? 1 :
			      !strcmp(sec->name, "seed-001") ? (o->quick ? 1 : 3) :
			      /* paced cells take seconds each: one long run instead */
			      !strcmp(sec->name, "seed-003") ? 1 : o->quick ? 3 : 5;
	printf("\n== %s: %s\n", sec->name, sec->title);
	keep_existing(a, na, tps, sizeof(tps));
	fflush(stdout);
	ret = plan_and_run(a, na, &rep, &res);
	if (!res)
		return ret;
	*env = rep.env;
	if (o->dry_run)
		print_dry_run(res, rep.n);
	else
		sec->print(o, res, rep.n);
	struct result *grown = realloc(*all, (*nall + rep.n) * sizeof(**all));

	if (grown) {
		memcpy(grown + *nall, res, rep.n * sizeof(*res));
		*all = grown;
		*nall += rep.n;
	}
	free(res);
	return ret;
}

static int suite_usage(FILE *f, int ret)
{
	fputs("usage: ipclab suite seeds [--quick] [--dry-run] [--section seed-00N] [-f table|json|csv] [-o FILE] [-q]\n"
	      "  runs each seed's experiment (about 5 minutes on 2 cores; --quick about 1) and prints\n"
	      "  one section per seed, shaped like the seed's own output, with a one-sentence reading.\n"
	      "  Cells repeat 5 times (3 with --quick; the seed-001 grid 3 and 1; seed-003 runs once,\n"
	      "  6 s paced at 1/s) and report medians.\n", f);
	return ret;
}

static int suite_args(int argc, char **argv, struct suite_opts *o, const char **only)
{
	static const struct option lo[] = {
		{ "quick", no_argument, NULL, 'Q' }, { "dry-run", no_argument, NULL, 'D' },
		{ "section", required_argument, NULL, 'S' }, { "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' }, { "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' }, { 0 },
	};
	int opt;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":f:o:qh", lo, NULL)) != -1) {
		switch (opt) {
		case 'Q': o->quick = true; break;
		case 'D': o->dry_run = true; break;
		case 'S': *only = optarg; break;
		case 'o': o->output = optarg; break;
		case 'q': o->quiet = true; break;
		case 'h': return suite_usage(stdout, -1);
		case 'f':
			if (strcmp(optarg, "table") && strcmp(optarg, "json") && strcmp(optarg, "csv"))
				return fprintf(stderr, "ipclab: suite -f %s: expected table, json or csv\n", optarg), 2;
			o->format = optarg;
			break;
		default:
			fprintf(stderr, "ipclab: suite: bad option '%s'; see ipclab suite --help\n", argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc - 1 || strcmp(argv[optind], "seeds")) {
		fprintf(stderr, "ipclab: suite: expected 'ipclab suite seeds [options]'; see ipclab suite --help\n");
		return 2;
	}
	for (size_t i = 0; *only && i < ARRAY_SIZE(sections); i++)
		if (!strcmp(sections[i].name, *only))
			return 0;
	if (*only) {
		fprintf(stderr, "ipclab: suite: no section '%s'; expected seed-000 ... seed-004\n", *only);
		return 2;
	}
	return 0;
}

int cmd_suite(int argc, char **argv)
{
	struct suite_opts o = { .format = "table" };
	struct result *all = NULL;
	struct report rep = { 0 };
	const char *only = NULL;
	int ret = suite_args(argc, argv, &o, &only), saved = -1;
	size_t nall = 0;

	if (ret)
		return ret < 0 ? 0 : ret;
	snprintf(o.cmdline, sizeof(o.cmdline), "ipclab suite seeds%s%s", o.quick ? " --quick" : "",
		 o.dry_run ? " --dry-run" : "");
	probe_fifo(&o);
	if (strcmp(o.format, "table") && !o.output) {
		fflush(stdout);		/* sections go to stderr, data to stdout */
		saved = dup(STDOUT_FILENO);
		dup2(STDERR_FILENO, STDOUT_FILENO);
	}
	for (size_t i = 0; i < ARRAY_SIZE(sections) && !ret; i++)
		if (!only || !strcmp(only, sections[i].name))
			ret = run_section(&o, &sections[i], &all, &nall, &rep.env);
	fflush(stdout);
	if (saved >= 0) {
		dup2(saved, STDOUT_FILENO);
		close(saved);
	}
	if (strcmp(o.format, "table") && ret != 2) {
		struct run_args a;

		args_defaults(&a);
		a.format = o.format;
		a.output = o.output;
		rep.cmdline = o.cmdline;
		rep.results = all;
		rep.n = nall;
		int w = write_report(&a, &rep);

		ret = ret ? ret : w;
	}
	free(all);
	if (ret > 128)
		fprintf(stderr, "ipclab: interrupted by signal %d\n", ret - 128);
	return ret;
}
