/* SPDX-License-Identifier: MIT */
/* ipclab serve: a "cell" request into a plan_spec (serve_req.c). */
#ifndef IPCLAB_REMOTE_SERVE_REQ_H
#define IPCLAB_REMOTE_SERVE_REQ_H

#include <jansson.h>
#include <sys/socket.h>

#include "ipclab/engine.h"
#include "ipclab/remote.h"

/* What a decoded request owns beside the spec. */
struct serve_req {
	void *tp_opts, *pat_opts;	/* the option blocks the spec points at */
	char secret[2 * 16 + 1];	/* the cell's, sent to the client with "ready" */
};

/* Request m into sp (one value in each list; plan_build makes its cell),
 * every number bounded by o's limits and the placement by o's allow
 * lists; the measured connection listens on local with a fresh secret.
 * 0, or -errno with why in err (the request is refused); either way
 * serve_req_free(rq) afterwards. */
int serve_request_spec(const struct serve_opts *o, const struct sockaddr_storage *local,
		       const json_t *m, struct plan_spec *sp, struct serve_req *rq, char *err,
		       size_t errlen);
void serve_req_free(struct serve_req *rq);

#endif
