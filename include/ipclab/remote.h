/* SPDX-License-Identifier: MIT */
/* Cells between hosts: `ipclab serve` runs the server side of cells for
 * remote clients, `ipclab run --peer HOST[:PORT]` runs the clients here.
 * The two talk over a control connection (TCP, separate from the measured
 * one): length-prefixed JSON frames, a versioned handshake with a shared
 * token, then clock probes and one cell at a time (src/remote/). This is
 * the remote code's own interface, for the commands (serve, run --peer);
 * the engine sees only the hooks it hangs on a cell (cell_remote.h). */
#ifndef IPCLAB_REMOTE_H
#define IPCLAB_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipclab/cell_remote.h"
#include "ipclab/experiment.h"

#define REMOTE_PROTO "ipclab-remote"
#define REMOTE_VERSION 1
#define REMOTE_DEFAULT_PORT 7227
#define REMOTE_TOKEN_MIN 16	/* bytes: a shorter token is refused */
#define REMOTE_TOKEN_MAX 256
#define REMOTE_TOKEN_GEN 24	/* random bytes of a generated token (48 hex digits) */
#define REMOTE_MAX_CPUS 1024	/* CPUs --allow-cpus can name */
#define REMOTE_MAX_CLIENTS 16	/* clients of one remote cell */

/* The shared token (src/remote/token.c). It is a secret: nothing here
 * writes it into an error message. A token is REMOTE_TOKEN_MIN to
 * REMOTE_TOKEN_MAX printable ASCII characters: 0, or -EINVAL with why
 * (what names its source, e.g. "--token"). */
int remote_token_check(const char *what, const char *tok, char *err, size_t errlen);
/* The token in file path (one line; its trailing newline dropped): a
 * regular file, not a symbolic link, owned by this user or root, that
 * no group or other user may read or write. 0, or -EINVAL with why. */
int remote_token_file(const char *path, char *buf, size_t len, char *err, size_t errlen);
/* A fresh token: REMOTE_TOKEN_GEN random bytes (getrandom) as hex. */
int remote_token_generate(char *buf, size_t len);
/* A command's token: --token-file file, else --token's value arg (copied
 * out of argv), else IPCLAB_TOKEN; checked, into buf (len at least
 * REMOTE_TOKEN_MAX + 1). 0, 1 when none is given, -EINVAL with why. */
int remote_token_pick(const char *file, const char *arg, char *buf, size_t len, char *err,
		      size_t errlen);
/* A token given on the command line, overwritten in place ("***"): other
 * users reading /proc/PID/cmdline see it no longer. */
void remote_token_hide(char *arg);
#define REMOTE_TOKEN_ARGV_WARNING \
	"warning: --token on the command line can be read by every user of this host (ps, /proc/PID/cmdline); use --token-file FILE (mode 0600) or IPCLAB_TOKEN"

/* What a peer may ask of a server's placement (--allow-sched,
 * --allow-cpus; src/remote/allow.c): checked by serve on every cell, and
 * by run --peer against the server's welcome, before anything runs. */
struct remote_allow {
	unsigned policies;	/* bit 1 << SCHED_x for other, batch, idle, fifo, rr */
	int fifo_max, rr_max;	/* the highest priority allowed */
	char sched_text[64];	/* as given, e.g. "other,batch,idle" */
	bool cpus_any;		/* no list known (an older server): any CPU */
	bool cpus[REMOTE_MAX_CPUS];
	char cpus_text[160];	/* "0-3,8" */
};
/* "other,batch,idle,fifo:MAX,rr:MAX" (any of them): 0 or -EINVAL with why. */
int allow_sched_parse(const char *text, struct remote_allow *a, char *err, size_t errlen);
/* "0-3,8": 0 or -EINVAL with why. */
int allow_cpus_parse(const char *text, struct remote_allow *a, char *err, size_t errlen);
/* The CPUs this process may run on, as the allowed ones (the default). */
int allow_cpus_own(struct remote_allow *a, char *err, size_t errlen);
/* A cell's policy (and the server side's CPU, -1 when the server picks):
 * 0, or -EINVAL with one line naming the switch, worded for the server
 * (here: "ipclab serve --allow-sched") or for its client ("its ..."). */
int allow_check(const struct remote_allow *a, const struct sched_spec *sc, int server_cpu,
		bool here, char *err, size_t errlen);

/* `ipclab serve`'s settings (src/cmd/serve.c parses them). */
struct serve_opts {
	char listen[128];	/* ADDR:PORT */
	char token[REMOTE_TOKEN_MAX + 1];
	bool once;		/* one client session, then exit */
	uint64_t max_size, max_count, max_duration_ns;
	unsigned max_clients;
	uint64_t idle_timeout_ns;	/* a client silent this long is dropped */
	struct remote_allow allow;	/* what a cell may ask for its placement */
	FILE *log;		/* one line per session and cell (NULL = quiet) */
};
/* The defaults; allow: other, batch, idle on the CPUs this process may use. */
int serve_opts_defaults(struct serve_opts *o, char *err, size_t errlen);
/* Serve until SIGINT/SIGTERM (or one session with once). 0, 128+N when
 * stopped by signal N, or -errno with why (cannot listen). */
int remote_serve(const struct serve_opts *o, char *err, size_t errlen);

/* --peer: one control connection for a whole run. */
struct peer;
/* Connect, handshake (wrong token: -EACCES), measure the clock offset.
 * -errno with why; -EINVAL/-EACCES are bad input (exit 2). */
int peer_open(const char *hostport, const char *token, struct peer **out, char *err,
	      size_t errlen);
/* Check a cell against what crosses hosts and the server's limits and
 * hang the peer on it; -EINVAL with why (bad input). */
int peer_attach(struct peer *p, struct cell *c, char *err, size_t errlen);
/* Why transport tp cannot run with --peer ("" when it can): one line
 * naming the transports that can, from the registry. */
void peer_refusal(const struct transport *tp, char *why, size_t len);
/* The server's environment as its JSON text (owned by p), and the host. */
const char *peer_env_json(const struct peer *p);
const char *peer_host(const struct peer *p);
void peer_close(struct peer *p);

#endif
