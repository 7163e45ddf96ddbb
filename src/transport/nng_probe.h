/* SPDX-License-Identifier: MIT */
/* What nng.c (the endpoints) and nng_probe.c (nng's errors, socket options,
 * the settings read back and the probe) share. */
#ifndef IPCLAB_TP_NNG_PROBE_H
#define IPCLAB_TP_NNG_PROBE_H

#include <stdint.h>

#include "ipclab/transport.h"

struct nn_opts {
	uint64_t buf;
	char listen[OPT_STR_MAX], connect[OPT_STR_MAX], secret[OPT_STR_MAX];	/* nng-tcp */
};

#ifdef HAVE_NNG
#include <nng/nng.h>

#define NN_SLICE_MS 100		/* a blocking call's longest wait between checks */

struct nn_hello {
	uint8_t secret[16];
	uint32_t id;
};

/* nng's errors as errno values; nn_err fills err with one and returns it. */
int nn_errno(int rv);
int nn_err(char *err, size_t errlen, const char *tp, const char *what, int rv);
/* The options every socket of the cell gets (0 or an nng error). */
int nn_setup(nng_socket s, const struct tp_config *cfg);
/* The transport's probe: can nng start in a child of this process. */
int nn_probe(const struct tp_config *cfg, char *why, size_t len);
/* create: the settings of the cell's sockets read back into ch (tcp: its
 * TCP options too). */
int nn_report(struct tp_channel *ch, bool tcp, char *err, size_t errlen);
#endif /* HAVE_NNG */

#endif
