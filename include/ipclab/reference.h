/* SPDX-License-Identifier: MIT */
/* --reference (src/reference/): beside a cell, a bare loop over the same
 * syscalls, sizes, placement, scheduling and endpoint kind, with no header,
 * histogram, checks or sampling, so that ipclab's own cost can be read off.
 * It shares nothing with the harness it checks: its own channel, its own
 * fork/threads, its own clock reads. */
#ifndef IPCLAB_REFERENCE_H
#define IPCLAB_REFERENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipclab/util.h"

#define REF_MAX_PAIRS 64       /* --repeat pairs whose order is kept */
#define REF_MAX_SAMPLES 100000 /* RTTs kept for the median */

enum ref_status { REF_NONE, REF_OK, REF_FAILED };

struct ref_result {
	bool on;		/* --reference was asked for */
	enum ref_status status; /* REF_NONE: no reference for this cell (reason) */
	char reason[ERRLEN];
	double msgs_per_s;		  /* exchanges/s for ping-pong */
	double lat_mean_ns;		  /* ping-pong: mean RTT (exact); stream: NAN */
	uint64_t lat_p50_ns;		  /* ping-pong: median of up to REF_MAX_SAMPLES RTTs */
	double ratio;			  /* ipclab's headline over the reference's: msgs/s
					 * (stream) or mean RTT (ping-pong); NAN when either is missing */
	double overhead_pct;		  /* what ipclab costs over the bare loop, % (0 = none) */
	unsigned pairs;			  /* (full cell, reference) pairs run */
	uint32_t order[REF_MAX_PAIRS][2]; /* each pair's steps in the session */
};

struct cell;
struct result;
struct ref_chan;

/* A transport's reference (struct transport's .reference): how its bare
 * loop makes its channel, and which -O options it applies as the cell
 * does (any other set away from its default leaves the cell without a
 * reference). */
struct tp_reference {
	/* fill ch (src/reference/ref_int.h) for cell c: 0 or -errno with why */
	int (*open)(struct ref_chan *ch, const struct cell *c, char *err, size_t errlen);
	const char *const *mirrored;	/* NULL-terminated */
};

/* The references there are, one per transport that names it
 * (src/reference/channels.c, shm.c, libs.c). */
extern const struct tp_reference ref_pipe, ref_fifo, ref_unix_stream, ref_unix_dgram,
	ref_unix_seqpacket, ref_tcp, ref_udp, ref_posix_mq, ref_sysv_mq, ref_shm_futex,
	ref_cacheline, ref_ring, ref_ring_spin, ref_ring_eventfd;
#ifdef HAVE_LIBQB
extern const struct tp_reference ref_libqb_rb;
#endif

/* Does c have a reference? false with why in why. */
bool reference_exists(const struct cell *c, char *why, size_t whylen);
/* Run c's reference once into out (msgs_per_s, lat_*; status REF_OK or
 * REF_FAILED with the reason), right after the cell ran into *cell (with
 * -d the reference moves as many messages as the cell did). Returns 0, or
 * -EINTR when interrupted. */
int reference_run(const struct cell *c, const struct result *cell, struct ref_result *out);
/* --repeat: fold n repetitions' references (reps[i].ref) into *into, medians
 * (or the first failure); then ratio against the folded result r. */
void reference_fold(const struct result *reps, unsigned n, struct ref_result *into);
void reference_ratio(struct result *r);

/* The three above, as a session runs them (session_opts.reference): the
 * engine calls the reference loop through this, naming none itself. */
struct reference_ops {
	int (*run)(const struct cell *c, const struct result *cell, struct ref_result *out);
	void (*fold)(const struct result *reps, unsigned n, struct ref_result *into);
	void (*ratio)(struct result *r);
};
extern const struct reference_ops reference_ops;

#endif
