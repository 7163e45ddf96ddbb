/* SPDX-License-Identifier: MIT */
/* Small helpers shared by every layer: error buffers, full-length I/O,
 * number parsing, the clock. Nothing here prints or exits. */
#ifndef IPCLAB_UTIL_H
#define IPCLAB_UTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MUST_CHECK __attribute__((warn_unused_result))
#define ERRLEN 256

#define NSEC_PER_SEC 1000000000ull
#define NSEC_PER_MSEC 1000000ull
#define NSEC_PER_USEC 1000ull

/* A word of argv overwritten in place with shown (cut to the word's
 * length, the rest NULs): /proc/PID/cmdline, which every user may read,
 * shows this memory. What the word said must have been copied first. */
void argv_overwrite(char *word, const char *shown);

/* Fill a caller's error buffer (printf-style); returns -err so callers can
 * write `return errf(err, len, EINVAL, "...")`. */
int errf(char *buf, size_t len, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The one clock: CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* A stop word: nonzero once the endpoints of a cell must stop. The runner
 * hands transports and doorbells the cell's word (a signal handler may set
 * it); NULL is a word that never asks. */
static inline bool stop_requested(const _Atomic int *stop)
{
	return stop && atomic_load_explicit(stop, memory_order_relaxed);
}

static inline struct timespec ns_to_timespec(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / NSEC_PER_SEC),
			       .tv_nsec = (long)(ns % NSEC_PER_SEC) };
	return ts;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/* Whole-buffer I/O: loop over partial transfers and EINTR-free retries.
 * Return len, 0 on EOF before the first byte, or -errno (EINTR is returned
 * so that callers can honour a stop request). */
ssize_t full_read(int fd, void *buf, size_t len) MUST_CHECK;
ssize_t full_write(int fd, const void *buf, size_t len) MUST_CHECK;

/* "64", "4k", "1M", "1G": binary multiples (sizes). */
int parse_size(const char *s, uint64_t *out) MUST_CHECK;
/* "200k", "1M", "10": decimal multiples (counts). */
int parse_count(const char *s, uint64_t *out) MUST_CHECK;
/* "5s", "100ms", "2m", "250us": to ns; a bare number is seconds. */
int parse_duration(const char *s, uint64_t *out_ns) MUST_CHECK;
/* Plain unsigned integer, whole string. */
int parse_u64(const char *s, uint64_t *out) MUST_CHECK;

/* Edit distance, for "did you mean". */
unsigned edit_distance(const char *a, const char *b);

/* Format a byte count / rate / duration with a scaled unit into buf. */
const char *fmt_bytes(char *buf, size_t len, double bytes);
const char *fmt_ns(char *buf, size_t len, double ns);
const char *fmt_count(char *buf, size_t len, double n);

/* Read a small text file (sysfs/procfs) into buf, stripped of the trailing
 * newline; returns length or -errno. */
ssize_t read_text_file(const char *path, char *buf, size_t len);
/* A process's start time in clock ticks since boot (/proc/PID/stat field
 * 22): with the pid it names one process for good. 0 when there is no such
 * process or it has ended (a zombie). */
unsigned long long proc_start_ticks(pid_t pid);
/* The inode of one of this process's namespaces ("ipc", "mnt"), 0 if none. */
unsigned long ns_inode(const char *which);
/* Whether this process holds capability cap (CapEff in /proc/self/status). */
bool cap_effective(unsigned cap);

#endif
