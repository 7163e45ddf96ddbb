// SPDX-License-Identifier: MIT
/* What a suite section prints, kept: the seeds' printers write to stdout
 * with printf, and the section's text (its own table and its reading)
 * also goes into the result file's "sections" and the HTML page. Their
 * output goes into an anonymous memory file (memfd: nothing on disk,
 * nothing left behind), then to stdout as before. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "suite.h"

#define CAPTURE_MAX (256u << 10)

char *suite_capture(void (*fn)(void *arg), void *arg)
{
	int mfd, saved;
	char *text = NULL;
	off_t len;

	fflush(stdout);
	mfd = memfd_create("ipclab-suite-section", MFD_CLOEXEC);
	saved = mfd >= 0 ? dup(STDOUT_FILENO) : -1;
	if (saved < 0 || dup2(mfd, STDOUT_FILENO) < 0) {
		if (saved >= 0)
			close(saved);
		if (mfd >= 0)
			close(mfd);
		fn(arg);		/* printed as ever, not kept */
		return NULL;
	}
	fn(arg);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	len = lseek(mfd, 0, SEEK_END);
	if (len >= 0 && (text = malloc((size_t)len + 1))) {
		ssize_t got = pread(mfd, text, (size_t)len, 0);

		got = got < 0 ? 0 : got;
		fwrite(text, 1, (size_t)got, stdout);
		if (got > (ssize_t)CAPTURE_MAX)
			got = CAPTURE_MAX;
		text[got] = '\0';
	}
	close(mfd);
	return text;
}
