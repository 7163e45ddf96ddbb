// SPDX-License-Identifier: MIT
/*
 * replay.c - a main() for the fuzz harnesses without libFuzzer: feeds every
 * file named on the command line (or in the directories named; with no
 * arguments, FUZZ_CORPUS, the harness's corpus in the source tree) to
 * LLVMFuzzerTestOneInput once. Built with the ordinary compiler (and the
 * sanitizers of SAN=asan), so `make check` replays the seeds and every
 * finding kept in the corpus as a regression test, with no clang needed.
 * Exit 0, or the harness aborts; 1 if nothing could be read.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long len;

	if (!f)
		return -1;
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return -1;
	}
	/* exactly the input's size, as libFuzzer gives it: over-reads show */
	buf = malloc(len ? (size_t)len : 1);
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)len);
	free(buf);
	return 0;
}

static int replay_path(const char *path, unsigned *n)
{
	struct dirent **ents;
	struct stat st;
	char sub[4096];
	int k, bad = 0;

	if (stat(path, &st))
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		if (replay_file(path))
			return -1;
		++*n;
		return 0;
	}
	k = scandir(path, &ents, NULL, alphasort);
	if (k < 0)
		return -1;
	for (int i = 0; i < k; i++) {
		if (ents[i]->d_name[0] != '.') {
			snprintf(sub, sizeof(sub), "%s/%s", path, ents[i]->d_name);
			bad |= replay_path(sub, n);
		}
		free(ents[i]);
	}
	free(ents);
	return bad;
}

int main(int argc, char **argv)
{
	unsigned n = 0;
	int bad = 0;

	if (argc < 2)
		bad = replay_path(FUZZ_CORPUS, &n);
	for (int i = 1; i < argc; i++)
		bad |= replay_path(argv[i], &n);
	printf("%u inputs replayed without a crash\n", n);
	if (bad || !n) {
		fprintf(stderr, "replay: could not read every input\n");
		return 1;
	}
	return 0;
}
