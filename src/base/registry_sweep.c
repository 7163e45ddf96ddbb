// SPDX-License-Identifier: MIT
/* registry_sweep(): read the files of runs that are gone (registry.c writes
 * them) and remove what they still list, each only after registry_check.c
 * has found it still the one the run made. A file is read as hostile
 * input: at most REG_FILE_MAX bytes, lines bounded, names printed escaped;
 * a run of another boot removes nothing but its file. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipclab/cleanup.h"
#include "ipclab/registry.h"
#include "ipclab/util.h"
#include "registry_int.h"

#define REG_LINE (2 * PATH_MAX + 128)

struct sweep {
	FILE *out;
	bool dry;
	struct sweep_report *rep;
	struct run_head h;
	struct run_obj obj[REG_MAX];
	char line[REG_LINE];
};

static const char *const kind_names[] = {
	[CL_PATH] = "file", [CL_DIR] = "directory", [CL_POSIX_MQ] = "posix-mq",
	[CL_POSIX_SHM] = "posix-shm", [CL_SYSV_MSG] = "sysv-msg", [CL_SYSV_SEM] = "sysv-sem",
	[CL_SYSV_SHM] = "sysv-shm", [CL_PID] = "process",
	[CL_QB_IPC] = "libqb-ipc rings",
};

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Lowercase hex, as registry.c writes it; no NUL byte. */
static char *from_hex(const char *s)
{
	size_t n = strlen(s);
	char *out = malloc(n / 2 + 1);

	if (!out || n % 2)
		return free(out), NULL;
	for (size_t i = 0; i < n / 2; i++) {
		int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);

		if (hi < 0 || lo < 0 || !(hi | lo))
			return free(out), NULL;
		out[i] = (char)(hi << 4 | lo);
	}
	out[n / 2] = '\0';
	return out;
}

/* One record line into the table; malformed lines are ignored. */
static void parse_record(struct sweep *sw, char *line)
{
	int h, kind;
	long id;
	unsigned long long start;
	char hex[2 * PATH_MAX + 2];

	int n;

	if (line[0] == '+' && (n = sscanf(line, "+ %d %d %ld %8193s", &h, &kind, &id, hex)) >= 3 &&
	    h >= 0 && h < REG_MAX && kind >= CL_PATH && kind <= CL_QB_IPC) {
		free(sw->obj[h].name);
		sw->obj[h] = (struct run_obj){ .live = true, .kind = kind, .id = id };
		if (n == 4)
			sw->obj[h].name = from_hex(hex);
	} else if (line[0] == '=' && sscanf(line, "= %d %ld %llu", &h, &id, &start) == 3 &&
		   h >= 0 && h < REG_MAX) {
		sw->obj[h].id = id;
		sw->obj[h].start = start;
	} else if (line[0] == '-' && sscanf(line, "- %d", &h) == 1 && h >= 0 && h < REG_MAX) {
		sw->obj[h].live = false;
	}
}

/* The next line, without its newline, into sw->line: 1, or 0 at the end.
 * A line longer than the buffer or holding a NUL byte is not one ipclab
 * writes and is skipped whole, and so is a last line without its newline
 * (a write cut short): a line cut anywhere could name a shorter path.
 * *left bounds the bytes read. */
static int next_line(struct sweep *sw, FILE *f, size_t *left)
{
	size_t n = 0;
	bool bad = false;
	int c;

	while (*left && (c = getc_unlocked(f)) != EOF) {
		--*left;
		if (c == '\n') {
			if (!bad) {
				sw->line[n] = '\0';
				return 1;
			}
			bad = false;
			n = 0;
		} else if (c == '\0' || n + 1 >= sizeof(sw->line)) {
			bad = true;
		} else {
			sw->line[n++] = (char)c;
		}
	}
	return 0;
}

/* The header, then every record line; the rest of the header says where
 * the sweeper is, compared with where the run was. */
static int read_run(struct sweep *sw, int fd)
{
	FILE *f = fdopen(dup(fd), "r");
	size_t left = REG_FILE_MAX;
	struct run_head *h = &sw->h;
	char boot[64];
	int n, ret = -1;

	if (!f)
		return -1;
	*h = (struct run_head){ 0 };
	if (next_line(sw, f, &left) &&
	    ((n = sscanf(sw->line, "R 1 %d %llu %63s %lu %lu %u %lld %lu", &h->pid, &h->start,
			 h->boot, &h->ipcns, &h->mntns, &h->uid, &h->wall, &h->pidns)) == 7 ||
	     n == 8)) {
		ret = 0;
		while (next_line(sw, f, &left))
			parse_record(sw, sw->line);
	}
	fclose(f);
	registry_boot_id(boot, sizeof(boot));
	h->same_boot = strcmp(boot, "-") && strcmp(boot, h->boot) == 0;
	h->same_ipc = h->ipcns == ns_inode("ipc");
	h->same_mnt = h->mntns == ns_inode("mnt");
	h->same_pid = h->pidns && h->pidns == ns_inode("pid");
	return ret;
}

/* A name from a record or a directory, printed with every byte that is
 * not printable ASCII (a terminal's escape, a newline) as \xNN. */
static void put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c >= 0x7f || c == '\\')
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
}

static void say(struct sweep *sw, const char *verb, const struct run_obj *o, const char *why)
{
	if (!sw->out)
		return;
	fprintf(sw->out, "%s %s ", verb, kind_names[o->kind]);
	if (o->name && o->name[0])
		put_escaped(sw->out, o->name);
	else
		fprintf(sw->out, "%ld", o->id);
	fprintf(sw->out, " (run pid %d)%s%s\n", sw->h.pid, why ? ": " : "", why ? why : "");
}

static void act_on(struct sweep *sw, struct run_obj *o)
{
	const char *why;

	switch (reg_remove(&sw->h, o, sw->dry, &why)) {
	case REG_DONE:
		sw->rep->removed++;
		say(sw, sw->dry ? "would remove" : o->kind == CL_PID ? "killed" : "removed", o, NULL);
		break;
	case REG_GONE:
		break;
	case REG_KEPT:
		sw->rep->skipped++;
		say(sw, "skipped", o, why);
		break;
	case REG_FAILED:
		sw->rep->skipped++;
		say(sw, "could not remove", o, why);
		break;
	}
}

/* Children first (they may hold objects), then newest first, directories
 * last, as cleanup_all() does. */
static void sweep_run(struct sweep *sw)
{
	for (int pass = 0; pass < 3; pass++)
		for (int i = REG_MAX - 1; i >= 0; i--) {
			struct run_obj *o = &sw->obj[i];
			int want = o->kind == CL_PID ? 0 : o->kind == CL_DIR ? 2 : 1;

			if (o->live && want == pass)
				act_on(sw, o);
		}
}

static void clear_objs(struct sweep *sw)
{
	for (int i = 0; i < REG_MAX; i++) {
		free(sw->obj[i].name);
		sw->obj[i] = (struct run_obj){ 0 };
	}
}

/* One file of the directory: a dead run's is swept and removed. */
static void say_file(struct sweep *sw, const char *verb, const char *name, const char *why)
{
	if (!sw->out)
		return;
	fprintf(sw->out, "%s run record ", verb);
	put_escaped(sw->out, name);
	fprintf(sw->out, " unread: %s\n", why);
}

/* One file of the directory: a dead run's is swept and removed. */
static void sweep_file(struct sweep *sw, int dfd, const char *name)
{
	bool pending = strncmp(name, ".new-", 5) == 0;
	/* O_NONBLOCK: a FIFO of that name must not block the sweep */
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return;
	/* a header being written by a live process: not ours to judge yet */
	if (pending && proc_start_ticks((pid_t)atoi(name + 5))) {
		close(fd);
		return;
	}
	/* the run, or one of its children, still holds its shared lock */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    flock(fd, LOCK_EX | LOCK_NB)) {
		if (!pending)
			sw->rep->live_runs++;
		close(fd);
		return;
	}
	if (pending) {
		/* a header never completed: nothing to read */
	} else if (st.st_size > (off_t)REG_FILE_MAX) {
		sw->rep->skipped++;
		say_file(sw, sw->dry ? "would remove" : "removed", name,
			 "larger than any record ipclab writes (64 MiB); nothing it lists is removed");
	} else if (read_run(sw, fd) == 0 && sw->h.uid == geteuid()) {
		sw->rep->dead_runs++;
		sweep_run(sw);
	}
	clear_objs(sw);
	if (!sw->dry)
		unlinkat(dfd, name, 0);
	close(fd);
}

int registry_sweep(FILE *out, bool dry_run, struct sweep_report *rep, char *err, size_t errlen)
{
	struct sweep_report local = { 0 };
	const char *dir = registry_dir();
	struct sweep *sw;
	struct dirent *e;
	struct stat st;
	DIR *d;
	int dfd;

	if (!rep)
		rep = &local;
	*rep = (struct sweep_report){ 0 };
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOENT ? 0 : errf(err, errlen, errno, "%s: %s", dir, strerror(errno));
	if (fstat(dfd, &st) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		close(dfd);
		return errf(err, errlen, EPERM, "%s is not a directory of this user's with mode "
			    "0700; remove it or set IPCLAB_STATE_DIR", dir);
	}
	sw = calloc(1, sizeof(*sw));
	d = sw ? fdopendir(dfd) : NULL;
	if (!d) {
		free(sw);
		close(dfd);
		return errf(err, errlen, ENOMEM, "%s: out of memory", dir);
	}
	sw->out = out;
	sw->dry = dry_run;
	sw->rep = rep;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "run-", 4) || !strncmp(e->d_name, ".new-", 5))
			sweep_file(sw, dirfd(d), e->d_name);
	closedir(d);
	free(sw);
	if (!dry_run)
		rmdir(dir);	/* only if no run has a file there now */
	return 0;
}
