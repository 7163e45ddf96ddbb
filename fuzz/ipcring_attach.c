// SPDX-License-Identifier: MIT
/*
 * ipcring_attach.c - libFuzzer harness: a hostile segment header. The input
 * is written over the header of a sealed memfd (as a peer sharing the memfd
 * could write it), the rest of the memfd zeroed, and both roles attached.
 * Attach must refuse (-EBADMSG, -EINVAL, -EBUSY) or succeed, never crash;
 * after a successful attach one record is written and read back with
 * timeouts of 0, and what comes back must fit the validated limits.
 *
 * Bytes 0x60-0x6f of the header (padding of its first block, which the
 * library never reads) steer what else the peer does:
 *  [0] bit 0: between the two attaches, the word [4..7] is written over
 *      configuration word [1] % 14 (the second end validates another
 *      header than the first: each must get a mapping that fits its own);
 *  [0] bit 1: during the attaches a second thread flips tail ([2] bit 0
 *      clear) or head between the input's value and the word [8..11]; an
 *      attach that fails must leave its role as it found it;
 *  [0] bit 2: the eventfd is [3] % 6: genuine, /dev/zero, a pipe, an epoll
 *      fd, a semaphore eventfd with a huge count, a blocking eventfd; only
 *      the genuine one may be accepted;
 *  [0] bit 3: after the attaches, [12] % 32 records go through with timeouts
 *      of 1-2 ms, crossing the end of the data area; every reservation must
 *      lie inside the producer's mapping and every call return in time
 *      (after MAX_TIMEOUTS calls have timed out, the rest do not block; the
 *      fuzzing build's millisecond is 10 us: RING_MS_NS, mk/fuzz.mk).
 *
 * Input: byte 0 picks the memfd (its size, sealed or not) and the order of
 * the roles; byte 1 the record length; the rest is the header (zero-padded).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "ipcring_pin.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* memfd sizes: header page(s) + data area; one of them left unsealed */
static const struct { size_t size; int sealed; } variants[] = {
	{ 4096 + 4096, 1 }, { 4096 + 8192, 1 }, { 4096 + 65536, 1 },
	{ 8192 + 4096, 1 }, { 8192 + 8192, 1 }, { 4096 + 4096, 0 },
	{ 3000, 1 }, { 4096 + 12288, 1 },
};
#define NVARIANTS (sizeof(variants) / sizeof(variants[0]))

static int fds[NVARIANTS];
static int efd = -1;
static uint8_t *page;		/* the bytes written over the memfd each time */

static int variant_fd(unsigned v)
{
	int fd;

	if (fds[v] > 0)
		return fds[v];
	fd = memfd_create("ipcring-fuzz", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || ftruncate(fd, (off_t)variants[v].size) < 0)
		abort();
	if (variants[v].sealed &&
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		abort();
	fds[v] = fd;
	return fd;
}

#define CTL_OFF		0x60	/* the harness's control bytes in the header */
#define SLACK_NS	5000000000ull	/* a loaded, shared 2-CPU machine stalls */

/* ---- eventfds, genuine and not ---- */

static int fake_efd(unsigned kind)
{
	static int fakes[6] = { -1, -1, -1, -1, -1, -1 };
	uint64_t huge = (uint64_t)1 << 40;
	int pfd[2];

	if (kind == 0)
		return efd;
	if (fakes[kind] >= 0)
		return fakes[kind];
	switch (kind) {
	case 1: fakes[1] = open("/dev/zero", O_RDWR | O_NONBLOCK | O_CLOEXEC); break;
	case 2:
		if (pipe2(pfd, O_NONBLOCK | O_CLOEXEC) < 0)
			abort();
		fakes[2] = pfd[0];	/* the write end stays open, unused */
		break;
	case 3: fakes[3] = epoll_create1(EPOLL_CLOEXEC); break;
	case 4:
		fakes[4] = eventfd(0, EFD_SEMAPHORE | EFD_NONBLOCK | EFD_CLOEXEC);
		if (fakes[4] < 0 || write(fakes[4], &huge, sizeof(huge)) < 0)
			abort();
		break;
	default: fakes[5] = eventfd(0, EFD_CLOEXEC);
	}
	if (fakes[kind] < 0)
		abort();
	return fakes[kind];
}

/* ---- a thread flipping an index during the attaches ---- */

struct flipper {
	_Atomic uint32_t *word;
	uint32_t a, b;
	_Atomic bool stop;
	pthread_t th;
};

static void *flip_run(void *arg)
{
	struct flipper *f = arg;

	while (!atomic_load_explicit(&f->stop, memory_order_relaxed)) {
		atomic_store(f->word, f->a);
		for (int i = 0; i < 50; i++)
			ring_cpu_relax();
		atomic_store(f->word, f->b);
		for (int i = 0; i < 20; i++)
			ring_cpu_relax();
	}
	atomic_store(f->word, f->a);
	return NULL;
}

/* After a failed attach, the role must not be ALIVE in this process's name. */
static void check_role_free(int fd, int role)
{
	struct ring_ctl ctl;
	uint32_t st, pid;

	if (pread(fd, &ctl, sizeof(ctl), offsetof(struct ring_shm, ctl)) !=
	    (ssize_t)sizeof(ctl))
		abort();
	st = role == IPCRING_PRODUCER ? ctl.prod_state : ctl.cons_state;
	pid = role == IPCRING_PRODUCER ? ctl.prod_pid : ctl.cons_pid;
	if (st == ST_ALIVE && pid == (uint32_t)getpid())
		abort();	/* a failed attach kept its role */
}

/* ---- records with short timeouts, across the end of the data area ---- */

static void check_raw(const struct ipcring *r, const void *p, size_t len)
{
	const uint8_t *b = p, *lo = r->data, *hi = lo + r->data_len;

	if (b < lo || b > hi || len > (size_t)(hi - b))
		abort();
}

static void timed(uint64_t t0, int timeout_ms)
{
	if (ring_now_ns() - t0 > (uint64_t)timeout_ms * 1000000u + SLACK_NS)
		abort();
}

/* Calls of one input that may wait out their timeout; later ones do not block. */
#define MAX_TIMEOUTS	8

static void exercise_timed(struct ipcring *p, struct ipcring *c, size_t len,
			   unsigned n)
{
	static uint8_t in[1 << 16];
	unsigned timeouts = 0;
	size_t got;
	uint64_t t0;
	void *buf;
	int ret;

	for (unsigned i = 0; i < n; i++) {
		int tmo = timeouts < MAX_TIMEOUTS ? 1 + (int)(i & 1) : 0;

		if (p) {
			size_t l = len % (p->max_record + 1);

			t0 = ring_now_ns();
			ret = ipcring_reserve(p, l, &buf, tmo);
			timed(t0, tmo);
			timeouts += ret == -ETIMEDOUT;
			if (!ret) {
				uint32_t rs = ring_rec_size(p, (uint32_t)l);

				/* the record, and the next header commit zeroes */
				check_raw(p, (uint8_t *)buf - REC_HDR, rs);
				check_raw(p, ring_rec_at(p, p->pos + rs), REC_HDR);
				memset(buf, 0x3c, l);
				ipcring_commit(p, l, 0);
			} else if (ret != -EAGAIN && ret != -EPIPE && ret != -ETIMEDOUT &&
				   ret != -EBADMSG) {
				abort();
			}
		}
		if (c) {
			t0 = ring_now_ns();
			ret = ipcring_read(c, in, sizeof(in), &got, tmo);
			timed(t0, tmo);
			timeouts += ret == -ETIMEDOUT;
			if (ret == 1 && got > c->max_record)
				abort();
			if (ret < 0 && ret != -EAGAIN && ret != -EPIPE && ret != -EBADMSG &&
			    ret != -EMSGSIZE && ret != -ETIMEDOUT)
				abort();
		}
	}
}

/* A record through the ring (both ends in this process, one mapping). */
static void exercise(struct ipcring *p, struct ipcring *c, size_t len)
{
	static uint8_t out[1 << 16], in[1 << 16];
	struct ipcring_info info;
	size_t got = 0;
	int ret;

	if (p) {
		memset(out, 0xa5, len);
		ret = ipcring_write(p, out, len, 0, 0);
		if (ret && ret != -EAGAIN && ret != -EPIPE && ret != -EMSGSIZE && ret != -EBADMSG)
			abort();
	}
	if (c) {
		if (ipcring_info(c, &info))
			abort();
		ret = ipcring_read(c, in, sizeof(in), &got, 0);
		if (ret == 1 && (got > info.max_record || got > sizeof(in)))
			abort();
		if (ret < 0 && ret != -EAGAIN && ret != -EPIPE && ret != -EBADMSG &&
		    ret != -EMSGSIZE)
			abort();
	}
}

static int attach_one(struct ipcring **r, int fd, int role, int e)
{
	int ret = ipcring_attach(r, fd, role, e);

	if (ret)
		check_role_free(fd, role);
	else
		pin_map(fd, *r);
	return ret;
}

/*
 * While the index flips: attach one role 32 times, handing it back after
 * each success as the peer could (the race is narrow; repeat it).
 */
static void flip_attaches(struct ring_shm *h, int fd, int e, int role)
{
	_Atomic uint32_t *st = role == IPCRING_PRODUCER ? &h->ctl.prod_state
							: &h->ctl.cons_state;
	_Atomic uint32_t *pid = role == IPCRING_PRODUCER ? &h->ctl.prod_pid
							 : &h->ctl.cons_pid;
	uint32_t st0 = atomic_load(st), pid0 = atomic_load(pid);
	struct ipcring *r;

	for (int i = 0; i < 32; i++) {
		if (attach_one(&r, fd, role, e))
			continue;
		ipcring_close(r);
		atomic_store(pid, pid0);
		atomic_store(st, st0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ipcring *p = NULL, *c = NULL;
	struct flipper fl = { 0 };
	const uint8_t *ctl;
	unsigned v, kind = 0;
	size_t len, fsize;
	int fd, rp, rc, e;
	void *hdr = NULL;

	if (size < 2)
		return 0;
	v = data[0] % NVARIANTS;
	len = (size_t)data[1] * 64 + (data[0] >> 4);
	fd = variant_fd(v);
	fsize = variants[v].size;
	if (!page && !(page = malloc(8192 + 65536)))
		abort();
	if (efd < 0 && (efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
		abort();
	memset(page, 0, fsize);
	memcpy(page, data + 2, size - 2 < fsize ? size - 2 : fsize);
	if (pwrite(fd, page, fsize, 0) != (ssize_t)fsize)
		abort();
	ctl = page + CTL_OFF;		/* fsize >= 3000: inside the page */
	if (ctl[0] & 4)
		kind = ctl[3] % 6;
	e = fake_efd(kind);
	if ((ctl[0] & 2) && fsize >= 4096) {
		hdr = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (hdr == MAP_FAILED)
			abort();
		fl.word = ctl[2] & 1 ? &((struct ring_shm *)hdr)->head
				     : &((struct ring_shm *)hdr)->tail;
		fl.a = atomic_load(fl.word);
		memcpy(&fl.b, ctl + 8, 4);
		atomic_store(&fl.stop, false);
		if (pthread_create(&fl.th, NULL, flip_run, &fl))
			abort();
		flip_attaches((struct ring_shm *)hdr, fd, e,
			      ctl[2] & 2 ? IPCRING_CONSUMER : IPCRING_PRODUCER);
	}
	if (data[0] & 8) {
		rc = attach_one(&c, fd, IPCRING_CONSUMER, e);
		if (ctl[0] & 1)
			pwrite(fd, ctl + 4, 4, 4 * (ctl[1] % 14));
		rp = attach_one(&p, fd, IPCRING_PRODUCER, e);
	} else {
		rp = attach_one(&p, fd, IPCRING_PRODUCER, e);
		if (ctl[0] & 1)
			pwrite(fd, ctl + 4, 4, 4 * (ctl[1] % 14));
		rc = attach_one(&c, fd, IPCRING_CONSUMER, e);
	}
	if (hdr) {
		atomic_store(&fl.stop, true);
		pthread_join(fl.th, NULL);
		munmap(hdr, 4096);
	}
	/* refusals are the documented ones, and leave no handle */
	if (rp && ((rp != -EBADMSG && rp != -EINVAL && rp != -EBUSY) || p))
		abort();
	if (rc && ((rc != -EBADMSG && rc != -EINVAL && rc != -EBUSY) || c))
		abort();
	if (!variants[v].sealed && (!rp || !rc))
		abort();	/* an unsealed memfd could be shrunk under us */
	/* only a genuine eventfd is accepted */
	if (kind && ((p && p->wait_mode == IPCRING_WAIT_EVENTFD) ||
		     (c && c->wait_mode == IPCRING_WAIT_EVENTFD)))
		abort();
	if (ctl[0] & 8)
		exercise_timed(p, c, len, ctl[12] % 32);
	else
		exercise(p, c, len);
	ipcring_close(p);
	ipcring_close(c);
	return 0;
}
