// SPDX-License-Identifier: MIT
/* --trace=events, the recorder: a thread of the parent drains the BPF ring
 * buffer every few milliseconds while the cell runs (the programs write
 * without waking it, so the endpoints pay only the record's writing) into
 * a store that keeps the last `cap` records: the timeline's span is at the
 * window's end. After the cell, the records are put in time order (records
 * of different CPUs reach the buffer a little out of order). */
#ifdef HAVE_LIBBPF
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/libbpf.h>

#include "events_int.h"
#include "trace_shared.h"

_Static_assert(sizeof(struct tev_rec) == sizeof(struct tr_ev), "one record layout");
_Static_assert((int)TEV_SWITCH == (int)TR_EV_SWITCH && (int)TEV_WAKING == (int)TR_EV_WAKING &&
	       (int)TEV_MIGRATE == (int)TR_EV_MIGRATE, "one record layout");

#define DRAIN_NS (5 * 1000 * 1000)

struct tev_recorder {
	struct ring_buffer *rb;
	pthread_t thread;
	bool running;
	_Atomic int stop;
	struct tev_rec *v;		/* a ring of cap records, once full */
	size_t cap, n, head;		/* n kept; head: the oldest once n == cap */
	uint64_t recorded, dropped;	/* dropped: overwritten by newer ones */
};

static int on_record(void *ctx, void *data, size_t size)
{
	struct tev_recorder *r = ctx;

	if (size < sizeof(struct tev_rec))
		return 0;
	r->recorded++;
	if (r->n < r->cap) {
		memcpy(&r->v[r->n++], data, sizeof(struct tev_rec));
		return 0;
	}
	memcpy(&r->v[r->head], data, sizeof(struct tev_rec));
	r->head = (r->head + 1) % r->cap;
	r->dropped++;
	return 0;
}

static void *drain(void *arg)
{
	struct tev_recorder *r = arg;
	struct timespec ts = { .tv_nsec = DRAIN_NS };

	while (!atomic_load(&r->stop)) {
		ring_buffer__consume(r->rb);
		nanosleep(&ts, NULL);
	}
	ring_buffer__consume(r->rb);
	return NULL;
}

int tev_recorder_start(int map_fd, size_t cap, struct tev_recorder **out)
{
	struct tev_recorder *r = calloc(1, sizeof(*r));
	int ret;

	*out = NULL;
	if (!r || !cap || !(r->v = malloc(cap * sizeof(*r->v)))) {
		free(r);
		return -ENOMEM;
	}
	r->cap = cap;
	r->rb = ring_buffer__new(map_fd, on_record, r, NULL);
	if (!r->rb) {
		ret = -errno;
		tev_recorder_free(r);
		return ret ? ret : -EINVAL;
	}
	ret = -pthread_create(&r->thread, NULL, drain, r);
	if (ret) {
		tev_recorder_free(r);
		return ret;
	}
	r->running = true;
	*out = r;
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct tev_rec *x = a, *y = b;

	return x->t < y->t ? -1 : x->t > y->t;
}

void tev_recorder_stop(struct tev_recorder *r, const struct tev_rec **ev, size_t *n,
		       uint64_t *dropped, uint64_t *recorded)
{
	if (r->running) {
		atomic_store(&r->stop, 1);
		pthread_join(r->thread, NULL);
		r->running = false;
		/* the ring's order does not matter: one sort puts every record in time order */
		qsort(r->v, r->n, sizeof(*r->v), by_time);
	}
	*ev = r->v;
	*n = r->n;
	*dropped = r->dropped;
	*recorded = r->recorded;
}

void tev_recorder_free(struct tev_recorder *r)
{
	const struct tev_rec *ev;
	size_t n;
	uint64_t d, rec;

	if (!r)
		return;
	if (r->running)
		tev_recorder_stop(r, &ev, &n, &d, &rec);
	ring_buffer__free(r->rb);
	free(r->v);
	free(r);
}
#endif /* HAVE_LIBBPF */
