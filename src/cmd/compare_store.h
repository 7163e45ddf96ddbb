/* SPDX-License-Identifier: MIT */
/* compare's sides and calibration from the store (compare_store.c). */
#ifndef IPCLAB_CMD_COMPARE_STORE_H
#define IPCLAB_CMD_COMPARE_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "../report/compare.h"

#define CMP_HOSTS_MAX 64
#define CMP_HOST_RUNS 64

/* One machine's stored runs. */
struct cmp_host {
	char name[256];
	int64_t ids[CMP_HOST_RUNS];
	size_t nids, nruns;
	struct rfile runs[CMP_HOST_RUNS];
	const struct rfile **ptr;	/* runs[0..nruns) */
};

struct cmp_machines {
	struct cmp_host *host;	/* by name */
	size_t n;
};

/* The runs with these labels ("K=V[,K=V]", NULL: all), by machine; 0 or
 * the exit status with the error said. */
int cmp_store_by_machine(const char *url, bool shared, const char *labels,
			 const char *const *ignore, struct cmp_machines *m);
void cmp_machines_free(struct cmp_machines *m);

/* machine's newest calibration (env --calibrate) in the store at url (NULL:
 * $IPCLAB_DB or the default file), source said; the count of cells, 0 when
 * none (no store is no calibration). */
size_t cmp_store_drift(const char *url, bool shared, const char *machine, struct cmp_drift *d,
		       size_t max, char *source, size_t slen);

#endif
