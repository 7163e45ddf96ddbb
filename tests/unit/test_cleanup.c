// SPDX-License-Identifier: MIT
/* Unit tests for the cleanup table and the run registry: names are never
 * cut (a cut name could be another file), a process's registry file lists
 * what it created (paths absolute and resolved, as a sweeper elsewhere
 * takes them) and is removed once everything is gone. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cmocka.h>

#include "ipclab/cleanup.h"
#include "ipclab/registry.h"

static char base[PATH_MAX];

static void touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	close(fd);
}

/* A 300-character name beside a file named by its first 255 characters:
 * removing the long one must leave the short one alone. */
static void test_long_name_not_cut(void **state)
{
	char longp[PATH_MAX], cut[PATH_MAX];
	int h;

	(void)state;
	/* directories of 40 characters each, down past 300 characters */
	strcpy(longp, base);
	while (strlen(longp) < 260) {
		strcat(longp, "/dddddddddddddddddddddddddddddddddddddddd");
		assert_int_equal(mkdir(longp, 0700), 0);
	}
	strcat(longp, "/report.json.tmp-12345");
	memcpy(cut, longp, 255);
	cut[255] = '\0';
	assert_true(cut[254] != '/');
	touch(cut);
	touch(longp);
	h = cleanup_add(CL_PATH, longp);
	assert_true(h >= 0);
	cleanup_run_one(h);
	assert_int_equal(access(longp, F_OK), -1);
	assert_int_equal(access(cut, F_OK), 0);
	unlink(cut);
	for (char *sl; (sl = strrchr(longp, '/')) && strlen(longp) > strlen(base);) {
		*sl = '\0';
		rmdir(longp);
	}
}

static void test_too_long_refused(void **state)
{
	char *p = malloc(PATH_MAX + 10);

	(void)state;
	assert_non_null(p);
	memset(p, 'a', PATH_MAX + 9);
	p[PATH_MAX + 9] = '\0';
	assert_int_equal(cleanup_add(CL_PATH, p), -ENAMETOOLONG);
	free(p);
}

/* The registry file appears with the first entry, names it, and goes with
 * the last; the directory goes with it. */
static void test_registry_file(void **state)
{
	char path[PATH_MAX + 64], obj[PATH_MAX + 8], line[8192];
	struct sweep_report rep;
	char err[256];
	FILE *f;
	int h;
	bool found = false;

	(void)state;
	snprintf(obj, sizeof(obj), "%s/obj", base);
	touch(obj);
	h = cleanup_add(CL_PATH, obj);
	assert_true(h >= 0);
	snprintf(path, sizeof(path), "%s/run-%d-", registry_dir(), (int)getpid());
	/* one file, ours, that a sweep leaves alone (we are alive) */
	assert_int_equal(registry_sweep(NULL, false, &rep, err, sizeof(err)), 0);
	assert_int_equal(rep.live_runs, 1);
	assert_int_equal(rep.dead_runs, 0);
	assert_int_equal(access(obj, F_OK), 0);
	char cmd[PATH_MAX + 128];

	snprintf(cmd, sizeof(cmd), "cat %s*", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (line[0] == '+')
			found = true;
	pclose(f);
	assert_true(found);
	cleanup_all();
	assert_int_equal(access(obj, F_OK), -1);
	assert_int_equal(access(registry_dir(), F_OK), -1);
}

/* This process's registry file, whole, into buf. */
static void read_registry(char *buf, size_t len)
{
	char pat[PATH_MAX + 32];
	glob_t g;
	FILE *f;
	size_t n;

	snprintf(pat, sizeof(pat), "%s/run-%d-*", registry_dir(), (int)getpid());
	assert_int_equal(glob(pat, 0, NULL, &g), 0);
	assert_int_equal(g.gl_pathc, 1);
	f = fopen(g.gl_pathv[0], "r");
	assert_non_null(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	globfree(&g);
}

/* Does the registry hold a "+" line of kind CL_PATH naming path? */
static bool registry_names(const char *reg, const char *path)
{
	char want[2 * PATH_MAX + 1], *w = want;

	for (const char *c = path; *c; c++)
		w += sprintf(w, "%02x", (unsigned char)*c);
	for (const char *l = reg; (l = strstr(l, "\n+ ")); l++) {
		int h, kind, n = 0;
		long id;

		if (sscanf(l + 1, "+ %d %d %ld %n", &h, &kind, &id, &n) == 3 && n && kind == CL_PATH &&
		    strncmp(l + 1 + n, want, strlen(want)) == 0 && l[1 + n + strlen(want)] == '\n')
			return true;
	}
	return false;
}

/* A relative path, and one through a symbolic link, are recorded absolute
 * and resolved: a sweep runs elsewhere and follows no link. The header
 * names the pid namespace. */
static void test_registry_paths_resolved(void **state)
{
	char real[PATH_MAX], link[PATH_MAX + 8], via[PATH_MAX + 16], want[PATH_MAX + 16],
		cwd[PATH_MAX], reg[16384], ns[64];
	struct stat st;
	int h[2];

	(void)state;
	assert_non_null(realpath(base, real));
	strcat(real, "/real");
	snprintf(link, sizeof(link), "%s/link", base);
	assert_int_equal(mkdir(real, 0700), 0);
	assert_int_equal(symlink("real", link), 0);
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(real), 0);
	h[0] = cleanup_add(CL_PATH, "out.json.tmp-1");
	snprintf(via, sizeof(via), "%s/f", link);
	h[1] = cleanup_add(CL_PATH, via);
	assert_int_equal(chdir(cwd), 0);
	assert_true(h[0] >= 0 && h[1] >= 0);
	read_registry(reg, sizeof(reg));
	snprintf(want, sizeof(want), "%s/out.json.tmp-1", real);
	assert_true(registry_names(reg, want));
	snprintf(want, sizeof(want), "%s/f", real);
	assert_true(registry_names(reg, want));
	assert_int_equal(stat("/proc/self/ns/pid", &st), 0);
	snprintf(ns, sizeof(ns), " %lu\n", (unsigned long)st.st_ino);
	assert_non_null(strstr(reg, ns));
	assert_true(strstr(reg, ns) < strchr(reg, '\n'));
	cleanup_forget(h[0]);
	cleanup_forget(h[1]);
	cleanup_all();
	unlink(link);
	rmdir(real);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	(void)remove(path);	/* go on: remove what can be */
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_long_name_not_cut),
		cmocka_unit_test(test_too_long_refused),
		cmocka_unit_test(test_registry_file),
		cmocka_unit_test(test_registry_paths_resolved),
	};
	char tmpl[] = "/tmp/ipclab-unit-XXXXXX";
	int ret;

	if (!mkdtemp(tmpl))
		return 1;
	snprintf(base, sizeof(base), "%s", tmpl);
	setenv("IPCLAB_STATE_DIR", strcat(strcpy((char[PATH_MAX]){ 0 }, tmpl), "/state"), 1);
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	/* all of it, also what a failed test left in it */
	nftw(tmpl, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return ret ? 1 : 0;
}
