// SPDX-License-Identifier: MIT
/* Helpers shared by every layer: error buffers, full-length I/O, number and
 * unit parsing, human formatting. */
#include <ctype.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipclab/util.h"

int errf(char *buf, size_t len, int err, const char *fmt, ...)
{
	va_list ap;

	if (buf && len) {
		va_start(ap, fmt);
		vsnprintf(buf, len, fmt, ap);
		va_end(ap);
	}
	return -err;
}

void argv_overwrite(char *word, const char *shown)
{
	size_t n = strlen(word), k = strlen(shown);

	memset(word, '\0', n);
	memcpy(word, shown, k < n ? k : n);
}

ssize_t full_read(int fd, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = read(fd, (char *)buf + done, len - done);

		if (n > 0) {
			done += (size_t)n;
		} else if (n == 0) {
			return done ? -EPIPE : 0;
		} else {
			return -errno;
		}
	}
	return (ssize_t)done;
}

ssize_t full_write(int fd, const void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(fd, (const char *)buf + done, len - done);

		if (n >= 0)
			done += (size_t)n;
		else
			return -errno;
	}
	return (ssize_t)done;
}

/* Parse "<number><suffix>" where suffix scales by base^k (k, m, g, t). */
static int parse_scaled(const char *s, uint64_t *out, uint64_t base)
{
	char *end;
	unsigned long long v;
	uint64_t mul = 1;

	if (!s || !*s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -ERANGE;
	switch (tolower((unsigned char)*end)) {
	case '\0':
		break;
	case 'k': mul = base; end++; break;
	case 'm': mul = base * base; end++; break;
	case 'g': mul = base * base * base; end++; break;
	case 't': mul = base * base * base * base; end++; break;
	default:
		return -EINVAL;
	}
	/* allow "4KiB", "4kB", "4KB" */
	if (mul > 1 && (*end == 'i' || *end == 'I'))
		end++;
	if (mul > 1 && (*end == 'b' || *end == 'B'))
		end++;
	if (*end)
		return -EINVAL;
	if (v > UINT64_MAX / mul)
		return -ERANGE;
	*out = v * mul;
	return 0;
}

int parse_size(const char *s, uint64_t *out)
{
	return parse_scaled(s, out, 1024);
}

int parse_count(const char *s, uint64_t *out)
{
	return parse_scaled(s, out, 1000);
}

int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -ERANGE;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_duration(const char *s, uint64_t *out_ns)
{
	static const struct { const char *sfx; double mul; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
		{ "m", 60e9 }, { "min", 60e9 }, { "h", 3600e9 }, { "", 1e9 },
	};
	char *end;
	double v;

	if (!s || !(isdigit((unsigned char)*s) || *s == '.'))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || !isfinite(v) || v < 0)
		return -ERANGE;
	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		if (strcmp(end, units[i].sfx) == 0) {
			double ns = v * units[i].mul;

			/* below 2^63: llround's range (and every signed sum later) */
			if (ns >= 9.2e18)
				return -ERANGE;
			*out_ns = (uint64_t)llround(ns);
			return 0;
		}
	}
	return -EINVAL;
}

unsigned edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned row[64];

	if (lb >= ARRAY_SIZE(row) || la >= 64)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned prev = row[0], tmp;

		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned cost = a[i - 1] != b[j - 1];
			unsigned best = prev + cost;

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			tmp = row[j];
			row[j] = best;
			prev = tmp;
		}
	}
	return row[lb];
}

static const char *fmt_scaled(char *buf, size_t len, double v, double base,
			      const char *const *units, size_t nunits)
{
	size_t u = 0;

	while (fabs(v) >= base && u + 1 < nunits) {
		v /= base;
		u++;
	}
	if (fabs(v) >= 100 || u == 0)
		snprintf(buf, len, "%.0f%s", v, units[u]);
	else if (fabs(v) >= 10)
		snprintf(buf, len, "%.1f%s", v, units[u]);
	else
		snprintf(buf, len, "%.2f%s", v, units[u]);
	return buf;
}

const char *fmt_bytes(char *buf, size_t len, double bytes)
{
	static const char *const u[] = { "B", "KiB", "MiB", "GiB", "TiB" };

	return fmt_scaled(buf, len, bytes, 1024, u, ARRAY_SIZE(u));
}

const char *fmt_count(char *buf, size_t len, double n)
{
	static const char *const u[] = { "", "k", "M", "G", "T" };

	return fmt_scaled(buf, len, n, 1000, u, ARRAY_SIZE(u));
}

const char *fmt_ns(char *buf, size_t len, double ns)
{
	static const char *const u[] = { "ns", "us", "ms", "s" };

	return fmt_scaled(buf, len, ns, 1000, u, ARRAY_SIZE(u));
}

ssize_t read_text_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	close(fd);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	return n;
}

unsigned long long proc_start_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long start = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_text_file(path, buf, sizeof(buf)) <= 0 || !(p = strrchr(buf, ')')))
		return 0;
	if (p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
		return 0;
	/* after ") ": state is field 3, starttime field 22 */
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
			  "%*d %*d %llu", &start) != 1)
		return 0;
	return start;
}

unsigned long ns_inode(const char *which)
{
	struct stat st;
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/ns/%s", which);
	return stat(path, &st) ? 0 : (unsigned long)st.st_ino;
}

bool cap_effective(unsigned cap)
{
	char line[256];
	unsigned long long eff = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return cap < 64 && (eff >> cap & 1);
}
