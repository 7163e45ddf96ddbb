// SPDX-License-Identifier: MIT
/* --profile, the sampling half: one software clock event per CPU
 * (perf_event_open, user and kernel call stacks, CLOCK_MONOTONIC
 * timestamps, idle excluded), its ring buffer drained by a thread of the
 * parent every 50 ms, the samples of the endpoint threads kept in a store
 * per side, and those inside each side's window handed to profile_rank.c
 * at the end. Per CPU, not per thread: a per-thread clock event starts and
 * cancels a timer at every context switch of its thread, which cost 4.5x
 * on a null ping-pong here (docs/trace.md); a per-CPU one only ticks.
 * Samples are timestamped so that the sides need no syscall at their
 * window marks: the window is applied after the fact, with the clock
 * readings the rest of the result uses. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipclab/profile.h"
#include "ipclab/util.h"
#include "profile_int.h"

#ifndef HAVE_LIBDW

int profile_check(char *err, size_t len)
{
	return errf(err, len, ENOTSUP, "--profile needs elfutils' libdw, which this ipclab was built "
		    "without: install libdw-dev and libelf-dev (make deps) and rebuild");
}

int profile_open(unsigned nsides, const char *folded_dir, struct profile **out,
		 char *err, size_t len)
{
	*out = NULL;
	return profile_check(err, len);
}

int profile_add_tid(struct profile *p, unsigned side, int pid, int tid, char *err, size_t len)
{
	return -ENOTSUP;
}

void profile_window(struct profile *p, unsigned side, uint64_t start_ns, uint64_t end_ns)
{
}

int profile_collect(struct profile *p, const char *name, struct profile_result *out,
		    char *err, size_t len)
{
	memset(out, 0, sizeof(*out));
	return 0;
}

void profile_close(struct profile *p)
{
}

#else /* HAVE_LIBDW */

#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>

#define RING_PAGES 64			/* data pages per side: 256 KiB, ~0.25 s of deep stacks */
#define DRAIN_MS 50
#define STORE_MAX_WORDS (8u << 20)	/* 64 MiB of samples in all; more are counted lost */

static long perf_open(struct perf_event_attr *a, int cpu)
{
	return syscall(SYS_perf_event_open, a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void attr_init(struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	a->sample_period = NSEC_PER_SEC / PROFILE_HZ;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->exclude_hv = 1;
	a->exclude_idle = 1;
	a->disabled = 1;
}

static int read_int_file(const char *path, int *v)
{
	FILE *f = fopen(path, "re");
	int ok = f && fscanf(f, "%d", v) == 1;

	if (f)
		fclose(f);
	return ok ? 0 : -1;
}

/* Try the very event the profile opens, on CPU 0, and say why not. */
int profile_check(char *err, size_t len)
{
	struct perf_event_attr a;
	int paranoid = 2;
	long fd;

	attr_init(&a);
	fd = perf_open(&a, 0);
	if (fd >= 0) {
		close((int)fd);
		return 0;
	}
	if (errno == EACCES || errno == EPERM) {
		read_int_file("/proc/sys/kernel/perf_event_paranoid", &paranoid);
		return errf(err, len, EPERM, "--profile needs CAP_PERFMON (or root) to sample the endpoints' "
			    "CPUs with kernel stacks, and kernel.perf_event_paranoid is %d: run ipclab as "
			    "root (sudo), or allow it with sysctl -w kernel.perf_event_paranoid=0", paranoid);
	}
	return errf(err, len, errno, "--profile: perf_event_open is not available here (%s): "
		    "use a kernel with CONFIG_PERF_EVENTS and a container that allows the call",
		    strerror(errno));
}

static int store_push(struct profile *p, struct prof_store *s, const uint64_t *w, size_t n)
{
	if (p->words + n > STORE_MAX_WORDS)
		return -ENOSPC;
	if (s->len + n > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 4096;
		uint64_t *nw;

		while (cap < s->len + n)
			cap *= 2;
		if (!(nw = realloc(s->w, cap * sizeof(*nw))))
			return -ENOMEM;
		s->w = nw;
		s->cap = cap;
	}
	memcpy(s->w + s->len, w, n * sizeof(*w));
	s->len += n;
	p->words += n;
	return 0;
}

/* One PERF_RECORD_SAMPLE: ip, pid/tid, time, nr, ips[nr] -> the store as
 * time, misc, ip, nr, ips[nr]. */
static void take_sample(struct profile *p, const struct perf_event_header *h)
{
	const uint64_t *f = (const uint64_t *)(h + 1);
	size_t words = (h->size - sizeof(*h)) / sizeof(uint64_t);
	struct prof_side *ps = NULL;
	uint64_t hdr[4];
	size_t len0;

	if (words < 4 || f[3] > words - 4)
		return;
	for (unsigned i = 0; i < p->nsides && !ps; i++)	/* pid, tid: tid is the high half */
		if (p->sides[i].tid == (int)(f[1] >> 32))
			ps = &p->sides[i];
	if (!ps)
		return;			/* not an endpoint's */
	len0 = ps->store.len;
	hdr[0] = f[2];
	hdr[1] = h->misc;
	hdr[2] = f[0];
	hdr[3] = f[3];
	if (store_push(p, &ps->store, hdr, 4) ||
	    store_push(p, &ps->store, f + 4, (size_t)f[3])) {
		p->words -= ps->store.len - len0;	/* drop the half-written sample */
		ps->store.len = len0;
		p->lost++;
	}
}

/* Everything between the ring's tail and head; a record that wraps is
 * copied out whole first. */
static void drain_ring(struct profile *p, void *ring)
{
	struct perf_event_mmap_page *meta = ring;
	const char *data;
	uint64_t head, tail, size;
	union {
		struct perf_event_header h;
		char b[65536];
	} rec;

	if (!meta)
		return;
	data = (const char *)ring + meta->data_offset;
	size = meta->data_size;
	head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	tail = meta->data_tail;
	while (tail + sizeof(struct perf_event_header) <= head) {
		uint64_t at = tail % size;
		size_t first;

		memcpy(&rec.h, data + at, sizeof(rec.h));	/* headers are 8-aligned: never split */
		if (rec.h.size < sizeof(rec.h) || tail + rec.h.size > head)
			break;
		first = (size_t)(size - at) < rec.h.size ? (size_t)(size - at) : rec.h.size;
		memcpy(rec.b, data + at, first);
		memcpy(rec.b + first, data, rec.h.size - first);
		if (rec.h.type == PERF_RECORD_SAMPLE)
			take_sample(p, &rec.h);
		else if (rec.h.type == PERF_RECORD_LOST && rec.h.size >= sizeof(rec.h) + 16)
			p->lost += ((const uint64_t *)(&rec.h + 1))[1];
		tail += rec.h.size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

static void drain_all(struct profile *p)
{
	for (unsigned c = 0; c < p->ncpus; c++)
		drain_ring(p, p->cpus[c].ring);
}

static void *drain_thread(void *arg)
{
	struct profile *p = arg;
	struct pollfd pfd = { .fd = p->stop_fd, .events = POLLIN };

	while (poll(&pfd, 1, DRAIN_MS) == 0 || (pfd.revents == 0))
		drain_all(p);
	return NULL;
}

/* One clock event and ring per online CPU, disabled until every side is
 * known. */
static int open_cpus(struct profile *p, char *err, size_t len)
{
	size_t ring_len = (RING_PAGES + 1) * (size_t)sysconf(_SC_PAGESIZE);
	long n = sysconf(_SC_NPROCESSORS_CONF);
	struct perf_event_attr a;

	attr_init(&a);
	for (long c = 0; c < n && c < PROFILE_MAX_CPUS; c++) {
		struct prof_cpu *pc = &p->cpus[p->ncpus];
		long fd = perf_open(&a, (int)c);

		if (fd < 0 && (errno == ENODEV || errno == EINVAL))
			continue;	/* offline */
		if (fd < 0)
			return errf(err, len, errno, "--profile: perf_event_open on CPU %ld: %s", c,
				    strerror(errno));
		pc->fd = (int)fd;
		p->ncpus++;
		pc->ring = mmap(NULL, ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, pc->fd, 0);
		if (pc->ring == MAP_FAILED) {
			pc->ring = NULL;
			return errf(err, len, errno, "--profile: cannot map the sample buffer of CPU %ld: %s%s",
				    c, strerror(errno),
				    errno == EPERM ? " (raise kernel.perf_event_mlock_kb, or run as root)" : "");
		}
		pc->ring_len = ring_len;
	}
	return p->ncpus ? 0 : errf(err, len, ENODEV, "--profile: no CPU to sample");
}

int profile_open(unsigned nsides, const char *folded_dir, struct profile **out,
		 char *err, size_t len)
{
	struct profile *p;
	int ret;

	*out = NULL;
	if (!nsides || nsides > PROFILE_MAX_SIDES)
		return errf(err, len, EINVAL, "--profile: %u endpoints, at most %u can be profiled",
			    nsides, PROFILE_MAX_SIDES);
	if (!(p = calloc(1, sizeof(*p))))
		return errf(err, len, ENOMEM, "--profile: out of memory");
	p->nsides = nsides;
	p->od.fd = -1;
	for (unsigned c = 0; c < PROFILE_MAX_CPUS; c++)
		p->cpus[c].fd = -1;
	p->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (folded_dir) {
		snprintf(p->dir, sizeof(p->dir), "%s", folded_dir);
		if ((ret = outdir_open(&p->od, "--profile", folded_dir, err, len))) {
			profile_close(p);
			return ret;
		}
	}
	if (p->stop_fd < 0)
		ret = errf(err, len, errno, "--profile: eventfd: %s", strerror(errno));
	else
		ret = open_cpus(p, err, len);
	if (ret) {
		profile_close(p);
		return ret;
	}
	*out = p;
	return 0;
}

/* The side's process's mappings, read while it lives: a forked side's are
 * its own, even if today they are the parent's. */
static int snapshot_maps(struct prof_side *ps, int pid)
{
	char path[64], buf[4096];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	if (!(f = fopen(path, "re")))
		return -errno;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		char *m = realloc(ps->maps, ps->maps_len + n + 1);

		if (!m) {
			fclose(f);
			return -ENOMEM;
		}
		ps->maps = m;
		memcpy(ps->maps + ps->maps_len, buf, n);
		ps->maps_len += n;
		ps->maps[ps->maps_len] = '\0';
	}
	fclose(f);
	return ps->maps ? 0 : -ENOENT;
}

/* Once the last side is known: sampling on, and the reader. */
static int profile_start(struct profile *p, char *err, size_t len)
{
	int ret;

	for (unsigned c = 0; c < p->ncpus; c++)
		if (ioctl(p->cpus[c].fd, PERF_EVENT_IOC_ENABLE, 0))
			return errf(err, len, errno, "--profile: cannot start sampling: %s", strerror(errno));
	if ((ret = pthread_create(&p->drain, NULL, drain_thread, p)))
		return errf(err, len, ret, "--profile: cannot start its reader: %s", strerror(ret));
	p->drain_on = true;
	return 0;
}

int profile_add_tid(struct profile *p, unsigned side, int pid, int tid, char *err, size_t len)
{
	struct prof_side *ps;
	int ret;

	if (!p || side >= p->nsides || p->sides[side].tid)
		return errf(err, len, EINVAL, "--profile: no side %u to add", side);
	ps = &p->sides[side];
	ps->pid = pid;
	if ((ret = snapshot_maps(ps, pid)))
		return errf(err, len, -ret, "--profile: cannot read /proc/%d/maps: %s", pid,
			    strerror(-ret));
	ps->tid = tid;
	return ++p->nadded == p->nsides ? profile_start(p, err, len) : 0;
}

void profile_window(struct profile *p, unsigned side, uint64_t start_ns, uint64_t end_ns)
{
	if (!p || side >= p->nsides)
		return;
	p->sides[side].win0 = start_ns;
	p->sides[side].win1 = end_ns;
}

/* Sampling stops and the reader with it; what the rings still hold is read. */
void profile_stop(struct profile *p)
{
	uint64_t one = 1;

	for (unsigned c = 0; c < p->ncpus; c++)
		ioctl(p->cpus[c].fd, PERF_EVENT_IOC_DISABLE, 0);
	if (p->drain_on) {
		if (write(p->stop_fd, &one, sizeof(one)) != sizeof(one))
			pthread_cancel(p->drain);
		pthread_join(p->drain, NULL);
		p->drain_on = false;
	}
	drain_all(p);
}

void profile_close(struct profile *p)
{
	if (!p)
		return;
	profile_stop(p);
	for (unsigned c = 0; c < p->ncpus; c++) {
		if (p->cpus[c].ring)
			munmap(p->cpus[c].ring, p->cpus[c].ring_len);
		if (p->cpus[c].fd >= 0)
			close(p->cpus[c].fd);
	}
	for (unsigned i = 0; i < p->nsides; i++) {
		free(p->sides[i].store.w);
		free(p->sides[i].maps);
	}
	if (p->stop_fd >= 0)
		close(p->stop_fd);
	outdir_close(&p->od);
	free(p);
}

#endif /* HAVE_LIBDW */
