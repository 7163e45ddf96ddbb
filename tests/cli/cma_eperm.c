// SPDX-License-Identifier: MIT
/* LD_PRELOAD helper for tests/cli/cma_refused.sh: process_vm_readv and
 * process_vm_writev refuse as the kernel does when the caller lacks ptrace
 * permission over the target (EPERM), so the refusal path of the cma
 * transport can be checked on a machine (or as a user) where it would
 * succeed. */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/uio.h>

ssize_t process_vm_readv(pid_t pid, const struct iovec *l, unsigned long ln,
			 const struct iovec *r, unsigned long rn, unsigned long flags)
{
	errno = EPERM;
	return -1;
}

ssize_t process_vm_writev(pid_t pid, const struct iovec *l, unsigned long ln,
			  const struct iovec *r, unsigned long rn, unsigned long flags)
{
	errno = EPERM;
	return -1;
}
