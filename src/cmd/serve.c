// SPDX-License-Identifier: MIT
/* ipclab serve: run the server side of cells for `ipclab run --peer` on
 * other hosts (src/remote/serve.c does the work). */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_opt.h"
#include "cmd.h"
#include "ipclab/opt.h"
#include "ipclab/remote.h"

#define STR_(x) #x
#define STR(x) STR_(x)

/* What the options fill: the daemon's options and what is checked after. */
struct serve_args {
	struct serve_opts o;
	char tok_arg[REMOTE_TOKEN_MAX + 1];	/* --token's, copied out of argv */
	const char *token, *token_file, *asched, *acpus;
	bool quiet;
};

#define SV(f) offsetof(struct serve_args, f)
#define SV_UNSIGNED 1	/* a number row's id: its field is an unsigned */
const size_t serve_args_size = sizeof(struct serve_args);

static int serve_usage(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx)
{
	(void)o, (void)arg, (void)args, (void)ctx;
	fputs("usage: ipclab serve [--listen ADDR[:PORT]] [--token-file FILE] [--once] [limits]\n"
	      "Run the server side of cells for `ipclab run --peer HOST[:PORT]` on other hosts,\n"
	      "one client and one cell at a time. The client must give the same token\n"
	      "(--token-file, else IPCLAB_TOKEN, else --token; none: one is made and shown once).\n"
	      "Wrong tokens are slowed down per address. The control connection is not\n"
	      "encrypted: use it on networks you trust.\n", stdout);
	cli_help(stdout, serve_options, 0);
	fputs("Exit status: 0 (with --once, or stopped by a signal: 128+N), 1 cannot listen,\n"
	      "2 bad input.\n", stdout);
	return -1;
}

/* A limit: of the row's type, within its range, into its field. */
static int serve_number(const struct cli_opt *r, char *arg, void *args, struct cli_ctx *ctx)
{
	struct opt_desc d = { .name = r->name, .type = r->type, .min = r->min, .max = r->max };
	char *field = (char *)args + r->offset;
	char err[ERRLEN];
	uint64_t v;

	(void)ctx;
	if (opt_set(&d, &v, arg, err, sizeof(err)))
		return cmd_usage_error("serve", "--%s %s: %s", r->name, arg, err);
	if (r->id == SV_UNSIGNED)
		*(unsigned *)field = (unsigned)v;
	else
		memcpy(field, &v, sizeof(v));
	return 0;
}

static int serve_listen(const struct cli_opt *r, char *arg, void *args, struct cli_ctx *ctx)
{
	struct serve_args *a = args;

	(void)r, (void)ctx;
	if (strlen(arg) >= sizeof(a->o.listen))
		return cmd_usage_error("serve", "--listen %s: too long", arg);
	snprintf(a->o.listen, sizeof(a->o.listen), "%s", arg);
	return 0;
}

/* --token T: copied, then hidden in argv (other users can read it there). */
static int serve_token_arg(const struct cli_opt *r, char *arg, void *args, struct cli_ctx *ctx)
{
	struct serve_args *a = args;
	int ret = 0;

	(void)r, (void)ctx;
	if (strlen(arg) > REMOTE_TOKEN_MAX)
		ret = cmd_usage_error("serve", "--token: the token is longer than %d bytes",
				      REMOTE_TOKEN_MAX);
	snprintf(a->tok_arg, sizeof(a->tok_arg), "%s", arg);
	remote_token_hide(arg);
	a->token = a->tok_arg;
	return ret;
}

#define SV_NUMBER(l, m, t, f, lo, hi, h) { .name = l, .has_arg = required_argument, .metavar = m, \
	.kind = CLI_CALL, .call = serve_number, .type = t, .offset = SV(f), .min = lo, .max = hi, \
	.help = h }

const struct cli_opt serve_options[] = {
	{ .name = "listen", .has_arg = required_argument, .metavar = "ADDR:PORT", .kind = CLI_CALL,
	  .call = serve_listen,
	  .help = "control address: IPV4:PORT, [IPV6]:PORT or an address\n"
		  "alone (default 0.0.0.0:" STR(REMOTE_DEFAULT_PORT) "; [::]:PORT takes both); the\n"
		  "measured connection listens on the address a client reached" },
	{ .name = "token-file", .has_arg = required_argument, .metavar = "FILE", .kind = CLI_TEXT,
	  .offset = SV(token_file), .values = "@file",
	  .help = "the shared token, " STR(REMOTE_TOKEN_MIN) "-" STR(REMOTE_TOKEN_MAX)
		  " printable bytes on one line, in a\nfile no other user may read (mode 0600)" },
	{ .name = "token", .has_arg = required_argument, .metavar = "T", .kind = CLI_CALL,
	  .call = serve_token_arg,
	  .help = "the same on the command line (every user can read it there)" },
	{ .name = "once", .has_arg = no_argument, .kind = CLI_FLAG, .offset = SV(o.once),
	  .help = "serve one client session, then exit" },
	SV_NUMBER("max-size", "S", OPT_SIZE, o.max_size, 16, 1ull << 30,
		  "largest message accepted (default 64M)"),
	SV_NUMBER("max-count", "N", OPT_UINT, o.max_count, 1, 1ull << 40,
		  "most messages per cell, warm-up included (default 100M)"),
	SV_NUMBER("max-duration", "D", OPT_DURATION, o.max_duration_ns, NSEC_PER_MSEC,
		  24 * 3600 * NSEC_PER_SEC, "longest cell accepted (default 60s)"),
	{ .name = "max-clients", .has_arg = required_argument, .metavar = "N", .kind = CLI_CALL,
	  .call = serve_number, .type = OPT_UINT, .offset = SV(o.max_clients), .id = SV_UNSIGNED,
	  .min = 1, .max = REMOTE_MAX_CLIENTS,
	  .help = "most clients per cell (default and at most " STR(REMOTE_MAX_CLIENTS) ")" },
	SV_NUMBER("idle-timeout", "D", OPT_DURATION, o.idle_timeout_ns, NSEC_PER_SEC,
		  24 * 3600 * NSEC_PER_SEC, "drop a client silent this long (default 60s)"),
	{ .name = "allow-sched", .has_arg = required_argument, .metavar = "LIST", .kind = CLI_TEXT,
	  .offset = SV(asched), .values = "list:other batch idle fifo:50 rr:50",
	  .help = "the --sched a client may ask for: other, batch, idle,\n"
		  "fifo:MAX, rr:MAX (default other,batch,idle)" },
	{ .name = "allow-cpus", .has_arg = required_argument, .metavar = "LIST", .kind = CLI_TEXT,
	  .offset = SV(acpus),
	  .help = "the CPUs the server side may run on, e.g. 2-3 (default: all\n"
		  "this process may use)" },
	{ .name = "quiet", .short_name = 'q', .has_arg = no_argument, .kind = CLI_FLAG,
	  .offset = SV(quiet), .help = "no log lines on stderr" },
	{ .name = "help", .short_name = 'h', .has_arg = no_argument, .help = "this text",
	  .kind = CLI_CALL, .call = serve_usage },
	{ 0 },
};

/* The token: from a file, the environment or argv (hidden there, with a
 * warning), else made here and shown once on stdout (never in the log). */
static int serve_token(struct serve_opts *o, const char *file, const char *arg)
{
	char err[ERRLEN];
	int ret = remote_token_pick(file, arg, o->token, sizeof(o->token), err, sizeof(err));

	if (ret < 0)
		return cmd_usage_error("serve", "%s", err);
	if (ret == 0) {
		if (arg && !file)
			say("serve", REMOTE_TOKEN_ARGV_WARNING);
		return 0;
	}
	if (remote_token_generate(o->token, sizeof(o->token)))
		return say_error("serve", "no random bytes for a token: %s", strerror(errno));
	printf("ipclab serve: no token given; this server's token (shown only here, never logged): %s\n"
	       "ipclab serve: on the client: umask 077; echo TOKEN >FILE; ipclab run --peer HOST --token-file FILE\n",
	       o->token);
	fflush(stdout);
	return 0;
}

static int serve_allow(struct serve_opts *o, const char *sched, const char *cpus)
{
	char err[ERRLEN];

	if ((sched && allow_sched_parse(sched, &o->allow, err, sizeof(err))) ||
	    (cpus && allow_cpus_parse(cpus, &o->allow, err, sizeof(err))))
		return cmd_usage_error("serve", "%s", err);
	return 0;
}

static int serve_bad(const char *word)
{
	return cmd_usage_error("serve", "unknown option or missing value '%s'; see ipclab serve --help",
			       word);
}

/* `ipclab serve`: its options (serve_options), then the daemon
 * (src/remote/serve.c). */
int cmd_serve(int argc, char **argv)
{
	static const struct cli_how how = { .cmd = "serve", .operands = true, .posix = true,
					    .bad = serve_bad };
	static struct serve_args a;
	struct serve_opts *o = &a.o;
	char err[ERRLEN];
	int ret;

	memset(&a, 0, sizeof(a));
	if (serve_opts_defaults(o, err, sizeof(err)))
		return say_error("serve", "%s", err);
	ret = cli_parse_how(serve_options, argc, argv, &a, &how);
	if (ret)
		return ret < 0 ? 0 : ret;
	o->log = a.quiet ? NULL : stderr;
	if (optind < argc)
		return cmd_usage_error("serve", "takes no arguments ('%s'); see ipclab serve --help",
				       argv[optind]);
	if ((ret = serve_allow(o, a.asched, a.acpus)) ||
	    (ret = serve_token(o, a.token_file, a.token)))
		return ret;
	explicit_bzero(a.tok_arg, sizeof(a.tok_arg));
	ret = remote_serve(o, err, sizeof(err));
	explicit_bzero(o->token, sizeof(o->token));
	if (ret == -EINVAL)
		return cmd_usage_error("serve", "%s", err);
	if (ret < 0)
		return say_error("serve", "%s", err[0] ? err : strerror(-ret));
	return ret;
}
