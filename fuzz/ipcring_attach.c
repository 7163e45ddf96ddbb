// SPDX-License-Identifier: MIT
/*
 * ipcring_attach.c - libFuzzer harness: a hostile segment header. The input
 * is written over the header of a sealed memfd (as a peer sharing the memfd
 * could write it), the rest of the memfd zeroed, and both roles attached.
 * Attach must refuse (-EBADMSG, -EINVAL, -EBUSY) or succeed, never crash;
 * after a successful attach one record is written and read back with
 * timeouts of 0, and what comes back must fit the validated limits.
 *
 * Input: byte 0 picks the memfd (its size, sealed or not) and the order of
 * the roles; byte 1 the record length; the rest is the header (zero-padded).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ipcring.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ipcring *p = NULL, *c = NULL;
	unsigned v;
	size_t len, fsize;
	int fd, rp, rc;

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
	if (data[0] & 8) {
		rc = ipcring_attach(&c, fd, IPCRING_CONSUMER, efd);
		rp = ipcring_attach(&p, fd, IPCRING_PRODUCER, efd);
	} else {
		rp = ipcring_attach(&p, fd, IPCRING_PRODUCER, efd);
		rc = ipcring_attach(&c, fd, IPCRING_CONSUMER, efd);
	}
	/* refusals are the documented ones, and leave no handle */
	if (rp && ((rp != -EBADMSG && rp != -EINVAL && rp != -EBUSY) || p))
		abort();
	if (rc && ((rc != -EBADMSG && rc != -EINVAL && rc != -EBUSY) || c))
		abort();
	if (!variants[v].sealed && (!rp || !rc))
		abort();	/* an unsealed memfd could be shrunk under us */
	exercise(p, c, len);
	ipcring_close(p);
	ipcring_close(c);
	return 0;
}
