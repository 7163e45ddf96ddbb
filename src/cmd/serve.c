// SPDX-License-Identifier: MIT
/* ipclab serve: run the server side of cells for `ipclab run --peer` on
 * other hosts (src/remote/serve.c does the work). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "ipclab/opt.h"
#include "ipclab/remote.h"

static int serve_usage(FILE *f)
{
	fprintf(f, "usage: ipclab serve [--listen ADDR[:PORT]] [--token-file FILE] [--once] [limits]\n"
		"Run the server side of cells for `ipclab run --peer HOST[:PORT]` on other hosts,\n"
		"one client and one cell at a time. The client must give the same token\n"
		"(--token-file, else IPCLAB_TOKEN, else --token; none: one is made and shown once).\n"
		"Wrong tokens are slowed down per address. The control connection is not\n"
		"encrypted: use it on networks you trust.\n"
		"      --listen ADDR:PORT  control address: IPV4:PORT, [IPV6]:PORT or an address\n"
		"                          alone (default 0.0.0.0:%d; [::]:PORT takes both); the\n"
		"                          measured connection listens on the address a client reached\n"
		"      --token-file FILE   the shared token, %d-%d printable bytes on one line, in a\n"
		"                          file no other user may read (mode 0600)\n"
		"      --token T           the same on the command line (every user can read it there)\n"
		"      --once              serve one client session, then exit\n"
		"      --max-size S        largest message accepted (default 64M)\n"
		"      --max-count N       most messages per cell, warm-up included (default 100M)\n"
		"      --max-duration D    longest cell accepted (default 60s)\n"
		"      --max-clients N     most clients per cell (default and at most %d)\n"
		"      --idle-timeout D    drop a client silent this long (default 60s)\n"
		"      --allow-sched LIST  the --sched a client may ask for: other, batch, idle,\n"
		"                          fifo:MAX, rr:MAX (default other,batch,idle)\n"
		"      --allow-cpus LIST   the CPUs the server side may run on, e.g. 2-3 (default: all\n"
		"                          this process may use)\n"
		"  -q, --quiet             no log lines on stderr\n"
		"Exit status: 0 (with --once, or stopped by a signal: 128+N), 1 cannot listen,\n"
		"2 bad input.\n", REMOTE_DEFAULT_PORT, REMOTE_TOKEN_MIN, REMOTE_TOKEN_MAX,
		REMOTE_MAX_CLIENTS);
	return f == stdout ? 0 : 2;
}

static int number(const char *opt, enum opt_type type, const char *arg, uint64_t min, uint64_t max,
		  uint64_t *out)
{
	struct opt_desc d = { .name = opt, .type = type, .min = min, .max = max };
	char err[ERRLEN];

	if (opt_set(&d, out, arg, err, sizeof(err)))
		return cmd_usage_error("serve", "--%s %s: %s", opt, arg, err);
	return 0;
}

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

/* `ipclab serve`: its options (one getopt loop, a case each), then the
 * daemon (src/remote/serve.c). */
int cmd_serve(int argc, char **argv)
{
	enum { O_LISTEN = 256, O_TOKEN, O_TOKEN_FILE, O_ONCE, O_MSIZE, O_MCOUNT, O_MDUR, O_MCL,
	       O_IDLE, O_ASCHED, O_ACPUS };
	static const struct option longs[] = {
		{ "listen", required_argument, NULL, O_LISTEN },
		{ "token", required_argument, NULL, O_TOKEN },
		{ "token-file", required_argument, NULL, O_TOKEN_FILE },
		{ "allow-sched", required_argument, NULL, O_ASCHED },
		{ "allow-cpus", required_argument, NULL, O_ACPUS },
		{ "once", no_argument, NULL, O_ONCE },
		{ "max-size", required_argument, NULL, O_MSIZE },
		{ "max-count", required_argument, NULL, O_MCOUNT },
		{ "max-duration", required_argument, NULL, O_MDUR },
		{ "max-clients", required_argument, NULL, O_MCL },
		{ "idle-timeout", required_argument, NULL, O_IDLE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct serve_opts o;
	static char tok_arg[REMOTE_TOKEN_MAX + 1];
	const char *token = NULL, *token_file = NULL, *asched = NULL, *acpus = NULL;
	char err[ERRLEN];
	uint64_t v;
	int c, ret = 0;

	if (serve_opts_defaults(&o, err, sizeof(err)))
		return say_error("serve", "%s", err);
	o.log = stderr;
	opterr = 0;
	optind = 1;
	while (!ret && (c = getopt_long(argc, argv, "+qh", longs, NULL)) != -1) {
		switch (c) {
		case O_LISTEN:
			if (strlen(optarg) >= sizeof(o.listen))
				return cmd_usage_error("serve", "--listen %s: too long", optarg);
			snprintf(o.listen, sizeof(o.listen), "%s", optarg);
			break;
		case O_TOKEN:
			if (strlen(optarg) > REMOTE_TOKEN_MAX)
				ret = cmd_usage_error("serve", "--token: the token is longer than %d bytes",
						      REMOTE_TOKEN_MAX);
			snprintf(tok_arg, sizeof(tok_arg), "%s", optarg);
			remote_token_hide(optarg);
			token = tok_arg;
			break;
		case O_TOKEN_FILE: token_file = optarg; break;
		case O_ASCHED: asched = optarg; break;
		case O_ACPUS: acpus = optarg; break;
		case O_ONCE: o.once = true; break;
		case O_MSIZE: ret = number("max-size", OPT_SIZE, optarg, 16, 1ull << 30, &o.max_size); break;
		case O_MCOUNT: ret = number("max-count", OPT_UINT, optarg, 1, 1ull << 40, &o.max_count); break;
		case O_MDUR:
			ret = number("max-duration", OPT_DURATION, optarg, NSEC_PER_MSEC,
				     24 * 3600 * NSEC_PER_SEC, &o.max_duration_ns);
			break;
		case O_MCL:
			ret = number("max-clients", OPT_UINT, optarg, 1, REMOTE_MAX_CLIENTS, &v);
			o.max_clients = (unsigned)v;
			break;
		case O_IDLE:
			ret = number("idle-timeout", OPT_DURATION, optarg, NSEC_PER_SEC,
				     24 * 3600 * NSEC_PER_SEC, &o.idle_timeout_ns);
			break;
		case 'q': o.log = NULL; break;
		case 'h': return serve_usage(stdout);
		case '?':
		default:
			return cmd_usage_error("serve", "unknown option or missing value '%s'; see ipclab serve --help",
					       argv[optind - 1]);
		}
	}
	if (ret)
		return ret;
	if (optind < argc)
		return cmd_usage_error("serve", "takes no arguments ('%s'); see ipclab serve --help",
				       argv[optind]);
	if ((ret = serve_allow(&o, asched, acpus)) || (ret = serve_token(&o, token_file, token)))
		return ret;
	explicit_bzero(tok_arg, sizeof(tok_arg));
	ret = remote_serve(&o, err, sizeof(err));
	explicit_bzero(o.token, sizeof(o.token));
	if (ret == -EINVAL)
		return cmd_usage_error("serve", "%s", err);
	if (ret < 0)
		return say_error("serve", "%s", err[0] ? err : strerror(-ret));
	return ret;
}
